//===- Activation.cc - ONNX activation functions --------------------------===//
//
// Relu, Sigmoid, Tanh and the parameterized activations map 1:1 to IR
// operators with the same attribute names (absent attributes keep ONNX's
// defaults, which the IR operators share). Clip's bounds are attributes
// before opset 11 and optional inputs after: a constant bound becomes an
// attribute, a computed one a maximum/minimum. Before opset 7 PRelu's 1-D
// slope is per channel (axis 1), which legacy_broadcast expresses. Gelu,
// Swish and Mish are their ONNX function bodies over IR elementwise operators
// (one generated kernel once fused).
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"

#include <array>
#include <cmath>
#include <numbers>

namespace rivet::frontend {
namespace {

using ir::Expr;

template <size_t N> struct IrOp {
  constexpr IrOp(const char (&S)[N]) { std::copy_n(S, N, Value); }
  char Value[N];
};

/// An activation with the float attributes Names (passed when present).
template <IrOp Name, typename... Names>
std::vector<Expr> convertActivation(NodeContext &C, Names... AttrNames) {
  Attrs A;
  std::array<const char *, sizeof...(Names)> Ns{AttrNames...};
  for (const char *N : Ns)
    if (C.hasAttr(N))
      A.set(N, C.attrFloat(N));
  return {ir::callOp(Name.Value, {C.input(0)}, std::move(A))};
}

std::vector<Expr> convertRelu(NodeContext &C) {
  return convertActivation<"relu">(C);
}
std::vector<Expr> convertSigmoid(NodeContext &C) {
  return convertActivation<"sigmoid">(C);
}
std::vector<Expr> convertTanh(NodeContext &C) {
  return convertActivation<"tanh">(C);
}
std::vector<Expr> convertElu(NodeContext &C) {
  return convertActivation<"elu">(C, "alpha");
}
std::vector<Expr> convertSelu(NodeContext &C) {
  return convertActivation<"selu">(C, "alpha", "gamma");
}
std::vector<Expr> convertCelu(NodeContext &C) {
  return convertActivation<"celu">(C, "alpha");
}
std::vector<Expr> convertLeakyRelu(NodeContext &C) {
  return convertActivation<"leaky_relu">(C, "alpha");
}
std::vector<Expr> convertHardSigmoid(NodeContext &C) {
  return convertActivation<"hard_sigmoid">(C, "alpha", "beta");
}
std::vector<Expr> convertHardSwish(NodeContext &C) {
  return convertActivation<"hard_swish">(C);
}
std::vector<Expr> convertThresholdedRelu(NodeContext &C) {
  return convertActivation<"thresholded_relu">(C, "alpha");
}
std::vector<Expr> convertShrink(NodeContext &C) {
  return convertActivation<"shrink">(C, "lambd", "bias");
}
std::vector<Expr> convertSoftplus(NodeContext &C) {
  return convertActivation<"softplus">(C);
}
std::vector<Expr> convertSoftsign(NodeContext &C) {
  return convertActivation<"softsign">(C);
}

/// Opset < 11: min/max attributes.
std::vector<Expr> convertClipAttrs(NodeContext &C) {
  return convertActivation<"clip">(C, "min", "max");
}

/// Opset >= 11: min and max are optional scalar inputs.
std::vector<Expr> convertClip(NodeContext &C) {
  Expr X = C.input(0);
  Attrs Static;
  Expr DynMin, DynMax;
  auto bound = [&](size_t I, const char *Name, Expr &Dyn) {
    if (!C.hasInput(I))
      return;
    if (std::optional<Tensor> T = C.constantInput(I)) {
      if (T->numel() != 1)
        C.error("input '{}' must be a scalar, got shape {}", Name,
                shapeToString(T->shape()));
      Static.set(Name, T->elementAsDouble(0));
    } else {
      Dyn = toScalar(C.input(I));
    }
  };
  bound(1, "min", DynMin);
  bound(2, "max", DynMax);
  // np.clip order: the lower bound first, then the upper one.
  if (DynMin)
    X = ir::callOp("maximum", {X, DynMin});
  if (!Static.empty())
    X = ir::callOp("clip", {X}, std::move(Static));
  if (DynMax)
    X = ir::callOp("minimum", {X, DynMax});
  return {X};
}

Expr mul(Expr A, Expr B) { return ir::callOp("multiply", {A, B}); }
Expr add(Expr A, Expr B) { return ir::callOp("add", {A, B}); }

/// Gelu-20, as its function bodies: 0.5 x (1 + erf(x / sqrt(2))), or with
/// approximate="tanh" 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
std::vector<Expr> convertGelu(NodeContext &C) {
  std::string Approx = C.attrString("approximate", "none");
  if (Approx != "none" && Approx != "tanh")
    C.error("attribute 'approximate' must be \"none\" or \"tanh\", got \"{}\"",
            Approx);
  Expr X = C.bind(C.input(0), "x");
  auto K = [&](double V) { return constantLike(V, X); };
  Expr Phi;
  if (Approx == "none") {
    Phi = ir::callOp("erf", {ir::callOp("divide", {X, K(std::sqrt(2.0))})});
  } else {
    Expr Cubic = add(X, mul(K(0.044715), mul(mul(X, X), X)));
    Phi =
        ir::callOp("tanh", {mul(K(std::sqrt(2.0 / std::numbers::pi)), Cubic)});
  }
  return {mul(mul(K(0.5), X), add(K(1.0), Phi))};
}

/// Swish-24: x * sigmoid(alpha * x).
std::vector<Expr> convertSwish(NodeContext &C) {
  Expr X = C.bind(C.input(0), "x");
  double Alpha = C.attrFloat("alpha", 1.0);
  Expr Arg = Alpha == 1.0 ? X : mul(constantLike(Alpha, X), X);
  return {mul(X, ir::callOp("sigmoid", {Arg}))};
}

/// Mish-18: x * tanh(softplus(x)).
std::vector<Expr> convertMish(NodeContext &C) {
  Expr X = C.bind(C.input(0), "x");
  return {mul(X, ir::callOp("tanh", {ir::callOp("softplus", {X})}))};
}

/// Opset < 7: a constant 1-D slope with several values is per channel.
std::vector<Expr> convertLegacyPRelu(NodeContext &C) {
  Expr X = C.input(0), Slope = C.input(1);
  std::optional<Tensor> S = C.constantInput(1);
  if (S && S->rank() == 1 && S->numel() > 1) {
    X = C.bind(X, "x");
    Slope =
        ir::callOp("legacy_broadcast", {Slope, X}, Attrs{{"axis", int64_t(1)}});
  }
  return {ir::callOp("prelu", {X, Slope})};
}

std::vector<Expr> convertPRelu(NodeContext &C) {
  return {ir::callOp("prelu", {C.input(0), C.input(1)})};
}

} // namespace

RIVET_REGISTER_ONNX_OP("Relu", 1, convertRelu);
RIVET_REGISTER_ONNX_OP("Sigmoid", 1, convertSigmoid);
RIVET_REGISTER_ONNX_OP("Tanh", 1, convertTanh);
RIVET_REGISTER_ONNX_OP("Elu", 1, convertElu);
RIVET_REGISTER_ONNX_OP("Selu", 1, convertSelu);
RIVET_REGISTER_ONNX_OP("Celu", 12, convertCelu);
RIVET_REGISTER_ONNX_OP("LeakyRelu", 1, convertLeakyRelu);
RIVET_REGISTER_ONNX_OP("HardSigmoid", 1, convertHardSigmoid);
RIVET_REGISTER_ONNX_OP("HardSwish", 14, convertHardSwish);
RIVET_REGISTER_ONNX_OP("ThresholdedRelu", 10, convertThresholdedRelu);
RIVET_REGISTER_ONNX_OP("Shrink", 9, convertShrink);
RIVET_REGISTER_ONNX_OP("Softplus", 1, convertSoftplus);
RIVET_REGISTER_ONNX_OP("Softsign", 1, convertSoftsign);
RIVET_REGISTER_ONNX_OP("Clip", 1, convertClipAttrs);
RIVET_REGISTER_ONNX_OP("Clip", 11, convertClip);
RIVET_REGISTER_ONNX_OP("PRelu", 1, convertLegacyPRelu);
RIVET_REGISTER_ONNX_OP("PRelu", 7, convertPRelu);
RIVET_REGISTER_ONNX_OP("Gelu", 20, convertGelu);
RIVET_REGISTER_ONNX_OP("Swish", 24, convertSwish);
RIVET_REGISTER_ONNX_OP("Mish", 18, convertMish);

} // namespace rivet::frontend
