//===- CpuSupport.cc - What Rivet's own CPU kernels share -----------------===//
#include "kernels/cpu/CpuSupport.h"
#include "kernels/NativeKernelAbi.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string_view>

namespace rivet::cpu {

bool cpuHasAvx512() {
  static const bool Has = __builtin_cpu_supports("avx512f");
  return Has;
}

namespace {
CpuIsa detectedIsa() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    return CpuIsa::Base;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return CpuIsa::Avx512;
  return CpuIsa::Avx2;
#else
  return CpuIsa::Base;
#endif
}
} // namespace

CpuIsa hostIsa() {
  static const CpuIsa Isa = [] {
    CpuIsa Found = detectedIsa();
    const char *Cap = std::getenv("RIVET_MAX_CPU_ISA");
    std::string_view C = Cap ? Cap : "";
    CpuIsa Max = C == "avx2"   ? CpuIsa::Avx2
                 : C == "base" ? CpuIsa::Base
                               : CpuIsa::Avx512;
    return std::min(Found, Max);
  }();
  return Isa;
}

bool allFloat32(std::initializer_list<const Tensor *> Ts) {
  for (const Tensor *T : Ts)
    if (T && (!T->defined() || T->dtype() != DType::Float32 || !T->hasData()))
      return false;
  return true;
}

Tensor viewOf(const Tensor &T, int64_t Offset, Shape Sh) {
  return Tensor(T.storage(),
                T.byteOffset() + (size_t)Offset * dtypeSize(T.dtype()),
                std::move(Sh), T.dtype());
}

bool runPartsOnPool(int64_t Parts, const std::function<bool(int64_t)> &Part) {
  struct Job {
    const std::function<bool(int64_t)> &part;
    std::atomic<bool> failed{false};
  } J{Part};
  kernelRuntime().parallelFor(
      Parts, 1, &J, [](void *Closure, int64_t Begin, int64_t End) {
        auto &J = *static_cast<Job *>(Closure);
        for (int64_t P = Begin; P < End; ++P) {
          try {
            if (!J.part(P))
              J.failed.store(true, std::memory_order_relaxed);
          } catch (...) {
            J.failed.store(true, std::memory_order_relaxed);
          }
        }
      });
  return !J.failed.load();
}

} // namespace rivet::cpu
