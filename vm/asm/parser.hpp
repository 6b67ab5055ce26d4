// The .gasm parser: tokens to ProgramAst. Grammar (one construct per line):
//
//   program  := { class | global | func | empty line }
//   class    := 'class' NAME NL { NAME ':' type NL } 'end'
//   global   := 'global' decl { ',' decl }
//   func     := 'func' NAME '(' [ decl { ',' decl } ] ')' [ '->' type ] NL
//               { 'local' decl { ',' decl } | NAME ':' [ instr ] | instr } 'end'
//   decl     := NAME ':' type          type := NAME { '[' ']' }
//   instr    := MNEMONIC [ operand { ',' operand } ]
//   operand  := simple | NAME '.' NAME | NAME '[' simple ']' | NAME '(' [ simple { ',' simple } ] ')'
//   simple   := INT | FLOAT | STRING | 'null' | NAME
//
// A syntax error is reported and the parser resumes at the next line, so one pass
// finds the syntax errors of every line.
#pragma once

#include <vector>

#include "vm/asm/ast.hpp"
#include "vm/asm/lexer.hpp"

namespace gcvm::vm {

ProgramAst parse(const std::vector<Token>& tokens, Diagnostics& diagnostics);

}  // namespace gcvm::vm
