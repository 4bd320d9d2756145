//===- FastRecurrent.cc - float32 lstm, gru and rnn as small GEMMs --------===//
//
// Library kernels cpu.lstm, cpu.gru and cpu.rnn (KernelInfo::libraryFor):
// the VM calls them in place of the reference kernels (ops/RNN.cc: double
// precision, one batch row and one matrix-vector product at a time). Here,
// in float32 (RecurrentSteps.h): the input projection of a block of steps
// is one GEMM, and each step is one small GEMM of the whole batch's hidden
// states by R followed by the gate arithmetic with vectorized sigmoid and
// tanh. The weights are packed transposed, each gate padded to a multiple
// of 8 lanes, so that every vector is whole; a packing is kept per thread
// for the values it came from. Every attribute of
// the reference is honoured (directions, activations, clip, layouts,
// sequence lengths, initial states, peepholes, input_forget,
// linear_before_reset); other dtypes run the reference kernel.
//
//===----------------------------------------------------------------------===//
#include "kernels/LstmStack.h"
#include "kernels/Threading.h"
#include "kernels/cpu/CpuSupport.h"
#include "kernels/cpu/RecurrentSteps.h"
#include "kernels/ops/KernelUtil.h"
#include "kernels/ops/RecurrentLayer.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <sched.h>

namespace rivet::kernels {
namespace recurrent {

namespace {
using Entry = void (*)(const DirectionJob &);

/// The compilation of Isa, or null when this CPU cannot run it.
Entry entryFor(RecurrentIsa Isa) {
  cpu::CpuIsa Host = cpu::hostIsa();
  switch (Isa) {
  case RecurrentIsa::Auto:
    return Host == cpu::CpuIsa::Avx512 ? runDirectionAvx512
           : Host == cpu::CpuIsa::Avx2 ? runDirectionAvx2
                                       : runDirectionBase;
  case RecurrentIsa::Base: return runDirectionBase;
  case RecurrentIsa::Avx2:
    return Host != cpu::CpuIsa::Base ? runDirectionAvx2 : nullptr;
  case RecurrentIsa::Avx512:
    return Host == cpu::CpuIsa::Avx512 ? runDirectionAvx512 : nullptr;
  }
  return nullptr;
}

std::atomic<Entry> &chosenEntry() {
  static std::atomic<Entry> E{entryFor(RecurrentIsa::Auto)};
  return E;
}
} // namespace

void waitForSteps(const std::atomic<int64_t> &Ready, int64_t Steps) {
  // The layer below is a block of steps ahead at most: a short spin. Its
  // thread may have lost its core on a shared machine, so yield now and
  // then.
  for (unsigned I = 1; Ready.load(std::memory_order_acquire) < Steps; ++I) {
    if ((I & 255) == 0)
      sched_yield();
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

void runDirection(const DirectionJob &J) {
  chosenEntry().load(std::memory_order_relaxed)(J);
}

bool setRecurrentIsa(RecurrentIsa Isa) {
  Entry E = entryFor(Isa);
  if (E)
    chosenEntry().store(E);
  return E != nullptr;
}

} // namespace recurrent

namespace {
using recurrent::DirectionJob;

int64_t pad8(int64_t N) { return (N + 7) / 8 * 8; }

/// Per-thread scratch, kept across calls (nothing is allocated in steady
/// state) unless a call needed more than 8 MB.
struct Scratch {
  std::vector<float> Buffer;
  float *take(size_t N) {
    if (Buffer.size() < N)
      Buffer.resize(N);
    return Buffer.data();
  }
  void releaseIfLarge() {
    if (Buffer.size() > (size_t(1) << 21))
      std::vector<float>().swap(Buffer);
  }
};
Scratch &threadScratch() {
  thread_local Scratch S;
  return S;
}

/// The storages of W, R, B and P (null where absent).
using SourceStorages = std::array<std::shared_ptr<Storage>, 4>;

/// One direction's operands packed for runDirection: Wt [I][GW], Rt
/// [H][GW], Bx and Bh [GW], Pk [3][Hp], with the values they came from, or
/// (Held) the immutable storages and addresses they came from.
struct PackedDirection {
  RnnKind Kind = RnnKind::Rnn;
  int64_t I = -1, H = -1;
  bool Lbr = false, HasB = false, HasP = false;
  std::vector<float> From, Packed;
  SourceStorages Held;
  std::array<const float *, 4> HeldAt{};
  size_t WtN = 0, RtN = 0, BN = 0, PN = 0;
};

/// The values packed from: W and R of the direction, then its B and P
/// when present.
struct PackSource {
  const float *W, *R, *B, *P;
  size_t WN, RN, BN, PN;
  SourceStorages Storages;
  size_t size() const { return WN + RN + BN + PN; }
  /// Every operand's bytes are immutable (an executable's constants).
  bool immutable() const {
    for (size_t K = 0; K < 4; ++K)
      if ((K < 2 || (K == 2 ? BN : PN)) &&
          !(Storages[K] && Storages[K]->immutable()))
        return false;
    return true;
  }
  /// Packed from these very immutable operands (held, so that their
  /// addresses cannot have come back with other values).
  bool heldBy(const PackedDirection &E) const {
    return E.Held == Storages && E.HeldAt[0] == W && E.HeldAt[1] == R &&
           E.HeldAt[2] == B && E.HeldAt[3] == P;
  }
  bool sameAs(const std::vector<float> &F) const {
    auto Same = [&](const float *X, size_t N, size_t At) {
      return N == 0 || std::memcmp(X, F.data() + At, N * sizeof(float)) == 0;
    };
    return F.size() == size() && Same(W, WN, 0) && Same(R, RN, WN) &&
           Same(B, BN, WN + RN) && Same(P, PN, WN + RN + BN);
  }
  void copyTo(std::vector<float> &F) const {
    F.resize(size());
    float *D = F.data();
    D = std::copy_n(W, WN, D);
    D = std::copy_n(R, RN, D);
    if (BN)
      D = std::copy_n(B, BN, D);
    if (PN)
      std::copy_n(P, PN, D);
  }
};

/// The last packings on this thread. A call whose operands hold the values
/// one was packed from (compared byte for byte: a sequential read, far
/// cheaper than packing's strided writes, which were most of a one-step
/// call) reuses it: constant weights are packed once per thread, changed
/// weights are packed again, never read stale. Operands in immutable
/// storage (an executable's constants) are matched by storage and address
/// instead: the comparison was 1.2 us of a two-layer call at every length.
constexpr size_t kPackCacheEntries = 8;
/// Larger operands are packed for each call, not kept (16 MB).
constexpr size_t kMaxCachedPack = size_t(1) << 22;

PackedDirection &packedFor(RnnKind K, const PackSource &Src, int64_t I,
                           int64_t H, int64_t G, bool Lbr, bool &Fresh) {
  thread_local std::array<PackedDirection, kPackCacheEntries> Cache;
  thread_local size_t Next = 0;
  thread_local PackedDirection Uncached;
  const bool Immutable = Src.immutable();
  if (Src.size() <= kMaxCachedPack)
    for (PackedDirection &E : Cache)
      if (E.Kind == K && E.I == I && E.H == H && E.Lbr == Lbr &&
          E.HasB == (Src.BN != 0) && E.HasP == (Src.PN != 0) &&
          (Immutable ? Src.heldBy(E) : Src.sameAs(E.From))) {
        Fresh = false;
        return E;
      }
  Fresh = true;
  PackedDirection &E = Src.size() <= kMaxCachedPack
                           ? Cache[Next++ % kPackCacheEntries]
                           : Uncached;
  const int64_t Hp = pad8(H), GW = G * Hp;
  E.Kind = K, E.I = I, E.H = H, E.Lbr = Lbr;
  E.HasB = Src.BN != 0, E.HasP = Src.PN != 0;
  E.WtN = (size_t)(I * GW), E.RtN = (size_t)(H * GW), E.BN = (size_t)GW;
  E.PN = Src.PN ? (size_t)(3 * Hp) : 0;
  E.Held = {};
  E.HeldAt = {};
  E.From.clear();
  if (Src.size() <= kMaxCachedPack && Immutable) {
    E.Held = Src.Storages;
    E.HeldAt = {Src.W, Src.R, Src.B, Src.P};
  } else if (Src.size() <= kMaxCachedPack) {
    Src.copyTo(E.From);
  }
  E.Packed.assign(E.WtN + E.RtN + 2 * E.BN + E.PN, 0.0f); // zero biases
  return E;
}

/// Packs W, R, B and P of a direction into E (zero-filled): row Gate * H +
/// Jh of W and R becomes column Gate * Hp + Jh.
void pack(PackedDirection &E, const PackSource &Src, int64_t G) {
  const int64_t I = E.I, H = E.H, Hp = pad8(H), GW = G * Hp, GH = G * H;
  float *Wt = E.Packed.data(), *Rt = Wt + E.WtN, *Bx = Rt + E.RtN,
        *Bh = Bx + E.BN, *Pk = Bh + E.BN;
  for (int64_t Row = 0; Row < GH; ++Row) {
    int64_t Col = Row / H * Hp + Row % H;
    for (int64_t J = 0; J < I; ++J)
      Wt[J * GW + Col] = Src.W[Row * I + J];
    for (int64_t J = 0; J < H; ++J)
      Rt[J * GW + Col] = Src.R[Row * H + J];
    if (Src.BN) {
      float Wb = Src.B[Row], Rb = Src.B[GH + Row];
      // gru's Rb_h is inside the reset product with linear_before_reset;
      // without, it is added outside R_h (r . h) like Wb_h.
      bool RbInside = E.Lbr && Row >= 2 * H;
      Bx[Col] = RbInside ? Wb : Wb + Rb;
      if (RbInside)
        Bh[Col] = Rb;
    }
  }
  if (Src.PN)
    for (int64_t Q = 0; Q < 3; ++Q)
      std::copy_n(Src.P + Q * H, H, Pk + Q * Hp);
}

/// A layer of lstm_stack running beside the others: its progress links
/// (DirectionJob::XReady, YDone) and the steps it projects at a time.
struct StackLinks {
  const std::atomic<int64_t> *XReady = nullptr;
  std::atomic<int64_t> *YDone = nullptr;
  int64_t BlockSteps = 0; // 0: the default
};

/// Runs direction Dir of a call on its packed operands.
void packAndRun(RnnKind K, const std::vector<Tensor> &In,
                std::vector<Tensor> &Out, const RnnParams &P, const RnnDims &D,
                const std::vector<int64_t> &Lens, int64_t Dir,
                const StackLinks &Links = {}) {
  const int64_t S = D.Seq, N = D.Batch, I = D.Input, H = D.Hidden, G = D.Gates,
                Hp = pad8(H), GW = G * Hp, GH = G * H;
  auto Present = [&](size_t Idx) -> const float * {
    return Idx < In.size() && In[Idx].numel() > 0 ? In[Idx].data<float>()
                                                  : nullptr;
  };
  const float *Bias = Present(3);
  const float *H0 = Present(5);
  const float *C0 = K == RnnKind::Lstm ? Present(6) : nullptr;
  const float *Peep = K == RnnKind::Lstm ? Present(7) : nullptr;
  const bool Lbr = K == RnnKind::Gru && P.LinearBeforeReset;
  PackSource Src{In[1].data<float>() + Dir * GH * I,
                 In[2].data<float>() + Dir * GH * H,
                 Bias ? Bias + Dir * 2 * GH : nullptr,
                 Peep ? Peep + Dir * 3 * H : nullptr,
                 (size_t)(GH * I),
                 (size_t)(GH * H),
                 Bias ? (size_t)(2 * GH) : 0,
                 Peep ? (size_t)(3 * H) : 0,
                 {In[1].storage(), In[2].storage(),
                  Bias ? In[3].storage() : nullptr,
                  Peep ? In[7].storage() : nullptr}};
  bool Fresh = false;
  PackedDirection &E = packedFor(K, Src, I, H, G, Lbr, Fresh);
  if (Fresh)
    pack(E, Src, G);
  const float *Wt = E.Packed.data(), *Rt = Wt + E.WtN, *Bx = Rt + E.RtN,
              *Bh = Bx + E.BN, *Pk = Bh + E.BN;

  // About 64 rows of x per block (at least one step).
  const int64_t BlockSteps =
      Links.BlockSteps ? Links.BlockSteps
                       : std::max<int64_t>(1, std::min(S, N > 0 ? 64 / N : 1));
  size_t XbN = (size_t)(BlockSteps * N * I),
         GxN = (size_t)(BlockSteps * N * GW), GhN = (size_t)(N * GW),
         StN = (size_t)(N * Hp);
  Scratch &Sc = threadScratch();
  float *Xb = Sc.take(XbN + GxN + GhN + 4 * StN), *Gx = Xb + XbN,
        *Gh = Gx + GxN, *Hs = Gh + GhN, *Cs = Hs + StN, *Rh = Cs + StN,
        *Hs2 = Rh + StN;
  std::fill(Hs, Hs2 + StN, 0.0f);
  auto HOff = [&](int64_t Bi) {
    return P.Layout ? (Bi * D.NumDir + Dir) * H : (Dir * N + Bi) * H;
  };
  for (int64_t Bi = 0; Bi < N; ++Bi) {
    if (H0)
      std::copy_n(H0 + HOff(Bi), H, Hs + Bi * Hp);
    if (C0)
      std::copy_n(C0 + HOff(Bi), H, Cs + Bi * Hp);
  }

  DirectionJob J;
  J.Kind = K, J.S = S, J.N = N, J.I = I, J.H = H, J.Hp = Hp, J.GW = GW;
  J.Reverse = D.NumDir == 2 ? Dir == 1 : P.Reverse;
  J.Layout = P.Layout, J.InputForget = P.InputForget;
  J.LinearBeforeReset = P.LinearBeforeReset;
  J.DefaultActs = defaultActivations(K, P, Dir);
  J.Clip = (float)P.Clip, J.Acts = P.Acts;
  J.X = In[0].data<float>(), J.Wt = Wt, J.Rt = Rt, J.Bx = Bx;
  J.Bh = Lbr ? Bh : nullptr, J.Peep = Peep ? Pk : nullptr;
  J.Lens = Lens.data(), J.BlockSteps = BlockSteps, J.Xb = Xb, J.Gx = Gx;
  J.Gh = Gh, J.Hs = Hs, J.Cs = Cs, J.Rh = Rh, J.Hs2 = Hs2;
  J.Y = Out[0].data<float>(), J.Dir = Dir, J.NumDir = D.NumDir;
  J.XReady = Links.XReady, J.YDone = Links.YDone;
  runDirection(J);

  float *YH = Out[1].data<float>();
  float *YC = K == RnnKind::Lstm ? Out[2].data<float>() : nullptr;
  for (int64_t Bi = 0; Bi < N; ++Bi) {
    std::copy_n(Hs + Bi * Hp, H, YH + HOff(Bi));
    if (YC)
      std::copy_n(Cs + Bi * Hp, H, YC + HOff(Bi));
  }
  Sc.releaseIfLarge();
}

template <RnnKind K>
void fastRecurrentKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &A) {
  if (In.empty() || In[0].dtype() != DType::Float32) {
    KernelRegistry::global().get(kindOp(K)).kernel(In, Out, A);
    return;
  }
  RnnParams P = rnnParams(K, A);
  RnnDims D = checkRnn(K, In, P);
  std::vector<int64_t> Lens((size_t)D.Batch, D.Seq);
  const Tensor &LensT = In[4];
  bool Short = false;
  if (LensT.numel() > 0)
    for (int64_t Bi = 0; Bi < D.Batch; ++Bi) {
      Lens[(size_t)Bi] = indexElement(LensT, Bi);
      Short |= Lens[(size_t)Bi] < D.Seq;
    }
  // Steps past a sequence's end are zero.
  if (Short)
    std::fill_n(Out[0].data<float>(), Out[0].numel(), 0.0f);
  // Two directions run side by side when the runtime has two threads.
  if (D.NumDir == 2 && cpu::runPartsOnPool(2, [&](int64_t Dir) {
        packAndRun(K, In, Out, P, D, Lens, Dir);
        return true;
      }))
    return;
  for (int64_t Dir = 0; Dir < D.NumDir; ++Dir)
    packAndRun(K, In, Out, P, D, Lens, Dir);
}

/// Stacks shorter than this run their layers one after the other: the
/// pipeline's fill and the second thread's wake-up would cost more.
constexpr int64_t kMinPipelinedSteps = 32;

/// Progress of one layer, on a cache line of its own.
struct alignas(64) LayerProgress {
  std::atomic<int64_t> Steps{0};
};

/// lstm_stack: every layer as the fast lstm above. On two or more threads
/// each layer is a part on the pool, a block of steps behind the layer
/// below; parts are claimed in layer order, so that a thread that runs
/// several runs them bottom up and none waits on a layer not yet started.
void fastLstmStackKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &A) {
  if (In.empty() || In[0].dtype() != DType::Float32) {
    KernelRegistry::global().get("lstm_stack").kernel(In, Out, A);
    return;
  }
  const size_t Layers = stackLayers(In);
  // (Parsed once: lstm_stack has no attributes.)
  static const RnnParams P = rnnParams(RnnKind::Lstm, Attrs{});
  // Every layer is checked before any runs: a layer that failed midway
  // would leave those above it waiting.
  std::vector<std::vector<Tensor>> LayerIn, LayerOut;
  std::vector<RnnDims> Dims;
  LayerIn.reserve(Layers), LayerOut.reserve(Layers), Dims.reserve(Layers);
  Tensor X = In[0];
  for (size_t L = 0; L < Layers; ++L) {
    LayerIn.push_back(stackLayerInputs(In, L, X));
    LayerOut.emplace_back(
        Out.begin() + (long)(lstm_stack::kOutputsPerLayer * L),
        Out.begin() + (long)(lstm_stack::kOutputsPerLayer * (L + 1)));
    Dims.push_back(checkRnn(RnnKind::Lstm, LayerIn.back(), P));
    X = stackLayerX(Out[lstm_stack::kOutputsPerLayer * L]);
  }
  const int64_t S = Dims[0].Seq, N = Dims[0].Batch;
  const std::vector<int64_t> Lens((size_t)N, S);
  if (Layers == 1 || numThreads() < 2 || S < kMinPipelinedSteps) {
    for (size_t L = 0; L < Layers; ++L)
      packAndRun(RnnKind::Lstm, LayerIn[L], LayerOut[L], P, Dims[L], Lens, 0);
    return;
  }
  // Blocks of about S / 32 steps: the layer above starts a block behind.
  const int64_t Block =
      std::clamp<int64_t>(S / 32, 1, std::max<int64_t>(1, 64 / N));
  std::unique_ptr<LayerProgress[]> Done(new LayerProgress[Layers]);
  std::mutex FailureLock;
  std::exception_ptr Failure;
  cpu::runPartsOnPool((int64_t)Layers, [&](int64_t Part) {
    const size_t L = (size_t)Part;
    StackLinks Links;
    Links.XReady = L > 0 ? &Done[L - 1].Steps : nullptr;
    Links.YDone = L + 1 < Layers ? &Done[L].Steps : nullptr;
    Links.BlockSteps = Block;
    try {
      packAndRun(RnnKind::Lstm, LayerIn[L], LayerOut[L], P, Dims[L], Lens, 0,
                 Links);
    } catch (...) {
      // The layers above must not wait for this one.
      Done[L].Steps.store(S, std::memory_order_release);
      std::lock_guard<std::mutex> G(FailureLock);
      if (!Failure)
        Failure = std::current_exception();
    }
    return true;
  });
  if (Failure)
    std::rethrow_exception(Failure);
}

} // namespace

RIVET_REGISTER_LIBRARY_KERNEL("cpu.lstm_stack", "lstm_stack",
                              fastLstmStackKernel, lstmStackOutputs);
RIVET_REGISTER_LIBRARY_KERNEL("cpu.lstm", "lstm",
                              fastRecurrentKernel<RnnKind::Lstm>,
                              rnnShape<RnnKind::Lstm>);
RIVET_REGISTER_LIBRARY_KERNEL("cpu.gru", "gru",
                              fastRecurrentKernel<RnnKind::Gru>,
                              rnnShape<RnnKind::Gru>);
RIVET_REGISTER_LIBRARY_KERNEL("cpu.rnn", "rnn",
                              fastRecurrentKernel<RnnKind::Rnn>,
                              rnnShape<RnnKind::Rnn>);

} // namespace rivet::kernels
