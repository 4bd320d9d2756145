//===- Gpu.h - The CUDA GPU as the runtime sees it --------------*- C++ -*-===//
//
// The runtime's one door to CUDA: the driver API loaded with dlopen on first
// use (never linked), so librivet_runtime loads and runs CPU executables on
// a machine with no GPU, no driver and no CUDA libraries. Gpu is the
// process's GPU 0: its primary context, one stream that every kernel and
// copy is queued on (so work is ordered without events), a caching device
// allocator, module loading and kernel launches, and CUDA graph capture.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rivet::vm::cuda {

/// Whether CUDA code can run here: libcuda.so.1 loads, cuInit succeeds and
/// there is a device. When not, Why says why ("no driver found (...)", "no
/// CUDA device").
bool available(std::string *Why = nullptr);

/// One image of compiled GPU code, as the executable carries it.
struct ImageRef {
  std::string arch; // "sm_90" (a cubin) or "compute_90" (PTX)
  bool ptx = false;
  const uint8_t *data = nullptr;
  size_t size = 0;
};

/// A kernel of a loaded module (a CUfunction).
using KernelHandle = void *;
/// An instantiated CUDA graph (a CUgraphExec).
using GraphHandle = void *;

/// Code loaded on the GPU; unloaded when the last reference dies.
class Module {
public:
  virtual ~Module() = default;
  /// The __global__ function Name; throws rivet::Error when absent.
  virtual KernelHandle function(const std::string &Name) const = 0;
};

class Gpu {
public:
  /// The process's GPU, set up on first call. Throws rivet::Error("this
  /// executable needs a CUDA GPU: <why>") where available() is false.
  static Gpu &get();

  virtual ~Gpu() = default;
  virtual std::string name() const = 0;
  /// Major * 10 + minor: 90 for an H100.
  virtual int computeCapability() const = 0;
  virtual int multiprocessors() const = 0;

  /// NBytes of device memory (256-byte aligned) as a Storage whose device is
  /// CUDA. Blocks come from a cache of freed ones when one fits (no
  /// cuMemAlloc in steady state) and go back to it when the last reference
  /// dies. Reuse is safe without synchronization because all work is on
  /// the one stream, in order.
  virtual std::shared_ptr<Storage> allocate(size_t NBytes) = 0;
  /// Copies queued on the stream; a copy to the host waits for it (and for
  /// everything queued before it).
  virtual void copyHostToDevice(void *Dst, const void *Src, size_t N) = 0;
  virtual void copyDeviceToHost(void *Dst, const void *Src, size_t N) = 0;
  virtual void copyDeviceToDevice(void *Dst, const void *Src, size_t N) = 0;
  /// Waits until the stream is idle; reports an asynchronous kernel error.
  virtual void synchronize() = 0;
  /// The one stream (a CUstream, which cuBLAS and cuDNN take as their
  /// cudaStream_t): library calls queue their work on it, after the VM's.
  virtual void *stream() const = 0;

  /// Loads the image that suits this GPU: the cubin of its architecture
  /// (sm_XY for compute capability X.Y), else the newest PTX whose
  /// architecture is not newer than the GPU's (the driver compiles it).
  /// Throws naming the GPU's architecture and the images present.
  virtual std::shared_ptr<Module>
  loadModule(const std::vector<ImageRef> &Images) = 0;
  /// Queues F on the stream with Grid blocks of Block threads; Args as
  /// cuLaunchKernel's kernelParams (a pointer to each argument).
  virtual void launch(KernelHandle F, uint32_t Grid, uint32_t Block,
                      void **Args) = 0;

  /// Queues Work, which queues library calls (cuBLAS, cuDNN) on stream().
  /// Signature identifies what it does: every pointer and extent it reads,
  /// so that two works with the same signature queue the same GPU work.
  /// Recorded like launchRecorded while this thread records.
  virtual void enqueue(std::vector<uint64_t> Signature,
                       std::function<void()> Work) = 0;
  /// Like launch, for a kernel whose every parameter is 8 bytes (pointers
  /// and int64 extents, as generated kernels have), given by value.
  virtual void launchRecorded(KernelHandle F, uint32_t Grid, uint32_t Block,
                              const uint64_t *Args, size_t NumArgs) = 0;

  /// Static regions as CUDA graphs. While a thread records (beginRecording
  /// to endRecording, which the VM brackets each invoke with),
  /// launchRecorded and enqueue only note their work; any other use of the
  /// stream (a copy, a launch, synchronize, endRecording) first flushes
  /// it. A flushed run of work is launched as it is the first time its
  /// signature (every kernel, grid and argument) is seen, captured into a
  /// graph the second time, and replayed from that graph after: one launch
  /// instead of one per kernel. The same arguments mean the same buffers,
  /// so a replay does exactly what the direct launches would. Off when
  /// graphs are disabled (setGraphsEnabled, RIVET_CUDA_GRAPHS=0).
  virtual void beginRecording() = 0;
  virtual void endRecording() = 0;
  virtual void setGraphsEnabled(bool On) = 0;
  virtual bool graphsEnabled() const = 0;
  /// Statistics: graph replays and captures so far.
  virtual size_t graphLaunches() const = 0;
  virtual size_t graphCaptures() const = 0;
  /// Held while using stream() outside enqueue's Work (cuDNN timing its
  /// algorithms): nothing else is queued meanwhile, and no capture runs.
  virtual std::unique_lock<std::recursive_mutex> lockStream() = 0;

  /// CUDA graphs: work queued between beginCapture and endCapture is
  /// recorded, not run; launchGraph replays it on the stream.
  virtual void beginCapture() = 0;
  virtual GraphHandle endCapture() = 0;
  virtual void launchGraph(GraphHandle G) = 0;
  virtual void destroyGraph(GraphHandle G) = 0;

  /// Allocator statistics: cuMemAlloc calls so far, and bytes held (in use
  /// or cached).
  virtual size_t driverAllocations() const = 0;
  virtual size_t heldBytes() const = 0;
};

} // namespace rivet::vm::cuda
