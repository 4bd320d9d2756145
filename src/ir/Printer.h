//===- Printer.h - The .rvir text format: printing --------------*- C++ -*-===//
//
// Prints modules and expressions in the text format of docs/text-format.md.
// Every bound variable gets a name unique within its global function (%x,
// %x1, ...), so parseModule(printModule(M)) is structurally equal to M.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Expr.h"
#include "ir/Module.h"

#include <string>

namespace rivet::ir {

struct PrintOptions {
  /// Also print the prelude's definitions (List, Option, @map, @foldl, @nth,
  /// @length, @concat), which are recognised by name.
  bool includePrelude = false;
};

/// The whole module: type definitions, then global functions, in order.
std::string printModule(const Module &M, const PrintOptions &Opts = {});
/// One expression (a let chain prints as a sequence of lets).
std::string printExpr(const Expr &E);
/// An attribute value exactly as the parser reads it back.
std::string printAttrValue(const AttrValue &V);
/// A constant as a literal: `3`, `1.5f16`, `true`, or `const[(2,), int64]([1,
/// 2])`.
std::string printConstant(const Tensor &T);
/// True for the names of the prelude's types and functions.
bool isPreludeName(const std::string &Name);

} // namespace rivet::ir
