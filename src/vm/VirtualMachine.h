//===- VirtualMachine.h - The register VM -----------------------*- C++ -*-===//
//
// Runs an Executable. Calls push a frame of registers; tail calls reuse the
// frame, so a loop compiled to tail recursion runs in constant memory.
// Storage is taken from a per-VM pool and returned to it when the last
// tensor using it dies, so repeated runs allocate nothing new.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/ExecutionLimits.h"
#include "vm/Executable.h"
#include "vm/Object.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rivet::vm {

class StoragePool;
namespace cuda {
class Module;
}

class VirtualMachine {
public:
  explicit VirtualMachine(std::shared_ptr<const Executable> Exe);
  ~VirtualMachine();

  /// Calls function Fn with Args. For "main", tensor arguments are checked
  /// against Executable::mainParams (rank, known dims, dtype) and an error
  /// names the input and what was expected.
  ObjectRef invoke(const std::string &Fn, std::vector<ObjectRef> Args);

  /// Where invoke leaves a result made on the GPU: on the host (the
  /// default: callers read it, and the copy waits for the GPU), or where it
  /// is (benchmarks of device-resident data; synchronize before timing).
  void setResultsToHost(bool On) { ResultsToHost = On; }
  /// V (a tensor) on device D: for arguments that should already be there
  /// (the compiled code's copies of them are then free).
  ObjectRef onDevice(const ObjectRef &V, Device D);
  /// Waits for every kernel and copy queued on the GPU (no-op without one).
  void synchronize();
  /// T's values readable on the host: T itself on the CPU, else a copy
  /// (after the GPU work queued before it), for observers of kernels.
  Tensor hostValues(const Tensor &T);
  /// Writes Host's values (a CPU tensor of Dst's type) into Dst, wherever
  /// Dst is: an observer's change of a kernel's output.
  void writeValues(const Tensor &Host, Tensor &Dst);

  /// Bytes of storage currently held (in use or pooled) and the peak of the
  /// bytes in use since construction or resetPeak().
  size_t pooledBytes() const;
  size_t peakBytesInUse() const;
  void resetPeak();
  /// Instructions executed since construction (for the dispatch benchmark).
  uint64_t instructionCount() const { return Executed; }

  const Executable &executable() const { return *Exe; }
  /// The storage pool (for tests and tools: system allocations, trimming).
  StoragePool &storagePool() const { return *Pool; }

  /// Time spent in one InvokeKernel instruction while profiling.
  struct KernelTime {
    uint32_t function = 0, pc = 0; ///< The instruction.
    std::string kernel;            ///< Its kernel's name.
    std::string inputs;            ///< Input shapes of its first call.
    double seconds = 0;            ///< Total over its calls.
    uint64_t calls = 0;
  };
  /// Profiling times every InvokeKernel (rivet bench --profile); off, the
  /// dispatch reads one flag per kernel call. Turning it on clears the times.
  void setProfiling(bool On);
  /// The instructions that ran while profiling, in program order.
  std::vector<KernelTime> kernelTimes() const;

  /// One InvokeKernel call recorded while tracing.
  struct TracedCall {
    uint32_t function = 0, pc = 0;
    uint32_t signature = 0; ///< Index in traceSignatures().
    /// steady_clock nanoseconds since its epoch; the call's duration.
    int64_t startNs = 0, durationNs = 0;
    size_t bytesInUse = 0; ///< The pool's bytes in use after the call.
  };
  /// The operand types of traced calls ("Tensor[(2, 3), float32]"; other
  /// objects by kind), shared by every call with the same ones.
  struct CallSignature {
    std::vector<std::string> inputs, outputs;
    uint64_t outputBytes = 0; ///< Bytes of the output tensors.
  };
  /// Tracing records every InvokeKernel call (rivet bench --trace), up to
  /// MaxCalls of them: later calls are only counted, so that memory stays
  /// bounded. 0 turns it off. Turning it on clears the record.
  void setTracing(size_t MaxCalls);
  const std::vector<TracedCall> &tracedCalls() const { return Traced; }
  const std::vector<CallSignature> &traceSignatures() const {
    return TraceSignatures;
  }
  /// Calls not recorded because the limit was reached.
  uint64_t droppedTracedCalls() const { return TraceDropped; }
  /// The name of kernel-table entry K as profiles show it ("native f12").
  const std::string &kernelName(uint32_t K) const;

  /// One InvokeKernel that computed values (not a shape function), just
  /// after it ran: the instruction, its input objects and its outputs (the
  /// preallocated operands, or the one result it made).
  struct KernelEvent {
    uint32_t function = 0, pc = 0;
    const ObjectRef *const *inputs = nullptr;
    size_t numInputs = 0;
    ObjectRef *const *outputs = nullptr;
    size_t numOutputs = 0;
  };
  /// Called with every KernelEvent while set (rivet check --localize): it
  /// may read the values and change the outputs' data (fault injection).
  /// Null turns it off; the dispatch then reads one flag per kernel call.
  using KernelObserver = std::function<void(const KernelEvent &)>;
  void setKernelObserver(KernelObserver O);

  /// The call-depth limit (the same setting as the interpreter's).
  void setLimits(const ExecutionLimits &L) { Limits = L; }
  const ExecutionLimits &limits() const { return Limits; }
  /// The deepest frame stack and the most registers of all frames together
  /// since construction (tail calls do not grow them).
  size_t peakCallDepth() const { return PeakDepth; }
  size_t peakRegisterCount() const { return PeakRegs; }

private:
  struct Frame;
  struct KernelSlot;
  struct Recycled;
  ObjectRef run(uint32_t Func, std::vector<ObjectRef> Args);
  void checkMainArgs(const std::vector<ObjectRef> &Args) const;
  ObjectRef intScalar(int64_t V);
  void kernelCall(const Instruction &I, const VMFunction &F, ObjectRef *R);
  void profiledKernelCall(const Instruction &I, const VMFunction &F,
                          ObjectRef *R);
  void traceCall(const Instruction &I, const VMFunction &F, ObjectRef *R,
                 int64_t StartNs, int64_t DurationNs);
  /// kernelCall, profiled, traced and/or observed (the dispatch's slow
  /// path).
  void instrumentedKernelCall(const Instruction &I, const VMFunction &F,
                              ObjectRef *R);
  void checkKernelOutputs(KernelSlot &K, std::vector<int64_t> &Checked);
  KernelSlot builtinSlot(const KernelEntry &Entry, size_t Index) const;
  KernelSlot nativeSlot(const KernelEntry &Entry) const;
  static void nativeSizes(KernelSlot &K);
  static bool nativeExtentsMatch(const NativeKernel::Buffer &B, const Tensor &T,
                                 const int64_t *Sizes);
  static Shape nativeOutputShape(const NativeKernel &NK, const int64_t *Sizes);
  static void nativeCall(KernelSlot &K, const Tensor &Out);
  ObjectRef newStorage(size_t NBytes, Device D);
  ObjectRef allocStorage(size_t Slot, size_t NBytes, Device D);
  /// T on device D (T itself when it is there), for DeviceCopy.
  Tensor toDevice(const Tensor &T, Device D);
  /// V with every tensor on a device moved to the CPU (main's result).
  ObjectRef toHost(const ObjectRef &V);
  ObjectRef constantOn(uint32_t C, Device D);
  ObjectRef gpuStorage(size_t NBytes);
  void bindGpuKernels();
  static void gpuLaunch(KernelSlot &K, const Tensor &Out);
  ObjectRef allocTensor(size_t Slot, const ObjectRef &Store, size_t Offset,
                        const int64_t *Dims, size_t Rank, DType T);
  void linkTensorsToStorage();
  /// A packed List of Elems (a list_result kernel's outputs).
  ObjectRef makeList(std::vector<Tensor> Elems) const;

  std::shared_ptr<const Executable> Exe;
  std::shared_ptr<StoragePool> Pool;
  uint64_t Executed = 0;
  // Per-VM views of the executable: bound kernels with their attributes
  // (marker attributes stripped), constants as objects, List constructors.
  std::vector<KernelSlot> Kernels;
  // Per instruction (FirstInstruction[function] + pc): the dtypes, ranks and
  // extents of the last Builtin call whose outputs were checked against the
  // shape function; a call with the same ones needs no new check. For a
  // ShapeFunction call, those of its last call's inputs (and the values of
  // the inputs its shape function reads: KernelInfo::shapeValueInputs), and
  // LastShapes its results: the next call with the same ones reuses them
  // rather than run the function again (attribute parsing and validation
  // were most of a short call's shape functions).
  std::vector<size_t> FirstInstruction;
  std::vector<std::vector<int64_t>> CheckedSignatures;
  std::vector<std::vector<Shape>> LastShapes;
  // A ShapeFunction call's key, built in place call after call.
  std::vector<int64_t> ShapeKey;
  // Per instruction: the last two objects its AllocStorage/AllocTensor
  // made, reused in place once nothing but this cache refers to them (a
  // loop's small results then cost no allocation).
  std::vector<Recycled> RecycledObjects;
  std::vector<ObjectRef> Constants;
  // Copies of constants on the GPU, made on first use (LoadConst on cuda).
  std::vector<ObjectRef> GpuConstants;
  // The executable's GPU code, loaded by the constructor when it has some.
  std::shared_ptr<cuda::Module> GpuCode;
  int32_t ConsTag = -1, NilTag = -1;
  std::vector<ObjectRef> SmallInts; // LoadConsti/GetTag results, cached
  // The frame stack and all frames' registers, contiguous; reused by runs.
  std::vector<Frame> Frames;
  std::vector<ObjectRef> Regs;
  std::vector<ObjectRef> ArgScratch;
  ExecutionLimits Limits;
  bool Profiling = false;
  bool Tracing = false;
  bool Instrumented = false; // Profiling, Tracing or an Observer
  KernelObserver Observer;
  bool ResultsToHost = true;
  std::vector<KernelTime> Profile; // per instruction, while profiling
  // While tracing: the calls, their distinct signatures (keyed by dtypes,
  // ranks and extents, as CheckedSignatures) and the calls past the limit.
  size_t TraceLimit = 0;
  std::vector<TracedCall> Traced;
  std::vector<CallSignature> TraceSignatures;
  std::map<std::vector<int64_t>, uint32_t> TraceSignatureIndex;
  uint64_t TraceDropped = 0;
  size_t PeakDepth = 0, PeakRegs = 0;
};

} // namespace rivet::vm
