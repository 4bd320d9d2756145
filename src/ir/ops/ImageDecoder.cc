//===- ImageDecoder.cc - image_decoder ------------------------------------===//
//
// ONNX ImageDecoder: a 1-D uint8 encoded image to [H, W, C] uint8, C = 3
// (RGB, BGR) or 1 (Grayscale). H and W are in the image's header: unknown
// until run time.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

Type imageDecoderRel(const std::vector<Type> &Args, const Attrs &A) {
  constexpr std::string_view Op = "image_decoder";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  std::string Format = OpAttrs(Op, A).getString("pixel_format");
  if (Format != "RGB" && Format != "BGR" && Format != "Grayscale")
    fail("{}: pixel_format must be RGB, BGR or Grayscale, got '{}'", Op,
         Format);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (X.dtype != DType::UInt8 || (X.shape && X.shape->size() != 1))
    failArg(0, "{}: the encoded image must be a 1-D uint8 tensor, got {}", Op,
            typeStr(X));
  int64_t Channels = Format == "Grayscale" ? 1 : 3;
  return tensorType({Dim::any(), Dim::any(), Dim::constant(Channels)},
                    DType::UInt8);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "image_decoder",
    "Decodes a BMP, JPEG, JPEG 2000, PNG, PNM, TIFF or WebP image (1-D "
    "uint8) into [H, W, C] uint8 pixels, RGB, BGR or Grayscale (ONNX "
    "ImageDecoder; FreeImage, loaded at run time).",
    1, imageDecoderRel, FusionPattern::Opaque});

} // namespace rivet::ir
