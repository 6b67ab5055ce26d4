#include "vm/lang/types.hpp"

namespace gcvm::vm::tern {

std::string type_name(const Type& t) {
  switch (t.k) {
    case Type::K::Error: return "<error>";
    case Type::K::Void: return "void";
    case Type::K::Int: return "int";
    case Type::K::Float: return "float";
    case Type::K::Bool: return "bool";
    case Type::K::String: return "string";
    case Type::K::Null: return "null";
    case Type::K::Object: return "Object";
    case Type::K::Param: return "T" + std::to_string(t.param);
    case Type::K::Array: return type_name(t.element()) + "[]";
    case Type::K::Class: {
      std::string out = t.cls->name;
      if (!t.args.empty()) {
        out += "<";
        for (std::size_t i = 0; i < t.args.size(); ++i) out += (i ? ", " : "") + type_name(t.args[i]);
        out += ">";
      }
      return out;
    }
    case Type::K::Func: {
      std::string out = "fn(";
      for (std::size_t i = 0; i + 1 < t.args.size(); ++i) out += (i ? ", " : "") + type_name(t.args[i]);
      out += ")";
      if (t.result().k != Type::K::Void) out += ": " + type_name(t.result());
      return out;
    }
  }
  return "?";
}

Type own_type(ClassSym& c) {
  Type t = Type::of(Type::K::Class);
  t.cls = &c;
  for (std::uint32_t i = 0; i < c.type_params.size(); ++i) {
    Type prm = Type::of(Type::K::Param);
    prm.param = i;
    t.args.push_back(prm);
  }
  return t;
}

Type substitute(const Type& t, const std::vector<Type>& args) {
  if (t.k == Type::K::Param) return t.param < args.size() ? args[t.param] : t;
  if (t.args.empty()) return t;
  Type out = t;
  for (Type& a : out.args) a = substitute(a, args);
  return out;
}

Type as_ancestor(const Type& t, const ClassSym* target) {
  if (t.k != Type::K::Class) return Type::of(Type::K::Error);
  if (t.cls == target) return t;
  for (const Type& i : t.cls->interfaces) {
    Type found = as_ancestor(substitute(i, t.args), target);
    if (!found.is_error()) return found;
  }
  if (t.cls->super == nullptr) return Type::of(Type::K::Error);
  return as_ancestor(substitute(t.cls->super_type, t.args), target);
}

bool implements(const Type& from, const Type& to) {
  return to.k == Type::K::Class && to.cls->is_interface && as_ancestor(from, to.cls) == to;
}

bool assignable(const Type& from, const Type& to) {
  if (from.is_error() || to.is_error()) return true;
  if (from == to) return true;
  if (from.k == Type::K::Null) return to.is_ref();
  if (to.k == Type::K::Object) return from.is_ref();
  if (from.k == Type::K::Class && to.k == Type::K::Class) return as_ancestor(from, to.cls) == to;
  return false;
}

}  // namespace gcvm::vm::tern
