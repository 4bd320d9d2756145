//===- Importer.h - ONNX models to IR modules -------------------*- C++ -*-===//
//
// The public surface of the ONNX frontend. It keeps protobuf and ONNX headers
// out of its includers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rivet::frontend {

/// Reads an ONNX model file and translates it into a module whose @main takes
/// the graph inputs (initializers excluded) in order and returns its outputs
/// (a tuple when there are several). External-data tensors are read relative
/// to the model's folder. Throws rivet::Error for a malformed model, an
/// unsupported operator (naming op, node and opset), an unsupported domain
/// or an unsupported version of one.
ir::Module importOnnxFile(const std::string &Path);

/// The same for a model already in memory; ModelDir resolves external data.
ir::Module importOnnxBytes(const void *Data, size_t Size,
                           const std::string &ModelDir,
                           const std::string &What = "<memory>");

/// Names of @main's inputs and outputs as the ONNX graph declares them.
struct OnnxSignature {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};
OnnxSignature onnxSignature(const ir::Module &M);

/// One ONNX operator translation: the operator, its domain ("ai.onnx",
/// "ai.onnx.ml", ...) and the version of the domain's opset it applies from
/// (an operator has one entry per version that changed it).
struct OnnxOpVersion {
  std::string domain;
  std::string opType;
  int64_t sinceVersion;
};
/// Every translation the frontend has, for the operator coverage table.
std::vector<OnnxOpVersion> onnxOperatorVersions();

/// A domain the frontend reads and its oldest and newest opsets it reads.
struct OnnxDomainVersions {
  std::string name;
  int64_t minVersion;
  int64_t maxVersion;
};
/// Every domain the frontend reads, ai.onnx (the default one) first.
std::vector<OnnxDomainVersions> onnxDomains();

} // namespace rivet::frontend
