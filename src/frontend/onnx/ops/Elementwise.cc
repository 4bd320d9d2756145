//===- Elementwise.cc - ONNX elementwise operators ------------------------===//
//
// Arithmetic, comparison, logical, math and cast operators. Before opset 7
// the binary operators have `broadcast`/`axis` attributes: with an axis, B's
// dims align with A's from that axis on, which legacy_broadcast expresses
// (it computes the reshape from A's rank); without one the alignment is
// trailing, which NumPy broadcasting already does. The variadic Sum, Max,
// Min and Mean fold over the binary operators.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"
#include "frontend/onnx/OnnxTensor.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

/// An IR operator name usable as a template argument.
template <size_t N> struct IrOp {
  constexpr IrOp(const char (&S)[N]) { std::copy_n(S, N, Value); }
  char Value[N];
};

/// Opset >= 7: NumPy broadcasting.
template <IrOp Name> std::vector<Expr> convertBinary(NodeContext &C) {
  return {ir::callOp(Name.Value, {C.input(0), C.input(1)})};
}

/// Opset < 7: `broadcast` (0/1) and `axis` attributes.
template <IrOp Name> std::vector<Expr> convertLegacyBinary(NodeContext &C) {
  Expr A = C.input(0), B = C.input(1);
  int64_t Broadcast = C.attrInt("broadcast", 0);
  if (Broadcast != 0 && Broadcast != 1)
    C.error("attribute 'broadcast' must be 0 or 1, got {}", Broadcast);
  if (Broadcast && C.hasAttr("axis")) {
    A = C.bind(A, "a");
    B = ir::callOp("legacy_broadcast", {B, A},
                   Attrs{{"axis", C.attrInt("axis")}});
  }
  return {ir::callOp(Name.Value, {A, B})};
}

template <IrOp Name> std::vector<Expr> convertUnary(NodeContext &C) {
  return {ir::callOp(Name.Value, {C.input(0)})};
}

/// Sum, Max, Min (and Mean): a left fold; one input is returned as it is.
template <IrOp Name, bool IsMean>
std::vector<Expr> convertVariadic(NodeContext &C) {
  if (C.numInputs() == 0)
    C.error("expects at least one input");
  Expr Acc = C.input(0);
  for (size_t I = 1; I < C.numInputs(); ++I)
    Acc = ir::callOp(Name.Value, {Acc, C.input(I)});
  if (IsMean && C.numInputs() > 1) {
    Acc = C.bind(Acc, "sum");
    // The count in the sum's dtype (Mean is float-only in ONNX).
    Expr N = ir::callOp(
        "cast_like",
        {ir::constant(Tensor::scalar<double>((double)C.numInputs())), Acc});
    Acc = ir::callOp("divide", {Acc, N});
  }
  return {Acc};
}

std::vector<Expr> convertMod(NodeContext &C) {
  int64_t Fmod = C.attrInt("fmod", 0);
  if (Fmod != 0 && Fmod != 1)
    C.error("attribute 'fmod' must be 0 or 1, got {}", Fmod);
  return {ir::callOp("mod", {C.input(0), C.input(1)}, Attrs{{"fmod", Fmod}})};
}

std::vector<Expr> convertBitShift(NodeContext &C) {
  std::string Dir = C.attrString("direction");
  if (Dir != "LEFT" && Dir != "RIGHT")
    C.error("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"{}\"",
            Dir);
  return {ir::callOp(Dir == "LEFT" ? "left_shift" : "right_shift",
                     {C.input(0), C.input(1)})};
}

std::vector<Expr> convertIsInf(NodeContext &C) {
  Attrs A{{"detect_negative", C.attrInt("detect_negative", 1)},
          {"detect_positive", C.attrInt("detect_positive", 1)}};
  return {ir::callOp("isinf", {C.input(0)}, std::move(A))};
}

std::vector<Expr> convertWhere(NodeContext &C) {
  return {ir::callOp("where", {C.input(0), C.input(1), C.input(2)})};
}

/// The DType named by Cast's `to`: an ONNX TensorProto type number (opset
/// >= 6) or, in opset 1, its name ("FLOAT").
DType castTarget(NodeContext &C) {
  const std::string What = C.where() + ": attribute 'to'";
  for (const auto &A : C.node().attribute())
    if (A.name() == "to" && A.type() == onnx::AttributeProto::STRING) {
      onnx::TensorProto_DataType T;
      if (!onnx::TensorProto_DataType_Parse(A.s(), &T))
        C.error("attribute 'to' names an unknown type '{}'", A.s());
      return dtypeFromOnnx(T, What);
    }
  return dtypeFromOnnx((int32_t)C.attrInt("to"), What);
}

/// Cast 19 added saturate, Cast 24 round_mode (both for the narrow float
/// types); the IR's defaults are ONNX's.
Attrs narrowCastAttrs(NodeContext &C) {
  Attrs A;
  if (C.opset() >= 19 && C.hasAttr("saturate"))
    A.set("saturate", C.attrInt("saturate"));
  if (C.opset() >= 24 && C.hasAttr("round_mode")) {
    std::string Mode = C.attrString("round_mode");
    if (Mode != "up" && Mode != "down" && Mode != "nearest")
      C.error("attribute 'round_mode' must be up, down or nearest, got '{}'",
              Mode);
    A.set("round_mode", Mode);
  }
  return A;
}

std::vector<Expr> convertCast(NodeContext &C) {
  DType To = castTarget(C);
  Attrs A = narrowCastAttrs(C);
  A.set("dtype", std::string(dtypeName(To)));
  return {ir::callOp("cast", {C.input(0)}, std::move(A))};
}

std::vector<Expr> convertCastLike(NodeContext &C) {
  return {
      ir::callOp("cast_like", {C.input(0), C.input(1)}, narrowCastAttrs(C))};
}

} // namespace

// Arithmetic and comparisons: legacy broadcasting before opset 7.
#define RIVET_ONNX_BINARY(OnnxName, IrName)                                    \
  RIVET_REGISTER_ONNX_OP(OnnxName, 1, convertLegacyBinary<IrName>);            \
  RIVET_REGISTER_ONNX_OP(OnnxName, 7, convertBinary<IrName>)
RIVET_ONNX_BINARY("Add", "add");
RIVET_ONNX_BINARY("Sub", "subtract");
RIVET_ONNX_BINARY("Mul", "multiply");
RIVET_ONNX_BINARY("Div", "divide");
RIVET_ONNX_BINARY("Pow", "pow");
RIVET_ONNX_BINARY("Equal", "equal");
RIVET_ONNX_BINARY("Greater", "greater");
RIVET_ONNX_BINARY("Less", "less");
RIVET_ONNX_BINARY("And", "logical_and");
RIVET_ONNX_BINARY("Or", "logical_or");
RIVET_ONNX_BINARY("Xor", "logical_xor");
#undef RIVET_ONNX_BINARY
RIVET_REGISTER_ONNX_OP("GreaterOrEqual", 12, convertBinary<"greater_equal">);
RIVET_REGISTER_ONNX_OP("LessOrEqual", 12, convertBinary<"less_equal">);
RIVET_REGISTER_ONNX_OP("Mod", 10, convertMod);
RIVET_REGISTER_ONNX_OP("BitShift", 11, convertBitShift);
RIVET_REGISTER_ONNX_OP("BitwiseAnd", 18, convertBinary<"bitwise_and">);
RIVET_REGISTER_ONNX_OP("BitwiseOr", 18, convertBinary<"bitwise_or">);
RIVET_REGISTER_ONNX_OP("BitwiseXor", 18, convertBinary<"bitwise_xor">);
RIVET_REGISTER_ONNX_OP("BitwiseNot", 18, convertUnary<"bitwise_not">);

// Variadic folds (broadcasting since opset 8; equal shapes before, which
// broadcasting also accepts).
RIVET_REGISTER_ONNX_OP("Sum", 1, (convertVariadic<"add", false>));
RIVET_REGISTER_ONNX_OP("Max", 1, (convertVariadic<"maximum", false>));
RIVET_REGISTER_ONNX_OP("Min", 1, (convertVariadic<"minimum", false>));
RIVET_REGISTER_ONNX_OP("Mean", 1, (convertVariadic<"add", true>));

// Unary math.
#define RIVET_ONNX_UNARY(OnnxName, Since, IrName)                              \
  RIVET_REGISTER_ONNX_OP(OnnxName, Since, convertUnary<IrName>)
RIVET_ONNX_UNARY("Abs", 1, "abs");
RIVET_ONNX_UNARY("Neg", 1, "negative");
RIVET_ONNX_UNARY("Exp", 1, "exp");
RIVET_ONNX_UNARY("Log", 1, "log");
RIVET_ONNX_UNARY("Sqrt", 1, "sqrt");
RIVET_ONNX_UNARY("Reciprocal", 1, "reciprocal");
RIVET_ONNX_UNARY("Ceil", 1, "ceil");
RIVET_ONNX_UNARY("Floor", 1, "floor");
RIVET_ONNX_UNARY("Round", 11, "round");
RIVET_ONNX_UNARY("Sign", 9, "sign");
RIVET_ONNX_UNARY("Erf", 9, "erf");
RIVET_ONNX_UNARY("Sin", 7, "sin");
RIVET_ONNX_UNARY("Cos", 7, "cos");
RIVET_ONNX_UNARY("Tan", 7, "tan");
RIVET_ONNX_UNARY("Asin", 7, "asin");
RIVET_ONNX_UNARY("Acos", 7, "acos");
RIVET_ONNX_UNARY("Atan", 7, "atan");
RIVET_ONNX_UNARY("Sinh", 9, "sinh");
RIVET_ONNX_UNARY("Cosh", 9, "cosh");
RIVET_ONNX_UNARY("Asinh", 9, "asinh");
RIVET_ONNX_UNARY("Acosh", 9, "acosh");
RIVET_ONNX_UNARY("Atanh", 9, "atanh");
RIVET_ONNX_UNARY("IsNaN", 9, "isnan");
RIVET_ONNX_UNARY("Not", 1, "logical_not");
#undef RIVET_ONNX_UNARY
RIVET_REGISTER_ONNX_OP("IsInf", 10, convertIsInf);
RIVET_REGISTER_ONNX_OP("Where", 9, convertWhere);
RIVET_REGISTER_ONNX_OP("Cast", 1, convertCast);
RIVET_REGISTER_ONNX_OP("Cast", 19, convertCast); // saturate
RIVET_REGISTER_ONNX_OP("Cast", 24, convertCast); // round_mode
RIVET_REGISTER_ONNX_OP("CastLike", 15, convertCastLike);
RIVET_REGISTER_ONNX_OP("CastLike", 19, convertCastLike);
RIVET_REGISTER_ONNX_OP("CastLike", 24, convertCastLike);

} // namespace rivet::frontend
