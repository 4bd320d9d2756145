//===- OnnxTestUtil.h - Importing hand-built ONNX models in tests -*- C++
//-*-===//
#pragma once

#include "frontend/onnx/Importer.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace rivet::test {

/// Imports and type-checks a model built in a test.
inline ir::Module importModel(const onnx::ModelProto &M) {
  std::string Bytes = M.SerializeAsString();
  ir::Module Mod =
      frontend::importOnnxBytes(Bytes.data(), Bytes.size(), "", "test.onnx");
  ir::inferTypes(Mod);
  return Mod;
}

/// The message importModel fails with, or "<no error>".
inline std::string importModelError(const onnx::ModelProto &M) {
  try {
    importModel(M);
  } catch (const Error &E) {
    return E.what();
  }
  return "<no error>";
}

} // namespace rivet::test
