//===- NativeKernelAbi.h - How generated kernels are called -----*- C++ -*-===//
//
// The binary contract between generated (LLVM) kernels and the runtime that
// calls them, with no LLVM on either side of it: the kernel's signature and
// the table of runtime services a kernel may call back into. Generated code
// reaches the runtime only through this table (never by symbol), so a
// shared object embedded in a .rvx needs nothing but libc and libm.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

/// The body of a parallel loop: runs iterations [Begin, End) of it. Closure
/// points at the values the body reads (buffers, sizes), laid out by the
/// generated code.
typedef void (*RivetParallelBody)(void *Closure, int64_t Begin, int64_t End);

/// Services of the runtime, passed to every kernel call.
struct RivetKernelRuntime {
  /// Runs Body over [0, N) split into contiguous chunks on the runtime's
  /// thread pool (the caller takes part), at most numThreads() at a time,
  /// and returns when every chunk is done. N <= 0 runs nothing. Grain is the
  /// fewest iterations worth a thread of their own (the generated code
  /// knows the work per iteration): with N <= Grain, or one thread, Body
  /// runs once on the calling thread.
  void (*parallelFor)(int64_t N, int64_t Grain, void *Closure,
                      RivetParallelBody Body);
};

/// Every generated kernel (the symbol is the kernel's name):
/// Buffers: data pointers of the inputs in parameter order, then of the
/// output; dense row-major. Sizes: the kernel's size parameters. The output
/// must not overlap an input.
typedef void (*RivetKernelFn)(void *const *Buffers, const int64_t *Sizes,
                              const RivetKernelRuntime *Runtime);
}

namespace rivet {
/// The runtime's services for generated kernels (src/kernels/Threading.cc).
const RivetKernelRuntime &kernelRuntime();
} // namespace rivet
