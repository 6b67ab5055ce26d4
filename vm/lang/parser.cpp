#include "vm/lang/parser.hpp"

#include <string>
#include <utility>

namespace gcvm::vm::tern {

namespace {

struct SyntaxError {};

class Parser {
 public:
  Parser(std::vector<Token> tokens, Diagnostics& d) : t_(std::move(tokens)), diag_(d) {}

  Unit run(const std::string& file) {
    Unit u;
    u.file = file;
    while (!at(Tok::End)) {
      try {
        declaration(u);
      } catch (const SyntaxError&) {
        recover_declaration();
      }
    }
    return u;
  }

 private:
  const Token& cur() const { return t_[pos_]; }
  bool at(Tok k) const { return cur().kind == k; }
  bool at_word(std::string_view w) const { return cur().kind == Tok::Ident && cur().text == w; }
  bool at_word_ahead(std::size_t n, std::string_view w) const {
    return pos_ + n < t_.size() && t_[pos_ + n].kind == Tok::Ident && t_[pos_ + n].text == w;
  }
  Token take() {
    Token t = t_[pos_];
    if (t.kind != Tok::End) ++pos_;
    return t;
  }
  bool accept(Tok k) {
    if (!at(k)) return false;
    take();
    return true;
  }
  bool accept_word(std::string_view w) {
    if (!at_word(w)) return false;
    take();
    return true;
  }
  [[noreturn]] void fail(const std::string& message) {
    diag_.error(cur().loc, message);
    throw SyntaxError{};
  }

  /// The passes after the parser (resolver, type checks, code generator, the AST's
  /// destructors) recurse over the tree, so its nesting is bounded: statements in
  /// statements, expressions in expressions and types in types, counting each link of a
  /// chain the parser builds iteratively (`a + b + c`, `a.b.c`, `x[0][0]`, `int[][]`).
  static constexpr int kMaxNesting = 256;
  /// The levels one parse function adds; they end with it, also when it throws.
  class Nesting {
   public:
    explicit Nesting(Parser& p) : p_(p) {}
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    ~Nesting() { p_.nesting_ -= levels_; }
    void deeper() {
      if (p_.nesting_ == kMaxNesting)
        p_.fail("the program nests more than " + std::to_string(kMaxNesting) + " levels deep here");
      ++p_.nesting_;
      ++levels_;
    }

   private:
    Parser& p_;
    int levels_ = 0;
  };
  Token expect(Tok k, std::string_view what = {}) {
    if (at(k)) return take();
    fail("expected " + std::string(spelling(k)) + (what.empty() ? "" : " " + std::string(what)) + ", found " +
         describe(cur()));
  }
  /// Consumes a `>`, or the first half of a `>>` (nested type arguments).
  void expect_close_angle() {
    if (at(Tok::Shr)) {
      t_[pos_].kind = Tok::Gt;
      ++t_[pos_].loc.col;
      return;
    }
    expect(Tok::Gt, "to close the type arguments");
  }
  static std::string describe(const Token& t) {
    if (t.kind == Tok::Ident) return "'" + t.text + "'";
    return std::string(spelling(t.kind));
  }
  std::string name(std::string_view what) {
    if (!at(Tok::Ident)) fail("expected " + std::string(what) + ", found " + describe(cur()));
    if (is_keyword(cur().text)) fail("'" + cur().text + "' is a keyword, not " + std::string(what));
    return take().text;
  }
  static bool is_keyword(std::string_view w) {
    for (std::string_view k : {"class", "extends", "abstract", "fn", "var", "init", "return", "if", "else", "while",
                               "for", "break", "continue", "new", "null", "true", "false", "this", "super",
                               "import", "interface", "implements"})
      if (w == k) return true;
    return false;
  }

  void recover_declaration() {
    int depth = 0;
    while (!at(Tok::End)) {
      if (depth == 0 && (at_word("class") || at_word("interface") || at_word("fn") || at_word("abstract") ||
                         at_word("import") || at_word("var")))
        return;
      if (at(Tok::LBrace)) ++depth;
      if (at(Tok::RBrace) && --depth <= 0) {
        take();
        if (depth <= 0) return;
        continue;
      }
      take();
    }
  }
  void recover_statement() {
    int depth = 0;
    while (!at(Tok::End)) {
      if (at(Tok::LBrace)) ++depth;
      if (at(Tok::RBrace)) {
        if (depth == 0) return;
        --depth;
      }
      if (at(Tok::Semicolon) && depth == 0) {
        take();
        return;
      }
      take();
    }
  }

  void declaration(Unit& u) {
    if (accept_word("import")) {
      const SourceLoc loc = cur().loc;
      u.imports.emplace_back(name("a module name"), loc);
      expect(Tok::Semicolon, "after the import");
    } else if (at_word("class") || at_word("abstract")) {
      u.classes.push_back(class_decl());
    } else if (at_word("interface")) {
      u.classes.push_back(interface_decl());
    } else if (at_word("fn")) {
      take();
      u.functions.push_back(function(false));
    } else if (accept_word("var")) {
      GlobalDecl g;
      g.loc = cur().loc;
      g.name = name("a variable name");
      if (accept(Tok::Colon)) {
        g.has_type = true;
        g.type = type();
      }
      if (accept(Tok::Eq)) g.value = expression();
      if (!g.has_type && !g.value) diag_.error(g.loc, "global '" + g.name + "' needs a type or an initial value");
      expect(Tok::Semicolon, "after the global");
      u.globals.push_back(std::move(g));
    } else {
      fail("expected a declaration (class, interface, fn, var or import), found " + describe(cur()));
    }
  }

  std::unique_ptr<ClassDecl> class_decl() {
    auto c = std::make_unique<ClassDecl>();
    c->is_abstract = accept_word("abstract");
    if (!accept_word("class")) fail("expected 'class' after 'abstract'");
    c->loc = cur().loc;
    c->name = name("a class name");
    type_params(*c);
    if (accept_word("extends")) {
      c->has_super = true;
      c->super = type();
    }
    if (accept_word("implements")) {
      do c->interfaces.push_back(type()); while (accept(Tok::Comma));
    }
    expect(Tok::LBrace, "to open the class body");
    while (!at(Tok::RBrace) && !at(Tok::End)) {
      try {
        member(*c);
      } catch (const SyntaxError&) {
        recover_statement();
      }
    }
    expect(Tok::RBrace, "to close the class");
    return c;
  }

  /// `<T, K: Bound, ...>` after a class or interface name, if present.
  void type_params(ClassDecl& c) {
    if (!accept(Tok::Lt)) return;
    do {
      c.type_params.push_back(name("a type parameter"));
      c.bounds.emplace_back();
      if (accept(Tok::Colon)) c.bounds.back() = type();
    } while (accept(Tok::Comma));
    expect_close_angle();
  }

  /// `interface NAME<T...> [extends I, ...] { fn m(params): R; ... }`: every method
  /// abstract.
  std::unique_ptr<ClassDecl> interface_decl() {
    take();
    auto c = std::make_unique<ClassDecl>();
    c->is_interface = c->is_abstract = true;
    c->loc = cur().loc;
    c->name = name("an interface name");
    type_params(*c);
    if (accept_word("extends")) {
      do c->interfaces.push_back(type()); while (accept(Tok::Comma));
    }
    expect(Tok::LBrace, "to open the interface body");
    while (!at(Tok::RBrace) && !at(Tok::End)) {
      try {
        if (!accept_word("fn")) fail("an interface holds only method signatures (fn), found " + describe(cur()));
        if (at_word("init")) fail("an interface has no constructor");
        c->methods.push_back(function(true));
      } catch (const SyntaxError&) {
        recover_statement();
      }
    }
    expect(Tok::RBrace, "to close the interface");
    return c;
  }

  void member(ClassDecl& c) {
    if (accept_word("var")) {
      FieldDecl f;
      f.loc = cur().loc;
      f.name = name("a field name");
      expect(Tok::Colon, "before the field's type");
      f.type = type();
      expect(Tok::Semicolon, "after the field");
      c.fields.push_back(std::move(f));
    } else if (at_word("init")) {
      auto f = function(false);
      if (!f->result.empty()) diag_.error(f->loc, "a constructor has no result type");
      c.methods.push_back(std::move(f));
    } else if (at_word("abstract") || at_word("fn")) {
      const bool is_abstract = accept_word("abstract");
      if (!accept_word("fn")) fail("expected 'fn' after 'abstract'");
      c.methods.push_back(function(is_abstract));
    } else {
      fail("expected a field (var), a method (fn) or a constructor (init), found " + describe(cur()));
    }
  }

  /// After `fn`: NAME(params)[: T] { body }, or `;` instead of the body when abstract.
  std::unique_ptr<FuncDecl> function(bool is_abstract) {
    auto f = std::make_unique<FuncDecl>();
    f->loc = cur().loc;
    if (at_word("init")) f->name = take().text;
    else f->name = name("a function name");
    f->is_abstract = is_abstract;
    signature(*f);
    if (is_abstract) {
      expect(Tok::Semicolon, "after an abstract method");
      return f;
    }
    f->body = block();
    return f;
  }
  void signature(FuncDecl& f) {
    expect(Tok::LParen, "to open the parameters");
    if (!at(Tok::RParen)) {
      do {
        Param p;
        p.var = std::make_unique<Var>();
        p.var->loc = cur().loc;
        p.var->name = name("a parameter name");
        p.var->owner = &f;
        expect(Tok::Colon, "before the parameter's type");
        p.type = type();
        f.params.push_back(std::move(p));
      } while (accept(Tok::Comma));
    }
    expect(Tok::RParen, "to close the parameters");
    if (accept(Tok::Colon)) f.result.push_back(type());
  }

  TypeExpr type() {
    Nesting nest(*this);
    nest.deeper();
    TypeExpr t;
    t.loc = cur().loc;
    if (accept_word("fn")) {
      t.kind = TypeExpr::Kind::Func;
      expect(Tok::LParen, "to open the parameter types");
      if (!at(Tok::RParen)) {
        do t.args.push_back(type()); while (accept(Tok::Comma));
      }
      expect(Tok::RParen, "to close the parameter types");
      if (accept(Tok::Colon)) t.result.push_back(type());
      return t;
    }
    if (!at(Tok::Ident)) fail("expected a type, found " + describe(cur()));
    t.name = take().text;
    if (accept(Tok::Lt)) {
      do t.args.push_back(type()); while (accept(Tok::Comma));
      expect_close_angle();
    }
    return array_suffix(std::move(t));
  }
  TypeExpr array_suffix(TypeExpr t) {
    Nesting nest(*this);
    while (at(Tok::LBracket) && pos_ + 1 < t_.size() && t_[pos_ + 1].kind == Tok::RBracket) {
      nest.deeper();
      TypeExpr a;
      a.kind = TypeExpr::Kind::Array;
      a.loc = t.loc;
      take();
      take();
      a.args.push_back(std::move(t));
      t = std::move(a);
    }
    return t;
  }

  std::vector<StmtPtr> block() {
    expect(Tok::LBrace, "to open a block");
    std::vector<StmtPtr> out;
    while (!at(Tok::RBrace) && !at(Tok::End)) {
      try {
        out.push_back(statement());
      } catch (const SyntaxError&) {
        recover_statement();
      }
    }
    expect(Tok::RBrace, "to close the block");
    return out;
  }

  StmtPtr statement() {
    Nesting nest(*this);
    nest.deeper();
    auto s = std::make_unique<Stmt>();
    s->loc = cur().loc;
    if (at(Tok::LBrace)) {
      s->kind = StmtKind::Block;
      s->body = block();
    } else if (accept_word("if")) {
      s->kind = StmtKind::If;
      expect(Tok::LParen, "after 'if'");
      s->value = expression();
      expect(Tok::RParen, "after the condition");
      s->body = block();
      if (accept_word("else")) {
        if (at_word("if")) s->else_body.push_back(statement());
        else s->else_body = block();
      }
    } else if (accept_word("while")) {
      s->kind = StmtKind::While;
      expect(Tok::LParen, "after 'while'");
      s->value = expression();
      expect(Tok::RParen, "after the condition");
      s->body = block();
    } else if (accept_word("for")) {
      s->kind = StmtKind::For;
      expect(Tok::LParen, "after 'for'");
      if (!at(Tok::Semicolon)) s->init = simple_statement();
      expect(Tok::Semicolon, "after the loop's initialization");
      s->value = expression();
      expect(Tok::Semicolon, "after the loop's condition");
      if (!at(Tok::RParen)) s->step = simple_statement();
      expect(Tok::RParen, "to close the loop header");
      s->body = block();
    } else if (accept_word("return")) {
      s->kind = StmtKind::Return;
      if (!at(Tok::Semicolon)) s->value = expression();
      expect(Tok::Semicolon, "after the return");
    } else if (accept_word("break")) {
      s->kind = StmtKind::Break;
      expect(Tok::Semicolon, "after 'break'");
    } else if (accept_word("continue")) {
      s->kind = StmtKind::Continue;
      expect(Tok::Semicolon, "after 'continue'");
    } else {
      s = simple_statement();
      expect(Tok::Semicolon, "after the statement");
    }
    return s;
  }

  /// A variable declaration, an assignment or an expression (no `;`).
  StmtPtr simple_statement() {
    auto s = std::make_unique<Stmt>();
    s->loc = cur().loc;
    if (accept_word("var")) {
      s->kind = StmtKind::VarDecl;
      s->var = std::make_unique<Var>();
      s->var->loc = cur().loc;
      s->var->name = name("a variable name");
      if (accept(Tok::Colon)) {
        s->has_type = true;
        s->type = type();
      }
      if (accept(Tok::Eq)) s->value = expression();
      if (!s->has_type && !s->value) diag_.error(s->var->loc, "variable '" + s->var->name + "' needs a type or an initial value");
      return s;
    }
    ExprPtr e = expression();
    if (at(Tok::Eq) || at(Tok::PlusEq) || at(Tok::MinusEq) || at(Tok::StarEq) || at(Tok::SlashEq)) {
      s->kind = StmtKind::Assign;
      s->loc = cur().loc;
      s->op = take().kind;
      s->target = std::move(e);
      s->value = expression();
      return s;
    }
    s->kind = StmtKind::Expression;
    s->value = std::move(e);
    return s;
  }

  static int precedence(Tok k) {
    switch (k) {
      case Tok::OrOr: return 1;
      case Tok::AndAnd: return 2;
      case Tok::Pipe: return 3;
      case Tok::Caret: return 4;
      case Tok::Amp: return 5;
      case Tok::EqEq: case Tok::NotEq: return 6;
      case Tok::Lt: case Tok::Le: case Tok::Gt: case Tok::Ge: return 7;
      case Tok::Shl: case Tok::Shr: return 8;
      case Tok::Plus: case Tok::Minus: return 9;
      case Tok::Star: case Tok::Slash: case Tok::Percent: return 10;
      default: return 0;
    }
  }

  ExprPtr expression(int min_precedence = 1) {
    Nesting nest(*this);
    nest.deeper();
    ExprPtr left = unary();
    for (;;) {
      const int p = precedence(cur().kind);
      if (p < min_precedence || p == 0) return left;
      nest.deeper();
      auto e = std::make_unique<Expr>();
      e->kind = ExprKind::Binary;
      e->loc = cur().loc;
      e->op = take().kind;
      e->kids.push_back(std::move(left));
      e->kids.push_back(expression(p + 1));
      left = std::move(e);
    }
  }

  ExprPtr unary() {
    if (at(Tok::Minus) || at(Tok::Bang) || at(Tok::Tilde)) {
      Nesting nest(*this);
      nest.deeper();
      auto e = std::make_unique<Expr>();
      e->kind = ExprKind::Unary;
      e->loc = cur().loc;
      e->op = take().kind;
      e->kids.push_back(unary());
      return e;
    }
    return postfix(primary());
  }

  void arguments(Expr& e) {
    expect(Tok::LParen, "to open the arguments");
    if (!at(Tok::RParen)) {
      do e.kids.push_back(expression()); while (accept(Tok::Comma));
    }
    expect(Tok::RParen, "to close the arguments");
  }

  ExprPtr postfix(ExprPtr e) {
    Nesting nest(*this);
    for (;;) {
      if (at(Tok::Dot) || at(Tok::LBracket)) nest.deeper();
      if (at(Tok::Dot)) {
        take();
        auto m = std::make_unique<Expr>();
        m->loc = cur().loc;
        m->name = name("a field or method name");
        m->kids.push_back(std::move(e));
        if (at(Tok::LParen)) {
          m->kind = ExprKind::MethodCall;
          arguments(*m);
        } else {
          m->kind = ExprKind::Field;
        }
        e = std::move(m);
      } else if (at(Tok::LBracket)) {
        auto m = std::make_unique<Expr>();
        m->kind = ExprKind::Index;
        m->loc = take().loc;
        m->kids.push_back(std::move(e));
        m->kids.push_back(expression());
        expect(Tok::RBracket, "to close the index");
        e = std::move(m);
      } else {
        return e;
      }
    }
  }

  ExprPtr primary() {
    auto e = std::make_unique<Expr>();
    e->loc = cur().loc;
    if (at(Tok::Int)) {
      e->kind = ExprKind::IntLit;
      e->int_value = take().int_value;
    } else if (at(Tok::Float)) {
      e->kind = ExprKind::FloatLit;
      e->float_value = take().float_value;
    } else if (at(Tok::String)) {
      e->kind = ExprKind::StringLit;
      e->name = take().text;
    } else if (accept(Tok::LParen)) {
      e = expression();
      expect(Tok::RParen, "to close the parenthesis");
    } else if (accept_word("true") || accept_word("false")) {
      e->kind = ExprKind::BoolLit;
      e->int_value = t_[pos_ - 1].text == "true";
    } else if (accept_word("null")) {
      e->kind = ExprKind::Null;
    } else if (accept_word("this")) {
      e->kind = ExprKind::This;
    } else if (accept_word("super")) {
      e->kind = ExprKind::SuperCall;
      expect(Tok::Dot, "after 'super'");
      e->loc = cur().loc;
      if (at_word("init")) e->name = take().text;
      else e->name = name("a method name");
      arguments(*e);
    } else if (accept_word("new")) {
      TypeExpr t;
      t.loc = cur().loc;
      if (!at(Tok::Ident)) fail("expected a class or element type after 'new', found " + describe(cur()));
      t.name = take().text;
      if (accept(Tok::Lt)) {
        do t.args.push_back(type()); while (accept(Tok::Comma));
        expect_close_angle();
      }
      if (at(Tok::LBracket)) {
        t = array_suffix(std::move(t));
        e->kind = ExprKind::NewArray;
        expect(Tok::LBracket, "before the array length");
        e->kids.push_back(expression());
        expect(Tok::RBracket, "after the array length");
        e->type = array_suffix(std::move(t));
      } else {
        e->kind = ExprKind::New;
        e->type = std::move(t);
        arguments(*e);
      }
    } else if (at_word("fn")) {
      take();
      e->kind = ExprKind::Lambda;
      e->lambda = std::make_unique<FuncDecl>();
      e->lambda->loc = e->loc;
      e->lambda->name = "lambda";
      e->lambda->is_lambda = true;
      signature(*e->lambda);
      e->lambda->body = block();
    } else if (at(Tok::Ident)) {
      if (is_keyword(cur().text)) fail("unexpected keyword '" + cur().text + "' in an expression");
      e->name = take().text;
      if (at(Tok::LParen)) {
        e->kind = ExprKind::Call;
        arguments(*e);
      } else {
        e->kind = ExprKind::Name;
      }
    } else {
      fail("expected an expression, found " + describe(cur()));
    }
    return e;
  }

  std::vector<Token> t_;
  Diagnostics& diag_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace

Unit parse(std::string_view source, const std::string& file, Diagnostics& diagnostics) {
  return Parser(lex(source, diagnostics), diagnostics).run(file);
}

}  // namespace gcvm::vm::tern
