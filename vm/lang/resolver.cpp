#include "vm/lang/resolver.hpp"

#include <algorithm>
#include <vector>

namespace gcvm::vm::tern {

namespace {

class Resolver {
 public:
  explicit Resolver(bool in_method) : in_method_(in_method) {}

  void function(FuncDecl& f) {
    FuncDecl* const outer = current_;
    current_ = &f;
    if (f.is_lambda) {
      f.enclosing = outer;
      f.captures_this = in_method_;
    }
    scopes_.emplace_back();
    for (Param& p : f.params) {
      p.var->owner = &f;
      scopes_.back().push_back(p.var.get());
    }
    statements(f.body);
    scopes_.pop_back();
    current_ = outer;
  }

 private:
  void statements(std::vector<StmtPtr>& list) {
    scopes_.emplace_back();
    for (StmtPtr& s : list) statement(*s);
    scopes_.pop_back();
  }
  void statement(Stmt& s) {
    switch (s.kind) {
      case StmtKind::VarDecl:
        if (s.value) expression(*s.value);
        s.var->owner = current_;
        scopes_.back().push_back(s.var.get());
        break;
      case StmtKind::Assign:
        expression(*s.target);
        expression(*s.value);
        if (s.target->kind == ExprKind::Name && s.target->var != nullptr) s.target->var->assigned = true;
        break;
      case StmtKind::Expression:
      case StmtKind::Return:
        if (s.value) expression(*s.value);
        break;
      case StmtKind::If:
        expression(*s.value);
        statements(s.body);
        statements(s.else_body);
        break;
      case StmtKind::While:
        expression(*s.value);
        statements(s.body);
        break;
      case StmtKind::For:
        scopes_.emplace_back();
        if (s.init) statement(*s.init);
        expression(*s.value);
        if (s.step) statement(*s.step);
        statements(s.body);
        scopes_.pop_back();
        break;
      case StmtKind::Block: statements(s.body); break;
      case StmtKind::Break:
      case StmtKind::Continue: break;
    }
  }
  void expression(Expr& e) {
    if (e.kind == ExprKind::Lambda) {
      function(*e.lambda);
      return;
    }
    for (ExprPtr& k : e.kids) expression(*k);
    if (e.kind != ExprKind::Name && e.kind != ExprKind::Call) return;
    Var* v = lookup(e.name);
    if (v == nullptr) return;
    e.var = v;  // a Name, or a Call of a local of function type
    for (FuncDecl* f = current_; f != nullptr && f != v->owner; f = f->enclosing) {
      v->captured = true;
      if (std::find(f->captures.begin(), f->captures.end(), v) == f->captures.end()) f->captures.push_back(v);
    }
  }
  Var* lookup(const std::string& name) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      for (auto v = s->rbegin(); v != s->rend(); ++v)
        if ((*v)->name == name) return *v;
    return nullptr;
  }

  bool in_method_;
  FuncDecl* current_ = nullptr;
  std::vector<std::vector<Var*>> scopes_;
};

}  // namespace

void resolve_locals(FuncDecl& f, bool in_method) { Resolver(in_method).function(f); }

}  // namespace gcvm::vm::tern
