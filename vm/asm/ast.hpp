// The parsed form of a .gasm program, before names and types are resolved. Every
// node keeps its source location for diagnostics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vm/asm/diagnostics.hpp"

namespace gcvm::vm {

/// A type as written: `int`, `float`, `Node`, `Node[]`, `int[][]`.
struct TypeExpr {
  std::string base;
  std::uint32_t dims = 0;
  SourceLoc loc;
  std::string text() const {
    std::string t = base;
    for (std::uint32_t i = 0; i < dims; ++i) t += "[]";
    return t;
  }
};

struct Operand;

/// `name`, a literal, `name.field`, `name[index]`, `name(args)` (call), or a string.
struct Operand {
  enum class Kind { Name, Int, Float, Null, String, Field, Element, Call };
  Kind kind = Kind::Name;
  SourceLoc loc;
  std::string name;    // Name, Field/Element/Call base, String value
  std::string member;  // Field: the field name
  std::int64_t int_value = 0;
  double float_value = 0;
  std::vector<Operand> args;  // Element: one index operand; Call: the arguments
};

struct Instruction {
  std::string mnemonic;
  SourceLoc loc;
  std::vector<Operand> operands;
};

struct Declaration {
  std::string name;
  TypeExpr type;
  SourceLoc loc;
};

/// A function body is a sequence of labels and instructions.
struct BodyItem {
  bool is_label = false;
  std::string label;  // when is_label
  SourceLoc loc;
  Instruction instruction;  // otherwise
};

struct FunctionDecl {
  std::string name;
  SourceLoc loc;
  std::vector<Declaration> params;
  std::optional<TypeExpr> result;
  std::vector<Declaration> locals;
  std::vector<BodyItem> body;
  SourceLoc end_loc;
};

struct ClassDecl {
  std::string name;
  SourceLoc loc;
  std::vector<Declaration> fields;
};

struct ProgramAst {
  std::vector<ClassDecl> classes;
  std::vector<Declaration> globals;
  std::vector<FunctionDecl> functions;
};

}  // namespace gcvm::vm
