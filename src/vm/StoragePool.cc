//===- StoragePool.cc - Pooled storage buffers of a VM --------------------===//
#include "vm/StoragePool.h"

#include <algorithm>
#include <cstdlib>

namespace rivet::vm {

StoragePool::~StoragePool() {
  // Every block in use keeps the pool alive, so all are free here.
  for (std::vector<void *> &Class : Small)
    for (void *P : Class)
      std::free(P);
  for (auto &KV : Large)
    std::free(KV.second);
}

/// Removes the best-fitting free block for Capacity (the smallest that
/// fits, at most twice as large) and sets Capacity to its size; null when
/// there is none. Called with the lock held.
void *StoragePool::takeFree(size_t &Capacity) {
  size_t Limit = Capacity * 2;
  for (size_t C = Capacity; C <= std::min(Limit, kSmallLimit);
       C += kStorageAlignment) {
    std::vector<void *> &Class = Small[C / kStorageAlignment - 1];
    if (!Class.empty()) {
      void *P = Class.back();
      Class.pop_back();
      Capacity = C;
      return P;
    }
  }
  if (Limit <= kSmallLimit)
    return nullptr;
  auto It = Large.lower_bound(std::max(Capacity, kSmallLimit + 1));
  if (It == Large.end() || It->first / 2 > Capacity)
    return nullptr;
  Capacity = It->first;
  void *P = It->second;
  Large.erase(It);
  return P;
}

/// Serves a request from the free lists (best fit) or from the system
/// (outside the lock).
StoragePool::Block StoragePool::acquire(size_t NBytes) {
  size_t Capacity =
      (NBytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  if (Capacity < NBytes)
    fail("cannot allocate {} bytes: size overflows", NBytes);
  Capacity = std::max(Capacity, kStorageAlignment);
  {
    Guard G(Lock);
    if (void *Data = takeFree(Capacity))
      return handOut(Data, Capacity);
  }
  void *Data = std::aligned_alloc(kStorageAlignment, Capacity);
  if (!Data)
    fail("out of memory allocating {} bytes of VM storage", NBytes);
  Guard G(Lock);
  Held += Capacity;
  ++SystemAllocs;
  return handOut(Data, Capacity);
}

/// Accounts for a block leaving the pool. Called with the lock held.
StoragePool::Block StoragePool::handOut(void *Data, size_t Capacity) {
  InUse += Capacity;
  Peak = std::max(Peak, InUse);
  if (Outstanding++ == 0)
    KeepAlive = shared_from_this();
  return Block{Data, Storage::Releaser{&releaseBlock, this, Capacity}};
}

std::shared_ptr<Storage> StoragePool::allocate(size_t NBytes) {
  Block B = acquire(NBytes);
  try {
    return std::make_shared<Storage>(B.data, NBytes, B.releaser);
  } catch (...) {
    release(B.data, B.releaser.capacity);
    throw;
  }
}

void StoragePool::releaseBlock(void *Owner, void *Data, size_t Capacity) {
  static_cast<StoragePool *>(Owner)->release(Data, Capacity);
}

/// Returns a block to its free list. The last block back lets go of the
/// pool, after the lock is released (that may destroy the pool).
void StoragePool::release(void *Data, size_t Capacity) {
  std::shared_ptr<StoragePool> Last;
  Guard G(Lock);
  InUse -= Capacity;
  if (Capacity <= kSmallLimit)
    Small[Capacity / kStorageAlignment - 1].push_back(Data);
  else // first among its size: the next request takes it, still in cache
    Large.emplace_hint(Large.lower_bound(Capacity), Capacity, Data);
  if (--Outstanding == 0)
    Last = std::move(KeepAlive);
}

size_t StoragePool::heldBytes() const {
  Guard G(Lock);
  return Held;
}

size_t StoragePool::bytesInUse() const {
  Guard G(Lock);
  return InUse;
}

size_t StoragePool::peakBytesInUse() const {
  Guard G(Lock);
  return Peak;
}

void StoragePool::resetPeak() {
  Guard G(Lock);
  Peak = InUse;
}

size_t StoragePool::systemAllocations() const {
  Guard G(Lock);
  return SystemAllocs;
}

void StoragePool::trim() {
  Guard G(Lock);
  for (std::vector<void *> &Class : Small) {
    Held -=
        Class.size() * (size_t)(&Class - Small.data() + 1) * kStorageAlignment;
    for (void *P : Class)
      std::free(P);
    Class.clear();
    Class.shrink_to_fit();
  }
  for (auto &KV : Large) {
    Held -= KV.first;
    std::free(KV.second);
  }
  Large.clear();
}

} // namespace rivet::vm
