//===- StoragePool.cc - Pooled storage buffers of a VM --------------------===//
#include "vm/StoragePool.h"

#include <algorithm>
#include <cstdlib>

namespace rivet::vm {

StoragePool::~StoragePool() {
  // Every block in use holds a reference to the pool, so all are free here.
  for (auto &KV : Free)
    std::free(KV.second);
}

/// Serves a request from the free list (best fit) or from the system.
/// A block more than twice the request stays for a larger one.
std::shared_ptr<Storage> StoragePool::allocate(size_t NBytes) {
  size_t Capacity =
      (NBytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  if (Capacity < NBytes)
    fail("cannot allocate {} bytes: size overflows", NBytes);
  Capacity = std::max(Capacity, kStorageAlignment);
  void *Data = nullptr;
  {
    std::lock_guard<std::mutex> G(Lock);
    auto It = Free.lower_bound(Capacity);
    if (It != Free.end() && It->first / 2 <= Capacity) {
      Capacity = It->first;
      Data = It->second;
      Free.erase(It);
    } else {
      Data = std::aligned_alloc(kStorageAlignment, Capacity);
      if (!Data)
        fail("out of memory allocating {} bytes of VM storage", NBytes);
      Held += Capacity;
      ++SystemAllocs;
    }
    InUse += Capacity;
    Peak = std::max(Peak, InUse);
  }
  std::shared_ptr<StoragePool> Self = shared_from_this();
  return Storage::wrap(Data, NBytes, [Self = std::move(Self), Data, Capacity] {
    Self->release(Data, Capacity);
  });
}

/// Returns a block to the free list.
void StoragePool::release(void *Data, size_t Capacity) {
  std::lock_guard<std::mutex> G(Lock);
  InUse -= Capacity;
  Free.emplace(Capacity, Data);
}

size_t StoragePool::heldBytes() const {
  std::lock_guard<std::mutex> G(Lock);
  return Held;
}

size_t StoragePool::bytesInUse() const {
  std::lock_guard<std::mutex> G(Lock);
  return InUse;
}

size_t StoragePool::peakBytesInUse() const {
  std::lock_guard<std::mutex> G(Lock);
  return Peak;
}

void StoragePool::resetPeak() {
  std::lock_guard<std::mutex> G(Lock);
  Peak = InUse;
}

size_t StoragePool::systemAllocations() const {
  std::lock_guard<std::mutex> G(Lock);
  return SystemAllocs;
}

void StoragePool::trim() {
  std::lock_guard<std::mutex> G(Lock);
  for (auto &KV : Free) {
    Held -= KV.first;
    std::free(KV.second);
  }
  Free.clear();
}

} // namespace rivet::vm
