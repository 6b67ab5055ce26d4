// The bytecode interpreter: runs a Module's `main` over a heap binding
// (vm/runtime/soa_heap_binding.hpp describes the binding contract).
//
// Dispatch: computed goto (one indirect jump per instruction, direct-threaded on the
// opcode word) when GCVM_COMPUTED_GOTO is set by CMake (GNU C++ compilers), a switch
// in a loop otherwise. Registers of the loop: `ip` (next word), `code` (the function's
// first word, jump base), `fp` (frame base), `fn` (running function).
//
// States and invariants:
// - The running frame is (fn, fp); callers are saved in CallStack::frames().
// - Before anything that can collect or fail (allocation slow path, `gc`, calls that
//   raise errors), the loop saves its registers into `top_`, so the root enumeration
//   and the guest stack trace see every frame. Roots are exactly the stack maps and
//   reference globals (call_stack.hpp); nothing is scanned conservatively.
// - Allocation: the binding's fast path; on kNull, a collection ("heap full") and a
//   retry, repeated while the binding says a fuller collection may help (after a young
//   one); still kNull is out of memory (GuestFailure::OutOfMemory).
// - A binding that may collect inside an allocation (Binding::kCollectsInAllocation:
//   libgc) gets the registers saved before every allocation and a root source
//   (attach_roots) reporting the same precise roots, for as long as the interpreter lives.
// - Integer arithmetic wraps (two's complement, 64-bit); division and remainder by zero
//   are guest errors; INT64_MIN / -1 is INT64_MIN and INT64_MIN % -1 is 0. Shift
//   counts are taken mod 64; `shr` is arithmetic. `ftoi` truncates toward zero,
//   saturates out-of-range values and maps NaN to 0.
// - Guest output is buffered and flushed at exit and before an error is reported.
// - Virtual calls (CALLV) read the receiver's class index from its scalar field 0 and
//   call that class's vtable entry; a null receiver is a guest error. String literals
//   (STRLIT) are allocated once, at first use, and stay roots for the whole run.
#pragma once

#include <fmt/format.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "vm/bytecode/module.hpp"
#include "vm/bytecode/opcodes.hpp"
#include "vm/interp/guest_strings.hpp"
#include "vm/runtime/call_stack.hpp"
#include "vm/runtime/guest_error.hpp"

namespace gcvm::vm {

template <typename Binding>
class Interpreter {
 public:
  using Ref = typename Binding::Ref;
  static_assert(sizeof(Ref) == sizeof(std::uint64_t), "guest references are stored in 64-bit slots");

  Interpreter(const Module& module, Binding& binding, std::vector<std::int64_t> args, std::FILE* out = stdout)
      : m_(module), heap_(binding), args_(std::move(args)), out_(out) {
    for (const ClassInfo& c : m_.classes) classes_.push_back(heap_.register_class(c.ref_fields, c.scalar_fields));
    for (const FieldRef& f : m_.fields) {
      const FieldInfo& info = m_.classes[f.class_index].fields[f.field];
      fields_.push_back(heap_.field_handle(classes_[f.class_index], info.is_ref, info.index));
      field_indices_.push_back(info.index);
    }
    literals_.assign(m_.strings.size(), Binding::kNull);
    globals_.assign(m_.globals.size(), 0);
    for (std::size_t g = 0; g < m_.globals.size(); ++g)
      if (m_.globals[g].is_ref) {
        globals_[g] = Binding::kNull;
        ref_globals_.push_back(static_cast<std::uint32_t>(g));
      }
    for (const FunctionInfo& f : m_.functions) {
      std::vector<std::uint64_t> image(f.frame_size, 0);
      for (std::uint32_t s : f.ref_slots) image[s] = Binding::kNull;
      images_.push_back(std::move(image));
    }
    if constexpr (Binding::kCollectsInAllocation)
      heap_.attach_roots([this](std::vector<Ref>& out) { for_each_root([&](Ref r) { out.push_back(r); }); });
  }
  ~Interpreter() {
    if constexpr (Binding::kCollectsInAllocation) heap_.attach_roots(nullptr);
    flush();
  }

  /// Runs main; returns its exit status (0, main's int result or `exit`'s operand,
  /// mod 256). Throws GuestError; binding errors (VerifyError, MarkError) pass through.
  int run();

  void flush() {
    if (!buffer_.empty()) std::fwrite(buffer_.data(), 1, buffer_.size(), out_);
    buffer_.clear();
    std::fflush(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& message, GuestFailure kind = GuestFailure::RuntimeError) {
    flush();
    throw GuestError(message, stack_.trace(top_, m_.file), kind);
  }
  /// Calls visit(ref) for every root of the saved state.
  template <typename F>
  void for_each_root(F&& visit) const {
    if (top_.fn != nullptr) stack_.for_each_root(top_, visit);  // null before the first save
    for (std::uint32_t g : ref_globals_) visit(globals_[g]);
    for (Ref s : literals_)
      if (s != Binding::kNull) visit(s);
  }
  /// All roots of the saved state, as Refs.
  std::span<const Ref> roots() {
    roots_.clear();
    for_each_root([&](Ref r) { roots_.push_back(r); });
    return roots_;
  }
  void collect(const char* reason) { heap_.collect(roots(), reason); }
  /// Collects and retries `allocate` until it succeeds or a full collection did not help.
  template <typename Allocate>
  Ref collect_and_retry(Allocate&& allocate) {
    Ref r = Binding::kNull;
    do {
      collect("heap full");
      r = allocate();
    } while (r == Binding::kNull && heap_.full_collection_may_help());
    return r;
  }
  Ref allocate_slow(std::uint32_t cls) {
    const Ref r = collect_and_retry([&] { return heap_.allocate(classes_[cls]); });
    if (r == Binding::kNull) out_of_memory("a " + m_.classes[cls].name);
    return r;
  }
  Ref allocate_array_slow(bool is_ref, std::int64_t length) {
    if (length < 0) fail(fmt::format("negative array length {}", length));
    const Ref r = collect_and_retry([&] { return heap_.allocate_array(is_ref, static_cast<std::uint64_t>(length)); });
    if (r == Binding::kNull) out_of_memory(fmt::format("an array of {} {}", length, is_ref ? "references" : "scalars"));
    return r;
  }
  /// A new guest string holding `text` (collects and retries when the heap is full;
  /// the caller has saved its registers).
  Ref new_string(std::string_view text) {
    const std::uint64_t n = guest_strings::elements_for(text.size());
    Ref r = heap_.allocate_array(false, n);
    if (r == Binding::kNull) [[unlikely]] {
      r = collect_and_retry([&] { return heap_.allocate_array(false, n); });
      if (r == Binding::kNull) out_of_memory(fmt::format("a string of {} bytes", text.size()));
    }
    guest_strings::write(heap_, r, text);
    return r;
  }
  Ref literal(std::uint32_t index) {
    if (literals_[index] == Binding::kNull) literals_[index] = new_string(m_.strings[index]);
    return literals_[index];
  }
  static std::int64_t clock_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  [[noreturn]] void out_of_memory(const std::string& what) {
    fail(fmt::format("out of memory: the heap limit of {} bytes ({:.1f} MiB) is exhausted after a full collection "
                     "(allocating {}; {} bytes in use)",
                     heap_.limit_bytes(), heap_.limit_bytes() / 1048576.0, what, heap_.used_bytes()),
         GuestFailure::OutOfMemory);
  }
  void print_int(std::uint64_t v) {
    fmt::format_to(std::back_inserter(buffer_), "{}", static_cast<std::int64_t>(v));
    if (buffer_.size() > kFlushBytes) flush();
  }
  void print_float(std::uint64_t v) {
    fmt::format_to(std::back_inserter(buffer_), "{}", std::bit_cast<double>(v));
    if (buffer_.size() > kFlushBytes) flush();
  }
  void print_string(std::uint32_t index) {
    buffer_ += m_.strings[index];
    if (buffer_.size() > kFlushBytes) flush();
  }
  static std::int64_t float_to_int(double d) {
    if (std::isnan(d)) return 0;
    if (d >= 9223372036854775807.0) return std::numeric_limits<std::int64_t>::max();
    if (d <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(d);
  }

  static constexpr std::size_t kFlushBytes = 1 << 16;

  const Module& m_;
  Binding& heap_;
  std::vector<std::int64_t> args_;
  std::FILE* out_;
  std::vector<typename Binding::ClassHandle> classes_;
  std::vector<typename Binding::FieldHandle> fields_;  // by Module::fields index
  std::vector<std::uint32_t> field_indices_;           // by Module::fields index: FieldInfo::index
  std::vector<Ref> literals_;                          // by Module::strings index: STRLIT's objects
  std::vector<std::uint64_t> globals_;
  std::vector<std::uint32_t> ref_globals_;
  std::vector<std::vector<std::uint64_t>> images_;
  CallStack stack_;
  Frame top_;
  std::vector<Ref> roots_;
  std::string buffer_;
};

template <typename Binding>
int Interpreter<Binding>::run() {
  const FunctionInfo* fn = &m_.functions[m_.main_function];
  const std::uint32_t* code = fn->code.data();
  const std::uint32_t* ip = code;
  std::uint64_t* fp = stack_.slots_begin();
  std::uint64_t* const slots_end = stack_.slots_end();
  std::vector<Frame>& frames = stack_.frames();
  std::copy(images_[m_.main_function].begin(), images_[m_.main_function].end(), fp);
  std::uint64_t* const globals = globals_.data();
  const std::uint64_t* const constants = m_.constants.data();
  const typename Binding::FieldHandle* const fields = fields_.data();
  constexpr Ref kNull = Binding::kNull;
  std::uint64_t return_value = 0;
  std::uint32_t callee_index = 0;

#define GCVM_SAVE() (top_ = Frame{fn, fp, ip})
#define GCVM_FAIL(...)                 \
  do {                                 \
    GCVM_SAVE();                       \
    fail(fmt::format(__VA_ARGS__));    \
  } while (0)
#define R(n) fp[ip[n]]
#define I(n) static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(ip[n])))
#define S(n) static_cast<std::int64_t>(fp[ip[n]])
#define F(n) std::bit_cast<double>(fp[ip[n]])
#define SETF(n, v) (fp[ip[n]] = std::bit_cast<std::uint64_t>(static_cast<double>(v)))
#define NEXT(words) \
  do {              \
    ip += (words);  \
    DISPATCH();     \
  } while (0)
#define JUMP_IF(cond, target) \
  do {                        \
    if (cond) {               \
      ip = code + (target);   \
      DISPATCH();             \
    }                         \
    NEXT(4);                  \
  } while (0)

#if GCVM_COMPUTED_GOTO
  static void* const kLabels[] = {
#define GCVM_OP_LABEL(name, sig) &&L_##name,
      GCVM_OPCODES(GCVM_OP_LABEL)
#undef GCVM_OP_LABEL
  };
#define DISPATCH() goto* kLabels[*ip]
#define CASE(name) L_##name:
  DISPATCH();
#else
#define DISPATCH() continue
#define CASE(name) case Op::name:
  for (;;) {
    switch (static_cast<Op>(*ip)) {
#endif

  CASE(NOP) NEXT(1);
  CASE(MOV) R(1) = R(2); NEXT(3);
  CASE(LOADI) R(1) = I(2); NEXT(3);
  CASE(LOADK) R(1) = constants[ip[2]]; NEXT(3);
  CASE(LOADNULL) R(1) = kNull; NEXT(2);
  CASE(GGET) R(1) = globals[ip[2]]; NEXT(3);
  CASE(GPUT) globals[ip[1]] = R(2); NEXT(3);

  CASE(ADD) R(1) = R(2) + R(3); NEXT(4);
  CASE(ADD_LI) R(1) = R(2) + I(3); NEXT(4);
  CASE(SUB) R(1) = R(2) - R(3); NEXT(4);
  CASE(SUB_LI) R(1) = R(2) - I(3); NEXT(4);
  CASE(MUL) R(1) = R(2) * R(3); NEXT(4);
  CASE(MUL_LI) R(1) = R(2) * I(3); NEXT(4);
  CASE(DIV) {
    const std::int64_t b = S(3);
    if (b == 0) GCVM_FAIL("division by zero");
    R(1) = (b == -1) ? 0 - R(2) : static_cast<std::uint64_t>(S(2) / b);
    NEXT(4);
  }
  CASE(DIV_LI) {
    const std::int64_t b = static_cast<std::int64_t>(I(3));
    if (b == 0) GCVM_FAIL("division by zero");
    R(1) = (b == -1) ? 0 - R(2) : static_cast<std::uint64_t>(S(2) / b);
    NEXT(4);
  }
  CASE(REM) {
    const std::int64_t b = S(3);
    if (b == 0) GCVM_FAIL("division by zero (remainder)");
    R(1) = (b == -1) ? 0 : static_cast<std::uint64_t>(S(2) % b);
    NEXT(4);
  }
  CASE(REM_LI) {
    const std::int64_t b = static_cast<std::int64_t>(I(3));
    if (b == 0) GCVM_FAIL("division by zero (remainder)");
    R(1) = (b == -1) ? 0 : static_cast<std::uint64_t>(S(2) % b);
    NEXT(4);
  }
  CASE(AND) R(1) = R(2) & R(3); NEXT(4);
  CASE(AND_LI) R(1) = R(2) & I(3); NEXT(4);
  CASE(OR) R(1) = R(2) | R(3); NEXT(4);
  CASE(OR_LI) R(1) = R(2) | I(3); NEXT(4);
  CASE(XOR) R(1) = R(2) ^ R(3); NEXT(4);
  CASE(XOR_LI) R(1) = R(2) ^ I(3); NEXT(4);
  CASE(SHL) R(1) = R(2) << (R(3) & 63); NEXT(4);
  CASE(SHL_LI) R(1) = R(2) << (I(3) & 63); NEXT(4);
  CASE(SHR) R(1) = static_cast<std::uint64_t>(S(2) >> (R(3) & 63)); NEXT(4);
  CASE(SHR_LI) R(1) = static_cast<std::uint64_t>(S(2) >> (I(3) & 63)); NEXT(4);
  CASE(NEG) R(1) = 0 - R(2); NEXT(3);
  CASE(NOT) R(1) = ~R(2); NEXT(3);

  CASE(LT) R(1) = S(2) < S(3); NEXT(4);
  CASE(LT_LI) R(1) = S(2) < static_cast<std::int64_t>(I(3)); NEXT(4);
  CASE(LE) R(1) = S(2) <= S(3); NEXT(4);
  CASE(LE_LI) R(1) = S(2) <= static_cast<std::int64_t>(I(3)); NEXT(4);
  CASE(GT) R(1) = S(2) > S(3); NEXT(4);
  CASE(GT_LI) R(1) = S(2) > static_cast<std::int64_t>(I(3)); NEXT(4);
  CASE(GE) R(1) = S(2) >= S(3); NEXT(4);
  CASE(GE_LI) R(1) = S(2) >= static_cast<std::int64_t>(I(3)); NEXT(4);
  CASE(EQ) R(1) = R(2) == R(3); NEXT(4);
  CASE(EQ_LI) R(1) = R(2) == I(3); NEXT(4);
  CASE(NE) R(1) = R(2) != R(3); NEXT(4);
  CASE(NE_LI) R(1) = R(2) != I(3); NEXT(4);

  CASE(FADD) SETF(1, F(2) + F(3)); NEXT(4);
  CASE(FSUB) SETF(1, F(2) - F(3)); NEXT(4);
  CASE(FMUL) SETF(1, F(2) * F(3)); NEXT(4);
  CASE(FDIV) SETF(1, F(2) / F(3)); NEXT(4);
  CASE(FNEG) SETF(1, -F(2)); NEXT(3);
  CASE(FLT) R(1) = F(2) < F(3); NEXT(4);
  CASE(FLE) R(1) = F(2) <= F(3); NEXT(4);
  CASE(FGT) R(1) = F(2) > F(3); NEXT(4);
  CASE(FGE) R(1) = F(2) >= F(3); NEXT(4);
  CASE(FEQ) R(1) = F(2) == F(3); NEXT(4);
  CASE(FNE) R(1) = F(2) != F(3); NEXT(4);
  CASE(ITOF) SETF(1, static_cast<double>(S(2))); NEXT(3);
  CASE(FTOI) R(1) = static_cast<std::uint64_t>(float_to_int(F(2))); NEXT(3);

  CASE(JMP) ip = code + ip[1]; DISPATCH();
  CASE(BZ) {
    if (R(1) == 0) {
      ip = code + ip[2];
      DISPATCH();
    }
    NEXT(3);
  }
  CASE(BNZ) {
    if (R(1) != 0) {
      ip = code + ip[2];
      DISPATCH();
    }
    NEXT(3);
  }
  CASE(BLT) JUMP_IF(S(1) < S(2), ip[3]);
  CASE(BLT_LI) JUMP_IF(S(1) < static_cast<std::int64_t>(I(2)), ip[3]);
  CASE(BLE) JUMP_IF(S(1) <= S(2), ip[3]);
  CASE(BLE_LI) JUMP_IF(S(1) <= static_cast<std::int64_t>(I(2)), ip[3]);
  CASE(BGT) JUMP_IF(S(1) > S(2), ip[3]);
  CASE(BGT_LI) JUMP_IF(S(1) > static_cast<std::int64_t>(I(2)), ip[3]);
  CASE(BGE) JUMP_IF(S(1) >= S(2), ip[3]);
  CASE(BGE_LI) JUMP_IF(S(1) >= static_cast<std::int64_t>(I(2)), ip[3]);
  CASE(BEQ) JUMP_IF(R(1) == R(2), ip[3]);
  CASE(BEQ_LI) JUMP_IF(R(1) == I(2), ip[3]);
  CASE(BNE) JUMP_IF(R(1) != R(2), ip[3]);
  CASE(BNE_LI) JUMP_IF(R(1) != I(2), ip[3]);
  CASE(FBLT) JUMP_IF(F(1) < F(2), ip[3]);
  CASE(FBLE) JUMP_IF(F(1) <= F(2), ip[3]);
  CASE(FBGT) JUMP_IF(F(1) > F(2), ip[3]);
  CASE(FBGE) JUMP_IF(F(1) >= F(2), ip[3]);
  CASE(FBEQ) JUMP_IF(F(1) == F(2), ip[3]);
  CASE(FBNE) JUMP_IF(F(1) != F(2), ip[3]);
  CASE(BNULL) {
    if (R(1) == kNull) {
      ip = code + ip[2];
      DISPATCH();
    }
    NEXT(3);
  }
  CASE(BNONNULL) {
    if (R(1) != kNull) {
      ip = code + ip[2];
      DISPATCH();
    }
    NEXT(3);
  }

  CASE(CALL) {
    callee_index = ip[1];
    goto call_function;
  }
  CASE(CALLV) {
    const Ref receiver = R(4);
    if (receiver == kNull) [[unlikely]]
      GCVM_FAIL("null dereference (calling a method of '{}', a {})", fn->slots[ip[4]].name, fn->slots[ip[4]].type);
    callee_index = m_.classes[heap_.load_scalar_field(receiver, 0)].vtable[ip[1]];
    goto call_function;
  }
  {
  call_function:
    const FunctionInfo* callee = &m_.functions[callee_index];
    std::uint64_t* callee_fp = fp + fn->frame_size;
    if (static_cast<std::size_t>(slots_end - callee_fp) < callee->frame_size || frames.size() >= CallStack::kMaxDepth)
      GCVM_FAIL("stack overflow ({} frames deep)", frames.size() + 1);
    const std::uint32_t argc = ip[3];
    const std::uint64_t* image = images_[callee_index].data();
    for (std::uint32_t a = 0; a < argc; ++a) callee_fp[a] = fp[ip[4 + a]];
    for (std::uint32_t s = argc; s < callee->frame_size; ++s) callee_fp[s] = image[s];  // frames are small: no memcpy call
    frames.push_back(Frame{fn, fp, ip});
    fn = callee;
    fp = callee_fp;
    code = ip = fn->code.data();
    DISPATCH();
  }
  CASE(RETV) {
    return_value = 0;
    goto return_to_caller;
  }
  CASE(RET) {
    return_value = R(1);
  return_to_caller:
    if (frames.empty()) {
      flush();
      return static_cast<int>(return_value & 255);
    }
    const Frame caller = frames.back();
    frames.pop_back();
    fn = caller.fn;
    fp = caller.base;
    code = fn->code.data();
    ip = caller.ip;
    if (ip[2] != kNoSlot) fp[ip[2]] = return_value;  // never set for RETV: the assembler rejects it
    NEXT(4 + ip[3]);
  }

  CASE(NEW) {
    if constexpr (Binding::kCollectsInAllocation) GCVM_SAVE();
    Ref r = heap_.allocate(classes_[ip[2]]);
    if (r == kNull) [[unlikely]] {
      GCVM_SAVE();
      r = allocate_slow(ip[2]);
    }
    R(1) = r;
    NEXT(3);
  }
  CASE(GETR) {
    const Ref obj = R(2);
    if (obj == kNull) [[unlikely]]
      GCVM_FAIL("null dereference (reading a field of '{}', a {})", fn->slots[ip[2]].name, fn->slots[ip[2]].type);
    R(1) = heap_.load_ref(obj, fields[ip[3]]);
    NEXT(4);
  }
  CASE(PUTR) {
    const Ref obj = R(1);
    if (obj == kNull) [[unlikely]]
      GCVM_FAIL("null dereference (writing a field of '{}', a {})", fn->slots[ip[1]].name, fn->slots[ip[1]].type);
    heap_.store_ref(obj, fields[ip[2]], R(3));
    NEXT(4);
  }
  CASE(GETS) {
    const Ref obj = R(2);
    if (obj == kNull) [[unlikely]]
      GCVM_FAIL("null dereference (reading a field of '{}', a {})", fn->slots[ip[2]].name, fn->slots[ip[2]].type);
    R(1) = heap_.load_scalar(obj, fields[ip[3]]);
    NEXT(4);
  }
  CASE(PUTS) {
    const Ref obj = R(1);
    if (obj == kNull) [[unlikely]]
      GCVM_FAIL("null dereference (writing a field of '{}', a {})", fn->slots[ip[1]].name, fn->slots[ip[1]].type);
    heap_.store_scalar(obj, fields[ip[2]], R(3));
    NEXT(4);
  }
#define GCVM_CHECK_OBJECT(operand, what)                                                               \
  const Ref obj = R(operand);                                                                          \
  if (obj == kNull) [[unlikely]]                                                                       \
    GCVM_FAIL("null dereference ({} a field of '{}', a {})", what, fn->slots[ip[operand]].name,       \
              fn->slots[ip[operand]].type);
  CASE(GETRD) {
    GCVM_CHECK_OBJECT(2, "reading")
    R(1) = heap_.load_ref_field(obj, field_indices_[ip[3]]);
    NEXT(4);
  }
  CASE(PUTRD) {
    GCVM_CHECK_OBJECT(1, "writing")
    heap_.store_ref_field(obj, field_indices_[ip[2]], R(3));
    NEXT(4);
  }
  CASE(GETSD) {
    GCVM_CHECK_OBJECT(2, "reading")
    R(1) = heap_.load_scalar_field(obj, field_indices_[ip[3]]);
    NEXT(4);
  }
  CASE(PUTSD) {
    GCVM_CHECK_OBJECT(1, "writing")
    heap_.store_scalar_field(obj, field_indices_[ip[2]], R(3));
    NEXT(4);
  }
#undef GCVM_CHECK_OBJECT
#define GCVM_NEW_ARRAY(is_ref)                                                                \
  {                                                                                           \
    if constexpr (Binding::kCollectsInAllocation) GCVM_SAVE();                                \
    const std::int64_t n = S(2);                                                              \
    Ref r = n < 0 ? kNull : heap_.allocate_array(is_ref, static_cast<std::uint64_t>(n));      \
    if (r == kNull) [[unlikely]] {                                                            \
      GCVM_SAVE();                                                                            \
      r = allocate_array_slow(is_ref, n);                                                     \
    }                                                                                         \
    R(1) = r;                                                                                 \
    NEXT(3);                                                                                  \
  }
  CASE(NEWRA) GCVM_NEW_ARRAY(true)
  CASE(NEWSA) GCVM_NEW_ARRAY(false)
#undef GCVM_NEW_ARRAY
  CASE(ALEN) {
    const Ref arr = R(2);
    if (arr == kNull) [[unlikely]]
      GCVM_FAIL("null dereference (length of '{}', a {})", fn->slots[ip[2]].name, fn->slots[ip[2]].type);
    R(1) = heap_.array_length(arr);
    NEXT(3);
  }
#define GCVM_CHECK_ELEMENT(arr_operand, index_operand)                                                            \
  const Ref arr = R(arr_operand);                                                                                \
  if (arr == kNull) [[unlikely]]                                                                                 \
    GCVM_FAIL("null dereference (element of '{}', a {})", fn->slots[ip[arr_operand]].name,                      \
              fn->slots[ip[arr_operand]].type);                                                                  \
  const std::uint64_t index = R(index_operand);                                                                  \
  if (index >= heap_.array_length(arr)) [[unlikely]]                                                             \
    GCVM_FAIL("index {} out of range for '{}' of length {}", static_cast<std::int64_t>(index),                   \
              fn->slots[ip[arr_operand]].name, heap_.array_length(arr));
  CASE(AGETR) {
    GCVM_CHECK_ELEMENT(2, 3)
    R(1) = heap_.load_element(arr, index);
    NEXT(4);
  }
  CASE(APUTR) {
    GCVM_CHECK_ELEMENT(1, 2)
    heap_.store_element(arr, index, R(3));
    NEXT(4);
  }
  CASE(AGETS) {
    GCVM_CHECK_ELEMENT(2, 3)
    R(1) = heap_.load_scalar_element(arr, index);
    NEXT(4);
  }
  CASE(APUTS) {
    GCVM_CHECK_ELEMENT(1, 2)
    heap_.store_scalar_element(arr, index, R(3));
    NEXT(4);
  }
#undef GCVM_CHECK_ELEMENT

  CASE(PRINTI) print_int(R(1)); NEXT(2);
  CASE(PRINTF) print_float(R(1)); NEXT(2);
  CASE(PRINTS) print_string(ip[1]); NEXT(2);
#define GCVM_CHECK_STRING(operand)                                                                             \
  if (R(operand) == kNull) [[unlikely]]                                                                        \
    GCVM_FAIL("null dereference (string '{}')", fn->slots[ip[operand]].name);
  CASE(PRINTSTR) {
    GCVM_CHECK_STRING(1)
    buffer_ += guest_strings::bytes(heap_, R(1));
    if (buffer_.size() > kFlushBytes) flush();
    NEXT(2);
  }
  CASE(STRLIT) {
    GCVM_SAVE();
    R(1) = literal(ip[2]);
    NEXT(3);
  }
  CASE(STRLEN) {
    GCVM_CHECK_STRING(2)
    R(1) = guest_strings::length(heap_, R(2));
    NEXT(3);
  }
  CASE(STRCHAR) {
    GCVM_CHECK_STRING(2)
    const std::uint64_t index = R(3);
    const std::uint64_t length = guest_strings::length(heap_, R(2));
    if (index >= length) [[unlikely]]
      GCVM_FAIL("index {} out of range for string '{}' of length {}", static_cast<std::int64_t>(index),
                fn->slots[ip[2]].name, length);
    R(1) = guest_strings::char_at(heap_, R(2), index);
    NEXT(4);
  }
  CASE(STREQ) {
    GCVM_CHECK_STRING(2)
    GCVM_CHECK_STRING(3)
    R(1) = guest_strings::equal(heap_, R(2), R(3));
    NEXT(4);
  }
  CASE(STRCMP) {
    GCVM_CHECK_STRING(2)
    GCVM_CHECK_STRING(3)
    R(1) = static_cast<std::uint64_t>(guest_strings::compare(heap_, R(2), R(3)));
    NEXT(4);
  }
  CASE(STRCAT) {
    GCVM_CHECK_STRING(2)
    GCVM_CHECK_STRING(3)
    GCVM_SAVE();
    const std::string text = guest_strings::bytes(heap_, R(2)) + guest_strings::bytes(heap_, R(3));
    R(1) = new_string(text);
    NEXT(4);
  }
  CASE(STRSUB) {
    GCVM_CHECK_STRING(2)
    const std::uint64_t length = guest_strings::length(heap_, R(2));
    const std::uint64_t from = R(3), to = R(4);
    if (from > to || to > length) [[unlikely]]
      GCVM_FAIL("substring {} .. {} out of range for string '{}' of length {}", static_cast<std::int64_t>(from),
                static_cast<std::int64_t>(to), fn->slots[ip[2]].name, length);
    GCVM_SAVE();
    const std::string text = guest_strings::bytes(heap_, R(2), from, to);
    R(1) = new_string(text);
    NEXT(5);
  }
  CASE(STRHASH) {
    GCVM_CHECK_STRING(2)
    R(1) = static_cast<std::uint64_t>(guest_strings::hash(heap_, R(2)));
    NEXT(3);
  }
  CASE(STRCHR) {
    GCVM_SAVE();
    const char c = static_cast<char>(R(2) & 0xFF);
    R(1) = new_string(std::string_view(&c, 1));
    NEXT(3);
  }
  CASE(STRFROMA) {
    const Ref arr = R(2);
    if (arr == kNull) [[unlikely]]
      GCVM_FAIL("null dereference (bytes of '{}', a {})", fn->slots[ip[2]].name, fn->slots[ip[2]].type);
    const std::uint64_t length = heap_.array_length(arr);
    const std::uint64_t from = R(3), to = R(4);
    if (from > to || to > length) [[unlikely]]
      GCVM_FAIL("stringFromBytes: bytes {} .. {} out of range for an array of length {}",
                static_cast<std::int64_t>(from), static_cast<std::int64_t>(to), length);
    std::string text(to - from, '\0');
    for (std::uint64_t i = from; i < to; ++i) {
      const std::uint64_t byte = heap_.load_scalar_element(arr, i);
      if (byte > 0xFF) [[unlikely]]
        GCVM_FAIL("stringFromBytes: element {} is {}, not a byte (0 .. 255)", i, static_cast<std::int64_t>(byte));
      text[i - from] = static_cast<char>(byte);
    }
    GCVM_SAVE();
    R(1) = new_string(text);
    NEXT(5);
  }
  CASE(ITOSTR) {
    GCVM_SAVE();
    R(1) = new_string(fmt::format("{}", S(2)));
    NEXT(3);
  }
  CASE(FTOSTR) {
    GCVM_SAVE();
    R(1) = new_string(fmt::format("{}", F(2)));
    NEXT(3);
  }
#undef GCVM_CHECK_STRING
  CASE(FSQRT) SETF(1, std::sqrt(F(2))); NEXT(3);
  CASE(FSIN) SETF(1, std::sin(F(2))); NEXT(3);
  CASE(FCOS) SETF(1, std::cos(F(2))); NEXT(3);
  CASE(CLOCK) R(1) = static_cast<std::uint64_t>(clock_us()); NEXT(2);
  CASE(GC) {
    GCVM_SAVE();
    collect("gc instruction");
    NEXT(1);
  }
  CASE(ARGC) R(1) = args_.size(); NEXT(2);
  CASE(ARG) {
    const std::uint64_t i = R(2);
    if (i >= args_.size())
      GCVM_FAIL("argument index {} out of range ({} argument{} given)", static_cast<std::int64_t>(i), args_.size(),
                args_.size() == 1 ? "" : "s");
    R(1) = static_cast<std::uint64_t>(args_[i]);
    NEXT(3);
  }
  CASE(EXIT) {
    flush();
    return static_cast<int>(R(1) & 255);
  }
  CASE(FALLOFF) GCVM_FAIL("function '{}' reached its end without returning a {}", fn->name, fn->return_type);

#if !GCVM_COMPUTED_GOTO
      case Op::kCount: break;
    }
    GCVM_FAIL("bad opcode {}", *ip);
  }
#endif

#undef GCVM_SAVE
#undef GCVM_FAIL
#undef R
#undef I
#undef S
#undef F
#undef SETF
#undef NEXT
#undef JUMP_IF
#undef DISPATCH
#undef CASE
}

}  // namespace gcvm::vm
