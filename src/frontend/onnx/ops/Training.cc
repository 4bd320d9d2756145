//===- Training.cc - ONNX ai.onnx.preview.training optimizers -------------===//
//
// Adagrad, Adam and Momentum update n tensors at once: the inputs are R (the
// learning rate), T (the update count), then n tensors X, n gradients G and
// n (Adagrad, Momentum) or 2n (Adam) accumulators; the outputs are the n new
// X, then the new accumulators in input order. Each is its ONNX pseudo code
// over IR elementwise operators, computed in the dtype of the X it updates
// (one generated kernel per tensor once fused). T > 0 is a run-time test, a
// `where`.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

Expr add(Expr A, Expr B) { return ir::callOp("add", {A, B}); }
Expr sub(Expr A, Expr B) { return ir::callOp("subtract", {A, B}); }
Expr mul(Expr A, Expr B) { return ir::callOp("multiply", {A, B}); }
Expr div(Expr A, Expr B) { return ir::callOp("divide", {A, B}); }

/// E converted to the dtype of Like (R, T in the dtype of an X).
Expr castLike(Expr E, const Expr &Like) {
  return ir::callOp("cast_like", {std::move(E), Like});
}

/// T > 0, the test that tells a first update (T = 0) from the others.
Expr afterFirstUpdate(NodeContext &C) {
  return ir::callOp("greater",
                    {C.input(1), ir::constant(Tensor::scalar<int64_t>(0))});
}

/// How many tensors a node updates, given the number of inputs each takes
/// (X, G and its accumulators).
size_t updatedTensors(NodeContext &C, size_t InputsPerTensor) {
  size_t N = C.numInputs() < 2 ? 0 : C.numInputs() - 2;
  if (N == 0 || N % InputsPerTensor != 0)
    C.error("expects R, T and {} inputs per optimized tensor, got {} inputs",
            InputsPerTensor, C.numInputs());
  return N / InputsPerTensor;
}

/// norm_coefficient * X + G, bound.
Expr regularizedGradient(NodeContext &C, const Expr &X, Expr G) {
  double Norm = C.attrFloat("norm_coefficient", 0.0);
  return C.bind(add(mul(constantLike(Norm, X), X), std::move(G)), "g_reg");
}

std::vector<Expr> convertAdagrad(NodeContext &C) {
  size_t N = updatedTensors(C, 3);
  double Decay = C.attrFloat("decay_factor", 0.0);
  double Epsilon = C.attrFloat("epsilon", 1e-6);
  std::vector<Expr> XNew, HNew;
  for (size_t I = 0; I < N; ++I) {
    Expr X = C.bind(C.input(2 + I), "x");
    // r = R / (1 + T * decay_factor)
    Expr R = div(castLike(C.input(0), X),
                 add(constantLike(1.0, X),
                     mul(castLike(C.input(1), X), constantLike(Decay, X))));
    Expr G = regularizedGradient(C, X, C.input(2 + N + I));
    Expr H = C.bind(add(C.input(2 + 2 * N + I), mul(G, G)), "h_new");
    Expr Adaptive =
        add(ir::callOp("sqrt", {H}), constantLike(Epsilon, X)); // H_adaptive
    XNew.push_back(sub(X, div(mul(R, G), Adaptive)));
    HNew.push_back(H);
  }
  XNew.insert(XNew.end(), HNew.begin(), HNew.end());
  return XNew;
}

std::vector<Expr> convertAdam(NodeContext &C) {
  size_t N = updatedTensors(C, 4);
  double Alpha = C.attrFloat("alpha", 0.9);
  double Beta = C.attrFloat("beta", 0.999);
  double Epsilon = C.attrFloat("epsilon", 1e-6);
  double NormPost = C.attrFloat("norm_coefficient_post", 0.0);
  Expr Later = C.bind(afterFirstUpdate(C), "later");
  std::vector<Expr> XNew, VNew, HNew;
  for (size_t I = 0; I < N; ++I) {
    Expr X = C.bind(C.input(2 + I), "x");
    Expr G = regularizedGradient(C, X, C.input(2 + N + I));
    Expr V = C.bind(add(mul(constantLike(Alpha, X), C.input(2 + 2 * N + I)),
                        mul(constantLike(1 - Alpha, X), G)),
                    "v_new");
    Expr H = C.bind(add(mul(constantLike(Beta, X), C.input(2 + 3 * N + I)),
                        mul(constantLike(1 - Beta, X), mul(G, G))),
                    "h_new");
    Expr HSqrt = add(ir::callOp("sqrt", {H}), constantLike(Epsilon, X));
    // R_adjusted = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
    Expr R = C.bind(castLike(C.input(0), X), "r");
    Expr T = C.bind(castLike(C.input(1), X), "t");
    auto OneMinusPow = [&](double Base) {
      return sub(constantLike(1.0, X),
                 ir::callOp("pow", {constantLike(Base, X), T}));
    };
    Expr Corrected = div(mul(R, ir::callOp("sqrt", {OneMinusPow(Beta)})),
                         OneMinusPow(Alpha));
    Expr RAdjusted = ir::callOp("where", {Later, Corrected, R});
    Expr Updated = sub(X, mul(RAdjusted, div(V, HSqrt)));
    XNew.push_back(mul(constantLike(1 - NormPost, X), Updated));
    VNew.push_back(V);
    HNew.push_back(H);
  }
  XNew.insert(XNew.end(), VNew.begin(), VNew.end());
  XNew.insert(XNew.end(), HNew.begin(), HNew.end());
  return XNew;
}

std::vector<Expr> convertMomentum(NodeContext &C) {
  size_t N = updatedTensors(C, 3);
  double Alpha = C.attrFloat("alpha");
  double Beta = C.attrFloat("beta");
  std::string Mode = C.attrString("mode");
  if (Mode != "standard" && Mode != "nesterov")
    C.error("attribute 'mode' must be \"standard\" or \"nesterov\", got "
            "\"{}\"",
            Mode);
  Expr Later = C.bind(afterFirstUpdate(C), "later");
  std::vector<Expr> XNew, VNew;
  for (size_t I = 0; I < N; ++I) {
    Expr X = C.bind(C.input(2 + I), "x");
    Expr G = regularizedGradient(C, X, C.input(2 + N + I));
    // beta_adjusted = T > 0 ? beta : 1
    Expr BetaAdjusted = ir::callOp(
        "where", {Later, constantLike(Beta, X), constantLike(1.0, X)});
    Expr V = C.bind(add(mul(constantLike(Alpha, X), C.input(2 + 2 * N + I)),
                        mul(BetaAdjusted, G)),
                    "v_new");
    Expr R = castLike(C.input(0), X);
    Expr Direction =
        Mode == "standard" ? V : add(G, mul(constantLike(Alpha, X), V));
    XNew.push_back(sub(X, mul(R, Direction)));
    VNew.push_back(V);
  }
  XNew.insert(XNew.end(), VNew.begin(), VNew.end());
  return XNew;
}

constexpr const char *kTraining = "ai.onnx.preview.training";

} // namespace

RIVET_REGISTER_ONNX_DOMAIN_OP(kTraining, "Adagrad", 1, convertAdagrad);
RIVET_REGISTER_ONNX_DOMAIN_OP(kTraining, "Adam", 1, convertAdam);
RIVET_REGISTER_ONNX_DOMAIN_OP(kTraining, "Momentum", 1, convertMomentum);

} // namespace rivet::frontend
