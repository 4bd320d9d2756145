//===- Creation.cc - ONNX shape queries and tensor creation ---------------===//
//
// Shape, Size, ConstantOfShape, Range, EyeLike and Trilu. ConstantOfShape
// with a constant shape becomes `full`, otherwise the data-dependent
// constant_of_shape.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"
#include "frontend/onnx/OnnxTensor.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

std::vector<Expr> convertShape(NodeContext &C) {
  Attrs A;
  if (C.hasAttr("start"))
    A.set("start", C.attrInt("start"));
  if (C.hasAttr("end"))
    A.set("end", C.attrInt("end"));
  return {ir::callOp("shape_of", {C.input(0)}, A)};
}

std::vector<Expr> convertSize(NodeContext &C) {
  return {ir::callOp("size", {C.input(0)})};
}

std::vector<Expr> convertConstantOfShape(NodeContext &C) {
  Tensor Value =
      C.hasAttr("value") ? C.attrTensor("value") : Tensor::scalar<float>(0.0f);
  if (Value.numel() != 1)
    C.error("attribute 'value' must have one element, got shape {}",
            shapeToString(Value.shape()));
  if (std::optional<Tensor> S = C.constantInput(0)) {
    if (S->rank() != 1 || S->dtype() != DType::Int64)
      C.error("input 'input' must be a 1-D int64 tensor, got {}",
              S->typeString());
    return {ir::callOp("full", {ir::constant(Value.reshape({}))},
                       Attrs{{"shape", S->toIntVector()}})};
  }
  return {ir::callOp("constant_of_shape", {C.input(0)},
                     Attrs{{"value", Value.reshape({})}})};
}

std::vector<Expr> convertRange(NodeContext &C) {
  return {ir::callOp("arange", {toScalar(C.input(0)), toScalar(C.input(1)),
                                toScalar(C.input(2))})};
}

std::vector<Expr> convertEyeLike(NodeContext &C) {
  Attrs A{{"k", C.attrInt("k", 0)}};
  if (C.hasAttr("dtype"))
    A.set("dtype", std::string(dtypeName(
                       dtypeFromOnnx((int32_t)C.attrInt("dtype"), C.where()))));
  return {ir::callOp("eye_like", {C.input(0)}, A)};
}

std::vector<Expr> convertTrilu(NodeContext &C) {
  std::vector<Expr> Args = {C.input(0)};
  if (C.hasInput(1))
    Args.push_back(C.input(1));
  return {ir::callOp("trilu", Args, Attrs{{"upper", C.attrInt("upper", 1)}})};
}

} // namespace

RIVET_REGISTER_ONNX_OP("Shape", 1, convertShape);
RIVET_REGISTER_ONNX_OP("Shape", 15, convertShape);
RIVET_REGISTER_ONNX_OP("Size", 1, convertSize);
RIVET_REGISTER_ONNX_OP("ConstantOfShape", 9, convertConstantOfShape);
RIVET_REGISTER_ONNX_OP("Range", 11, convertRange);
RIVET_REGISTER_ONNX_OP("EyeLike", 9, convertEyeLike);
RIVET_REGISTER_ONNX_OP("Trilu", 14, convertTrilu);

} // namespace rivet::frontend
