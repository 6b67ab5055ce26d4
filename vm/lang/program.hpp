// The compiler's view of a whole Tern program while it generates code: the symbols
// of every class, function and global (types.hpp), the Module being built, and the
// lambdas waiting to be compiled. compiler.cpp declares everything; codegen.cpp
// compiles function bodies against it.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "vm/asm/diagnostics.hpp"
#include "vm/bytecode/module.hpp"
#include "vm/lang/types.hpp"

namespace gcvm::vm::tern {

struct FunctionSym {
  FuncDecl* decl = nullptr;
  std::vector<Type> params;
  Type result = Type::of(Type::K::Void);
  std::uint32_t function = 0;
};

struct GlobalSym {
  Type type;
  std::uint32_t index = 0;
};

/// A lambda found while compiling a function, compiled after it.
struct PendingLambda {
  FuncDecl* decl = nullptr;
  ClassSym* cls = nullptr;        // its closure class
  ClassSym* this_class = nullptr; // the method's class when it captures `this`
  Type this_type;
  std::vector<Type> params;
  Type result;
  std::map<Var*, Type> captured;  // the types of the captured variables
  std::uint32_t function = 0;     // its Module function
};

struct Program {
  Program(Module& m, Diagnostics& d) : module(m), diag(d) {}

  Module& module;
  Diagnostics& diag;
  std::map<std::string, ClassSym*> classes;
  std::map<std::string, FunctionSym> functions;
  std::map<std::string, GlobalSym> globals;
  std::deque<ClassSym> class_storage;
  std::deque<MethodSym> method_storage;
  std::deque<PendingLambda> lambdas;
  std::vector<GlobalDecl*> global_inits;  // in declaration order, run at the start of main
  ClassSym* box_scalar = nullptr;          // the boxes of captured, assigned locals
  ClassSym* box_ref = nullptr;
  bool check_bounds = false;               // type arguments are checked against bounds once interfaces are known

  /// A new class symbol registered in the Module (fields are added by add_field, then
  /// finish_class writes the ClassInfo and reports, at `loc`, an object too large for a
  /// heap block: the class declaration's, or for a lambda's closure class the lambda's).
  ClassSym& new_class(const std::string& name);
  void add_field(ClassSym& c, const std::string& name, const Type& type);
  void finish_class(ClassSym& c, SourceLoc loc);
  /// The type written as `t`; `context` gives the type parameters in scope.
  Type resolve(const TypeExpr& t, const ClassSym* context);
  /// Reports each type argument of the class type `type` (written as `t`) that does not
  /// implement its parameter's bound; `context`'s bounds hold for its own parameters.
  void check_type_arguments(const TypeExpr& t, const Type& type, const ClassSym* context);
  /// Module index of field `name` of `c`.
  std::uint32_t field_ref(const ClassSym& c, const FieldSym& f) const;
  /// A new Module function with the given name and line; returns its index.
  std::uint32_t new_function(const std::string& name, std::uint32_t line);
};

/// Compiles the body of a function, method or lambda into its Module function.
/// `this_class`: the method's class (or null); `this_type` its type with parameters.
void compile_body(Program& p, FuncDecl& f, std::uint32_t function, ClassSym* this_class, const Type& this_type,
                  const std::vector<Type>& params, const Type& result, const PendingLambda* lambda);

}  // namespace gcvm::vm::tern
