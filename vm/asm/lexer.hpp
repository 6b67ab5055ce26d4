// The .gasm lexer: source text to tokens. The language is line-oriented, so newlines
// are tokens. Comments run from `#` or `;` to the end of the line.
//
// Tokens: identifiers [A-Za-z_][A-Za-z0-9_]*; integers (decimal or 0x hex, an optional
// leading '-', range of int64); floats (digits with '.' or an exponent); strings in
// double quotes with the escapes \n \t \" \\ ; punctuation , : . [ ] ( ) -> .
// A malformed token is reported to Diagnostics and skipped; lexing goes on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vm/asm/diagnostics.hpp"

namespace gcvm::vm {

enum class Tok { Ident, Int, Float, String, Comma, Colon, Dot, LBracket, RBracket, LParen, RParen, Arrow, Newline, End };

struct Token {
  Tok kind = Tok::End;
  SourceLoc loc;
  std::string text;  // identifier name, string value (escapes decoded), or the literal as written
  std::int64_t int_value = 0;
  double float_value = 0;
};

/// Human name of a token kind for messages ("identifier", "','", "end of line").
std::string_view token_name(Tok kind);

std::vector<Token> lex(std::string_view source, Diagnostics& diagnostics);

}  // namespace gcvm::vm
