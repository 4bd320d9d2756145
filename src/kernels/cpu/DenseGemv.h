//===- DenseGemv.h - A one-row dense: a matrix-vector product --*- C++ -*-===//
//
// out[n] = x[:] . w[n, :] (+ bias[n]) for a dense whose x has one row. The
// weights stream through once, four rows at a time, so the product runs at
// the rate memory delivers them; oneDNN 2.6's matmul primitive (brgemm)
// read them at about half that rate (mobilenet_v2's classifier; the figures
// are in docs/benchmarks.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace rivet {

/// Out[n] = X . W[n] (+ Bias[n]) for rows n in [N0, N1) of W ([*, K],
/// row-major); Bias may be null. Compiled for AVX-512, AVX2 and the
/// baseline, picked by the CPU at load time. The sums are formed in 16
/// partial sums per row, added pairwise at the end: within the rounding of
/// any summation order, not bit for bit the reference kernel's.
void denseGemvRows(const float *X, const float *W, const float *Bias, int64_t K,
                   int64_t N0, int64_t N1, float *Out);

} // namespace rivet
