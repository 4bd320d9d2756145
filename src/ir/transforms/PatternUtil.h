//===- PatternUtil.h - Helpers for local algebraic rewrites -----*- C++ -*-===//
//
// What the algebraic passes (FoldScaleAxis, CombineParallel*,
// CanonicalizeOps) share: looking through let-bound variables to the value
// they name, counting references (a producer is rewritten only when its one
// consumer is), recognizing per-channel constants, and dropping the let
// bindings a rewrite consumed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Expr.h"
#include "ir/Visitor.h"
#include "ir/transforms/PassUtil.h"

#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace rivet::ir::pattern {

/// The let bindings and reference counts of one (type-checked) function.
class Dataflow {
public:
  explicit Dataflow(const Expr &Fn);

  /// E, or the value a let-bound variable E names (repeatedly).
  const Expr &resolve(const Expr &E) const;
  /// Like resolve, but null unless every variable on the way is referenced
  /// exactly once (so the value may be consumed by the rewrite).
  const Expr *resolveSingleUse(const Expr &E) const;
  /// The number of references to the node E (edges from its parents).
  int uses(const Expr &E) const;
  /// The tensor E resolves to when it is a constant, else null.
  const Tensor *constantOf(const Expr &E) const;

private:
  std::unordered_map<const VarNode *, Expr> Bound;
  std::unordered_map<const ExprNode *, int> Uses;
};

/// N as a call of the operator Name, else null.
const CallNode *asOpCall(const Expr &E, std::string_view Name);

/// E's checked type when it is a tensor of known rank, else null.
const TensorTypeNode *rankedTensorType(const Expr &E);
/// The constant extent of axis I of T, or -1.
int64_t constExtent(const TensorTypeNode &T, size_t I);

/// When an elementwise binary op of a tensor of rank Rank (extent L along
/// Axis) and S only broadcasts S along Axis (the result keeps the tensor's
/// shape), the length-L vector of S's values along Axis; nullopt otherwise.
std::optional<Tensor> channelVector(const Tensor &S, size_t Rank, size_t Axis,
                                    int64_t L);

/// V (1-D, length L) shaped [L, 1, ...] to broadcast along axis Axis of a
/// tensor of rank Rank.
Tensor alongAxis(const Tensor &V, size_t Rank, size_t Axis);

/// The 1-D tensors Parts (one dtype) joined end to end.
Tensor concatVectors(const std::vector<Tensor> &Parts);

/// A scalar constant of dtype T.
Expr scalarConstant(double Value, DType T);

/// E without the let bindings of the variables in Dead (which must no
/// longer be referenced). Iterative over let chains.
Expr dropBindings(const Expr &E,
                  const std::unordered_set<const VarNode *> &Dead);

/// An ExprMutator that leaves fused primitive functions as they are: passes
/// other than FuseOps must not rewrite their insides.
class NonPrimitiveMutator : public ExprMutator {
public:
  Expr visitFunction(const FunctionNode &N, const Expr &Self) override;
};

} // namespace rivet::ir::pattern
