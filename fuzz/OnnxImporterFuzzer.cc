//===- OnnxImporterFuzzer.cc - libFuzzer target for the ONNX importer -----===//
//
// Arbitrary bytes as an ONNX model: importing and type-checking may fail
// only with rivet::Error. The model is not run (a fuzzed shape may be huge).
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Importer.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  try {
    rivet::ir::Module M =
        rivet::frontend::importOnnxBytes(Data, Size, "", "<fuzz>");
    rivet::ir::inferTypes(M);
  } catch (const rivet::Error &) {
  }
  return 0;
}
