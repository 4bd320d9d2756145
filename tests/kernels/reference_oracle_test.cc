//===- reference_oracle_test.cc - The reference anchors are an oracle -----===//
//
// The reference kernels of conv, dense, matmul and gemm are what the VM's
// oneDNN library kernels are tested against, so they must be right on their
// own and share nothing with oneDNN. Each is compared with its definition
// computed here in double precision, on random shapes (groups, dilations,
// strides, pads, 1 to 3 spatial dims; sizes that cross the GEMM's blocks),
// within the error bound of a float sum of that length; and runs with
// oneDNN enabled without calling it, while its library kernel does.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/DnnlConfig.h"
#include "kernels/cpu/BlockedDirectConv.h"
#include "kernels/dnnl/DnnlAnchors.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

namespace rivet::test {
namespace {

/// Unit roundoff of float32 and float64.
constexpr double U32 = 0x1p-24, U64 = 0x1p-53;

/// An exact value and a bound on the error of any float sum of its terms:
/// |sum - fl(sum)| <= Terms * u * Mass (Higham's gamma_n, n * u < 0.01)
/// for a sum of Terms products (and a bias) whose magnitudes add to Mass.
struct Exact {
  std::vector<double> value, mass;
  int64_t terms = 0;
};

/// Expects Got within the error bound of a float sum (u: unit roundoff) of
/// Want's terms, plus one rounding of the result.
void expectWithinBound(const Tensor &Got, const Exact &Want, double U,
                       const std::string &What) {
  ASSERT_EQ((size_t)Got.numel(), Want.value.size()) << What;
  int Bad = 0;
  for (int64_t I = 0; I < Got.numel() && Bad < 5; ++I) {
    double V = Want.value[(size_t)I];
    double Tol =
        (double)(Want.terms + 2) * U * Want.mass[(size_t)I] + U * std::abs(V);
    double G = Got.elementAsDouble(I);
    if (!(std::abs(G - V) <= Tol)) {
      ++Bad;
      ADD_FAILURE() << What << ": element " << I << " is " << G << ", want "
                    << V << " within " << Tol;
    }
  }
}

std::vector<double> values(const Tensor &T) { return T.toDoubleVector(); }

/// Calls Fn(Index) for every index of the shape S (odometer order).
template <typename F> void forEachIndex(const Shape &S, F &&Fn) {
  int64_t Total = numElements(S);
  std::vector<int64_t> Idx(S.size(), 0);
  for (int64_t Flat = 0; Flat < Total; ++Flat) {
    Fn(Idx);
    for (size_t D = S.size(); D-- > 0;) {
      if (++Idx[D] < S[D])
        break;
      Idx[D] = 0;
    }
  }
}

//===----------------------------------------------------------------------===//
// conv
//===----------------------------------------------------------------------===//

struct ConvCase {
  Shape x, w;
  std::vector<int64_t> strides, dilations, pads; // explicit pads
  int64_t group = 1;
  bool bias = false;

  std::string what() const {
    return fmt::format("x {} w {} strides {} dilations {} pads {} group {} "
                       "bias {}",
                       shapeToString(x), shapeToString(w),
                       fmt::join(strides, ","), fmt::join(dilations, ","),
                       fmt::join(pads, ","), group, bias);
  }
  Attrs attrs() const {
    return {{"strides", strides},
            {"dilations", dilations},
            {"pads", pads},
            {"group", group}};
  }
};

/// conv by its definition: y[n, m, o] = b[m] + the sum over the channels c
/// of m's group and the window positions k of w[m, c, k] * x[n, c', o * s -
/// pb + k * d] (0 outside x).
Exact convByDefinition(const ConvCase &C, const Tensor &X, const Tensor &W,
                       const Tensor *B) {
  size_t R = C.x.size() - 2;
  int64_t N = C.x[0], Ch = C.x[1], M = C.w[0], CG = Ch / C.group,
          MG = M / C.group;
  Shape In(C.x.begin() + 2, C.x.end()), K(C.w.begin() + 2, C.w.end()), Out;
  for (size_t D = 0; D < R; ++D)
    Out.push_back(
        (In[D] + C.pads[D] + C.pads[D + R] - (K[D] - 1) * C.dilations[D] - 1) /
            C.strides[D] +
        1);
  std::vector<double> XV = values(X), WV = values(W),
                      BV = B ? values(*B) : std::vector<double>();
  Exact E;
  E.terms = CG * numElements(K) + (B ? 1 : 0);
  Shape YS{N, M};
  YS.insert(YS.end(), Out.begin(), Out.end());
  forEachIndex(YS, [&](const std::vector<int64_t> &Y) {
    int64_t Nb = Y[0], Mi = Y[1], G = Mi / MG;
    double Sum = B ? BV[(size_t)Mi] : 0, Mass = B ? std::abs(Sum) : 0;
    for (int64_t Ci = 0; Ci < CG; ++Ci)
      forEachIndex(K, [&](const std::vector<int64_t> &Kp) {
        int64_t XOff = Nb * Ch + G * CG + Ci, WOff = Mi * CG + Ci;
        for (size_t D = 0; D < R; ++D) {
          int64_t P =
              Y[D + 2] * C.strides[D] - C.pads[D] + Kp[D] * C.dilations[D];
          if (P < 0 || P >= In[D])
            return;
          XOff = XOff * In[D] + P;
          WOff = WOff * K[D] + Kp[D];
        }
        double T = WV[(size_t)WOff] * XV[(size_t)XOff];
        Sum += T;
        Mass += std::abs(T);
      });
    E.value.push_back(Sum);
    E.mass.push_back(Mass);
  });
  return E;
}

void expectConvMatchesDefinition(std::mt19937 &G, const ConvCase &C,
                                 DType T = DType::Float32) {
  std::vector<Tensor> In{randomF32(G, C.x).cast(T), randomF32(G, C.w).cast(T)};
  if (C.bias)
    In.push_back(randomF32(G, {C.w[0]}).cast(T));
  Tensor Got = run("conv", In, C.attrs());
  expectWithinBound(
      Got, convByDefinition(C, In[0], In[1], C.bias ? &In[2] : nullptr),
      T == DType::Float64 ? 2 * U64 : U32, C.what());
}

TEST(ReferenceOracle, ConvOnRandomShapes) {
  std::mt19937 G(2027);
  auto Pick = [&](int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(G);
  };
  int Ran = 0;
  for (int Case = 0; Ran < 80 && Case < 2000; ++Case) {
    size_t R = (size_t)Pick(1, 3);
    int64_t Group = 1, CG = Pick(1, 5), MG = Pick(1, 7);
    int64_t Kind = Pick(0, 2); // plain, grouped, depthwise
    if (Kind == 1)
      Group = Pick(2, 3);
    if (Kind == 2) {
      Group = Pick(2, 6);
      CG = 1;
      MG = Pick(1, 2);
    }
    ConvCase C;
    C.x = {Pick(1, 2), CG * Group};
    C.w = {MG * Group, CG};
    C.group = Group;
    C.bias = Pick(0, 1);
    C.pads.assign(2 * R, 0);
    bool Ok = true;
    for (size_t D = 0; D < R; ++D) {
      int64_t In = Pick(R == 3 ? 3 : 4, R == 3 ? 7 : 13), K = Pick(1, 3);
      C.strides.push_back(Pick(1, 3));
      C.dilations.push_back(Pick(1, 2));
      C.pads[D] = Pick(0, 2);
      C.pads[D + R] = Pick(0, 2);
      C.x.push_back(In);
      C.w.push_back(K);
      Ok &= In + C.pads[D] + C.pads[D + R] >= (K - 1) * C.dilations.back() + 1;
    }
    if (!Ok)
      continue;
    ++Ran;
    expectConvMatchesDefinition(G, C);
  }
  EXPECT_EQ(Ran, 80);
}

// Shapes past the GEMM's blocks (256 window rows or output positions),
// output channels that fill no whole tile, and each special path: 1x1 with
// unit strides (x is its own im2col matrix), depthwise (row by row).
TEST(ReferenceOracle, ConvPastTheBlocksAndOnEachPath) {
  std::mt19937 G(11);
  std::vector<ConvCase> Cases = {
      {{1, 32, 20, 21}, {13, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, true},
      {{2, 16, 9, 11}, {10, 8, 3, 2}, {2, 1}, {2, 1}, {1, 0, 2, 1}, 2, true},
      {{1, 6, 15, 17}, {12, 1, 3, 3}, {1, 2}, {1, 1}, {1, 1, 1, 1}, 6, true},
      {{1, 7, 16, 16}, {7, 1, 5, 5}, {2, 2}, {2, 2}, {4, 4, 4, 4}, 7, false},
      {{1, 300, 7, 9}, {9, 300, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true},
      {{1, 8, 9, 9}, {5, 8, 1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1, false},
      {{1, 4, 5, 6, 7},
       {6, 4, 3, 3, 3},
       {1, 1, 1},
       {1, 1, 1},
       {1, 1, 1, 1, 1, 1},
       1,
       true},
      {{2, 3, 50}, {4, 3, 5}, {2}, {3}, {4, 0}, 1, true},
      {{1, 3, 40, 40}, {16, 3, 7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}, 1, true}};
  for (const ConvCase &C : Cases)
    expectConvMatchesDefinition(G, C);
  // float64 accumulates in double.
  expectConvMatchesDefinition(G, Cases[0], DType::Float64);
  expectConvMatchesDefinition(G, Cases[2], DType::Float64);
}

//===----------------------------------------------------------------------===//
// dense, matmul, gemm
//===----------------------------------------------------------------------===//

/// Y[i, j] = sum over l of A(i, l) * B(l, j), plus C(i, j) when given.
template <typename FA, typename FB, typename FC>
Exact productByDefinition(int64_t M, int64_t N, int64_t K, FA &&A, FB &&B,
                          FC &&C) {
  Exact E;
  E.terms = K + 1;
  for (int64_t I = 0; I < M; ++I)
    for (int64_t J = 0; J < N; ++J) {
      double S = C(I, J), Mass = std::abs(S);
      for (int64_t L = 0; L < K; ++L) {
        double T = A(I, L) * B(L, J);
        S += T;
        Mass += std::abs(T);
      }
      E.value.push_back(S);
      E.mass.push_back(Mass);
    }
  return E;
}

TEST(ReferenceOracle, DenseMatchesDefinition) {
  std::mt19937 G(3);
  for (auto [XS, N] : std::vector<std::pair<Shape, int64_t>>{{{1, 7}, 5},
                                                             {{9}, 3},
                                                             {{2, 3, 300}, 270},
                                                             {{37, 260}, 9},
                                                             {{5, 33}, 1}}) {
    int64_t K = XS.back(), M = numElements(XS) / K;
    for (DType T : {DType::Float32, DType::Float64}) {
      Tensor X = randomF32(G, XS).cast(T), W = randomF32(G, {N, K}).cast(T);
      std::vector<double> XV = values(X), WV = values(W);
      Exact E = productByDefinition(
          M, N, K, [&](int64_t I, int64_t L) { return XV[I * K + L]; },
          [&](int64_t L, int64_t J) { return WV[J * K + L]; },
          [](int64_t, int64_t) { return 0.0; });
      expectWithinBound(run("dense", {X, W}), E,
                        T == DType::Float64 ? 2 * U64 : U32,
                        fmt::format("dense x {} w ({}, {}) {}",
                                    shapeToString(XS), N, K, dtypeName(T)));
    }
  }
}

TEST(ReferenceOracle, MatMulMatchesDefinition) {
  std::mt19937 G(5);
  // a and b with NumPy's broadcast of batch axes and rank-1 operands.
  std::vector<std::pair<Shape, Shape>> Cases = {
      {{3, 4}, {4, 5}},           {{4}, {4, 3}},    {{3, 4}, {4}},
      {{2, 1, 3, 4}, {5, 4, 6}},  {{7}, {3, 7, 2}}, {{41, 300}, {300, 270}},
      {{2, 17, 33}, {1, 33, 260}}};
  for (const auto &[SA, SB] : Cases) {
    Shape A2 = SA.size() == 1 ? Shape{1, SA[0]} : SA;
    Shape B2 = SB.size() == 1 ? Shape{SB[0], 1} : SB;
    int64_t M = A2[A2.size() - 2], K = A2.back(), N = B2.back();
    Shape BA(A2.begin(), A2.end() - 2), BB(B2.begin(), B2.end() - 2);
    Shape Batch = broadcastShapes(BA, BB);
    Tensor A = randomF32(G, SA), B = randomF32(G, SB);
    std::vector<double> AV = values(A), BV = values(B);
    // The matrix of a batch index in an operand of batch shape S: its
    // broadcast axes (extent 1) stay at 0.
    auto MatrixOf = [&](const Shape &S, const std::vector<int64_t> &Idx) {
      int64_t Off = 0;
      for (size_t D = 0; D < S.size(); ++D)
        Off = Off * S[D] + (S[D] == 1 ? 0 : Idx[Idx.size() - S.size() + D]);
      return Off;
    };
    Exact E;
    forEachIndex(Batch, [&](const std::vector<int64_t> &Idx) {
      int64_t OA = MatrixOf(BA, Idx) * M * K, OB = MatrixOf(BB, Idx) * K * N;
      Exact One = productByDefinition(
          M, N, K, [&](int64_t I, int64_t L) { return AV[OA + I * K + L]; },
          [&](int64_t L, int64_t J) { return BV[OB + L * N + J]; },
          [](int64_t, int64_t) { return 0.0; });
      E.terms = One.terms;
      E.value.insert(E.value.end(), One.value.begin(), One.value.end());
      E.mass.insert(E.mass.end(), One.mass.begin(), One.mass.end());
    });
    expectWithinBound(
        run("matmul", {A, B}), E, U32,
        fmt::format("{} @ {}", shapeToString(SA), shapeToString(SB)));
  }
  // Integers wrap like int64 arithmetic narrowed to the dtype: exact.
  Tensor A = i64({1, -2, 3, 4, 5, 6}, {2, 3}).cast(DType::Int32);
  Tensor B = i64({7, 8, 9, 10, 11, 12}, {3, 2}).cast(DType::Int32);
  expectTensor(run("matmul", {A, B}),
               i64({1 * 7 - 2 * 9 + 3 * 11, 1 * 8 - 2 * 10 + 3 * 12,
                    4 * 7 + 5 * 9 + 6 * 11, 4 * 8 + 5 * 10 + 6 * 12},
                   {2, 2})
                   .cast(DType::Int32),
               0, 0);
}

TEST(ReferenceOracle, GemmMatchesDefinition) {
  std::mt19937 G(7);
  for (const std::array<int64_t, 3> &Dims : std::vector<std::array<int64_t, 3>>{
           {5, 7, 4}, {1, 9, 3}, {37, 300, 262}}) {
    // (Not a structured binding: clang 14's lambdas cannot capture one.)
    int64_t M = Dims[0], K = Dims[1], N = Dims[2];
    for (int TA = 0; TA < 2; ++TA)
      for (int TB = 0; TB < 2; ++TB)
        for (const Shape &CS : {Shape{0}, Shape{}, Shape{N}, Shape{M, 1}}) {
          bool HasC = CS != Shape{0};
          double Alpha = 0.5, Beta = HasC ? 2.0 : 1.0;
          Tensor A = randomF32(G, TA ? Shape{K, M} : Shape{M, K});
          Tensor B = randomF32(G, TB ? Shape{N, K} : Shape{K, N});
          std::vector<Tensor> In{A, B};
          if (HasC)
            In.push_back(randomF32(G, CS));
          std::vector<double> AV = values(A), BV = values(B),
                              CV = HasC ? values(In[2]) : std::vector<double>();
          Exact E = productByDefinition(
              M, N, K,
              [&](int64_t I, int64_t L) {
                return Alpha * AV[TA ? L * M + I : I * K + L];
              },
              [&](int64_t L, int64_t J) {
                return BV[TB ? J * K + L : L * N + J];
              },
              [&](int64_t I, int64_t J) {
                if (!HasC)
                  return 0.0;
                int64_t Off = CS.empty() ? 0 : CS.size() == 1 ? J : I;
                return Beta * CV[(size_t)Off];
              });
          expectWithinBound(
              run("gemm", In,
                  {{"trans_a", (int64_t)TA},
                   {"trans_b", (int64_t)TB},
                   {"alpha", Alpha},
                   {"beta", Beta}}),
              E, U32,
              fmt::format("gemm {}x{}x{} trans_a {} trans_b {} c {}", M, K, N,
                          TA, TB, HasC ? shapeToString(CS) : "none"));
        }
  }
}

//===----------------------------------------------------------------------===//
// Independence
//===----------------------------------------------------------------------===//

/// Calls that reached oneDNN (its primitives, reorders and sgemm) or the
/// library kernels' other fast paths.
int64_t libraryCalls() {
  DnnlCacheStats S = dnnlCacheStats();
  return S.primitivesCreated + S.primitiveHits + S.weightReorders +
         S.weightHits + sgemmCalls() + denseGemvCalls() + directConvCalls() +
         smallGemmCalls();
}

// Each anchor has a oneDNN library kernel (what the VM calls; compiler_test
// checks that it does); with oneDNN on, the reference kernel never reaches
// oneDNN and the library kernel does, on the same inputs, and they agree.
TEST(ReferenceOracle, ReferenceKernelsNeverCallOneDNN) {
  ASSERT_TRUE(dnnlEnabled());
  std::mt19937 G(13);
  struct Call {
    std::string op;
    std::vector<Tensor> in;
    Attrs attrs;
  };
  Tensor X = randomF32(G, {1, 16, 12, 12});
  Attrs Blocked{{"data_layout", "NCHW8c"},
                {"kernel_layout", "OIHW8i8o"},
                {"out_layout", "NCHW8c"},
                {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  auto Transform = [&](const Tensor &T, const char *Src, const char *Dst) {
    return run("layout_transform", {T},
               {{"src_layout", Src}, {"dst_layout", Dst}});
  };
  std::vector<Call> Calls = {
      {"conv",
       {X, randomF32(G, {24, 16, 3, 3}), randomF32(G, {24})},
       {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}},
      {"conv2d_nchwc",
       {Transform(X, "NCHW", "NCHW8c"),
        Transform(randomF32(G, {16, 16, 3, 3}), "OIHW", "OIHW8i8o")},
       Blocked},
      {"dense", {randomF32(G, {9, 40}), randomF32(G, {30, 40})}, {}},
      {"matmul", {randomF32(G, {64, 128}), randomF32(G, {128, 96})}, {}},
      {"gemm",
       {randomF32(G, {8, 20}), randomF32(G, {12, 20}), randomF32(G, {12})},
       {{"trans_b", int64_t(1)}, {"alpha", 0.5}}},
      {"layout_transform",
       {X},
       {{"src_layout", "NCHW"}, {"dst_layout", "NCHW8c"}}}};
  for (const Call &C : Calls) {
    SCOPED_TRACE(C.op);
    const KernelInfo *L = KernelRegistry::global().libraryKernel(C.op);
    ASSERT_NE(L, nullptr);
    EXPECT_EQ(L->name, "dnnl." + C.op);
    int64_t Before = libraryCalls();
    Tensor Ref = run(C.op, C.in, C.attrs);
    EXPECT_EQ(libraryCalls(), Before) << "the reference kernel called oneDNN";
    Tensor Lib = run(L->name, C.in, C.attrs);
    EXPECT_GT(libraryCalls(), Before) << "the library kernel did not";
    expectTensor(Lib, Ref, 1e-4, 1e-4);
  }
}

} // namespace
} // namespace rivet::test
