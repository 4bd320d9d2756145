//===- Elementwise.cc - Elementwise and broadcast operators ---------------===//
//
// Type relations of the `elementwise` family of docs/operators.md. No
// implicit dtype promotion: binary operators need equal dtypes.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

enum class DKind { Any, Numeric, Float, Bool };

void requireKind(std::string_view Op, DKind K, const TensorTypeNode &T,
                 size_t Arg) {
  switch (K) {
  case DKind::Any: return;
  case DKind::Numeric: return requireNumeric(Op, T, Arg);
  case DKind::Float: return requireFloat(Op, T, Arg);
  case DKind::Bool: return requireBool(Op, T, Arg);
  }
}

Type makeTensor(const std::optional<std::vector<Dim>> &Shape, DType T) {
  return std::make_shared<TensorTypeNode>(Shape, T);
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

/// x of kind K -> same type.
template <OpName Name, DKind K>
Type unaryRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireKind(Op, K, X, 0);
  return makeTensor(X.shape, X.dtype);
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

constexpr auto Bcast = FusionPattern::Broadcast;
constexpr auto Elem = FusionPattern::Elementwise;

} // namespace

// Arithmetic: same numeric dtype, broadcast shape.
RIVET_REGISTER_OP(OpInfo{"add", "Elementwise sum with broadcasting.", 2, {},
                         binaryRel<"add", DKind::Numeric, false>, Bcast});
RIVET_REGISTER_OP(OpInfo{"subtract", "Elementwise difference with broadcasting.", 2, {},
                         binaryRel<"subtract", DKind::Numeric, false>, Bcast});
RIVET_REGISTER_OP(OpInfo{"multiply", "Elementwise product with broadcasting.", 2, {},
                         binaryRel<"multiply", DKind::Numeric, false>, Bcast});
RIVET_REGISTER_OP(OpInfo{"divide",
                         "Elementwise quotient with broadcasting; integer division "
                         "truncates toward zero.",
                         2, {}, binaryRel<"divide", DKind::Numeric, false>, Bcast});
RIVET_REGISTER_OP(OpInfo{"pow", "Elementwise power with broadcasting.", 2, {},
                         binaryRel<"pow", DKind::Numeric, false>, Bcast});
RIVET_REGISTER_OP(OpInfo{"maximum", "Elementwise maximum with broadcasting.", 2, {},
                         binaryRel<"maximum", DKind::Numeric, false>, Bcast});
RIVET_REGISTER_OP(OpInfo{"minimum", "Elementwise minimum with broadcasting.", 2, {},
                         binaryRel<"minimum", DKind::Numeric, false>, Bcast});

// Unary numeric.
RIVET_REGISTER_OP(OpInfo{"negative", "Elementwise negation.", 1, {},
                         unaryRel<"negative", DKind::Numeric>, Elem});
RIVET_REGISTER_OP(OpInfo{"abs", "Elementwise absolute value.", 1, {},
                         unaryRel<"abs", DKind::Numeric>, Elem});
RIVET_REGISTER_OP(OpInfo{"relu", "Elementwise max(x, 0).", 1, {},
                         unaryRel<"relu", DKind::Numeric>, Elem});

// Unary float.
RIVET_REGISTER_OP(OpInfo{"exp", "Elementwise e^x.", 1, {},
                         unaryRel<"exp", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"log", "Elementwise natural logarithm.", 1, {},
                         unaryRel<"log", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"tanh", "Elementwise hyperbolic tangent.", 1, {},
                         unaryRel<"tanh", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"sigmoid", "Elementwise 1 / (1 + e^-x).", 1, {},
                         unaryRel<"sigmoid", DKind::Float>, Elem});
RIVET_REGISTER_OP(OpInfo{"sqrt", "Elementwise square root.", 1, {},
                         unaryRel<"sqrt", DKind::Float>, Elem});

// Comparisons: same dtype (any), bool result.
RIVET_REGISTER_OP(OpInfo{"equal", "Elementwise a == b with broadcasting.", 2, {},
                         binaryRel<"equal", DKind::Any, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"not_equal", "Elementwise a != b with broadcasting.", 2, {},
                         binaryRel<"not_equal", DKind::Any, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"less", "Elementwise a < b with broadcasting.", 2, {},
                         binaryRel<"less", DKind::Any, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"less_equal", "Elementwise a <= b with broadcasting.", 2, {},
                         binaryRel<"less_equal", DKind::Any, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"greater", "Elementwise a > b with broadcasting.", 2, {},
                         binaryRel<"greater", DKind::Any, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"greater_equal", "Elementwise a >= b with broadcasting.", 2, {},
                         binaryRel<"greater_equal", DKind::Any, true>, Bcast});

// Logical.
RIVET_REGISTER_OP(OpInfo{"logical_and", "Elementwise a && b on bool tensors.", 2, {},
                         binaryRel<"logical_and", DKind::Bool, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"logical_or", "Elementwise a || b on bool tensors.", 2, {},
                         binaryRel<"logical_or", DKind::Bool, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"logical_xor", "Elementwise a != b on bool tensors.", 2, {},
                         binaryRel<"logical_xor", DKind::Bool, true>, Bcast});
RIVET_REGISTER_OP(OpInfo{"logical_not", "Elementwise !x on a bool tensor.", 1, {},
                         unaryRel<"logical_not", DKind::Bool>, Elem});

RIVET_REGISTER_OP(OpInfo{"where",
                         "Elementwise cond ? x : y with broadcasting of all three.",
                         3, {}, whereRel, Bcast});
RIVET_REGISTER_OP(OpInfo{"cast",
                         "Converts to another dtype; float->int truncates, ->bool is != 0.",
                         1,
                         {AttrSpec{"dtype", AttrSpec::Kind::String, true,
                                   "the target dtype, e.g. \"float32\""}},
                         castRel, Elem});

} // namespace rivet::ir
