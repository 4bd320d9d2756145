//===- DeviceAllocator.cc - Caching allocator of GPU memory ---------------===//
//
// The lock guards only the cache and the counters; the driver is called
// outside it, so a Storage released on another thread never waits for a
// cuMemAlloc. Releasing a block makes no driver call at all, which keeps
// storages that die during static destruction harmless.
//
//===----------------------------------------------------------------------===//
#include "vm/cuda/DeviceAllocator.h"

#include "kernels/Error.h"

#include <algorithm>
#include <cstdint>

namespace rivet::vm::cuda {

size_t DeviceAllocator::roundUp(size_t NBytes) {
  size_t Granule = NBytes <= kSmallLimit ? kSmallGranule : kLargeGranule;
  return std::max(Granule, (NBytes + Granule - 1) / Granule * Granule);
}

std::shared_ptr<Storage> DeviceAllocator::allocate(size_t NBytes) {
  if (NBytes > SIZE_MAX / 2)
    fail("cannot allocate {} bytes of GPU memory: size overflows", NBytes);
  size_t Capacity = roundUp(NBytes);
  CUdeviceptr Block = 0;
  {
    std::lock_guard<std::mutex> G(Lock);
    // Best fit: the smallest cached block that fits, unless it would waste
    // more than half of itself.
    auto It = Cached.lower_bound(Capacity);
    if (It != Cached.end() && It->first / 2 <= Capacity) {
      Capacity = It->first;
      Block = It->second;
      Cached.erase(It);
    }
  }
  if (!Block)
    Block = newBlock(Capacity);
  Storage::Releaser R{&releaseBlock, this, Capacity};
  void *Data = reinterpret_cast<void *>(static_cast<uintptr_t>(Block));
  try {
    return std::make_shared<Storage>(Data, NBytes, R, Device::CUDA);
  } catch (...) {
    releaseBlock(this, Data, Capacity);
    throw;
  }
}

/// A block from the driver; on running out of device memory, the cache is
/// given back and the allocation retried once.
CUdeviceptr DeviceAllocator::newBlock(size_t Capacity) {
  CUdeviceptr Block = 0;
  CUresult R = Drv.cuMemAlloc(&Block, Capacity);
  if (R == CUDA_ERROR_OUT_OF_MEMORY) {
    freeCached();
    R = Drv.cuMemAlloc(&Block, Capacity);
  }
  if (R != CUDA_SUCCESS)
    fail("CUDA error in cuMemAlloc ({} bytes, {} held): {}", Capacity,
         heldBytes(), errorString(R));
  std::lock_guard<std::mutex> G(Lock);
  Held += Capacity;
  ++DriverAllocs;
  return Block;
}

/// Frees every cached block (cuMemFree waits for the device to be idle, so
/// no queued work still uses them).
void DeviceAllocator::freeCached() {
  std::multimap<size_t, CUdeviceptr> Blocks;
  {
    std::lock_guard<std::mutex> G(Lock);
    Blocks.swap(Cached);
  }
  // Frees all before reporting a failure: the blocks are out of the cache.
  CUresult First = CUDA_SUCCESS;
  for (auto &[Capacity, Block] : Blocks) {
    if (CUresult R = Drv.cuMemFree(Block); R != CUDA_SUCCESS) {
      First = First == CUDA_SUCCESS ? R : First;
      continue;
    }
    std::lock_guard<std::mutex> G(Lock);
    Held -= Capacity;
  }
  check(First, "cuMemFree");
}

void DeviceAllocator::releaseBlock(void *Owner, void *Data, size_t Capacity) {
  auto *A = static_cast<DeviceAllocator *>(Owner);
  auto Block = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(Data));
  std::lock_guard<std::mutex> G(A->Lock);
  // First among its size: the next request takes the block freed last.
  A->Cached.emplace_hint(A->Cached.lower_bound(Capacity), Capacity, Block);
}

size_t DeviceAllocator::driverAllocations() const {
  std::lock_guard<std::mutex> G(Lock);
  return DriverAllocs;
}

size_t DeviceAllocator::heldBytes() const {
  std::lock_guard<std::mutex> G(Lock);
  return Held;
}

} // namespace rivet::vm::cuda
