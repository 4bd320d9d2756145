//===- SmallGemm.cc - Register-blocked float32 GEMM for small shapes ------===//
#include "kernels/cpu/SmallGemm.h"
#include "kernels/NativeKernelAbi.h"

#include <algorithm>
#include <atomic>

#if defined(__GNUC__) // and clang
// Vector arguments of always-inlined helpers: no call passes one.
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace rivet {
namespace small_gemm_base {
#define RIVET_SMALL_GEMM_ENTRY smallGemmBase
#include "kernels/cpu/SmallGemmLoops.inc"
#undef RIVET_SMALL_GEMM_ENTRY
} // namespace small_gemm_base

#if defined(__x86_64__)
RIVET_BEGIN_TARGET_AVX2
namespace small_gemm_avx2 {
#define RIVET_SMALL_GEMM_ENTRY smallGemmAvx2
#include "kernels/cpu/SmallGemmLoops.inc"
#undef RIVET_SMALL_GEMM_ENTRY
} // namespace small_gemm_avx2
RIVET_END_TARGET
RIVET_BEGIN_TARGET_AVX512
namespace small_gemm_avx512 {
#define RIVET_SMALL_GEMM_ENTRY smallGemmAvx512
#define RIVET_WIDEST_LANES 16
#include "kernels/cpu/SmallGemmLoops.inc"
#undef RIVET_SMALL_GEMM_ENTRY
} // namespace small_gemm_avx512
RIVET_END_TARGET
#endif

SmallGemmFn smallGemmFor(cpu::CpuIsa Isa) {
  cpu::CpuIsa Host = cpu::hostIsa();
  switch (Isa) {
  case cpu::CpuIsa::Base: return small_gemm_base::smallGemmBase;
#if defined(__x86_64__)
  case cpu::CpuIsa::Avx2:
    return Host != cpu::CpuIsa::Base ? small_gemm_avx2::smallGemmAvx2 : nullptr;
  case cpu::CpuIsa::Avx512:
    return Host == cpu::CpuIsa::Avx512 ? small_gemm_avx512::smallGemmAvx512
                                       : nullptr;
#else
  default: return nullptr;
#endif
  }
  return nullptr;
}

void smallGemm(const SmallGemmArgs &G, int64_t M) {
  static const SmallGemmFn Best = smallGemmFor(cpu::hostIsa());
  struct Closure {
    const SmallGemmArgs *G;
    SmallGemmFn Fn;
    int64_t M;
  } C{&G, Best, M};
  // Blocks of 6 rows; a thread of its own from about 2^18 multiply-adds.
  int64_t PerBlock = std::max<int64_t>(1, 6 * G.N * G.K);
  int64_t Grain = std::max<int64_t>(1, (int64_t(1) << 18) / PerBlock);
  kernelRuntime().parallelFor(
      (M + 5) / 6, Grain, &C, [](void *P, int64_t Begin, int64_t End) {
        const auto &C = *static_cast<const Closure *>(P);
        C.Fn(*C.G, Begin * 6, std::min(End * 6, C.M));
      });
}

namespace {
std::atomic<int64_t> MaxWork{int64_t(1) << 23};
} // namespace

int64_t smallGemmMaxWork() { return MaxWork.load(std::memory_order_relaxed); }
void setSmallGemmMaxWork(int64_t Work) { MaxWork.store(Work); }

bool smallGemmApplies(int64_t M, int64_t N, int64_t K) {
  return M >= 1 && N >= 1 && K >= 1 && K <= 512 && N <= 2048 &&
         M * N * K <= smallGemmMaxWork();
}

} // namespace rivet
