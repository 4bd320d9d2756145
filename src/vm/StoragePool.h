//===- StoragePool.h - Pooled storage buffers of a VM -----------*- C++ -*-===//
//
// Each VirtualMachine takes its storage from a pool: a buffer whose last user
// dies goes back to the pool's free list and serves the next request of a
// similar size (best fit), so repeated runs allocate nothing new.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace rivet::vm {

class StoragePool : public std::enable_shared_from_this<StoragePool> {
public:
  StoragePool() = default;
  ~StoragePool();
  StoragePool(const StoragePool &) = delete;
  StoragePool &operator=(const StoragePool &) = delete;

  /// A 64-byte aligned buffer of NBytes. The smallest free block that fits
  /// and wastes no more than half of itself is reused; otherwise a new block
  /// is allocated. The buffer returns to this pool when the last reference
  /// dies (the storage keeps the pool alive until then).
  std::shared_ptr<Storage> allocate(size_t NBytes);

  /// Bytes of all blocks the pool owns, in use or free.
  size_t heldBytes() const;
  /// Bytes of the blocks currently in use, and their peak since creation or
  /// the last resetPeak().
  size_t bytesInUse() const;
  size_t peakBytesInUse() const;
  void resetPeak();
  /// Blocks obtained from the system since creation (for tests: repeated
  /// runs must not increase it).
  size_t systemAllocations() const;
  /// Returns every free block to the system.
  void trim();

private:
  void release(void *Data, size_t Capacity);

  mutable std::mutex Lock;
  std::multimap<size_t, void *> Free; // capacity -> block
  size_t Held = 0, InUse = 0, Peak = 0, SystemAllocs = 0;
};

} // namespace rivet::vm
