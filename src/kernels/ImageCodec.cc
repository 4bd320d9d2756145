//===- ImageCodec.cc - FreeImage, loaded with dlopen ----------------------===//
//
// The few functions of FreeImage's C API (FreeImage.h, stable through 3.x)
// used here are declared here, so that building needs no FreeImage headers.
// The library is opened once and never closed, like the CUDA driver.
//
//===----------------------------------------------------------------------===//
#include "kernels/ImageCodec.h"

#include "kernels/Error.h"

#include <algorithm>
#include <cstdarg>
#include <dlfcn.h>
#include <limits>
#include <memory>
#include <mutex>

namespace rivet {
namespace {

// FreeImage.h's types and constants.
struct FIMEMORY;
struct FIBITMAP;
using FiFormat = int; // FREE_IMAGE_FORMAT
using FiBool = int32_t;
constexpr FiFormat kFifUnknown = -1;
constexpr FiFormat kFifJpeg = 2;
constexpr FiFormat kFifPng = 13;
constexpr int kFitBitmap = 1, kFitUInt16 = 2, kFitRgb16 = 9, kFitRgba16 = 10;
constexpr int kLoadNoPixels = 0x8000;
/// Loads JPEG with libjpeg's exact DCT and smooth chroma upsampling (its
/// defaults, which PIL and OpenCV keep), not FreeImage's fast default (off
/// by up to 64 on ONNX's test image).
constexpr int kJpegAccurate = 0x0002;
/// Leaves PNG samples as stored, as other decoders do, rather than
/// correcting them by the file's gamma.
constexpr int kPngIgnoreGamma = 0x0001;
/// Byte offsets of a 24-bit pixel's channels: FreeImage stores BGR on
/// little-endian machines.
constexpr int kRed = 2, kGreen = 1, kBlue = 0;

/// The formats read (ONNX ImageDecoder's), by FreeImage's numbers; PNM is
/// PBM, PGM and PPM, each as text or binary.
struct Format {
  FiFormat fif;
  const char *name;
};
constexpr Format kFormats[] = {
    {0, "BMP"},  {kFifJpeg, "JPEG"}, {7, "PNM"},        {8, "PNM"},
    {11, "PNM"}, {12, "PNM"},        {kFifPng, "PNG"},  {14, "PNM"},
    {15, "PNM"}, {18, "TIFF"},       {30, "JPEG 2000"}, {31, "JPEG 2000"},
    {35, "WebP"}};
constexpr const char *kFormatList =
    "BMP, JPEG, JPEG 2000, PNG, PNM, TIFF and WebP";

struct FreeImageApi {
  void (*Initialise)(FiBool LoadLocalPluginsOnly);
  void (*SetOutputMessage)(void (*)(FiFormat, const char *));
  FIMEMORY *(*OpenMemory)(uint8_t *Data, uint32_t Size);
  void (*CloseMemory)(FIMEMORY *);
  FiFormat (*GetFileTypeFromMemory)(FIMEMORY *, int Size);
  const char *(*GetFormatFromFIF)(FiFormat);
  FIBITMAP *(*LoadFromMemory)(FiFormat, FIMEMORY *, int Flags);
  void (*Unload)(FIBITMAP *);
  unsigned (*GetWidth)(FIBITMAP *);
  unsigned (*GetHeight)(FIBITMAP *);
  int (*GetImageType)(FIBITMAP *);
  FIBITMAP *(*ConvertTo8Bits)(FIBITMAP *);
  FIBITMAP *(*ConvertTo24Bits)(FIBITMAP *);
  uint8_t *(*GetScanLine)(FIBITMAP *, int);
};

struct LoadedLibrary {
  FreeImageApi Api{};
  std::string Problem; // "" when usable
};

template <typename F>
bool resolve(void *Lib, const char *Library, const char *Symbol, F &Fn,
             std::string &Problem) {
  Fn = reinterpret_cast<F>(dlsym(Lib, Symbol));
  if (!Fn)
    Problem =
        fmt::format("{} is not FreeImage 3 (it has no {})", Library, Symbol);
  return Fn != nullptr;
}

/// The message of FreeImage's last complaint on this thread (it reports
/// errors through a callback, not through return values).
thread_local std::string LastMessage;

void keepMessage(FiFormat, const char *Message) {
  LastMessage = Message ? Message : "";
}

void ignoreTiffMessage(const char *, const char *, va_list) {}

/// FreeImage means libtiff to be silent, and is when it bundles libtiff;
/// linked to the system's libtiff (Debian's build), whose default handlers
/// print to stderr, it would print dozens of "unknown tag" lines per TIFF
/// image. The handlers are libtiff's, for the whole process.
void silenceTiff(void *Lib) {
  using Handler = void (*)(const char *, const char *, va_list);
  using SetHandler = Handler (*)(Handler);
  for (const char *Setter : {"TIFFSetErrorHandler", "TIFFSetWarningHandler"})
    if (auto Set = reinterpret_cast<SetHandler>(dlsym(Lib, Setter)))
      Set(ignoreTiffMessage);
}

LoadedLibrary load(const char *Library) {
  LoadedLibrary L;
  void *Lib = dlopen(Library, RTLD_NOW | RTLD_LOCAL);
  if (!Lib) {
    const char *E = dlerror();
    L.Problem = fmt::format("decoding images needs FreeImage ({}, Debian "
                            "package libfreeimage3), which cannot be loaded: "
                            "{}",
                            Library, E ? E : "dlopen failed");
    return L;
  }
  FreeImageApi &A = L.Api;
  std::string &P = L.Problem;
  bool Ok =
      resolve(Lib, Library, "FreeImage_Initialise", A.Initialise, P) &&
      resolve(Lib, Library, "FreeImage_SetOutputMessage", A.SetOutputMessage,
              P) &&
      resolve(Lib, Library, "FreeImage_OpenMemory", A.OpenMemory, P) &&
      resolve(Lib, Library, "FreeImage_CloseMemory", A.CloseMemory, P) &&
      resolve(Lib, Library, "FreeImage_GetFileTypeFromMemory",
              A.GetFileTypeFromMemory, P) &&
      resolve(Lib, Library, "FreeImage_GetFormatFromFIF", A.GetFormatFromFIF,
              P) &&
      resolve(Lib, Library, "FreeImage_LoadFromMemory", A.LoadFromMemory, P) &&
      resolve(Lib, Library, "FreeImage_Unload", A.Unload, P) &&
      resolve(Lib, Library, "FreeImage_GetWidth", A.GetWidth, P) &&
      resolve(Lib, Library, "FreeImage_GetHeight", A.GetHeight, P) &&
      resolve(Lib, Library, "FreeImage_GetImageType", A.GetImageType, P) &&
      resolve(Lib, Library, "FreeImage_ConvertTo8Bits", A.ConvertTo8Bits, P) &&
      resolve(Lib, Library, "FreeImage_ConvertTo24Bits", A.ConvertTo24Bits,
              P) &&
      resolve(Lib, Library, "FreeImage_GetScanLine", A.GetScanLine, P);
  if (!Ok) {
    dlclose(Lib);
    return L;
  }
  // The shared library initializes itself when loaded; a second call only
  // counts a reference, and makes sure of it.
  A.Initialise(0);
  A.SetOutputMessage(keepMessage);
  silenceTiff(Lib);
  return L;
}

/// Loaded on first use, by whichever thread comes first; leaked, like the
/// library itself.
const FreeImageApi &api() {
  static std::once_flag Once;
  static LoadedLibrary *L = nullptr;
  std::call_once(Once, [] { L = new LoadedLibrary(load(kImageLibrary)); });
  if (!L->Problem.empty())
    throw Error(L->Problem);
  return L->Api;
}

/// FreeImage's last message on this thread, as " (message)", or "".
std::string lastMessage() {
  return LastMessage.empty() ? "" : " (" + LastMessage + ")";
}

struct MemoryCloser {
  const FreeImageApi *A;
  void operator()(FIMEMORY *M) const { A->CloseMemory(M); }
};
struct BitmapUnloader {
  const FreeImageApi *A;
  void operator()(FIBITMAP *B) const { A->Unload(B); }
};
using Bitmap = std::unique_ptr<FIBITMAP, BitmapUnloader>;

/// The image in Data, loaded with the extra flags Flags (kLoadNoPixels: the
/// header only, where the format allows).
Bitmap loadImage(const FreeImageApi &A, const uint8_t *Data, size_t Size,
                 int Flags) {
  if (Size > std::numeric_limits<uint32_t>::max())
    fail("the encoded image has {} bytes; at most 4 GiB are read", Size);
  LastMessage.clear();
  // FreeImage only reads the memory it is given, despite the pointer's type.
  std::unique_ptr<FIMEMORY, MemoryCloser> Memory(
      A.OpenMemory(const_cast<uint8_t *>(Data), (uint32_t)Size),
      MemoryCloser{&A});
  if (!Memory)
    fail("cannot read the encoded image{}", lastMessage());
  FiFormat Fif = A.GetFileTypeFromMemory(Memory.get(), 0);
  const Format *F = std::find_if(std::begin(kFormats), std::end(kFormats),
                                 [&](const Format &K) { return K.fif == Fif; });
  if (Fif == kFifUnknown)
    fail("the {} bytes are not an image of a known format (expected {})", Size,
         kFormatList);
  if (F == std::end(kFormats)) {
    const char *Name = A.GetFormatFromFIF(Fif);
    fail("the data is a {} image; only {} are read", Name ? Name : "?",
         kFormatList);
  }
  if (Fif == kFifJpeg)
    Flags |= kJpegAccurate;
  else if (Fif == kFifPng)
    Flags |= kPngIgnoreGamma;
  Bitmap B(A.LoadFromMemory(Fif, Memory.get(), Flags), BitmapUnloader{&A});
  if (!B)
    fail("cannot decode the {} image{}", F->name, lastMessage());
  return B;
}

/// B as 8-bit RGB (FreeImage's 24-bit bitmap).
Bitmap toRgb(const FreeImageApi &A, const Bitmap &B) {
  int Type = A.GetImageType(B.get());
  Bitmap R(nullptr, BitmapUnloader{&A});
  if (Type == kFitBitmap || Type == kFitRgb16 || Type == kFitRgba16) {
    R.reset(A.ConvertTo24Bits(B.get()));
  } else if (Type == kFitUInt16) { // 16-bit grey: to 8 bits, then to RGB
    Bitmap Grey(A.ConvertTo8Bits(B.get()), BitmapUnloader{&A});
    if (Grey)
      R.reset(A.ConvertTo24Bits(Grey.get()));
  } else {
    fail("images of FreeImage pixel type {} (not 8 or 16 bits per channel) "
         "are not read",
         Type);
  }
  if (!R)
    fail("cannot convert the image to 8-bit RGB{}", lastMessage());
  return R;
}

} // namespace

std::string imageLibraryProblem(const char *Library) {
  return load(Library).Problem;
}

ImageExtent imageExtent(const uint8_t *Data, size_t Size) {
  const FreeImageApi &A = api();
  Bitmap B = loadImage(A, Data, Size, kLoadNoPixels);
  return {A.GetHeight(B.get()), A.GetWidth(B.get())};
}

void decodeImageRgb(const uint8_t *Data, size_t Size, ImageExtent Extent,
                    uint8_t *Rgb) {
  const FreeImageApi &A = api();
  Bitmap Rgb24 = toRgb(A, loadImage(A, Data, Size, 0));
  ImageExtent Got{A.GetHeight(Rgb24.get()), A.GetWidth(Rgb24.get())};
  if (Got.height != Extent.height || Got.width != Extent.width)
    fail("the decoded image is {}x{} pixels, its header said {}x{}", Got.height,
         Got.width, Extent.height, Extent.width);
  for (int64_t Y = 0; Y < Extent.height; ++Y) {
    // FreeImage's rows run bottom to top.
    const uint8_t *Src =
        A.GetScanLine(Rgb24.get(), (int)(Extent.height - 1 - Y));
    uint8_t *Dst = Rgb + Y * Extent.width * 3;
    for (int64_t X = 0; X < Extent.width; ++X, Src += 3, Dst += 3) {
      Dst[0] = Src[kRed];
      Dst[1] = Src[kGreen];
      Dst[2] = Src[kBlue];
    }
  }
}

} // namespace rivet
