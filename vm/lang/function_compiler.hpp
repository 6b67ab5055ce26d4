// The compiler of one Tern function body (codegen.cpp, codegen_calls.cpp): shared by
// the two files that implement it, private to them.
//
// Slots: parameters first (a method's `this`, a lambda's closure object are slot 0),
// then one slot per local variable, then temporaries. Temporaries are reused from one
// statement to the next; a slot is either a reference or a scalar for the whole
// function (the stack map, FunctionInfo::ref_slots). Expression results land in the
// destination the caller asks for when a single final instruction computes them.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "vm/bytecode/opcodes.hpp"
#include "vm/lang/program.hpp"

namespace gcvm::vm::tern::codegen {

using K = Type::K;

/// The target words of forward jumps still to be patched.
using Jumps = std::vector<std::uint32_t>;

struct Value {
  std::uint32_t slot = kNoSlot;
  Type type;
};

/// Where a variable lives: a slot (its value, or its box), or a field of the closure.
struct Local {
  Type type;
  std::uint32_t slot = kNoSlot;   // the value, or the box when boxed
  bool boxed = false;
  const FieldSym* capture = nullptr;  // lambdas: the closure field holding it (or its box)
};

inline bool fits_i32(std::int64_t v) {
  return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

class FunctionCompiler {
 public:
  FunctionCompiler(Program& p, FuncDecl& f, std::uint32_t index, ClassSym* this_class, const Type& this_type,
                   const Type& result, const PendingLambda* lambda)
      : p_(p), f_(f), function_(index), this_class_(this_class), this_type_(this_type), result_(result),
        lambda_(lambda) {}

  void run(const std::vector<Type>& params) {
    line_ = f_.loc.line;
    if (lambda_ != nullptr) {
      new_slot("$closure", Type{K::Class, lambda_->cls, 0, {}});
    } else if (this_class_ != nullptr) {
      this_slot_ = new_slot("this", this_type_);
    }
    for (std::size_t i = 0; i < f_.params.size(); ++i) {
      Local l;
      l.type = params[i];
      l.slot = new_slot(f_.params[i].var->name, params[i]);
      locals_[f_.params[i].var.get()] = l;
    }
    fn().param_count = static_cast<std::uint32_t>(fn().slots.size());
    if (lambda_ != nullptr) {
      for (const FieldSym& fs : lambda_->cls->fields) {
        if (fs.name == "$this") {
          this_slot_ = new_slot("this", lambda_->this_type);
          emit(Op::GETR, {this_slot_, 0, p_.field_ref(*lambda_->cls, fs)});
        }
      }
      for (std::size_t i = 0; i < f_.captures.size(); ++i) {
        Var* v = f_.captures[i];
        const FieldSym* fs = lambda_->cls->field(v->name + "$" + std::to_string(i));
        Local l;
        const auto t = lambda_->captured.find(v);
        l.type = t == lambda_->captured.end() ? Type{} : t->second;
        l.boxed = v->boxed();
        l.capture = fs;
        locals_[v] = l;
      }
    }
    for (std::size_t i = 0; i < f_.params.size(); ++i) {  // boxed parameters move into their box
      Var* v = f_.params[i].var.get();
      if (!v->boxed()) continue;
      Local& l = locals_[v];
      const std::uint32_t value = l.slot;
      l.slot = new_slot(v->name + "$box", Type::of(K::Object));
      l.boxed = true;
      make_box(l.slot, value, l.type);
    }
    if (fn().name == "main") emit_global_initializers();
    statements(f_.body);
    if (result_.k == K::Void) emit(Op::RETV, {});
    else emit(Op::FALLOFF, {});
    for (std::uint32_t s = 0; s < fn().slots.size(); ++s)
      if (fn().slots[s].is_ref) fn().ref_slots.push_back(s);
    fn().frame_size = static_cast<std::uint32_t>(fn().slots.size());
  }

 private:
  /// The function being compiled, looked up on each use: compiling a lambda adds a
  /// function to the Module, which may move the others.
  FunctionInfo& fn() { return p_.module.functions[function_]; }
  const FunctionInfo& fn() const { return p_.module.functions[function_]; }

  // --- emission ---
  void emit(Op op, std::initializer_list<std::uint32_t> operands) {
    fn().code.push_back(static_cast<std::uint32_t>(op));
    fn().lines.push_back(line_);
    for (std::uint32_t w : operands) {
      fn().code.push_back(w);
      fn().lines.push_back(line_);
    }
  }
  std::uint32_t here() const { return static_cast<std::uint32_t>(fn().code.size()); }
  /// Emits a jump-like op whose last operand is a target patched later; returns its word.
  std::uint32_t emit_jump(Op op, std::initializer_list<std::uint32_t> operands) {
    emit(op, operands);
    fn().code.push_back(0);
    fn().lines.push_back(line_);
    return here() - 1;
  }
  void patch(std::uint32_t at, std::uint32_t target) { fn().code[at] = target; }
  void patch(const Jumps& at, std::uint32_t target) {
    for (std::uint32_t a : at) patch(a, target);
  }
  void emit_call(Op op, std::uint32_t callee, std::uint32_t dest, const std::vector<std::uint32_t>& args) {
    fn().code.push_back(static_cast<std::uint32_t>(op));
    for (std::uint32_t w : {callee, dest, static_cast<std::uint32_t>(args.size())}) fn().code.push_back(w);
    for (std::uint32_t a : args) fn().code.push_back(a);
    fn().lines.resize(fn().code.size(), line_);
  }

  // --- slots ---
  std::uint32_t new_slot(const std::string& name, const Type& t) {
    fn().slots.push_back(SlotInfo{name, type_name(t), t.is_ref()});
    return static_cast<std::uint32_t>(fn().slots.size() - 1);
  }
  std::uint32_t temp(bool is_ref) {
    auto& free = is_ref ? free_refs_ : free_scalars_;
    std::uint32_t s;
    if (!free.empty()) {
      s = free.back();
      free.pop_back();
    } else {
      s = static_cast<std::uint32_t>(fn().slots.size());
      fn().slots.push_back(SlotInfo{(is_ref ? "%r" : "%t") + std::to_string(s), is_ref ? "ref" : "scalar", is_ref});
    }
    live_temps_.push_back(s);
    return s;
  }
  std::uint32_t temp_for(const Type& t) { return temp(t.is_ref()); }
  void release_temps(std::size_t mark) {
    while (live_temps_.size() > mark) {
      const std::uint32_t s = live_temps_.back();
      live_temps_.pop_back();
      (fn().slots[s].is_ref ? free_refs_ : free_scalars_).push_back(s);
    }
  }
  std::uint32_t target(std::uint32_t dest, const Type& t) { return dest != kNoSlot ? dest : temp_for(t); }

  void error(SourceLoc loc, const std::string& message) { p_.diag.error(loc, message); }
  Value bad() { return Value{kNoSlot, Type::of(K::Error)}; }
  bool expect(const Expr& e, const Type& got, const Type& want, const std::string& what) {
    if (assignable(got, want)) return true;
    // A value of a bounded type parameter converts to its bound.
    if (got.k == K::Param && this_class_ != nullptr && got.param < this_class_->bounds.size() &&
        !this_class_->bounds[got.param].is_error() && assignable(this_class_->bounds[got.param], want))
      return true;
    error(e.loc, what + ": expected " + type_name(want) + ", found " + type_name(got));
    return false;
  }

  // --- boxes and variables ---
  void make_box(std::uint32_t box_slot, std::uint32_t value, const Type& t) {
    ClassSym* box = t.is_ref() ? p_.box_ref : p_.box_scalar;
    emit(Op::NEW, {box_slot, box->index});
    if (value != kNoSlot) emit(t.is_ref() ? Op::PUTR : Op::PUTS, {box_slot, p_.field_ref(*box, box->fields[0]), value});
  }
  std::uint32_t box_field(const Type& t) {
    ClassSym* box = t.is_ref() ? p_.box_ref : p_.box_scalar;
    return p_.field_ref(*box, box->fields[0]);
  }
  /// The slot holding a local's box (loading it from the closure when captured).
  std::uint32_t box_of(const Local& l) {
    if (l.capture == nullptr) return l.slot;
    const std::uint32_t b = temp(true);
    emit(Op::GETR, {b, 0, p_.field_ref(*lambda_->cls, *l.capture)});
    return b;
  }
  Value read_local(const Local& l, std::uint32_t dest) {
    if (!l.boxed && l.capture == nullptr) return Value{l.slot, l.type};
    const std::uint32_t d = target(dest, l.type);
    if (l.boxed) {
      const std::uint32_t b = box_of(l);
      emit(l.type.is_ref() ? Op::GETR : Op::GETS, {d, b, box_field(l.type)});
    } else {
      emit(l.type.is_ref() ? Op::GETR : Op::GETS, {d, 0, p_.field_ref(*lambda_->cls, *l.capture)});
    }
    return Value{d, l.type};
  }
  void write_local(const Local& l, std::uint32_t value) {
    if (l.boxed) {
      const std::uint32_t b = box_of(l);
      emit(l.type.is_ref() ? Op::PUTR : Op::PUTS, {b, box_field(l.type), value});
    } else if (value != l.slot) {
      emit(Op::MOV, {l.slot, value});
    }
  }

  // --- statements ---
  void statements(std::vector<StmtPtr>& list) {
    for (StmtPtr& s : list) statement(*s);
  }
  /// The jumps of a loop body's `break`s and `continue`s, for the loop to patch.
  struct LoopExits {
    Jumps breaks, continues;
  };
  LoopExits loop_body(std::vector<StmtPtr>& body) {
    loops_.emplace_back();
    statements(body);
    LoopExits exits = std::move(loops_.back());
    loops_.pop_back();
    return exits;
  }
  void statement(Stmt& s) {
    line_ = s.loc.line;
    const std::size_t mark = live_temps_.size();
    switch (s.kind) {
      case StmtKind::VarDecl: var_decl(s); break;
      case StmtKind::Assign: assign(s); break;
      case StmtKind::Expression: {
        const ExprKind k = s.value->kind;
        if (k != ExprKind::Call && k != ExprKind::MethodCall && k != ExprKind::SuperCall && k != ExprKind::New)
          error(s.value->loc, "an expression statement must be a call");
        gen(*s.value, kNoSlot, true);
        break;
      }
      case StmtKind::If: {
        const Jumps to_else = cond_jump(*s.value, false);
        release_temps(mark);
        statements(s.body);
        if (s.else_body.empty()) {
          patch(to_else, here());
        } else {
          const std::uint32_t to_end = emit_jump(Op::JMP, {});
          patch(to_else, here());
          statements(s.else_body);
          patch(to_end, here());
        }
        break;
      }
      case StmtKind::While: {
        const std::uint32_t to_cond = emit_jump(Op::JMP, {});
        const std::uint32_t top = here();
        const LoopExits exits = loop_body(s.body);
        patch(to_cond, here());
        patch(exits.continues, here());
        line_ = s.loc.line;
        patch(cond_jump(*s.value, true), top);
        patch(exits.breaks, here());
        break;
      }
      case StmtKind::For: {
        if (s.init) statement(*s.init);
        line_ = s.loc.line;
        const std::uint32_t to_cond = emit_jump(Op::JMP, {});
        const std::uint32_t top = here();
        const LoopExits exits = loop_body(s.body);
        patch(exits.continues, here());
        if (s.step) statement(*s.step);
        line_ = s.loc.line;
        patch(to_cond, here());
        patch(cond_jump(*s.value, true), top);
        patch(exits.breaks, here());
        break;
      }
      case StmtKind::Break:
      case StmtKind::Continue: {
        const bool is_break = s.kind == StmtKind::Break;
        if (loops_.empty()) {
          error(s.loc, std::string(is_break ? "'break'" : "'continue'") + " outside a loop");
          break;
        }
        (is_break ? loops_.back().breaks : loops_.back().continues).push_back(emit_jump(Op::JMP, {}));
        break;
      }
      case StmtKind::Return: {
        if (!s.value) {
          if (result_.k != K::Void) error(s.loc, "return without a value in a function returning " + type_name(result_));
          emit(Op::RETV, {});
        } else if (result_.k == K::Void) {
          error(s.loc, "return with a value in a function without a result");
        } else {
          const Value v = gen(*s.value);
          expect(*s.value, v.type, result_, "return value");
          emit(Op::RET, {v.slot == kNoSlot ? 0 : v.slot});
        }
        break;
      }
      case StmtKind::Block: statements(s.body); break;
    }
    release_temps(mark);
  }

  void var_decl(Stmt& s) {
    Local l;
    if (s.has_type) l.type = p_.resolve(s.type, this_class_);
    if (!s.has_type && s.value) {  // with neither, the parser has reported it; the type stays an error
      // The type comes from the initializer: compile it into a temporary, then move.
      const Value v = gen(*s.value);
      l.type = v.type;
      if (v.type.k == K::Null) error(s.value->loc, "cannot infer a type from null; declare the variable's type");
      if (v.type.k == K::Void) error(s.value->loc, "the initial value has no value (a call without a result)");
      declare(v, l, s);
      return;
    }
    Value v{kNoSlot, l.type};
    if (s.value) {
      v = gen(*s.value);
      expect(*s.value, v.type, l.type, "initial value of '" + v_name(s) + "'");
    }
    declare(v, l, s);
  }
  static std::string v_name(const Stmt& s) { return s.var->name; }
  void declare(const Value& v, Local l, Stmt& s) {
    Var* var = s.var.get();
    if (var->boxed()) {
      l.boxed = true;
      l.slot = new_slot(var->name + "$box", Type::of(K::Object));
      make_box(l.slot, v.slot, l.type);
    } else {
      l.slot = new_slot(var->name, l.type);
      if (v.slot != kNoSlot) emit(Op::MOV, {l.slot, v.slot});
      else if (l.type.is_ref()) emit(Op::LOADNULL, {l.slot});
      else emit(Op::LOADI, {l.slot, 0});
    }
    locals_[var] = l;
  }

  Value binary_value(Tok op, const Value& a, Expr& right, std::uint32_t dest, SourceLoc loc);

  void assign(Stmt& s) {
    Expr& t = *s.target;
    auto combine = [&](const Value& old, std::uint32_t dest) -> Value {
      if (s.op == Tok::Eq) {
        const Value v = gen(*s.value, dest);
        return v;
      }
      const Tok op = s.op == Tok::PlusEq ? Tok::Plus : s.op == Tok::MinusEq ? Tok::Minus : s.op == Tok::StarEq ? Tok::Star : Tok::Slash;
      return binary_value(op, old, *s.value, dest, s.loc);
    };
    if (t.kind == ExprKind::Name) {
      if (t.var != nullptr) {
        const Local& l = locals_.at(t.var);
        const bool direct = !l.boxed && l.capture == nullptr;
        const Value old = s.op == Tok::Eq ? Value{} : read_local(l, kNoSlot);
        const Value v = combine(old, direct ? l.slot : kNoSlot);
        expect(*s.value, v.type, l.type, "assignment to '" + t.name + "'");
        if (v.slot != kNoSlot) write_local(l, v.slot);
        return;
      }
      if (const FieldSym* f = this_field(t.name)) {
        const Value old = s.op == Tok::Eq ? Value{} : field_get(Value{this_slot_, this_type_}, *f, kNoSlot);
        const Value v = combine(old, kNoSlot);
        field_put(Value{this_slot_, this_type_}, *f, v, *s.value);
        return;
      }
      const auto g = p_.globals.find(t.name);
      if (g != p_.globals.end()) {
        Value old;
        if (s.op != Tok::Eq) {
          old = Value{temp_for(g->second.type), g->second.type};
          emit(Op::GGET, {old.slot, g->second.index});
        }
        const Value v = combine(old, kNoSlot);
        expect(*s.value, v.type, g->second.type, "assignment to '" + t.name + "'");
        if (v.slot != kNoSlot) emit(Op::GPUT, {g->second.index, v.slot});
        return;
      }
      error(t.loc, "unknown variable '" + t.name + "'");
      gen(*s.value);
      return;
    }
    if (t.kind == ExprKind::Field) {
      const Value obj = gen(*t.kids[0]);
      if (obj.type.is_error()) return;
      if (obj.type.k != K::Class) {
        error(t.loc, "cannot assign to '" + t.name + "' of a " + type_name(obj.type));
        return;
      }
      const FieldSym* f = obj.type.cls->field(t.name);
      if (f == nullptr || f->name[0] == '$') {
        error(t.loc, "class " + obj.type.cls->name + " has no field '" + t.name + "'");
        return;
      }
      const Value old = s.op == Tok::Eq ? Value{} : field_get(obj, *f, kNoSlot);
      const Value v = combine(old, kNoSlot);
      field_put(obj, *f, v, *s.value);
      return;
    }
    if (t.kind == ExprKind::Index) {
      const Value arr = gen(*t.kids[0]);
      const Value idx = gen(*t.kids[1]);
      expect(*t.kids[1], idx.type, Type::of(K::Int), "array index");
      if (arr.type.is_error()) return;
      if (arr.type.k != K::Array) {
        error(t.loc, "cannot index a " + type_name(arr.type));
        return;
      }
      const Type& el = arr.type.element();
      Value old;
      if (s.op != Tok::Eq) {
        old = Value{temp_for(el), el};
        emit(el.is_ref() ? Op::AGETR : Op::AGETS, {old.slot, arr.slot, idx.slot});
      }
      const Value v = combine(old, kNoSlot);
      if (!expect(*s.value, v.type, el, "array element")) return;
      emit(el.is_ref() ? Op::APUTR : Op::APUTS, {arr.slot, idx.slot, v.slot});
      return;
    }
    error(t.loc, "cannot assign to this expression");
  }

  // --- fields ---
  const FieldSym* this_field(const std::string& name) const {
    if (this_class_ == nullptr) return nullptr;
    const FieldSym* f = this_class_->field(name);
    return f != nullptr && f->name[0] != '$' ? f : nullptr;
  }
  Type field_type(const Type& obj, const FieldSym& f) {
    const Type owner = as_ancestor(obj, f.owner);
    return substitute(f.type, owner.is_error() ? std::vector<Type>{} : owner.args);
  }
  Value field_get(const Value& obj, const FieldSym& f, std::uint32_t dest) {
    const Type t = field_type(obj.type, f);
    const std::uint32_t d = target(dest, t);
    const ClassSym& c = *obj.type.cls;
    const bool dynamic = !c.subclasses.empty();
    const Op op = f.is_ref ? (dynamic ? Op::GETRD : Op::GETR) : (dynamic ? Op::GETSD : Op::GETS);
    emit(op, {d, obj.slot, p_.field_ref(c, f)});
    return Value{d, t};
  }
  void field_put(const Value& obj, const FieldSym& f, const Value& v, const Expr& value_expr) {
    if (!expect(value_expr, v.type, field_type(obj.type, f), "assignment to field '" + f.name + "'")) return;
    if (v.slot == kNoSlot) return;
    const ClassSym& c = *obj.type.cls;
    const bool dynamic = !c.subclasses.empty();
    const Op op = f.is_ref ? (dynamic ? Op::PUTRD : Op::PUTR) : (dynamic ? Op::PUTSD : Op::PUTS);
    emit(op, {obj.slot, p_.field_ref(c, f), v.slot});
  }

  // --- expressions ---
  Value load_int(std::int64_t v, std::uint32_t dest) {
    const std::uint32_t d = target(dest, Type::of(K::Int));
    if (fits_i32(v)) {
      emit(Op::LOADI, {d, static_cast<std::uint32_t>(static_cast<std::int32_t>(v))});
    } else {
      p_.module.constants.push_back(static_cast<std::uint64_t>(v));
      emit(Op::LOADK, {d, static_cast<std::uint32_t>(p_.module.constants.size() - 1)});
    }
    return Value{d, Type::of(K::Int)};
  }
  std::uint32_t string_literal(const std::string& text) {
    for (std::size_t i = 0; i < p_.module.strings.size(); ++i)
      if (p_.module.strings[i] == text) return static_cast<std::uint32_t>(i);
    p_.module.strings.push_back(text);
    return static_cast<std::uint32_t>(p_.module.strings.size() - 1);
  }

  Value gen(Expr& e, std::uint32_t dest = kNoSlot, bool discard = false);
  Value call(Expr& e, std::uint32_t dest, bool discard);
  Value builtin(Expr& e, std::uint32_t dest, bool& handled);
  Value method_call(Expr& e, const Value& recv, std::uint32_t dest, bool discard);
  Value invoke(Expr& e, MethodSym& m, const Value& recv, std::size_t first_arg, std::uint32_t dest, bool discard,
               bool direct);
  Value closure_call(Expr& e, const Value& closure, std::size_t first_arg, std::uint32_t dest, bool discard);
  Value new_object(Expr& e, std::uint32_t dest);
  Value lambda(Expr& e, std::uint32_t dest);
  std::vector<std::uint32_t> arguments(Expr& e, std::size_t first, const std::vector<Type>& params,
                                       const std::vector<Type>& type_args, const std::string& what);
  Jumps cond_jump(Expr& e, bool jump_if);
  void emit_global_initializers();

  Program& p_;
  FuncDecl& f_;
  std::uint32_t function_;  // the Module function being compiled
  ClassSym* this_class_;
  Type this_type_;
  Type result_;
  const PendingLambda* lambda_;
  std::uint32_t this_slot_ = kNoSlot;
  std::uint32_t line_ = 0;
  std::map<Var*, Local> locals_;
  std::vector<std::uint32_t> free_refs_, free_scalars_, live_temps_;
  std::vector<LoopExits> loops_;  // the loops around the statement being compiled, innermost last
};

}  // namespace gcvm::vm::tern::codegen
