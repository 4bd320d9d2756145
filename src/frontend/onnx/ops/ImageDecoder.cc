//===- ImageDecoder.cc - ONNX ImageDecoder --------------------------------===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

std::vector<ir::Expr> convertImageDecoder(NodeContext &C) {
  Attrs A;
  if (C.hasAttr("pixel_format"))
    A.set("pixel_format", C.attrString("pixel_format"));
  return {ir::callOp("image_decoder", {C.input(0)}, std::move(A))};
}
RIVET_REGISTER_ONNX_OP("ImageDecoder", 20, convertImageDecoder);

} // namespace
} // namespace rivet::frontend
