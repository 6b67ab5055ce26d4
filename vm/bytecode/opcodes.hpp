// The bytecode instruction set: a register machine over typed frame slots.
//
// Every instruction is one 32-bit opcode word followed by its operand words. Operand
// kinds (one letter each in the signature below):
//   d  destination local slot     s  source local slot      i  signed 32-bit immediate
//   k  constant-pool index        g  global index           j  absolute jump target (word)
//   c  class index                f  index into Module::fields
//   t  string-literal index       n  function index             v  virtual-method slot
// CALL and CALLV are variable-length: n (CALLV: v), d (or kNoSlot), argc, then argc
// source slots; CALLV's first argument is the receiver.
//
// Invariants the assembler guarantees and the interpreter relies on (the program was
// type-checked, so no instruction checks the types of its operands at run time):
// - A slot named by an `*_R` / reference opcode holds a guest reference (or null);
//   a slot named by an integer or float opcode holds a scalar. Each function's
//   reference slots are listed in FunctionInfo::ref_slots (the stack map; it is the
//   same at every pc because a slot's type is declared, never inferred).
// - Jump targets are instruction starts inside the same function.
// - The `_li` forms are superinstructions: the right operand is an immediate.
// - Dynamic dispatch and fields (emitted by the Tern compiler, vm/lang): an object of a
//   class with a `vtable` keeps its class index in scalar field 0. CALLV reads it from
//   the receiver and calls `vtable[v]` of that class. GETRD/PUTRD/GETSD/PUTSD access a
//   field of an object whose class is only known up to a superclass: the heap finds
//   the layout from the object (a field keeps its index in every subclass).
// - Strings (STR*): a string is a scalar array; element 0 holds its length in bytes,
//   the bytes follow, eight per element, little-endian. STRLIT yields the literal's one
//   string object (allocated at first use and kept alive by the interpreter). STRCMP
//   compares bytes as unsigned, then lengths: negative, 0 or positive as Java's
//   String.compareTo. STRFROMA d, a, from, to makes a new string of the elements
//   from .. to (exclusive) of the scalar array a, one byte per element; an element
//   outside 0 .. 255 is a guest error, as is a range outside the array.
#pragma once

#include <cstdint>
#include <string_view>

namespace gcvm::vm {

// X(name, operand signature)
#define GCVM_OPCODES(X)                                                          \
  X(NOP, "")                                                                     \
  X(MOV, "ds")                                                                   \
  X(LOADI, "di")                                                                 \
  X(LOADK, "dk")                                                                 \
  X(LOADNULL, "d")                                                               \
  X(GGET, "dg")                                                                  \
  X(GPUT, "gs")                                                                  \
  X(ADD, "dss")                                                                  \
  X(ADD_LI, "dsi")                                                               \
  X(SUB, "dss")                                                                  \
  X(SUB_LI, "dsi")                                                               \
  X(MUL, "dss")                                                                  \
  X(MUL_LI, "dsi")                                                               \
  X(DIV, "dss")                                                                  \
  X(DIV_LI, "dsi")                                                               \
  X(REM, "dss")                                                                  \
  X(REM_LI, "dsi")                                                               \
  X(AND, "dss")                                                                  \
  X(AND_LI, "dsi")                                                               \
  X(OR, "dss")                                                                   \
  X(OR_LI, "dsi")                                                                \
  X(XOR, "dss")                                                                  \
  X(XOR_LI, "dsi")                                                               \
  X(SHL, "dss")                                                                  \
  X(SHL_LI, "dsi")                                                               \
  X(SHR, "dss")                                                                  \
  X(SHR_LI, "dsi")                                                               \
  X(NEG, "ds")                                                                   \
  X(NOT, "ds")                                                                   \
  X(LT, "dss")                                                                   \
  X(LT_LI, "dsi")                                                                \
  X(LE, "dss")                                                                   \
  X(LE_LI, "dsi")                                                                \
  X(GT, "dss")                                                                   \
  X(GT_LI, "dsi")                                                                \
  X(GE, "dss")                                                                   \
  X(GE_LI, "dsi")                                                                \
  X(EQ, "dss")                                                                   \
  X(EQ_LI, "dsi")                                                                \
  X(NE, "dss")                                                                   \
  X(NE_LI, "dsi")                                                                \
  X(FADD, "dss")                                                                 \
  X(FSUB, "dss")                                                                 \
  X(FMUL, "dss")                                                                 \
  X(FDIV, "dss")                                                                 \
  X(FNEG, "ds")                                                                  \
  X(FLT, "dss")                                                                  \
  X(FLE, "dss")                                                                  \
  X(FGT, "dss")                                                                  \
  X(FGE, "dss")                                                                  \
  X(FEQ, "dss")                                                                  \
  X(FNE, "dss")                                                                  \
  X(ITOF, "ds")                                                                  \
  X(FTOI, "ds")                                                                  \
  X(JMP, "j")                                                                    \
  X(BZ, "sj")                                                                    \
  X(BNZ, "sj")                                                                   \
  X(BLT, "ssj")                                                                  \
  X(BLT_LI, "sij")                                                               \
  X(BLE, "ssj")                                                                  \
  X(BLE_LI, "sij")                                                               \
  X(BGT, "ssj")                                                                  \
  X(BGT_LI, "sij")                                                               \
  X(BGE, "ssj")                                                                  \
  X(BGE_LI, "sij")                                                               \
  X(BEQ, "ssj")                                                                  \
  X(BEQ_LI, "sij")                                                               \
  X(BNE, "ssj")                                                                  \
  X(BNE_LI, "sij")                                                               \
  X(FBLT, "ssj")                                                                 \
  X(FBLE, "ssj")                                                                 \
  X(FBGT, "ssj")                                                                 \
  X(FBGE, "ssj")                                                                 \
  X(FBEQ, "ssj")                                                                 \
  X(FBNE, "ssj")                                                                 \
  X(BNULL, "sj")                                                                 \
  X(BNONNULL, "sj")                                                              \
  X(CALL, "n")                                                                   \
  X(CALLV, "v")                                                                  \
  X(RET, "s")                                                                    \
  X(RETV, "")                                                                    \
  X(NEW, "dc")                                                                   \
  X(GETR, "dsf")                                                                 \
  X(PUTR, "sfs")                                                                 \
  X(GETS, "dsf")                                                                 \
  X(PUTS, "sfs")                                                                 \
  X(GETRD, "dsf")                                                                \
  X(PUTRD, "sfs")                                                                \
  X(GETSD, "dsf")                                                                \
  X(PUTSD, "sfs")                                                                \
  X(NEWRA, "ds")                                                                 \
  X(NEWSA, "ds")                                                                 \
  X(ALEN, "ds")                                                                  \
  X(AGETR, "dss")                                                                \
  X(APUTR, "sss")                                                                \
  X(AGETS, "dss")                                                                \
  X(APUTS, "sss")                                                                \
  X(PRINTI, "s")                                                                 \
  X(PRINTF, "s")                                                                 \
  X(PRINTS, "t")                                                                 \
  X(PRINTSTR, "s")                                                               \
  X(STRLIT, "dt")                                                                \
  X(STRLEN, "ds")                                                                \
  X(STRCHAR, "dss")                                                              \
  X(STREQ, "dss")                                                                \
  X(STRCMP, "dss")                                                               \
  X(STRCAT, "dss")                                                               \
  X(STRSUB, "dsss")                                                              \
  X(STRHASH, "ds")                                                               \
  X(STRCHR, "ds")                                                                \
  X(STRFROMA, "dsss")                                                            \
  X(ITOSTR, "ds")                                                                \
  X(FTOSTR, "ds")                                                                \
  X(FSQRT, "ds")                                                                 \
  X(FSIN, "ds")                                                                  \
  X(FCOS, "ds")                                                                  \
  X(CLOCK, "d")                                                                  \
  X(GC, "")                                                                      \
  X(ARGC, "d")                                                                   \
  X(ARG, "ds")                                                                   \
  X(EXIT, "s")                                                                   \
  X(FALLOFF, "")

enum class Op : std::uint32_t {
#define GCVM_OP_ENUM(name, sig) name,
  GCVM_OPCODES(GCVM_OP_ENUM)
#undef GCVM_OP_ENUM
      kCount
};

inline constexpr std::uint32_t kOpCount = static_cast<std::uint32_t>(Op::kCount);
/// CALL's destination when the callee's result is discarded or it returns nothing.
inline constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;

struct OpInfo {
  std::string_view name;
  std::string_view operands;  // signature letters, see the header comment
};

inline constexpr OpInfo kOpInfo[] = {
#define GCVM_OP_INFO(name, sig) {#name, sig},
    GCVM_OPCODES(GCVM_OP_INFO)
#undef GCVM_OP_INFO
};
static_assert(sizeof(kOpInfo) / sizeof(kOpInfo[0]) == kOpCount);

inline const OpInfo& op_info(Op op) { return kOpInfo[static_cast<std::uint32_t>(op)]; }

/// Words an instruction occupies (CALL, CALLV: the argument count is the word at +3).
inline std::uint32_t instruction_words(const std::uint32_t* at) {
  const Op op = static_cast<Op>(at[0]);
  if (op == Op::CALL || op == Op::CALLV) return 4 + at[3];
  return 1 + static_cast<std::uint32_t>(op_info(op).operands.size());
}

}  // namespace gcvm::vm
