// Code generation for one function body: checks the types of every expression and
// statement as it emits register bytecode (vm/bytecode/opcodes.hpp). Statements,
// operators, conditions and expressions are here; calls, built-ins, object creation
// and lambdas in codegen_calls.cpp; the compiler's state in function_compiler.hpp.
#include "vm/lang/function_compiler.hpp"

namespace gcvm::vm::tern {

namespace codegen {

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
      if (e.op == Tok::Minus && e.kids[0]->kind == ExprKind::IntLit) {
        // Negated in unsigned arithmetic: the literal 2^63 is held as INT64_MIN, whose
        // negation (INT64_MIN again, the value meant) overflows std::int64_t.
        const auto magnitude = static_cast<std::uint64_t>(e.kids[0]->int_value);
        return load_int(static_cast<std::int64_t>(std::uint64_t{0} - magnitude), dest);
      }
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

}  // namespace codegen

void compile_body(Program& p, FuncDecl& f, std::uint32_t function, ClassSym* this_class, const Type& this_type,
                  const std::vector<Type>& params, const Type& result, const PendingLambda* lambda) {
  codegen::FunctionCompiler c(p, f, function, this_class, this_type, result, lambda);
  c.run(params);
}

}  // namespace gcvm::vm::tern
