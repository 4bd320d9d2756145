//===- DenseGemv.cc - A dense with one row: a matrix-vector product -------===//
#include "kernels/cpu/DenseGemv.h"
#include "kernels/cpu/CpuSupport.h"

#include <cstring>

namespace rivet {
namespace gemv_base {
#define RIVET_GEMV_ENTRY denseGemvRowsBase
#include "kernels/cpu/DenseGemvLoops.inc"
#undef RIVET_GEMV_ENTRY
} // namespace gemv_base

#if defined(__x86_64__)
RIVET_BEGIN_TARGET_AVX2
namespace gemv_avx2 {
#define RIVET_GEMV_ENTRY denseGemvRowsAvx2
#include "kernels/cpu/DenseGemvLoops.inc"
#undef RIVET_GEMV_ENTRY
} // namespace gemv_avx2
RIVET_END_TARGET
RIVET_BEGIN_TARGET_AVX512
namespace gemv_avx512 {
#define RIVET_GEMV_ENTRY denseGemvRowsAvx512
#include "kernels/cpu/DenseGemvLoops.inc"
#undef RIVET_GEMV_ENTRY
} // namespace gemv_avx512
RIVET_END_TARGET
#endif

namespace {
using GemvFn = void (*)(const float *, const float *, const float *, int64_t,
                        int64_t, int64_t, float *);

GemvFn bestGemv() {
  switch (cpu::hostIsa()) {
#if defined(__x86_64__)
  case cpu::CpuIsa::Avx512: return gemv_avx512::denseGemvRowsAvx512;
  case cpu::CpuIsa::Avx2: return gemv_avx2::denseGemvRowsAvx2;
#endif
  default: return gemv_base::denseGemvRowsBase;
  }
}
} // namespace

void denseGemvRows(const float *X, const float *W, const float *Bias, int64_t K,
                   int64_t N0, int64_t N1, float *Out) {
  static const GemvFn Best = bestGemv();
  Best(X, W, Bias, K, N0, N1, Out);
}

} // namespace rivet
