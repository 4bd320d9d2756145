//===- Reduce.cc - Reductions, softmax family and cumsum ------------------===//
#include "ir/ops/RelationUtil.h"

#include <set>

namespace rivet::ir {
namespace {

int64_t flagAttr(std::string_view Op, const Attrs &A, const std::string &Name) {
  int64_t K = OpAttrs(Op, A).getInt(Name);
  if (K != 0 && K != 1)
    fail("{}: attribute '{}' must be 0 or 1, got {}", Op, Name, K);
  return K;
}

int64_t keepDims(std::string_view Op, const Attrs &A) {
  return flagAttr(Op, A, "keepdims");
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

enum class RedClass { Any, Numeric };

// sum/mean/max/...(x, axis: ints, keepdims): same dtype.
template <OpName Name, RedClass Class>
Type reduceRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  bool Keep = keepDims(Op, A) != 0;
  std::vector<int64_t> Axes = OpAttrs(Op, A).getInts("axis");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (Class == RedClass::Numeric)
    requireNumeric(Op, X, 0);
  bool All = Axes.empty();
  std::set<int64_t> Reduced;
  if (X.shape) {
    for (int64_t Ax : Axes)
      if (!Reduced.insert(normalizeAxisFor(Op, Ax, (int64_t)X.shape->size()))
               .second)
        fail("{}: attribute 'axis' names axis {} twice", Op, Ax);
  }
  return makeTensor(reducedShape(X, Reduced, All, Keep), X.dtype);
}

const std::set<std::string> &reductionNames() {
  static const std::set<std::string> Names = {
      "sum",     "mean",    "max",     "min",         "prod",
      "l1_norm", "l2_norm", "log_sum", "log_sum_exp", "sum_square"};
  return Names;
}

// dyn_reduce(x, axes: 1-D int tensor, reduction, keepdims,
// noop_with_empty_axes): the reduced axes are only known at run time.
Type dynReduceRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "dyn_reduce";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 2);
  bool Keep = keepDims(Op, A) != 0;
  flagAttr(Op, A, "noop_with_empty_axes");
  std::string R = *optString(A, "reduction");
  if (!reductionNames().count(R))
    fail("{}: unknown reduction '{}'", Op, R);
  if (flagAttr(Op, A, "empty_identity") && R != "max" && R != "min")
    fail("{}: empty_identity applies to max and min, not {}", Op, R);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  const TensorTypeNode &Axes = tensorArg(Op, Args, 1);
  if (R != "max" && R != "min")
    requireNumeric(Op, X, 0);
  requireIndex(Op, Axes, 1);
  if (Axes.shape && Axes.shape->size() > 1)
    failArg(1, "{}: the axes must be a 1-D tensor, got {}", Op, typeStr(Axes));
  if (!X.shape || !Keep)
    return makeTensor(std::nullopt, X.dtype);
  // Kept axes: extent 1 where reduced, unchanged otherwise; which is unknown.
  std::vector<Dim> Out;
  for (const Dim &D : *X.shape)
    Out.push_back(D.isConst() && D.value == 1 ? D : Dim::any());
  return makeTensor(Out, X.dtype);
}

// argmax/argmin(x, axis: int, keepdims, select_last_index) -> int64.
template <OpName Name>
Type argReduceRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  bool Keep = keepDims(Op, A) != 0;
  flagAttr(Op, A, "select_last_index");
  std::optional<int64_t> Axis = optInt(A, "axis");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  std::set<int64_t> Reduced;
  if (X.shape && Axis) {
    if (X.shape->empty())
      failArg(0, "{}: cannot reduce along axis {} of a rank-0 tensor", Op,
              *Axis);
    Reduced.insert(normalizeAxisFor(Op, *Axis, (int64_t)X.shape->size()));
  }
  return makeTensor(reducedShape(X, Reduced, !Axis, Keep), DType::Int64);
}

// softmax/log_softmax/hardmax(x, axis, coerce_2d): same type as x.
template <OpName Name>
Type softRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  int64_t Axis = OpAttrs(Op, A).getInt("axis");
  bool Coerce = flagAttr(Op, A, "coerce_2d") != 0;
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  if (X.shape) {
    int64_t R = (int64_t)X.shape->size();
    // coerce_2d also accepts axis == rank (an empty second factor).
    if (!(Coerce && Axis == R))
      normalizeAxisFor(Op, Axis, R);
  }
  return makeTensor(X.shape, X.dtype);
}

// cumsum(x[, axis: scalar int tensor], axis, exclusive, reverse).
Type cumsumRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "cumsum";
  validateOpAttrs(Op, A);
  if (Args.size() != 1 && Args.size() != 2)
    fail("{}: expects 1 or 2 arguments, got {}", Op, Args.size());
  flagAttr(Op, A, "exclusive");
  flagAttr(Op, A, "reverse");
  std::optional<int64_t> Axis = optInt(A, "axis");
  if (Args.size() == 1 && !Axis)
    fail("{}: needs the attribute 'axis' or an axis argument", Op);
  if (Args.size() == 2 && Axis)
    fail("{}: the axis is given both as an argument and an attribute", Op);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireNumeric(Op, X, 0);
  if (Args.size() == 2) {
    const TensorTypeNode &Ax = tensorArg(Op, Args, 1);
    requireIndex(Op, Ax, 1);
    if (Ax.shape && (Ax.shape->size() > 1 ||
                     (Ax.shape->size() == 1 && (*Ax.shape)[0].isConst() &&
                      (*Ax.shape)[0].value != 1)))
      failArg(1, "{}: the axis must be a scalar, got {}", Op, typeStr(Ax));
  }
  if (X.shape && Axis)
    normalizeAxisFor(Op, *Axis, std::max<int64_t>((int64_t)X.shape->size(), 1));
  return makeTensor(X.shape, X.dtype);
}

constexpr auto Red = FusionPattern::CommReduce;

} // namespace

RIVET_REGISTER_OP(OpInfo{"sum", "Sum over axes.", 1,
                         reduceRel<"sum", RedClass::Numeric>, Red});
RIVET_REGISTER_OP(OpInfo{"mean", "Arithmetic mean over axes.", 1,
                         reduceRel<"mean", RedClass::Numeric>, Red});
RIVET_REGISTER_OP(OpInfo{"max",
                         "Maximum over axes (bool allowed).\nAn empty "
                         "reduction is an error, or with empty_identity=1\n"
                         "-inf (the dtype's lowest value).",
                         1, reduceRel<"max", RedClass::Any>, Red});
RIVET_REGISTER_OP(OpInfo{"min",
                         "Minimum over axes (bool allowed).\nAn empty "
                         "reduction is an error, or with empty_identity=1\n"
                         "+inf (the dtype's highest value).",
                         1, reduceRel<"min", RedClass::Any>, Red});
RIVET_REGISTER_OP(OpInfo{"prod",
                         "Product over axes.\nAn empty reduction gives 1.", 1,
                         reduceRel<"prod", RedClass::Numeric>, Red});
RIVET_REGISTER_OP(OpInfo{"l1_norm",
                         "Sum of absolute values over axes.\nONNX ReduceL1.", 1,
                         reduceRel<"l1_norm", RedClass::Numeric>, Red});
RIVET_REGISTER_OP(OpInfo{
    "l2_norm", "Square root of the sum of squares over axes.\nONNX ReduceL2.",
    1, reduceRel<"l2_norm", RedClass::Numeric>, Red});
RIVET_REGISTER_OP(OpInfo{
    "log_sum", "Natural log of the sum over axes.\nONNX ReduceLogSum.", 1,
    reduceRel<"log_sum", RedClass::Numeric>, Red});
RIVET_REGISTER_OP(OpInfo{
    "log_sum_exp",
    "log(sum(exp(x))) over axes, computed stably.\nONNX ReduceLogSumExp.", 1,
    reduceRel<"log_sum_exp", RedClass::Numeric>, Red});
RIVET_REGISTER_OP(OpInfo{"sum_square",
                         "Sum of squares over axes.\nONNX ReduceSumSquare.", 1,
                         reduceRel<"sum_square", RedClass::Numeric>, Red});
RIVET_REGISTER_OP(OpInfo{
    "dyn_reduce",
    "A reduction whose axes are a run-time 1-D int tensor.\n"
    "Output dims are unknown; ONNX Reduce* with a non-constant axes input.",
    2, dynReduceRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{"argmax",
                         "Index (int64) of the first maximum along an axis.\n"
                         "select_last_index=1 picks the last one.",
                         1, argReduceRel<"argmax">, Red});
RIVET_REGISTER_OP(OpInfo{"argmin",
                         "Index (int64) of the first minimum along an axis.\n"
                         "select_last_index=1 picks the last one.",
                         1, argReduceRel<"argmin">, Red});
RIVET_REGISTER_OP(OpInfo{
    "softmax",
    "Numerically stable softmax along an axis.\n"
    "coerce_2d=1 flattens the axes from 'axis' on (ONNX < 13).",
    1, softRel<"softmax">, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "log_softmax",
    "Numerically stable log of softmax along an axis.\n"
    "coerce_2d=1 flattens the axes from 'axis' on (ONNX < 13).",
    1, softRel<"log_softmax">, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "hardmax",
    "One-hot of the first maximum along an axis.\n"
    "coerce_2d=1 flattens the axes from 'axis' on (ONNX < 13).",
    1, softRel<"hardmax">, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "cumsum",
    "Inclusive (or exclusive, reversed) cumulative sum along an axis.\n"
    "The axis is an attribute or a scalar int tensor argument.",
    -1, cumsumRel, FusionPattern::Opaque});

} // namespace rivet::ir
