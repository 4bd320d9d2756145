//===- DeviceAllocator.h - Caching allocator of GPU memory ------*- C++ -*-===//
//
// cuMemAlloc and cuMemFree are slow (and cuMemFree synchronizes the device),
// so freed device blocks are kept and reused, as StoragePool does for host
// memory. Sizes are rounded up to 512-byte granules, and above 1 MiB to
// 2 MiB ones (the driver's own page size there), so that blocks of similar
// requests are interchangeable. A block whose last Storage dies goes back to
// the cache at once: all GPU work is queued on the one stream, so work queued
// later with the block's next owner runs after the work of its last one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"
#include "vm/cuda/CudaDriver.h"

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace rivet::vm::cuda {

class DeviceAllocator {
public:
  /// Allocates with D; the caller makes the context current before each call
  /// of allocate().
  explicit DeviceAllocator(const Driver &D) : Drv(D) {}
  DeviceAllocator(const DeviceAllocator &) = delete;
  DeviceAllocator &operator=(const DeviceAllocator &) = delete;

  /// A CUDA Storage of NBytes (0 included) on a block of at least
  /// roundUp(NBytes): the smallest cached block that fits and is at most
  /// twice that size, else a new one. When the driver is out of memory, the
  /// cached blocks are freed and the allocation is tried once more.
  std::shared_ptr<Storage> allocate(size_t NBytes);

  /// The block size serving NBytes: a multiple of 512 up to 1 MiB, of 2 MiB
  /// above (never 0).
  static size_t roundUp(size_t NBytes);

  size_t driverAllocations() const;
  /// Bytes of all blocks, in use or cached.
  size_t heldBytes() const;

private:
  static constexpr size_t kSmallGranule = 512;
  static constexpr size_t kLargeGranule = 2 << 20;
  static constexpr size_t kSmallLimit = 1 << 20;

  static void releaseBlock(void *Owner, void *Data, size_t Capacity);
  CUdeviceptr newBlock(size_t Capacity);
  void freeCached();

  const Driver &Drv;
  mutable std::mutex Lock;
  std::multimap<size_t, CUdeviceptr> Cached; // capacity -> block
  size_t Held = 0, DriverAllocs = 0;
};

} // namespace rivet::vm::cuda
