//===- RNN.cc - lstm, gru and rnn (ONNX recurrent layers) -----------------===//
//
// One reference kernel per layer with full ONNX semantics: forward, reverse
// and bidirectional; activation lists with alpha/beta; clip; layout 0
// ([seq, batch, ...]) and 1 ([batch, seq, ...]); optional inputs (B,
// sequence_lens, initial_h, initial_c, P) are absent when they have zero
// elements. Each step is a plain matrix-vector product in double.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace rivet::kernels {
namespace {

enum class RnnKind { Lstm, Gru, Rnn };

const char *kindOp(RnnKind K) {
  return K == RnnKind::Lstm ? "lstm" : K == RnnKind::Gru ? "gru" : "rnn";
}
int64_t numGates(RnnKind K) {
  return K == RnnKind::Lstm ? 4 : K == RnnKind::Gru ? 3 : 1;
}
size_t numInputs(RnnKind K) { return K == RnnKind::Lstm ? 8 : 6; }

/// tanh in double precision from one exp: libm's tanh goes through expm1
/// and took a third of a small LSTM's time. Relative error below 1e-11
/// (cancellation in 1 - 2/(e^2x + 1) loses at most ~20 bits for |x| >=
/// 1e-4; below, x - x^3/3 is exact to double precision), far inside the
/// float results these kernels produce.
double tanhViaExp(double X) {
  double A = std::fabs(X);
  if (A < 1e-4)
    return X * (1 - X * X / 3);
  return std::copysign(1 - 2 / (std::exp(2 * A) + 1), X);
}

/// One activation function with its alpha and beta.
struct Activation {
  enum Fn {
    Relu,
    Tanh,
    Sigmoid,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    HardSigmoid,
    Elu,
    Softsign,
    Softplus
  } F;
  double Alpha = 0, Beta = 0;

  double operator()(double X) const {
    switch (F) {
    case Relu: return std::max(X, 0.0);
    case Tanh: return tanhViaExp(X);
    case Sigmoid: return 1 / (1 + std::exp(-X));
    case Affine: return Alpha * X + Beta;
    case LeakyRelu: return X >= 0 ? X : Alpha * X;
    case ThresholdedRelu: return X > Alpha ? X : 0;
    case ScaledTanh: return Alpha * tanhViaExp(Beta * X);
    case HardSigmoid: return std::clamp(Alpha * X + Beta, 0.0, 1.0);
    case Elu: return X >= 0 ? X : Alpha * (std::exp(X) - 1);
    case Softsign: return X / (1 + std::fabs(X));
    case Softplus: return std::log1p(std::exp(X));
    }
    return X;
  }
};

struct RnnParams {
  int64_t NumDir = 1;
  bool Reverse = false; // forward-only vs reverse-only
  int64_t Hidden = 0;   // 0: from R's shape
  double Clip = 0;      // 0: none
  bool Layout = false;
  bool InputForget = false;
  bool LinearBeforeReset = false;
  std::vector<Activation> Acts; // per direction: f, g[, h]
};

std::vector<Activation> parseActivations(const char *Op, const Attrs &A,
                                         RnnKind K, int64_t NumDir) {
  std::vector<std::string> Names;
  if (A.has("activations"))
    Names = withOp(Op, [&] { return A.getStrings("activations"); });
  size_t Per = K == RnnKind::Lstm ? 3 : K == RnnKind::Gru ? 2 : 1;
  if (Names.empty()) {
    std::vector<std::string> D =
        K == RnnKind::Lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
        : K == RnnKind::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                            : std::vector<std::string>{"Tanh"};
    for (int64_t I = 0; I < NumDir; ++I)
      Names.insert(Names.end(), D.begin(), D.end());
  } else if (NumDir == 2 && Names.size() == Per) {
    // One list for both directions.
    std::vector<std::string> Copy = Names;
    Names.insert(Names.end(), Copy.begin(), Copy.end());
  }
  if (Names.size() != Per * (size_t)NumDir)
    fail("{}: expected {} activations ({} per direction), got {}", Op,
         Per * (size_t)NumDir, Per, Names.size());
  std::vector<double> Alphas, Betas;
  if (A.has("activation_alpha"))
    Alphas = withOp(Op, [&] { return A.getFloats("activation_alpha"); });
  if (A.has("activation_beta"))
    Betas = withOp(Op, [&] { return A.getFloats("activation_beta"); });
  size_t AI = 0, BI = 0;
  std::vector<Activation> R;
  for (const std::string &N : Names) {
    std::string L = N;
    for (char &Ch : L)
      Ch = (char)std::tolower((unsigned char)Ch);
    Activation Act;
    // Alpha and beta are consumed in order by the functions that use them.
    auto TakeA = [&](double D) {
      return AI < Alphas.size() ? Alphas[AI++] : D;
    };
    auto TakeB = [&](double D) { return BI < Betas.size() ? Betas[BI++] : D; };
    if (L == "relu")
      Act.F = Activation::Relu;
    else if (L == "tanh")
      Act.F = Activation::Tanh;
    else if (L == "sigmoid")
      Act.F = Activation::Sigmoid;
    else if (L == "affine") {
      Act.F = Activation::Affine;
      Act.Alpha = TakeA(1);
      Act.Beta = TakeB(0);
    } else if (L == "leakyrelu") {
      Act.F = Activation::LeakyRelu;
      Act.Alpha = TakeA(0.01);
    } else if (L == "thresholdedrelu") {
      Act.F = Activation::ThresholdedRelu;
      Act.Alpha = TakeA(1);
    } else if (L == "scaledtanh") {
      Act.F = Activation::ScaledTanh;
      Act.Alpha = TakeA(1);
      Act.Beta = TakeB(1);
    } else if (L == "hardsigmoid") {
      Act.F = Activation::HardSigmoid;
      Act.Alpha = TakeA(0.2);
      Act.Beta = TakeB(0.5);
    } else if (L == "elu") {
      Act.F = Activation::Elu;
      Act.Alpha = TakeA(1);
    } else if (L == "softsign")
      Act.F = Activation::Softsign;
    else if (L == "softplus")
      Act.F = Activation::Softplus;
    else
      fail("{}: unknown activation function '{}'", Op, N);
    R.push_back(Act);
  }
  return R;
}

RnnParams rnnParams(RnnKind K, const Attrs &A) {
  const char *Op = kindOp(K);
  RnnParams P;
  std::string Dir =
      withOp(Op, [&] { return A.getString("direction", "forward"); });
  if (Dir == "forward")
    P.NumDir = 1;
  else if (Dir == "reverse")
    P.NumDir = 1, P.Reverse = true;
  else if (Dir == "bidirectional")
    P.NumDir = 2;
  else
    fail("{}: direction must be forward, reverse or bidirectional, got '{}'",
         Op, Dir);
  P.Hidden = attrInt(Op, A, "hidden_size", 0);
  if (P.Hidden < 0)
    fail("{}: hidden_size must be positive, got {}", Op, P.Hidden);
  if (A.has("clip")) {
    P.Clip = withOp(Op, [&] { return A.getFloat("clip"); });
    if (!(P.Clip > 0))
      fail("{}: clip must be positive, got {}", Op, P.Clip);
  }
  P.Layout = attrFlag(Op, A, "layout", false);
  P.InputForget = attrFlag(Op, A, "input_forget", false);
  P.LinearBeforeReset = attrFlag(Op, A, "linear_before_reset", false);
  P.Acts = parseActivations(Op, A, K, P.NumDir);
  return P;
}

/// Checked extents of a call.
struct RnnDims {
  int64_t Seq, Batch, Input, Hidden, NumDir, Gates;
};

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
  if (W.shape() != Shape{D.NumDir, GH, D.Input})
    fail("{}: w must be {}, got {}", Op, shapeToString({D.NumDir, GH, D.Input}),
         shapeToString(W.shape()));
  if (R.shape() != Shape{D.NumDir, GH, D.Hidden})
    fail("{}: r must be {}, got {}", Op,
         shapeToString({D.NumDir, GH, D.Hidden}), shapeToString(R.shape()));
  auto CheckOpt = [&](size_t I, const char *Name, const Shape &Want,
                      bool Float) {
    const Tensor &T = In[I];
    if (T.numel() == 0 && T.shape() != Want)
      return;
    if (Float)
      checkSameDType(Op, "x", X, Name, T);
    else
      checkDType(Op, Name, T.dtype(), DTypeClass::Index);
    if (T.shape() != Want)
      fail("{}: {} must be {}, got {}", Op, Name, shapeToString(Want),
           shapeToString(T.shape()));
  };
  Shape HShape = P.Layout ? Shape{D.Batch, D.NumDir, D.Hidden}
                          : Shape{D.NumDir, D.Batch, D.Hidden};
  CheckOpt(3, "b", {D.NumDir, 2 * GH}, true);
  CheckOpt(4, "sequence_lens", {D.Batch}, false);
  CheckOpt(5, "initial_h", HShape, true);
  if (K == RnnKind::Lstm) {
    CheckOpt(6, "initial_c", HShape, true);
    CheckOpt(7, "p", {D.NumDir, 3 * D.Hidden}, true);
  }
  if (In[4].numel() > 0 && In[4].hasData())
    for (int64_t L : In[4].toIntVector())
      if (L < 0 || L > D.Seq)
        fail("{}: sequence length {} is out of range [0, {}]", Op, L, D.Seq);
  return D;
}

template <RnnKind K>
std::vector<TensorMeta> rnnShape(const std::vector<Tensor> &In,
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

template <RnnKind K>
void rnnKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  RnnParams P = rnnParams(K, A);
  RnnDims D = checkRnn(K, In, P);
  int64_t S = D.Seq, N = D.Batch, I = D.Input, H = D.Hidden, G = D.Gates;
  std::vector<double> X = In[0].toDoubleVector(), W = In[1].toDoubleVector(),
                      R = In[2].toDoubleVector();
  auto Opt = [&](size_t Idx) {
    return Idx < In.size() && In[Idx].numel() > 0 ? In[Idx].toDoubleVector()
                                                  : std::vector<double>{};
  };
  std::vector<double> B = Opt(3), H0 = Opt(5),
                      C0 = K == RnnKind::Lstm ? Opt(6) : std::vector<double>{},
                      Peep =
                          K == RnnKind::Lstm ? Opt(7) : std::vector<double>{};
  std::vector<int64_t> Lens((size_t)N, S);
  if (In[4].numel() > 0)
    Lens = In[4].toIntVector();
  // Element offsets of x[t, b, :], y[t, dir, b, :] and h[dir, b, :] for both
  // layouts.
  auto XOff = [&](int64_t T, int64_t Bi) {
    return P.Layout ? (Bi * S + T) * I : (T * N + Bi) * I;
  };
  auto YOff = [&](int64_t T, int64_t Dir, int64_t Bi) {
    return P.Layout ? ((Bi * S + T) * D.NumDir + Dir) * H
                    : ((T * D.NumDir + Dir) * N + Bi) * H;
  };
  auto HOff = [&](int64_t Dir, int64_t Bi) {
    return P.Layout ? (Bi * D.NumDir + Dir) * H : (Dir * N + Bi) * H;
  };
  std::vector<double> Y((size_t)(S * D.NumDir * N * H), 0.0);
  std::vector<double> YH((size_t)(D.NumDir * N * H), 0.0), YC = YH;
  size_t NA = P.Acts.size() / (size_t)D.NumDir;
  auto Clip = [&](double V) {
    return P.Clip > 0 ? std::clamp(V, -P.Clip, P.Clip) : V;
  };
  std::vector<double> Gx((size_t)(G * H)), Gh((size_t)(G * H));
  std::vector<double> NewH((size_t)H), Rg((size_t)H), Zg((size_t)H);
  for (int64_t Dir = 0; Dir < D.NumDir; ++Dir) {
    bool Rev = D.NumDir == 2 ? Dir == 1 : P.Reverse;
    const double *WD = W.data() + Dir * G * H * I;
    const double *RD = R.data() + Dir * G * H * H;
    const double *WB = B.empty() ? nullptr : B.data() + Dir * 2 * G * H;
    const double *RB = WB ? WB + G * H : nullptr;
    const double *PD = Peep.empty() ? nullptr : Peep.data() + Dir * 3 * H;
    const Activation *Act = P.Acts.data() + (size_t)Dir * NA;
    for (int64_t Bi = 0; Bi < N; ++Bi) {
      std::vector<double> Hs((size_t)H, 0.0), Cs((size_t)H, 0.0);
      if (!H0.empty())
        std::copy_n(H0.data() + HOff(Dir, Bi), H, Hs.begin());
      if (!C0.empty())
        std::copy_n(C0.data() + HOff(Dir, Bi), H, Cs.begin());
      int64_t Len = Lens[(size_t)Bi];
      for (int64_t Step = 0; Step < Len; ++Step) {
        int64_t T = Rev ? Len - 1 - Step : Step;
        const double *XT = X.data() + XOff(T, Bi);
        // Gx = W x + Wb, Gh = R h + Rb, per gate row.
        for (int64_t Row = 0; Row < G * H; ++Row) {
          double SX = WB ? WB[Row] : 0.0, SH = RB ? RB[Row] : 0.0;
          const double *WR = WD + Row * I, *RR = RD + Row * H;
          for (int64_t J = 0; J < I; ++J)
            SX += WR[J] * XT[J];
          for (int64_t J = 0; J < H; ++J)
            SH += RR[J] * Hs[(size_t)J];
          Gx[(size_t)Row] = SX;
          Gh[(size_t)Row] = SH;
        }
        if constexpr (K == RnnKind::Lstm) {
          // Gate order i, o, f, c; peepholes i, o, f.
          for (int64_t J = 0; J < H; ++J) {
            auto Pre = [&](int64_t Gate) {
              return Gx[(size_t)(Gate * H + J)] + Gh[(size_t)(Gate * H + J)];
            };
            double C = Cs[(size_t)J];
            double IG = Act[0](Clip(Pre(0) + (PD ? PD[J] * C : 0)));
            double FG =
                P.InputForget
                    ? 1 - IG
                    : Act[0](Clip(Pre(2) + (PD ? PD[2 * H + J] * C : 0)));
            double CG = Act[1](Clip(Pre(3)));
            double NC = FG * C + IG * CG;
            double OG = Act[0](Clip(Pre(1) + (PD ? PD[H + J] * NC : 0)));
            Cs[(size_t)J] = NC;
            NewH[(size_t)J] = OG * Act[2](NC);
          }
        } else if constexpr (K == RnnKind::Gru) {
          // Gate order z, r, h.
          for (int64_t J = 0; J < H; ++J) {
            Zg[(size_t)J] = Act[0](Clip(Gx[(size_t)J] + Gh[(size_t)J]));
            Rg[(size_t)J] =
                Act[0](Clip(Gx[(size_t)(H + J)] + Gh[(size_t)(H + J)]));
          }
          for (int64_t J = 0; J < H; ++J) {
            double Pre;
            if (P.LinearBeforeReset) {
              Pre = Gx[(size_t)(2 * H + J)] +
                    Rg[(size_t)J] * Gh[(size_t)(2 * H + J)];
            } else {
              // R_h (r . h) + Rb_h, recomputed with the reset hidden state.
              double SH = RB ? RB[2 * H + J] : 0.0;
              const double *RR = RD + (2 * H + J) * H;
              for (int64_t L = 0; L < H; ++L)
                SH += RR[L] * Rg[(size_t)L] * Hs[(size_t)L];
              Pre = Gx[(size_t)(2 * H + J)] + SH;
            }
            double HT = Act[1](Clip(Pre));
            double Z = Zg[(size_t)J];
            NewH[(size_t)J] = (1 - Z) * HT + Z * Hs[(size_t)J];
          }
        } else {
          for (int64_t J = 0; J < H; ++J)
            NewH[(size_t)J] = Act[0](Clip(Gx[(size_t)J] + Gh[(size_t)J]));
        }
        Hs.swap(NewH);
        std::copy(Hs.begin(), Hs.end(), Y.begin() + YOff(T, Dir, Bi));
      }
      std::copy(Hs.begin(), Hs.end(), YH.begin() + HOff(Dir, Bi));
      std::copy(Cs.begin(), Cs.end(), YC.begin() + HOff(Dir, Bi));
    }
  }
  dispatchDType(In[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      auto Store = [](const std::vector<double> &V, Tensor &T) {
        E *P = T.data<E>();
        for (size_t J = 0; J < V.size(); ++J)
          P[J] = convertElement<E>(V[J]);
      };
      Store(Y, Out[0]);
      Store(YH, Out[1]);
      if (K == RnnKind::Lstm)
        Store(YC, Out[2]);
    }
  });
}

} // namespace

RIVET_REGISTER_KERNEL("lstm", rnnKernel<RnnKind::Lstm>, rnnShape<RnnKind::Lstm>,
                      false);
RIVET_REGISTER_KERNEL("gru", rnnKernel<RnnKind::Gru>, rnnShape<RnnKind::Gru>,
                      false);
RIVET_REGISTER_KERNEL("rnn", rnnKernel<RnnKind::Rnn>, rnnShape<RnnKind::Rnn>,
                      false);

} // namespace rivet::kernels
