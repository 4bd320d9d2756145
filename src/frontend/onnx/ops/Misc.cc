//===- Misc.cc - ONNX Constant, Identity and Dropout ----------------------===//
//
// Constant becomes an IR constant (value, value_float(s), value_int(s)).
// Dropout is inference-only: the identity, with an all-true mask. Since
// opset 12 ratio and training_mode are inputs; when training_mode is not a
// constant the `dropout` operator decides at run time (and refuses a random
// drop).
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

std::vector<Expr> convertConstant(NodeContext &C) {
  const char *Given = nullptr;
  int Count = 0;
  for (const char *N :
       {"value", "sparse_value", "value_float", "value_floats", "value_int",
        "value_ints", "value_string", "value_strings"})
    if (C.hasAttr(N)) {
      Given = N;
      ++Count;
    }
  if (Count != 1)
    C.error("expects exactly one of the value attributes, got {}", Count);
  std::string_view N = Given;
  if (N == "value")
    return {ir::constant(C.attrTensor("value"))};
  if (N == "value_float")
    return {ir::constant(Tensor::scalar<float>((float)C.attrFloat(N)))};
  if (N == "value_int")
    return {ir::constant(Tensor::scalar<int64_t>(C.attrInt(N)))};
  if (N == "value_floats") {
    std::vector<double> V = C.attrFloats(N);
    std::vector<float> F(V.begin(), V.end());
    return {ir::constant(Tensor::fromVector<float>(F, {(int64_t)F.size()}))};
  }
  if (N == "value_ints") {
    std::vector<int64_t> V = C.attrInts(N);
    return {ir::constant(Tensor::fromVector<int64_t>(V, {(int64_t)V.size()}))};
  }
  C.error("attribute '{}' is not supported (Rivet has no sparse or string "
          "tensors)",
          N);
}

std::vector<Expr> convertIdentity(NodeContext &C) { return {C.input(0)}; }

/// The all-true mask of x's shape (bool; before opset 10 the mask has x's
/// dtype).
Expr dropoutMask(NodeContext &C, Expr X) {
  Attrs A{{"value", 1.0}};
  if (C.opset() >= 10)
    A.set("dtype", std::string("bool"));
  return ir::callOp("full_like", {X}, std::move(A));
}

std::vector<Expr> inferenceDropout(NodeContext &C) {
  Expr X = C.input(0);
  if (!C.hasOutput(1))
    return {X};
  X = C.bind(X, "x");
  return {X, dropoutMask(C, X)};
}

/// Opset < 7: is_test (opset 6 default 0: training) and ratio attributes.
std::vector<Expr> convertDropoutV1(NodeContext &C) {
  double Ratio = C.attrFloat("ratio", 0.5);
  if (C.attrInt("is_test", 0) == 0 && Ratio > 0)
    C.error("training mode (is_test=0) with ratio {} drops at random, which "
            "is not supported",
            Ratio);
  return inferenceDropout(C);
}

/// Opset 7..11: always inference; ratio is an attribute.
std::vector<Expr> convertDropoutV7(NodeContext &C) {
  return inferenceDropout(C);
}

/// Opset >= 12: ratio and training_mode are optional inputs.
std::vector<Expr> convertDropoutV12(NodeContext &C) {
  if (!C.hasInput(2)) {
    C.ignoreInput(1); // the ratio matters only in training mode
    return inferenceDropout(C);
  }
  if (std::optional<Tensor> T = C.constantInput(2)) {
    if (T->numel() != 1 || T->dtype() != DType::Bool)
      C.error("input 'training_mode' must be a bool scalar, got {}",
              T->typeString());
    if (!T->data<bool>()[0]) {
      C.ignoreInput(1);
      return inferenceDropout(C);
    }
    std::optional<Tensor> R = C.constantInput(1); // nullopt when absent too
    if (!C.hasInput(1) || R) {
      if (R && R->numel() != 1)
        C.error("input 'ratio' must be a scalar, got shape {}",
                shapeToString(R->shape()));
      double Ratio = R ? R->elementAsDouble(0) : 0.5;
      if (Ratio != 0)
        C.error("training mode with ratio {} drops at random, which is not "
                "supported",
                Ratio);
      return inferenceDropout(C);
    }
  }
  // training_mode (or ratio) known only at run time.
  Expr Ratio =
      C.hasInput(1) ? C.input(1) : ir::constant(Tensor::scalar<float>(0.5f));
  Expr Both = ir::callOp("dropout", {C.input(0), Ratio, C.input(2)});
  std::vector<Expr> Outs = C.bindTuple(Both, 2);
  if (!C.hasOutput(1))
    Outs.pop_back();
  return Outs;
}

} // namespace

RIVET_REGISTER_ONNX_OP("Constant", 1, convertConstant);
RIVET_REGISTER_ONNX_OP("Identity", 1, convertIdentity);
RIVET_REGISTER_ONNX_OP("Dropout", 1, convertDropoutV1);
RIVET_REGISTER_ONNX_OP("Dropout", 7, convertDropoutV7);
RIVET_REGISTER_ONNX_OP("Dropout", 12, convertDropoutV12);

} // namespace rivet::frontend
