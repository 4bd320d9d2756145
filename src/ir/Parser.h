//===- Parser.h - The .rvir text format: parsing ----------------*- C++ -*-===//
//
// A recursive-descent parser for the grammar in docs/text-format.md. Errors
// are rivet::Error with "file:line:col: message". Global functions, ADTs and
// constructors may be used before their definition.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Expr.h"
#include "ir/Module.h"

#include <string_view>

namespace rivet::ir {

struct ParseOptions {
  /// Start from the prelude (List, Option, @map, ...): the text may use its
  /// definitions, and may redefine any of them.
  bool importPrelude = true;
};

/// Parses a whole module (type definitions and `def`s).
Module parseModule(std::string_view Text,
                   std::string_view FileName = "<string>",
                   ParseOptions Opts = {});
/// Parses one expression (a let chain is allowed) whose constructors, ADTs
/// and global functions come from Context.
Expr parseExpr(std::string_view Text, const Module &Context);
/// Parses one type; ADT names must be defined in Context.
Type parseType(std::string_view Text, const Module &Context);

/// Deepest nesting of expressions, types or patterns the parser accepts.
inline constexpr int kMaxParseNesting = 1000;

} // namespace rivet::ir
