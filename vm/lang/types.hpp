// Tern's types and the symbols of a program: classes with their fields, methods,
// layout and vtable, and top-level functions and globals.
//
// Types are static and sound: the compiler checks every expression, so the bytecode
// needs no run-time type checks (only null, bounds and division checks). Generics are
// erased: a class's type parameters stand for reference types only, and every use of
// a generic member is checked against the type arguments at the use site.
//
// Object layout (the heap binding's shapes): a class's reference fields and scalar
// fields are numbered in declaration order, a subclass's after its superclass's, so a
// field keeps its index in every subclass. A class that takes part in dynamic dispatch
// (it has a superclass or subclasses, or it is a lambda's class) starts with a hidden
// scalar field `$class` (index 0) that holds its class index; CALLV reads it. Field
// access through a static type that has subclasses uses the heap's by-index access
// (GETRD ...); through a class without subclasses, the precomputed field handles.
//
// Interfaces are ClassSyms without fields whose methods are all abstract; an interface
// that extends others has their methods too. Each method declared in an interface owns
// one vtable slot of its own, after every class's own slots,
// so a call through an interface type is one CALLV whatever class the receiver has;
// the vtable of a class that implements interfaces (itself or through an ancestor)
// fills those slots, and such a class takes part in dynamic dispatch. A class's type
// parameter may be bounded by an interface (`K: CustomHash<K>`): a value of that
// parameter's type offers the interface's methods, and each type argument must
// implement the bound.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vm/lang/ast.hpp"

namespace gcvm::vm::tern {

struct ClassSym;

struct Type {
  enum class K : std::uint8_t { Error, Void, Int, Float, Bool, String, Null, Object, Class, Array, Func, Param };
  K k = K::Error;
  ClassSym* cls = nullptr;    // Class
  std::uint32_t param = 0;    // Param: index among the class's type parameters
  std::vector<Type> args;     // Class: type arguments; Array: {element}; Func: parameters then the result

  static Type of(K k) {
    Type t;
    t.k = k;
    return t;
  }
  static Type array_of(Type element) {
    Type t = of(K::Array);
    t.args.push_back(std::move(element));
    return t;
  }
  bool is_ref() const { return k == K::String || k == K::Null || k == K::Object || k == K::Class || k == K::Array ||
                               k == K::Func || k == K::Param; }
  bool is_error() const { return k == K::Error; }
  const Type& element() const { return args[0]; }
  const Type& result() const { return args.back(); }
  std::size_t func_arity() const { return args.size() - 1; }
  friend bool operator==(const Type&, const Type&) = default;
};

/// How a type is written in messages and listings (`Vector<Task>`, `fn(int): bool`).
std::string type_name(const Type& t);

struct FieldSym {
  std::string name;
  Type type;            // in terms of the declaring class's type parameters
  bool is_ref = false;
  std::uint32_t index = 0;  // among the class's reference or scalar fields
  ClassSym* owner = nullptr;
};

struct MethodSym {
  std::string name;
  FuncDecl* decl = nullptr;
  ClassSym* owner = nullptr;
  std::vector<Type> params;  // without `this`, in the owner's type parameters
  Type result = Type::of(Type::K::Void);
  std::uint32_t function = 0;  // Module function index
  std::int32_t vslot = -1;     // vtable slot, or -1 (no class overrides it: called directly)
  bool is_abstract = false;
  bool overridden = false;     // some subclass overrides it
};

struct ClassSym {
  std::string name;
  ClassDecl* decl = nullptr;  // null for lambda classes
  std::uint32_t index = 0;    // Module class index
  std::vector<std::string> type_params;
  ClassSym* super = nullptr;
  Type super_type;            // the superclass with arguments in this class's parameters
  std::vector<ClassSym*> subclasses;
  bool dispatched = false;    // has the $class field and a vtable
  bool is_abstract = false;
  bool is_interface = false;
  std::vector<Type> interfaces;  // `implements` (an interface: `extends`), in this class's type parameters
  std::vector<Type> bounds;      // per type parameter: its interface bound, or Error for none
  std::vector<FieldSym> fields;  // inherited first; $class is fields[0] when dispatched
  std::uint32_t ref_fields = 0, scalar_fields = 0;
  std::map<std::string, MethodSym*> methods;  // own and inherited (the most derived)
  std::vector<MethodSym*> vtable;
  std::uint32_t first_field = 0;  // Module::fields index of fields[0]

  const FieldSym* field(const std::string& n) const {
    for (const FieldSym& f : fields)
      if (f.name == n) return &f;
    return nullptr;
  }
  MethodSym* method(const std::string& n) const {
    const auto it = methods.find(n);
    return it == methods.end() ? nullptr : it->second;
  }
  bool is_subclass_of(const ClassSym* other) const {
    for (const ClassSym* c = this; c != nullptr; c = c->super)
      if (c == other) return true;
    return false;
  }
};

/// The class type of `c` as its own code sees it: its type parameters as arguments.
Type own_type(ClassSym& c);

/// Replaces type parameters in `t` by `args` (an erased parameter stays Object when
/// `args` is empty, as inside the generic class itself it stays a parameter).
Type substitute(const Type& t, const std::vector<Type>& args);

/// The type `t` (a class or interface type) seen as its ancestor `target` (a
/// superclass, or an interface it implements or extends, directly or through an
/// ancestor) with that ancestor's type arguments; Error when `target` is not one.
Type as_ancestor(const Type& t, const ClassSym* target);

/// Whether the class or interface type `from` implements or extends the interface
/// type `to` (itself or through an ancestor).
bool implements(const Type& from, const Type& to);

/// Whether a value of type `from` may be stored where `to` is expected.
bool assignable(const Type& from, const Type& to);

}  // namespace gcvm::vm::tern
