// The invariants of an assembled Module (vm/bytecode/module.hpp, opcodes.hpp) that the
// interpreter relies on without checking, re-checked from the bytecode alone by the
// program fuzzers (fuzz_gasm, fuzz_tern). A front end that accepts a program must hand
// the interpreter a module that passes; check_module aborts (a fuzzer finding) with the
// function, pc and broken rule otherwise.
//
// Checked: each class's field counts, and that its objects fit a heap block; every
// function's code decodes to its end with known opcodes and ends in a jump, return,
// exit or FALLOFF, so it cannot run past its end; every operand is in range (slots in
// the frame or CALL's kNoSlot, constants, globals, classes, fields, strings, functions,
// virtual slots of some class); jump targets are instruction starts of the same
// function; one line per code word; the stack map lists exactly the reference slots;
// the frame holds the parameters; CALL passes as many arguments as the callee has
// parameters, each of the callee's reference-ness; each slot operand of a typed opcode
// has the reference-ness that opcode reads or writes (the static typing the interpreter
// trusts), results of CALL and RET included. Not checked: CALLV's receiver class and
// result, which the bytecode alone does not determine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "gc/heap/shape.hpp"
#include "vm/bytecode/module.hpp"
#include "vm/bytecode/opcodes.hpp"

namespace gcvm::fuzz {

[[noreturn]] inline void module_broken(const vm::FunctionInfo& f, std::uint32_t pc, const char* rule) {
  std::fprintf(stderr, "module check: function '%s' pc %u: %s\n", f.name.c_str(), pc, rule);
  std::abort();
}

/// Reference-ness of each operand of `op`, by position: 'r' a reference slot, 'x' a
/// scalar slot, '?' a slot of either kind, '=' a slot of the same kind as the operand
/// before it, '.' not a slot. Operands past the string's end are not constrained.
inline std::string_view operand_refness(vm::Op op) {
  using vm::Op;
  switch (op) {
    case Op::MOV: return "?=";
    case Op::EQ: case Op::NE: return "x?=";
    case Op::BEQ: case Op::BNE: return "?=.";
    case Op::LOADNULL: case Op::NEW: return "r.";
    case Op::GGET: case Op::GPUT: return "..";
    case Op::BNULL: case Op::BNONNULL: return "r.";
    case Op::GETR: case Op::GETRD: return "rr.";
    case Op::PUTR: case Op::PUTRD: return "r.r";
    case Op::GETS: case Op::GETSD: return "xr.";
    case Op::PUTS: case Op::PUTSD: return "r.x";
    case Op::NEWRA: case Op::NEWSA: return "rx";
    case Op::ALEN: return "xr";
    case Op::AGETR: return "rrx";
    case Op::APUTR: return "rxr";
    case Op::AGETS: return "xrx";
    case Op::APUTS: return "rxx";
    case Op::PRINTSTR: return "r";
    case Op::STRLIT: return "r.";
    case Op::STRLEN: case Op::STRHASH: return "xr";
    case Op::STRCHAR: return "xrx";
    case Op::STREQ: case Op::STRCMP: return "xrr";
    case Op::STRCAT: return "rrr";
    case Op::STRSUB: case Op::STRFROMA: return "rrxx";
    case Op::STRCHR: case Op::ITOSTR: case Op::FTOSTR: return "rx";
    case Op::CALL: case Op::CALLV: case Op::RET: return "";
    default: return "xxxx";  // arithmetic, comparisons, branches, prints, clock, args, exit
  }
}

/// Whether a function's result is a reference: every type but the scalars (gasm's int
/// and float, Tern's int, float and bool) is one.
inline bool returns_ref(const vm::FunctionInfo& f) {
  return f.returns_value && f.return_type != "int" && f.return_type != "float" && f.return_type != "bool";
}

inline void check_module(const vm::Module& m) {
  using vm::Op;
  const vm::FunctionInfo* first = m.functions.empty() ? nullptr : &m.functions[0];
  if (first == nullptr || m.main_function >= m.functions.size()) std::abort();
  std::size_t max_vtable = 0;
  for (const vm::ClassInfo& c : m.classes) {
    std::uint32_t refs = 0;
    for (const vm::FieldInfo& fi : c.fields) refs += fi.is_ref;
    if (refs != c.ref_fields || c.fields.size() - refs != c.scalar_fields) module_broken(*first, 0, "field counts");
    if (ShapeTable::object_bytes(c.ref_fields, c.scalar_fields) > ShapeTable::kMaxObjectBytes)
      module_broken(*first, 0, "a class's objects do not fit a heap block");
    max_vtable = std::max(max_vtable, c.vtable.size());
    for (std::uint32_t fn : c.vtable)
      if (fn >= m.functions.size()) module_broken(*first, 0, "vtable entry out of range");
  }
  for (const vm::FieldRef& fr : m.fields)
    if (fr.class_index >= m.classes.size() || fr.field >= m.classes[fr.class_index].fields.size())
      module_broken(*first, 0, "field reference out of range");
  for (const vm::FunctionInfo& f : m.functions) {
    if (f.slots.size() != f.frame_size || f.param_count > f.frame_size) module_broken(f, 0, "frame size");
    if (f.lines.size() != f.code.size()) module_broken(f, 0, "one line per code word");
    std::vector<std::uint32_t> refs;
    for (std::uint32_t s = 0; s < f.frame_size; ++s)
      if (f.slots[s].is_ref) refs.push_back(s);
    if (refs != f.ref_slots) module_broken(f, 0, "stack map differs from the reference slots");
    std::vector<bool> starts(f.code.size() + 1, false);
    std::vector<std::uint32_t> jumps;
    auto slot_ok = [&](std::uint32_t s) { return s < f.frame_size; };
    Op last = Op::NOP;
    for (std::uint32_t pc = 0; pc < f.code.size();) {
      starts[pc] = true;
      if (f.code[pc] >= vm::kOpCount) module_broken(f, pc, "unknown opcode");
      const Op op = static_cast<Op>(f.code[pc]);
      const bool call = op == Op::CALL || op == Op::CALLV;
      last = op;
      if (call && pc + 4 > f.code.size()) module_broken(f, pc, "truncated call");
      const std::uint64_t words = call ? 4ull + f.code[pc + 3] : vm::instruction_words(&f.code[pc]);
      if (pc + words > f.code.size()) module_broken(f, pc, "instruction runs past the end of the code");
      const std::uint32_t* w = &f.code[pc + 1];
      if (call) {
        const std::uint32_t dest = w[1], argc = w[2];
        if (dest != vm::kNoSlot && !slot_ok(dest)) module_broken(f, pc, "call destination out of range");
        for (std::uint32_t a = 0; a < argc; ++a)
          if (!slot_ok(w[3 + a])) module_broken(f, pc, "call argument out of range");
        if (op == Op::CALLV) {
          if (w[0] >= max_vtable) module_broken(f, pc, "virtual slot out of range");
          if (argc == 0 || !f.slots[w[3]].is_ref) module_broken(f, pc, "virtual call without a reference receiver");
        } else {
          if (w[0] >= m.functions.size()) module_broken(f, pc, "function index out of range");
          const vm::FunctionInfo& callee = m.functions[w[0]];
          if (argc != callee.param_count) module_broken(f, pc, "argument count differs from the callee's");
          for (std::uint32_t a = 0; a < argc; ++a)
            if (f.slots[w[3 + a]].is_ref != callee.slots[a].is_ref)
              module_broken(f, pc, "argument reference-ness differs from the parameter's");
          if (dest != vm::kNoSlot && !callee.returns_value) module_broken(f, pc, "result of a function without one");
          if (dest != vm::kNoSlot && f.slots[dest].is_ref != returns_ref(callee))
            module_broken(f, pc, "result reference-ness differs from the destination's");
        }
        pc += static_cast<std::uint32_t>(words);
        continue;
      }
      const std::string_view sig = vm::op_info(op).operands;
      const std::string_view refness = operand_refness(op);
      bool prev_ref = false;
      for (std::size_t i = 0; i < sig.size(); ++i) {
        const std::uint32_t v = w[i];
        switch (sig[i]) {
          case 'd':
          case 's': {
            if (!slot_ok(v)) module_broken(f, pc, "slot out of range");
            const bool is_ref = f.slots[v].is_ref;
            const char want = i < refness.size() ? refness[i] : '.';
            if ((want == 'r' && !is_ref) || (want == 'x' && is_ref) || (want == '=' && is_ref != prev_ref))
              module_broken(f, pc, "slot of the wrong reference-ness for the opcode");
            prev_ref = is_ref;
            break;
          }
          case 'k': if (v >= m.constants.size()) module_broken(f, pc, "constant out of range"); break;
          case 'g': if (v >= m.globals.size()) module_broken(f, pc, "global out of range"); break;
          case 'j': jumps.push_back(v); break;
          case 'c': if (v >= m.classes.size()) module_broken(f, pc, "class out of range"); break;
          case 'f': if (v >= m.fields.size()) module_broken(f, pc, "field out of range"); break;
          case 't': if (v >= m.strings.size()) module_broken(f, pc, "string out of range"); break;
          default: break;
        }
      }
      if (op == Op::RET && (!f.returns_value || f.slots[w[0]].is_ref != returns_ref(f)))
        module_broken(f, pc, "returned value of the wrong reference-ness");
      if (op == Op::GGET || op == Op::GPUT) {
        const std::uint32_t slot = op == Op::GGET ? w[0] : w[1];
        const std::uint32_t global = op == Op::GGET ? w[1] : w[0];
        if (f.slots[slot].is_ref != m.globals[global].is_ref)
          module_broken(f, pc, "global of the wrong reference-ness");
      }
      if (op == Op::NEW && !m.classes[w[1]].vtable.empty() && m.classes[w[1]].scalar_fields == 0)
        module_broken(f, pc, "class with a vtable but no scalar field for its index");
      const bool field_op = sig.find('f') != std::string_view::npos;
      if (field_op) {
        const std::uint32_t fi = sig[1] == 'f' ? w[1] : w[2];
        const vm::FieldRef& fr = m.fields[fi];
        const bool want_ref = op == Op::GETR || op == Op::PUTR || op == Op::GETRD || op == Op::PUTRD;
        if (m.classes[fr.class_index].fields[fr.field].is_ref != want_ref)
          module_broken(f, pc, "field of the wrong reference-ness for the opcode");
      }
      pc += static_cast<std::uint32_t>(words);
    }
    if (last != Op::JMP && last != Op::RET && last != Op::RETV && last != Op::EXIT && last != Op::FALLOFF)
      module_broken(f, static_cast<std::uint32_t>(f.code.size()), "the code can run past its end");
    for (std::uint32_t target : jumps)
      if (target >= f.code.size() || !starts[target])
        module_broken(f, target, "jump target is not an instruction start");
  }
}

}  // namespace gcvm::fuzz
