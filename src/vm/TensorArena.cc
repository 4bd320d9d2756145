//===- TensorArena.cc - Address space a List's tensors fill in order ------===//
#include "vm/TensorArena.h"

#include <sys/mman.h>
#include <sys/resource.h>

#include <vector>

namespace rivet::vm {

namespace {

/// Address space of one arena: the largest List an arena serves.
constexpr size_t kReserveBytes = size_t(16) << 30;
/// Committed at a time (mprotect), so that a short List costs one call.
constexpr size_t kCommitStep = size_t(2) << 20;
/// At most this many arenas alive at once (16 GiB of address space each).
constexpr size_t kMaxArenas = 1024;
/// Dead arenas kept for reuse, and the most committed bytes one may keep.
constexpr size_t kCachedArenas = 4;
constexpr size_t kCachedCommitted = size_t(64) << 20;
/// An arena with more claimed than this, of which under a quarter is still
/// alive, claims no more (a List used as a queue would grow it forever).
constexpr size_t kSparseAbove = size_t(64) << 20;

struct Registry {
  std::mutex Lock;
  std::vector<std::pair<char *, size_t>> Cached; // base, committed
  size_t Alive = 0, Mapped = 0;
};

/// TensorArena::placedBytes (the claimed bytes of the live arenas) and its
/// peak.
std::atomic<size_t> Placed{0}, PeakPlaced{0};

Registry &registry() {
  static Registry *R = new Registry(); // outlives arenas freed at exit
  return *R;
}

/// Under an address-space or data limit, reservations would eat into what
/// the program may allocate: no arenas then.
bool addressSpaceUnlimited() {
  static const bool Unlimited = [] {
    for (int Resource : {RLIMIT_AS, RLIMIT_DATA}) {
      struct rlimit R;
      if (getrlimit(Resource, &R) != 0 || R.rlim_cur != RLIM_INFINITY)
        return false;
    }
    return true;
  }();
  return Unlimited;
}

} // namespace

std::shared_ptr<TensorArena> TensorArena::create() {
  if (!addressSpaceUnlimited())
    return nullptr;
  Registry &G = registry();
  Reservation R;
  {
    std::lock_guard<std::mutex> Guard(G.Lock);
    if (G.Alive >= kMaxArenas)
      return nullptr;
    if (!G.Cached.empty()) {
      R.base = G.Cached.back().first;
      R.committed = G.Cached.back().second;
      G.Cached.pop_back();
    }
    ++G.Alive;
  }
  if (!R.base) {
    void *P = mmap(nullptr, kReserveBytes, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    std::lock_guard<std::mutex> Guard(G.Lock);
    if (P == MAP_FAILED) {
      --G.Alive;
      return nullptr;
    }
    ++G.Mapped;
    R.base = static_cast<char *>(P);
  }
  return std::shared_ptr<TensorArena>(new TensorArena(R));
}

TensorArena::~TensorArena() {
  Placed.fetch_sub(Claimed, std::memory_order_relaxed);
  Registry &G = registry();
  {
    std::lock_guard<std::mutex> Guard(G.Lock);
    --G.Alive;
    if (G.Cached.size() < kCachedArenas && Res.committed <= kCachedCommitted) {
      G.Cached.emplace_back(Res.base, Res.committed);
      return;
    }
  }
  munmap(Res.base, kReserveBytes);
}

size_t TensorArena::reservationsMapped() {
  Registry &G = registry();
  std::lock_guard<std::mutex> Guard(G.Lock);
  return G.Mapped;
}

size_t TensorArena::placedBytes() {
  return Placed.load(std::memory_order_relaxed);
}
size_t TensorArena::peakPlacedBytes() {
  return PeakPlaced.load(std::memory_order_relaxed);
}
void TensorArena::resetPeakPlacedBytes() {
  PeakPlaced.store(Placed.load(std::memory_order_relaxed),
                   std::memory_order_relaxed);
}

TensorArena *TensorArena::owning(const Storage &S) {
  return S.releaser().fn == &TensorArena::release
             ? static_cast<TensorArena *>(S.releaser().owner)
             : nullptr;
}

void TensorArena::release(void *Owner, void *, size_t NBytes) {
  static_cast<TensorArena *>(Owner)->Live.fetch_sub(NBytes,
                                                    std::memory_order_relaxed);
}

std::shared_ptr<Storage> TensorArena::storageOf(void *Data, size_t NBytes) {
  // One allocation holds the Storage and the reference that keeps this
  // arena alive; the Storage is destroyed (and releases) first.
  struct Held {
    std::shared_ptr<TensorArena> Arena;
    Storage S;
    Held(std::shared_ptr<TensorArena> A, void *Data, size_t NBytes)
        : Arena(std::move(A)),
          S(Data, NBytes,
            Storage::Releaser{&TensorArena::release, Arena.get(), NBytes}) {}
  };
  Live.fetch_add(NBytes, std::memory_order_relaxed);
  auto H = std::make_shared<Held>(shared_from_this(), Data, NBytes);
  return std::shared_ptr<Storage>(H, &H->S);
}

std::shared_ptr<Storage> TensorArena::claim(size_t NBytes, size_t Align) {
  char *Data;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    if (Claimed > kSparseAbove &&
        Live.load(std::memory_order_relaxed) < Claimed / 4)
      return nullptr;
    size_t At = (Claimed + Align - 1) & ~(Align - 1);
    if (NBytes == 0 || At > kReserveBytes || NBytes > kReserveBytes - At)
      return nullptr;
    size_t End = At + NBytes;
    if (End > Res.committed) {
      size_t Want = (End + kCommitStep - 1) / kCommitStep * kCommitStep;
      Want = std::min(Want, kReserveBytes);
      if (mprotect(Res.base + Res.committed, Want - Res.committed,
                   PROT_READ | PROT_WRITE) != 0)
        return nullptr;
      Res.committed = Want;
    }
    size_t Now = Placed.fetch_add(End - Claimed, std::memory_order_relaxed) +
                 (End - Claimed);
    size_t Peak = PeakPlaced.load(std::memory_order_relaxed);
    while (Now > Peak && !PeakPlaced.compare_exchange_weak(
                             Peak, Now, std::memory_order_relaxed))
      ;
    Claimed = End;
    Data = Res.base + At;
  }
  return storageOf(Data, NBytes);
}

bool TensorArena::holds(const void *Data, size_t NBytes) const {
  const char *P = static_cast<const char *>(Data);
  std::lock_guard<std::mutex> Guard(Lock);
  return P >= Res.base && (size_t)(P - Res.base) <= Claimed &&
         NBytes <= Claimed - (size_t)(P - Res.base);
}

std::shared_ptr<Storage> TensorArena::adjacent(const std::vector<Tensor> &In) {
  char *First = nullptr, *Next = nullptr;
  TensorArena *A = nullptr;
  for (const Tensor &T : In) {
    size_t N = T.nbytes();
    if (N == 0)
      continue;
    if (!T.hasData())
      return nullptr;
    char *P = static_cast<char *>(T.rawData());
    if (!First) {
      A = owning(*T.storage());
      if (!A)
        return nullptr;
      First = P;
    } else if (P != Next) {
      return nullptr;
    }
    Next = P + N;
  }
  // The first tensor's arena claimed every byte up to Next: they are the
  // other tensors' own, never reused while the arena lives.
  if (!First || !A->holds(First, (size_t)(Next - First)))
    return nullptr;
  return A->storageOf(First, (size_t)(Next - First));
}

} // namespace rivet::vm
