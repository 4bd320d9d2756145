//===- GpuExecution.cc - The VM's side of the CUDA device -----------------===//
//
// What a VirtualMachine does for an executable with CUDA code: load the
// module and bind the GPU kernels when it is made (which is where a machine
// without a GPU is told so), take device storage from the GPU's caching
// allocator, launch kernels, copy tensors between devices, keep GPU copies
// of constants, and bring main's result back to the host.
//
//===----------------------------------------------------------------------===//
#include "vm/KernelSlot.h"
#include "vm/StoragePool.h"
#include "vm/cuda/Gpu.h"

#include "kernels/Error.h"

#include <algorithm>
#include <cstring>

namespace rivet::vm {

/// Loads the executable's GPU code and binds each CUDA native kernel's slot
/// to its __global__ function. Throws "this executable needs a CUDA GPU:
/// ..." where there is none.
void VirtualMachine::bindGpuKernels() {
  cuda::Gpu &G = cuda::Gpu::get();
  std::vector<cuda::ImageRef> Images;
  for (const CudaCodeInfo::Image &I : Exe->cudaCode->images)
    Images.push_back({I.arch, I.ptx, I.bytes.data(), I.bytes.size()});
  // Library kernels on the GPU (cuBLAS, cuDNN) need no code of ours.
  if (!Images.empty())
    GpuCode = G.loadModule(Images);
  for (KernelSlot &K : Kernels) {
    if (K.Kind != KernelEntry::Kind::Native || K.Native->device != Device::CUDA)
      continue;
    if (!GpuCode)
      fail("native kernel '{}' runs on the GPU, but the executable has no "
           "GPU code",
           K.Native->symbol);
    K.GpuFn = GpuCode->function(K.Native->symbol);
    // The kernel's parameters: every buffer pointer, then the sourced size
    // parameters (the broadcast sizes are the VM's checks, not arguments).
    size_t NumBuffers = K.Native->buffers.size();
    K.GpuArgs.resize(NumBuffers + K.Native->sizeSources.size());
    for (size_t B = 0; B < NumBuffers; ++B)
      K.GpuArgs[B] = &K.Buffers[B];
    for (size_t P = 0; P < K.Native->sizeSources.size(); ++P)
      K.GpuArgs[NumBuffers + P] = &K.Sizes[P];
  }
  GpuConstants.resize(Exe->constants.size());
}

/// Queues K's kernel on the GPU's stream (its Buffers and Sizes are set).
/// The kernels hand out the output's elements with a grid-stride loop, so
/// any grid is correct: one thread per element up to a few waves of blocks.
void VirtualMachine::gpuLaunch(KernelSlot &K, const Tensor &Out) {
  constexpr uint32_t kBlock = 256;
  cuda::Gpu &G = cuda::Gpu::get();
  // A thread per element of the output or of the largest input, whichever
  // is more: a row-reducing kernel shares each row among a warp's lanes
  // (codegen/cuda/EmitCuda.h), so it wants 32 threads per output element.
  int64_t Work = std::max<int64_t>(Out.numel(), 1);
  for (const Tensor *In : K.InPtrs)
    Work = std::max<int64_t>(Work, In->numel());
  int64_t MaxBlocks = (int64_t)G.multiprocessors() * 16;
  int64_t Blocks = std::min<int64_t>((Work + kBlock - 1) / kBlock, MaxBlocks);
  // The arguments by value (pointers, then int64 extents): recorded for a
  // graph, they must not change under it.
  uint64_t Args[64];
  std::vector<uint64_t> Many;
  uint64_t *A = Args;
  size_t N = K.GpuArgs.size();
  if (N > 64) {
    Many.resize(N);
    A = Many.data();
  }
  for (size_t I = 0; I < N; ++I)
    std::memcpy(&A[I], K.GpuArgs[I], sizeof(uint64_t));
  G.launchRecorded(K.GpuFn, (uint32_t)std::max<int64_t>(Blocks, 1), kBlock, A,
                   N);
}

/// Device storage of NBytes as a storage object: the GPU's Storage is held
/// by the object's releaser (one allocation more than a pooled CPU block).
ObjectRef VirtualMachine::gpuStorage(size_t NBytes) {
  auto *Held = new std::shared_ptr<Storage>(cuda::Gpu::get().allocate(NBytes));
  Storage::Releaser Drop{[](void *Owner, void *, size_t) {
                           delete static_cast<std::shared_ptr<Storage> *>(
                               Owner);
                         },
                         Held, NBytes};
  try {
    return std::make_shared<StorageObj>((*Held)->data(), NBytes, Drop,
                                        Device::CUDA);
  } catch (...) {
    delete Held;
    throw;
  }
}

Tensor VirtualMachine::toDevice(const Tensor &T, Device D) {
  if (T.device() == D)
    return T;
  if (!T.hasData())
    fail("DeviceCopy of a tensor without data");
  size_t N = T.nbytes();
  cuda::Gpu &G = cuda::Gpu::get();
  if (D == Device::CUDA) {
    std::shared_ptr<Storage> S = StorageObj::share(gpuStorage(N));
    G.copyHostToDevice(S->data(), T.rawData(), N);
    return Tensor(std::move(S), 0, T.shape(), T.dtype());
  }
  std::shared_ptr<Storage> S = Pool->allocate(N);
  G.copyDeviceToHost(S->data(), T.rawData(), N);
  return Tensor(std::move(S), 0, T.shape(), T.dtype());
}

ObjectRef VirtualMachine::onDevice(const ObjectRef &V, Device D) {
  if (D != Device::CPU && !Exe->needsGpu())
    fail("the executable has no GPU code, so nothing goes to {}",
         deviceName(D));
  return makeTensor(toDevice(asTensor(V, "argument"), D));
}

Tensor VirtualMachine::hostValues(const Tensor &T) {
  return T.device() == Device::CPU ? T : toDevice(T, Device::CPU);
}

void VirtualMachine::writeValues(const Tensor &Host, Tensor &Dst) {
  if (Host.device() != Device::CPU || Host.nbytes() != Dst.nbytes())
    fail("writeValues: {} on {} does not fit {}", Host.typeString(),
         deviceName(Host.device()), Dst.typeString());
  if (Dst.device() == Device::CPU) {
    if (Host.rawData() != Dst.rawData())
      std::memcpy(Dst.rawData(), Host.rawData(), Host.nbytes());
    return;
  }
  cuda::Gpu &G = cuda::Gpu::get();
  G.copyHostToDevice(Dst.rawData(), Host.rawData(), Host.nbytes());
  G.synchronize(); // Host may die when this returns
}

void VirtualMachine::synchronize() {
  if (Exe->needsGpu())
    cuda::Gpu::get().synchronize();
}

ObjectRef VirtualMachine::constantOn(uint32_t C, Device D) {
  if (D == Device::CPU)
    return Constants[C];
  if (GpuConstants.size() != Constants.size())
    fail("the executable has no GPU code, so no constant is on {}",
         deviceName(D));
  ObjectRef &O = GpuConstants[C];
  if (!O)
    O = makeTensor(toDevice(asTensor(Constants[C], "constant"), D));
  return O;
}

/// Whether V holds a tensor off the CPU, looked for without recursion (a
/// result may be a List of a million elements).
static bool holdsDeviceTensor(const ObjectRef &V) {
  std::vector<const Object *> Work{V.get()};
  while (!Work.empty()) {
    const Object *O = Work.back();
    Work.pop_back();
    if (!O)
      continue;
    if (const auto *T = O->as<TensorObj>()) {
      if (T->value.device() != Device::CPU)
        return true;
    } else if (const auto *A = O->as<ADTObj>()) {
      for (const ObjectRef &F : A->fields)
        Work.push_back(F.get());
    }
  }
  return false;
}

ObjectRef VirtualMachine::toHost(const ObjectRef &V) {
  if (!V || !holdsDeviceTensor(V))
    return V;
  if (const auto *T = V->as<TensorObj>())
    return T->value.device() == Device::CPU
               ? V
               : makeTensor(toDevice(T->value, Device::CPU));
  if (const auto *A = V->as<ADTObj>()) {
    std::vector<ObjectRef> Fields;
    bool Changed = false;
    for (const ObjectRef &F : A->fields) {
      Fields.push_back(toHost(F));
      Changed |= Fields.back() != F;
    }
    return Changed ? std::make_shared<ADTObj>(A->tag, std::move(Fields)) : V;
  }
  return V; // closures keep what they captured where it is
}

} // namespace rivet::vm
