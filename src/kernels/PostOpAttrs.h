//===- PostOpAttrs.h - Fused post-ops and their attributes ------*- C++ -*-===//
//
// A PostOps list is the elementwise tail of a fused group (relu, clip,
// sigmoid, tanh, add, multiply) applied, in order, to an anchor's (conv,
// matmul, dense) output. Binary post-ops carry their other operand, which
// broadcasts NumPy-style to the anchor's output shape and stays on the right
// (add and multiply commute). A fused kernel stores the kinds and bounds in
// its Attrs and takes the operands as trailing inputs, in list order.
//
// The list and its attribute encoding, without oneDNN: the IR's fused
// operators (ir/ops/FusedAnchors.cc) read it as well as the kernels
// (kernels/dnnl/PostOps.h adds what only the blocked kernels need).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Attrs.h"
#include "kernels/Tensor.h"

#include <string>
#include <vector>

namespace rivet {

struct PostOp {
  enum class Kind { Relu, Clip, Sigmoid, Tanh, Add, Multiply };
  Kind kind = Kind::Relu;
  /// Clip bounds (float32 lowest/max when the bound is absent).
  double lo = 0, hi = 0;
  /// The other operand of Add and Multiply; undefined otherwise.
  Tensor operand;

  bool isBinary() const { return kind == Kind::Add || kind == Kind::Multiply; }
};
using PostOps = std::vector<PostOp>;

/// The operator name of a kind ("relu", "clip", ...), the same name the
/// reference kernel is registered under.
const char *postOpName(PostOp::Kind K);
/// The kind of an operator name; false when the operator is not a post-op.
bool postOpKindOf(const std::string &OpName, PostOp::Kind &K);
/// A post-op from an elementwise operator call: Attrs are the operator's
/// (clip reads min/max); Operand is the other input of add/multiply.
PostOp makePostOp(PostOp::Kind K, const Attrs &OpAttrs, Tensor Operand = {});

/// Stores the kinds and clip bounds in A ("post_ops", "post_op_lo",
/// "post_op_hi"); operands are not stored, they are kernel inputs.
void encodePostOps(const PostOps &P, Attrs &A);
/// The inverse of encodePostOps; Operands are the binary post-ops' operands
/// in order. Throws rivet::Error on a malformed list or a count mismatch.
PostOps decodePostOps(const Attrs &A, const std::vector<Tensor> &Operands);
/// The number of binary post-ops named in A (how many trailing inputs a
/// fused kernel takes).
int64_t countPostOpOperands(const Attrs &A);
/// A with the post-op attributes removed (the anchor's own attributes).
Attrs withoutPostOpAttrs(const Attrs &A);

/// Applies P to Out in place with the reference kernels (the fallback when
/// oneDNN cannot express the tail, and what tests compare against).
void applyPostOpsReference(Tensor &Out, const PostOps &P);

} // namespace rivet
