//===- Quantize.cc - ONNX QuantizeLinear, DequantizeLinear, Dynamic... ----===//
#include "frontend/onnx/Converter.h"
#include "frontend/onnx/OnnxTensor.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

/// x, scale and the optional zero point, with the attributes each version
/// has: axis (13), saturate (Q 19), block_size and Q's output_dtype (21),
/// Q's precision and DQ's output_dtype (23).
std::vector<Expr> quantArgs(NodeContext &C, Attrs &A, bool Quantize) {
  std::vector<Expr> Args{C.input(0), C.input(1)};
  if (C.hasInput(2))
    Args.push_back(C.input(2));
  if (C.hasAttr("axis"))
    A.set("axis", C.attrInt("axis"));
  auto dtypeAttr = [&](const char *Name) {
    // An ONNX data type code; 0 leaves it to the operator.
    if (int64_t Code = C.attrInt(Name, 0))
      A.set(Name,
            std::string(dtypeName(dtypeFromOnnx(
                (int32_t)Code, C.where() + ": attribute '" + Name + "'"))));
  };
  if (Quantize && C.opset() >= 19 && C.hasAttr("saturate"))
    A.set("saturate", C.attrInt("saturate"));
  if (C.opset() >= 21 && C.hasAttr("block_size"))
    A.set("block_size", C.attrInt("block_size"));
  if (Quantize && C.opset() >= 21)
    dtypeAttr("output_dtype");
  if (Quantize && C.opset() >= 23)
    dtypeAttr("precision");
  if (!Quantize && C.opset() >= 23)
    dtypeAttr("output_dtype");
  return Args;
}

std::vector<Expr> convertQuantizeLinear(NodeContext &C) {
  Attrs A;
  std::vector<Expr> Args = quantArgs(C, A, /*Quantize=*/true);
  return {ir::callOp("quantize_linear", Args, A)};
}
RIVET_REGISTER_ONNX_OP("QuantizeLinear", 10, convertQuantizeLinear);
RIVET_REGISTER_ONNX_OP("QuantizeLinear", 13, convertQuantizeLinear);
RIVET_REGISTER_ONNX_OP("QuantizeLinear", 19, convertQuantizeLinear);
RIVET_REGISTER_ONNX_OP("QuantizeLinear", 21, convertQuantizeLinear);
RIVET_REGISTER_ONNX_OP("QuantizeLinear", 23, convertQuantizeLinear);

std::vector<Expr> convertDequantizeLinear(NodeContext &C) {
  Attrs A;
  std::vector<Expr> Args = quantArgs(C, A, /*Quantize=*/false);
  return {ir::callOp("dequantize_linear", Args, A)};
}
RIVET_REGISTER_ONNX_OP("DequantizeLinear", 10, convertDequantizeLinear);
RIVET_REGISTER_ONNX_OP("DequantizeLinear", 13, convertDequantizeLinear);
RIVET_REGISTER_ONNX_OP("DequantizeLinear", 21, convertDequantizeLinear);
RIVET_REGISTER_ONNX_OP("DequantizeLinear", 23, convertDequantizeLinear);

std::vector<Expr> convertDynamicQuantizeLinear(NodeContext &C) {
  return C.bindTuple(ir::callOp("dynamic_quantize_linear", {C.input(0)}), 3);
}
RIVET_REGISTER_ONNX_OP("DynamicQuantizeLinear", 11,
                       convertDynamicQuantizeLinear);

} // namespace
} // namespace rivet::frontend
