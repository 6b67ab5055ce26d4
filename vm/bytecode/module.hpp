// An assembled guest program: classes, globals, functions with their bytecode, the
// constant pool and string literals. Produced by the assembler (vm/asm), read by the
// interpreter and the disassembler; it holds no heap objects, so one Module can run
// under any heap binding.
//
// Frame layout of a function: slots [0, param_count) are the parameters, then the
// declared locals, then the assembler's scratch slots; `frame_size` counts all.
// `ref_slots` lists every slot that holds a reference (the function's stack map);
// every other slot holds a 64-bit integer or the bits of a double.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gcvm::vm {

struct FieldInfo {
  std::string name;
  std::string type;     // as written: int, float, a class name, T[]
  bool is_ref = false;  // reference field (an SOA ref slot) or 64-bit scalar
  std::uint32_t index = 0;  // among the class's reference or scalar fields
};

struct ClassInfo {
  std::string name;
  std::vector<FieldInfo> fields;  // declaration order
  std::uint32_t ref_fields = 0;
  std::uint32_t scalar_fields = 0;
  /// Function index of each virtual-method slot (CALLV); empty for a class without
  /// dynamic dispatch. A class with a vtable keeps its class index in scalar field 0.
  std::vector<std::uint32_t> vtable;
};

/// A field as the bytecode names it: GETR/PUTR/GETS/PUTS carry an index into
/// Module::fields, so the interpreter knows each access's class statically.
struct FieldRef {
  std::uint32_t class_index = 0;
  std::uint32_t field = 0;  // position in ClassInfo::fields
};

struct GlobalInfo {
  std::string name;
  std::string type;
  bool is_ref = false;
};

struct SlotInfo {
  std::string name;  // parameters and locals as declared; scratch slots "%tN"
  std::string type;
  bool is_ref = false;
};

struct FunctionInfo {
  std::string name;
  std::uint32_t line = 0;  // of the `func` line
  std::uint32_t param_count = 0;
  std::uint32_t frame_size = 0;
  bool returns_value = false;
  std::string return_type;  // empty for none
  std::vector<SlotInfo> slots;           // frame_size entries
  std::vector<std::uint32_t> ref_slots;  // indices of reference slots, ascending
  std::vector<std::uint32_t> code;
  std::vector<std::uint32_t> lines;  // source line of the instruction covering each code word
};

struct Module {
  std::string file;
  std::vector<ClassInfo> classes;
  std::vector<FieldRef> fields;  // every field of every class, class by class
  std::vector<GlobalInfo> globals;
  std::vector<FunctionInfo> functions;
  std::vector<std::uint64_t> constants;  // 64-bit ints and double bits (null has LOADNULL)
  std::vector<std::string> strings;
  std::uint32_t main_function = 0;
};

}  // namespace gcvm::vm
