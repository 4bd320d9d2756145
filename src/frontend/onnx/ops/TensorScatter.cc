//===- TensorScatter.cc - ONNX TensorScatter ------------------------------===//
//
// TensorScatter-24 maps 1:1 to tensor_scatter, attributes by the same names;
// the optional write_indices become a third argument.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

std::vector<Expr> convertTensorScatter(NodeContext &C) {
  Attrs A;
  if (C.hasAttr("axis"))
    A.set("axis", C.attrInt("axis"));
  if (C.hasAttr("mode"))
    A.set("mode", C.attrString("mode"));
  std::vector<Expr> Args = {C.input(0), C.input(1)};
  if (C.hasInput(2))
    Args.push_back(C.input(2));
  return {ir::callOp("tensor_scatter", std::move(Args), std::move(A))};
}

} // namespace

RIVET_REGISTER_ONNX_OP("TensorScatter", 24, convertTensorScatter);

} // namespace rivet::frontend
