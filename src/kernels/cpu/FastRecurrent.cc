//===- FastRecurrent.cc - float32 lstm, gru and rnn as small GEMMs --------===//
//
// Library kernels cpu.lstm, cpu.gru and cpu.rnn (KernelInfo::libraryFor):
// the VM calls them in place of the reference kernels (ops/RNN.cc: double
// precision, one batch row and one matrix-vector product at a time). Here,
// in float32, the input projection of every step is one GEMM before the
// recurrence, and each step is one small GEMM of the whole batch's hidden
// states by R followed by one pass of fused gate arithmetic with vectorized
// sigmoid and tanh. The weights are packed transposed, each gate padded to
// a multiple of 8 lanes, so that every vector is whole. Every attribute of
// the reference is honoured (directions, activations, clip, layouts,
// sequence lengths, initial states, peepholes, input_forget,
// linear_before_reset); other dtypes run the reference kernel.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/CpuSupport.h"
#include "kernels/cpu/RecurrentSteps.h"
#include "kernels/ops/KernelUtil.h"
#include "kernels/ops/RecurrentLayer.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace rivet::kernels {
namespace recurrent {

namespace {
using Entry = void (*)(const DirectionJob &);

/// The compilation of Isa, or null when this CPU cannot run it.
Entry entryFor(RecurrentIsa Isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  bool Avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  bool Avx512 = Avx2 && __builtin_cpu_supports("avx512f") &&
                __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512dq") &&
                __builtin_cpu_supports("avx512vl");
#else
  bool Avx2 = false, Avx512 = false;
#endif
  switch (Isa) {
  case RecurrentIsa::Auto:
    return Avx512 ? runDirectionAvx512
           : Avx2 ? runDirectionAvx2
                  : runDirectionBase;
  case RecurrentIsa::Base: return runDirectionBase;
  case RecurrentIsa::Avx2: return Avx2 ? runDirectionAvx2 : nullptr;
  case RecurrentIsa::Avx512: return Avx512 ? runDirectionAvx512 : nullptr;
  }
  return nullptr;
}

std::atomic<Entry> &chosenEntry() {
  static std::atomic<Entry> E{entryFor(RecurrentIsa::Auto)};
  return E;
}
} // namespace

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

/// Packs direction Dir's operands into Base and runs it.
void packAndRun(RnnKind K, const std::vector<Tensor> &In,
                std::vector<Tensor> &Out, const RnnParams &P, const RnnDims &D,
                const std::vector<int64_t> &Lens, int64_t Dir) {
  const int64_t S = D.Seq, N = D.Batch, I = D.Input, H = D.Hidden, G = D.Gates,
                Hp = pad8(H), GW = G * Hp, GH = G * H;
  auto Present = [&](size_t Idx) -> const float * {
    return Idx < In.size() && In[Idx].numel() > 0 ? In[Idx].data<float>()
                                                  : nullptr;
  };
  const float *W = In[1].data<float>() + Dir * GH * I;
  const float *R = In[2].data<float>() + Dir * GH * H;
  const float *Bias = Present(3);
  const float *H0 = Present(5);
  const float *C0 = K == RnnKind::Lstm ? Present(6) : nullptr;
  const float *Peep = K == RnnKind::Lstm ? Present(7) : nullptr;
  const bool GruH = K == RnnKind::Gru;
  const bool Lbr = GruH && P.LinearBeforeReset;

  size_t WtN = (size_t)(I * GW), RtN = (size_t)(H * GW), BN = (size_t)GW,
         PN = Peep ? (size_t)(3 * Hp) : 0;
  // About 64 rows of x per block (at least one step).
  const int64_t BlockSteps =
      std::max<int64_t>(1, std::min(S, N > 0 ? 64 / N : 1));
  size_t XbN = (size_t)(BlockSteps * N * I),
         GxN = (size_t)(BlockSteps * N * GW), GhN = (size_t)(N * GW),
         StN = (size_t)(N * Hp);
  Scratch &Sc = threadScratch();
  float *Base = Sc.take(WtN + RtN + 2 * BN + PN + XbN + GxN + GhN + 3 * StN);
  float *Wt = Base, *Rt = Wt + WtN, *Bx = Rt + RtN, *Bh = Bx + BN,
        *Pk = Bh + BN, *Xb = Pk + PN, *Gx = Xb + XbN, *Gh = Gx + GxN,
        *Hs = Gh + GhN, *Cs = Hs + StN, *Rh = Cs + StN;
  std::fill(Wt, Xb, 0.0f);
  std::fill(Hs, Rh + StN, 0.0f);
  // Row Gate * H + Jh of W and R is packed column Gate * Hp + Jh.
  for (int64_t Row = 0; Row < GH; ++Row) {
    int64_t Col = Row / H * Hp + Row % H;
    for (int64_t J = 0; J < I; ++J)
      Wt[J * GW + Col] = W[Row * I + J];
    for (int64_t J = 0; J < H; ++J)
      Rt[J * GW + Col] = R[Row * H + J];
    if (Bias) {
      float Wb = Bias[Dir * 2 * GH + Row], Rb = Bias[Dir * 2 * GH + GH + Row];
      // gru's Rb_h is inside the reset product with linear_before_reset;
      // without, it is added outside R_h (r . h) like Wb_h.
      bool RbInside = Lbr && Row >= 2 * H;
      Bx[Col] = RbInside ? Wb : Wb + Rb;
      if (RbInside)
        Bh[Col] = Rb;
    }
  }
  if (Peep)
    for (int64_t Q = 0; Q < 3; ++Q)
      std::copy_n(Peep + (Dir * 3 + Q) * H, H, Pk + Q * Hp);
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
  J.Gh = Gh, J.Hs = Hs, J.Cs = Cs, J.Rh = Rh;
  J.Y = Out[0].data<float>(), J.Dir = Dir, J.NumDir = D.NumDir;
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

} // namespace

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
