// Loading a guest program by its file extension: `.tern` files are compiled by the
// Tern compiler (vm/lang), everything else is assembled as gasm (vm/asm).
#pragma once

#include <string>

#include "vm/bytecode/module.hpp"

namespace gcvm::cli {

/// Compiles or assembles `path`. Throws AssemblyError or InputError.
vm::Module load_program(const std::string& path);

}  // namespace gcvm::cli
