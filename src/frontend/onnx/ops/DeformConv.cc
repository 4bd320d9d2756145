//===- DeformConv.cc - ONNX DeformConv ------------------------------------===//
//
// DeformConv-19 (22 only widens the dtypes) maps 1:1 onto deform_conv; an
// absent bias or mask is an empty tensor of x's dtype.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

std::vector<Expr> convertDeformConv(NodeContext &C) {
  Expr X = C.input(0);
  auto OrEmpty = [&](size_t I) {
    if (C.hasInput(I))
      return C.input(I);
    return ir::callOp("cast_like",
                      {ir::constant(Tensor::zeros({0}, DType::Float32)), X});
  };
  Attrs A;
  for (const char *N : {"strides", "pads", "dilations", "kernel_shape"})
    if (C.hasAttr(N))
      A.set(N, C.attrInts(N));
  A.set("group", C.attrInt("group", 1));
  A.set("offset_group", C.attrInt("offset_group", 1));
  return {ir::callOp("deform_conv",
                     {X, C.input(1), C.input(2), OrEmpty(3), OrEmpty(4)}, A)};
}
RIVET_REGISTER_ONNX_OP("DeformConv", 19, convertDeformConv);

} // namespace
} // namespace rivet::frontend
