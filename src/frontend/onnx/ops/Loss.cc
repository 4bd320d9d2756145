//===- Loss.cc - ONNX NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss --===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

/// Inputs (with the optional weight when present) and attributes.
std::pair<std::vector<Expr>, Attrs> lossArgs(NodeContext &C) {
  std::vector<Expr> In = {C.input(0), C.input(1)};
  if (C.hasInput(2))
    In.push_back(C.input(2));
  Attrs A{{"reduction", C.attrString("reduction", "mean")}};
  if (C.hasAttr("ignore_index"))
    A.set("ignore_index", C.attrInt("ignore_index"));
  return {std::move(In), std::move(A)};
}

std::vector<Expr> convertNll(NodeContext &C) {
  auto [In, A] = lossArgs(C);
  return {ir::callOp("nll_loss", std::move(In), std::move(A))};
}

std::vector<Expr> convertSce(NodeContext &C) {
  auto [In, A] = lossArgs(C);
  return C.bindTuple(
      ir::callOp("softmax_cross_entropy_loss", std::move(In), std::move(A)), 2);
}

} // namespace

RIVET_REGISTER_ONNX_OP("NegativeLogLikelihoodLoss", 12, convertNll);
RIVET_REGISTER_ONNX_OP("SoftmaxCrossEntropyLoss", 12, convertSce);

} // namespace rivet::frontend
