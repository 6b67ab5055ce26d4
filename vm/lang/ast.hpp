// Tern's syntax tree, as the parser builds it (docs/tern.md describes the language).
//
// The parser fills in syntax only. The resolver (resolver.hpp) then links every name
// that denotes a local variable or parameter to its Var and marks which variables
// lambdas capture; the code generator (codegen.hpp) does the rest of name resolution
// (fields, globals, functions, classes) and all type checking while it emits code.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vm/asm/diagnostics.hpp"
#include "vm/lang/lexer.hpp"

namespace gcvm::vm::tern {

/// A type as written. Named: `name` with optional `args` (`Vector<Task>`); Array:
/// args[0] is the element type; Func: `fn(P, ...): R`, args are the parameter types
/// and `result` the result type (absent: none).
struct TypeExpr {
  enum class Kind : std::uint8_t { Named, Array, Func } kind = Kind::Named;
  SourceLoc loc;
  std::string name;
  std::vector<TypeExpr> args;
  std::vector<TypeExpr> result;  // Func: zero or one
};

struct FuncDecl;

/// A local variable or parameter. `captured`: a lambda reads or writes it;
/// `assigned`: it is assigned after its declaration. A captured and assigned variable
/// lives in a heap box so that the lambda and its function share it.
struct Var {
  std::string name;
  SourceLoc loc;
  FuncDecl* owner = nullptr;
  bool captured = false;
  bool assigned = false;
  bool boxed() const { return captured && assigned; }
};

enum class ExprKind : std::uint8_t {
  IntLit, FloatLit, BoolLit, StringLit, Null, This,
  Name,        // name; var set by the resolver when it is a local
  Unary,       // op kids[0]
  Binary,      // kids[0] op kids[1] (&& and || included)
  Call,        // name(kids...): a function, a builtin, a method of this, or a local of function type
  MethodCall,  // kids[0].name(kids[1...])
  SuperCall,   // super.name(kids...)
  Field,       // kids[0].name
  Index,       // kids[0][kids[1]]
  New,         // new type(kids...)
  NewArray,    // new type[kids[0]]  (type is the element type)
  Lambda,      // fn(params): R { body }
};

struct Expr {
  ExprKind kind = ExprKind::Null;
  SourceLoc loc;
  Tok op = Tok::End;
  std::string name;
  std::int64_t int_value = 0;
  double float_value = 0;
  std::vector<std::unique_ptr<Expr>> kids;
  TypeExpr type;
  std::unique_ptr<FuncDecl> lambda;
  Var* var = nullptr;
};
using ExprPtr = std::unique_ptr<Expr>;

enum class StmtKind : std::uint8_t { VarDecl, Assign, Expression, If, While, For, Return, Break, Continue, Block };

struct Stmt {
  StmtKind kind = StmtKind::Block;
  SourceLoc loc;
  Tok op = Tok::Eq;              // Assign: = += -= *= /=
  ExprPtr target;                // Assign: the place
  ExprPtr value;                 // VarDecl initializer, Assign value, Expression, If/While/For condition, Return value
  std::unique_ptr<Var> var;      // VarDecl
  bool has_type = false;         // VarDecl: `var x: T`
  TypeExpr type;
  std::vector<std::unique_ptr<Stmt>> body;       // If then / While / For / Block
  std::vector<std::unique_ptr<Stmt>> else_body;  // If
  std::unique_ptr<Stmt> init, step;              // For
};
using StmtPtr = std::unique_ptr<Stmt>;

struct Param {
  std::unique_ptr<Var> var;
  TypeExpr type;
};

struct FuncDecl {
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;
  std::vector<TypeExpr> result;  // zero or one
  std::vector<StmtPtr> body;
  bool is_abstract = false;      // methods only: no body
  bool is_lambda = false;
  FuncDecl* enclosing = nullptr;          // lambdas: the function they appear in
  std::vector<Var*> captures;             // lambdas: outer variables used, in first-use order
  bool captures_this = false;             // lambdas inside methods
};

struct FieldDecl {
  std::string name;
  SourceLoc loc;
  TypeExpr type;
};

/// A class, or an interface (`is_interface`: no fields, no constructor, every method
/// abstract). `bounds[i]` is type parameter i's bound (`K: CustomHash<K>`), with an
/// empty name when it has none.
struct ClassDecl {
  std::string name;
  SourceLoc loc;
  std::vector<std::string> type_params;
  std::vector<TypeExpr> bounds;
  bool has_super = false;
  TypeExpr super;
  std::vector<TypeExpr> interfaces;  // `implements I, J<T>` (an interface: `extends`)
  bool is_abstract = false;
  bool is_interface = false;
  std::vector<FieldDecl> fields;
  std::vector<std::unique_ptr<FuncDecl>> methods;  // `init` is the constructor
};

struct GlobalDecl {
  std::string name;
  SourceLoc loc;
  TypeExpr type;
  bool has_type = false;
  ExprPtr value;
};

/// One source unit (the program, or one standard-library module).
struct Unit {
  std::string file;
  std::vector<std::pair<std::string, SourceLoc>> imports;
  std::vector<std::unique_ptr<ClassDecl>> classes;
  std::vector<std::unique_ptr<FuncDecl>> functions;
  std::vector<GlobalDecl> globals;
};

}  // namespace gcvm::vm::tern
