//===- Creation.cc - Tensor creation and shape operators ------------------===//
#include "ir/ops/RelationUtil.h"

#include <algorithm>

namespace rivet::ir {
namespace {

// shape_of(x; start?, end?): ONNX Shape's [start, end) window of the dims,
// clamped to the rank.
Type shapeOfRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("shape_of", A);
  checkArity("shape_of", Args, 1);
  std::optional<int64_t> End = optInt(A, "end");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("shape_of", Args, 0);
  if (!X.shape)
    return tensorType({Dim::any()}, DType::Int64);
  int64_t R = (int64_t)X.shape->size();
  auto Clamp = [R](int64_t I) {
    if (I < 0)
      I += R;
    return std::min(std::max<int64_t>(I, 0), R);
  };
  // An absent end is the rank, which the schema cannot know.
  int64_t B = Clamp(OpAttrs("shape_of", A).getInt("start")),
          E = Clamp(End.value_or(R));
  return tensorType({Dim::constant(std::max<int64_t>(E - B, 0))}, DType::Int64);
}

// size(x): the number of elements as an int64 scalar.
Type sizeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("size", A);
  checkArity("size", Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  tensorArg("size", Args, 0);
  return scalarType(DType::Int64);
}

// dim_size(x; axis): the extent of one axis as an int64 scalar.
Type dimSizeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("dim_size", A);
  checkArity("dim_size", Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("dim_size", Args, 0);
  if (X.shape)
    normalizeAxisFor("dim_size", *optInt(A, "axis"), (int64_t)X.shape->size());
  return scalarType(DType::Int64);
}

std::vector<Dim> shapeAttr(std::string_view Op, const Attrs &A) {
  std::vector<Dim> Out;
  std::vector<int64_t> Extents = *optInts(A, "shape");
  for (int64_t E : Extents) {
    if (E < 0)
      fail("{}: attribute 'shape' has a negative extent {}", Op, E);
    Out.push_back(Dim::constant(E));
  }
  return Out;
}

// zeros/ones: no inputs, shape and dtype from the attributes.
template <OpName Name>
Type filledRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 0);
  DType DT = *optDType(Op, A, "dtype");
  return tensorType(shapeAttr(Op, A), DT);
}

Type fullRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("full", A);
  checkArity("full", Args, 1);
  std::vector<Dim> Shape = shapeAttr("full", A);
  std::optional<DType> DT = optDType("full", A, "dtype");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &V = tensorArg("full", Args, 0);
  if (V.shape && !V.shape->empty())
    failArg(0, "full: the fill value must be a scalar (rank 0), got {}",
            typeStr(V));
  return tensorType(Shape, DT.value_or(V.dtype));
}

Type arangeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("arange", A);
  checkArity("arange", Args, 3);
  std::optional<DType> DT = optDType("arange", A, "dtype");
  if (DT && *DT == DType::Bool)
    fail("arange: attribute 'dtype' must be numeric, got bool");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &Start = tensorArg("arange", Args, 0);
  for (size_t I = 0; I < 3; ++I) {
    const TensorTypeNode &T = tensorArg("arange", Args, I);
    requireNumeric("arange", T, I);
    requireSameDType("arange", Start, T, I);
    if (T.shape && !T.shape->empty())
      failArg(I, "arange: {} must be a scalar (rank 0), got {}",
              I == 0   ? "start"
              : I == 1 ? "stop"
                       : "step",
              typeStr(T));
  }
  // The length depends on the values: data-dependent.
  return tensorType({Dim::any()}, DT.value_or(Start.dtype));
}

// constant_of_shape(shape; value): rank len(shape), extents from the values.
Type constantOfShapeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("constant_of_shape", A);
  checkArity("constant_of_shape", Args, 1);
  DType DT = DType::Float32;
  if (A.has("value")) {
    const Tensor &V = A.getTensor("value");
    if (V.numel() != 1)
      fail("constant_of_shape: attribute 'value' must have one element, got {}",
           V.typeString());
    DT = V.dtype();
  }
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &S = tensorArg("constant_of_shape", Args, 0);
  requireIndex("constant_of_shape", S, 0);
  if (!S.shape)
    return tensorTypeUnknownRank(DT);
  if (S.shape->size() != 1)
    failArg(0, "constant_of_shape: the shape must be 1-D, got {}", typeStr(S));
  const Dim &N = (*S.shape)[0];
  if (!N.isConst())
    return tensorTypeUnknownRank(DT);
  return tensorType(std::vector<Dim>(N.value, Dim::any()), DT);
}

Type eyeLikeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("eye_like", A);
  checkArity("eye_like", Args, 1);
  std::optional<DType> DT = optDType("eye_like", A, "dtype");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("eye_like", Args, 0);
  if (X.shape && X.shape->size() != 2)
    failArg(0, "eye_like: the input must be 2-D, got {}", typeStr(X));
  std::vector<Dim> S = X.shape ? *X.shape : std::vector<Dim>(2, Dim::any());
  return tensorType(S, DT.value_or(X.dtype));
}

// trilu(x[, k]): same type as x; k is an int64 scalar (or one element).
Type triluRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("trilu", A);
  if (Args.empty() || Args.size() > 2)
    fail("trilu: expects 1 or 2 arguments (x, k?), got {}", Args.size());
  int64_t Upper = OpAttrs("trilu", A).getInt("upper");
  if (Upper != 0 && Upper != 1)
    fail("trilu: attribute 'upper' must be 0 or 1, got {}", Upper);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("trilu", Args, 0);
  if (X.shape && X.shape->size() < 2)
    failArg(0, "trilu: the input must have rank >= 2, got {}", typeStr(X));
  if (Args.size() == 2) {
    const TensorTypeNode &K = tensorArg("trilu", Args, 1);
    requireIndex("trilu", K, 1);
    if (K.shape && K.shape->size() > 1)
      failArg(1, "trilu: k must be a scalar, got {}", typeStr(K));
  }
  return std::make_shared<TensorTypeNode>(X.shape, X.dtype);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "shape_of",
    "The shape of a tensor as a 1-D int64 tensor (optionally the "
    "dims in [start, end), ONNX Shape-15).",
    1, shapeOfRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{"size",
                         "The number of elements of a tensor, as an "
                         "int64 scalar.",
                         1, sizeRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "dim_size", "The extent of one axis of a tensor, as an int64 scalar.", 1,
    dimSizeRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{"zeros", "A tensor of zeros.", 0, filledRel<"zeros">,
                         FusionPattern::Elementwise});
RIVET_REGISTER_OP(OpInfo{"ones", "A tensor of ones.", 0, filledRel<"ones">,
                         FusionPattern::Elementwise});
RIVET_REGISTER_OP(OpInfo{"full", "A tensor filled with a scalar value.", 1,
                         fullRel, FusionPattern::Elementwise});
RIVET_REGISTER_OP(OpInfo{
    "arange",
    "Values start, start+step, ... below stop (a data-dependent length).", 3,
    arangeRel, FusionPattern::Opaque});

RIVET_REGISTER_OP(OpInfo{"constant_of_shape",
                         "A tensor of the shape held by a 1-D int64 tensor, "
                         "filled with `value` (ONNX ConstantOfShape).",
                         1, constantOfShapeRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "eye_like",
    "A 2-D tensor shaped like x with ones on diagonal k, zeros "
    "elsewhere.",
    1, eyeLikeRel, FusionPattern::Injective});
RIVET_REGISTER_OP(OpInfo{
    "trilu",
    "Keeps the upper (j - i >= k) or lower (j - i <= k) triangle of "
    "the last two axes; an optional scalar input gives k.",
    -1, triluRel, FusionPattern::Injective});

} // namespace rivet::ir
