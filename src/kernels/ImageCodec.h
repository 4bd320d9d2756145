//===- ImageCodec.h - Decoding encoded images -------------------*- C++ -*-===//
//
// image_decoder's decoder is FreeImage (Debian's libfreeimage3), loaded with
// dlopen on first use: the runtime loads, and runs every other operator, on
// a machine without it, and image_decoder then fails naming the library and
// its package. Only the formats ONNX ImageDecoder names are read: BMP,
// JPEG, JPEG 2000, PNG, PNM, TIFF and WebP.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace rivet {

/// The file image_decoder loads FreeImage from.
inline constexpr const char *kImageLibrary = "libfreeimage.so.3";

/// The pixel extents of an image.
struct ImageExtent {
  int64_t height = 0;
  int64_t width = 0;
};

/// Why FreeImage cannot be loaded from the file Library (a message naming
/// it and its Debian package), or "" when it can. Decoding fails with this
/// message when kImageLibrary cannot be loaded.
std::string imageLibraryProblem(const char *Library);

/// The extents of the image that Data holds, from its header where the
/// format allows. Throws rivet::Error when Data is no image of the formats
/// read, or the library cannot be loaded.
ImageExtent imageExtent(const uint8_t *Data, size_t Size);

/// Decodes the image that Data holds into Rgb: Extent.height rows, top to
/// bottom, of Extent.width pixels R, G, B (8 bits each; alpha dropped,
/// 16-bit channels shifted to 8). Throws rivet::Error as imageExtent does,
/// and when the pixels cannot be decoded or are not of that extent.
void decodeImageRgb(const uint8_t *Data, size_t Size, ImageExtent Extent,
                    uint8_t *Rgb);

} // namespace rivet
