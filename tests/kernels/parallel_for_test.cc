// The runtime's parallel-for (kernelRuntime().parallelFor, the pool of
// generated kernels): every iteration runs exactly once, whatever the thread
// count, the grain, callers on several threads at once, or a loop nested in
// a chunk; a small loop stays on the caller's thread.

#include "kernels/NativeKernelAbi.h"
#include "kernels/Threading.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace rivet;

namespace {

/// Counts, per iteration, how often it ran.
struct Counts {
  std::vector<std::atomic<int>> Hits;
  explicit Counts(int64_t N) : Hits((size_t)N) {}
  static void body(void *Closure, int64_t Begin, int64_t End) {
    auto *C = static_cast<Counts *>(Closure);
    for (int64_t I = Begin; I < End; ++I)
      C->Hits[(size_t)I].fetch_add(1);
  }
  bool eachOnce() const {
    for (const std::atomic<int> &H : Hits)
      if (H.load() != 1)
        return false;
    return true;
  }
};

/// Restores the thread setting after a test.
struct ThreadSetting {
  int Saved = numThreads();
  ~ThreadSetting() { setNumThreads(Saved); }
};

void parallelFor(int64_t N, int64_t Grain, void *Closure,
                 RivetParallelBody Body) {
  kernelRuntime().parallelFor(N, Grain, Closure, Body);
}

TEST(ParallelFor, EveryIterationRunsOnce) {
  ThreadSetting Restore;
  for (int Threads : {1, 2, 3, 8})
    for (int64_t N : {0, 1, 7, 1000, 100003})
      for (int64_t Grain : {0, 1, 10, 1 << 20}) {
        setNumThreads(Threads);
        Counts C(N);
        parallelFor(N, Grain, &C, Counts::body);
        EXPECT_TRUE(C.eachOnce())
            << Threads << " threads, N " << N << ", grain " << Grain;
      }
}

TEST(ParallelFor, OneGrainStaysOnTheCallersThread) {
  ThreadSetting Restore;
  setNumThreads(4);
  struct Where {
    std::thread::id Caller = std::this_thread::get_id();
    std::atomic<bool> Elsewhere{false};
    static void body(void *Closure, int64_t, int64_t) {
      auto *W = static_cast<Where *>(Closure);
      if (std::this_thread::get_id() != W->Caller)
        W->Elsewhere = true;
    }
  } W;
  parallelFor(100, 100, &W, Where::body);
  EXPECT_FALSE(W.Elsewhere.load());
}

TEST(ParallelFor, CallersOnSeveralThreadsAndNestedLoops) {
  ThreadSetting Restore;
  setNumThreads(3);
  static constexpr int64_t kN = 20000;
  // Each outer chunk runs an inner loop over its own Counts.
  struct Nest {
    std::vector<Counts> Inner;
    Nest() {
      Inner.reserve(8);
      for (int I = 0; I < 8; ++I)
        Inner.emplace_back(kN);
    }
    static void body(void *Closure, int64_t Begin, int64_t End) {
      auto *N = static_cast<Nest *>(Closure);
      for (int64_t I = Begin; I < End; ++I)
        parallelFor(kN, 100, &N->Inner[(size_t)I], Counts::body);
    }
  };
  std::vector<std::thread> Callers;
  std::vector<Nest> Nests(4);
  std::vector<Counts> Flat;
  Flat.reserve(4);
  for (int T = 0; T < 4; ++T)
    Flat.emplace_back(kN);
  for (int T = 0; T < 4; ++T)
    Callers.emplace_back([&, T] {
      for (int R = 0; R < 20; ++R) {
        Counts C(kN);
        parallelFor(kN, 50, &C, Counts::body);
        EXPECT_TRUE(C.eachOnce());
      }
      parallelFor(8, 1, &Nests[(size_t)T], Nest::body);
      parallelFor(kN, 10, &Flat[(size_t)T], Counts::body);
    });
  for (std::thread &T : Callers)
    T.join();
  for (Nest &N : Nests)
    for (Counts &C : N.Inner)
      EXPECT_TRUE(C.eachOnce());
  for (Counts &C : Flat)
    EXPECT_TRUE(C.eachOnce());
}

} // namespace

TEST(ParallelFor, ThreadCountScopeOverridesTheSettingOnItsThreadOnly) {
  ThreadSetting Restore;
  setNumThreads(4);
  struct Threads {
    std::mutex M;
    std::set<std::thread::id> Seen;
    static void body(void *Closure, int64_t, int64_t) {
      auto *T = static_cast<Threads *>(Closure);
      std::lock_guard<std::mutex> G(T->M);
      T->Seen.insert(std::this_thread::get_id());
    }
  };
  {
    ThreadCountScope One(1);
    EXPECT_EQ(numThreads(), 1);
    Threads T;
    parallelFor(100000, 1, &T, Threads::body);
    EXPECT_EQ(T.Seen.size(), 1u) << "one thread inside the scope";
    int Elsewhere = 0;
    std::thread([&] { Elsewhere = numThreads(); }).join();
    EXPECT_EQ(Elsewhere, 4) << "other threads keep the process setting";
    {
      ThreadCountScope Three(3);
      EXPECT_EQ(numThreads(), 3);
      ThreadCountScope None(0); // no override: the enclosing one stays
      EXPECT_EQ(numThreads(), 3);
    }
    EXPECT_EQ(numThreads(), 1);
    setNumThreads(2); // the process setting changes under the scope
    EXPECT_EQ(numThreads(), 1);
  }
  EXPECT_EQ(numThreads(), 2);
}
