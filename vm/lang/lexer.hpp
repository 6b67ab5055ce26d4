// Tern's lexer: source text to tokens (docs/tern.md, "Lexical structure").
//
// Tokens carry their line and column (from 1). Comments (`// ...` to the end of the
// line, `/* ... */`) and white space separate tokens and are dropped. Keywords are
// plain identifiers here; the parser decides where a word is a keyword. A bad
// character, an unterminated string or comment, or a number out of range is reported
// to Diagnostics and lexing goes on, so one run sees every error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vm/asm/diagnostics.hpp"

namespace gcvm::vm::tern {

enum class Tok : std::uint8_t {
  Ident, Int, Float, String,
  LParen, RParen, LBrace, RBrace, LBracket, RBracket,
  Comma, Semicolon, Colon, Dot, Arrow,
  Plus, Minus, Star, Slash, Percent, Amp, Pipe, Caret, Tilde, Bang, Shl, Shr,
  AndAnd, OrOr, Eq, EqEq, NotEq, Lt, Le, Gt, Ge,
  PlusEq, MinusEq, StarEq, SlashEq,
  End,
};

/// How a token kind is spelled in messages ("'('", "a name", ...).
std::string_view spelling(Tok kind);

struct Token {
  Tok kind = Tok::End;
  SourceLoc loc;
  std::string text;        // identifier, or the string literal's decoded bytes
  std::int64_t int_value = 0;
  double float_value = 0;
};

/// Every token of `source`, ending with one Tok::End.
std::vector<Token> lex(std::string_view source, Diagnostics& diagnostics);

}  // namespace gcvm::vm::tern
