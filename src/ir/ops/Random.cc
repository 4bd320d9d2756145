//===- Random.cc - Random tensors -----------------------------------------===//
//
// random_uniform, random_normal and their _like forms (ONNX RandomUniform,
// RandomNormal, RandomUniformLike, RandomNormalLike): float tensors of a
// static shape, or of x's shape (x's values are not read). With a seed the
// values are a function of it; without one they differ from call to call.
// Either way passes must not evaluate or merge the calls: runTimeOnly.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

void requireFloatDType(std::string_view Op, DType T) {
  if (!isFloat(T))
    fail("{}: the result dtype must be a float dtype, got {}", Op,
         dtypeName(T));
}

/// random_uniform/random_normal: no arguments; the shape is an attribute.
template <OpName Name>
Type randomRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 0);
  DType T = *optDType(Op, A, "dtype");
  requireFloatDType(Op, T);
  std::vector<Dim> Shape;
  std::vector<int64_t> Extents = *optInts(A, "shape");
  for (int64_t D : Extents) {
    if (D < 0)
      fail("{}: attribute 'shape' has a negative extent {}", Op, D);
    Shape.push_back(Dim::constant(D));
  }
  return std::make_shared<TensorTypeNode>(Shape, T);
}

/// random_uniform_like/random_normal_like: x's shape; dtype defaults to x's.
template <OpName Name>
Type randomLikeRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  std::optional<DType> To = optDType(Op, A, "dtype");
  if (To)
    requireFloatDType(Op, *To);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (!To)
    requireFloatDType(Op, X.dtype);
  return std::make_shared<TensorTypeNode>(X.shape, To ? *To : X.dtype);
}

OpInfo randomOp(OpInfo Info) {
  Info.runTimeOnly = true;
  return Info;
}

} // namespace

RIVET_REGISTER_OP(randomOp(OpInfo{
    "random_uniform",
    "A float tensor of a static shape, uniform in [low, high); a function of "
    "seed when given, else different on every call.",
    0, randomRel<"random_uniform">, FusionPattern::Opaque}));
RIVET_REGISTER_OP(randomOp(OpInfo{
    "random_normal",
    "A float tensor of a static shape, normal with mean and scale (standard "
    "deviation); a function of seed when given, else different on every call.",
    0, randomRel<"random_normal">, FusionPattern::Opaque}));
RIVET_REGISTER_OP(randomOp(OpInfo{
    "random_uniform_like",
    "random_uniform of x's shape (x is not read); dtype defaults to x's.", 1,
    randomLikeRel<"random_uniform_like">, FusionPattern::Opaque}));
RIVET_REGISTER_OP(randomOp(OpInfo{
    "random_normal_like",
    "random_normal of x's shape (x is not read); dtype defaults to x's.", 1,
    randomLikeRel<"random_normal_like">, FusionPattern::Opaque}));

} // namespace rivet::ir
