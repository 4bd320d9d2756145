//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes NumPy's .npy format (versions 1.0, 2.0 and 3.0) for the
// dtypes Rivet has. Every malformed, truncated or unsupported file raises
// rivet::Error naming the file and the problem.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rivet {

/// Reads a .npy file from disk.
Tensor readNpy(const std::string &Path);
/// Parses .npy bytes held in memory; What names the source in errors.
Tensor readNpyBytes(const uint8_t *Data, size_t Size, const std::string &What);
/// Writes a tensor as a version 1.0 .npy file (version 2.0 if the header
/// needs it).
void writeNpy(const std::string &Path, const Tensor &T);
/// The bytes writeNpy would write.
std::vector<uint8_t> npyBytes(const Tensor &T);

} // namespace rivet
