//===- RNN.cc - lstm, gru and rnn (ONNX recurrent layers) -----------------===//
//
// One reference kernel per layer with full ONNX semantics: forward, reverse
// and bidirectional; activation lists with alpha/beta; clip; layout 0
// ([seq, batch, ...]) and 1 ([batch, seq, ...]); optional inputs (B,
// sequence_lens, initial_h, initial_c, P) are absent when they have zero
// elements. Each step is a matrix-vector product in double.
//
// The results are pinned bit for bit (tests/kernels/rnn_exact_test.cc):
// every gate pre-activation is its bias (or 0.0) plus W[row][j] * x[j] for
// j = 0, 1, ... in that order, and R h likewise, as separate sums. The
// products run over transposed weights in "axpy" form (for each j, every
// row's sum gains one term), which keeps each row's order and lets rows go
// through SIMD lanes; W x for all steps is hoisted out of the recurrence.
//
//===----------------------------------------------------------------------===//
#include "kernels/LstmStack.h"
#include "kernels/ops/KernelUtil.h"
#include "kernels/ops/RecurrentLayer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rivet::kernels {
namespace {

/// Two doubles: one SSE2 register on x86-64, generic code elsewhere. Each
/// lane's + and * are the scalar IEEE operations.
typedef double Double2 __attribute__((vector_size(16)));

inline Double2 load2(const double *P) {
  Double2 V;
  std::memcpy(&V, P, sizeof(V));
  return V;
}
inline void store2(double *P, Double2 V) { std::memcpy(P, &V, sizeof(V)); }
inline Double2 splat2(double V) { return Double2{V, V}; }

/// The default activations as types, so that the common case inlines them
/// instead of switching per element. apply() makes all the exp calls first,
/// then the divisions two lanes at a time: the same formulas, per lane, as
/// sigmoid() and tanhViaExp().
struct SigmoidFn {
  double operator()(double X) const { return sigmoid(X); }
  void apply(double *V, int64_t N, double *Tmp) const {
    for (int64_t J = 0; J < N; ++J)
      V[J] = std::exp(-V[J]);
    const Double2 One = splat2(1);
    int64_t J = 0;
    for (; J + 2 <= N; J += 2)
      store2(V + J, One / (One + load2(V + J)));
    for (; J < N; ++J)
      V[J] = 1 / (1 + V[J]);
  }
};
struct TanhFn {
  double operator()(double X) const { return tanhViaExp(X); }
  void apply(double *V, int64_t N, double *Tmp) const {
    // exp(2|x|) even where |x| < 1e-4 selects the polynomial: unused there.
    for (int64_t J = 0; J < N; ++J)
      Tmp[J] = std::exp(2 * std::fabs(V[J]));
    typedef int64_t Int2 __attribute__((vector_size(16)));
    const Double2 One = splat2(1), Two = splat2(2), Three = splat2(3),
                  Small = splat2(1e-4);
    const Int2 Sign = {INT64_MIN, INT64_MIN};
    int64_t J = 0;
    for (; J + 2 <= N; J += 2) {
      Double2 X = load2(V + J);
      Int2 XBits = (Int2)X;
      Double2 A = (Double2)(XBits & ~Sign);
      Double2 Big = One - Two / (load2(Tmp + J) + One);
      Int2 BigSigned = ((Int2)Big & ~Sign) | (XBits & Sign); // copysign
      Double2 Poly = X * (One - X * X / Three);
      Int2 UsePoly = A < Small;
      store2(V + J, (Double2)(((Int2)Poly & UsePoly) | (BigSigned & ~UsePoly)));
    }
    for (; J < N; ++J)
      V[J] = tanhViaExp(V[J]);
  }
};

/// Whether Name equals Lower (all lowercase) ignoring ASCII case.
bool equalsLower(const std::string &Name, const char *Lower) {
  size_t I = 0;
  for (; I < Name.size() && Lower[I]; ++I) {
    char C = Name[I];
    if (C >= 'A' && C <= 'Z')
      C = (char)(C - 'A' + 'a');
    if (C != Lower[I])
      return false;
  }
  return I == Name.size() && !Lower[I];
}

/// Fills P.Acts from the activations / activation_alpha / activation_beta
/// attributes, or with the ONNX defaults when there are none.
void parseActivations(const char *Op, const Attrs &A, RnnKind K, RnnParams &P) {
  size_t Per = numActivations(K);
  const std::vector<std::string> *Listed = nullptr;
  if (A.find("activations"))
    Listed = &withOp(Op, [&]() -> const std::vector<std::string> & {
      return A.getStrings("activations");
    });
  if (!Listed || Listed->empty()) {
    for (int64_t D = 0; D < P.NumDir; ++D)
      for (size_t J = 0; J < Per; ++J)
        P.Acts[(size_t)D * Per + J].F = J == 0 && K != RnnKind::Rnn
                                            ? Activation::Sigmoid
                                            : Activation::Tanh;
    return;
  }
  P.DefaultActs = false;
  const std::vector<std::string> &Names = *Listed;
  // One list may serve both directions.
  size_t Count = P.NumDir == 2 && Names.size() == Per ? 2 * Per : Names.size();
  if (Count != Per * (size_t)P.NumDir)
    fail("{}: expected {} activations ({} per direction), got {}", Op,
         Per * (size_t)P.NumDir, Per, Names.size());
  std::vector<double> Alphas, Betas;
  if (A.find("activation_alpha"))
    Alphas = withOp(Op, [&] { return A.getFloats("activation_alpha"); });
  if (A.find("activation_beta"))
    Betas = withOp(Op, [&] { return A.getFloats("activation_beta"); });
  size_t AI = 0, BI = 0;
  // Alpha and beta are consumed in order by the functions that use them.
  auto TakeA = [&](double D) { return AI < Alphas.size() ? Alphas[AI++] : D; };
  auto TakeB = [&](double D) { return BI < Betas.size() ? Betas[BI++] : D; };
  for (size_t I = 0; I < Count; ++I) {
    const std::string &N = Names[I % Names.size()];
    Activation &Act = P.Acts[I];
    if (equalsLower(N, "relu"))
      Act.F = Activation::Relu;
    else if (equalsLower(N, "tanh"))
      Act.F = Activation::Tanh;
    else if (equalsLower(N, "sigmoid"))
      Act.F = Activation::Sigmoid;
    else if (equalsLower(N, "affine")) {
      Act.F = Activation::Affine;
      Act.Alpha = TakeA(1);
      Act.Beta = TakeB(0);
    } else if (equalsLower(N, "leakyrelu")) {
      Act.F = Activation::LeakyRelu;
      Act.Alpha = TakeA(0.01);
    } else if (equalsLower(N, "thresholdedrelu")) {
      Act.F = Activation::ThresholdedRelu;
      Act.Alpha = TakeA(1);
    } else if (equalsLower(N, "scaledtanh")) {
      Act.F = Activation::ScaledTanh;
      Act.Alpha = TakeA(1);
      Act.Beta = TakeB(1);
    } else if (equalsLower(N, "hardsigmoid")) {
      Act.F = Activation::HardSigmoid;
      Act.Alpha = TakeA(0.2);
      Act.Beta = TakeB(0.5);
    } else if (equalsLower(N, "elu")) {
      Act.F = Activation::Elu;
      Act.Alpha = TakeA(1);
    } else if (equalsLower(N, "softsign"))
      Act.F = Activation::Softsign;
    else if (equalsLower(N, "softplus"))
      Act.F = Activation::Softplus;
    else
      fail("{}: unknown activation function '{}'", Op, N);
  }
}

} // namespace

RnnParams rnnParams(RnnKind K, const Attrs &A) {
  const char *Op = kindOp(K);
  RnnParams P;
  std::string Dir = attrString(Op, A, "direction");
  if (Dir == "forward")
    P.NumDir = 1;
  else if (Dir == "reverse")
    P.NumDir = 1, P.Reverse = true;
  else if (Dir == "bidirectional")
    P.NumDir = 2;
  else
    fail("{}: direction must be forward, reverse or bidirectional, got '{}'",
         Op, Dir);
  // An absent hidden_size is r's extent, which the schema cannot know (0
  // stands for it here; the relation rejects an explicit 0).
  if (A.has("hidden_size"))
    P.Hidden = attrInt(Op, A, "hidden_size");
  if (P.Hidden < 0)
    fail("{}: hidden_size must be positive, got {}", Op, P.Hidden);
  if (A.find("clip")) {
    P.Clip = withOp(Op, [&] { return A.getFloat("clip"); });
    if (!(P.Clip > 0))
      fail("{}: clip must be positive, got {}", Op, P.Clip);
  }
  P.Layout = attrFlag(Op, A, "layout");
  // Each flag belongs to one kind's schema; the others do not have it.
  P.InputForget = K == RnnKind::Lstm && attrFlag(Op, A, "input_forget");
  P.LinearBeforeReset =
      K == RnnKind::Gru && attrFlag(Op, A, "linear_before_reset");
  parseActivations(Op, A, K, P);
  return P;
}

int64_t indexElement(const Tensor &T, int64_t I) {
  return T.dtype() == DType::Int32 ? T.data<int32_t>()[I]
                                   : T.data<int64_t>()[I];
}

namespace {
/// Whether S is Want, without building a Shape (this runs on every call).
bool shapeIs(const Shape &S, std::initializer_list<int64_t> Want) {
  return std::equal(S.begin(), S.end(), Want.begin(), Want.end());
}
} // namespace

RnnDims checkRnn(RnnKind K, const std::vector<Tensor> &In, const RnnParams &P) {
  const char *Op = kindOp(K);
  checkArity(Op, In, numInputs(K));
  const Tensor &X = In[0], &W = In[1], &R = In[2];
  checkDType(Op, "x", X.dtype(), DTypeClass::Float);
  checkSameDType(Op, "x", X, "w", W);
  checkSameDType(Op, "x", X, "r", R);
  if (X.rank() != 3 || W.rank() != 3 || R.rank() != 3)
    fail("{}: x, w and r must have rank 3, got {}, {} and {}", Op,
         shapeToString(X.shape()), shapeToString(W.shape()),
         shapeToString(R.shape()));
  RnnDims D;
  D.Gates = numGates(K);
  D.NumDir = P.NumDir;
  D.Seq = P.Layout ? X.shape()[1] : X.shape()[0];
  D.Batch = P.Layout ? X.shape()[0] : X.shape()[1];
  D.Input = X.shape()[2];
  D.Hidden = P.Hidden ? P.Hidden : R.shape()[2];
  int64_t GH = D.Gates * D.Hidden;
  if (!shapeIs(W.shape(), {D.NumDir, GH, D.Input}))
    fail("{}: w must be {}, got {}", Op, shapeToString({D.NumDir, GH, D.Input}),
         shapeToString(W.shape()));
  if (!shapeIs(R.shape(), {D.NumDir, GH, D.Hidden}))
    fail("{}: r must be {}, got {}", Op,
         shapeToString({D.NumDir, GH, D.Hidden}), shapeToString(R.shape()));
  auto CheckOpt = [&](size_t I, const char *Name,
                      std::initializer_list<int64_t> Want, bool Float) {
    const Tensor &T = In[I];
    if (T.numel() == 0 && !shapeIs(T.shape(), Want))
      return;
    if (Float)
      checkSameDType(Op, "x", X, Name, T);
    else
      checkDType(Op, Name, T.dtype(), DTypeClass::Index);
    if (!shapeIs(T.shape(), Want))
      fail("{}: {} must be {}, got {}", Op, Name, shapeToString(Shape(Want)),
           shapeToString(T.shape()));
  };
  // initial_h and initial_c: [dir, batch, hidden] or [batch, dir, hidden].
  int64_t H0 = P.Layout ? D.Batch : D.NumDir,
          H1 = P.Layout ? D.NumDir : D.Batch;
  CheckOpt(3, "b", {D.NumDir, 2 * GH}, true);
  CheckOpt(4, "sequence_lens", {D.Batch}, false);
  CheckOpt(5, "initial_h", {H0, H1, D.Hidden}, true);
  if (K == RnnKind::Lstm) {
    CheckOpt(6, "initial_c", {H0, H1, D.Hidden}, true);
    CheckOpt(7, "p", {D.NumDir, 3 * D.Hidden}, true);
  }
  if (In[4].numel() > 0 && In[4].hasData())
    for (int64_t Bi = 0; Bi < D.Batch; ++Bi) {
      int64_t L = indexElement(In[4], Bi);
      if (L < 0 || L > D.Seq)
        fail("{}: sequence length {} is out of range [0, {}]", Op, L, D.Seq);
    }
  return D;
}

std::vector<TensorMeta> rnnOutputs(RnnKind K, const std::vector<Tensor> &In,
                                   const Attrs &A) {
  RnnParams P = rnnParams(K, A);
  RnnDims D = checkRnn(K, In, P);
  DType T = In[0].dtype();
  Shape Y = P.Layout ? Shape{D.Batch, D.Seq, D.NumDir, D.Hidden}
                     : Shape{D.Seq, D.NumDir, D.Batch, D.Hidden};
  Shape H = P.Layout ? Shape{D.Batch, D.NumDir, D.Hidden}
                     : Shape{D.NumDir, D.Batch, D.Hidden};
  std::vector<TensorMeta> R = {{Y, T}, {H, T}};
  if (K == RnnKind::Lstm)
    R.push_back({H, T});
  return R;
}

size_t stackLayers(const std::vector<Tensor> &In) {
  size_t Layers = lstm_stack::layers(In.size());
  if (!Layers)
    fail("lstm_stack: expects x and five operands per layer (w, r, b, "
         "initial_h, initial_c), got {} inputs",
         In.size());
  return Layers;
}

std::vector<Tensor> stackLayerInputs(const std::vector<Tensor> &In, size_t L,
                                     const Tensor &X) {
  // Built in order, each tensor once (this runs at every call: eight
  // placeholders, then assignments, were a tenth of a one-step call).
  auto Arg = [&](lstm_stack::Operand Op) -> const Tensor & {
    return In[lstm_stack::argument(L, Op)];
  };
  std::vector<Tensor> Layer;
  Layer.reserve(8);
  Layer.push_back(X);
  Layer.push_back(Arg(lstm_stack::W));
  Layer.push_back(Arg(lstm_stack::R));
  Layer.push_back(Arg(lstm_stack::B));
  Layer.push_back(Tensor::meta({0}, DType::Int32)); // sequence_lens
  Layer.push_back(Arg(lstm_stack::InitialH));
  Layer.push_back(Arg(lstm_stack::InitialC));
  Layer.push_back(Tensor::meta({0}, X.dtype())); // p
  static_assert(lstm_stack::kLstmInput[lstm_stack::W] == 1 &&
                lstm_stack::kLstmInput[lstm_stack::R] == 2 &&
                lstm_stack::kLstmInput[lstm_stack::B] == 3 &&
                lstm_stack::kLstmInput[lstm_stack::InitialH] == 5 &&
                lstm_stack::kLstmInput[lstm_stack::InitialC] == 6);
  return Layer;
}

Tensor stackLayerX(const Tensor &Y) {
  const Shape &S = Y.shape();
  return Y.hasData() ? Y.reshape({S[0], S[2], S[3]})
                     : Tensor::meta({S[0], S[2], S[3]}, Y.dtype());
}

std::vector<TensorMeta> lstmStackOutputs(const std::vector<Tensor> &In,
                                         const Attrs &) {
  // Only the extents the shapes need: the kernels check every layer in
  // full before they compute (building each layer's lstm inputs here as
  // well was a microsecond of a short sequence's call).
  const size_t Layers = stackLayers(In);
  const Tensor &X = In[0];
  if (X.rank() != 3)
    fail("lstm_stack: x must have rank 3, got {}", shapeToString(X.shape()));
  const int64_t S = X.shape()[0], N = X.shape()[1];
  std::vector<TensorMeta> Out;
  Out.reserve(lstm_stack::kOutputsPerLayer * Layers);
  for (size_t L = 0; L < Layers; ++L) {
    const Tensor &R = In[lstm_stack::argument(L, lstm_stack::R)];
    if (R.rank() != 3)
      fail("lstm_stack layer {}: r must have rank 3, got {}", L,
           shapeToString(R.shape()));
    const int64_t H = R.shape()[2];
    Out.push_back({{S, 1, N, H}, X.dtype()});
    Out.push_back({{1, N, H}, X.dtype()});
    Out.push_back({{1, N, H}, X.dtype()});
  }
  return Out;
}

bool defaultActivations(RnnKind K, const RnnParams &P, int64_t Dir) {
  if (P.DefaultActs)
    return true;
  size_t NA = numActivations(K);
  const Activation *Act = P.Acts + (size_t)Dir * NA;
  return Act[0].F ==
             (K == RnnKind::Rnn ? Activation::Tanh : Activation::Sigmoid) &&
         std::all_of(Act + 1, Act + NA, [](const Activation &A) {
           return A.F == Activation::Tanh;
         });
}

namespace {

/// Rows of the transposed weights are padded to a multiple of this many
/// doubles (four SSE2 registers); padding rows have zero weights and are
/// never read back.
constexpr int64_t RowBlock = 8;

int64_t padRows(int64_t N) { return (N + RowBlock - 1) / RowBlock * RowBlock; }

/// Out[r] = Init[r] + M[0][r] * V[0] + M[1][r] * V[1] + ... in that order,
/// for the 2 * Regs rows r from 0; M is K rows of Stride doubles. With
/// Scale, each term is (M[j][r] * Scale[j]) * V[j] instead (GRU's
/// R_h (r . h)). The sums stay in Regs SSE2 registers (the loops over them
/// are unrolled, so the array is scalarized).
template <bool Scaled, int Regs>
void accumulateRowBlock(const double *Init, const double *M, int64_t Stride,
                        int64_t K, const double *V, const double *Scale,
                        double *Out) {
  Double2 A[Regs];
#pragma GCC unroll 8
  for (int Q = 0; Q < Regs; ++Q)
    A[Q] = load2(Init + 2 * Q);
  for (int64_t J = 0; J < K; ++J, M += Stride) {
    Double2 VJ = splat2(V[J]);
    if constexpr (Scaled) {
      Double2 SJ = splat2(Scale[J]);
#pragma GCC unroll 8
      for (int Q = 0; Q < Regs; ++Q)
        A[Q] += load2(M + 2 * Q) * SJ * VJ;
    } else {
#pragma GCC unroll 8
      for (int Q = 0; Q < Regs; ++Q)
        A[Q] += load2(M + 2 * Q) * VJ;
    }
  }
#pragma GCC unroll 8
  for (int Q = 0; Q < Regs; ++Q)
    store2(Out + 2 * Q, A[Q]);
}

/// accumulateRowBlock over Rows rows (a multiple of RowBlock): sixteen rows
/// at a time, then eight.
template <bool Scaled>
void accumulateColumns(const double *Init, const double *M, int64_t Stride,
                       int64_t K, const double *V, const double *Scale,
                       int64_t Rows, double *Out) {
  int64_t R = 0;
  for (; R + 2 * RowBlock <= Rows; R += 2 * RowBlock)
    accumulateRowBlock<Scaled, RowBlock>(Init + R, M + R, Stride, K, V, Scale,
                                         Out + R);
  for (; R < Rows; R += RowBlock)
    accumulateRowBlock<Scaled, RowBlock / 2>(Init + R, M + R, Stride, K, V,
                                             Scale, Out + R);
}

/// Per-call scratch, reused across calls on a thread (the kernel allocates
/// nothing in steady state).
std::vector<double> &scratchBuffer() {
  thread_local std::vector<double> Buffer;
  return Buffer;
}
double *scratch(size_t N) {
  std::vector<double> &B = scratchBuffer();
  if (B.size() < N)
    B.resize(N);
  return B.data();
}
/// Frees the scratch after a large call (over 8 MB) instead of holding it.
void releaseLargeScratch() {
  std::vector<double> &B = scratchBuffer();
  if (B.size() > (size_t(1) << 20))
    std::vector<double>().swap(B);
}

/// Everything one direction of one batch element's recurrence reads.
struct Recurrence {
  int64_t H, GHp, Len;
  double Clip; // 0: none
  bool InputForget, LinearBeforeReset;
  const double *Gx;            // [Len][GHp]: W x_t + Wb in step order
  const double *Rt, *RB;       // [H][GHp] transposed R; [GHp] Rb or zeros
  const double *RtH;           // GRU without linear_before_reset: [H][Hp]
  const double *RBH;           // its bias Rb_h, [Hp]
  const double *Peep;          // [3H] or null
  double *Gh, *Rg, *Zg, *NewH; // [GHp], [Hp], [Hp], [Hp] scratch
  double *Tmp;                 // [Hp] scratch for the activations
  double *Hs, *Cs;             // state in/out, [Hp], [H]

  double clip(double V) const {
    return Clip > 0 ? std::clamp(V, -Clip, Clip) : V;
  }
};

/// Runs the recurrence, calling Emit(Step, Hs) after each step. F, G and
/// Hf are the activation functions f, g and h (unused ones ignored).
template <RnnKind K, typename F, typename G, typename Hf, typename EmitFn>
void recur(const Recurrence &C, F Fa, G Ga, Hf Ha, EmitFn Emit) {
  int64_t H = C.H;
  double *Hs = C.Hs, *NewH = C.NewH, *Cs = C.Cs;
  for (int64_t Step = 0; Step < C.Len; ++Step) {
    const double *Gx = C.Gx + Step * C.GHp;
    double *Gh = C.Gh;
    accumulateColumns<false>(C.RB, C.Rt, C.GHp, H, Hs, nullptr, C.GHp, Gh);
    // Each gate's pre-activations are formed in place in Gh, then its
    // activation runs over the whole gate.
    double *Tmp = C.Tmp;
    if constexpr (K == RnnKind::Lstm) {
      // Gate order i, o, f, c; peepholes i, o, f.
      const double *PD = C.Peep;
      double *IG = Gh, *OG = Gh + H, *FG = Gh + 2 * H, *CG = Gh + 3 * H;
      for (int64_t J = 0; J < H; ++J) {
        double Cv = Cs[J];
        IG[J] = C.clip(Gx[J] + IG[J] + (PD ? PD[J] * Cv : 0));
        if (!C.InputForget)
          FG[J] = C.clip(Gx[2 * H + J] + FG[J] + (PD ? PD[2 * H + J] * Cv : 0));
        CG[J] = C.clip(Gx[3 * H + J] + CG[J]);
      }
      Fa.apply(IG, H, Tmp);
      if (!C.InputForget)
        Fa.apply(FG, H, Tmp);
      Ga.apply(CG, H, Tmp);
      for (int64_t J = 0; J < H; ++J) {
        double Forget = C.InputForget ? 1 - IG[J] : FG[J];
        double NC = Forget * Cs[J] + IG[J] * CG[J];
        Cs[J] = NC;
        OG[J] = C.clip(Gx[H + J] + OG[J] + (PD ? PD[H + J] * NC : 0));
        NewH[J] = NC;
      }
      Fa.apply(OG, H, Tmp);
      Ha.apply(NewH, H, Tmp);
      for (int64_t J = 0; J < H; ++J)
        NewH[J] = OG[J] * NewH[J];
    } else if constexpr (K == RnnKind::Gru) {
      // Gate order z, r, h.
      double *Zg = C.Zg, *Rg = C.Rg;
      for (int64_t J = 0; J < H; ++J) {
        Zg[J] = C.clip(Gx[J] + Gh[J]);
        Rg[J] = C.clip(Gx[H + J] + Gh[H + J]);
      }
      Fa.apply(Zg, H, Tmp);
      Fa.apply(Rg, H, Tmp);
      if (!C.LinearBeforeReset)
        // R_h (r . h) + Rb_h, recomputed with the reset hidden state; NewH
        // holds it until the loop below overwrites it element by element.
        accumulateColumns<true>(C.RBH, C.RtH, padRows(H), H, Hs, Rg, padRows(H),
                                NewH);
      for (int64_t J = 0; J < H; ++J)
        NewH[J] =
            C.clip(C.LinearBeforeReset ? Gx[2 * H + J] + Rg[J] * Gh[2 * H + J]
                                       : Gx[2 * H + J] + NewH[J]);
      Ga.apply(NewH, H, Tmp);
      for (int64_t J = 0; J < H; ++J) {
        double Z = Zg[J];
        NewH[J] = (1 - Z) * NewH[J] + Z * Hs[J];
      }
    } else {
      for (int64_t J = 0; J < H; ++J)
        NewH[J] = C.clip(Gx[J] + Gh[J]);
      Fa.apply(NewH, H, Tmp);
    }
    std::swap(Hs, NewH);
    Emit(Step, Hs);
  }
  // The final state lives in whichever buffer the last swap left it.
  if (Hs != C.Hs)
    std::copy_n(Hs, H, C.Hs);
}

template <RnnKind K, typename E>
void rnnTyped(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
              const RnnParams &P, const RnnDims &D) {
  int64_t S = D.Seq, N = D.Batch, I = D.Input, H = D.Hidden, G = D.Gates;
  int64_t GH = G * H, GHp = padRows(GH), Hp = padRows(H), ND = D.NumDir;
  auto Present = [&](size_t Idx) {
    return Idx < In.size() && In[Idx].numel() > 0 ? In[Idx].data<E>() : nullptr;
  };
  const E *XE = In[0].data<E>(), *WE = In[1].data<E>(), *RE = In[2].data<E>();
  const E *BE = Present(3), *H0E = Present(5);
  const E *C0E = K == RnnKind::Lstm ? Present(6) : nullptr;
  const E *PE = K == RnnKind::Lstm ? Present(7) : nullptr;
  bool GruReset = K == RnnKind::Gru && !P.LinearBeforeReset;

  // Scratch layout (doubles).
  size_t WtN = (size_t)(ND * I * GHp), RtN = (size_t)(ND * H * GHp),
         BN = (size_t)(ND * 2 * GHp),
         RtHN = GruReset ? (size_t)(ND * H * Hp) : 0,
         RBHN = GruReset ? (size_t)(ND * Hp) : 0, XN = (size_t)(S * N * I),
         PN = PE ? (size_t)(ND * 3 * H) : 0, GxN = (size_t)(S * GHp);
  size_t Total =
      WtN + RtN + BN + RtHN + RBHN + XN + PN + GxN + (size_t)(GHp + 6 * Hp);
  double *Base = scratch(Total);
  auto Take = [&](size_t Count) {
    double *R = Base;
    Base += Count;
    return R;
  };
  double *Wt = Take(WtN), *Rt = Take(RtN), *Bias = Take(BN), *RtH = Take(RtHN),
         *RBH = Take(RBHN), *X = Take(XN), *Peep = Take(PN), *Gx = Take(GxN),
         *Gh = Take((size_t)GHp), *Rg = Take((size_t)Hp),
         *Zg = Take((size_t)Hp), *NewH = Take((size_t)Hp),
         *Hs = Take((size_t)Hp), *Cs = Take((size_t)Hp),
         *Tmp = Take((size_t)Hp);
  auto Dbl = [](E V) { return convertElement<double>(V); };

  // Transposed, zero-padded weights and biases (zeros where B is absent:
  // the sums then start at 0.0, as without bias).
  std::fill_n(Wt, WtN + RtN + BN + RtHN + RBHN, 0.0);
  for (int64_t Dir = 0; Dir < ND; ++Dir) {
    for (int64_t Row = 0; Row < GH; ++Row) {
      for (int64_t J = 0; J < I; ++J)
        Wt[(Dir * I + J) * GHp + Row] = Dbl(WE[(Dir * GH + Row) * I + J]);
      for (int64_t J = 0; J < H; ++J)
        Rt[(Dir * H + J) * GHp + Row] = Dbl(RE[(Dir * GH + Row) * H + J]);
      if (BE) {
        Bias[Dir * 2 * GHp + Row] = Dbl(BE[Dir * 2 * GH + Row]);
        Bias[(Dir * 2 + 1) * GHp + Row] = Dbl(BE[Dir * 2 * GH + GH + Row]);
      }
    }
    if (GruReset)
      for (int64_t Row = 0; Row < H; ++Row) {
        for (int64_t J = 0; J < H; ++J)
          RtH[(Dir * H + J) * Hp + Row] = Rt[(Dir * H + J) * GHp + 2 * H + Row];
        RBH[Dir * Hp + Row] = Bias[(Dir * 2 + 1) * GHp + 2 * H + Row];
      }
  }
  for (size_t J = 0; J < XN; ++J)
    X[J] = Dbl(XE[J]);
  for (size_t J = 0; J < PN; ++J)
    Peep[J] = Dbl(PE[J]);

  // Element offsets of x[t, b, :], y[t, dir, b, :] and h[dir, b, :] for both
  // layouts.
  auto XOff = [&](int64_t T, int64_t Bi) {
    return P.Layout ? (Bi * S + T) * I : (T * N + Bi) * I;
  };
  auto YOff = [&](int64_t T, int64_t Dir, int64_t Bi) {
    return P.Layout ? ((Bi * S + T) * ND + Dir) * H
                    : ((T * ND + Dir) * N + Bi) * H;
  };
  auto HOff = [&](int64_t Dir, int64_t Bi) {
    return P.Layout ? (Bi * ND + Dir) * H : (Dir * N + Bi) * H;
  };
  E *Y = Out[0].data<E>(), *YH = Out[1].data<E>();
  E *YC = K == RnnKind::Lstm ? Out[2].data<E>() : nullptr;
  const Tensor &LensT = In[4];
  bool HasLens = LensT.numel() > 0;
  // Steps past a sequence's end are zero.
  if (HasLens)
    std::fill_n(Y, S * ND * N * H, convertElement<E>(0.0));

  size_t NA = numActivations(K);
  for (int64_t Dir = 0; Dir < ND; ++Dir) {
    bool Rev = ND == 2 ? Dir == 1 : P.Reverse;
    const double *WtD = Wt + Dir * I * GHp;
    const double *WB = Bias + Dir * 2 * GHp;
    const Activation *Act = P.Acts + (size_t)Dir * NA;
    Recurrence C;
    C.H = H, C.GHp = GHp, C.Clip = P.Clip, C.InputForget = P.InputForget,
    C.LinearBeforeReset = P.LinearBeforeReset, C.Gx = Gx,
    C.Rt = Rt + Dir * H * GHp, C.RB = WB + GHp, C.RtH = RtH + Dir * H * Hp,
    C.RBH = RBH + Dir * Hp, C.Peep = PE ? Peep + Dir * 3 * H : nullptr,
    C.Gh = Gh, C.Tmp = Tmp, C.Rg = Rg, C.Zg = Zg, C.NewH = NewH, C.Hs = Hs,
    C.Cs = Cs;
    for (int64_t Bi = 0; Bi < N; ++Bi) {
      std::fill_n(Hs, Hp, 0.0);
      std::fill_n(Cs, Hp, 0.0);
      if (H0E)
        for (int64_t J = 0; J < H; ++J)
          Hs[J] = Dbl(H0E[HOff(Dir, Bi) + J]);
      if (C0E)
        for (int64_t J = 0; J < H; ++J)
          Cs[J] = Dbl(C0E[HOff(Dir, Bi) + J]);
      int64_t Len = HasLens ? indexElement(LensT, Bi) : S;
      C.Len = Len;
      // W x_t + Wb does not depend on the state: all steps first.
      for (int64_t Step = 0; Step < Len; ++Step) {
        int64_t T = Rev ? Len - 1 - Step : Step;
        accumulateColumns<false>(WB, WtD, GHp, I, X + XOff(T, Bi), nullptr, GHp,
                                 Gx + Step * GHp);
      }
      auto Emit = [&](int64_t Step, const double *HV) {
        int64_t T = Rev ? Len - 1 - Step : Step;
        E *YT = Y + YOff(T, Dir, Bi);
        for (int64_t J = 0; J < H; ++J)
          YT[J] = convertElement<E>(HV[J]);
      };
      bool Defaults = defaultActivations(K, P, Dir);
      if (Defaults && K == RnnKind::Rnn)
        recur<K>(C, TanhFn(), TanhFn(), TanhFn(), Emit);
      else if (Defaults)
        recur<K>(C, SigmoidFn(), TanhFn(), TanhFn(), Emit);
      else
        recur<K>(C, Act[0], Act[NA > 1 ? 1 : 0], Act[NA - 1], Emit);
      for (int64_t J = 0; J < H; ++J)
        YH[HOff(Dir, Bi) + J] = convertElement<E>(Hs[J]);
      if (YC)
        for (int64_t J = 0; J < H; ++J)
          YC[HOff(Dir, Bi) + J] = convertElement<E>(Cs[J]);
    }
  }
}

template <RnnKind K>
void rnnKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  RnnParams P = rnnParams(K, A);
  RnnDims D = checkRnn(K, In, P);
  dispatchDType(In[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float))
      rnnTyped<K, E>(In, Out, P, D);
  });
  releaseLargeScratch();
}

/// lstm_stack: the reference lstm, layer after layer.
void lstmStackKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &) {
  size_t Layers = stackLayers(In);
  Tensor X = In[0];
  for (size_t L = 0; L < Layers; ++L) {
    std::vector<Tensor> LayerOut(
        Out.begin() + (long)(lstm_stack::kOutputsPerLayer * L),
        Out.begin() + (long)(lstm_stack::kOutputsPerLayer * (L + 1)));
    rnnKernel<RnnKind::Lstm>(stackLayerInputs(In, L, X), LayerOut, Attrs{});
    X = stackLayerX(LayerOut[0]);
  }
}

} // namespace

RIVET_REGISTER_KERNEL("lstm", rnnKernel<RnnKind::Lstm>, rnnShape<RnnKind::Lstm>,
                      false);
RIVET_REGISTER_KERNEL("lstm_stack", lstmStackKernel, lstmStackOutputs, false);
RIVET_REGISTER_KERNEL("gru", rnnKernel<RnnKind::Gru>, rnnShape<RnnKind::Gru>,
                      false);
RIVET_REGISTER_KERNEL("rnn", rnnKernel<RnnKind::Rnn>, rnnShape<RnnKind::Rnn>,
                      false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

namespace {
std::vector<AttrSpec> recurrentAttrs(const char *Extra, const char *ExtraDoc) {
  std::vector<AttrSpec> S = {
      {"hidden_size", AttrKind::Int, false, "hidden units (default from r)"},
      {"direction", AttrKind::String, false,
       "forward, reverse or bidirectional", "forward"},
      {"activations", AttrKind::Strings, false,
       "activation functions per direction (ONNX names)"},
      {"activation_alpha", AttrKind::Floats, false, "alphas, in order"},
      {"activation_beta", AttrKind::Floats, false, "betas, in order"},
      {"clip", AttrKind::Float, false, "clip gate pre-activations to [-c, c]"},
      {"layout", AttrKind::Int, false, "0: [seq, batch, ...], 1: batch first",
       0},
  };
  if (Extra)
    S.push_back({Extra, AttrKind::Int, false, ExtraDoc, 0});
  return S;
}
} // namespace
RIVET_REGISTER_ATTRS("lstm",
                     recurrentAttrs("input_forget",
                                    "1: couple the input and forget gates"));
RIVET_REGISTER_ATTRS(
    "gru",
    recurrentAttrs("linear_before_reset",
                   "1: apply the reset gate after the recurrent product"));
RIVET_REGISTER_ATTRS("rnn", recurrentAttrs(nullptr, nullptr));

} // namespace rivet::kernels
