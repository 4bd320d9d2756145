//===- Indexing.cc - ONNX gather, scatter and index operators -------------===//
//
// Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND,
// OneHot, Compress, NonZero and ReverseSequence. OneHot with a constant
// depth becomes the static one_hot, otherwise one_hot_dyn.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"
#include "ir/ops/StaticForms.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

std::vector<Expr> convertGather(NodeContext &C) {
  return {ir::callOp("take", {C.input(0), C.input(1)},
                     Attrs{{"axis", C.attrInt("axis", 0)}})};
}

std::vector<Expr> convertGatherElements(NodeContext &C) {
  return {ir::callOp("gather_elements", {C.input(0), C.input(1)},
                     Attrs{{"axis", C.attrInt("axis", 0)}})};
}

std::vector<Expr> convertGatherND(NodeContext &C) {
  return {ir::callOp("gather_nd", {C.input(0), C.input(1)},
                     Attrs{{"batch_dims", C.attrInt("batch_dims", 0)}})};
}

/// Scatter (opset 9, deprecated) and ScatterElements; reduction from 16.
std::vector<Expr> convertScatterElements(NodeContext &C) {
  return {ir::callOp("scatter_elements", {C.input(0), C.input(1), C.input(2)},
                     Attrs{{"axis", C.attrInt("axis", 0)},
                           {"reduction", C.attrString("reduction", "none")}})};
}

std::vector<Expr> convertScatterND(NodeContext &C) {
  return {ir::callOp("scatter_nd", {C.input(0), C.input(1), C.input(2)},
                     Attrs{{"reduction", C.attrString("reduction", "none")}})};
}

std::vector<Expr> convertOneHot(NodeContext &C) {
  int64_t Axis = C.attrInt("axis", -1);
  if (std::optional<Tensor> Depth = C.constantInput(1)) {
    if (Depth->numel() != 1)
      C.error("depth must have one element, got shape {}",
              shapeToString(Depth->shape()));
    double D = Depth->elementAsDouble(0);
    if (!(D >= 1 && D < 1e15))
      C.error("depth must be positive, got {}", D);
  }
  // A constant depth becomes one_hot's attribute (ir/ops/StaticForms.h).
  Expr Dyn = ir::callOp("one_hot_dyn", {C.input(0), C.input(1), C.input(2)},
                        Attrs{{"axis", Axis}});
  Expr S = ir::staticFormOf(Dyn);
  return {S ? S : Dyn};
}

std::vector<Expr> convertCompress(NodeContext &C) {
  Attrs A;
  if (C.hasAttr("axis"))
    A.set("axis", C.attrInt("axis"));
  return {ir::callOp("compress", {C.input(0), C.input(1)}, A)};
}

std::vector<Expr> convertNonZero(NodeContext &C) {
  return {ir::callOp("nonzero", {C.input(0)})};
}

std::vector<Expr> convertReverseSequence(NodeContext &C) {
  return {ir::callOp("reverse_sequence", {C.input(0), C.input(1)},
                     Attrs{{"batch_axis", C.attrInt("batch_axis", 1)},
                           {"time_axis", C.attrInt("time_axis", 0)}})};
}

} // namespace

RIVET_REGISTER_ONNX_OP("Gather", 1, convertGather);
RIVET_REGISTER_ONNX_OP("Gather", 11, convertGather);
RIVET_REGISTER_ONNX_OP("GatherElements", 11, convertGatherElements);
RIVET_REGISTER_ONNX_OP("GatherND", 11, convertGatherND);
RIVET_REGISTER_ONNX_OP("GatherND", 12, convertGatherND);
RIVET_REGISTER_ONNX_OP("Scatter", 9, convertScatterElements);
RIVET_REGISTER_ONNX_OP("ScatterElements", 11, convertScatterElements);
RIVET_REGISTER_ONNX_OP("ScatterElements", 16, convertScatterElements);
RIVET_REGISTER_ONNX_OP("ScatterElements", 18, convertScatterElements);
RIVET_REGISTER_ONNX_OP("ScatterND", 11, convertScatterND);
RIVET_REGISTER_ONNX_OP("ScatterND", 16, convertScatterND);
RIVET_REGISTER_ONNX_OP("ScatterND", 18, convertScatterND);
RIVET_REGISTER_ONNX_OP("OneHot", 9, convertOneHot);
RIVET_REGISTER_ONNX_OP("OneHot", 11, convertOneHot);
RIVET_REGISTER_ONNX_OP("Compress", 9, convertCompress);
RIVET_REGISTER_ONNX_OP("Compress", 11, convertCompress);
RIVET_REGISTER_ONNX_OP("NonZero", 9, convertNonZero);
RIVET_REGISTER_ONNX_OP("ReverseSequence", 10, convertReverseSequence);

} // namespace rivet::frontend
