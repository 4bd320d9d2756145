//===- Threading.cc - The runtime's thread count --------------------------===//
#include "kernels/Threading.h"
#include "kernels/NativeKernelAbi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <sched.h>
#include <thread>
#include <vector>

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

/// This thread's ThreadCountScope count; 0 outside any.
thread_local int ThreadOverride = 0;

} // namespace

void setNumThreads(int N) {
  threadSetting().store(N > 0 ? N : hardwareThreads());
}

int numThreads() {
  return ThreadOverride > 0 ? ThreadOverride
                            : threadSetting().load(std::memory_order_relaxed);
}

ThreadCountScope::ThreadCountScope(int N) : Saved(ThreadOverride) {
  if (N > 0)
    ThreadOverride = N;
}

ThreadCountScope::~ThreadCountScope() { ThreadOverride = Saved; }

namespace {

/// The pool that runs the chunks of generated kernels' parallel loops.
/// The caller takes part and returns as soon as every chunk is done: a
/// worker that wakes late (its core busy, as on a shared machine) finds no
/// chunk left and goes back to sleep, where an OpenMP region would make the
/// caller wait for it at the closing barrier. oneDNN keeps its own OpenMP
/// threads; the VM runs one kernel at a time, so the two do not compete.
///
/// Waking a sleeping thread is a system call for the waker and a context
/// switch for the woken (18-50 us on a shared VM), so both sides spin for
/// a short while before they sleep: a worker after its job (a model's
/// parallel kernels come in bursts), the caller while a worker finishes
/// its last chunk.
class ChunkPool {
public:
  /// True on the pool's own threads (a nested loop runs serially there).
  static thread_local bool InWorker;

  /// Runs Body over [0, N) in chunks of at least Grain iterations on up to
  /// Threads threads, the caller included.
  void run(int64_t N, int64_t Grain, int64_t Threads, void *Closure,
           RivetParallelBody Body) {
    if (Busy.exchange(true, std::memory_order_acquire)) {
      // Another thread's loop holds the pool (VMs on several threads):
      // this one runs serially on its own core.
      Body(Closure, 0, N);
      return;
    }
    std::unique_lock<std::mutex> L(M);
    Job J;
    J.N = N;
    J.Closure = Closure;
    J.Body = Body;
    // A few chunks per thread, so that a late worker's share is taken over.
    J.NumChunks = std::min<int64_t>((N + Grain - 1) / Grain, 4 * Threads);
    while ((int64_t)Workers.size() < Threads - 1) {
      Workers.emplace_back([this] { work(); });
      Workers.back().detach(); // the pool lives as long as the process
    }
    Current = &J;
    Wanted = Threads - 1;
    Epoch.fetch_add(1, std::memory_order_release);
    L.unlock();
    Wake.notify_all(); // no system call when every worker is spinning
    runChunks(J);
    // No worker may join any more; wait for those that did to finish.
    L.lock();
    Current = nullptr;
    Wanted = 0;
    L.unlock();
    spinUntil([&] { return J.Active.load(std::memory_order_acquire) == 0; });
    L.lock();
    Idle.wait(L, [&] { return J.Active.load(std::memory_order_acquire) == 0; });
    L.unlock();
    Busy.store(false, std::memory_order_release);
  }

private:
  /// How long a thread polls before it sleeps: longer than the gap a
  /// model's single-threaded kernels leave between two parallel ones.
  /// mobilenet_v2 at two threads (convs as parts on this pool), six
  /// alternating runs: median 12.1 ms with 50 us, 9.4 with 300, 9.7 with
  /// 1000 (10.3 on one thread).
  static constexpr std::chrono::microseconds kSpin{300};

  struct Job {
    int64_t N = 0, NumChunks = 0;
    void *Closure = nullptr;
    RivetParallelBody Body = nullptr;
    std::atomic<int64_t> Next{0};
    /// Workers inside runChunks; joining happens under the mutex.
    std::atomic<int> Active{0};
  };

  static void runChunks(Job &J) {
    for (;;) {
      int64_t C = J.Next.fetch_add(1, std::memory_order_relaxed);
      if (C >= J.NumChunks)
        return;
      J.Body(J.Closure, J.N * C / J.NumChunks, J.N * (C + 1) / J.NumChunks);
    }
  }

  /// Polls Done for up to kSpin; true when it became true. Every few
  /// microseconds the poller yields its core to whatever else is ready to
  /// run there (nothing, on an idle machine: the call returns at once).
  /// Without that, a busy process on the second core made the scheduler
  /// put the pool's worker beside the caller on the first, each polling
  /// away the other's time slices: at two threads beside such a process,
  /// mobilenet_v2 took 16.4-17.1 ms polling, 10.1-12.9 yielding (6.5-7.8
  /// on an idle machine either way); resnet18 33-43 and 34-35.
  template <class Pred> static bool spinUntil(Pred Done) {
    auto Until = std::chrono::steady_clock::now() + kSpin;
    for (unsigned I = 0;; ++I) {
      if (Done())
        return true;
      if ((I & 63) == 63) {
        if (std::chrono::steady_clock::now() >= Until)
          return false;
        sched_yield();
      }
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }

  void work() {
    InWorker = true;
    uint64_t Seen = 0;
    for (;;) {
      spinUntil([&] { return Epoch.load(std::memory_order_acquire) != Seen; });
      std::unique_lock<std::mutex> L(M);
      Wake.wait(L,
                [&] { return Epoch.load(std::memory_order_relaxed) != Seen; });
      Seen = Epoch.load(std::memory_order_relaxed);
      if (!Current || Wanted == 0)
        continue;
      --Wanted;
      Job &J = *Current;
      J.Active.fetch_add(1, std::memory_order_relaxed);
      L.unlock();
      runChunks(J);
      // The last touch of J: the caller may return once it reads 0.
      J.Active.fetch_sub(1, std::memory_order_release);
      L.lock();
      Idle.notify_all();
    }
  }

  std::atomic<bool> Busy{false}; // a loop is running on the pool
  std::mutex M;
  std::condition_variable Wake, Idle;
  std::vector<std::thread> Workers; // detached
  Job *Current = nullptr;
  int64_t Wanted = 0;             // workers the current job may still take
  std::atomic<uint64_t> Epoch{0}; // changed under M
};

thread_local bool ChunkPool::InWorker = false;

/// RivetKernelRuntime::parallelFor: a loop with at least two grains of
/// iterations runs on the ChunkPool.
void parallelFor(int64_t N, int64_t Grain, void *Closure,
                 RivetParallelBody Body) {
  if (N <= 0)
    return;
  int64_t Threads = numThreads();
  if (Grain < 1)
    Grain = 1;
  Threads = std::min<int64_t>(Threads, (N + Grain - 1) / Grain);
  if (Threads <= 1 || ChunkPool::InWorker) {
    Body(Closure, 0, N);
    return;
  }
  // Never destroyed: a kernel may run while static objects are destroyed.
  static ChunkPool *Pool = new ChunkPool;
  Pool->run(N, Grain, Threads, Closure, Body);
}

} // namespace

const RivetKernelRuntime &kernelRuntime() {
  static const RivetKernelRuntime Runtime{parallelFor};
  return Runtime;
}

} // namespace rivet
