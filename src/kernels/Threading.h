//===- Threading.h - The runtime's thread count -----------------*- C++ -*-===//
//
// How many threads a kernel may use: one process-wide setting, which a
// thread may override for a while (a session with a thread count of its
// own). oneDNN anchors read it before every call (and apply it to their
// OpenMP runtime); generated kernels' parallel loops run on the runtime's own
// pool (kernelRuntime().parallelFor, Threading.cc) with as many threads.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace rivet {

/// Sets the number of threads kernels may use; N <= 0 means "one per
/// hardware thread". Takes effect on the next kernel call, on every thread.
void setNumThreads(int N);
/// The thread count for kernels called on this thread (>= 1): its
/// ThreadCountScope's, else the process-wide setting, which defaults to
/// RIVET_NUM_THREADS when set, else one per hardware thread.
int numThreads();

/// For its lifetime, kernels called on this thread use N threads whatever
/// the process-wide setting (N <= 0: no override). What ONNX Runtime calls
/// a session's intra_op_num_threads: sessions with different counts may
/// run side by side in one process.
class ThreadCountScope {
public:
  explicit ThreadCountScope(int N);
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope &) = delete;
  ThreadCountScope &operator=(const ThreadCountScope &) = delete;

private:
  int Saved;
};

} // namespace rivet
