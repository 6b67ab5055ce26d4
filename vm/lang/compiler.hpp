// The Tern compiler: a source file to a Module (vm/bytecode/module.hpp) that the
// interpreter runs and `gcvm disasm` lists (docs/tern.md).
//
// Passes: parse the program and the standard-library modules it imports (vm/lang/
// stdlib, built into the binary) → declare classes (layout, methods, vtables),
// functions and globals → for each function, resolve its locals (resolver.hpp), then
// check and generate its code (codegen.cpp), lambdas last. Every pass keeps going
// after an error; at the end AssemblyError carries every error as
// `file:line:col: message`, as for gasm.
#pragma once

#include <string>
#include <string_view>

#include "vm/asm/diagnostics.hpp"
#include "vm/bytecode/module.hpp"

namespace gcvm::vm {

/// Compiles Tern `source` (named `file` in messages). Throws AssemblyError.
Module compile_tern(std::string_view source, const std::string& file);

/// Reads and compiles a .tern file; a missing or unreadable file is an InputError.
Module compile_tern_file(const std::string& path);

/// The standard-library module `name` (one of tern_stdlib_names()), or null.
const char* tern_stdlib_module(std::string_view name);

/// The standard library's module names, in alphabetical order, separated by ", ".
std::string tern_stdlib_names();

}  // namespace gcvm::vm
