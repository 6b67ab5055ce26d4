#include "vm/asm/parser.hpp"

namespace gcvm::vm {

namespace {

/// Thrown inside a line to abandon it after a syntax error (caught per line).
struct LineAbandoned {};

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, Diagnostics& diag) : toks_(tokens), diag_(diag) {}

  ProgramAst run() {
    while (!at(Tok::End)) {
      if (accept(Tok::Newline)) continue;
      guarded([&] { top_level(); });
    }
    return std::move(program_);
  }

 private:
  const Token& peek(std::size_t ahead = 0) const {
    return toks_[std::min(pos_ + ahead, toks_.size() - 1)];
  }
  bool at(Tok kind) const { return peek().kind == kind; }
  bool at_word(std::string_view word) const { return at(Tok::Ident) && peek().text == word; }
  bool accept(Tok kind) {
    if (!at(kind)) return false;
    ++pos_;
    return true;
  }
  const Token& take() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }

  [[noreturn]] void fail(const Token& at_token, const std::string& message) {
    diag_.error(at_token.loc, message);
    throw LineAbandoned{};
  }
  std::string describe(const Token& t) const {
    if (t.kind == Tok::Ident) return "'" + t.text + "'";
    if (t.kind == Tok::Int || t.kind == Tok::Float) return "number " + t.text;
    if (t.kind == Tok::String) return "a string";
    return std::string(token_name(t.kind));
  }
  const Token& expect(Tok kind, std::string_view what) {
    if (!at(kind)) fail(peek(), "expected " + std::string(what) + ", found " + describe(peek()));
    return take();
  }
  void expect_line_end() {
    if (!at(Tok::Newline) && !at(Tok::End)) fail(peek(), "expected end of line, found " + describe(peek()));
    accept(Tok::Newline);
  }
  void skip_line() {
    while (!at(Tok::Newline) && !at(Tok::End)) ++pos_;
    accept(Tok::Newline);
  }
  template <typename F>
  void guarded(F&& body) {
    try {
      body();
    } catch (const LineAbandoned&) {
      skip_line();
    }
  }

  TypeExpr type() {
    const Token& name = expect(Tok::Ident, "a type");
    TypeExpr t{name.text, 0, name.loc};
    while (accept(Tok::LBracket)) {
      expect(Tok::RBracket, "']'");
      ++t.dims;
    }
    return t;
  }
  Declaration declaration() {
    const Token& name = expect(Tok::Ident, "a name");
    expect(Tok::Colon, "':' and a type");
    return {name.text, type(), name.loc};
  }

  void top_level() {
    const Token& word = peek();
    if (at_word("class")) {
      ++pos_;
      class_decl(word);
    } else if (at_word("global")) {
      ++pos_;
      do program_.globals.push_back(declaration());
      while (accept(Tok::Comma));
      expect_line_end();
    } else if (at_word("func")) {
      ++pos_;
      function(word);
    } else {
      fail(word, "expected 'class', 'global' or 'func', found " + describe(word));
    }
  }

  void class_decl(const Token& keyword) {
    ClassDecl cls;
    cls.loc = keyword.loc;
    cls.name = expect(Tok::Ident, "a class name").text;
    expect_line_end();
    program_.classes.push_back(std::move(cls));
    ClassDecl& out = program_.classes.back();
    while (true) {
      if (at(Tok::End)) {
        diag_.error(keyword.loc, "class '" + out.name + "' has no 'end'");
        return;
      }
      if (accept(Tok::Newline)) continue;
      if (at_word("end")) {
        ++pos_;
        guarded([&] { expect_line_end(); });
        return;
      }
      if (at_word("func") || at_word("class") || at_word("global")) {
        diag_.error(keyword.loc, "class '" + out.name + "' has no 'end'");
        return;
      }
      guarded([&] {
        out.fields.push_back(declaration());
        expect_line_end();
      });
    }
  }

  void function(const Token& keyword) {
    FunctionDecl fn;
    fn.loc = keyword.loc;
    bool header_ok = false;
    guarded([&] {
      fn.name = expect(Tok::Ident, "a function name").text;
      expect(Tok::LParen, "'('");
      if (!at(Tok::RParen)) {
        do fn.params.push_back(declaration());
        while (accept(Tok::Comma));
      }
      expect(Tok::RParen, "')'");
      if (accept(Tok::Arrow)) fn.result = type();
      expect_line_end();
      header_ok = true;
    });
    while (true) {
      if (at(Tok::End) || at_word("func") || at_word("class") || at_word("global")) {
        diag_.error(keyword.loc, "function '" + fn.name + "' has no 'end'");
        break;
      }
      if (accept(Tok::Newline)) continue;
      if (at_word("end") && (peek(1).kind == Tok::Newline || peek(1).kind == Tok::End)) {
        fn.end_loc = take().loc;
        accept(Tok::Newline);
        break;
      }
      guarded([&] { body_line(fn); });
    }
    if (header_ok) program_.functions.push_back(std::move(fn));
  }

  void body_line(FunctionDecl& fn) {
    if (at_word("local") && peek(1).kind == Tok::Ident) {
      ++pos_;
      do fn.locals.push_back(declaration());
      while (accept(Tok::Comma));
      return expect_line_end();
    }
    const Token& first = expect(Tok::Ident, "an instruction or a label");
    if (accept(Tok::Colon)) {
      BodyItem label;
      label.is_label = true;
      label.label = first.text;
      label.loc = first.loc;
      fn.body.push_back(std::move(label));
      if (accept(Tok::Newline) || at(Tok::End)) return;
      const Token& mnemonic = expect(Tok::Ident, "an instruction");
      return instruction(fn, mnemonic);
    }
    instruction(fn, first);
  }

  void instruction(FunctionDecl& fn, const Token& mnemonic) {
    BodyItem item;
    item.loc = mnemonic.loc;
    item.instruction.mnemonic = mnemonic.text;
    item.instruction.loc = mnemonic.loc;
    if (!at(Tok::Newline) && !at(Tok::End)) {
      do item.instruction.operands.push_back(operand());
      while (accept(Tok::Comma));
    }
    expect_line_end();
    fn.body.push_back(std::move(item));
  }

  /// `nested`: an element index or call argument, which must be a plain name or literal
  /// (this also bounds the parser's recursion on hostile input).
  Operand operand(bool nested = false) {
    const Token& t = take();
    Operand op;
    op.loc = t.loc;
    switch (t.kind) {
      case Tok::Int: op.kind = Operand::Kind::Int; op.int_value = t.int_value; return op;
      case Tok::Float: op.kind = Operand::Kind::Float; op.float_value = t.float_value; return op;
      case Tok::String: op.kind = Operand::Kind::String; op.name = t.text; return op;
      case Tok::Ident: break;
      default: --pos_; fail(t, "expected an operand, found " + describe(t));
    }
    op.name = t.text;
    if (t.text == "null") {
      op.kind = Operand::Kind::Null;
      return op;
    }
    if (nested && (at(Tok::Dot) || at(Tok::LBracket) || at(Tok::LParen)))
      fail(peek(), "an index or call argument must be a plain name or literal, found '" + t.text + peek().text + "...'");
    if (accept(Tok::Dot)) {
      op.kind = Operand::Kind::Field;
      op.member = expect(Tok::Ident, "a field name after '.'").text;
    } else if (accept(Tok::LBracket)) {
      op.kind = Operand::Kind::Element;
      op.args.push_back(operand(true));
      expect(Tok::RBracket, "']'");
    } else if (accept(Tok::LParen)) {
      op.kind = Operand::Kind::Call;
      if (!at(Tok::RParen)) {
        do op.args.push_back(operand(true));
        while (accept(Tok::Comma));
      }
      expect(Tok::RParen, "')'");
    }
    return op;
  }

  const std::vector<Token>& toks_;
  Diagnostics& diag_;
  std::size_t pos_ = 0;
  ProgramAst program_;
};

}  // namespace

ProgramAst parse(const std::vector<Token>& tokens, Diagnostics& diagnostics) {
  return Parser(tokens, diagnostics).run();
}

}  // namespace gcvm::vm
