//===- Search.cc - topk and unique ----------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

void checkFlag(std::string_view Op, const Attrs &A, const std::string &Name) {
  int64_t V = OpAttrs(Op, A).getInt(Name);
  if (V != 0 && V != 1)
    fail("{}: attribute '{}' must be 0 or 1, got {}", Op, Name, V);
}

/// (values, int64 indices) with extent K (nullopt: unknown) on the axis.
Type topkResult(std::string_view Op, const TensorTypeNode &X, const Attrs &A,
                std::optional<int64_t> K) {
  requireNumeric(Op, X, 0);
  int64_t Axis = OpAttrs(Op, A).getInt("axis");
  std::optional<std::vector<Dim>> Out = X.shape;
  if (Out) {
    if (Out->empty())
      failArg(0, "{}: expects a tensor of rank >= 1, got {}", Op, typeStr(X));
    int64_t N = normalizeAxisFor(Op, Axis, (int64_t)Out->size());
    Dim &D = (*Out)[N];
    if (K && D.isConst() && *K > D.value)
      fail("{}: k = {} exceeds the extent {} of axis {}", Op, *K, D.value,
           Axis);
    D = K ? Dim::constant(*K) : Dim::any();
  }
  return tupleType({makeTensor(Out, X.dtype), makeTensor(Out, DType::Int64)});
}

// topk(x, k, axis, largest, sorted) -> (values, indices).
Type topkRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("topk", A);
  checkArity("topk", Args, 1);
  checkFlag("topk", A, "largest");
  checkFlag("topk", A, "sorted");
  int64_t K = *optInt(A, "k");
  if (K < 0)
    fail("topk: attribute 'k' must be >= 0, got {}", K);
  if (anyUndecided(Args))
    return nullptr;
  return topkResult("topk", tensorArg("topk", Args, 0), A, K);
}

// dyn_topk(x, k: int tensor of one element, axis, largest, sorted).
Type dynTopkRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("dyn_topk", A);
  checkArity("dyn_topk", Args, 2);
  checkFlag("dyn_topk", A, "largest");
  checkFlag("dyn_topk", A, "sorted");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &K = tensorArg("dyn_topk", Args, 1);
  requireIndex("dyn_topk", K, 1);
  if (K.shape && K.shape->size() > 1)
    failArg(1, "dyn_topk: k must be a scalar or a 1-element vector, got {}",
            typeStr(K));
  return topkResult("dyn_topk", tensorArg("dyn_topk", Args, 0), A,
                    std::nullopt);
}

// unique(x, sorted, axis?) -> (y, indices, inverse_indices, counts).
Type uniqueRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("unique", A);
  checkArity("unique", Args, 1);
  checkFlag("unique", A, "sorted");
  std::optional<int64_t> Axis = optInt(A, "axis");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("unique", Args, 0);
  std::optional<std::vector<Dim>> Y = std::vector<Dim>{Dim::any()};
  Dim N = Dim::any();
  if (Axis) {
    Y = X.shape;
    if (Y) {
      if (Y->empty())
        failArg(0,
                "unique: cannot take slices along axis {} of a rank-0 tensor",
                *Axis);
      int64_t Ax = normalizeAxisFor("unique", *Axis, (int64_t)Y->size());
      N = (*Y)[Ax];
      (*Y)[Ax] = Dim::any();
    }
  } else if (X.shape) {
    int64_t P = 1;
    bool Known = true;
    for (const Dim &D : *X.shape) {
      Known = Known && D.isConst();
      P *= D.isConst() ? D.value : 1;
    }
    if (Known)
      N = Dim::constant(P);
  }
  Type Idx = makeTensor(std::vector<Dim>{Dim::any()}, DType::Int64);
  return tupleType({makeTensor(Y, X.dtype), Idx,
                    makeTensor(std::vector<Dim>{N}, DType::Int64), Idx});
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "topk",
    "The k largest (or smallest) values along an axis and their int64 "
    "indices.\n"
    "Sorted, ties broken by the lower index; returns (values, indices).",
    1, topkRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "dyn_topk",
    "topk whose k is a run-time int tensor (one element).\n"
    "The extent of the axis in the result is unknown.",
    2, dynTopkRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "unique",
    "Unique elements (or slices along 'axis'), sorted or by first occurrence.\n"
    "Returns (values, first indices, inverse indices, counts); shapes are "
    "data-dependent.",
    1, uniqueRel, FusionPattern::Opaque});

} // namespace rivet::ir
