//===- TensorArena.h - Address space a List's tensors fill in order -*- C++
//-*-===//
//
// Where AllocListTensor places the tensors a program appends to a List: one
// reservation of address space, committed as it fills, from which each
// tensor takes the bytes right after the previous one and never gives them
// back while the arena lives. Tensors made in order and appended in order
// are therefore adjacent, and joining them (concat_list along its outermost
// axis) is a view of the arena instead of a copy of every byte.
//
// A dead arena keeps its pages for the next one (a process-wide cache of a
// few), so a model that runs again faults no page in. Arenas are a speed-up
// only: when none can be had (an address-space limit, too many alive, a
// full or mostly dead one), callers take pooled storage instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace rivet::vm {

class TensorArena : public std::enable_shared_from_this<TensorArena> {
public:
  /// A new arena (a cached reservation when one is free), or null when none
  /// can be had.
  static std::shared_ptr<TensorArena> create();
  /// The arena whose claim or span S is, or null.
  static TensorArena *owning(const Storage &S);

  ~TensorArena();
  TensorArena(const TensorArena &) = delete;
  TensorArena &operator=(const TensorArena &) = delete;

  /// NBytes > 0 right after the previous claim, aligned to Align (a power
  /// of two, at most 64); null when they do not fit or when most of the
  /// arena's bytes are dead (the caller starts another arena).
  std::shared_ptr<Storage> claim(size_t NBytes, size_t Align);
  /// Whether [Data, Data + NBytes) lies in bytes claimed from this arena.
  bool holds(const void *Data, size_t NBytes) const;
  /// When the bytes of In[0], In[1], ... lie one after another in one
  /// arena (tensors of no bytes skipped): a storage of all of them, which a
  /// join of In may view (it keeps the arena, so the bytes, alive). Else
  /// null.
  static std::shared_ptr<Storage> adjacent(const std::vector<Tensor> &In);

  /// Reservations this process has mapped (for tests: running a model again
  /// must not map more).
  static size_t reservationsMapped();
  /// Bytes claimed from the arenas alive in this process (an arena gives no
  /// byte back before it dies), and their peak since the last
  /// resetPeakPlacedBytes(): the memory a VM's pool does not see (`rivet
  /// bench` reports both).
  static size_t placedBytes();
  static size_t peakPlacedBytes();
  static void resetPeakPlacedBytes();

private:
  struct Reservation {
    char *base = nullptr;
    size_t committed = 0; // bytes readable and writable from base
  };
  explicit TensorArena(Reservation R) : Res(R) {}
  std::shared_ptr<Storage> storageOf(void *Data, size_t NBytes);
  static void release(void *Owner, void *Data, size_t NBytes);

  Reservation Res;
  mutable std::mutex Lock;
  size_t Claimed = 0;          // bytes from base handed out (guarded by Lock)
  std::atomic<size_t> Live{0}; // bytes that claims and spans still hold
};

} // namespace rivet::vm
