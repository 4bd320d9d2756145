//===- rnn_exact_test.cc - lstm, gru and rnn results pinned bit for bit ---===//
//
// The recurrent kernels are optimized (transposed weights, SIMD rows, hoisted
// input products) under one contract: their results are bit-identical to the
// plain algorithm below, which is the specification. Every gate
// pre-activation is its bias (or 0.0) plus W[row][j] * x[j] for j = 0, 1,
// ... in that order, and separately R h the same way; GRU's reset product is
// sum of (R[row][l] * r[l]) * h[l]; everything in double, stored at the
// end. A change of summation order, precision or formula fails here.
//
//===----------------------------------------------------------------------===//
#include "RecurrentCases.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace rivet;
using namespace rivet::test;

namespace {

/// The kernels' tanh (from one exp), written out again.
double specTanh(double X) {
  double A = std::fabs(X);
  if (A < 1e-4)
    return X * (1 - X * X / 3);
  return std::copysign(1 - 2 / (std::exp(2 * A) + 1), X);
}

/// One activation function of the ONNX list with its alpha and beta.
struct SpecActivation {
  std::string Name;
  double Alpha = 0, Beta = 0;

  double operator()(double X) const {
    if (Name == "Relu")
      return std::max(X, 0.0);
    if (Name == "Tanh")
      return specTanh(X);
    if (Name == "Sigmoid")
      return 1 / (1 + std::exp(-X));
    if (Name == "Affine")
      return Alpha * X + Beta;
    if (Name == "LeakyRelu")
      return X >= 0 ? X : Alpha * X;
    if (Name == "ThresholdedRelu")
      return X > Alpha ? X : 0;
    if (Name == "ScaledTanh")
      return Alpha * specTanh(Beta * X);
    if (Name == "HardSigmoid")
      return std::clamp(Alpha * X + Beta, 0.0, 1.0);
    if (Name == "Elu")
      return X >= 0 ? X : Alpha * (std::exp(X) - 1);
    if (Name == "Softsign")
      return X / (1 + std::fabs(X));
    if (Name == "Softplus")
      return std::log1p(std::exp(X));
    ADD_FAILURE() << "unknown activation " << Name;
    return X;
  }
};

/// The activations of all directions, alpha and beta consumed in order.
std::vector<SpecActivation> specActivations(const Case &C) {
  std::vector<std::string> Names = C.Acts;
  if (Names.empty()) {
    std::vector<std::string> D =
        C.Kind == "lstm"  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
        : C.Kind == "gru" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                          : std::vector<std::string>{"Tanh"};
    for (int64_t I = 0; I < C.numDir(); ++I)
      Names.insert(Names.end(), D.begin(), D.end());
  } else if (C.numDir() == 2 && Names.size() == C.actsPerDir()) {
    std::vector<std::string> Copy = Names;
    Names.insert(Names.end(), Copy.begin(), Copy.end());
  }
  size_t AI = 0, BI = 0;
  auto TakeA = [&](double D) {
    return AI < C.Alphas.size() ? C.Alphas[AI++] : D;
  };
  auto TakeB = [&](double D) {
    return BI < C.Betas.size() ? C.Betas[BI++] : D;
  };
  std::vector<SpecActivation> R;
  for (const std::string &N : Names) {
    SpecActivation A{N};
    if (N == "Affine")
      A.Alpha = TakeA(1), A.Beta = TakeB(0);
    else if (N == "LeakyRelu")
      A.Alpha = TakeA(0.01);
    else if (N == "ThresholdedRelu" || N == "Elu")
      A.Alpha = TakeA(1);
    else if (N == "ScaledTanh")
      A.Alpha = TakeA(1), A.Beta = TakeB(1);
    else if (N == "HardSigmoid")
      A.Alpha = TakeA(0.2), A.Beta = TakeB(0.5);
    R.push_back(A);
  }
  return R;
}

/// The outputs Y, Y_h[, Y_c] in double, computed plainly.
std::vector<std::vector<double>> specRun(const Case &C) {
  int64_t S = C.Seq, N = C.Batch, I = C.Input, H = C.Hidden, G = C.gates(),
          ND = C.numDir();
  std::vector<SpecActivation> Acts = specActivations(C);
  auto XOff = [&](int64_t T, int64_t Bi) {
    return C.Layout ? (Bi * S + T) * I : (T * N + Bi) * I;
  };
  auto YOff = [&](int64_t T, int64_t Dir, int64_t Bi) {
    return C.Layout ? ((Bi * S + T) * ND + Dir) * H
                    : ((T * ND + Dir) * N + Bi) * H;
  };
  auto HOff = [&](int64_t Dir, int64_t Bi) {
    return C.Layout ? (Bi * ND + Dir) * H : (Dir * N + Bi) * H;
  };
  auto Clip = [&](double V) {
    return C.Clip > 0 ? std::clamp(V, -C.Clip, C.Clip) : V;
  };
  std::vector<double> Y((size_t)(S * ND * N * H), 0.0),
      YH((size_t)(ND * N * H), 0.0), YC = YH;
  size_t NA = C.actsPerDir();
  for (int64_t Dir = 0; Dir < ND; ++Dir) {
    bool Rev = ND == 2 ? Dir == 1 : C.Direction == "reverse";
    const SpecActivation *Act = Acts.data() + (size_t)Dir * NA;
    for (int64_t Bi = 0; Bi < N; ++Bi) {
      std::vector<double> Hs((size_t)H, 0.0), Cs((size_t)H, 0.0);
      for (int64_t J = 0; J < H; ++J) {
        if (!C.H0.empty())
          Hs[(size_t)J] = C.H0[(size_t)(HOff(Dir, Bi) + J)];
        if (!C.C0.empty())
          Cs[(size_t)J] = C.C0[(size_t)(HOff(Dir, Bi) + J)];
      }
      int64_t Len = C.Lens.empty() ? S : C.Lens[(size_t)Bi];
      for (int64_t Step = 0; Step < Len; ++Step) {
        int64_t T = Rev ? Len - 1 - Step : Step;
        // Row Row of W x + Wb and of R h + Rb.
        auto WRow = [&](int64_t Row) {
          double Sum = C.B.empty() ? 0.0 : C.B[(size_t)(Dir * 2 * G * H + Row)];
          for (int64_t J = 0; J < I; ++J)
            Sum += C.W[(size_t)((Dir * G * H + Row) * I + J)] *
                   C.X[(size_t)(XOff(T, Bi) + J)];
          return Sum;
        };
        auto RRow = [&](int64_t Row) {
          double Sum =
              C.B.empty() ? 0.0 : C.B[(size_t)(Dir * 2 * G * H + G * H + Row)];
          for (int64_t J = 0; J < H; ++J)
            Sum += C.R[(size_t)((Dir * G * H + Row) * H + J)] * Hs[(size_t)J];
          return Sum;
        };
        std::vector<double> NewH((size_t)H);
        if (C.Kind == "lstm") {
          // Gates i, o, f, c; peepholes i, o, f.
          const double *PD = C.P.empty() ? nullptr : C.P.data() + Dir * 3 * H;
          for (int64_t J = 0; J < H; ++J) {
            auto Pre = [&](int64_t Gate) {
              return WRow(Gate * H + J) + RRow(Gate * H + J);
            };
            double Cv = Cs[(size_t)J];
            double IG = Act[0](Clip(Pre(0) + (PD ? PD[J] * Cv : 0)));
            double FG =
                C.InputForget
                    ? 1 - IG
                    : Act[0](Clip(Pre(2) + (PD ? PD[2 * H + J] * Cv : 0)));
            double CG = Act[1](Clip(Pre(3)));
            double NC = FG * Cv + IG * CG;
            double OG = Act[0](Clip(Pre(1) + (PD ? PD[H + J] * NC : 0)));
            Cs[(size_t)J] = NC;
            NewH[(size_t)J] = OG * Act[2](NC);
          }
        } else if (C.Kind == "gru") {
          // Gates z, r, h.
          std::vector<double> Rg((size_t)H);
          for (int64_t J = 0; J < H; ++J)
            Rg[(size_t)J] = Act[0](Clip(WRow(H + J) + RRow(H + J)));
          for (int64_t J = 0; J < H; ++J) {
            double Z = Act[0](Clip(WRow(J) + RRow(J)));
            double Pre;
            if (C.LinearBeforeReset) {
              Pre = WRow(2 * H + J) + Rg[(size_t)J] * RRow(2 * H + J);
            } else {
              double Sum =
                  C.B.empty() ? 0.0 : C.B[(size_t)(Dir * 6 * H + 5 * H + J)];
              for (int64_t L = 0; L < H; ++L)
                Sum += C.R[(size_t)((Dir * 3 * H + 2 * H + J) * H + L)] *
                       Rg[(size_t)L] * Hs[(size_t)L];
              Pre = WRow(2 * H + J) + Sum;
            }
            double HT = Act[1](Clip(Pre));
            NewH[(size_t)J] = (1 - Z) * HT + Z * Hs[(size_t)J];
          }
        } else {
          for (int64_t J = 0; J < H; ++J)
            NewH[(size_t)J] = Act[0](Clip(WRow(J) + RRow(J)));
        }
        Hs = NewH;
        std::copy(Hs.begin(), Hs.end(), Y.begin() + YOff(T, Dir, Bi));
      }
      std::copy(Hs.begin(), Hs.end(), YH.begin() + HOff(Dir, Bi));
      std::copy(Cs.begin(), Cs.end(), YC.begin() + HOff(Dir, Bi));
    }
  }
  std::vector<std::vector<double>> R = {Y, YH};
  if (C.Kind == "lstm")
    R.push_back(YC);
  return R;
}

/// Whether Got holds exactly Want stored in Got's dtype (bit for bit; any
/// NaN matches any NaN).
bool sameBits(const Tensor &Got, const std::vector<double> &Want,
              size_t &Mismatch) {
  for (size_t J = 0; J < Want.size(); ++J) {
    bool Same;
    if (Got.dtype() == DType::Float64) {
      double G = Got.data<double>()[J];
      Same = std::memcmp(&G, &Want[J], sizeof(G)) == 0 ||
             (std::isnan(G) && std::isnan(Want[J]));
    } else {
      float G = Got.data<float>()[J], W = (float)Want[J];
      Same = std::memcmp(&G, &W, sizeof(G)) == 0 ||
             (std::isnan(G) && std::isnan(W));
    }
    if (!Same) {
      Mismatch = J;
      return false;
    }
  }
  return true;
}

/// Expects the kernel's outputs for C to be the spec's, bit for bit.
void expectMatchesSpec(const Case &C) {
  SCOPED_TRACE(describe(C));
  std::vector<std::vector<double>> Want = specRun(C);
  std::vector<Tensor> Got = kernelRun(C);
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t O = 0; O < Want.size(); ++O) {
    ASSERT_EQ(Got[O].numel(), (int64_t)Want[O].size()) << "output " << O;
    size_t At = 0;
    EXPECT_TRUE(sameBits(Got[O], Want[O], At))
        << "output " << O << " element " << At << ": got "
        << Got[O].elementAsDouble((int64_t)At) << ", want " << Want[O][At];
  }
}

TEST(RnnExact, RandomCasesMatchThePlainAlgorithmBitForBit) {
  std::mt19937 Rng(20261123);
  for (int Trial = 0; Trial < 600; ++Trial)
    expectMatchesSpec(randomCase(Rng));
}

/// Special and tiny pre-activations in every lane position: W scales one
/// input exactly (by 1, -1, 0.5, 2, -4) into five hidden units, R is zero,
/// so each step's gates see +-x, x/2, 2x and -4x (tanh switches to its
/// polynomial below 1e-4; zeros keep their sign). NaN comes last: from
/// then on 0 * NaN poisons R h.
TEST(RnnExact, SpecialValuesMatchThePlainAlgorithm) {
  std::vector<double> Xs = {0.0,   -0.0,     1e-30,     -1e-9, 9.9e-5, 1e-4,
                            -1e-4, 5e-5,     -3e-5,     0.001, 0.1,    -0.25,
                            0.5,   1.0,      -3.0,      9.0,   20.0,   -1000,
                            1e30,  INFINITY, -INFINITY, NAN};
  for (const char *Kind : {"rnn", "lstm", "gru"}) {
    Case C;
    C.Kind = Kind;
    C.Seq = (int64_t)Xs.size(), C.Hidden = 5;
    int64_t GH = C.gates() * C.Hidden;
    C.X.clear();
    for (double X : Xs)
      C.X.push_back((double)(float)X);
    for (int64_t Row = 0; Row < GH; ++Row)
      C.W.push_back(std::vector<double>{1, -1, 0.5, 2, -4}[(size_t)(Row % 5)]);
    C.R.assign((size_t)(GH * C.Hidden), 0.0);
    expectMatchesSpec(C);
  }
}

} // namespace
