#include "vm/asm/assembler.hpp"

#include <bit>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "gc/heap/shape.hpp"
#include "vm/asm/parser.hpp"
#include "vm/bytecode/opcodes.hpp"

namespace gcvm::vm {

namespace {

// --- types -------------------------------------------------------------------

using TypeId = std::uint32_t;
enum class Kind { Int, Float, Null, Class, Array };
struct TypeNode {
  Kind kind;
  std::uint32_t cls = 0;  // Class
  TypeId elem = 0;        // Array
};
constexpr TypeId kInt = 0, kFloat = 1, kNull = 2;

class Types {
 public:
  Types() { nodes_ = {{Kind::Int}, {Kind::Float}, {Kind::Null}}; }
  TypeId class_type(std::uint32_t cls) { return intern({Kind::Class, cls, 0}); }
  TypeId array_of(TypeId elem) { return intern({Kind::Array, 0, elem}); }
  const TypeNode& node(TypeId t) const { return nodes_[t]; }
  bool is_ref(TypeId t) const { return nodes_[t].kind == Kind::Class || nodes_[t].kind == Kind::Array || t == kNull; }
  bool is_array(TypeId t) const { return nodes_[t].kind == Kind::Array; }
  bool is_class(TypeId t) const { return nodes_[t].kind == Kind::Class; }
  bool assignable(TypeId to, TypeId from) const { return to == from || (from == kNull && is_ref(to)); }
  std::string name(TypeId t, const std::vector<ClassInfo>& classes) const {
    std::string dims;  // iterative: a hostile program may nest arrays very deeply
    while (nodes_[t].kind == Kind::Array) {
      dims += "[]";
      t = nodes_[t].elem;
    }
    const TypeNode& n = nodes_[t];
    switch (n.kind) {
      case Kind::Int: return "int" + dims;
      case Kind::Float: return "float" + dims;
      case Kind::Null: return "null" + dims;
      case Kind::Class: return classes[n.cls].name + dims;
      case Kind::Array: break;
    }
    return "?";
  }

 private:
  TypeId intern(TypeNode n) {
    const std::uint64_t key = (std::uint64_t{static_cast<std::uint32_t>(n.kind)} << 60) |
                              (std::uint64_t{n.cls} << 30) | n.elem;
    if (auto it = index_.find(key); it != index_.end()) return it->second;
    nodes_.push_back(n);
    const auto id = static_cast<TypeId>(nodes_.size() - 1);
    index_.emplace(key, id);
    return id;
  }
  std::vector<TypeNode> nodes_;
  std::unordered_map<std::uint64_t, TypeId> index_;
};

// --- program-level symbols -----------------------------------------------------

struct FieldSym {
  TypeId type;
  bool is_ref;
  std::uint32_t module_index;  // into Module::fields
};
struct Signature {
  std::vector<TypeId> params;
  std::optional<TypeId> result;
  SourceLoc loc;
};

/// A resolved operand value: a frame slot holding it, and its type.
struct Value {
  std::uint32_t slot;
  TypeId type;
};
/// Where an instruction writes: a frame slot, and the global to copy it to after.
struct Dest {
  std::uint32_t slot;
  TypeId type;
  std::optional<std::uint32_t> global;
};

/// Unwinds out of one instruction after its error has been reported.
struct InstructionAbandoned {};

class Assembler {
 public:
  Assembler(std::string file, Diagnostics& diag) : file_(std::move(file)), diag_(diag) { module_.file = file_; }

  Module run(const ProgramAst& ast) {
    declare_classes(ast);
    declare_globals(ast);
    declare_functions(ast);
    for (std::uint32_t id = 0; id < function_decls_.size(); ++id) assemble_function(*function_decls_[id], id);
    return std::move(module_);
  }

 private:
  // --- declarations ---

  std::optional<TypeId> resolve(const TypeExpr& t) {
    TypeId base;
    if (t.base == "int") base = kInt;
    else if (t.base == "float") base = kFloat;
    else if (auto it = class_ids_.find(t.base); it != class_ids_.end()) base = types_.class_type(it->second);
    else {
      diag_.error(t.loc, "unknown type '" + t.base + "'");
      return std::nullopt;
    }
    for (std::uint32_t i = 0; i < t.dims; ++i) base = types_.array_of(base);
    return base;
  }
  std::string type_name(TypeId t) const { return types_.name(t, module_.classes); }

  void declare_classes(const ProgramAst& ast) {
    for (const ClassDecl& c : ast.classes) {
      if (auto it = class_locs_.find(c.name); it != class_locs_.end()) {
        diag_.error(c.loc, "class '" + c.name + "' is already defined at line " + std::to_string(it->second.line));
        continue;
      }
      if (c.name == "int" || c.name == "float" || c.name == "null") {
        diag_.error(c.loc, "'" + c.name + "' is a built-in name, not a class name");
        continue;
      }
      class_locs_[c.name] = c.loc;
      class_ids_[c.name] = static_cast<std::uint32_t>(module_.classes.size());
      module_.classes.push_back({c.name, {}, 0, 0, {}});
      class_decls_.push_back(&c);
    }
    fields_.resize(module_.classes.size());
    for (std::size_t ci = 0; ci < class_decls_.size(); ++ci) {
      ClassInfo& cls = module_.classes[ci];
      std::map<std::string, SourceLoc> seen;
      for (const Declaration& f : class_decls_[ci]->fields) {
        if (auto it = seen.find(f.name); it != seen.end()) {
          diag_.error(f.loc, "field '" + f.name + "' is already declared at line " + std::to_string(it->second.line));
          continue;
        }
        seen[f.name] = f.loc;
        const auto type = resolve(f.type);
        if (!type) continue;
        const bool is_ref = types_.is_ref(*type);
        const std::uint32_t index = is_ref ? cls.ref_fields++ : cls.scalar_fields++;
        fields_[ci][f.name] = {*type, is_ref, static_cast<std::uint32_t>(module_.fields.size())};
        module_.fields.push_back({static_cast<std::uint32_t>(ci), static_cast<std::uint32_t>(cls.fields.size())});
        cls.fields.push_back({f.name, f.type.text(), is_ref, index});
      }
      const std::uint64_t bytes = std::uint64_t{cls.ref_fields} * 4 + std::uint64_t{cls.scalar_fields} * 8;
      if (bytes > ShapeTable::kMaxObjectBytes)
        diag_.error(class_decls_[ci]->loc, "class '" + cls.name + "' needs " + std::to_string(bytes) +
                                               " bytes per object; at most " +
                                               std::to_string(ShapeTable::kMaxObjectBytes) +
                                               " fit a heap block (use an array)");
    }
  }

  void declare_globals(const ProgramAst& ast) {
    for (const Declaration& g : ast.globals) {
      if (auto it = global_ids_.find(g.name); it != global_ids_.end()) {
        diag_.error(g.loc, "global '" + g.name + "' is already declared at line " +
                               std::to_string(global_locs_[it->second].line));
        continue;
      }
      const auto type = resolve(g.type);
      if (!type) continue;
      global_ids_[g.name] = static_cast<std::uint32_t>(module_.globals.size());
      global_types_.push_back(*type);
      global_locs_.push_back(g.loc);
      module_.globals.push_back({g.name, g.type.text(), types_.is_ref(*type)});
    }
  }

  void declare_functions(const ProgramAst& ast) {
    for (const FunctionDecl& f : ast.functions) {
      if (auto it = function_ids_.find(f.name); it != function_ids_.end()) {
        diag_.error(f.loc, "function '" + f.name + "' is already defined at line " +
                               std::to_string(signatures_[it->second].loc.line));
        continue;
      }
      Signature sig;
      sig.loc = f.loc;
      for (const Declaration& p : f.params) sig.params.push_back(resolve(p.type).value_or(kInt));
      if (f.result) sig.result = resolve(*f.result).value_or(kInt);
      function_ids_[f.name] = static_cast<std::uint32_t>(module_.functions.size());
      signatures_.push_back(sig);
      FunctionInfo info;
      info.name = f.name;
      info.line = f.loc.line;
      info.param_count = static_cast<std::uint32_t>(f.params.size());
      info.returns_value = f.result.has_value();
      info.return_type = f.result ? f.result->text() : "";
      module_.functions.push_back(std::move(info));
      function_decls_.push_back(&f);
    }
    const auto main = function_ids_.find("main");
    if (main == function_ids_.end()) {
      if (diag_.empty()) diag_.error({1, 1}, "the program has no 'main' function");  // else main may be unparsable
      return;
    }
    module_.main_function = main->second;
    const Signature& sig = signatures_[main->second];
    if (!sig.params.empty()) diag_.error(sig.loc, "'main' takes no parameters (read arguments with 'arg')");
    if (sig.result && *sig.result != kInt) diag_.error(sig.loc, "'main' returns nothing or an int (the exit status)");
  }

  // --- function bodies ---

  void assemble_function(const FunctionDecl& decl, std::uint32_t id) {
    fn_ = &module_.functions[id];
    sig_ = &signatures_[id];
    locals_.clear();
    slot_types_.clear();
    labels_.clear();
    fixups_.clear();
    scalar_scratch_.clear();
    ref_scratch_.clear();
    last_is_transfer_ = false;  // the previous function's last instruction does not end this one
    std::map<std::string, SourceLoc> seen;
    auto add_slot = [&](const Declaration& d, TypeId type) {
      if (auto it = seen.find(d.name); it != seen.end()) {
        diag_.error(d.loc, "'" + d.name + "' is already declared at line " + std::to_string(it->second.line));
        return;
      }
      seen[d.name] = d.loc;
      locals_[d.name] = static_cast<std::uint32_t>(slot_types_.size());
      slot_types_.push_back(type);
      fn_->slots.push_back({d.name, d.type.text(), types_.is_ref(type)});
    };
    for (std::size_t i = 0; i < decl.params.size(); ++i) add_slot(decl.params[i], sig_->params[i]);
    if (slot_types_.size() != decl.params.size()) {  // keep parameter slots aligned with the signature
      fn_->slots.resize(decl.params.size());
      slot_types_.resize(decl.params.size(), kInt);
    }
    for (const Declaration& l : decl.locals) {
      if (const auto type = resolve(l.type)) add_slot(l, *type);
    }
    std::map<std::string, SourceLoc> label_first;
    for (const BodyItem& item : decl.body) {
      if (!item.is_label) continue;
      if (auto it = label_first.find(item.label); it != label_first.end())
        diag_.error(item.loc, "label '" + item.label + "' is already defined at line " + std::to_string(it->second.line));
      else
        label_first[item.label] = item.loc;
      labels_[item.label] = 0;
    }
    std::map<std::string, bool> placed;
    for (const BodyItem& item : decl.body) {
      if (item.is_label) {
        if (!placed[item.label]) {
          labels_[item.label] = static_cast<std::uint32_t>(fn_->code.size());
          placed[item.label] = true;
          last_is_transfer_ = false;
        }
        continue;
      }
      line_ = item.loc.line;
      scalar_used_ = ref_used_ = 0;
      try {
        instruction(item.instruction);
      } catch (const InstructionAbandoned&) {
      }
    }
    line_ = decl.end_loc.line != 0 ? decl.end_loc.line : decl.loc.line;
    if (!fn_->returns_value) emit(Op::RETV, {});
    else if (!last_is_transfer_) emit(Op::FALLOFF, {});
    for (const auto& [at, label, loc] : fixups_) {
      if (auto it = labels_.find(label); it != labels_.end()) fn_->code[at] = it->second;
      else diag_.error(loc, "unknown label '" + label + "'");
    }
    fn_->frame_size = static_cast<std::uint32_t>(fn_->slots.size());
    for (std::uint32_t s = 0; s < fn_->frame_size; ++s)
      if (fn_->slots[s].is_ref) fn_->ref_slots.push_back(s);
  }

  [[noreturn]] void fail(SourceLoc loc, const std::string& message) {
    diag_.error(loc, message);
    throw InstructionAbandoned{};
  }

  void emit(Op op, std::initializer_list<std::uint32_t> operands) {
    fn_->code.push_back(static_cast<std::uint32_t>(op));
    fn_->lines.push_back(line_);
    for (std::uint32_t w : operands) {
      fn_->code.push_back(w);
      fn_->lines.push_back(line_);
    }
    last_is_transfer_ = op == Op::JMP || op == Op::RET || op == Op::RETV || op == Op::EXIT;
  }
  /// The operand word of the jump target most recently emitted gets `label`.
  void fix_jump(const Operand& label) {
    if (label.kind != Operand::Kind::Name) fail(label.loc, "expected a label");
    fixups_.push_back({static_cast<std::uint32_t>(fn_->code.size() - 1), label.name, label.loc});
  }

  std::uint32_t scratch(bool is_ref) {
    auto& pool = is_ref ? ref_scratch_ : scalar_scratch_;
    std::uint32_t& used = is_ref ? ref_used_ : scalar_used_;
    if (used == pool.size()) {
      pool.push_back(static_cast<std::uint32_t>(fn_->slots.size()));
      fn_->slots.push_back({"%" + std::string(is_ref ? "r" : "t") + std::to_string(used), is_ref ? "ref" : "scalar", is_ref});
      slot_types_.push_back(is_ref ? kNull : kInt);
    }
    return pool[used++];
  }
  std::uint32_t constant(std::uint64_t bits) {
    if (auto it = constant_ids_.find(bits); it != constant_ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(module_.constants.size());
    module_.constants.push_back(bits);
    constant_ids_.emplace(bits, id);
    return id;
  }
  static bool fits_i32(std::int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }
  void load_int(std::uint32_t slot, std::int64_t v) {
    if (fits_i32(v)) emit(Op::LOADI, {slot, static_cast<std::uint32_t>(static_cast<std::int32_t>(v))});
    else emit(Op::LOADK, {slot, constant(static_cast<std::uint64_t>(v))});
  }

  std::string describe(const Operand& op) const {
    switch (op.kind) {
      case Operand::Kind::Int: return "integer literal";
      case Operand::Kind::Float: return "float literal";
      case Operand::Kind::Null: return "null";
      case Operand::Kind::String: return "string literal";
      case Operand::Kind::Field: return "field access '" + op.name + "." + op.member + "'";
      case Operand::Kind::Element: return "element access '" + op.name + "[...]'";
      case Operand::Kind::Call: return "call '" + op.name + "(...)'";
      case Operand::Kind::Name: return "'" + op.name + "'";
    }
    return "operand";
  }

  /// The type an operand has, without emitting code (literals: their literal type).
  TypeId type_of_name(const Operand& op) {
    if (auto it = locals_.find(op.name); it != locals_.end()) return slot_types_[it->second];
    if (auto it = global_ids_.find(op.name); it != global_ids_.end()) return global_types_[it->second];
    if (labels_.contains(op.name)) fail(op.loc, "'" + op.name + "' is a label, not a value");
    if (function_ids_.contains(op.name)) fail(op.loc, "'" + op.name + "' is a function, not a value");
    fail(op.loc, "unknown name '" + op.name + "'");
  }

  /// A value in a slot. `want` steers literals: an integer literal becomes a float
  /// where a float is wanted. The result's type is checked by the caller.
  Value source(const Operand& op, std::optional<TypeId> want = std::nullopt) {
    switch (op.kind) {
      case Operand::Kind::Name: {
        if (auto it = locals_.find(op.name); it != locals_.end()) return {it->second, slot_types_[it->second]};
        const TypeId type = type_of_name(op);
        const std::uint32_t slot = scratch(types_.is_ref(type));
        emit(Op::GGET, {slot, global_ids_.at(op.name)});
        return {slot, type};
      }
      case Operand::Kind::Int: {
        const std::uint32_t slot = scratch(false);
        if (want == kFloat) {
          emit(Op::LOADK, {slot, constant(std::bit_cast<std::uint64_t>(static_cast<double>(op.int_value)))});
          return {slot, kFloat};
        }
        load_int(slot, op.int_value);
        return {slot, kInt};
      }
      case Operand::Kind::Float: {
        const std::uint32_t slot = scratch(false);
        emit(Op::LOADK, {slot, constant(std::bit_cast<std::uint64_t>(op.float_value))});
        return {slot, kFloat};
      }
      case Operand::Kind::Null: {
        const std::uint32_t slot = scratch(true);
        emit(Op::LOADNULL, {slot});
        return {slot, kNull};
      }
      default: fail(op.loc, "expected a name or a literal, found " + describe(op));
    }
  }
  Value typed_source(const Operand& op, TypeId want, const std::string& role) {
    const Value v = source(op, want);
    if (!types_.assignable(want, v.type))
      fail(op.loc, role + " must be " + type_name(want) + ", found " + describe(op) + " of type " + type_name(v.type));
    return v;
  }
  Dest dest(const Operand& op) {
    if (op.kind != Operand::Kind::Name) fail(op.loc, "expected a local or global to write, found " + describe(op));
    if (auto it = locals_.find(op.name); it != locals_.end()) return {it->second, slot_types_[it->second], std::nullopt};
    const TypeId type = type_of_name(op);
    return {scratch(types_.is_ref(type)), type, global_ids_.at(op.name)};
  }
  void finish(const Dest& d) {
    if (d.global) emit(Op::GPUT, {*d.global, d.slot});
  }
  void require_dest_type(const Operand& op, const Dest& d, TypeId want) {
    if (d.type != want)
      fail(op.loc, "destination '" + op.name + "' is " + type_name(d.type) + ", the result is " + type_name(want));
  }
  void arity(const Instruction& in, std::size_t n, const char* form) {
    if (in.operands.size() != n)
      fail(in.loc, "'" + in.mnemonic + "' takes " + std::to_string(n) + " operand" + (n == 1 ? "" : "s") + " (" +
                       form + "), found " + std::to_string(in.operands.size()));
  }

  // --- instructions ---

  struct Arith {
    Op ll, li;
    Op fl;  // float form, or NOP when ints only
  };
  struct Compare {
    Op ll, li, fl;  // value-producing compare
    Op bll, bli, bfl;  // compare and branch
    bool refs;  // eq / ne also compare references
  };

  void instruction(const Instruction& in) {
    static const std::map<std::string, Arith, std::less<>> arith = {
        {"add", {Op::ADD, Op::ADD_LI, Op::FADD}}, {"sub", {Op::SUB, Op::SUB_LI, Op::FSUB}},
        {"mul", {Op::MUL, Op::MUL_LI, Op::FMUL}}, {"div", {Op::DIV, Op::DIV_LI, Op::FDIV}},
        {"rem", {Op::REM, Op::REM_LI, Op::NOP}},  {"and", {Op::AND, Op::AND_LI, Op::NOP}},
        {"or", {Op::OR, Op::OR_LI, Op::NOP}},     {"xor", {Op::XOR, Op::XOR_LI, Op::NOP}},
        {"shl", {Op::SHL, Op::SHL_LI, Op::NOP}},  {"shr", {Op::SHR, Op::SHR_LI, Op::NOP}},
    };
    static const std::map<std::string, Compare, std::less<>> compare = {
        {"lt", {Op::LT, Op::LT_LI, Op::FLT, Op::BLT, Op::BLT_LI, Op::FBLT, false}},
        {"le", {Op::LE, Op::LE_LI, Op::FLE, Op::BLE, Op::BLE_LI, Op::FBLE, false}},
        {"gt", {Op::GT, Op::GT_LI, Op::FGT, Op::BGT, Op::BGT_LI, Op::FBGT, false}},
        {"ge", {Op::GE, Op::GE_LI, Op::FGE, Op::BGE, Op::BGE_LI, Op::FBGE, false}},
        {"eq", {Op::EQ, Op::EQ_LI, Op::FEQ, Op::BEQ, Op::BEQ_LI, Op::FBEQ, true}},
        {"ne", {Op::NE, Op::NE_LI, Op::FNE, Op::BNE, Op::BNE_LI, Op::FBNE, true}},
    };
    const std::string& m = in.mnemonic;
    if (auto it = arith.find(m); it != arith.end()) return arithmetic(in, it->second);
    if (auto it = compare.find(m); it != compare.end()) return comparison(in, it->second);
    if (m.size() > 1 && m[0] == 'b') {
      if (auto it = compare.find(std::string_view(m).substr(1)); it != compare.end()) return branch(in, it->second);
    }
    if (m == "mov") return mov(in);
    if (m == "neg" || m == "not") return unary(in);
    if (m == "itof" || m == "ftoi") return convert(in);
    if (m == "jmp") {
      arity(in, 1, "label");
      emit(Op::JMP, {0});
      return fix_jump(in.operands[0]);
    }
    if (m == "bz" || m == "bnz") {
      arity(in, 2, "value, label");
      const Value v = typed_source(in.operands[0], kInt, "the tested value");
      emit(m == "bz" ? Op::BZ : Op::BNZ, {v.slot, 0});
      return fix_jump(in.operands[1]);
    }
    if (m == "call") return call(in);
    if (m == "ret") return ret(in);
    if (m == "new") return new_object(in);
    if (m == "newarray") return new_array(in);
    if (m == "get") return get(in);
    if (m == "put") return put(in);
    if (m == "len") {
      arity(in, 2, "destination, array");
      const Dest d = dest(in.operands[0]);
      const Value a = source(in.operands[1]);
      if (!types_.is_array(a.type)) fail(in.operands[1].loc, describe(in.operands[1]) + " is " + type_name(a.type) + ", not an array");
      require_dest_type(in.operands[0], d, kInt);
      emit(Op::ALEN, {d.slot, a.slot});
      return finish(d);
    }
    if (m == "print") return print(in);
    if (m == "gc") {
      arity(in, 0, "no operands");
      return emit(Op::GC, {});
    }
    if (m == "argc") {
      arity(in, 1, "destination");
      const Dest d = dest(in.operands[0]);
      require_dest_type(in.operands[0], d, kInt);
      emit(Op::ARGC, {d.slot});
      return finish(d);
    }
    if (m == "arg") {
      arity(in, 2, "destination, index");
      const Dest d = dest(in.operands[0]);
      const Value i = typed_source(in.operands[1], kInt, "the argument index");
      require_dest_type(in.operands[0], d, kInt);
      emit(Op::ARG, {d.slot, i.slot});
      return finish(d);
    }
    if (m == "exit") {
      arity(in, 1, "status");
      const Value v = typed_source(in.operands[0], kInt, "the exit status");
      return emit(Op::EXIT, {v.slot});
    }
    fail(in.loc, "unknown instruction '" + m + "'");
  }

  void mov(const Instruction& in) {
    arity(in, 2, "destination, source");
    const Dest d = dest(in.operands[0]);
    const Operand& s = in.operands[1];
    const bool direct = !d.global;
    if (direct && s.kind == Operand::Kind::Int && d.type == kInt) load_int(d.slot, s.int_value);
    else if (direct && (s.kind == Operand::Kind::Int || s.kind == Operand::Kind::Float) && d.type == kFloat)
      emit(Op::LOADK, {d.slot, constant(std::bit_cast<std::uint64_t>(s.kind == Operand::Kind::Int ? static_cast<double>(s.int_value) : s.float_value))});
    else if (direct && s.kind == Operand::Kind::Null && types_.is_ref(d.type)) emit(Op::LOADNULL, {d.slot});
    else if (direct && s.kind == Operand::Kind::Name && !locals_.contains(s.name) && global_ids_.contains(s.name)) {
      const TypeId t = global_types_[global_ids_.at(s.name)];
      if (!types_.assignable(d.type, t))
        fail(s.loc, "cannot move " + describe(s) + " of type " + type_name(t) + " to '" + in.operands[0].name + "' of type " + type_name(d.type));
      emit(Op::GGET, {d.slot, global_ids_.at(s.name)});
    } else {
      const Value v = source(s, d.type);
      if (!types_.assignable(d.type, v.type))
        fail(s.loc, "cannot move " + describe(s) + " of type " + type_name(v.type) + " to '" + in.operands[0].name + "' of type " + type_name(d.type));
      if (d.global) return emit(Op::GPUT, {*d.global, v.slot});
      if (v.slot != d.slot) emit(Op::MOV, {d.slot, v.slot});
      return;
    }
    finish(d);
  }

  void arithmetic(const Instruction& in, const Arith& ops) {
    arity(in, 3, "destination, left, right");
    const Dest d = dest(in.operands[0]);
    if (d.type != kInt && (d.type != kFloat || ops.fl == Op::NOP))
      fail(in.operands[0].loc, "'" + in.mnemonic + "' computes " + (ops.fl == Op::NOP ? "int" : "int or float") +
                                   " values; destination '" + in.operands[0].name + "' is " + type_name(d.type));
    const Value a = typed_source(in.operands[0 + 1], d.type, "the left operand");
    const Operand& right = in.operands[2];
    if (d.type == kInt && right.kind == Operand::Kind::Int && fits_i32(right.int_value)) {
      emit(ops.li, {d.slot, a.slot, static_cast<std::uint32_t>(static_cast<std::int32_t>(right.int_value))});
    } else {
      const Value b = typed_source(right, d.type, "the right operand");
      emit(d.type == kInt ? ops.ll : ops.fl, {d.slot, a.slot, b.slot});
    }
    finish(d);
  }

  /// Operand types of a comparison: both int, both float, or (eq/ne) both references.
  TypeId comparison_type(const Instruction& in, const Operand& a, const Operand& b, bool refs) {
    auto literal_type = [&](const Operand& o) -> std::optional<TypeId> {
      if (o.kind == Operand::Kind::Int) return kInt;
      if (o.kind == Operand::Kind::Float) return kFloat;
      if (o.kind == Operand::Kind::Null) return kNull;
      if (o.kind == Operand::Kind::Name) return type_of_name(o);
      fail(o.loc, "expected a name or a literal, found " + describe(o));
    };
    TypeId ta = *literal_type(a), tb = *literal_type(b);
    if ((ta == kInt && tb == kFloat && a.kind == Operand::Kind::Int) ) ta = kFloat;
    if ((tb == kInt && ta == kFloat && b.kind == Operand::Kind::Int)) tb = kFloat;
    if (ta == tb && (ta == kInt || ta == kFloat)) return ta;
    if (refs && types_.is_ref(ta) && types_.is_ref(tb) && (ta == tb || ta == kNull || tb == kNull)) {
      if (ta == kNull && tb == kNull) fail(a.loc, "comparing null with null");
      return ta == kNull ? tb : ta;
    }
    fail(in.loc, "'" + in.mnemonic + "' cannot compare " + type_name(ta) + " with " + type_name(tb));
  }

  void comparison(const Instruction& in, const Compare& ops) {
    arity(in, 3, "destination, left, right");
    const Dest d = dest(in.operands[0]);
    require_dest_type(in.operands[0], d, kInt);
    const TypeId t = comparison_type(in, in.operands[1], in.operands[2], ops.refs);
    const Value a = source(in.operands[1], t);
    const Operand& right = in.operands[2];
    if (t == kInt && right.kind == Operand::Kind::Int && fits_i32(right.int_value)) {
      emit(ops.li, {d.slot, a.slot, static_cast<std::uint32_t>(static_cast<std::int32_t>(right.int_value))});
    } else {
      const Value b = source(right, t);
      emit(t == kFloat ? ops.fl : ops.ll, {d.slot, a.slot, b.slot});
    }
    finish(d);
  }

  void branch(const Instruction& in, const Compare& ops) {
    arity(in, 3, "left, right, label");
    const Operand& left = in.operands[0];
    const Operand& right = in.operands[1];
    const TypeId t = comparison_type(in, left, right, ops.refs);
    if (types_.is_ref(t) && (left.kind == Operand::Kind::Null || right.kind == Operand::Kind::Null)) {
      const Value v = source(left.kind == Operand::Kind::Null ? right : left);
      emit(ops.ll == Op::EQ ? Op::BNULL : Op::BNONNULL, {v.slot, 0});
    } else {
      const Value a = source(left, t);
      if (t == kInt && right.kind == Operand::Kind::Int && fits_i32(right.int_value)) {
        emit(ops.bli, {a.slot, static_cast<std::uint32_t>(static_cast<std::int32_t>(right.int_value)), 0});
      } else {
        const Value b = source(right, t);
        emit(t == kFloat ? ops.bfl : ops.bll, {a.slot, b.slot, 0});
      }
    }
    fix_jump(in.operands[2]);
  }

  void unary(const Instruction& in) {
    arity(in, 2, "destination, source");
    const Dest d = dest(in.operands[0]);
    const bool is_not = in.mnemonic == "not";
    if (d.type != kInt && (is_not || d.type != kFloat))
      fail(in.operands[0].loc, "'" + in.mnemonic + "' computes " + (is_not ? "int" : "int or float") + " values; destination '" +
                                   in.operands[0].name + "' is " + type_name(d.type));
    const Value s = typed_source(in.operands[1], d.type, "the operand");
    emit(is_not ? Op::NOT : d.type == kInt ? Op::NEG : Op::FNEG, {d.slot, s.slot});
    finish(d);
  }

  void convert(const Instruction& in) {
    arity(in, 2, "destination, source");
    const bool to_float = in.mnemonic == "itof";
    const Dest d = dest(in.operands[0]);
    require_dest_type(in.operands[0], d, to_float ? kFloat : kInt);
    const Value s = typed_source(in.operands[1], to_float ? kInt : kFloat, "the operand");
    emit(to_float ? Op::ITOF : Op::FTOI, {d.slot, s.slot});
    finish(d);
  }

  void call(const Instruction& in) {
    if (in.operands.empty() || in.operands.size() > 2 || in.operands.back().kind != Operand::Kind::Call)
      fail(in.loc, "'call' takes 'f(args)' or 'destination, f(args)'");
    const Operand& target = in.operands.back();
    const auto it = function_ids_.find(target.name);
    if (it == function_ids_.end()) fail(target.loc, "unknown function '" + target.name + "'");
    const Signature& sig = signatures_[it->second];
    if (target.args.size() != sig.params.size())
      fail(target.loc, "'" + target.name + "' takes " + std::to_string(sig.params.size()) + " argument" +
                           (sig.params.size() == 1 ? "" : "s") + ", found " + std::to_string(target.args.size()));
    std::optional<Dest> d;
    if (in.operands.size() == 2) {
      d = dest(in.operands[0]);
      if (!sig.result) fail(in.operands[0].loc, "'" + target.name + "' returns no value");
      if (!types_.assignable(d->type, *sig.result))
        fail(in.operands[0].loc, "'" + target.name + "' returns " + type_name(*sig.result) + ", destination '" +
                                     in.operands[0].name + "' is " + type_name(d->type));
    }
    std::vector<std::uint32_t> args;
    for (std::size_t i = 0; i < target.args.size(); ++i)
      args.push_back(typed_source(target.args[i], sig.params[i], "argument " + std::to_string(i + 1) + " of '" + target.name + "'").slot);
    emit(Op::CALL, {it->second, d ? d->slot : kNoSlot, static_cast<std::uint32_t>(args.size())});
    for (std::uint32_t a : args) {
      fn_->code.push_back(a);
      fn_->lines.push_back(line_);
    }
    if (d) finish(*d);
  }

  void ret(const Instruction& in) {
    if (!sig_->result) {
      if (!in.operands.empty()) fail(in.operands[0].loc, "function '" + fn_->name + "' returns no value");
      return emit(Op::RETV, {});
    }
    if (in.operands.size() != 1)
      fail(in.loc, "function '" + fn_->name + "' returns " + type_name(*sig_->result) + "; 'ret' needs one operand");
    const Value v = typed_source(in.operands[0], *sig_->result, "the returned value");
    emit(Op::RET, {v.slot});
  }

  void new_object(const Instruction& in) {
    arity(in, 1, "destination");
    const Dest d = dest(in.operands[0]);
    if (!types_.is_class(d.type))
      fail(in.operands[0].loc, "'new' needs a destination of a class type; '" + in.operands[0].name + "' is " + type_name(d.type));
    emit(Op::NEW, {d.slot, types_.node(d.type).cls});
    finish(d);
  }

  void new_array(const Instruction& in) {
    arity(in, 2, "destination, length");
    const Dest d = dest(in.operands[0]);
    if (!types_.is_array(d.type))
      fail(in.operands[0].loc, "'newarray' needs a destination of an array type; '" + in.operands[0].name + "' is " + type_name(d.type));
    const Value n = typed_source(in.operands[1], kInt, "the length");
    emit(types_.is_ref(types_.node(d.type).elem) ? Op::NEWRA : Op::NEWSA, {d.slot, n.slot});
    finish(d);
  }

  /// The object and field of `x.f`.
  std::pair<Value, FieldSym> field(const Operand& op) {
    Operand base = op;
    base.kind = Operand::Kind::Name;
    const Value obj = source(base);
    if (!types_.is_class(obj.type))
      fail(op.loc, "'" + op.name + "' is " + type_name(obj.type) + ", not an object with fields");
    const std::uint32_t cls = types_.node(obj.type).cls;
    const auto it = fields_[cls].find(op.member);
    if (it == fields_[cls].end()) fail(op.loc, "class '" + module_.classes[cls].name + "' has no field '" + op.member + "'");
    return {obj, it->second};
  }
  /// The array and index of `a[i]`, and the element type.
  std::tuple<Value, Value, TypeId> element(const Operand& op) {
    Operand base = op;
    base.kind = Operand::Kind::Name;
    const Value arr = source(base);
    if (!types_.is_array(arr.type)) fail(op.loc, "'" + op.name + "' is " + type_name(arr.type) + ", not an array");
    const Value index = typed_source(op.args[0], kInt, "the index");
    return {arr, index, types_.node(arr.type).elem};
  }

  void get(const Instruction& in) {
    arity(in, 2, "destination, x.field or a[index]");
    const Dest d = dest(in.operands[0]);
    const Operand& from = in.operands[1];
    TypeId type;
    if (from.kind == Operand::Kind::Field) {
      const auto [obj, f] = field(from);
      type = f.type;
      if (d.type != type) fail(in.operands[0].loc, "field '" + from.member + "' is " + type_name(type) + ", destination '" + in.operands[0].name + "' is " + type_name(d.type));
      emit(f.is_ref ? Op::GETR : Op::GETS, {d.slot, obj.slot, f.module_index});
    } else if (from.kind == Operand::Kind::Element) {
      const auto [arr, index, elem] = element(from);
      if (d.type != elem) fail(in.operands[0].loc, "elements of '" + from.name + "' are " + type_name(elem) + ", destination '" + in.operands[0].name + "' is " + type_name(d.type));
      emit(types_.is_ref(elem) ? Op::AGETR : Op::AGETS, {d.slot, arr.slot, index.slot});
    } else {
      fail(from.loc, "'get' reads x.field or a[index], found " + describe(from));
    }
    finish(d);
  }

  void put(const Instruction& in) {
    arity(in, 2, "x.field or a[index], value");
    const Operand& to = in.operands[0];
    if (to.kind == Operand::Kind::Field) {
      const auto [obj, f] = field(to);
      const Value v = typed_source(in.operands[1], f.type, "the value stored in '" + to.member + "'");
      emit(f.is_ref ? Op::PUTR : Op::PUTS, {obj.slot, f.module_index, v.slot});
    } else if (to.kind == Operand::Kind::Element) {
      const auto [arr, index, elem] = element(to);
      const Value v = typed_source(in.operands[1], elem, "the value stored in '" + to.name + "'");
      emit(types_.is_ref(elem) ? Op::APUTR : Op::APUTS, {arr.slot, index.slot, v.slot});
    } else {
      fail(to.loc, "'put' writes x.field or a[index], found " + describe(to));
    }
  }

  void print(const Instruction& in) {
    if (in.operands.empty()) fail(in.loc, "'print' takes one or more operands");
    for (const Operand& op : in.operands) {
      scalar_used_ = ref_used_ = 0;
      if (op.kind == Operand::Kind::String) {
        const auto it = string_ids_.find(op.name);
        std::uint32_t id;
        if (it != string_ids_.end()) {
          id = it->second;
        } else {
          id = static_cast<std::uint32_t>(module_.strings.size());
          module_.strings.push_back(op.name);
          string_ids_.emplace(op.name, id);
        }
        emit(Op::PRINTS, {id});
        continue;
      }
      const Value v = source(op);
      if (v.type != kInt && v.type != kFloat) fail(op.loc, "cannot print " + describe(op) + " of type " + type_name(v.type));
      emit(v.type == kInt ? Op::PRINTI : Op::PRINTF, {v.slot});
    }
  }

  std::string file_;
  Diagnostics& diag_;
  Module module_;
  Types types_;
  std::map<std::string, std::uint32_t> class_ids_;
  std::map<std::string, SourceLoc> class_locs_;
  std::vector<const ClassDecl*> class_decls_;
  std::vector<std::map<std::string, FieldSym>> fields_;
  std::map<std::string, std::uint32_t> global_ids_;
  std::vector<TypeId> global_types_;
  std::vector<SourceLoc> global_locs_;
  std::map<std::string, std::uint32_t> function_ids_;
  std::vector<Signature> signatures_;
  std::vector<const FunctionDecl*> function_decls_;
  std::unordered_map<std::uint64_t, std::uint32_t> constant_ids_;
  std::map<std::string, std::uint32_t> string_ids_;

  // per function
  FunctionInfo* fn_ = nullptr;
  const Signature* sig_ = nullptr;
  std::map<std::string, std::uint32_t> locals_;
  std::vector<TypeId> slot_types_;
  std::map<std::string, std::uint32_t> labels_;
  struct Fixup {
    std::uint32_t at;
    std::string label;
    SourceLoc loc;
  };
  std::vector<Fixup> fixups_;
  std::vector<std::uint32_t> scalar_scratch_, ref_scratch_;
  std::uint32_t scalar_used_ = 0, ref_used_ = 0;
  std::uint32_t line_ = 0;
  bool last_is_transfer_ = false;
};

}  // namespace

Module assemble(std::string_view source, const std::string& file) {
  Diagnostics diag(file);
  const std::vector<Token> tokens = lex(source, diag);
  const ProgramAst ast = parse(tokens, diag);
  Module module = Assembler(file, diag).run(ast);
  diag.throw_if_any();
  return module;
}

Module assemble_file(const std::string& path) {
  constexpr std::uintmax_t kMaxProgramBytes = std::uintmax_t{64} << 20;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(path + ": no such program file");
  if (std::filesystem::file_size(path, ec) > kMaxProgramBytes)
    throw InputError(path + ": program file is larger than 64 MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the program file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read the program file");
  return assemble(text.str(), path);
}

}  // namespace gcvm::vm
