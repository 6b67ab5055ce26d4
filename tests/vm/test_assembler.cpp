#include <doctest/doctest.h>

#include <set>

#include "vm/bytecode/disassembler.hpp"
#include "vm/bytecode/opcodes.hpp"
#include "vm_runner.hpp"

using gcvm::test::first_error;
using namespace gcvm::vm;

namespace {

/// Opcode names of a function's code, in order.
std::vector<std::string> ops(const Module& m, const std::string& fn) {
  std::vector<std::string> out;
  for (const FunctionInfo& f : m.functions) {
    if (f.name != fn) continue;
    for (std::uint32_t pc = 0; pc < f.code.size(); pc += instruction_words(&f.code[pc]))
      out.emplace_back(op_info(static_cast<Op>(f.code[pc])).name);
  }
  return out;
}

std::string main_with(const std::string& decls, const std::string& body) {
  return "class Node\n  next: Node\n  value: int\n  weight: float\nend\n"
         "global g: int\nglobal gn: Node\n"
         "func f(a: int) -> int\n  ret a\nend\n"
         "func v()\nend\n"
         "func main()\n" + decls + body + "end\n";
}

const char* kLocals =
    "  local i: int, j: int\n  local x: float, y: float\n  local n: Node, m: Node\n"
    "  local ia: int[]\n  local fa: float[]\n  local na: Node[]\n";

}  // namespace

TEST_CASE("classes map to reference and scalar field indices") {
  const Module m = assemble(main_with("", ""), "t.gasm");
  REQUIRE(m.classes.size() == 1);
  const ClassInfo& c = m.classes[0];
  CHECK(c.ref_fields == 1);
  CHECK(c.scalar_fields == 2);
  CHECK(c.fields[0].is_ref);
  CHECK(c.fields[0].index == 0);
  CHECK(!c.fields[1].is_ref);
  CHECK(c.fields[1].index == 0);
  CHECK(c.fields[2].index == 1);
  REQUIRE(m.fields.size() == 3);
  CHECK(m.fields[1].class_index == 0);
  CHECK(m.fields[1].field == 1);
  REQUIRE(m.globals.size() == 2);
  CHECK(!m.globals[0].is_ref);
  CHECK(m.globals[1].is_ref);
  CHECK(m.functions[m.main_function].name == "main");
}

TEST_CASE("the stack map lists exactly the reference slots") {
  const Module m = assemble(main_with(kLocals, "  mov n, gn\n  beq n, null, done\ndone:\n"), "t.gasm");
  const FunctionInfo& f = m.functions[m.main_function];
  std::vector<std::string> refs;
  for (std::uint32_t s : f.ref_slots) refs.push_back(f.slots[s].name);
  CHECK(refs == std::vector<std::string>{"n", "m", "ia", "fa", "na"});
  CHECK(f.frame_size == f.slots.size());
}

TEST_CASE("every instruction assembles to the opcode its operand types select") {
  struct Case {
    const char* body;
    std::vector<std::string> expect;
  };
  const std::vector<Case> cases = {
      {"mov i, j", {"MOV"}},
      {"mov i, 5", {"LOADI"}},
      {"mov i, 5000000000", {"LOADK"}},
      {"mov x, 1.5", {"LOADK"}},
      {"mov x, 2", {"LOADK"}},
      {"mov n, null", {"LOADNULL"}},
      {"mov i, g", {"GGET"}},
      {"mov g, i", {"GPUT"}},
      {"mov gn, n", {"GPUT"}},
      {"add i, i, j", {"ADD"}},
      {"add i, i, 7", {"ADD_LI"}},
      {"add i, 7, i", {"LOADI", "ADD"}},
      {"add g, g, 1", {"GGET", "ADD_LI", "GPUT"}},
      {"sub i, i, j", {"SUB"}},
      {"sub i, i, 1", {"SUB_LI"}},
      {"mul i, i, 3", {"MUL_LI"}},
      {"div i, i, j", {"DIV"}},
      {"div i, i, 2", {"DIV_LI"}},
      {"rem i, i, j", {"REM"}},
      {"rem i, i, 2", {"REM_LI"}},
      {"and i, i, 1", {"AND_LI"}},
      {"or i, i, j", {"OR"}},
      {"xor i, i, 1", {"XOR_LI"}},
      {"shl i, i, 2", {"SHL_LI"}},
      {"shr i, i, j", {"SHR"}},
      {"neg i, j", {"NEG"}},
      {"not i, j", {"NOT"}},
      {"add x, x, y", {"FADD"}},
      {"add x, x, 1", {"LOADK", "FADD"}},
      {"sub x, x, y", {"FSUB"}},
      {"mul x, x, y", {"FMUL"}},
      {"div x, x, y", {"FDIV"}},
      {"neg x, y", {"FNEG"}},
      {"itof x, i", {"ITOF"}},
      {"ftoi i, x", {"FTOI"}},
      {"lt i, i, j", {"LT"}},
      {"lt i, i, 3", {"LT_LI"}},
      {"le i, i, 3", {"LE_LI"}},
      {"gt i, i, j", {"GT"}},
      {"ge i, i, 3", {"GE_LI"}},
      {"eq i, i, j", {"EQ"}},
      {"ne i, i, 3", {"NE_LI"}},
      {"lt i, x, y", {"FLT"}},
      {"le i, x, y", {"FLE"}},
      {"gt i, x, y", {"FGT"}},
      {"ge i, x, 0.5", {"LOADK", "FGE"}},
      {"eq i, x, y", {"FEQ"}},
      {"ne i, x, y", {"FNE"}},
      {"eq i, n, m", {"EQ"}},
      {"ne i, n, null", {"LOADNULL", "NE"}},
      {"jmp L", {"JMP"}},
      {"bz i, L", {"BZ"}},
      {"bnz i, L", {"BNZ"}},
      {"blt i, j, L", {"BLT"}},
      {"blt i, 3, L", {"BLT_LI"}},
      {"ble i, 3, L", {"BLE_LI"}},
      {"bgt i, j, L", {"BGT"}},
      {"bge i, 3, L", {"BGE_LI"}},
      {"beq i, 3, L", {"BEQ_LI"}},
      {"bne i, j, L", {"BNE"}},
      {"blt x, y, L", {"FBLT"}},
      {"ble x, y, L", {"FBLE"}},
      {"bgt x, y, L", {"FBGT"}},
      {"bge x, y, L", {"FBGE"}},
      {"beq x, y, L", {"FBEQ"}},
      {"bne x, y, L", {"FBNE"}},
      {"beq n, null, L", {"BNULL"}},
      {"bne null, n, L", {"BNONNULL"}},
      {"beq n, m, L", {"BEQ"}},
      {"call i, f(j)", {"CALL"}},
      {"call i, f(3)", {"LOADI", "CALL"}},
      {"call v()", {"CALL"}},
      {"call f(1)", {"LOADI", "CALL"}},
      {"new n", {"NEW"}},
      {"new gn", {"NEW", "GPUT"}},
      {"get m, n.next", {"GETR"}},
      {"put n.next, m", {"PUTR"}},
      {"put n.next, null", {"LOADNULL", "PUTR"}},
      {"get i, n.value", {"GETS"}},
      {"put n.weight, x", {"PUTS"}},
      {"get i, gn.value", {"GGET", "GETS"}},
      {"newarray na, i", {"NEWRA"}},
      {"newarray ia, 10", {"LOADI", "NEWSA"}},
      {"newarray fa, i", {"NEWSA"}},
      {"len i, na", {"ALEN"}},
      {"get n, na[i]", {"AGETR"}},
      {"put na[i], n", {"APUTR"}},
      {"get i, ia[3]", {"LOADI", "AGETS"}},
      {"put fa[i], x", {"APUTS"}},
      {"print i", {"PRINTI"}},
      {"print x", {"PRINTF"}},
      {"print \"hi\"", {"PRINTS"}},
      {"print \"i=\", i, \"\\n\"", {"PRINTS", "PRINTI", "PRINTS"}},
      {"gc", {"GC"}},
      {"argc i", {"ARGC"}},
      {"arg i, 0", {"LOADI", "ARG"}},
      {"exit i", {"EXIT"}},
      {"ret", {"RETV"}},
      {"mul i, i, j", {"MUL"}},
      {"and i, i, j", {"AND"}},
      {"or i, i, 1", {"OR_LI"}},
      {"xor i, i, j", {"XOR"}},
      {"shl i, i, j", {"SHL"}},
      {"shr i, i, 1", {"SHR_LI"}},
      {"le i, i, j", {"LE"}},
      {"gt i, i, 1", {"GT_LI"}},
      {"ge i, i, j", {"GE"}},
      {"eq i, i, 1", {"EQ_LI"}},
      {"ble i, j, L", {"BLE"}},
      {"bgt i, 1, L", {"BGT_LI"}},
      {"bge i, j, L", {"BGE"}},
      {"bne i, 1, L", {"BNE_LI"}},
  };
  std::set<std::string> covered;
  for (const Case& c : cases) {
    CAPTURE(std::string(c.body));
    const Module m = assemble(main_with(kLocals, std::string("  ") + c.body + "\nL:\n"), "t.gasm");
    std::vector<std::string> got = ops(m, "main");
    REQUIRE(!got.empty());
    got.pop_back();  // the implicit RETV at the end of main
    CHECK(got == c.expect);
    covered.insert(got.begin(), got.end());
  }
  // Every opcode is produced by some source instruction (NOP, RET and FALLOFF below).
  const Module m = assemble(main_with("", "") + "func h() -> int\n  ret 1\nend\nfunc k() -> int\n  gc\nend\n", "t.gasm");
  for (const auto& op : ops(m, "h")) covered.insert(op);
  for (const auto& op : ops(m, "k")) covered.insert(op);
  covered.insert("NOP");  // never emitted; executes as a no-op
  // Emitted only by the Tern compiler (docs/tern.md, "Not there yet"); test_tern.cpp
  // and the AWFY benchmarks run them.
  for (const char* tern_only : {"CALLV", "GETRD", "PUTRD", "GETSD", "PUTSD", "PRINTSTR", "STRLIT", "STRLEN", "STRCHAR",
                                "STREQ", "STRCMP", "STRCAT", "STRSUB", "STRHASH", "STRCHR", "STRFROMA", "ITOSTR",
                                "FTOSTR", "FSQRT", "FSIN", "FCOS", "CLOCK"})
    covered.insert(tern_only);
  for (std::uint32_t op = 0; op < kOpCount; ++op) {
    CAPTURE(std::string(kOpInfo[op].name));
    CHECK(covered.count(std::string(kOpInfo[op].name)) == 1);
  }
}

TEST_CASE("the disassembler names slots, targets, classes and source lines") {
  const Module m = assemble(main_with(kLocals, "  new n\n  put n.value, 3\n  blt i, 3, L\n  print \"x\\n\"\nL:\n"), "t.gasm");
  const std::string text = disassemble(m);
  CHECK(text.find("class Node: 1 ref field, 2 scalar fields") != std::string::npos);
  CHECK(text.find("new       n, Node") != std::string::npos);
  CHECK(text.find("blt_li    i, 3, -> ") != std::string::npos);
  CHECK(text.find("prints    \"x\\n\"") != std::string::npos);
  CHECK(text.find("; line 20") != std::string::npos);
  CHECK(text.find("(ref)") != std::string::npos);
  CHECK(text.find("puts      n, Node.value#0, %t0") != std::string::npos);
}

TEST_CASE("every assembler error names its line and column") {
  struct Case {
    std::string source;
    std::string expect;  // "line:col: message" prefix
  };
  const std::string ok_main = "func main()\nend\n";
  const std::vector<Case> cases = {
      // lexer
      {"func main()\n  mov i, $\nend\n", "2:10: unexpected character '$'"},
      {"func main()\n  print \"abc\nend\n", "2:9: unterminated string"},
      {"func main()\n  print \"a\\q\"\nend\n", "2:11: unknown escape '\\q'"},
      {"func main()\n  local i: int\n  mov i, 99999999999999999999\nend\n", "3:10: integer 99999999999999999999 does not fit 64 bits"},
      {"func main()\n  local i: int\n  mov i, 12ab\nend\n", "3:10: malformed number '12ab'"},
      {"func main()\n  local x: float\n  mov x, 1.2.3\nend\n", "3:10: malformed number '1.2.3'"},
      // parser
      {"foo\n" + ok_main, "1:1: expected 'class', 'global' or 'func', found 'foo'"},
      {"class A\n  x int\nend\n" + ok_main, "2:5: expected ':' and a type, found 'int'"},
      {"class A\n  x: int\n" + ok_main, "1:1: class 'A' has no 'end'"},
      {"func main()\n  gc\n", "1:1: function 'main' has no 'end'"},
      {"func main(\nend\n", "1:11: expected a name, found end of line"},
      {"func main() -> \nend\n", "1:16: expected a type, found end of line"},
      {"global\n" + ok_main, "1:7: expected a name, found end of line"},
      {"func main()\n  mov ,\nend\n", "2:7: expected an operand, found ','"},
      {"func main()\n  local n: int\n  get n, n.\nend\n", "3:12: expected a field name after '.', found end of line"},
      {"func main()\n  local a: int[]\n  get a, a[1\nend\n", "3:13: expected ']', found end of line"},
      {"func main()\n  call f(1\nend\n", "2:11: expected ')', found end of line"},
      {"func main()\n  3\nend\n", "2:3: expected an instruction or a label, found number 3"},
      {"func main() x\nend\n", "1:13: expected end of line, found 'x'"},
      // declarations
      {"class A\n  x: Foo\nend\n" + ok_main, "2:6: unknown type 'Foo'"},
      {"class A\nend\nclass A\nend\n" + ok_main, "3:1: class 'A' is already defined at line 1"},
      {"class int\nend\n" + ok_main, "1:1: 'int' is a built-in name, not a class name"},
      {"class A\n  x: int\n  x: int\nend\n" + ok_main, "3:3: field 'x' is already declared at line 2"},
      {"class A\n" + [] { std::string f; for (int i = 0; i < 300; ++i) f += "  f" + std::to_string(i) + ": int\n"; return f; }() + "end\n" + ok_main,
       "1:1: class 'A' needs 2400 bytes per object; at most 2048 fit a heap block (use an array)"},
      {"global a: int\nglobal a: int\n" + ok_main, "2:8: global 'a' is already declared at line 1"},
      {ok_main + ok_main, "3:1: function 'main' is already defined at line 1"},
      {"func f()\nend\n", "1:1: the program has no 'main' function"},
      {"func main(a: int)\nend\n", "1:1: 'main' takes no parameters (read arguments with 'arg')"},
      {"func main() -> float\n  ret 1.0\nend\n", "1:1: 'main' returns nothing or an int (the exit status)"},
      {"func main()\n  local a: int\n  local a: float\nend\n", "3:9: 'a' is already declared at line 2"},
      {"func main()\nL:\nL:\nend\n", "3:1: label 'L' is already defined at line 2"},
      // instructions
      {"func main()\n  jmp nowhere\nend\n", "2:7: unknown label 'nowhere'"},
      {"func main()\n  frob\nend\n", "2:3: unknown instruction 'frob'"},
      {"func main()\n  local i: int\n  add i, i\nend\n", "3:3: 'add' takes 3 operands (destination, left, right), found 2"},
      {"func main()\n  local i: int\n  mov i, q\nend\n", "3:10: unknown name 'q'"},
      {"func main()\n  local i: int\nL:\n  mov i, L\nend\n", "4:10: 'L' is a label, not a value"},
      {"func main()\n  local i: int\n  mov i, main\nend\n", "3:10: 'main' is a function, not a value"},
      {"func main()\n  local i: int\n  local x: float\n  mov i, x\nend\n", "4:10: cannot move 'x' of type float to 'i' of type int"},
      {"func main()\n  local i: int\n  add i, i, 1.5\nend\n", "3:13: the right operand must be int, found float literal of type float"},
      {"class A\nend\nfunc main()\n  local a: A\n  add a, a, a\nend\n", "5:7: 'add' computes int or float values; destination 'a' is A"},
      {"func main()\n  local x: float\n  rem x, x, x\nend\n", "3:7: 'rem' computes int values; destination 'x' is float"},
      {"func main()\n  local x: float\n  not x, x\nend\n", "3:7: 'not' computes int values; destination 'x' is float"},
      {"func main()\n  local i: int\n  local x: float\n  lt i, i, x\nend\n", "4:3: 'lt' cannot compare int with float"},
      {"class A\nend\nfunc main()\n  local i: int\n  local a: A\n  lt i, a, a\nend\n", "6:3: 'lt' cannot compare A with A"},
      {"func main()\n  beq null, null, L\nL:\nend\n", "2:7: comparing null with null"},
      {"func main()\n  local x: float\n  lt x, x, x\nend\n", "3:6: destination 'x' is float, the result is int"},
      {"func main()\n  local i: int\n  mov 3, i\nend\n", "3:7: expected a local or global to write, found integer literal"},
      {"func main()\n  local i: int\n  mov i, \"s\"\nend\n", "3:10: expected a name or a literal, found string literal"},
      {"func main()\n  call\nend\n", "2:3: 'call' takes 'f(args)' or 'destination, f(args)'"},
      {"func main()\n  call g()\nend\n", "2:8: unknown function 'g'"},
      {"func f(a: int)\nend\nfunc main()\n  call f()\nend\n", "4:8: 'f' takes 1 argument, found 0"},
      {"func f()\nend\nfunc main()\n  local i: int\n  call i, f()\nend\n", "5:8: 'f' returns no value"},
      {"func f() -> float\n  ret 1.0\nend\nfunc main()\n  local i: int\n  call i, f()\nend\n", "6:8: 'f' returns float, destination 'i' is int"},
      {"func f(a: float)\nend\nfunc main()\n  local i: int\n  call f(i)\nend\n", "5:10: argument 1 of 'f' must be float, found 'i' of type int"},
      {"func main()\n  ret 1\nend\n", "2:7: function 'main' returns no value"},
      {"func f() -> int\n  ret\nend\n" + ok_main, "2:3: function 'f' returns int; 'ret' needs one operand"},
      {"func main()\n  local i: int\n  new i\nend\n", "3:7: 'new' needs a destination of a class type; 'i' is int"},
      {"func main()\n  local i: int\n  newarray i, 3\nend\n", "3:12: 'newarray' needs a destination of an array type; 'i' is int"},
      {"func main()\n  local i: int\n  get i, i.x\nend\n", "3:10: 'i' is int, not an object with fields"},
      {"class A\nend\nfunc main()\n  local i: int\n  local a: A\n  get i, a.x\nend\n", "6:10: class 'A' has no field 'x'"},
      {"func main()\n  local i: int\n  get i, i[0]\nend\n", "3:10: 'i' is int, not an array"},
      {"class A\n  x: float\nend\nfunc main()\n  local i: int\n  local a: A\n  get i, a.x\nend\n", "7:7: field 'x' is float, destination 'i' is int"},
      {"func main()\n  local i: int\n  local a: float[]\n  get i, a[0]\nend\n", "4:7: elements of 'a' are float, destination 'i' is int"},
      {"func main()\n  local i: int\n  get i, i\nend\n", "3:10: 'get' reads x.field or a[index], found 'i'"},
      {"func main()\n  local i: int\n  put i, i\nend\n", "3:7: 'put' writes x.field or a[index], found 'i'"},
      {"class A\n  x: int\nend\nfunc main()\n  local a: A\n  put a.x, 1.5\nend\n", "6:12: the value stored in 'x' must be int, found float literal of type float"},
      {"func main()\n  local a: int[]\n  local x: float\n  put a[x], 1\nend\n", "4:9: the index must be int, found 'x' of type float"},
      {"func main()\n  print\nend\n", "2:3: 'print' takes one or more operands"},
      {"class A\nend\nfunc main()\n  local a: A\n  print a\nend\n", "5:9: cannot print 'a' of type A"},
      {"func main()\n  local i: int\n  len i, i\nend\n", "3:10: 'i' is int, not an array"},
      {"func main()\n  jmp 3\nend\n", "2:7: expected a label"},
      {"func main()\n  local x: float\n  bz x, L\nL:\nend\n", "3:6: the tested value must be int, found 'x' of type float"},
      {"func main()\n  local x: float\n  exit x\nend\n", "3:8: the exit status must be int, found 'x' of type float"},
      {"func main()\n  local x: float\n  arg x, 0\nend\n", "3:7: destination 'x' is float, the result is int"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.source);
    const std::string got = first_error(c.source);
    CHECK(got.substr(0, c.expect.size()) == c.expect);
  }
}

TEST_CASE("one pass reports every error, in source order") {
  const std::string source =
      "func main()\n"
      "  local i: int\n"
      "  frob\n"
      "  mov i, q\n"
      "  add i, i\n"
      "  jmp nowhere\n"
      "end\n"
      "func g(\n"
      "end\n";
  try {
    assemble(source, "many.gasm");
    FAIL("expected errors");
  } catch (const AssemblyError& e) {
    const auto lines = e.lines();
    REQUIRE(lines.size() == 5);
    CHECK(lines[0] == "many.gasm:3:3: unknown instruction 'frob'");
    CHECK(lines[1] == "many.gasm:4:10: unknown name 'q'");
    CHECK(lines[2] == "many.gasm:5:3: 'add' takes 3 operands (destination, left, right), found 2");
    CHECK(lines[3] == "many.gasm:6:7: unknown label 'nowhere'");
    CHECK(lines[4] == "many.gasm:8:8: expected a name, found end of line");
  }
}

TEST_CASE("a function with a result and an empty body ends in FALLOFF, whatever the function before it ends in") {
  // Found by fuzz_gasm: the previous function's closing 'ret' left f with no code at all.
  const std::string source =
      "func g() -> int\n  ret 1\nend\n"
      "func f() -> int\nend\n"
      "func main()\n  local i: int\n  call i, f()\nend\n";
  const Module m = assemble(source, "t.gasm");
  CHECK(ops(m, "f") == std::vector<std::string>{"FALLOFF"});
  const auto r = gcvm::test::run_guest(source);
  REQUIRE(r.failed);
  const std::string expect = "function 'f' reached its end without returning a int";
  CHECK(r.error.substr(0, expect.size()) == expect);
}
