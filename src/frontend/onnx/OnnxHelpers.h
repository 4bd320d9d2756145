//===- OnnxHelpers.h - Small IR idioms shared by converters -----*- C++ -*-===//
#pragma once

#include "ir/Module.h"

namespace rivet::frontend {

/// A one-element tensor (ONNX often uses shape (1,)) as a rank-0 scalar.
inline ir::Expr toScalar(ir::Expr E) {
  return ir::callOp("reshape", {std::move(E)},
                    Attrs{{"newshape", std::vector<int64_t>{}}});
}

/// Stacks a List of tensors along a new axis Axis (ONNX scan outputs).
inline ir::Expr stackList(ir::Expr List, int64_t Axis = 0) {
  return ir::callOp("concat_list", {std::move(List)},
                    Attrs{{"axis", Axis}, {"new_axis", int64_t(1)}});
}

/// The scalar V in the dtype of Like (a constant of a function body whose
/// type follows an input's).
inline ir::Expr constantLike(double V, const ir::Expr &Like) {
  return ir::callOp("cast_like",
                    {ir::constant(Tensor::scalar<double>(V)), Like});
}

} // namespace rivet::frontend
