//===- Creation.cc - Tensor creation and shape operators ------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

Type shapeOfRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("shape_of", A);
  checkArity("shape_of", Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("shape_of", Args, 0);
  Dim Rank = X.shape ? Dim::constant((int64_t)X.shape->size()) : Dim::any();
  return tensorType({Rank}, DType::Int64);
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
  DType DT = optDType(Op, A, "dtype").value_or(DType::Float32);
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
    failArg(0, "full: the fill value must be a scalar (rank 0), got {}", typeStr(V));
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
              I == 0 ? "start" : I == 1 ? "stop" : "step", typeStr(T));
  }
  // The length depends on the values: data-dependent.
  return tensorType({Dim::any()}, DT.value_or(Start.dtype));
}

using K = AttrSpec::Kind;

} // namespace

RIVET_REGISTER_OP(OpInfo{"shape_of", "The shape of a tensor as a 1-D int64 tensor.",
                         1, {}, shapeOfRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "dim_size", "The extent of one axis of a tensor, as an int64 scalar.", 1,
    {AttrSpec{"axis", K::Int, true, "the axis (negative counts from the end)"}},
    dimSizeRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "zeros", "A tensor of zeros.", 0,
    {AttrSpec{"shape", K::Ints, true, "the extents"},
     AttrSpec{"dtype", K::String, false, "the dtype (default float32)"}},
    filledRel<"zeros">, FusionPattern::Elementwise});
RIVET_REGISTER_OP(OpInfo{
    "ones", "A tensor of ones.", 0,
    {AttrSpec{"shape", K::Ints, true, "the extents"},
     AttrSpec{"dtype", K::String, false, "the dtype (default float32)"}},
    filledRel<"ones">, FusionPattern::Elementwise});
RIVET_REGISTER_OP(OpInfo{
    "full", "A tensor filled with a scalar value.", 1,
    {AttrSpec{"shape", K::Ints, true, "the extents"},
     AttrSpec{"dtype", K::String, false, "the dtype (default the value's dtype)"}},
    fullRel, FusionPattern::Elementwise});
RIVET_REGISTER_OP(OpInfo{
    "arange", "Values start, start+step, ... below stop (a data-dependent length).", 3,
    {AttrSpec{"dtype", K::String, false, "the dtype (default the inputs' dtype)"}},
    arangeRel, FusionPattern::Opaque});

} // namespace rivet::ir
