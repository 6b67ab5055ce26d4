// Tern's parser: tokens to a syntax tree (ast.hpp), by recursive descent with
// precedence climbing for binary operators (docs/tern.md, "Grammar").
//
// On a syntax error the parser reports it and skips to a likely statement or
// declaration boundary (`;`, `}`, or a keyword that starts one), so one run reports
// every syntax error it can find without cascades from the first.
#pragma once

#include <string>
#include <string_view>

#include "vm/asm/diagnostics.hpp"
#include "vm/lang/ast.hpp"

namespace gcvm::vm::tern {

/// Parses one source unit named `file`; errors go to `diagnostics`.
Unit parse(std::string_view source, const std::string& file, Diagnostics& diagnostics);

}  // namespace gcvm::vm::tern
