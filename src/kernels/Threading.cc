//===- Threading.cc - The runtime's thread count --------------------------===//
#include "kernels/Threading.h"
#include "kernels/NativeKernelAbi.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace rivet {
namespace {

int hardwareThreads() {
  unsigned N = std::thread::hardware_concurrency();
  return N == 0 ? 1 : (int)N;
}

int initialThreads() {
  if (const char *E = std::getenv("RIVET_NUM_THREADS")) {
    int N = std::atoi(E);
    if (N > 0)
      return N;
  }
  return hardwareThreads();
}

std::atomic<int> &threadSetting() {
  static std::atomic<int> N{initialThreads()};
  return N;
}

std::atomic<unsigned> Generation{0};

} // namespace

void setNumThreads(int N) {
  threadSetting().store(N > 0 ? N : hardwareThreads());
  Generation.fetch_add(1);
}

int numThreads() { return threadSetting().load(std::memory_order_relaxed); }

unsigned numThreadsGeneration() {
  return Generation.load(std::memory_order_relaxed);
}

namespace {

/// RivetKernelRuntime::parallelFor. On OpenMP (GCC's libgomp, the runtime
/// Debian's oneDNN uses) so that generated kernels and oneDNN share one pool
/// of threads rather than oversubscribing the cores; serial in a build
/// without OpenMP (the clang fuzz build).
void parallelFor(int64_t N, int64_t Grain, void *Closure,
                 RivetParallelBody Body) {
  if (N <= 0)
    return;
  int64_t Threads = numThreads();
  if (Grain < 1)
    Grain = 1;
  Threads = std::min<int64_t>(Threads, (N + Grain - 1) / Grain);
#ifdef _OPENMP
  // Nested parallelism (a kernel called from inside a parallel region)
  // runs serially: the outer region already holds the threads.
  if (Threads > 1 && !omp_in_parallel()) {
#pragma omp parallel num_threads((int)Threads)
    {
      int64_t T = omp_get_thread_num(), Nt = omp_get_num_threads();
      int64_t Begin = N * T / Nt, End = N * (T + 1) / Nt;
      if (Begin < End)
        Body(Closure, Begin, End);
    }
    return;
  }
#endif
  Body(Closure, 0, N);
}

} // namespace

const RivetKernelRuntime &kernelRuntime() {
  static const RivetKernelRuntime Runtime{parallelFor};
  return Runtime;
}

} // namespace rivet
