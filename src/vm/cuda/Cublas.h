//===- Cublas.h - Matrix products on the GPU through cuBLAS -----*- C++ -*-===//
//
// The library kernels' door to cuBLAS (libcublas.so.13, loaded with dlopen
// on first use, never linked): float32 products of row-major matrices,
// batched with strides, queued on the GPU's one stream. TF32 tensor cores
// are used only when the caller allows them (`--allow-tf32`); otherwise
// every product is computed in float32 with float32 accumulation.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace rivet::vm::cuda {

/// C[b] = op(A[b]) x op(B[b]) for b < batch, row-major: op(A) is M x K and
/// op(B) K x N; A (B) is stored transposed when transA (transB). ld* are
/// the stored rows' lengths, stride* the distance between batch members
/// (0: one matrix for every member), all in elements.
struct GemmBatch {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  const float *a = nullptr;
  int64_t lda = 0, strideA = 0;
  bool transA = false;
  const float *b = nullptr;
  int64_t ldb = 0, strideB = 0;
  bool transB = false;
  float *c = nullptr;
  int64_t ldc = 0, strideC = 0;
};

/// Whether libcublas loads and has every function used (needs no GPU: for
/// diagnostics, and for tests on machines without one).
bool cublasLibraryResolves(std::string *Why = nullptr);

/// Whether cuBLAS can run here (a GPU, and libcublas loads with every
/// function used); Why says why not.
bool cublasAvailable(std::string *Why = nullptr);

/// Queues G on the GPU's stream. False, with nothing queued, when cuBLAS is
/// not available or G exceeds its 32-bit extents; throws rivet::Error when
/// cuBLAS fails.
bool gemm(const GemmBatch &G, bool AllowTf32);

} // namespace rivet::vm::cuda
