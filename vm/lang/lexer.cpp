#include "vm/lang/lexer.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace gcvm::vm::tern {

std::string_view spelling(Tok kind) {
  switch (kind) {
    case Tok::Ident: return "a name";
    case Tok::Int: return "an integer";
    case Tok::Float: return "a float";
    case Tok::String: return "a string";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::Comma: return "','";
    case Tok::Semicolon: return "';'";
    case Tok::Colon: return "':'";
    case Tok::Dot: return "'.'";
    case Tok::Arrow: return "'=>'";
    case Tok::Plus: return "'+'";
    case Tok::Minus: return "'-'";
    case Tok::Star: return "'*'";
    case Tok::Slash: return "'/'";
    case Tok::Percent: return "'%'";
    case Tok::Amp: return "'&'";
    case Tok::Pipe: return "'|'";
    case Tok::Caret: return "'^'";
    case Tok::Tilde: return "'~'";
    case Tok::Bang: return "'!'";
    case Tok::Shl: return "'<<'";
    case Tok::Shr: return "'>>'";
    case Tok::AndAnd: return "'&&'";
    case Tok::OrOr: return "'||'";
    case Tok::Eq: return "'='";
    case Tok::EqEq: return "'=='";
    case Tok::NotEq: return "'!='";
    case Tok::Lt: return "'<'";
    case Tok::Le: return "'<='";
    case Tok::Gt: return "'>'";
    case Tok::Ge: return "'>='";
    case Tok::PlusEq: return "'+='";
    case Tok::MinusEq: return "'-='";
    case Tok::StarEq: return "'*='";
    case Tok::SlashEq: return "'/='";
    case Tok::End: return "the end of the file";
  }
  return "?";
}

namespace {

class Lexer {
 public:
  Lexer(std::string_view src, Diagnostics& d) : src_(src), diag_(d) {}

  std::vector<Token> run() {
    for (;;) {
      skip_space();
      Token t;
      t.loc = {line_, col_};
      if (pos_ >= src_.size()) {
        out_.push_back(t);
        return std::move(out_);
      }
      const char c = src_[pos_];
      if (is_alpha(c)) {
        const std::size_t start = pos_;
        while (pos_ < src_.size() && (is_alpha(src_[pos_]) || is_digit(src_[pos_]))) advance();
        t.kind = Tok::Ident;
        t.text = std::string(src_.substr(start, pos_ - start));
      } else if (is_digit(c)) {
        number(t);
      } else if (c == '"') {
        string(t);
      } else {
        if (!punctuation(t)) {
          diag_.error(t.loc, std::string("unexpected character '") + printable(c) + "'");
          advance();
          continue;
        }
      }
      out_.push_back(std::move(t));
    }
  }

 private:
  static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static std::string printable(char c) {
    if (c >= 32 && c < 127) return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
    return buf;
  }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }
  void advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skip_space() {
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') advance();
      } else if (c == '/' && peek(1) == '*') {
        const SourceLoc start{line_, col_};
        advance();
        advance();
        while (pos_ < src_.size() && !(src_[pos_] == '*' && peek(1) == '/')) advance();
        if (pos_ >= src_.size()) {
          diag_.error(start, "unterminated comment");
          return;
        }
        advance();
        advance();
      } else {
        return;
      }
    }
  }
  void number(Token& t) {
    const std::size_t start = pos_;
    bool is_float = false;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
      advance();
      advance();
      while (pos_ < src_.size() && std::isxdigit(static_cast<unsigned char>(src_[pos_]))) advance();
    } else {
      while (is_digit(peek())) advance();
      if (peek() == '.' && is_digit(peek(1))) {
        is_float = true;
        advance();
        while (is_digit(peek())) advance();
      }
      if (peek() == 'e' || peek() == 'E') {
        const char sign = peek(1);
        if (is_digit(sign) || ((sign == '+' || sign == '-') && is_digit(peek(2)))) {
          is_float = true;
          advance();
          advance();
          while (is_digit(peek())) advance();
        }
      }
    }
    if (is_alpha(peek())) {
      diag_.error(t.loc, "a number runs into a name");
      while (is_alpha(peek()) || is_digit(peek())) advance();
    }
    const std::string text(src_.substr(start, pos_ - start));
    errno = 0;
    if (is_float) {
      t.kind = Tok::Float;
      t.float_value = std::strtod(text.c_str(), nullptr);
    } else {
      t.kind = Tok::Int;
      const unsigned long long v = std::strtoull(text.c_str(), nullptr, 0);
      if (errno == ERANGE || v > 9223372036854775808ull) diag_.error(t.loc, "integer literal " + text + " out of range");
      t.int_value = static_cast<std::int64_t>(v);  // 2^63 is only valid negated (checked by the compiler)
      t.text = text;
    }
  }
  void string(Token& t) {
    t.kind = Tok::String;
    advance();
    for (;;) {
      if (pos_ >= src_.size() || src_[pos_] == '\n') {
        diag_.error(t.loc, "unterminated string");
        return;
      }
      const char c = src_[pos_];
      if (c == '"') {
        advance();
        return;
      }
      if (c == '\\') {
        const SourceLoc at{line_, col_};
        advance();
        const char e = peek();
        if (e == 'n') t.text += '\n';
        else if (e == 't') t.text += '\t';
        else if (e == '"') t.text += '"';
        else if (e == '\\') t.text += '\\';
        else if (e == '0') t.text += '\0';
        else diag_.error(at, std::string("unknown escape '\\") + printable(e) + "'");
        if (pos_ < src_.size() && e != '\n') advance();
        continue;
      }
      t.text += c;
      advance();
    }
  }
  bool punctuation(Token& t) {
    struct P {
      const char* text;
      Tok kind;
    };
    static constexpr P kTable[] = {
        {"<<", Tok::Shl},     {">>", Tok::Shr},     {"&&", Tok::AndAnd},  {"||", Tok::OrOr},   {"==", Tok::EqEq},
        {"!=", Tok::NotEq},   {"<=", Tok::Le},      {">=", Tok::Ge},      {"=>", Tok::Arrow},  {"+=", Tok::PlusEq},
        {"-=", Tok::MinusEq}, {"*=", Tok::StarEq},  {"/=", Tok::SlashEq}, {"(", Tok::LParen},  {")", Tok::RParen},
        {"{", Tok::LBrace},   {"}", Tok::RBrace},   {"[", Tok::LBracket}, {"]", Tok::RBracket}, {",", Tok::Comma},
        {";", Tok::Semicolon}, {":", Tok::Colon},   {".", Tok::Dot},      {"+", Tok::Plus},    {"-", Tok::Minus},
        {"*", Tok::Star},     {"/", Tok::Slash},    {"%", Tok::Percent},  {"&", Tok::Amp},     {"|", Tok::Pipe},
        {"^", Tok::Caret},    {"~", Tok::Tilde},    {"!", Tok::Bang},     {"<", Tok::Lt},      {">", Tok::Gt},
        {"=", Tok::Eq},
    };
    for (const P& p : kTable) {
      const std::string_view text(p.text);
      if (src_.substr(pos_, text.size()) == text) {
        t.kind = p.kind;
        for (std::size_t i = 0; i < text.size(); ++i) advance();
        return true;
      }
    }
    return false;
  }

  std::string_view src_;
  Diagnostics& diag_;
  std::size_t pos_ = 0;
  std::uint32_t line_ = 1;
  std::uint32_t col_ = 1;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> lex(std::string_view source, Diagnostics& diagnostics) { return Lexer(source, diagnostics).run(); }

}  // namespace gcvm::vm::tern
