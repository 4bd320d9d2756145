//===- AnchorSelection.h - One oneDNN call for anchor + tail ----*- C++ -*-===//
//
// Decides whether a fused Primitive function is an anchor (conv, its
// blocked form conv2d_nchwc, matmul, dense) followed by an elementwise tail
// oneDNN can run as post-ops (relu, clip, sigmoid, tanh, add/multiply by a
// parameter or constant), and if so which builtin kernel (dnnl.conv_fused, ...)
// and arguments compute it in one call. The selection is purely structural; the
// kernel itself falls back to the reference operators when oneDNN declines a
// case at run time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Expr.h"
#include "kernels/Attrs.h"

#include <optional>
#include <string>
#include <vector>

namespace rivet::vm::compiler {

/// One builtin kernel call computing a whole Primitive function.
struct AnchorCall {
  std::string kernel; // "dnnl.conv_fused", "dnnl.matmul_fused", ...
  Attrs attrs;        // the anchor's attributes plus the encoded post-ops
  /// The kernel's inputs in order: each is one of the function's parameters
  /// (a Var of Fn->params) or a Constant from its body. The anchor's inputs
  /// come first, then the operand of each binary post-op.
  std::vector<ir::Expr> args;
};

/// Whether Op (an operator name) is an anchor: a group it starts is worth
/// a library kernel (oneDNN) rather than a generated loop nest.
bool isAnchorOperator(const std::string &Op);

/// Whether anchor call A (a matmul or dense) does too little work for a
/// oneDNN call to pay off (its fixed cost dominates): the static extents
/// decide, per output row when some extents are dynamic. A group it starts
/// is better generated whole. For the GPU (Gpu) only a static product can
/// be small: a dynamic one may grow to any size, where cuBLAS wins.
bool isSmallAnchor(const ir::CallNode &A, bool Gpu = false);

/// The anchor call for Fn (a Primitive function literal, type-checked), or
/// nothing when Fn is not a float32 anchor with an expressible tail.
/// CallArgs, when given, are the arguments Fn is called with. Sets
/// "weights_constant" (the kernel may cache a reordered copy of the weight)
/// when the anchor's weight is a Constant in Fn or a parameter bound to a
/// Constant argument: only constants are immutable for the executable's
/// lifetime.
std::optional<AnchorCall>
selectAnchor(const ir::Expr &Fn, const std::vector<ir::Expr> &CallArgs = {});

} // namespace rivet::vm::compiler
