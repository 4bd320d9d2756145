//===- Reduce.cc - Reductions and softmax ---------------------------------===//
#include "ir/ops/RelationUtil.h"

#include <set>

namespace rivet::ir {
namespace {

Type makeTensor(const std::optional<std::vector<Dim>> &Shape, DType T) {
  return std::make_shared<TensorTypeNode>(Shape, T);
}

int64_t keepDims(std::string_view Op, const Attrs &A) {
  int64_t K = optInt(A, "keepdims").value_or(0);
  if (K != 0 && K != 1)
    fail("{}: attribute 'keepdims' must be 0 or 1, got {}", Op, K);
  return K;
}

/// The shape after reducing the axes in Reduced (all axes when empty).
std::optional<std::vector<Dim>> reducedShape(const TensorTypeNode &X,
                                             const std::set<int64_t> &Reduced,
                                             bool All, bool Keep) {
  if (!X.shape)
    return All && !Keep ? std::optional<std::vector<Dim>>(std::vector<Dim>{})
                        : std::nullopt;
  std::vector<Dim> Out;
  for (int64_t K = 0; K < (int64_t)X.shape->size(); ++K) {
    if (All || Reduced.count(K)) {
      if (Keep)
        Out.push_back(Dim::constant(1));
    } else {
      Out.push_back((*X.shape)[K]);
    }
  }
  return Out;
}

// sum/mean/max/min(x, axis: ints, keepdims): same dtype.
template <OpName Name, bool NumericOnly>
Type reduceRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  bool Keep = keepDims(Op, A) != 0;
  std::vector<int64_t> Axes = optInts(A, "axis").value_or(std::vector<int64_t>{});
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (NumericOnly)
    requireNumeric(Op, X, 0);
  bool All = Axes.empty();
  std::set<int64_t> Reduced;
  if (X.shape) {
    for (int64_t Ax : Axes)
      if (!Reduced.insert(normalizeAxisFor(Op, Ax, (int64_t)X.shape->size())).second)
        fail("{}: attribute 'axis' names axis {} twice", Op, Ax);
  }
  return makeTensor(reducedShape(X, Reduced, All, Keep), X.dtype);
}

// argmax/argmin(x, axis: int, keepdims) -> int64.
template <OpName Name>
Type argReduceRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  bool Keep = keepDims(Op, A) != 0;
  std::optional<int64_t> Axis = optInt(A, "axis");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  std::set<int64_t> Reduced;
  if (X.shape && Axis) {
    if (X.shape->empty())
      failArg(0, "{}: cannot reduce along axis {} of a rank-0 tensor", Op, *Axis);
    Reduced.insert(normalizeAxisFor(Op, *Axis, (int64_t)X.shape->size()));
  }
  return makeTensor(reducedShape(X, Reduced, !Axis, Keep), DType::Int64);
}

Type softmaxRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("softmax", A);
  checkArity("softmax", Args, 1);
  int64_t Axis = optInt(A, "axis").value_or(-1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("softmax", Args, 0);
  requireFloat("softmax", X, 0);
  if (X.shape)
    normalizeAxisFor("softmax", Axis, (int64_t)X.shape->size());
  return makeTensor(X.shape, X.dtype);
}

using K = AttrSpec::Kind;
const std::vector<AttrSpec> ReduceAttrs = {
    AttrSpec{"axis", K::Ints, false, "the reduced axes; absent or empty reduces all"},
    AttrSpec{"keepdims", K::Int, false, "1 keeps reduced axes as extent 1 (default 0)"}};
const std::vector<AttrSpec> ArgReduceAttrs = {
    AttrSpec{"axis", K::Int, false, "the reduced axis; absent flattens the input"},
    AttrSpec{"keepdims", K::Int, false, "1 keeps the reduced axis as extent 1 (default 0)"}};
constexpr auto Red = FusionPattern::CommReduce;

} // namespace

RIVET_REGISTER_OP(OpInfo{"sum", "Sum over axes.", 1, ReduceAttrs,
                         reduceRel<"sum", true>, Red});
RIVET_REGISTER_OP(OpInfo{"mean", "Arithmetic mean over axes.", 1, ReduceAttrs,
                         reduceRel<"mean", true>, Red});
RIVET_REGISTER_OP(OpInfo{"max", "Maximum over axes (an empty reduction is an error).",
                         1, ReduceAttrs, reduceRel<"max", false>, Red});
RIVET_REGISTER_OP(OpInfo{"min", "Minimum over axes (an empty reduction is an error).",
                         1, ReduceAttrs, reduceRel<"min", false>, Red});
RIVET_REGISTER_OP(OpInfo{"argmax", "Index (int64) of the first maximum along an axis.",
                         1, ArgReduceAttrs, argReduceRel<"argmax">, Red});
RIVET_REGISTER_OP(OpInfo{"argmin", "Index (int64) of the first minimum along an axis.",
                         1, ArgReduceAttrs, argReduceRel<"argmin">, Red});
RIVET_REGISTER_OP(OpInfo{
    "softmax", "Numerically stable softmax along an axis.", 1,
    {AttrSpec{"axis", K::Int, false, "the normalized axis (default -1)"}}, softmaxRel,
    FusionPattern::Opaque});

} // namespace rivet::ir
