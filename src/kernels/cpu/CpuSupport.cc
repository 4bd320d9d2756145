//===- CpuSupport.cc - What Rivet's own CPU kernels share -----------------===//
#include "kernels/cpu/CpuSupport.h"
#include "kernels/NativeKernelAbi.h"

#include <atomic>

namespace rivet::cpu {

bool cpuHasAvx512() {
  static const bool Has = __builtin_cpu_supports("avx512f");
  return Has;
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
