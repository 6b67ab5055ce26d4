// The .gasm assembler: source text to a type-checked Module (docs/gasm.md).
//
// Passes: lex → parse (syntax errors) → declare classes, globals and function
// signatures → assemble each function body (names, types, operand counts, labels).
// Every pass keeps going after an error, so one run reports every problem it can see;
// at the end, AssemblyError carries them all as `file:line:col: message`.
//
// Typing is static and sound: a slot's type is its declaration, there are no casts,
// and objects only come from `new`/`newarray`, so the interpreter needs no run-time
// type checks, only null and bounds checks. Mnemonics are generic (`add` works on
// ints and floats); the assembler picks the opcode from the operand types, uses the
// immediate superinstructions (`ADD_LI`, `BLT_LI`, ...) for literals that fit 32
// bits, and loads other literals and globals into scratch slots where an opcode needs
// a local.
#pragma once

#include <string>
#include <string_view>

#include "vm/asm/diagnostics.hpp"
#include "vm/bytecode/module.hpp"

namespace gcvm::vm {

/// Assembles `source` (named `file` in messages). Throws AssemblyError.
Module assemble(std::string_view source, const std::string& file);

/// Reads and assembles a file; a missing or unreadable file is an InputError.
Module assemble_file(const std::string& path);

}  // namespace gcvm::vm
