//===- StoragePool.h - Pooled storage buffers of a VM -----------*- C++ -*-===//
//
// Each VirtualMachine takes its storage from a pool: a buffer whose last user
// dies goes back to the pool's free list and serves the next request of a
// similar size (best fit), so repeated runs allocate nothing new. Small
// blocks sit in one free list per 64-byte size class, so the common request
// is a vector pop under a spin lock (only a tensor released on another
// thread ever contends for it), with no allocation.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

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
  /// dies (the pool stays alive until every block is back).
  std::shared_ptr<Storage> allocate(size_t NBytes);

  /// The block allocate() would use, for a caller that constructs the
  /// Storage itself (in place, inside another object): Data and the releaser
  /// that gives the block back. The Storage must be constructed.
  struct Block {
    void *data;
    Storage::Releaser releaser;
  };
  Block acquire(size_t NBytes);

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
  /// Blocks up to this size live in per-size-class free lists.
  static constexpr size_t kSmallLimit = 4096;
  static constexpr size_t kNumClasses = kSmallLimit / kStorageAlignment;
  static void releaseBlock(void *Owner, void *Data, size_t Capacity);
  void release(void *Data, size_t Capacity);
  void *takeFree(size_t &Capacity);
  Block handOut(void *Data, size_t Capacity);

  /// A spin lock: the critical sections are a few instructions, and the
  /// lock is taken twice per tensor, where a mutex's calls show.
  class SpinLock {
  public:
    void lock() {
      while (Flag.exchange(true, std::memory_order_acquire))
        while (Flag.load(std::memory_order_relaxed))
          ;
    }
    void unlock() { Flag.store(false, std::memory_order_release); }

  private:
    std::atomic<bool> Flag{false};
  };
  using Guard = std::lock_guard<SpinLock>;

  mutable SpinLock Lock;
  /// Small[K]: free blocks of capacity (K + 1) * 64.
  std::array<std::vector<void *>, kNumClasses> Small;
  std::multimap<size_t, void *> Large; // capacity -> block
  size_t Held = 0, InUse = 0, Peak = 0, SystemAllocs = 0;
  /// Blocks handed out and not yet back; while there are any, KeepAlive
  /// holds the pool (a block may outlive the VM that made it).
  size_t Outstanding = 0;
  std::shared_ptr<StoragePool> KeepAlive;
};

} // namespace rivet::vm
