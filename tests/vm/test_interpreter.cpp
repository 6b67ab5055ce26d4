#include <doctest/doctest.h>

#include "vm_runner.hpp"

using gcvm::test::run_guest;
using gcvm::vm::GuestFailure;

namespace {

std::string prog(const std::string& locals, const std::string& body, const std::string& extra = "") {
  return extra + "func main()\n" + locals + body + "end\n";
}

}  // namespace

TEST_CASE("integer arithmetic wraps, divides toward zero and shifts mod 64") {
  const auto r = run_guest(prog("  local a: int, b: int, c: int\n",
                                "  mov a, 0x7fffffffffffffff\n  add c, a, 1\n  print c, \" \"\n"
                                "  mov a, -7\n  div c, a, 2\n  print c, \" \"\n  rem c, a, 2\n  print c, \" \"\n"
                                "  mov a, -9223372036854775808\n  div c, a, -1\n  print c, \" \"\n  rem c, a, -1\n  print c, \" \"\n"
                                "  mov a, 1\n  shl c, a, 65\n  print c, \" \"\n  mov a, -16\n  shr c, a, 2\n  print c, \" \"\n"
                                "  mov a, 6\n  mov b, 3\n  and c, a, b\n  print c, \" \"\n  or c, a, b\n  print c, \" \"\n"
                                "  xor c, a, b\n  print c, \" \"\n  not c, a\n  print c, \" \"\n  neg c, a\n  print c, \" \"\n"
                                "  mul c, a, -1000000000000\n  print c, \"\\n\"\n"));
  REQUIRE(!r.failed);
  CHECK(r.out == "-9223372036854775808 -3 -1 -9223372036854775808 0 2 -4 2 7 5 -7 -6 -6000000000000\n");
}

TEST_CASE("floats compute, compare, convert and print in shortest form") {
  const auto r = run_guest(prog("  local x: float, y: float, i: int\n",
                                "  mov x, 1.5\n  mov y, 2\n  mul x, x, y\n  print x, \" \"\n"
                                "  div x, 1.0, 3.0\n  print x, \" \"\n  neg x, x\n  ftoi i, x\n  print i, \" \"\n"
                                "  mov x, 2.75\n  ftoi i, x\n  print i, \" \"\n  neg x, x\n  ftoi i, x\n  print i, \" \"\n"
                                "  mov x, 1e300\n  mul x, x, x\n  ftoi i, x\n  print i, \" \"\n"
                                "  sub y, x, x\n  ftoi i, y\n  print i, \" \"\n"
                                "  itof x, 7\n  lt i, x, 7.5\n  print i, \" \"\n  eq i, y, y\n  print i, \"\\n\"\n"));
  REQUIRE(!r.failed);
  CHECK(r.out == "3 0.3333333333333333 0 2 -2 9223372036854775807 0 1 0\n");
}

TEST_CASE("branches, calls, recursion and globals") {
  const auto r = run_guest(
      "global calls: int\n"
      "func fib(n: int) -> int\n  local a: int, b: int\n  add calls, calls, 1\n  blt n, 2, small\n"
      "  sub a, n, 1\n  call a, fib(a)\n  sub b, n, 2\n  call b, fib(b)\n  add a, a, b\n  ret a\nsmall:\n  ret n\nend\n" +
      prog("  local f: int, i: int\n",
           "  mov i, 0\nloop:\n  bge i, 3, done\n  add i, i, 1\n  jmp loop\ndone:\n"
           "  call f, fib(20)\n  print f, \" \", calls, \" \", i, \"\\n\"\n"));
  REQUIRE(!r.failed);
  CHECK(r.out == "6765 21891 3\n");
}

TEST_CASE("objects, arrays and lengths") {
  const auto r = run_guest(prog("  local p: P, q: P, ps: P[], xs: float[], n: int, i: int, x: float\n",
                                "  new p\n  put p.v, 5\n  put p.w, 0.5\n  new q\n  put q.next, p\n"
                                "  get p, q.next\n  get n, p.v\n  get x, p.w\n  print n, \" \", x, \" \"\n"
                                "  newarray ps, 3\n  put ps[2], q\n  get q, ps[2]\n  get p, ps[0]\n  eq i, p, null\n  print i, \" \"\n"
                                "  len n, ps\n  print n, \" \"\n  newarray xs, 0\n  len n, xs\n  print n, \" \"\n"
                                "  newarray xs, 4\n  get x, xs[3]\n  print x, \"\\n\"\n",
                                "class P\n  next: P\n  v: int\n  w: float\nend\n"));
  REQUIRE(!r.failed);
  CHECK(r.out == "5 0.5 1 3 0 0\n");
}

TEST_CASE("arguments, exit status and main's result") {
  auto r = run_guest(prog("  local n: int, a: int\n", "  argc n\n  arg a, 1\n  print n, \" \", a, \"\\n\"\n  exit 7\n"), {10, -3});
  CHECK(r.out == "2 -3\n");
  CHECK(r.status == 7);
  r = run_guest("func main() -> int\n  ret 300\nend\n");
  CHECK(r.status == 300 % 256);
  r = run_guest("func main()\nend\n");
  CHECK(r.status == 0);
}

TEST_CASE("collections keep exactly what frames, scratch slots and globals reference") {
  // Builds lists under a tiny heap so that many collections happen while references
  // live in callers' frames, in a global and in the callee being called.
  const std::string source =
      "class C\n  next: C\n  v: int\nend\n"
      "global keep: C\n"
      "func build(n: int) -> C\n  local h: C, c: C\nloop:\n  ble n, 0, done\n  new c\n  put c.v, n\n"
      "  put c.next, h\n  mov h, c\n  sub n, n, 1\n  jmp loop\ndone:\n  ret h\nend\n"
      "func sum(c: C) -> int\n  local s: int, v: int\nloop:\n  beq c, null, done\n  get v, c.v\n  add s, s, v\n"
      "  get c, c.next\n  jmp loop\ndone:\n  ret s\nend\n"
      "func main()\n  local a: C, junk: C, i: int, s: int, t: int\n  call a, build(1000)\n  call keep, build(500)\n"
      "  mov i, 0\nchurn:\n  bge i, 200, done\n  call junk, build(300)\n  add i, i, 1\n  jmp churn\ndone:\n"
      "  call s, sum(a)\n  call t, sum(keep)\n  print s, \" \", t, \"\\n\"\nend\n";
  for (auto mode : {gcvm::RefGraphMode::Barrier, gcvm::RefGraphMode::Rebuild}) {
    const auto r = run_guest(source, {}, 160 * 1024, true, mode);
    REQUIRE_MESSAGE(!r.failed, r.error);
    CHECK(r.out == "500500 125250\n");
    CHECK(r.collections > 5);
  }
}

TEST_CASE("guest run-time errors carry a message and a stack trace") {
  struct Case {
    std::string source;
    std::string message;
    std::string innermost;
  };
  const std::string cls = "class C\n  next: C\n  v: int\nend\n";
  const std::vector<Case> cases = {
      {cls + "func main()\n  local c: C, i: int\n  get i, c.v\nend\n", "null dereference (reading a field of 'c', a C)",
       "  at main (test.gasm:7)"},
      {cls + "func main()\n  local c: C\n  put c.next, c\nend\n", "null dereference (writing a field of 'c', a C)",
       "  at main (test.gasm:7)"},
      {"func main()\n  local a: int[], i: int\n  newarray a, 3\n  get i, a[3]\nend\n",
       "index 3 out of range for 'a' of length 3", "  at main (test.gasm:4)"},
      {"func main()\n  local a: int[], i: int\n  newarray a, 3\n  put a[-1], i\nend\n",
       "index -1 out of range for 'a' of length 3", "  at main (test.gasm:4)"},
      {"func main()\n  local a: int[], i: int\n  len i, a\nend\n", "null dereference (length of 'a', a int[])",
       "  at main (test.gasm:3)"},
      {"func main()\n  local a: int[]\n  newarray a, -5\nend\n", "negative array length -5", "  at main (test.gasm:3)"},
      {"func f(a: int) -> int\n  div a, 1, a\n  ret a\nend\nfunc main()\n  local i: int\n  call i, f(0)\nend\n",
       "division by zero", "  at f (test.gasm:2)"},
      {"func main()\n  local i: int\n  rem i, i, 0\nend\n", "division by zero (remainder)", "  at main (test.gasm:3)"},
      {"func f(n: int)\n  call f(n)\nend\nfunc main()\n  call f(1)\nend\n", "stack overflow", "  at f (test.gasm:2)"},
      {"func main()\n  local i: int\n  arg i, 2\nend\n", "argument index 2 out of range (0 arguments given)",
       "  at main (test.gasm:3)"},
      {"func f() -> int\n  gc\nend\nfunc main()\n  local i: int\n  call i, f()\nend\n",
       "function 'f' reached its end without returning a int", "  at f (test.gasm:3)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.source);
    const auto r = run_guest(c.source);
    REQUIRE(r.failed);
    CHECK(r.failure == GuestFailure::RuntimeError);
    CHECK(r.error.substr(0, c.message.size()) == c.message);
    REQUIRE(!r.trace.empty());
    CHECK(r.trace.front() == c.innermost);
  }
}

TEST_CASE("the stack trace lists callers and elides deep recursion") {
  const auto r = run_guest("func f(n: int)\n  call f(n)\nend\nfunc main()\n  call f(1)\nend\n");
  REQUIRE(r.failed);
  CHECK(r.trace.size() == 25);
  CHECK(r.trace.back().find("more frames") != std::string::npos);
  const auto shallow = run_guest("func g()\n  local a: int[]\n  newarray a, -1\nend\nfunc main()\n  call g()\nend\n");
  REQUIRE(shallow.trace.size() == 2);
  CHECK(shallow.trace[1] == "  at main (test.gasm:6)");
}

TEST_CASE("running out of heap after a full collection is out of memory") {
  const auto r = run_guest(
      "class C\n  next: C\nend\nfunc main()\n  local h: C, c: C\nloop:\n  new c\n  put c.next, h\n  mov h, c\n  jmp loop\nend\n",
      {}, 64 * 1024, false);
  REQUIRE(r.failed);
  CHECK(r.failure == GuestFailure::OutOfMemory);
  CHECK(r.error.find("out of memory: the heap limit of 65536 bytes") == 0);
  CHECK(r.error.find("allocating a C") != std::string::npos);
  CHECK(r.collections == 1);
  const auto big = run_guest("func main()\n  local a: int[]\n  newarray a, 1000000000000\nend\n", {}, 64 * 1024, false);
  REQUIRE(big.failed);
  CHECK(big.failure == GuestFailure::OutOfMemory);
  CHECK(big.error.find("allocating an array of 1000000000000 scalars") != std::string::npos);
}
