//===- Elementwise.cc - Elementwise and broadcast operators ---------------===//
//
// Type relations of the `elementwise` family of docs/operators.md. No
// implicit dtype promotion: binary operators need equal dtypes (pow alone
// takes an exponent of another numeric dtype, as ONNX Pow does).
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

enum class DKind { Any, Numeric, Float, Bool, Integer };

void requireKind(std::string_view Op, DKind K, const TensorTypeNode &T,
                 size_t Arg) {
  switch (K) {
  case DKind::Any: return;
  case DKind::Numeric: return requireNumeric(Op, T, Arg);
  case DKind::Float: return requireFloat(Op, T, Arg);
  case DKind::Bool: return requireBool(Op, T, Arg);
  case DKind::Integer:
    if (!isInteger(T.dtype))
      failArg(Arg, "{}: expects an integer tensor, got {}", Op, typeStr(T));
    return;
  }
}

/// a, b of one dtype of kind K -> broadcast shape; dtype Bool when
/// Compare, else the inputs' dtype.
template <OpName Name, DKind K, bool Compare>
Type binaryRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &L = tensorArg(Op, Args, 0);
  const TensorTypeNode &R = tensorArg(Op, Args, 1);
  requireKind(Op, K, L, 0);
  requireSameDType(Op, L, R, 1);
  auto Shape = broadcastArgs(Op, {&L, &R});
  return makeTensor(Shape, Compare ? DType::Bool : L.dtype);
}

/// x of kind K -> same shape; dtype Bool when ToBool, else x's.
template <OpName Name, DKind K, bool ToBool = false>
Type unaryRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireKind(Op, K, X, 0);
  return makeTensor(X.shape, ToBool ? DType::Bool : X.dtype);
}

/// a, b numeric of possibly different dtypes -> broadcast shape, a's dtype.
Type powRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("pow", A);
  checkArity("pow", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &L = tensorArg("pow", Args, 0);
  const TensorTypeNode &R = tensorArg("pow", Args, 1);
  requireNumeric("pow", L, 0);
  requireNumeric("pow", R, 1);
  return makeTensor(broadcastArgs("pow", {&L, &R}), L.dtype);
}

Type whereRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("where", A);
  checkArity("where", Args, 3);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &C = tensorArg("where", Args, 0);
  const TensorTypeNode &X = tensorArg("where", Args, 1);
  const TensorTypeNode &Y = tensorArg("where", Args, 2);
  requireBool("where", C, 0);
  requireSameDType("where", X, Y, 2);
  auto Shape = broadcastArgs("where", {&C, &X, &Y});
  return makeTensor(Shape, X.dtype);
}

Type castRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("cast", A);
  checkArity("cast", Args, 1);
  DType To = *optDType("cast", A, "dtype");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("cast", Args, 0);
  return makeTensor(X.shape, To);
}

Type castLikeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("cast_like", A);
  checkArity("cast_like", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("cast_like", Args, 0);
  const TensorTypeNode &T = tensorArg("cast_like", Args, 1);
  return makeTensor(X.shape, T.dtype);
}

/// legacy_broadcast(b, a; axis): b's dims placed at axis of a's rank, 1s
/// elsewhere. Needs a's rank; b's dims are copied as they are.
Type legacyBroadcastRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("legacy_broadcast", A);
  checkArity("legacy_broadcast", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &B = tensorArg("legacy_broadcast", Args, 0);
  const TensorTypeNode &Ref = tensorArg("legacy_broadcast", Args, 1);
  if (!B.shape || !Ref.shape)
    return makeTensor(std::nullopt, B.dtype);
  int64_t RankA = (int64_t)Ref.shape->size(), RankB = (int64_t)B.shape->size();
  int64_t Axis = *optInt(A, "axis");
  int64_t Norm = Axis < 0 ? Axis + RankA : Axis;
  if (Norm < 0 || Norm + RankB > RankA)
    failArg(0,
            "legacy_broadcast: axis {} does not fit {} into the rank {} of {}",
            Axis, typeStr(B), RankA, typeStr(Ref));
  std::vector<Dim> Out((size_t)RankA, Dim::constant(1));
  for (int64_t I = 0; I < RankB; ++I)
    Out[(size_t)(Norm + I)] = (*B.shape)[(size_t)I];
  return makeTensor(Out, B.dtype);
}

Type fullLikeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("full_like", A);
  checkArity("full_like", Args, 1);
  std::optional<DType> To = optDType("full_like", A, "dtype");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("full_like", Args, 0);
  return makeTensor(X.shape, To ? *To : X.dtype);
}

constexpr auto Bcast = FusionPattern::Broadcast;
constexpr auto Elem = FusionPattern::Elementwise;

/// Info with zeroAbsorbing (and so keepsZero) set.
OpInfo zeroAbsorbingOp(OpInfo Info) {
  Info.zeroAbsorbing = true;
  return keepsZeroOp(std::move(Info));
}

} // namespace

// Arithmetic: same numeric dtype, broadcast shape.
RIVET_REGISTER_OP(keepsZeroOp(OpInfo{
    "add", "Elementwise sum with broadcasting.", 2,
    binaryRel<"add", DKind::Numeric, false>, Bcast}));
RIVET_REGISTER_OP(keepsZeroOp(OpInfo{
    "subtract", "Elementwise difference with broadcasting.", 2,
    binaryRel<"subtract", DKind::Numeric, false>, Bcast}));
RIVET_REGISTER_OP(zeroAbsorbingOp(OpInfo{
    "multiply", "Elementwise product with broadcasting.", 2,
    binaryRel<"multiply", DKind::Numeric, false>, Bcast}));
RIVET_REGISTER_OP(OpInfo{
    "divide",
    "Elementwise quotient with broadcasting; integer division "
    "truncates toward zero.",
    2, binaryRel<"divide", DKind::Numeric, false>, Bcast});
RIVET_REGISTER_OP(OpInfo{
    "pow",
    "Elementwise a^b with broadcasting; b may have another "
    "numeric dtype, the result has a's.",
    2, powRel, Bcast});
RIVET_REGISTER_OP(OpInfo{
    "mod",
    "Elementwise remainder with broadcasting; the sign of the "
    "divisor (NumPy mod), or of the dividend when fmod=1.",
    2, binaryRel<"mod", DKind::Numeric, false>, Bcast});
RIVET_REGISTER_OP(OpInfo{"left_shift",
                         "Elementwise a << b on integers with broadcasting; a "
                         "shift by the bit width or more gives 0.",
                         2, binaryRel<"left_shift", DKind::Integer, false>,
                         Bcast});
RIVET_REGISTER_OP(OpInfo{"right_shift",
                         "Elementwise a >> b on integers with broadcasting; a "
                         "shift by the bit width or more gives 0.",
                         2, binaryRel<"right_shift", DKind::Integer, false>,
                         Bcast});
// Bitwise: integer dtypes (two's complement for the signed ones).
RIVET_REGISTER_OP(zeroAbsorbingOp(OpInfo{
    "bitwise_and", "Elementwise a & b on integers with broadcasting.", 2,
    binaryRel<"bitwise_and", DKind::Integer, false>, Bcast}));
RIVET_REGISTER_OP(keepsZeroOp(OpInfo{
    "bitwise_or", "Elementwise a | b on integers with broadcasting.", 2,
    binaryRel<"bitwise_or", DKind::Integer, false>, Bcast}));
RIVET_REGISTER_OP(keepsZeroOp(OpInfo{
    "bitwise_xor", "Elementwise a ^ b on integers with broadcasting.", 2,
    binaryRel<"bitwise_xor", DKind::Integer, false>, Bcast}));
RIVET_REGISTER_OP(OpInfo{"bitwise_not", "Elementwise ~x on integers.", 1,
                         unaryRel<"bitwise_not", DKind::Integer>, Elem});
RIVET_REGISTER_OP(keepsZeroOp(OpInfo{
    "maximum", "Elementwise maximum with broadcasting.", 2,
    binaryRel<"maximum", DKind::Numeric, false>, Bcast}));
RIVET_REGISTER_OP(keepsZeroOp(OpInfo{
    "minimum", "Elementwise minimum with broadcasting.", 2,
    binaryRel<"minimum", DKind::Numeric, false>, Bcast}));

// Unary numeric.
RIVET_REGISTER_OP(keepsZeroOp(OpInfo{"negative", "Elementwise negation.", 1,
                                     unaryRel<"negative", DKind::Numeric>,
                                     Elem}));
RIVET_REGISTER_OP(OpInfo{"abs", "Elementwise absolute value.", 1,
                         unaryRel<"abs", DKind::Numeric>, Elem});
RIVET_REGISTER_OP(keepsZeroOp(OpInfo{"relu", "Elementwise max(x, 0).", 1,
                                     unaryRel<"relu", DKind::Numeric>, Elem}));

// Unary float.
RIVET_REGISTER_OP(OpInfo{"exp", "Elementwise e^x.", 1,
                         unaryRel<"exp", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"log", "Elementwise natural logarithm.", 1,
                         unaryRel<"log", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"tanh", "Elementwise hyperbolic tangent.", 1,
                         unaryRel<"tanh", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"sigmoid", "Elementwise 1 / (1 + e^-x).", 1,
                         unaryRel<"sigmoid", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"sqrt", "Elementwise square root.", 1,
                         unaryRel<"sqrt", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"ceil", "Elementwise rounding up.", 1,
                         unaryRel<"ceil", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"floor", "Elementwise rounding down.", 1,
                         unaryRel<"floor", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"round", "Elementwise rounding, half to even.", 1,
                         unaryRel<"round", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"reciprocal", "Elementwise 1 / x.", 1,
                         unaryRel<"reciprocal", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"erf", "Elementwise Gauss error function.", 1,
                         unaryRel<"erf", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"sin", "Elementwise sine (radians).", 1,
                         unaryRel<"sin", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"cos", "Elementwise cosine (radians).", 1,
                         unaryRel<"cos", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"tan", "Elementwise tangent (radians).", 1,
                         unaryRel<"tan", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"asin", "Elementwise arcsine; NaN outside [-1, 1].", 1,
                         unaryRel<"asin", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"acos", "Elementwise arccosine; NaN outside [-1, 1].",
                         1, unaryRel<"acos", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"atan", "Elementwise arctangent.", 1,
                         unaryRel<"atan", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"sinh", "Elementwise hyperbolic sine.", 1,
                         unaryRel<"sinh", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"cosh", "Elementwise hyperbolic cosine.", 1,
                         unaryRel<"cosh", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"asinh", "Elementwise inverse hyperbolic sine.", 1,
                         unaryRel<"asinh", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"acosh",
                         "Elementwise inverse hyperbolic cosine; NaN below 1.",
                         1, unaryRel<"acosh", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"atanh",
                         "Elementwise inverse hyperbolic tangent; NaN outside "
                         "[-1, 1].",
                         1, unaryRel<"atanh", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{
    "sign", "Elementwise -1, 0 or 1 by the sign of x; NaN stays NaN.", 1,
    unaryRel<"sign", DKind::Numeric>, Elem});
RIVET_REGISTER_OP(OpInfo{"isnan", "Elementwise test for NaN; bool result.", 1,
                         unaryRel<"isnan", DKind::Float, true>, Elem});
RIVET_REGISTER_OP(OpInfo{
    "isinf",
    "Elementwise test for infinity; bool result. The flags "
    "select which signs count (both by default).",
    1, unaryRel<"isinf", DKind::Float, true>, Elem});

// Comparisons: same dtype (any), bool result.
RIVET_REGISTER_OP(OpInfo{"equal", "Elementwise a == b with broadcasting.", 2,
                         binaryRel<"equal", DKind::Any, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"not_equal", "Elementwise a != b with broadcasting.",
                         2, binaryRel<"not_equal", DKind::Any, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"less", "Elementwise a < b with broadcasting.", 2,
                         binaryRel<"less", DKind::Any, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"less_equal", "Elementwise a <= b with broadcasting.",
                         2, binaryRel<"less_equal", DKind::Any, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"greater", "Elementwise a > b with broadcasting.", 2,
                         binaryRel<"greater", DKind::Any, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"greater_equal",
                         "Elementwise a >= b with broadcasting.", 2,
                         binaryRel<"greater_equal", DKind::Any, true>, Bcast});

// Logical.
RIVET_REGISTER_OP(OpInfo{"logical_and", "Elementwise a && b on bool tensors.",
                         2, binaryRel<"logical_and", DKind::Bool, true>,
                         Bcast});
RIVET_REGISTER_OP(OpInfo{"logical_or", "Elementwise a || b on bool tensors.", 2,
                         binaryRel<"logical_or", DKind::Bool, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"logical_xor", "Elementwise a != b on bool tensors.",
                         2, binaryRel<"logical_xor", DKind::Bool, true>,
                         Bcast});
RIVET_REGISTER_OP(OpInfo{"logical_not", "Elementwise !x on a bool tensor.", 1,
                         unaryRel<"logical_not", DKind::Bool>, Elem});

RIVET_REGISTER_OP(OpInfo{
    "where", "Elementwise cond ? x : y with broadcasting of all three.", 3,
    whereRel, Bcast});
RIVET_REGISTER_OP(OpInfo{
    "cast", "Converts to another dtype; float->int truncates, ->bool is != 0.",
    1, castRel, Elem});
RIVET_REGISTER_OP(OpInfo{
    "cast_like",
    "Converts x to the dtype of target (whose values are not "
    "read); same conversions as cast.",
    2, castLikeRel, Elem});
RIVET_REGISTER_OP(OpInfo{
    "legacy_broadcast",
    "Reshapes b to the rank of a with b's dims starting at "
    "axis (ONNX opset <= 6 broadcasting); a is not read.",
    2, legacyBroadcastRel, FusionPattern::Injective});
RIVET_REGISTER_OP(OpInfo{"full_like",
                         "A tensor of x's shape filled with value (x is not "
                         "read); dtype defaults to x's.",
                         1, fullLikeRel, Elem});

} // namespace rivet::ir
