// Human-readable listing of a Module (`gcvm disasm`): classes with their SOA field
// indices, globals, and each function's frame (slots, reference slots) and code, one
// instruction per line with its word offset, operands decoded by kind and source line.
#pragma once

#include <string>

#include "vm/bytecode/module.hpp"

namespace gcvm::vm {

std::string disassemble(const Module& module);

}  // namespace gcvm::vm
