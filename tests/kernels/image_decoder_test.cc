//===- image_decoder_test.cc - image_decoder on hand-made images ----------===//
//
// Small images written byte by byte (so their pixels are known), decoded to
// RGB, BGR and Grayscale; bad data and a missing library fail naming the
// cause. The decoding tests skip where FreeImage is not installed (the
// ONNX test suite's images check the decoders' exactness).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/ImageCodec.h"

using namespace rivet;
using namespace rivet::test;

namespace {

using Bytes = std::vector<uint8_t>;

Tensor encoded(const std::string &Header, const Bytes &Pixels = {}) {
  Bytes B(Header.begin(), Header.end());
  B.insert(B.end(), Pixels.begin(), Pixels.end());
  return Tensor::fromVector<uint8_t>(B, {(int64_t)B.size()});
}

/// A 2x2 binary PPM: red, green / blue, (10, 20, 30).
Tensor ppm() {
  return encoded("P6\n2 2\n255\n",
                 {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30});
}

void put32(Bytes &B, size_t At, uint32_t V) {
  for (int I = 0; I < 4; ++I)
    B[At + I] = (uint8_t)(V >> (8 * I));
}

/// The image of ppm() as a 24-bit BMP: rows bottom to top, pixels B, G, R,
/// rows padded to 4 bytes.
Tensor bmp() {
  Bytes B(54, 0);
  B[0] = 'B', B[1] = 'M';
  Bytes Rows = {255, 0, 0,   30, 20,  10, 0, 0,  // bottom: blue, (10, 20, 30)
                0,   0, 255, 0,  255, 0,  0, 0}; // top: red, green
  put32(B, 2, (uint32_t)(54 + Rows.size()));     // file size
  put32(B, 10, 54);                              // pixel data offset
  put32(B, 14, 40);                              // info header size
  put32(B, 18, 2);                               // width
  put32(B, 22, 2);                               // height (bottom-up)
  B[26] = 1;                                     // planes
  B[28] = 24;                                    // bits per pixel
  put32(B, 34, (uint32_t)Rows.size());           // image size
  B.insert(B.end(), Rows.begin(), Rows.end());
  return Tensor::fromVector<uint8_t>(B, {(int64_t)B.size()});
}

Attrs format(const std::string &F) { return {{"pixel_format", F}}; }

bool haveLibrary() { return imageLibraryProblem(kImageLibrary).empty(); }

#define REQUIRE_LIBRARY()                                                      \
  if (!haveLibrary())                                                          \
  GTEST_SKIP() << imageLibraryProblem(kImageLibrary)

TEST(ImageDecoder, DecodesRowsTopToBottomInEachPixelFormat) {
  REQUIRE_LIBRARY();
  for (const Tensor &Image : {ppm(), bmp()}) {
    EXPECT_EQ(shapeOf("image_decoder", {Image})[0].shape, (Shape{2, 2, 3}));
    expectTensor(run("image_decoder", {Image}),
                 tensor<uint8_t>({255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30},
                                 {2, 2, 3}),
                 0, 0);
    expectTensor(run("image_decoder", {Image}, format("BGR")),
                 tensor<uint8_t>({0, 0, 255, 0, 255, 0, 255, 0, 0, 30, 20, 10},
                                 {2, 2, 3}),
                 0, 0);
    // PIL's luma: (299 R + 587 G + 114 B) / 1000 in 16-bit fixed point,
    // rounded: red 76, green 150, blue 29, (10, 20, 30) 18.
    expectTensor(run("image_decoder", {Image}, format("Grayscale")),
                 tensor<uint8_t>({76, 150, 29, 18}, {2, 2, 1}), 0, 0);
  }
}

TEST(ImageDecoder, GreyImagesBecomeEqualChannels) {
  REQUIRE_LIBRARY();
  Tensor Pgm = encoded("P5\n1 2\n255\n", {7, 200});
  expectTensor(run("image_decoder", {Pgm}),
               tensor<uint8_t>({7, 7, 7, 200, 200, 200}, {2, 1, 3}), 0, 0);
  expectTensor(run("image_decoder", {Pgm}, format("Grayscale")),
               tensor<uint8_t>({7, 200}, {2, 1, 1}), 0, 0);
}

TEST(ImageDecoder, BadDataFailsNamingTheCause) {
  REQUIRE_LIBRARY();
  expectError([] { run("image_decoder", {encoded("not an image at all")}); },
              "image_decoder: the 19 bytes are not an image of a known "
              "format (expected BMP, JPEG, JPEG 2000, PNG, PNM, TIFF and "
              "WebP)");
  expectError([] { run("image_decoder", {encoded("")}); },
              "the 0 bytes are not an image");
  expectError(
      [] {
        run("image_decoder",
            {encoded("GIF89a", {1, 0, 1, 0, 0, 0, 0, 0x3b, 0, 0, 0})});
      },
      "the data is a GIF image; only BMP, JPEG, JPEG 2000, PNG, PNM, TIFF "
      "and WebP are read");
  expectError(
      [] {
        run("image_decoder",
            {encoded("\x89PNG\r\n\x1a\n", {0, 0, 0, 13, 'I', 'H', 'D', 'R'})});
      },
      "image_decoder: cannot decode the PNG image");
}

TEST(ImageDecoder, RefusesOtherInputsAndFormats) {
  expectError(
      [] { shapeOf("image_decoder", {f32({1.0f}, {1})}); },
      "image_decoder: the encoded image must be a 1-D uint8 tensor, got "
      "Tensor[(1,), float32]");
  expectError([] { shapeOf("image_decoder", {ppm()}, format("RGBA")); },
              "pixel_format must be RGB, BGR or Grayscale, got 'RGBA'");
}

TEST(ImageDecoder, MissingLibraryIsNamedWithItsPackage) {
  std::string Problem = imageLibraryProblem("librivet-no-such-codec.so.3");
  EXPECT_NE(Problem.find("decoding images needs FreeImage "
                         "(librivet-no-such-codec.so.3, Debian package "
                         "libfreeimage3), which cannot be loaded: "),
            std::string::npos)
      << Problem;
  EXPECT_NE(Problem.find("No such file"), std::string::npos) << Problem;
  if (!haveLibrary())
    expectError([] { run("image_decoder", {ppm()}); },
                "image_decoder: decoding images needs FreeImage "
                "(libfreeimage.so.3, Debian package libfreeimage3)");
}

} // namespace
