// The Tern compiler (vm/lang): every construct in one program with its expected
// output, every kind of compile error with its file:line:col (all errors of a program
// in one pass), run-time errors, and `gcvm run` / `gcvm disasm` on .tern files.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "collector_flags.hpp"
#include "vm/lang/compiler.hpp"

using gcvm::test::collector_flags;
using gcvm::test::run_gcvm;
using gcvm::test::write_program;

namespace {

/// The diagnostics of a program that must not compile.
std::vector<std::string> errors_of(const std::string& source) {
  try {
    gcvm::vm::compile_tern(source, "t.tern");
  } catch (const gcvm::vm::AssemblyError& e) {
    return e.lines();
  }
  FAIL("the program compiled");
  return {};
}

bool has(const std::vector<std::string>& lines, const std::string& line) {
  for (const auto& l : lines)
    if (l == line) return true;
  return false;
}

const std::string kSource = std::string(GCVM_SOURCE_DIR) + "/tests/vm/tern/";

/// Checks that `source` does not compile and reports exactly the `expected` errors.
void check_errors(const std::string& source, const std::vector<std::string>& expected) {
  const std::vector<std::string> errors = errors_of(source);
  for (const std::string& line : expected) {
    CAPTURE(line);
    CHECK(has(errors, line));
  }
  CHECK(errors.size() == expected.size());
}

std::string read_expected(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("a program with every construct prints what it computes, under every plan") {
  const std::string expected =
      "6765\nsquare of area 9\na rect of area 10\n19\n7\nfirst/square\n12\n111\nworld\ntrue\n-640608884\n"
      "A2.5-7\n3\n1.4142135623730951\n0\n"
      "54\ntrue\n4\n3\n2\n";
  for (const char* flags : {"", " --heap=64K --verify-heap", " --plan=generational --nursery=64K --verify-heap"}) {
    CAPTURE(std::string(flags));
    const auto r = run_gcvm("run " + kSource + "features.tern --stats=none" + flags);
    CHECK(r.exit_code == 0);
    CHECK(r.out == expected);
  }
}

TEST_CASE("syntax errors: every one reported with file:line:col in one pass") {
  const auto e = errors_of("fn main() {\n  var x = ;\n  var y: int = 1\n}\nclass { }\n");
  CHECK(has(e, "t.tern:2:11: expected an expression, found ';'"));
  CHECK(has(e, "t.tern:4:1: expected ';' after the statement, found '}'"));
  CHECK(has(e, "t.tern:5:7: expected a class name, found '{'"));
}

TEST_CASE("lexical errors") {
  const auto e = errors_of("fn main() {\n  var s = \"abc;\n  var c = 3 # 4;\n  var n = 99999999999999999999;\n}\n");
  CHECK(has(e, "t.tern:2:11: unterminated string"));
  CHECK(has(e, "t.tern:3:13: unexpected character '#'"));
  CHECK(has(e, "t.tern:4:11: integer literal 99999999999999999999 out of range"));
}

TEST_CASE("type errors") {
  const auto e = errors_of(
      "class A { var f: int; fn m(x: int): int { return x; } }\n"
      "fn main() {\n"
      "  var a = new A();\n"
      "  var b: bool = 1;\n"
      "  a.f = 2.5;\n"
      "  a.m(true);\n"
      "  a.g = 1;\n"
      "  if (a.f) { }\n"
      "  var s = \"x\" + 1;\n"
      "  undefined(3);\n"
      "  var t: Nope = null;\n"
      "  return 3;\n"
      "}\n");
  CHECK(has(e, "t.tern:4:17: initial value of 'b': expected bool, found int"));
  CHECK(has(e, "t.tern:5:9: assignment to field 'f': expected int, found float"));
  CHECK(has(e, "t.tern:6:7: argument 1 of method 'm': expected int, found bool"));
  CHECK(has(e, "t.tern:7:5: class A has no field 'g'"));
  CHECK(has(e, "t.tern:8:9: a condition must be a bool, found int"));
  CHECK(has(e, "t.tern:9:15: operator '+' cannot combine string and int"));
  CHECK(has(e, "t.tern:10:3: unknown function 'undefined'"));
  CHECK(has(e, "t.tern:11:10: unknown type 'Nope'"));
  CHECK(has(e, "t.tern:12:3: return with a value in a function without a result"));
}

TEST_CASE("class errors: overriding, abstract classes, generics, constructors") {
  const auto e = errors_of(
      "abstract class B { abstract fn f(): int; fn g(x: int) { } }\n"
      "class C extends B { fn g(x: bool) { } }\n"
      "class D<T> { var t: T; }\n"
      "class E extends E { }\n"
      "fn main() {\n"
      "  var b = new B();\n"
      "  var d: D<int> = null;\n"
      "  var c = new C(1);\n"
      "}\n");
  CHECK(has(e, "t.tern:2:7: class C does not implement abstract method B.f"));
  CHECK(has(e, "t.tern:2:24: method 'g' overrides B.g with a different signature"));
  CHECK(has(e, "t.tern:4:17: class E extends itself (through E)"));
  CHECK(has(e, "t.tern:6:11: cannot instantiate abstract class B"));
  CHECK(has(e, "t.tern:7:12: a type argument must be a reference type (a class, string, array or function), not int"));
  CHECK(has(e, "t.tern:8:11: class C has no constructor; 'new C()' takes no arguments"));
}

TEST_CASE("a program without main, and an unknown import") {
  CHECK(has(errors_of("fn f() { }\n"), "t.tern:1:1: the program has no 'fn main()'"));
  CHECK(has(errors_of("import nosuch;\nfn main() { }\n"),
            "t.tern:1:8: unknown module 'nosuch' (the standard library has: dictionary, harness, integer, random, set, "
            "stringbuilder, vector)"));
}

TEST_CASE("gcvm run on a bad .tern program exits 2 with every error; disasm lists a compiled program") {
  const auto bad = run_gcvm("run " + kSource + "bad_types.tern");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("bad_types.tern:3:16: initial value of 'n': expected int, found string") != std::string::npos);
  CHECK(bad.err.find("bad_types.tern:4:3: unknown variable 'q'") != std::string::npos);
  const auto dis = run_gcvm("disasm " + kSource + "features.tern");
  CHECK(dis.exit_code == 0);
  CHECK(dis.out.find("callv") != std::string::npos);
  CHECK(dis.out.find("vtable[0] Square.area") != std::string::npos);
  CHECK(dis.out.find("strcat") != std::string::npos);
}

TEST_CASE("run-time errors in Tern programs: null receivers, bounds, string indices") {
  const auto r = run_gcvm("run " + kSource + "null_call.tern --stats=none");
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("error: null dereference (reading a field of 'n', a Node)") != std::string::npos);
  CHECK(r.err.find("at main (") != std::string::npos);
}

TEST_CASE("interfaces, bounded type parameters and the standard library's collections") {
  const std::string expected = read_expected(kSource + "interfaces.expected");
  for (const char* flags : {"", " --heap=64K --verify-heap", " --plan=generational --nursery=64K --verify-heap"}) {
    CAPTURE(std::string(flags));
    const auto r = run_gcvm("run " + kSource + "interfaces.tern --stats=none" + flags);
    CHECK(r.exit_code == 0);
    CHECK(r.out == expected);
  }
  const auto dis = run_gcvm("disasm " + kSource + "interfaces.tern");
  CHECK(dis.exit_code == 0);
  CHECK(dis.out.find("fsin") != std::string::npos);
}

TEST_CASE("interface errors: implementing, extending, bounds, instantiating") {
  check_errors(
      "interface I { fn f(): int; fn g(x: int); }\n"
      "interface J<T> { fn h(t: T): bool; }\n"
      "class A implements I { fn f(): int { return 1; } }\n"
      "class B implements I { fn f(): bool { return true; } fn g(x: int) { } }\n"
      "class C extends I { }\n"
      "class D implements A { }\n"
      "class Box<K: J<K>> { var k: K; fn m(): int { return k.nope(); } }\n"
      "class E<K: A> { }\n"
      "class F implements J<F> { fn h(t: F): bool { return true; } }\n"
      "fn main() {\n"
      "  var i = new I();\n"
      "  var b: Box<A> = null;\n"
      "  var ok: Box<F> = null;\n"
      "  var s: I = new F();\n"
      "  var n: int = new A().f();\n"
      "}\n"
      "interface K { var x: int; }\n",
      {"t.tern:3:7: class A does not implement I.g", "t.tern:4:27: method 'f' of class B does not match I.f of I",
       "t.tern:5:17: a class can only extend a class, not I (an interface: use 'implements')",
       "t.tern:6:20: a class can only implement an interface, not A", "t.tern:7:55: interface J has no method 'nope'",
       "t.tern:8:12: the bound of a type parameter must be an interface, not A",
       "t.tern:11:11: cannot instantiate interface I", "t.tern:12:14: type argument A of Box does not implement J<A>",
       "t.tern:14:14: initial value of 's': expected I, found F",
       "t.tern:17:15: an interface holds only method signatures (fn), found 'var'"});
  check_errors(
      "interface I<T> { fn f(t: T); fn init(); }\n"
      "class C implements I<int>, I<C>, I<C> { fn f(t: C) { } }\n"
      "fn main() { }\n",
      {"t.tern:1:33: an interface has no constructor",
       "t.tern:2:22: a type argument must be a reference type (a class, string, array or function), not int",
       "t.tern:2:34: class C already implements I<C>"});
  check_errors(
      "interface A extends B { }\n"
      "interface B extends A { }\n"
      "interface C extends Base { }\n"
      "interface D { fn f(): int; }\n"
      "interface E extends D { fn f(): bool; }\n"
      "class Base { }\n"
      "class X implements E { fn f(): bool { return true; } }\n"
      "fn main() { }\n",
      {"t.tern:1:11: interface A extends itself", "t.tern:3:21: an interface can only extend an interface, not Base",
       "t.tern:5:28: method 'f' of interface E does not match D.f of D",
       "t.tern:7:27: method 'f' of class X does not match D.f of D"});
}

TEST_CASE("an interface extends interfaces: their methods through it, their slots filled") {
  const auto r = run_gcvm("run " + kSource + "interface_extends.tern --stats=none --heap=64K --verify-heap");
  CHECK(r.exit_code == 0);
  CHECK(r.out == read_expected(kSource + "interface_extends.expected"));
}

TEST_CASE("break and continue leave or restart their own loop while collections run") {
  for (const char* flags : {" --heap=16K --verify-heap", " --gc=parallel --heap=16K --verify-heap", " --plan=concurrent --heap=16K --verify-heap"}) {
    CAPTURE(std::string(flags));
    const auto r = run_gcvm("run " + kSource + "loops.tern --stats=none" + flags);
    CHECK(r.exit_code == 0);
    CHECK(r.out == read_expected(kSource + "loops.expected"));
  }
}

TEST_CASE("break and continue outside a loop: one error each with file:line:col") {
  check_errors(
      "fn main() {\n"
      "  break;\n"
      "  if (true) { continue; }\n"
      "  var f = fn(): int { continue; };\n"
      "  while (true) { var g = fn() { break; }; break; }\n"
      "  for (var i = 0; i < 3; i = i + 1) { break }\n"
      "}\n",
      {"t.tern:2:3: 'break' outside a loop", "t.tern:3:15: 'continue' outside a loop",
       "t.tern:4:23: 'continue' outside a loop", "t.tern:5:33: 'break' outside a loop",
       "t.tern:6:45: expected ';' after 'break', found '}'"});
  CHECK(has(errors_of("fn main() { var break = 1; }\n"), "t.tern:1:17: 'break' is a keyword, not a variable name"));
}

TEST_CASE("a function with many lambdas that write what they capture") {
  const auto r = run_gcvm("run " + kSource + "lambdas.tern --stats=none --heap=64K --verify-heap");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "22140\n");
}

TEST_CASE("the run statistics say when the guest's first instruction ran (after compiling the program)") {
  const auto r = run_gcvm("run " + kSource + "interfaces.tern --stats=json");
  REQUIRE(r.exit_code == 0);
  const nlohmann::json stats = nlohmann::json::parse(r.err);
  CHECK(stats["startup_ms"].get<double>() > 0);
  CHECK(stats["startup_ms"].get<double>() <= stats["elapsed_ms"].get<double>());
}

TEST_CASE("string comparison orders by bytes, then length") {
  const auto r = run_gcvm("run " + kSource + "strings.tern --stats=none");
  CHECK(r.exit_code == 0);
  CHECK(r.out == read_expected(kSource + "strings.expected"));
}

TEST_CASE("StringBuilder builds a long string in linear space while every collector collects mid-build") {
  const std::string expected = read_expected(kSource + "stringbuilder.expected");
  std::vector<std::string> runs;
  for (const std::string& collector : collector_flags()) {
    runs.push_back(collector + " --heap=512K --verify-heap");
    runs.push_back(collector + " --plan=generational --nursery=64K --heap=512K --verify-heap");
  }
#if GCVM_HAVE_BOEHM
  runs.push_back(" --gc=boehm --heap=4M");
#endif
  for (const std::string& flags : runs) {
    CAPTURE(flags);
    const auto r = run_gcvm("run " + kSource + "stringbuilder.tern --stats=json" + flags);
    CHECK(r.exit_code == 0);
    CHECK(r.out == expected);
    const nlohmann::json stats = nlohmann::json::parse(r.err, nullptr, false);
    REQUIRE_MESSAGE(!stats.is_discarded(), r.err);
    if (flags.find("boehm") == std::string::npos) CHECK(stats["collection_count"].get<int>() >= 3);
    // 30,000 bytes built with `+` would allocate about 450 MB; the builder's doubling
    // buffer (8 bytes a byte) and the check's short strings take a few hundred KB.
    CHECK(stats["allocated_bytes"].get<std::uint64_t>() < 4'000'000);
  }
  const auto dis = run_gcvm("disasm " + kSource + "stringbuilder.tern");
  CHECK(dis.exit_code == 0);
  CHECK(dis.out.find("strfroma") != std::string::npos);
}

TEST_CASE("stringFromBytes and StringBuilder misuse: compile errors with file:line:col") {
  check_errors(
      "import stringbuilder;\n"
      "fn main() {\n"
      "  var f = new float[2];\n"
      "  var s = stringFromBytes(\"abc\", 0, 1);\n"
      "  var t = stringFromBytes(f, 0, 1.5);\n"
      "  var u = stringFromBytes(f);\n"
      "  var n: int = stringFromBytes(new int[1], 0, 1);\n"
      "  new StringBuilder().appendInt(\"x\");\n"
      "  var v: string = new StringBuilder();\n"
      "}\n",
      {"t.tern:4:27: argument 1 of 'stringFromBytes': expected int[], found string",
       "t.tern:5:27: argument 1 of 'stringFromBytes': expected int[], found float[]",
       "t.tern:5:33: argument 3 of 'stringFromBytes': expected int, found float",
       "t.tern:6:11: 'stringFromBytes' takes 3 arguments, given 1",
       "t.tern:7:16: initial value of 'n': expected int, found string",
       "t.tern:8:33: argument 1 of method 'appendInt': expected int, found string",
       "t.tern:9:19: initial value of 'v': expected string, found StringBuilder"});
}

TEST_CASE("stringFromBytes and StringBuilder misuse: run-time errors name the bytes and the guest frame") {
  struct Case {
    std::string body;
    std::string error;
    std::string frame;
  };
  const std::vector<Case> cases = {
      {"  var a = new int[5];\n  println(stringFromBytes(a, 2, 9));\n",
       "error: stringFromBytes: bytes 2 .. 9 out of range for an array of length 5", "at main (sfb.tern:4)"},
      {"  var a = new int[5];\n  println(stringFromBytes(a, 3, 2));\n",
       "error: stringFromBytes: bytes 3 .. 2 out of range for an array of length 5", "at main (sfb.tern:4)"},
      {"  var a: int[] = null;\n  println(stringFromBytes(a, 0, 0));\n",
       "error: null dereference (bytes of 'a', a int[])", "at main (sfb.tern:4)"},
      {"  var a = new int[2];\n  a[1] = -1;\n  println(stringFromBytes(a, 0, 2));\n",
       "error: stringFromBytes: element 1 is -1, not a byte (0 .. 255)", "at main (sfb.tern:5)"},
      {"  var sb = new StringBuilder();\n  sb.append(\"ab\").appendChar(300);\n  println(sb.toString());\n",
       "error: stringFromBytes: element 2 is 300, not a byte (0 .. 255)", "at StringBuilder.toString ("},
  };
  for (const Case& c : cases) {
    CAPTURE(c.body);
    const std::string file = write_program("sfb.tern", "import stringbuilder;\nfn main() {\n" + c.body + "}\n");
    const auto r = run_gcvm("run " + file + " --stats=none");
    CHECK(r.exit_code == 4);
    CHECK(r.out.empty());
    CHECK(r.err.find(c.error) != std::string::npos);
    CHECK(r.err.find(c.frame) != std::string::npos);
    std::remove(file.c_str());
  }
}

TEST_CASE("a global with neither a type nor a value: one error, no crash in the later passes") {
  check_errors("var x;\nfn main() { x = 1; }\n", {"t.tern:1:5: global 'x' needs a type or an initial value"});
}

TEST_CASE("lambdas in the methods of many classes: each adds a closure class while the classes are compiled") {
  // Found by fuzz_tern (on the AWFY Havlak source): the closure classes grew the class
  // table while the compiler walked it.
  std::string source;
  int expected = 0;
  for (int i = 0; i < 40; ++i) {
    source += "class C" + std::to_string(i) + " { fn m(k: int): int { var f = fn(x: int): int { return x * k + " +
              std::to_string(i) + "; }; return f(2); } }\n";
    expected += 2 * 3 + i;
  }
  source += "fn main() {\n  var sum = 0;\n";
  for (int i = 0; i < 40; ++i) source += "  sum = sum + new C" + std::to_string(i) + "().m(3);\n";
  source += "  println(str(sum));\n}\n";
  const gcvm::vm::Module module = gcvm::vm::compile_tern(source, "t.tern");
  CHECK(module.classes.size() >= 80);
  const std::string file = write_program("many_lambda_classes.tern", source);
  const auto r = run_gcvm("run " + file + " --stats=none");
  CHECK(r.exit_code == 0);
  CHECK(r.out == std::to_string(expected) + "\n");
  std::remove(file.c_str());
}

TEST_CASE("a local with neither a type nor a value: one error, no crash while generating code") {
  check_errors("fn main() {\n  var b;\n  b = 2;\n  println(str(b));\n}\n",
               {"t.tern:2:7: variable 'b' needs a type or an initial value"});
}

TEST_CASE("nesting deeper than the compiler's passes can recurse: one error at the level that is too deep") {
  // Each shape, a few thousand levels deep (inputs tried under fuzz_tern), overflowed the
  // stack of the code generator or the parser instead of being rejected.
  const std::string main = "fn main() { var x = ";
  auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  struct Case {
    std::string source;
    std::string error;
  };
  const std::vector<Case> cases = {
      {main + repeat("(", 3000) + "1" + repeat(")", 3000) + "; }\n", "t.tern:1:276:"},
      {main + repeat("-", 3000) + "1; }\n", "t.tern:1:275:"},
      {main + "1" + repeat(" + 1", 3000) + "; }\n", "t.tern:1:1037:"},
      {main + "new int[1]" + repeat("[0]", 3000) + "; }\n", "t.tern:1:791:"},
      {"fn main() " + repeat("{", 3000) + repeat("}", 3000) + "\n", "t.tern:1:268:"},
      {"fn main() { var x: int" + repeat("[]", 3000) + " = null; }\n", "t.tern:1:531:"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.source.substr(0, 60));
    check_errors(c.source, {c.error + " the program nests more than 256 levels deep here"});
  }
  const std::string ok = main + repeat("(", 100) + "1" + repeat(" + 1", 100) + repeat(")", 100) + "; println(str(x)); }\n";
  CHECK(gcvm::vm::compile_tern(ok, "t.tern").functions.size() > 0);
}

TEST_CASE("a class or a lambda's closure too large for a heap block: a compile error, not a failure at run time") {
  // Both used to compile; `new` then failed at run time with an internal error.
  std::string fields, captures, uses;
  for (int i = 0; i < 300; ++i) {
    fields += " var f" + std::to_string(i) + ": int;";
    captures += " var c" + std::to_string(i) + " = " + std::to_string(i) + ";";
    uses += " s = s + c" + std::to_string(i) + ";";
  }
  check_errors("class Big {" + fields + " }\nfn main() { var b = new Big(); }\n",
               {"t.tern:1:7: class Big needs 2400 bytes per object; at most 2048 fit a heap block (use an array)"});
  check_errors("fn main() {" + captures + "\n  var f = fn(): int { var s = 0;" + uses + " return s; };\n}\n",
               {"t.tern:2:11: the variables this lambda captures need 2408 bytes; at most 2048 fit a heap block"});
}

TEST_CASE("the most negative integer literal compiles to its value") {
  // Found by fuzz_tern (UBSan): the compiler negated 2^63 in signed arithmetic.
  const std::string file = write_program("int_min.tern", "fn main() { var x = -9223372036854775808; println(str(x)); }\n");
  const auto r = run_gcvm("run " + file + " --stats=none");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "-9223372036854775808\n");
  std::remove(file.c_str());
}
