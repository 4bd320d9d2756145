//===- Threading.h - The runtime's thread count -----------------*- C++ -*-===//
//
// One process-wide setting for how many threads a kernel may use. oneDNN
// anchors read it before every call (and apply it to their OpenMP runtime);
// generated kernels' parallel loops run on the runtime's own pool
// (kernelRuntime().parallelFor, Threading.cc) with as many threads.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace rivet {

/// Sets the number of threads kernels may use; N <= 0 means "one per
/// hardware thread". Takes effect on the next kernel call, on every thread.
void setNumThreads(int N);
/// The current thread count (>= 1). Defaults to RIVET_NUM_THREADS when set,
/// else one per hardware thread.
int numThreads();
/// Bumped by every setNumThreads call, so that a consumer can re-apply the
/// setting cheaply only when it changed.
unsigned numThreadsGeneration();

} // namespace rivet
