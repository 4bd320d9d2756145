//===- SmallGemm.h - Register-blocked float32 GEMM, small shapes -*- C++ -*-==//
//
// C = A B (+ bias per column) for the products of transformer layers and
// other small models: a few hundred rows, K and N of tens to hundreds. A
// oneDNN matmul call costs about 7 us whatever its size and reached a third
// of the FMA peak on [256, 64] x [64, 192]; here tiles of 6 rows by 16
// columns (64 on AVX-512) stay in registers over K, B read in place
// (row-major [K, N]).
// Compiled for AVX-512, AVX2 + FMA and the baseline; the CPU picks at load.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/cpu/CpuSupport.h"

#include <cstdint>

namespace rivet {

/// One product's operands: rows [M0, M1) of C [*, N] (row stride Ldc) =
/// A [*, K] (row stride Lda) times B [K, N] (row stride Ldb), plus Bias[n]
/// when Bias is not null, plus Addend[m][n] (row stride LdAddend; a
/// transformer's residual) when Addend is not null, then relu when Relu is
/// set (as the relu kernel: NaN stays, -0 becomes 0). Sums run over k in
/// order, in float. Addend may be C itself.
struct SmallGemmArgs {
  const float *A;
  int64_t Lda;
  const float *B;
  int64_t Ldb;
  const float *Bias;
  float *C;
  int64_t Ldc;
  int64_t N, K;
  bool Relu = false;
  const float *Addend = nullptr;
  int64_t LdAddend = 0;
};
using SmallGemmFn = void (*)(const SmallGemmArgs &, int64_t M0, int64_t M1);

/// The compilation for Isa, or null when this CPU cannot run it (tests run
/// every one the host has).
SmallGemmFn smallGemmFor(cpu::CpuIsa Isa);

/// Rows [0, M) of the product on the runtime's threads when the work is
/// large enough to share, on this CPU's best compilation.
void smallGemm(const SmallGemmArgs &G, int64_t M);

/// Whether a product of M x K by K x N runs here rather than on oneDNN:
/// K and N small enough for B to stay in L2 across rows, and at most
/// smallGemmMaxWork() multiply-adds (beyond, oneDNN's cache blocking wins).
bool smallGemmApplies(int64_t M, int64_t N, int64_t K);
/// That bound (default 2^23); 0 keeps every product on oneDNN (tests of
/// its paths).
int64_t smallGemmMaxWork();
void setSmallGemmMaxWork(int64_t Work);

} // namespace rivet
