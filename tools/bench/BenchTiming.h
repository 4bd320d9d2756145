//===- BenchTiming.h - Clocks and medians of the C++ benchmarks -*- C++ -*-===//
#pragma once

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

namespace rivet::bench {

inline double nowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// CPU seconds of the process: on a shared machine wall time includes
/// waiting for a core, CPU time does not.
inline double processCpuSeconds() {
  timespec T;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &T);
  return (double)T.tv_sec + (double)T.tv_nsec * 1e-9;
}

/// Median wall seconds of Reps runs of Fn (after one warm-up run); the CPU
/// seconds per run go to *CpuPerRun when given.
template <typename F>
double medianSeconds(int Reps, F &&Fn, double *CpuPerRun = nullptr) {
  Fn();
  std::vector<double> T;
  double Cpu = processCpuSeconds();
  for (int I = 0; I < Reps; ++I) {
    double S = nowSeconds();
    Fn();
    T.push_back(nowSeconds() - S);
  }
  if (CpuPerRun)
    *CpuPerRun = (processCpuSeconds() - Cpu) / Reps;
  std::sort(T.begin(), T.end());
  return T[T.size() / 2];
}

} // namespace rivet::bench
