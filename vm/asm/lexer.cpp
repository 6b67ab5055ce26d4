#include "vm/asm/lexer.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace gcvm::vm {

std::string_view token_name(Tok kind) {
  switch (kind) {
    case Tok::Ident: return "identifier";
    case Tok::Int: return "integer";
    case Tok::Float: return "float";
    case Tok::String: return "string";
    case Tok::Comma: return "','";
    case Tok::Colon: return "':'";
    case Tok::Dot: return "'.'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::Arrow: return "'->'";
    case Tok::Newline: return "end of line";
    case Tok::End: return "end of file";
  }
  return "token";
}

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(std::string_view src, Diagnostics& diag) : src_(src), diag_(diag) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      const SourceLoc loc{line_, col()};
      if (c == '\n') {
        push(Tok::Newline, loc, "\n");
        ++pos_;
        ++line_;
        line_start_ = pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '#' || c == ';') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else if (ident_start(c)) {
        const std::size_t start = pos_;
        while (pos_ < src_.size() && ident_char(src_[pos_])) ++pos_;
        push(Tok::Ident, loc, std::string(src_.substr(start, pos_ - start)));
      } else if (digit(c) || (c == '-' && pos_ + 1 < src_.size() && digit(src_[pos_ + 1]))) {
        number(loc);
      } else if (c == '"') {
        string(loc);
      } else if (c == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '>') {
        push(Tok::Arrow, loc, "->");
        pos_ += 2;
      } else {
        Tok kind = Tok::End;
        switch (c) {
          case ',': kind = Tok::Comma; break;
          case ':': kind = Tok::Colon; break;
          case '.': kind = Tok::Dot; break;
          case '[': kind = Tok::LBracket; break;
          case ']': kind = Tok::RBracket; break;
          case '(': kind = Tok::LParen; break;
          case ')': kind = Tok::RParen; break;
          default: break;
        }
        if (kind == Tok::End) {
          const unsigned char u = static_cast<unsigned char>(c);
          diag_.error(loc, std::isprint(u) ? "unexpected character '" + std::string(1, c) + "'"
                                           : "unexpected byte 0x" + hex(u));
        } else {
          push(kind, loc, std::string(1, c));
        }
        ++pos_;
      }
    }
    push(Tok::Newline, {line_, col()}, "\n");
    push(Tok::End, {line_, col()}, "");
    return std::move(tokens_);
  }

 private:
  static std::string hex(unsigned v) {
    const char* digits = "0123456789abcdef";
    return {digits[v >> 4], digits[v & 15]};
  }
  std::uint32_t col() const { return static_cast<std::uint32_t>(pos_ - line_start_ + 1); }
  void push(Tok kind, SourceLoc loc, std::string text) { tokens_.push_back({kind, loc, std::move(text), 0, 0}); }

  void number(SourceLoc loc) {
    const std::size_t start = pos_;
    if (src_[pos_] == '-') ++pos_;
    const bool is_hex = pos_ + 1 < src_.size() && src_[pos_] == '0' && (src_[pos_ + 1] == 'x' || src_[pos_ + 1] == 'X');
    bool is_float = false;
    if (is_hex) pos_ += 2;
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (ident_char(c)) {
        if (!is_hex && (c == 'e' || c == 'E')) {
          is_float = true;
          if (pos_ + 1 < src_.size() && (src_[pos_ + 1] == '-' || src_[pos_ + 1] == '+')) ++pos_;
        }
        ++pos_;
      } else if (c == '.' && !is_hex) {
        is_float = true;
        ++pos_;
      } else {
        break;
      }
    }
    const std::string text(src_.substr(start, pos_ - start));
    Token tok{is_float ? Tok::Float : Tok::Int, loc, text, 0, 0};
    if (is_float) {
      char* end = nullptr;
      tok.float_value = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size()) diag_.error(loc, "malformed number '" + text + "'");
    } else {
      const bool negative = text[0] == '-';
      const char* first = text.data() + (negative ? 1 : 0) + (is_hex ? 2 : 0);
      const char* last = text.data() + text.size();
      std::uint64_t magnitude = 0;
      const auto [end, ec] = std::from_chars(first, last, magnitude, is_hex ? 16 : 10);
      const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
      if (end != last || first == last)
        diag_.error(loc, "malformed number '" + text + "'");
      else if (ec == std::errc::result_out_of_range || magnitude > limit)
        diag_.error(loc, "integer " + text + " does not fit 64 bits");
      tok.int_value = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
    }
    tokens_.push_back(std::move(tok));  // even when malformed, so the parser does not report it again
  }

  void string(SourceLoc loc) {
    ++pos_;
    std::string value;
    while (true) {
      if (pos_ >= src_.size() || src_[pos_] == '\n') {
        diag_.error(loc, "unterminated string");
        break;
      }
      const char c = src_[pos_++];
      if (c == '"') break;
      if (c != '\\') {
        value += c;
        continue;
      }
      const SourceLoc esc{line_, col() - 1};
      if (pos_ >= src_.size() || src_[pos_] == '\n') {
        diag_.error(loc, "unterminated string");
        break;
      }
      const char e = src_[pos_++];
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case '"': value += '"'; break;
        case '\\': value += '\\'; break;
        default:
          diag_.error(esc, std::string("unknown escape '\\") +
                               (std::isprint(static_cast<unsigned char>(e)) ? std::string(1, e) : "?") + "'");
      }
    }
    push(Tok::String, loc, std::move(value));
  }

  std::string_view src_;
  Diagnostics& diag_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;
  std::uint32_t line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex(std::string_view source, Diagnostics& diagnostics) { return Lexer(source, diagnostics).run(); }

}  // namespace gcvm::vm
