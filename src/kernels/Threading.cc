//===- Threading.cc - The runtime's thread count --------------------------===//
#include "kernels/Threading.h"

#include <atomic>
#include <cstdlib>
#include <thread>

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

} // namespace rivet
