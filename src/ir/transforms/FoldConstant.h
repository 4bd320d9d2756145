//===- FoldConstant.h - Evaluation of constant subexpressions ---*- C++ -*-===//
//
// The reusable core of the FoldConstant pass, for passes (FoldScaleAxis,
// DynamicToStatic) that create constant subexpressions and want them folded
// right away.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"

#include <cstddef>

namespace rivet::ir {

/// Results larger than this stay unfolded: a broadcast or a tile of a small
/// constant would otherwise bloat the program (and its .rvx) with a tensor
/// that is cheaper to compute at run time.
inline constexpr size_t kMaxFoldedBytes = size_t(64) << 20;

/// E with every operator call whose arguments are constants (or tuples of
/// constants) replaced by its value, shape_of/size/dim_size of tensors with
/// static shapes replaced by constants, and let bindings of constants
/// inlined. Random operators, operators with List results, calls whose
/// evaluation fails and primitive functions are left alone. M supplies the
/// globals for evaluation; E may be any expression (its checkedTypes, where
/// present, allow the static-shape folds and the size check).
Expr foldConstants(const Expr &E, const Module &M);

} // namespace rivet::ir
