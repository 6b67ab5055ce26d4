// Tern's resolver: links names to local variables and finds what lambdas capture.
//
// It runs on one function (or method) at a time, before code generation, because the
// code for a function depends on its lambdas: a local that a lambda captures and that
// is assigned after its declaration lives in a heap box (Var::boxed) from its
// declaration on, so the function and the lambda share it. A lambda in a method always
// captures `this`. Names that are not locals (fields, globals, functions) stay
// unresolved here; the code generator looks them up.
#pragma once

#include "vm/lang/ast.hpp"

namespace gcvm::vm::tern {

/// Resolves the locals of `f` and of the lambdas inside it. `in_method`: f is a method.
void resolve_locals(FuncDecl& f, bool in_method);

}  // namespace gcvm::vm::tern
