// Code generation for one function body: checks the types of every expression and
// statement as it emits register bytecode (vm/bytecode/opcodes.hpp).
//
// Slots: parameters first (a method's `this`, a lambda's closure object are slot 0),
// then one slot per local variable, then temporaries. Temporaries are reused from one
// statement to the next; a slot is either a reference or a scalar for the whole
// function (the stack map, FunctionInfo::ref_slots). Expression results land in the
// destination the caller asks for when a single final instruction computes them.
#include <bit>
#include <limits>
#include <map>

#include "vm/bytecode/opcodes.hpp"
#include "vm/lang/program.hpp"

namespace gcvm::vm::tern {

namespace {

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

bool fits_i32(std::int64_t v) {
  return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

class FunctionCompiler {
 public:
  FunctionCompiler(Program& p, FuncDecl& f, std::uint32_t index, ClassSym* this_class, const Type& this_type,
                   const Type& result, const PendingLambda* lambda)
      : p_(p), f_(f), fn_(p.module.functions[index]), this_class_(this_class), this_type_(this_type), result_(result),
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
    fn_.param_count = static_cast<std::uint32_t>(fn_.slots.size());
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
    if (fn_.name == "main") emit_global_initializers();
    statements(f_.body);
    if (result_.k == K::Void) emit(Op::RETV, {});
    else emit(Op::FALLOFF, {});
    for (std::uint32_t s = 0; s < fn_.slots.size(); ++s)
      if (fn_.slots[s].is_ref) fn_.ref_slots.push_back(s);
    fn_.frame_size = static_cast<std::uint32_t>(fn_.slots.size());
  }

 private:
  // --- emission ---
  void emit(Op op, std::initializer_list<std::uint32_t> operands) {
    fn_.code.push_back(static_cast<std::uint32_t>(op));
    fn_.lines.push_back(line_);
    for (std::uint32_t w : operands) {
      fn_.code.push_back(w);
      fn_.lines.push_back(line_);
    }
  }
  std::uint32_t here() const { return static_cast<std::uint32_t>(fn_.code.size()); }
  /// Emits a jump-like op whose last operand is a target patched later; returns its word.
  std::uint32_t emit_jump(Op op, std::initializer_list<std::uint32_t> operands) {
    emit(op, operands);
    fn_.code.push_back(0);
    fn_.lines.push_back(line_);
    return here() - 1;
  }
  void patch(std::uint32_t at, std::uint32_t target) { fn_.code[at] = target; }
  void patch(const Jumps& at, std::uint32_t target) {
    for (std::uint32_t a : at) patch(a, target);
  }
  void emit_call(Op op, std::uint32_t callee, std::uint32_t dest, const std::vector<std::uint32_t>& args) {
    fn_.code.push_back(static_cast<std::uint32_t>(op));
    for (std::uint32_t w : {callee, dest, static_cast<std::uint32_t>(args.size())}) fn_.code.push_back(w);
    for (std::uint32_t a : args) fn_.code.push_back(a);
    fn_.lines.resize(fn_.code.size(), line_);
  }

  // --- slots ---
  std::uint32_t new_slot(const std::string& name, const Type& t) {
    fn_.slots.push_back(SlotInfo{name, type_name(t), t.is_ref()});
    return static_cast<std::uint32_t>(fn_.slots.size() - 1);
  }
  std::uint32_t temp(bool is_ref) {
    auto& free = is_ref ? free_refs_ : free_scalars_;
    std::uint32_t s;
    if (!free.empty()) {
      s = free.back();
      free.pop_back();
    } else {
      s = static_cast<std::uint32_t>(fn_.slots.size());
      fn_.slots.push_back(SlotInfo{(is_ref ? "%r" : "%t") + std::to_string(s), is_ref ? "ref" : "scalar", is_ref});
    }
    live_temps_.push_back(s);
    return s;
  }
  std::uint32_t temp_for(const Type& t) { return temp(t.is_ref()); }
  void release_temps(std::size_t mark) {
    while (live_temps_.size() > mark) {
      const std::uint32_t s = live_temps_.back();
      live_temps_.pop_back();
      (fn_.slots[s].is_ref ? free_refs_ : free_scalars_).push_back(s);
    }
  }
  std::uint32_t target(std::uint32_t dest, const Type& t) { return dest != kNoSlot ? dest : temp_for(t); }

  void error(SourceLoc loc, const std::string& message) { p_.diag.error(loc, message); }
  Value bad() { return Value{kNoSlot, Type::of(K::Error)}; }
  bool expect(const Expr& e, const Type& got, const Type& want, const std::string& what) {
    if (assignable(got, want)) return true;
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
        statements(s.body);
        patch(to_cond, here());
        line_ = s.loc.line;
        patch(cond_jump(*s.value, true), top);
        break;
      }
      case StmtKind::For: {
        if (s.init) statement(*s.init);
        line_ = s.loc.line;
        const std::uint32_t to_cond = emit_jump(Op::JMP, {});
        const std::uint32_t top = here();
        statements(s.body);
        if (s.step) statement(*s.step);
        line_ = s.loc.line;
        patch(to_cond, here());
        patch(cond_jump(*s.value, true), top);
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
    if (!s.has_type) {
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
  FunctionInfo& fn_;
  ClassSym* this_class_;
  Type this_type_;
  Type result_;
  const PendingLambda* lambda_;
  std::uint32_t this_slot_ = kNoSlot;
  std::uint32_t line_ = 0;
  std::map<Var*, Local> locals_;
  std::vector<std::uint32_t> free_refs_, free_scalars_, live_temps_;
};

void FunctionCompiler::emit_global_initializers() {
  for (GlobalDecl* g : p_.global_inits) {
    line_ = g->loc.line;
    const std::size_t mark = live_temps_.size();
    const GlobalSym& sym = p_.globals.at(g->name);
    const Value v = gen(*g->value);
    if (expect(*g->value, v.type, sym.type, "initial value of '" + g->name + "'") && v.slot != kNoSlot)
      emit(Op::GPUT, {sym.index, v.slot});
    release_temps(mark);
  }
}

Value FunctionCompiler::binary_value(Tok op, const Value& a, Expr& right, std::uint32_t dest, SourceLoc loc) {
  if (a.type.is_error()) {
    gen(right);
    return bad();
  }
  // Integer operations with a 32-bit literal on the right use the immediate forms.
  if (a.type.k == K::Int && right.kind == ExprKind::IntLit && fits_i32(right.int_value)) {
    Op li;
    switch (op) {
      case Tok::Plus: li = Op::ADD_LI; break;
      case Tok::Minus: li = Op::SUB_LI; break;
      case Tok::Star: li = Op::MUL_LI; break;
      case Tok::Slash: li = Op::DIV_LI; break;
      case Tok::Percent: li = Op::REM_LI; break;
      case Tok::Amp: li = Op::AND_LI; break;
      case Tok::Pipe: li = Op::OR_LI; break;
      case Tok::Caret: li = Op::XOR_LI; break;
      case Tok::Shl: li = Op::SHL_LI; break;
      case Tok::Shr: li = Op::SHR_LI; break;
      case Tok::Lt: li = Op::LT_LI; break;
      case Tok::Le: li = Op::LE_LI; break;
      case Tok::Gt: li = Op::GT_LI; break;
      case Tok::Ge: li = Op::GE_LI; break;
      case Tok::EqEq: li = Op::EQ_LI; break;
      case Tok::NotEq: li = Op::NE_LI; break;
      default: li = Op::NOP;
    }
    if (li != Op::NOP) {
      const bool comparison = op == Tok::Lt || op == Tok::Le || op == Tok::Gt || op == Tok::Ge || op == Tok::EqEq ||
                              op == Tok::NotEq;
      const Type t = Type::of(comparison ? K::Bool : K::Int);
      const std::uint32_t d = target(dest, t);
      emit(li, {d, a.slot, static_cast<std::uint32_t>(static_cast<std::int32_t>(right.int_value))});
      return Value{d, t};
    }
  }
  const Value b = gen(right);
  if (b.type.is_error()) return bad();
  const K ka = a.type.k, kb = b.type.k;
  auto result = [&](Op o, K k) {
    const Type t = Type::of(k);
    const std::uint32_t d = target(dest, t);
    emit(o, {d, a.slot, b.slot});
    return Value{d, t};
  };
  auto mismatch = [&] {
    error(loc, "operator " + std::string(spelling(op)) + " cannot combine " + type_name(a.type) + " and " +
                   type_name(b.type));
    return bad();
  };
  switch (op) {
    case Tok::Plus:
      if (ka == K::String && kb == K::String) return result(Op::STRCAT, K::String);
      [[fallthrough]];
    case Tok::Minus:
    case Tok::Star:
    case Tok::Slash: {
      if (ka == K::Int && kb == K::Int) {
        const Op o = op == Tok::Plus ? Op::ADD : op == Tok::Minus ? Op::SUB : op == Tok::Star ? Op::MUL : Op::DIV;
        return result(o, K::Int);
      }
      if (ka == K::Float && kb == K::Float) {
        const Op o = op == Tok::Plus ? Op::FADD : op == Tok::Minus ? Op::FSUB : op == Tok::Star ? Op::FMUL : Op::FDIV;
        return result(o, K::Float);
      }
      return mismatch();
    }
    case Tok::Percent:
    case Tok::Amp:
    case Tok::Pipe:
    case Tok::Caret:
    case Tok::Shl:
    case Tok::Shr: {
      if (op != Tok::Percent && op != Tok::Shl && op != Tok::Shr && ka == K::Bool && kb == K::Bool)
        return result(op == Tok::Amp ? Op::AND : op == Tok::Pipe ? Op::OR : Op::XOR, K::Bool);
      if (ka != K::Int || kb != K::Int) return mismatch();
      const Op o = op == Tok::Percent ? Op::REM : op == Tok::Amp ? Op::AND : op == Tok::Pipe ? Op::OR
                   : op == Tok::Caret ? Op::XOR : op == Tok::Shl ? Op::SHL : Op::SHR;
      return result(o, K::Int);
    }
    case Tok::Lt:
    case Tok::Le:
    case Tok::Gt:
    case Tok::Ge: {
      if (ka == K::Int && kb == K::Int)
        return result(op == Tok::Lt ? Op::LT : op == Tok::Le ? Op::LE : op == Tok::Gt ? Op::GT : Op::GE, K::Bool);
      if (ka == K::Float && kb == K::Float)
        return result(op == Tok::Lt ? Op::FLT : op == Tok::Le ? Op::FLE : op == Tok::Gt ? Op::FGT : Op::FGE, K::Bool);
      return mismatch();
    }
    case Tok::EqEq:
    case Tok::NotEq: {
      if (ka == K::Float && kb == K::Float) return result(op == Tok::EqEq ? Op::FEQ : Op::FNE, K::Bool);
      const bool same_scalar = ka == kb && (ka == K::Int || ka == K::Bool);
      const bool refs = a.type.is_ref() && b.type.is_ref() && (assignable(a.type, b.type) || assignable(b.type, a.type));
      if (!same_scalar && !refs) return mismatch();
      return result(op == Tok::EqEq ? Op::EQ : Op::NE, K::Bool);
    }
    default: return mismatch();
  }
}

Jumps FunctionCompiler::cond_jump(Expr& e, bool jump_if) {
  if (e.kind == ExprKind::Unary && e.op == Tok::Bang) return cond_jump(*e.kids[0], !jump_if);
  if (e.kind == ExprKind::Binary && (e.op == Tok::AndAnd || e.op == Tok::OrOr)) {
    // a && b jumps "if false" when either is false, and "if true" only when both are.
    const bool is_and = e.op == Tok::AndAnd;
    if (is_and != jump_if) {
      Jumps out = cond_jump(*e.kids[0], jump_if);
      const Jumps second = cond_jump(*e.kids[1], jump_if);
      out.insert(out.end(), second.begin(), second.end());
      return out;
    }
    const Jumps skip = cond_jump(*e.kids[0], !jump_if);
    Jumps out = cond_jump(*e.kids[1], jump_if);
    patch(skip, here());
    return out;
  }
  if (e.kind == ExprKind::Binary) {
    const Tok op = e.op;
    const bool compare = op == Tok::Lt || op == Tok::Le || op == Tok::Gt || op == Tok::Ge || op == Tok::EqEq || op == Tok::NotEq;
    if (compare) {
      const Tok effective = jump_if ? op
                                    : op == Tok::Lt ? Tok::Ge : op == Tok::Le ? Tok::Gt : op == Tok::Gt ? Tok::Le
                                    : op == Tok::Ge ? Tok::Lt : op == Tok::EqEq ? Tok::NotEq : Tok::EqEq;
      const Value a = gen(*e.kids[0]);
      Expr& r = *e.kids[1];
      if (a.type.k == K::Int && r.kind == ExprKind::IntLit && fits_i32(r.int_value)) {
        const Op o = effective == Tok::Lt ? Op::BLT_LI : effective == Tok::Le ? Op::BLE_LI : effective == Tok::Gt ? Op::BGT_LI
                     : effective == Tok::Ge ? Op::BGE_LI : effective == Tok::EqEq ? Op::BEQ_LI : Op::BNE_LI;
        return Jumps{emit_jump(o, {a.slot, static_cast<std::uint32_t>(static_cast<std::int32_t>(r.int_value))})};
      }
      if (a.type.is_ref() && r.kind == ExprKind::Null && (op == Tok::EqEq || op == Tok::NotEq))
        return Jumps{emit_jump(effective == Tok::EqEq ? Op::BNULL : Op::BNONNULL, {a.slot})};
      const Value b = gen(r);
      if (!a.type.is_error() && !b.type.is_error()) {
        const bool floats = a.type.k == K::Float && b.type.k == K::Float;
        const bool ints = a.type.k == K::Int && b.type.k == K::Int;
        const bool eq_ok = (op == Tok::EqEq || op == Tok::NotEq) &&
                           ((a.type.k == b.type.k && a.type.k == K::Bool) ||
                            (a.type.is_ref() && b.type.is_ref() && (assignable(a.type, b.type) || assignable(b.type, a.type))));
        if (floats) {
          // A float comparison is not negated by swapping the operator when NaN is involved,
          // so "jump if not" computes the comparison and branches on zero.
          if (!jump_if) {
            const std::uint32_t t = temp(false);
            const Op o = op == Tok::Lt ? Op::FLT : op == Tok::Le ? Op::FLE : op == Tok::Gt ? Op::FGT : op == Tok::Ge ? Op::FGE
                         : op == Tok::EqEq ? Op::FEQ : Op::FNE;
            emit(o, {t, a.slot, b.slot});
            return Jumps{emit_jump(Op::BZ, {t})};
          }
          const Op o = op == Tok::Lt ? Op::FBLT : op == Tok::Le ? Op::FBLE : op == Tok::Gt ? Op::FBGT : op == Tok::Ge ? Op::FBGE
                       : op == Tok::EqEq ? Op::FBEQ : Op::FBNE;
          return Jumps{emit_jump(o, {a.slot, b.slot})};
        }
        if (ints || eq_ok) {
          const Op o = effective == Tok::Lt ? Op::BLT : effective == Tok::Le ? Op::BLE : effective == Tok::Gt ? Op::BGT
                       : effective == Tok::Ge ? Op::BGE : effective == Tok::EqEq ? Op::BEQ : Op::BNE;
          return Jumps{emit_jump(o, {a.slot, b.slot})};
        }
        error(e.loc, "operator " + std::string(spelling(op)) + " cannot compare " + type_name(a.type) + " and " +
                         type_name(b.type));
      }
      return Jumps{emit_jump(Op::JMP, {})};
    }
  }
  const Value v = gen(e);
  if (!v.type.is_error() && v.type.k != K::Bool) error(e.loc, "a condition must be a bool, found " + type_name(v.type));
  if (v.slot == kNoSlot) return Jumps{emit_jump(Op::JMP, {})};
  return Jumps{emit_jump(jump_if ? Op::BNZ : Op::BZ, {v.slot})};
}

Value FunctionCompiler::gen(Expr& e, std::uint32_t dest, bool discard) {
  switch (e.kind) {
    case ExprKind::IntLit:
      if (e.int_value < 0) {  // 2^63 written without a minus
        error(e.loc, "integer literal 9223372036854775808 out of range");
        return bad();
      }
      return load_int(e.int_value, dest);
    case ExprKind::FloatLit: {
      const std::uint32_t d = target(dest, Type::of(K::Float));
      p_.module.constants.push_back(std::bit_cast<std::uint64_t>(e.float_value));
      emit(Op::LOADK, {d, static_cast<std::uint32_t>(p_.module.constants.size() - 1)});
      return Value{d, Type::of(K::Float)};
    }
    case ExprKind::BoolLit: {
      const Value v = load_int(e.int_value, dest);
      return Value{v.slot, Type::of(K::Bool)};
    }
    case ExprKind::StringLit: {
      const std::uint32_t d = target(dest, Type::of(K::String));
      emit(Op::STRLIT, {d, string_literal(e.name)});
      return Value{d, Type::of(K::String)};
    }
    case ExprKind::Null: {
      const std::uint32_t d = target(dest, Type::of(K::Null));
      emit(Op::LOADNULL, {d});
      return Value{d, Type::of(K::Null)};
    }
    case ExprKind::This:
      if (this_slot_ == kNoSlot) {
        error(e.loc, "'this' outside a method");
        return bad();
      }
      return Value{this_slot_, this_type_};
    case ExprKind::Name: {
      if (e.var != nullptr) return read_local(locals_.at(e.var), dest);
      if (const FieldSym* f = this_field(e.name)) return field_get(Value{this_slot_, this_type_}, *f, dest);
      const auto g = p_.globals.find(e.name);
      if (g != p_.globals.end()) {
        const std::uint32_t d = target(dest, g->second.type);
        emit(Op::GGET, {d, g->second.index});
        return Value{d, g->second.type};
      }
      error(e.loc, "unknown variable '" + e.name + "'");
      return bad();
    }
    case ExprKind::Unary: {
      if (e.op == Tok::Minus && e.kids[0]->kind == ExprKind::IntLit) return load_int(-e.kids[0]->int_value, dest);
      if (e.op == Tok::Minus && e.kids[0]->kind == ExprKind::FloatLit) {
        const std::uint32_t d = target(dest, Type::of(K::Float));
        p_.module.constants.push_back(std::bit_cast<std::uint64_t>(-e.kids[0]->float_value));
        emit(Op::LOADK, {d, static_cast<std::uint32_t>(p_.module.constants.size() - 1)});
        return Value{d, Type::of(K::Float)};
      }
      const Value v = gen(*e.kids[0]);
      if (v.type.is_error()) return bad();
      if (e.op == Tok::Minus && (v.type.k == K::Int || v.type.k == K::Float)) {
        const std::uint32_t d = target(dest, v.type);
        emit(v.type.k == K::Int ? Op::NEG : Op::FNEG, {d, v.slot});
        return Value{d, v.type};
      }
      if (e.op == Tok::Bang && v.type.k == K::Bool) {
        const std::uint32_t d = target(dest, v.type);
        emit(Op::XOR_LI, {d, v.slot, 1});
        return Value{d, v.type};
      }
      if (e.op == Tok::Tilde && v.type.k == K::Int) {
        const std::uint32_t d = target(dest, v.type);
        emit(Op::NOT, {d, v.slot});
        return Value{d, v.type};
      }
      error(e.loc, "operator " + std::string(spelling(e.op)) + " cannot take a " + type_name(v.type));
      return bad();
    }
    case ExprKind::Binary: {
      if (e.op == Tok::AndAnd || e.op == Tok::OrOr) {
        const std::uint32_t d = temp(false);
        const Jumps to_false = cond_jump(e, false);
        emit(Op::LOADI, {d, 1});
        const std::uint32_t to_end = emit_jump(Op::JMP, {});
        patch(to_false, here());
        emit(Op::LOADI, {d, 0});
        patch(to_end, here());
        return Value{d, Type::of(K::Bool)};
      }
      const Value a = gen(*e.kids[0]);
      return binary_value(e.op, a, *e.kids[1], dest, e.loc);
    }
    case ExprKind::Call: return call(e, dest, discard);
    case ExprKind::MethodCall: {
      const Value recv = gen(*e.kids[0]);
      if (recv.type.is_error()) {
        for (std::size_t i = 1; i < e.kids.size(); ++i) gen(*e.kids[i]);
        return bad();
      }
      return method_call(e, recv, dest, discard);
    }
    case ExprKind::SuperCall: {
      ClassSym* c = this_class_;
      if (c == nullptr || c->super == nullptr || lambda_ != nullptr) {
        error(e.loc, "'super' outside a method of a subclass");
        return bad();
      }
      MethodSym* m = c->super->method(e.name);
      if (m == nullptr || m->is_abstract) {
        error(e.loc, "class " + c->super->name + " has no " + (m ? "concrete " : "") + "method '" + e.name + "'");
        return bad();
      }
      const Type super_type = substitute(c->super_type, this_type_.args);
      return invoke(e, *m, Value{this_slot_, super_type}, 0, dest, discard, true);
    }
    case ExprKind::Field: {
      const Value obj = gen(*e.kids[0]);
      if (obj.type.is_error()) return bad();
      if (obj.type.k == K::Array && e.name == "length") {
        const std::uint32_t d = target(dest, Type::of(K::Int));
        emit(Op::ALEN, {d, obj.slot});
        return Value{d, Type::of(K::Int)};
      }
      if (obj.type.k == K::Class) {
        const FieldSym* f = obj.type.cls->field(e.name);
        if (f != nullptr && f->name[0] != '$') return field_get(obj, *f, dest);
        error(e.loc, "class " + obj.type.cls->name + " has no field '" + e.name + "'");
        return bad();
      }
      error(e.loc, "a " + type_name(obj.type) + " has no field '" + e.name + "'");
      return bad();
    }
    case ExprKind::Index: {
      const Value arr = gen(*e.kids[0]);
      const Value idx = gen(*e.kids[1]);
      expect(*e.kids[1], idx.type, Type::of(K::Int), "array index");
      if (arr.type.is_error()) return bad();
      if (arr.type.k != K::Array) {
        error(e.loc, "cannot index a " + type_name(arr.type));
        return bad();
      }
      const Type el = arr.type.element();
      const std::uint32_t d = target(dest, el);
      emit(el.is_ref() ? Op::AGETR : Op::AGETS, {d, arr.slot, idx.slot});
      return Value{d, el};
    }
    case ExprKind::New: return new_object(e, dest);
    case ExprKind::NewArray: {
      const Type t = p_.resolve(e.type, this_class_);
      const Value n = gen(*e.kids[0]);
      expect(*e.kids[0], n.type, Type::of(K::Int), "array length");
      if (t.is_error()) return bad();
      const Type at = Type::array_of(t);
      const std::uint32_t d = target(dest, at);
      emit(t.is_ref() ? Op::NEWRA : Op::NEWSA, {d, n.slot});
      return Value{d, at};
    }
    case ExprKind::Lambda: return lambda(e, dest);
  }
  return bad();
}

std::vector<std::uint32_t> FunctionCompiler::arguments(Expr& e, std::size_t first, const std::vector<Type>& params,
                                                       const std::vector<Type>& type_args, const std::string& what) {
  std::vector<std::uint32_t> slots;
  const std::size_t given = e.kids.size() - first;
  if (given != params.size())
    error(e.loc, what + " takes " + std::to_string(params.size()) + " argument" + (params.size() == 1 ? "" : "s") +
                     ", given " + std::to_string(given));
  for (std::size_t i = first; i < e.kids.size(); ++i) {
    const Value v = gen(*e.kids[i]);
    if (i - first < params.size())
      expect(*e.kids[i], v.type, substitute(params[i - first], type_args),
             "argument " + std::to_string(i - first + 1) + " of " + what);
    slots.push_back(v.slot == kNoSlot ? 0 : v.slot);
  }
  return slots;
}

Value FunctionCompiler::invoke(Expr& e, MethodSym& m, const Value& recv, std::size_t first_arg, std::uint32_t dest,
                               bool discard, bool direct) {
  const Type owner = as_ancestor(recv.type, m.owner);
  const std::vector<Type> type_args = owner.is_error() ? std::vector<Type>{} : owner.args;
  std::vector<std::uint32_t> args{recv.slot};
  const std::vector<std::uint32_t> rest = arguments(e, first_arg, m.params, type_args, "method '" + m.name + "'");
  args.insert(args.end(), rest.begin(), rest.end());
  const Type result = substitute(m.result, type_args);
  const std::uint32_t d = result.k == K::Void || discard ? kNoSlot : target(dest, result);
  line_ = e.loc.line;
  if (direct || m.vslot < 0 || !m.overridden) emit_call(Op::CALL, m.function, d, args);
  else emit_call(Op::CALLV, static_cast<std::uint32_t>(m.vslot), d, args);
  return Value{d, result};
}

Value FunctionCompiler::closure_call(Expr& e, const Value& closure, std::size_t first_arg, std::uint32_t dest, bool discard) {
  const Type& ft = closure.type;
  const std::vector<Type> params(ft.args.begin(), ft.args.end() - 1);
  std::vector<std::uint32_t> args{closure.slot};
  const std::vector<std::uint32_t> rest = arguments(e, first_arg, params, {}, "function value '" + e.name + "'");
  args.insert(args.end(), rest.begin(), rest.end());
  const Type result = ft.result();
  const std::uint32_t d = result.k == K::Void || discard ? kNoSlot : target(dest, result);
  line_ = e.loc.line;
  emit_call(Op::CALLV, 0, d, args);
  return Value{d, result};
}

Value FunctionCompiler::method_call(Expr& e, const Value& recv, std::uint32_t dest, bool discard) {
  const K k = recv.type.k;
  if (k == K::String) {
    auto want = [&](std::size_t n) {
      if (e.kids.size() - 1 != n) {
        error(e.loc, "string method '" + e.name + "' takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s"));
        return false;
      }
      return true;
    };
    auto int_arg = [&](std::size_t i) {
      const Value v = gen(*e.kids[i]);
      expect(*e.kids[i], v.type, Type::of(K::Int), "argument of '" + e.name + "'");
      return v.slot;
    };
    if (e.name == "length" && want(0)) {
      const std::uint32_t d = target(dest, Type::of(K::Int));
      emit(Op::STRLEN, {d, recv.slot});
      return Value{d, Type::of(K::Int)};
    }
    if (e.name == "charAt" && want(1)) {
      const std::uint32_t i = int_arg(1);
      const std::uint32_t d = target(dest, Type::of(K::Int));
      emit(Op::STRCHAR, {d, recv.slot, i});
      return Value{d, Type::of(K::Int)};
    }
    if (e.name == "hashCode" && want(0)) {
      const std::uint32_t d = target(dest, Type::of(K::Int));
      emit(Op::STRHASH, {d, recv.slot});
      return Value{d, Type::of(K::Int)};
    }
    if (e.name == "equals" && want(1)) {
      const Value o = gen(*e.kids[1]);
      expect(*e.kids[1], o.type, Type::of(K::String), "argument of 'equals'");
      const std::uint32_t d = target(dest, Type::of(K::Bool));
      emit(Op::STREQ, {d, recv.slot, o.slot});
      return Value{d, Type::of(K::Bool)};
    }
    if (e.name == "substring" && want(2)) {
      const std::uint32_t from = int_arg(1);
      const std::uint32_t to = int_arg(2);
      const std::uint32_t d = target(dest, Type::of(K::String));
      emit(Op::STRSUB, {d, recv.slot, from, to});
      return Value{d, Type::of(K::String)};
    }
    if (e.name != "length" && e.name != "charAt" && e.name != "hashCode" && e.name != "equals" && e.name != "substring")
      error(e.loc, "a string has no method '" + e.name + "'");
    return bad();
  }
  if (k == K::Class) {
    if (MethodSym* m = recv.type.cls->method(e.name)) {
      if (m->name == "init") {
        error(e.loc, "a constructor is called by 'new' (or 'super.init' in a constructor)");
        return bad();
      }
      return invoke(e, *m, recv, 1, dest, discard, false);
    }
    const FieldSym* f = recv.type.cls->field(e.name);
    if (f != nullptr && f->name[0] != '$') {
      const Value fv = field_get(recv, *f, kNoSlot);
      if (fv.type.k == K::Func) return closure_call(e, fv, 1, dest, discard);
    }
    error(e.loc, "class " + recv.type.cls->name + " has no method '" + e.name + "'");
    return bad();
  }
  error(e.loc, "a " + type_name(recv.type) + " has no method '" + e.name + "'");
  return bad();
}

Value FunctionCompiler::call(Expr& e, std::uint32_t dest, bool discard) {
  if (e.var != nullptr) {
    const Value v = read_local(locals_.at(e.var), kNoSlot);
    if (v.type.k != K::Func) {
      if (!v.type.is_error()) error(e.loc, "'" + e.name + "' is a " + type_name(v.type) + ", not a function");
      return bad();
    }
    return closure_call(e, v, 0, dest, discard);
  }
  bool handled = false;
  const Value b = builtin(e, dest, handled);
  if (handled) return b;
  if (this_class_ != nullptr) {
    if (MethodSym* m = this_class_->method(e.name); m != nullptr && m->name != "init")
      return invoke(e, *m, Value{this_slot_, this_type_}, 0, dest, discard, false);
    if (const FieldSym* f = this_field(e.name)) {
      const Value fv = field_get(Value{this_slot_, this_type_}, *f, kNoSlot);
      if (fv.type.k == K::Func) return closure_call(e, fv, 0, dest, discard);
    }
  }
  const auto fit = p_.functions.find(e.name);
  if (fit != p_.functions.end()) {
    const FunctionSym& f = fit->second;
    const std::vector<std::uint32_t> args = arguments(e, 0, f.params, {}, "function '" + e.name + "'");
    const std::uint32_t d = f.result.k == K::Void || discard ? kNoSlot : target(dest, f.result);
    line_ = e.loc.line;
    emit_call(Op::CALL, f.function, d, args);
    return Value{d, f.result};
  }
  const auto g = p_.globals.find(e.name);
  if (g != p_.globals.end() && g->second.type.k == K::Func) {
    const std::uint32_t s = temp(true);
    emit(Op::GGET, {s, g->second.index});
    return closure_call(e, Value{s, g->second.type}, 0, dest, discard);
  }
  error(e.loc, "unknown function '" + e.name + "'");
  for (ExprPtr& k : e.kids) gen(*k);
  return bad();
}

Value FunctionCompiler::builtin(Expr& e, std::uint32_t dest, bool& handled) {
  handled = true;
  const std::string& n = e.name;
  const std::size_t argc = e.kids.size();
  auto arity = [&](std::size_t want) {
    if (argc == want) return true;
    error(e.loc, "'" + n + "' takes " + std::to_string(want) + " argument" + (want == 1 ? "" : "s") + ", given " +
                     std::to_string(argc));
    return false;
  };
  auto unary = [&](K from, Op op, K to) -> Value {
    if (!arity(1)) return bad();
    const Value v = gen(*e.kids[0]);
    if (!expect(*e.kids[0], v.type, Type::of(from), "argument of '" + n + "'")) return bad();
    const std::uint32_t d = target(dest, Type::of(to));
    emit(op, {d, v.slot});
    return Value{d, Type::of(to)};
  };
  if (n == "print" || n == "println") {
    if (n == "print" && !arity(1)) return bad();
    if (argc > 1) {
      arity(1);
      return bad();
    }
    if (argc == 1) {
      const Value v = gen(*e.kids[0]);
      switch (v.type.k) {
        case K::Int: emit(Op::PRINTI, {v.slot}); break;
        case K::Float: emit(Op::PRINTF, {v.slot}); break;
        case K::String: emit(Op::PRINTSTR, {v.slot}); break;
        case K::Bool: {
          const std::uint32_t to_false = emit_jump(Op::BZ, {v.slot});
          emit(Op::PRINTS, {string_literal("true")});
          const std::uint32_t to_end = emit_jump(Op::JMP, {});
          patch(to_false, here());
          emit(Op::PRINTS, {string_literal("false")});
          patch(to_end, here());
          break;
        }
        case K::Error: break;
        default: error(e.kids[0]->loc, "cannot print a " + type_name(v.type));
      }
    }
    if (n == "println") emit(Op::PRINTS, {string_literal("\n")});
    return Value{kNoSlot, Type::of(K::Void)};
  }
  if (n == "sqrt") return unary(K::Float, Op::FSQRT, K::Float);
  if (n == "toFloat") return unary(K::Int, Op::ITOF, K::Float);
  if (n == "toInt") return unary(K::Float, Op::FTOI, K::Int);
  if (n == "chr") return unary(K::Int, Op::STRCHR, K::String);
  if (n == "str") {
    if (!arity(1)) return bad();
    const Value v = gen(*e.kids[0]);
    if (v.type.k != K::Int && v.type.k != K::Float) {
      if (!v.type.is_error()) error(e.kids[0]->loc, "'str' takes an int or a float, found " + type_name(v.type));
      return bad();
    }
    const std::uint32_t d = target(dest, Type::of(K::String));
    emit(v.type.k == K::Int ? Op::ITOSTR : Op::FTOSTR, {d, v.slot});
    return Value{d, Type::of(K::String)};
  }
  if (n == "clock" || n == "argc") {
    if (!arity(0)) return bad();
    const std::uint32_t d = target(dest, Type::of(K::Int));
    emit(n == "clock" ? Op::CLOCK : Op::ARGC, {d});
    return Value{d, Type::of(K::Int)};
  }
  if (n == "arg") return unary(K::Int, Op::ARG, K::Int);
  if (n == "gc") {
    if (arity(0)) emit(Op::GC, {});
    return Value{kNoSlot, Type::of(K::Void)};
  }
  if (n == "exit") {
    if (!arity(1)) return bad();
    const Value v = gen(*e.kids[0]);
    if (expect(*e.kids[0], v.type, Type::of(K::Int), "argument of 'exit'")) emit(Op::EXIT, {v.slot});
    return Value{kNoSlot, Type::of(K::Void)};
  }
  handled = false;
  return bad();
}

Value FunctionCompiler::new_object(Expr& e, std::uint32_t dest) {
  (void)dest;  // NEW writes its slot before the constructor reads the arguments
  const Type t = p_.resolve(e.type, this_class_);
  if (t.is_error()) {
    for (ExprPtr& k : e.kids) gen(*k);
    return bad();
  }
  if (t.k != K::Class) {
    error(e.loc, "cannot 'new' a " + type_name(t) + " (arrays take a length: new T[n])");
    return bad();
  }
  ClassSym* c = t.cls;
  if (c->is_abstract) error(e.loc, "cannot instantiate abstract class " + c->name);
  const std::uint32_t d = temp(true);
  emit(Op::NEW, {d, c->index});
  if (c->dispatched) {
    const std::uint32_t tag = temp(false);
    emit(Op::LOADI, {tag, c->index});
    emit(Op::PUTS, {d, c->first_field, tag});
  }
  MethodSym* init = c->method("init");
  if (init == nullptr) {
    if (!e.kids.empty()) error(e.loc, "class " + c->name + " has no constructor; 'new " + c->name + "()' takes no arguments");
    for (ExprPtr& k : e.kids) gen(*k);
  } else {
    invoke(e, *init, Value{d, t}, 0, kNoSlot, true, true);
  }
  return Value{d, t};
}

Value FunctionCompiler::lambda(Expr& e, std::uint32_t dest) {
  (void)dest;
  FuncDecl& f = *e.lambda;
  PendingLambda pl;
  pl.decl = &f;
  for (const Param& prm : f.params) pl.params.push_back(p_.resolve(prm.type, this_class_));
  pl.result = f.result.empty() ? Type::of(K::Void) : p_.resolve(f.result[0], this_class_);
  ClassSym& c = p_.new_class(fn_.name + "$lambda" + std::to_string(p_.lambdas.size()));
  c.dispatched = true;
  p_.add_field(c, "$class", Type::of(K::Int));
  if (f.captures_this && this_slot_ != kNoSlot) {
    p_.add_field(c, "$this", this_type_);
    pl.this_class = this_class_;
    pl.this_type = this_type_;
  }
  std::vector<std::pair<const FieldSym*, Value>> stores;
  std::map<Var*, Type> captured;
  for (std::size_t i = 0; i < f.captures.size(); ++i) {
    Var* v = f.captures[i];
    const auto it = locals_.find(v);
    if (it == locals_.end()) continue;  // declared after the lambda: an error reported by the lambda's body
    const Local& l = it->second;
    captured[v] = l.type;
    p_.add_field(c, v->name + "$" + std::to_string(i), v->boxed() ? Type::of(K::Object) : l.type);
  }
  p_.finish_class(c);
  const std::uint32_t d = temp(true);
  emit(Op::NEW, {d, c.index});
  const std::uint32_t tag = temp(false);
  emit(Op::LOADI, {tag, c.index});
  emit(Op::PUTS, {d, c.first_field, tag});
  if (const FieldSym* ft = c.field("$this")) emit(Op::PUTR, {d, p_.field_ref(c, *ft), this_slot_});
  for (std::size_t i = 0; i < f.captures.size(); ++i) {
    Var* v = f.captures[i];
    const FieldSym* fs = c.field(v->name + "$" + std::to_string(i));
    if (fs == nullptr) continue;
    const Local& l = locals_.at(v);
    const std::uint32_t value = v->boxed() ? box_of(l) : read_local(l, kNoSlot).slot;
    emit(fs->is_ref ? Op::PUTR : Op::PUTS, {d, p_.field_ref(c, *fs), value});
  }
  pl.cls = &c;
  pl.captured = std::move(captured);
  pl.function = p_.new_function(c.name, f.loc.line);
  p_.module.classes[c.index].vtable.push_back(pl.function);
  p_.lambdas.push_back(pl);
  Type ft = Type::of(K::Func);
  ft.args = pl.params;
  ft.args.push_back(pl.result);
  return Value{d, ft};
}

}  // namespace

void compile_body(Program& p, FuncDecl& f, std::uint32_t function, ClassSym* this_class, const Type& this_type,
                  const std::vector<Type>& params, const Type& result, const PendingLambda* lambda) {
  FunctionCompiler c(p, f, function, this_class, this_type, result, lambda);
  c.run(params);
}

}  // namespace gcvm::vm::tern
