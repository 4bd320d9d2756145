//===- ImageDecoder.cc - image_decoder (ONNX ImageDecoder) ----------------===//
//
// Decodes an encoded image (a 1-D uint8 tensor) with kernels/ImageCodec.h
// into [H, W, C] uint8. The extents come from the image's header, so the
// shape function reads the input.
//
//===----------------------------------------------------------------------===//
#include "kernels/ImageCodec.h"
#include "kernels/ops/KernelUtil.h"

#include <utility>

namespace rivet::kernels {
namespace {

constexpr const char *kImageDecoderOp = "image_decoder";

/// Channels of pixel_format (RGB, BGR or Grayscale).
int64_t channels(const Attrs &A) {
  std::string Format = attrString(kImageDecoderOp, A, "pixel_format");
  if (Format == "RGB" || Format == "BGR")
    return 3;
  if (Format == "Grayscale")
    return 1;
  fail("{}: pixel_format must be RGB, BGR or Grayscale, got '{}'",
       kImageDecoderOp, Format);
}

std::vector<TensorMeta> imageDecoderShape(const std::vector<Tensor> &In,
                                          const Attrs &A) {
  checkArity(kImageDecoderOp, In, 1);
  const Tensor &X = In[0];
  if (X.dtype() != DType::UInt8 || X.shape().size() != 1)
    fail("{}: the encoded image must be a 1-D uint8 tensor, got {}",
         kImageDecoderOp, X.typeString());
  int64_t C = channels(A);
  ImageExtent E = withOp(kImageDecoderOp, [&] {
    return imageExtent(X.data<uint8_t>(), (size_t)X.numel());
  });
  return {{Shape{E.height, E.width, C}, DType::UInt8}};
}

void imageDecoderKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                        const Attrs &A) {
  const Tensor &X = In[0];
  Tensor &R = Out[0];
  ImageExtent E{R.shape()[0], R.shape()[1]};
  std::string Format = attrString(kImageDecoderOp, A, "pixel_format");
  int64_t Pixels = E.height * E.width;
  std::vector<uint8_t> Rgb;
  uint8_t *P = R.data<uint8_t>();
  if (Format == "Grayscale")
    Rgb.resize((size_t)Pixels * 3);
  withOp(kImageDecoderOp, [&] {
    decodeImageRgb(X.data<uint8_t>(), (size_t)X.numel(), E,
                   Rgb.empty() ? P : Rgb.data());
  });
  if (Format == "BGR") {
    for (int64_t I = 0; I < Pixels; ++I)
      std::swap(P[I * 3], P[I * 3 + 2]);
  } else if (Format == "Grayscale") {
    // ITU-R 601-2 luma in 16-bit fixed point, rounded: PIL's
    // convert("L"), which ONNX's reference and test data use.
    for (int64_t I = 0; I < Pixels; ++I) {
      const uint8_t *S = &Rgb[(size_t)I * 3];
      P[I] =
          (uint8_t)((S[0] * 19595 + S[1] * 38470 + S[2] * 7471 + 0x8000) >> 16);
    }
  }
}

} // namespace

RIVET_REGISTER_KERNEL("image_decoder", imageDecoderKernel, imageDecoderShape,
                      true);

RIVET_REGISTER_ATTRS("image_decoder",
                     {{"pixel_format", AttrKind::String, false,
                       "RGB, BGR or Grayscale: the channels of the result",
                       "RGB"}});

} // namespace rivet::kernels
