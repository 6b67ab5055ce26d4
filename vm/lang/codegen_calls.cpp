// Code generation for calls (methods, closures, built-ins), object creation and
// lambdas: the second half of FunctionCompiler (function_compiler.hpp).
#include "vm/lang/function_compiler.hpp"

namespace gcvm::vm::tern::codegen {

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
    if ((e.name == "equals" || e.name == "compareTo") && want(1)) {
      const Value o = gen(*e.kids[1]);
      expect(*e.kids[1], o.type, Type::of(K::String), "argument of '" + e.name + "'");
      const Type t = Type::of(e.name == "equals" ? K::Bool : K::Int);
      const std::uint32_t d = target(dest, t);
      emit(e.name == "equals" ? Op::STREQ : Op::STRCMP, {d, recv.slot, o.slot});
      return Value{d, t};
    }
    if (e.name == "substring" && want(2)) {
      const std::uint32_t from = int_arg(1);
      const std::uint32_t to = int_arg(2);
      const std::uint32_t d = target(dest, Type::of(K::String));
      emit(Op::STRSUB, {d, recv.slot, from, to});
      return Value{d, Type::of(K::String)};
    }
    if (e.name != "length" && e.name != "charAt" && e.name != "hashCode" && e.name != "equals" &&
        e.name != "compareTo" && e.name != "substring")
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
    error(e.loc, std::string(recv.type.cls->is_interface ? "interface " : "class ") + recv.type.cls->name +
                     " has no method '" + e.name + "'");
    return bad();
  }
  if (k == K::Param && this_class_ != nullptr && recv.type.param < this_class_->bounds.size() &&
      !this_class_->bounds[recv.type.param].is_error())
    return method_call(e, Value{recv.slot, this_class_->bounds[recv.type.param]}, dest, discard);
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
  if (n == "sin") return unary(K::Float, Op::FSIN, K::Float);
  if (n == "cos") return unary(K::Float, Op::FCOS, K::Float);
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
  if (n == "stringFromBytes") {
    if (!arity(3)) return bad();
    const Type wanted[] = {Type::array_of(Type::of(K::Int)), Type::of(K::Int), Type::of(K::Int)};
    std::vector<std::uint32_t> operands;
    bool typed = true;
    for (std::size_t i = 0; i < 3; ++i) {
      const Value v = gen(*e.kids[i]);
      typed = expect(*e.kids[i], v.type, wanted[i], "argument " + std::to_string(i + 1) + " of '" + n + "'") && typed;
      operands.push_back(v.slot);
    }
    if (!typed) return bad();
    const std::uint32_t d = target(dest, Type::of(K::String));
    emit(Op::STRFROMA, {d, operands[0], operands[1], operands[2]});
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
  if (c->is_abstract) error(e.loc, std::string("cannot instantiate ") + (c->is_interface ? "interface " : "abstract class ") + c->name);
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
  ClassSym& c = p_.new_class(fn().name + "$lambda" + std::to_string(p_.lambdas.size()));
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
  p_.finish_class(c, e.loc);
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

}  // namespace gcvm::vm::tern::codegen
