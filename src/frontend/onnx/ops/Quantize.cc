//===- Quantize.cc - ONNX QuantizeLinear, DequantizeLinear, Dynamic... ----===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

/// x, scale and the optional zero point; axis from opset 13 (before it the
/// scale is per tensor and axis is absent).
std::vector<Expr> quantArgs(NodeContext &C, Attrs &A) {
  std::vector<Expr> Args{C.input(0), C.input(1)};
  if (C.hasInput(2))
    Args.push_back(C.input(2));
  if (C.hasAttr("axis"))
    A.set("axis", C.attrInt("axis"));
  return Args;
}

std::vector<Expr> convertQuantizeLinear(NodeContext &C) {
  Attrs A;
  std::vector<Expr> Args = quantArgs(C, A);
  return {ir::callOp("quantize_linear", Args, A)};
}
RIVET_REGISTER_ONNX_OP("QuantizeLinear", 10, convertQuantizeLinear);
RIVET_REGISTER_ONNX_OP("QuantizeLinear", 13, convertQuantizeLinear);

std::vector<Expr> convertDequantizeLinear(NodeContext &C) {
  Attrs A;
  std::vector<Expr> Args = quantArgs(C, A);
  return {ir::callOp("dequantize_linear", Args, A)};
}
RIVET_REGISTER_ONNX_OP("DequantizeLinear", 10, convertDequantizeLinear);
RIVET_REGISTER_ONNX_OP("DequantizeLinear", 13, convertDequantizeLinear);

std::vector<Expr> convertDynamicQuantizeLinear(NodeContext &C) {
  return C.bindTuple(ir::callOp("dynamic_quantize_linear", {C.input(0)}), 3);
}
RIVET_REGISTER_ONNX_OP("DynamicQuantizeLinear", 11,
                       convertDynamicQuantizeLinear);

} // namespace
} // namespace rivet::frontend
