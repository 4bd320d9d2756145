//===- Random.h - Deterministic random tensors ------------------*- C++ -*-===//
#pragma once

#include "kernels/Tensor.h"

#include <cstdint>

namespace rivet {

/// A tensor of deterministic pseudo-random values (splitmix64 stream from
/// Seed): floats uniform in [-1, 1), integers uniform in [0, 10), bools
/// 50/50. The same (shape, dtype, seed) always gives the same tensor on
/// every platform.
Tensor randomTensor(const Shape &Sh, DType T, uint64_t Seed);

} // namespace rivet
