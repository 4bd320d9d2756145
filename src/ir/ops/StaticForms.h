//===- StaticForms.h - Static operators for dynamic calls -------*- C++ -*-===//
//
// A data-dependent operator (reshape_dyn, slice_dyn, dyn_topk, resize_dynamic,
// ...) takes as tensors what its static counterpart takes as attributes. When
// those tensors are constants the static operator says the same thing with
// a shape the types can see. The ONNX converters (a constant input at import)
// and the DynamicToStatic pass (a constant after folding) share this mapping.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Expr.h"

namespace rivet::ir {

/// The static operator call equivalent to Call, a call of a data-dependent
/// operator whose shape-deciding arguments are constants (ConstantNodes).
/// Null when Call is not such a call, an argument it needs is not a constant,
/// a constant has the wrong dtype, rank or element count, or the static
/// operator cannot express the call (reshape_dyn with allowzero and a 0
/// extent, split sizes that do not provably add up to the extent, ...).
/// Attributes and the remaining arguments carry over.
Expr staticFormOf(const Expr &Call);

/// Dyn, or its static form when it has one.
inline Expr staticOrDynamic(Expr Dyn) {
  Expr S = staticFormOf(Dyn);
  return S ? S : Dyn;
}

} // namespace rivet::ir
