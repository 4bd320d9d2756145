//===- ElementwiseRules.cc - Compute rules of elementwise operators -------===//
//
// Arithmetic, math functions, comparisons, logical and bitwise operators,
// where and casts (src/ir/ops/Elementwise.cc), with NumPy broadcasting. Each
// rule matches its reference kernel (src/kernels/ops/Elementwise.cc); where
// that needs a run-time error (integer division by zero) the rule refuses and
// the builtin kernel runs instead.
//
//===----------------------------------------------------------------------===//

#include "codegen/ComputeRule.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace rivet::codegen {
namespace {

using Ix = std::vector<LoopExpr>;

/// Argument I read at the output index, broadcast.
LoopExpr arg(ComputeContext &Ctx, size_t I, const Ix &Out) {
  requireCodegenDType(Ctx.opName(), Ctx.input(I).dtype);
  return Ctx.read(I, broadcastIndex(Ctx.input(I), Ctx.output(), Out));
}

void requireFloat(ComputeContext &Ctx, DType T) {
  if (!isFloat(T) || !isCodegenDType(T))
    unsupported("{}: dtype {} has no generated code", Ctx.opName(),
                dtypeName(T));
}

LoopExpr fc(double V, DType T) { return constOf(V, T); }

/// Binary arithmetic that wraps on integers (LLVM's add/sub/mul do).
template <LoopOp Op> LoopExpr arithRule(ComputeContext &Ctx, const Ix &Out) {
  return binary(Op, arg(Ctx, 0, Out), arg(Ctx, 1, Out));
}

/// Float division; integer division (truncating) only by a nonzero constant
/// divisor: division by zero is a run-time error in the reference kernel,
/// which generated code cannot raise (and would trap on). -1 negates, as
/// the reference does (INT_MIN / -1 wraps instead of trapping).
LoopExpr divideRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.output().dtype;
  if (isFloat(T)) {
    requireFloat(Ctx, T);
    return binary(LoopOp::Div, arg(Ctx, 0, Out), arg(Ctx, 1, Out));
  }
  if (T == DType::Bool || !isCodegenDType(T))
    unsupported("divide: dtype {} has no generated code", dtypeName(T));
  LoopExpr B = arg(Ctx, 1, Out);
  if (!B->isConst() || B->intValue == 0)
    unsupported("divide: dtype {} has generated code only for a nonzero "
                "constant divisor (division by zero must fail)",
                dtypeName(T));
  LoopExpr A = arg(Ctx, 0, Out);
  if (isSigned(T) && B->intValue == -1)
    return unary(LoopOp::Neg, A);
  return binary(LoopOp::Div, A, B);
}

LoopExpr modRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.output().dtype;
  requireFloat(Ctx, T);
  LoopExpr A = arg(Ctx, 0, Out), B = arg(Ctx, 1, Out);
  LoopExpr R = binary(LoopOp::Rem, A, B);
  if (Ctx.opAttrs().getInt("fmod"))
    return R;
  // NumPy mod: the result takes the divisor's sign.
  LoopExpr Zero = fc(0, T);
  LoopExpr Fix = binary(LoopOp::And, compare(LoopOp::NE, R, Zero),
                        compare(LoopOp::NE, compare(LoopOp::LT, R, Zero),
                                compare(LoopOp::LT, B, Zero)));
  return select(Fix, binary(LoopOp::Add, R, B), R);
}

LoopExpr powRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.output().dtype;
  requireFloat(Ctx, T);
  if (Ctx.input(1).dtype != T)
    unsupported("pow: exponent dtype {} differs from the base's",
                dtypeName(Ctx.input(1).dtype));
  return opExpr(LoopOp::Pow, T, {arg(Ctx, 0, Out), arg(Ctx, 1, Out)});
}

template <LoopOp Op> LoopExpr shiftRule(ComputeContext &Ctx, const Ix &Out) {
  return binary(Op, arg(Ctx, 0, Out), arg(Ctx, 1, Out));
}

/// Bitwise and/or/xor of integers (the relation admits no other dtype).
template <LoopOp Op> LoopExpr bitwiseRule(ComputeContext &Ctx, const Ix &Out) {
  return binary(Op, arg(Ctx, 0, Out), arg(Ctx, 1, Out));
}

LoopExpr bitwiseNotRule(ComputeContext &Ctx, const Ix &Out) {
  return unary(LoopOp::Not, arg(Ctx, 0, Out));
}

template <LoopOp Op> LoopExpr compareRule(ComputeContext &Ctx, const Ix &Out) {
  return compare(Op, arg(Ctx, 0, Out), arg(Ctx, 1, Out));
}

template <LoopOp Op> LoopExpr logicalRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr A = arg(Ctx, 0, Out), B = arg(Ctx, 1, Out);
  if (Op == LoopOp::Xor)
    return compare(LoopOp::NE, A, B);
  return binary(Op, A, B);
}

LoopExpr logicalNotRule(ComputeContext &Ctx, const Ix &Out) {
  return unary(LoopOp::Not, arg(Ctx, 0, Out));
}

/// Unary numeric operators (integers too).
template <LoopOp Op>
LoopExpr numericUnaryRule(ComputeContext &Ctx, const Ix &Out) {
  return unary(Op, arg(Ctx, 0, Out));
}

/// Unary math functions (float dtypes).
template <LoopOp Op> LoopExpr mathRule(ComputeContext &Ctx, const Ix &Out) {
  requireFloat(Ctx, Ctx.output().dtype);
  return unary(Op, arg(Ctx, 0, Out));
}

LoopExpr reluRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = arg(Ctx, 0, Out);
  // As the reference (x > 0 ? x : 0, NaN kept): NaN stays NaN, the
  // comparison being false for it, and -0 becomes +0, which a division
  // turns into the sign of an infinity.
  return select(compare(LoopOp::LE, X, fc(0, X->dtype)), fc(0, X->dtype), X);
}

LoopExpr sigmoidRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.output().dtype;
  requireFloat(Ctx, T);
  LoopExpr X = arg(Ctx, 0, Out);
  // Stable on both tails, as the reference: exp of a non-positive number.
  LoopExpr E = unary(LoopOp::Exp, unary(LoopOp::Neg, unary(LoopOp::Abs, X)));
  LoopExpr One = fc(1, T);
  // 1 / (1 + e) for x >= 0, e / (1 + e) below: one division of the selected
  // numerator, the same rounding as the reference's two. A vector division
  // is the slowest operation here (10 cycles per zmm on Golden Cove): the
  // fused sigmoid chain in L1 ran at 10.4-12.8 GB/s dividing twice, at
  // 13.0-13.8 once, on a Sapphire Rapids core.
  // The reference's x >= 0 as a sign test (cheaper in vector code): they
  // differ at -0, where both sides are 1/2, and at NaN, where both are NaN.
  LoopExpr Num = select(unary(LoopOp::SignBit, X), E, One);
  return binary(LoopOp::Div, Num, binary(LoopOp::Add, One, E));
}

LoopExpr reciprocalRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.output().dtype;
  requireFloat(Ctx, T);
  return binary(LoopOp::Div, fc(1, T), arg(Ctx, 0, Out));
}

LoopExpr signRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr X = arg(Ctx, 0, Out);
  DType T = X->dtype;
  // As the reference: NaN gives itself, either zero +0 (a division turns
  // the sign of a zero into the sign of an infinity).
  LoopExpr Zero = fc(0, T);
  LoopExpr ZeroOrNan =
      isFloat(T) ? select(compare(LoopOp::EQ, X, Zero), Zero, X) : X;
  return select(compare(LoopOp::GT, X, Zero), fc(1, T),
                isSigned(T) || isFloat(T)
                    ? select(compare(LoopOp::LT, X, Zero), fc(-1, T), ZeroOrNan)
                    : X);
}

LoopExpr isnanRule(ComputeContext &Ctx, const Ix &Out) {
  requireFloat(Ctx, Ctx.input(0).dtype);
  return unary(LoopOp::IsNan, arg(Ctx, 0, Out));
}

LoopExpr isinfRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.input(0).dtype;
  requireFloat(Ctx, T);
  LoopExpr X = arg(Ctx, 0, Out);
  LoopExpr R = intConst(0, DType::Bool);
  if (Ctx.opAttrs().getInt("detect_positive"))
    R = binary(LoopOp::Or, R, compare(LoopOp::EQ, X, fc(INFINITY, T)));
  if (Ctx.opAttrs().getInt("detect_negative"))
    R = binary(LoopOp::Or, R, compare(LoopOp::EQ, X, fc(-INFINITY, T)));
  return R;
}

LoopExpr whereRule(ComputeContext &Ctx, const Ix &Out) {
  LoopExpr C = arg(Ctx, 0, Out);
  if (C->dtype != DType::Bool)
    C = cast(C, DType::Bool);
  return select(C, arg(Ctx, 1, Out), arg(Ctx, 2, Out));
}

LoopExpr castRule(ComputeContext &Ctx, const Ix &Out) {
  requireCodegenDType("cast", Ctx.output().dtype);
  return convertLikeKernels(arg(Ctx, 0, Out), Ctx.output().dtype);
}

LoopExpr castLikeRule(ComputeContext &Ctx, const Ix &Out) {
  requireCodegenDType("cast_like", Ctx.output().dtype);
  requireCodegenDType("cast_like", Ctx.input(0).dtype);
  return convertLikeKernels(Ctx.read(0, Out), Ctx.output().dtype);
}

/// cast_like's result has x's extents: the second operand only gives the
/// dtype, and it need not broadcast with x.
std::vector<LoopExpr> castLikeShape(const Attrs &,
                                    const std::vector<TensorDesc> &In) {
  return In.at(0).shape;
}

LoopExpr fullLikeRule(ComputeContext &Ctx, const Ix &) {
  DType T = Ctx.output().dtype;
  requireCodegenDType("full_like", T);
  double V = Ctx.attrs().getFloat("value");
  if (!isFloat(T) && T != DType::Bool)
    V = std::trunc(V);
  return constOf(V, T);
}

} // namespace

LoopExpr convertLikeKernels(LoopExpr V, DType To) {
  DType From = V->dtype;
  if (!isFloat(From) || !isInteger(To))
    return cast(V, To);
  int64_t Min = 0, Max = 0;
  dispatchDType(To, [&](auto Tag) {
    using T = decltype(Tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      Min = static_cast<int64_t>(std::numeric_limits<T>::min());
      // uint64's maximum keeps its bit pattern (-1), as constants do.
      Max = static_cast<int64_t>(std::numeric_limits<T>::max());
    }
  });
  double Lo = isSigned(To) ? (double)Min : 0.0;
  double Hi = isSigned(To) ? (double)Max : (double)(uint64_t)Max;
  // The bounds in From round to the nearest value: Lo is a power of two (or
  // 0) and exact; a Hi that rounds up to 2^k leaves no value of From between
  // the true maximum and 2^k, so comparing V (untruncated) with the rounded
  // bounds picks exactly the values the reference saturates.
  if (V->isConst()) {
    // Fold here: LoopIR's constant cast would convert out-of-range values
    // with undefined behaviour.
    double X = V->floatValue;
    if (std::isnan(X))
      return intConst(0, To);
    if (X >= Hi)
      return intConst(Max, To);
    if (X <= Lo)
      return intConst(Min, To);
    X = std::trunc(X);
    return intConst(isSigned(To) ? (int64_t)X : (int64_t)(uint64_t)X, To);
  }
  LoopExpr R = cast(V, To);
  R = select(compare(LoopOp::GE, V, constOf(Hi, From)), intConst(Max, To), R);
  R = select(compare(LoopOp::LE, V, constOf(Lo, From)), intConst(Min, To), R);
  return select(opExpr(LoopOp::IsNan, DType::Bool, {V}), intConst(0, To), R);
}

RIVET_REGISTER_COMPUTE_RULE("add", arithRule<LoopOp::Add>);
RIVET_REGISTER_COMPUTE_RULE("subtract", arithRule<LoopOp::Sub>);
RIVET_REGISTER_COMPUTE_RULE("multiply", arithRule<LoopOp::Mul>);
RIVET_REGISTER_COMPUTE_RULE("maximum", arithRule<LoopOp::Max>);
RIVET_REGISTER_COMPUTE_RULE("minimum", arithRule<LoopOp::Min>);
RIVET_REGISTER_COMPUTE_RULE("divide", divideRule);
RIVET_REGISTER_COMPUTE_RULE("mod", modRule);
RIVET_REGISTER_COMPUTE_RULE("pow", powRule);
RIVET_REGISTER_COMPUTE_RULE("left_shift", shiftRule<LoopOp::Shl>);
RIVET_REGISTER_COMPUTE_RULE("right_shift", shiftRule<LoopOp::Shr>);
RIVET_REGISTER_COMPUTE_RULE("bitwise_and", bitwiseRule<LoopOp::And>);
RIVET_REGISTER_COMPUTE_RULE("bitwise_or", bitwiseRule<LoopOp::Or>);
RIVET_REGISTER_COMPUTE_RULE("bitwise_xor", bitwiseRule<LoopOp::Xor>);
RIVET_REGISTER_COMPUTE_RULE("bitwise_not", bitwiseNotRule);
RIVET_REGISTER_COMPUTE_RULE("equal", compareRule<LoopOp::EQ>);
RIVET_REGISTER_COMPUTE_RULE("not_equal", compareRule<LoopOp::NE>);
RIVET_REGISTER_COMPUTE_RULE("less", compareRule<LoopOp::LT>);
RIVET_REGISTER_COMPUTE_RULE("less_equal", compareRule<LoopOp::LE>);
RIVET_REGISTER_COMPUTE_RULE("greater", compareRule<LoopOp::GT>);
RIVET_REGISTER_COMPUTE_RULE("greater_equal", compareRule<LoopOp::GE>);
RIVET_REGISTER_COMPUTE_RULE("logical_and", logicalRule<LoopOp::And>);
RIVET_REGISTER_COMPUTE_RULE("logical_or", logicalRule<LoopOp::Or>);
RIVET_REGISTER_COMPUTE_RULE("logical_xor", logicalRule<LoopOp::Xor>);
RIVET_REGISTER_COMPUTE_RULE("logical_not", logicalNotRule);
RIVET_REGISTER_COMPUTE_RULE("negative", numericUnaryRule<LoopOp::Neg>);
RIVET_REGISTER_COMPUTE_RULE("abs", numericUnaryRule<LoopOp::Abs>);
RIVET_REGISTER_COMPUTE_RULE("relu", reluRule);
RIVET_REGISTER_COMPUTE_RULE("sign", signRule);
RIVET_REGISTER_COMPUTE_RULE("exp", mathRule<LoopOp::Exp>);
RIVET_REGISTER_COMPUTE_RULE("log", mathRule<LoopOp::Log>);
RIVET_REGISTER_COMPUTE_RULE("tanh", mathRule<LoopOp::Tanh>);
RIVET_REGISTER_COMPUTE_RULE("sqrt", mathRule<LoopOp::Sqrt>);
RIVET_REGISTER_COMPUTE_RULE("ceil", mathRule<LoopOp::Ceil>);
RIVET_REGISTER_COMPUTE_RULE("floor", mathRule<LoopOp::Floor>);
RIVET_REGISTER_COMPUTE_RULE("round", mathRule<LoopOp::Round>);
RIVET_REGISTER_COMPUTE_RULE("erf", mathRule<LoopOp::Erf>);
RIVET_REGISTER_COMPUTE_RULE("sin", mathRule<LoopOp::Sin>);
RIVET_REGISTER_COMPUTE_RULE("cos", mathRule<LoopOp::Cos>);
RIVET_REGISTER_COMPUTE_RULE("tan", mathRule<LoopOp::Tan>);
RIVET_REGISTER_COMPUTE_RULE("asin", mathRule<LoopOp::Asin>);
RIVET_REGISTER_COMPUTE_RULE("acos", mathRule<LoopOp::Acos>);
RIVET_REGISTER_COMPUTE_RULE("atan", mathRule<LoopOp::Atan>);
RIVET_REGISTER_COMPUTE_RULE("sinh", mathRule<LoopOp::Sinh>);
RIVET_REGISTER_COMPUTE_RULE("cosh", mathRule<LoopOp::Cosh>);
RIVET_REGISTER_COMPUTE_RULE("asinh", mathRule<LoopOp::Asinh>);
RIVET_REGISTER_COMPUTE_RULE("acosh", mathRule<LoopOp::Acosh>);
RIVET_REGISTER_COMPUTE_RULE("atanh", mathRule<LoopOp::Atanh>);
RIVET_REGISTER_COMPUTE_RULE("sigmoid", sigmoidRule);
RIVET_REGISTER_COMPUTE_RULE("reciprocal", reciprocalRule);
RIVET_REGISTER_COMPUTE_RULE("isnan", isnanRule);
RIVET_REGISTER_COMPUTE_RULE("isinf", isinfRule);
RIVET_REGISTER_COMPUTE_RULE("where", whereRule);
RIVET_REGISTER_COMPUTE_RULE("cast", castRule);
RIVET_REGISTER_COMPUTE_RULE("cast_like", castLikeRule);
RIVET_REGISTER_SHAPE_RULE("cast_like", castLikeShape);
RIVET_REGISTER_COMPUTE_RULE("full_like", fullLikeRule);

} // namespace rivet::codegen
