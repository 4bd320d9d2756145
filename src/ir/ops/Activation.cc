//===- Activation.cc - Activation functions -------------------------------===//
//
// Type relations of the parameterized activations (ONNX Elu, Selu, Celu,
// LeakyRelu, HardSigmoid, HardSwish, ThresholdedRelu, Shrink, Softplus,
// Softsign, Clip) and prelu. Attribute names and defaults are ONNX's.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

/// x (float, or numeric when AnyNumeric) -> same type.
template <OpName Name, bool AnyNumeric>
Type activationRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (AnyNumeric)
    requireNumeric(Op, X, 0);
  else
    requireFloat(Op, X, 0);
  return std::make_shared<TensorTypeNode>(X.shape, X.dtype);
}

/// prelu(x, slope): slope broadcasts to x; the result has x's type. Known
/// dims of the broadcast must not exceed x's (a slope dim may only be 1 or
/// x's dim).
Type preluRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("prelu", A);
  checkArity("prelu", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("prelu", Args, 0);
  const TensorTypeNode &S = tensorArg("prelu", Args, 1);
  requireNumeric("prelu", X, 0);
  requireSameDType("prelu", X, S, 1);
  auto Shape = broadcastArgs("prelu", {&X, &S});
  if (Shape && X.shape) {
    if (Shape->size() != X.shape->size())
      failArg(1, "prelu: slope {} has a higher rank than x {}", typeStr(S),
              typeStr(X));
    for (size_t I = 0; I < Shape->size(); ++I) {
      const Dim &XD = (*X.shape)[I], &BD = (*Shape)[I];
      if (XD.isConst() && BD.isConst() && XD.value != BD.value)
        failArg(1, "prelu: slope {} does not broadcast to x {}", typeStr(S),
                typeStr(X));
    }
  }
  return std::make_shared<TensorTypeNode>(X.shape, X.dtype);
}

/// dropout(x, ratio, training_mode) -> (x's type, bool mask of x's shape).
Type dropoutRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("dropout", A);
  checkArity("dropout", Args, 3);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("dropout", Args, 0);
  const TensorTypeNode &R = tensorArg("dropout", Args, 1);
  const TensorTypeNode &T = tensorArg("dropout", Args, 2);
  requireFloat("dropout", R, 1);
  requireBool("dropout", T, 2);
  for (size_t I : {size_t(1), size_t(2)}) {
    const TensorTypeNode &S = I == 1 ? R : T;
    if (S.shape && !S.shape->empty())
      failArg(I, "dropout: expects a scalar, got {}", typeStr(S));
  }
  return tupleType({std::make_shared<TensorTypeNode>(X.shape, X.dtype),
                    std::make_shared<TensorTypeNode>(X.shape, DType::Bool)});
}

constexpr auto Elem = FusionPattern::Elementwise;

/// clip keeps zeros zero when its range holds 0 (an absent bound is the
/// dtype's limit).
bool clipKeepsZero(const Attrs &A) {
  return (!A.has("min") || A.getFloat("min") <= 0) &&
         (!A.has("max") || A.getFloat("max") >= 0);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{"elu",
                         "Elementwise x for x >= 0, alpha * (e^x - 1) below.",
                         1, activationRel<"elu", false>, Elem});
RIVET_REGISTER_OP(OpInfo{
    "selu",
    "Elementwise gamma * x for x > 0, gamma * alpha * (e^x - 1) "
    "otherwise.",
    1, activationRel<"selu", false>, Elem});
RIVET_REGISTER_OP(OpInfo{
    "celu", "Elementwise max(0, x) + min(0, alpha * (e^(x/alpha) - 1)).", 1,
    activationRel<"celu", false>, Elem});
RIVET_REGISTER_OP(OpInfo{"leaky_relu",
                         "Elementwise x for x >= 0, alpha * x below.", 1,
                         activationRel<"leaky_relu", false>, Elem});
RIVET_REGISTER_OP(OpInfo{"hard_sigmoid",
                         "Elementwise max(0, min(1, alpha * x + beta)).", 1,
                         activationRel<"hard_sigmoid", false>, Elem});
RIVET_REGISTER_OP(OpInfo{"hard_swish",
                         "Elementwise x * max(0, min(1, x / 6 + 0.5)).", 1,
                         activationRel<"hard_swish", false>, Elem});
RIVET_REGISTER_OP(OpInfo{"thresholded_relu",
                         "Elementwise x for x > alpha, 0 otherwise.", 1,
                         activationRel<"thresholded_relu", false>, Elem});
RIVET_REGISTER_OP(OpInfo{
    "shrink",
    "Elementwise x + bias below -lambd, x - bias above lambd, "
    "0 in between; numeric dtypes.",
    1, activationRel<"shrink", true>, Elem});
RIVET_REGISTER_OP(OpInfo{"softplus",
                         "Elementwise log(1 + e^x), stable for large x.", 1,
                         activationRel<"softplus", false>, Elem});
RIVET_REGISTER_OP(OpInfo{"softsign", "Elementwise x / (1 + |x|).", 1,
                         activationRel<"softsign", false>, Elem});
RIVET_REGISTER_OP(keepsZeroOp(
    OpInfo{"clip",
           "Elementwise clamp to [min, max]; an absent bound is the "
           "dtype's limit. NaN stays NaN.",
           1, activationRel<"clip", true>, Elem},
    clipKeepsZero));
RIVET_REGISTER_OP(OpInfo{"prelu",
                         "Elementwise x for x >= 0, slope * x below; slope "
                         "broadcasts to x's shape.",
                         2, preluRel, FusionPattern::Broadcast});

RIVET_REGISTER_OP(OpInfo{"dropout",
                         "Inference dropout with a run-time training_mode: (x, "
                         "all-true mask); training with ratio > 0 is an error.",
                         3, dropoutRel, FusionPattern::Opaque});

} // namespace rivet::ir
