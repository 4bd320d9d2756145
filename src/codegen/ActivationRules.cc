//===- ActivationRules.cc - Compute rules of parameterized activations ----===//
//
// elu, selu, celu, leaky_relu, hard_sigmoid, hard_swish, thresholded_relu,
// shrink, softplus, softsign, clip and prelu (src/ir/ops/Activation.cc),
// with the defaults of the operators' attribute schemas and NaN behaviour. The
// activations compute on float32/float64; clip also on integers.
//
//===----------------------------------------------------------------------===//

#include "codegen/ComputeRule.h"
#include "kernels/AttrSchema.h"

#include <cmath>
#include <limits>

namespace rivet::codegen {
namespace {

using Ix = std::vector<LoopExpr>;

/// The float argument at the output index; refuses other dtypes.
LoopExpr floatArg(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.input(0).dtype;
  if (!isFloat(T) || !isCodegenDType(T))
    unsupported("{}: dtype {} has no generated code", Ctx.opName(),
                dtypeName(T));
  return Ctx.read(0, Out);
}

/// A float attribute, or its default from the operator's schema.
double attr(ComputeContext &Ctx, const char *Name) {
  return OpAttrs(Ctx.opName(), Ctx.attrs()).getFloat(Name);
}

LoopExpr fc(double V, const LoopExpr &Like) { return constOf(V, Like->dtype); }
/// std::fmax/fmin: a NaN operand gives the other one.
LoopExpr fmax(LoopExpr A, LoopExpr B) {
  return select(unary(LoopOp::IsNan, A), B,
                select(lt(A, B), B, A)); // B NaN: A < NaN is false -> A
}
LoopExpr fmin(LoopExpr A, LoopExpr B) {
  return select(unary(LoopOp::IsNan, A), B, select(lt(B, A), B, A));
}

LoopExpr eluRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = floatArg(Ctx, Out);
  double Alpha = attr(Ctx, "alpha");
  return select(lt(X, fc(0, X)), mul(fc(Alpha, X), unary(LoopOp::Expm1, X)), X);
}

LoopExpr seluRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = floatArg(Ctx, Out);
  double Alpha = attr(Ctx, "alpha");
  double Gamma = attr(Ctx, "gamma");
  // The reference multiplies T(Gamma) * T(Alpha) in the element type.
  LoopExpr GA = mul(fc(Gamma, X), fc(Alpha, X));
  return select(gt(X, fc(0, X)), mul(fc(Gamma, X), X),
                mul(GA, unary(LoopOp::Expm1, X)));
}

LoopExpr celuRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = floatArg(Ctx, Out);
  double Alpha = attr(Ctx, "alpha");
  if (Alpha == 0)
    unsupported("celu: alpha is 0");
  return select(gt(X, fc(0, X)), X,
                mul(fc(Alpha, X), unary(LoopOp::Expm1, div(X, fc(Alpha, X)))));
}

LoopExpr leakyReluRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = floatArg(Ctx, Out);
  double Alpha = attr(Ctx, "alpha");
  return select(lt(X, fc(0, X)), mul(fc(Alpha, X), X), X);
}

LoopExpr hardSigmoidRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = floatArg(Ctx, Out);
  double Alpha = attr(Ctx, "alpha"), Beta = attr(Ctx, "beta");
  return fmax(fc(0, X), fmin(fc(1, X), add(mul(fc(Alpha, X), X), fc(Beta, X))));
}

LoopExpr hardSwishRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = floatArg(Ctx, Out);
  return mul(X,
             fmax(fc(0, X), fmin(fc(1, X), add(div(X, fc(6, X)), fc(0.5, X)))));
}

LoopExpr thresholdedReluRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = floatArg(Ctx, Out);
  double Alpha = attr(Ctx, "alpha");
  return select(gt(X, fc(Alpha, X)), X, fc(0, X));
}

LoopExpr shrinkRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = floatArg(Ctx, Out);
  double Lambd = attr(Ctx, "lambd"), Bias = attr(Ctx, "bias");
  return select(lt(X, unary(LoopOp::Neg, fc(Lambd, X))), add(X, fc(Bias, X)),
                select(gt(X, fc(Lambd, X)), sub(X, fc(Bias, X)), fc(0, X)));
}

LoopExpr softplusRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = floatArg(Ctx, Out);
  // Stable for large |x|, as the reference.
  LoopExpr Pos =
      add(X, unary(LoopOp::Log1p, unary(LoopOp::Exp, unary(LoopOp::Neg, X))));
  LoopExpr Neg = unary(LoopOp::Log1p, unary(LoopOp::Exp, X));
  return select(gt(X, fc(0, X)), Pos, Neg);
}

LoopExpr softsignRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = floatArg(Ctx, Out);
  return div(X, add(fc(1, X), unary(LoopOp::Abs, X)));
}

/// A clip bound converted to the element type the way convertElement does
/// (saturating for integers).
LoopExpr clipBound(double V, DType T) {
  if (isFloat(T))
    return constOf(V, T);
  double Lo = 0, Hi = 0;
  switch (T) {
  case DType::Int8: Lo = -128, Hi = 127; break;
  case DType::Int16: Lo = -32768, Hi = 32767; break;
  case DType::Int32: Lo = -2147483648.0, Hi = 2147483647.0; break;
  case DType::UInt8: Lo = 0, Hi = 255; break;
  case DType::UInt16: Lo = 0, Hi = 65535; break;
  case DType::UInt32: Lo = 0, Hi = 4294967295.0; break;
  default:
    // 64-bit bounds lose exactness through double; the builtin keeps them.
    unsupported("clip: dtype {} has no generated code", dtypeName(T));
  }
  if (std::isnan(V))
    unsupported("clip: NaN bound");
  return intConst((int64_t)std::trunc(std::min(std::max(V, Lo), Hi)), T);
}

LoopExpr clipRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.input(0).dtype;
  if (T == DType::Bool || !isCodegenDType(T))
    unsupported("clip: dtype {} has no generated code", dtypeName(T));
  LoopExpr X = Ctx.read(0, Out);
  // NaN stays NaN: neither comparison holds.
  if (Ctx.attrs().has("min")) {
    LoopExpr Lo = clipBound(Ctx.attrs().getFloat("min"), T);
    X = select(lt(X, Lo), Lo, X);
  }
  if (Ctx.attrs().has("max")) {
    LoopExpr Hi = clipBound(Ctx.attrs().getFloat("max"), T);
    X = select(gt(X, Hi), Hi, X);
  }
  return X;
}

LoopExpr preluRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.input(0).dtype;
  if (T == DType::Bool || !isCodegenDType(T))
    unsupported("prelu: dtype {} has no generated code", dtypeName(T));
  LoopExpr X = Ctx.read(0, Out);
  LoopExpr S = Ctx.read(1, broadcastIndex(Ctx.input(1), Ctx.output(), Out));
  return select(lt(X, fc(0, X)), mul(S, X), X);
}

} // namespace

RIVET_REGISTER_COMPUTE_RULE("elu", eluRule);
RIVET_REGISTER_COMPUTE_RULE("selu", seluRule);
RIVET_REGISTER_COMPUTE_RULE("celu", celuRule);
RIVET_REGISTER_COMPUTE_RULE("leaky_relu", leakyReluRule);
RIVET_REGISTER_COMPUTE_RULE("hard_sigmoid", hardSigmoidRule);
RIVET_REGISTER_COMPUTE_RULE("hard_swish", hardSwishRule);
RIVET_REGISTER_COMPUTE_RULE("thresholded_relu", thresholdedReluRule);
RIVET_REGISTER_COMPUTE_RULE("shrink", shrinkRule);
RIVET_REGISTER_COMPUTE_RULE("softplus", softplusRule);
RIVET_REGISTER_COMPUTE_RULE("softsign", softsignRule);
RIVET_REGISTER_COMPUTE_RULE("clip", clipRule);
RIVET_REGISTER_COMPUTE_RULE("prelu", preluRule);

} // namespace rivet::codegen
