//===- CpuPeak.h - A core's float32 peak, measured -------------*- C++ -*-===//
//
// Peak FLOP/s of one core = its clock while busy x float32 flops per cycle,
// both measured: /proc/cpuinfo lists a base clock (a Zen 4 VM lists 2.6 GHz
// and runs at 3.6) and flags that do not say how many vector FMA pipes a
// core has (Zen 4 runs AVX-512 on the two 256-bit pipes it has for AVX2:
// 32 flops per cycle, where a Xeon with two 512-bit pipes does 64).
// A Sapphire Rapids VM (2.45 GHz busy) measured 55-66 flops per cycle on
// zmm, its FMAs' clock a little under the integer one: 64 is the peak.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "BenchTiming.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace rivet::bench {

struct CpuPeak {
  std::string model;     ///< /proc/cpuinfo's model name.
  double listedGHz = 0;  ///< /proc/cpuinfo's clock.
  double busyGHz = 0;    ///< Measured: dependent integer adds per second.
  int flopsPerCycle = 0; ///< Measured: independent FMAs, widest vectors.
  double measuredFlopsPerCycle = 0; ///< The same before rounding.
  double ghz() const { return std::max(listedGHz, busyGHz); }
  double coreGFlops() const { return ghz() * flopsPerCycle; }
  /// What the FMA bursts themselves ran at: below coreGFlops() where the
  /// core slows its clock for wide vectors (a Sapphire Rapids VM: 50-54
  /// flops per integer-clock cycle on zmm at 2.7-2.9 GHz) or shares its
  /// pipes.
  double measuredCoreGFlops() const { return busyGHz * measuredFlopsPerCycle; }
};

namespace detail {

/// Seconds of the best of three runs of Fn.
template <typename F> double bestSeconds(F &&Fn) {
  double Best = 1e30;
  for (int Run = 0; Run < 3; ++Run) {
    double S = nowSeconds();
    Fn();
    Best = std::min(Best, nowSeconds() - S);
  }
  return Best;
}

#if defined(__x86_64__)
constexpr int64_t kIters = 20'000'000;

/// 8 dependent register-register adds per iteration: one cycle each on
/// every x86-64 core. Not adds of an immediate: Golden Cove (Sapphire
/// Rapids) folds chains of those at rename, four a cycle, which measured a
/// 2.45 GHz Xeon VM at 7.8-9.7 GHz.
inline void addChain() {
  int64_t X = 0, One = 1;
  for (int64_t I = 0; I < kIters; ++I)
    asm volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                 "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                 : "+r"(X)
                 : "r"(One));
}

/// 12 independent FMAs on vector registers R1..R12 (more chains than pipes
/// x latency on every core since Haswell), all operands zero.
#define RIVET_FMA12(R)                                                         \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "1\n\t"                               \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "2\n\t"                               \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "3\n\t"                               \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "4\n\t"                               \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "5\n\t"                               \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "6\n\t"                               \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "7\n\t"                               \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "8\n\t"                               \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "9\n\t"                               \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "10\n\t"                              \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "11\n\t"                              \
  "vfmadd231ps %%" R "0, %%" R "0, %%" R "12"
#define RIVET_FMA_CLOBBERS                                                     \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",      \
      "xmm9", "xmm10", "xmm11", "xmm12"

/// Zeroes vector registers 0..12 (whole, as VEX encodings do).
__attribute__((target("avx"))) inline void zeroVectors() {
  asm volatile("vzeroall" ::: RIVET_FMA_CLOBBERS, "xmm13", "xmm14", "xmm15");
}

/// Flops of kIters / 4 rounds of RIVET_FMA12 on 8- and 16-float vectors.
__attribute__((target("avx2,fma"))) inline double fmaYmm() {
  zeroVectors();
  for (int64_t I = 0; I < kIters / 4; ++I)
    asm volatile(RIVET_FMA12("ymm")::: RIVET_FMA_CLOBBERS);
  return 2.0 * 8 * 12 * (double)(kIters / 4);
}
__attribute__((target("avx512f"))) inline double fmaZmm() {
  zeroVectors();
  for (int64_t I = 0; I < kIters / 4; ++I)
    asm volatile(RIVET_FMA12("zmm")::: RIVET_FMA_CLOBBERS);
  return 2.0 * 16 * 12 * (double)(kIters / 4);
}
#undef RIVET_FMA12
#undef RIVET_FMA_CLOBBERS
#endif

} // namespace detail

/// Measures this core (~1 s). Flops per cycle are rounded to a power of
/// two (the measurement is a few percent under the pipes' rate).
inline CpuPeak measureCpuPeak() {
  CpuPeak P;
  std::ifstream F("/proc/cpuinfo");
  std::string Line;
  while (std::getline(F, Line)) {
    if (P.model.empty() && Line.rfind("model name", 0) == 0)
      P.model = Line.substr(Line.find(':') + 2);
    if (P.listedGHz == 0 && Line.rfind("cpu MHz", 0) == 0)
      P.listedGHz = std::stod(Line.substr(Line.find(':') + 1)) / 1000;
  }
  P.flopsPerCycle = 16; // scalar-free guess where nothing is measured
#if defined(__x86_64__)
  double Cycles = 8.0 * (double)detail::kIters;
  double AddSeconds = detail::bestSeconds(detail::addChain);
  P.busyGHz = Cycles / AddSeconds / 1e9;
  // The best of five bursts: a VM's core shares its FMA pipes with the
  // other hyperthread of its physical core at times (the integer chain,
  // latency-bound, does not notice), and one burst measured a Sapphire
  // Rapids core at 40 flops per cycle, rounded to 32 (half its peak).
  auto perCycle = [&](double (*Loop)()) {
    double Best = 0;
    for (int Burst = 0; Burst < 5; ++Burst) {
      double Flop = 0;
      double S = detail::bestSeconds([&] { Flop = Loop(); });
      Best = std::max(Best, Flop / S / (P.busyGHz * 1e9));
    }
    return Best;
  };
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    P.measuredFlopsPerCycle = perCycle(detail::fmaYmm);
  if (__builtin_cpu_supports("avx512f"))
    P.measuredFlopsPerCycle =
        std::max(P.measuredFlopsPerCycle, perCycle(detail::fmaZmm));
  if (P.measuredFlopsPerCycle > 0)
    P.flopsPerCycle =
        (int)std::exp2(std::round(std::log2(P.measuredFlopsPerCycle)));
#endif
  return P;
}

/// GFLOP/s that FMA bursts reach now on Threads threads at once (each the
/// best of three, widest vectors): the rate to pair with a kernel timed
/// right before it. A shared machine's clock and its hyperthread siblings
/// change minute by minute; a kernel's median against the best burst of
/// the whole run (measureCpuPeak) reads low by that drift.
inline double fmaGFlopsNow(int Threads) {
#if defined(__x86_64__)
  double (*Loop)() = nullptr;
  if (__builtin_cpu_supports("avx512f"))
    Loop = detail::fmaZmm;
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    Loop = detail::fmaYmm;
  if (!Loop)
    return 0;
  std::vector<double> Rate((size_t)Threads);
  auto Burst = [&](int I) {
    double Flop = 0;
    double S = detail::bestSeconds([&] { Flop = Loop(); });
    Rate[(size_t)I] = Flop / S / 1e9;
  };
  std::vector<std::thread> Others;
  for (int I = 1; I < Threads; ++I)
    Others.emplace_back(Burst, I);
  Burst(0);
  for (std::thread &T : Others)
    T.join();
  double Sum = 0;
  for (double R : Rate)
    Sum += R;
  return Sum;
#else
  (void)Threads;
  return 0;
#endif
}

} // namespace rivet::bench
