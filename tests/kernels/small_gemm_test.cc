//===- small_gemm_test.cc - smallGemm against a double-precision product --===//
//
// smallGemm (kernels/cpu/SmallGemm.h) tiles 6 rows by 16 columns in
// registers, then 8 columns, then single columns, then 5..1 rows: every
// compilation the host runs, over extents on and off those tiles, with and
// without bias, addend and relu and with row strides wider than the rows,
// against products summed in double. Then the fused matmul and dense
// kernels that call it (a leading per-column add becomes its bias, an add
// of the output's shape next its addend, the rest of the tail runs after)
// against their anchors' reference kernels.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/Threading.h"
#include "kernels/cpu/SmallGemm.h"
#include "kernels/dnnl/DnnlAnchors.h"
#include "kernels/dnnl/PostOps.h"

#include <fmt/format.h>

#include <cmath>
#include <tuple>

namespace rivet::test {
namespace {

std::vector<float> randomValues(std::mt19937 &G, size_t N) {
  std::uniform_real_distribution<float> D(-1.f, 1.f);
  std::vector<float> V(N);
  for (float &X : V)
    X = D(G);
  return V;
}

TEST(SmallGemm, EveryTileAndTailAgreesWithADoubleProduct) {
  std::mt19937 G(2026);
  for (cpu::CpuIsa Isa :
       {cpu::CpuIsa::Base, cpu::CpuIsa::Avx2, cpu::CpuIsa::Avx512}) {
    SmallGemmFn Fn = smallGemmFor(Isa);
    if (!Fn)
      continue; // this CPU cannot run it
    for (int64_t M : {1, 5, 6, 7, 13})
      for (int64_t N : {1, 7, 8, 9, 16, 17, 33, 65, 120})
        for (int64_t K : {1, 3, 16, 65})
          for (auto [WithBias, WithRelu, WithAddend] :
               {std::tuple{false, false, false}, std::tuple{true, false, false},
                std::tuple{true, true, false}, std::tuple{false, false, true},
                std::tuple{true, true, true}}) {
            // Row strides past the rows: 3 (the addend's: 5) more elements
            // each.
            int64_t Lda = K + 3, Ldb = N + 3, Ldc = N + 3, Ldd = N + 5;
            std::vector<float> A = randomValues(G, (size_t)(M * Lda)),
                               B = randomValues(G, (size_t)(K * Ldb)),
                               Bias = randomValues(G, (size_t)N),
                               D = randomValues(G, (size_t)(M * Ldd)),
                               C((size_t)(M * Ldc), 7.0f);
            // Under relu, a NaN in the last row stays NaN, as the relu
            // kernel's does.
            if (WithRelu)
              A[(size_t)((M - 1) * Lda)] = std::nanf("");
            SmallGemmArgs Args{
                A.data(), Lda, B.data(), Ldb, WithBias ? Bias.data() : nullptr,
                C.data(), Ldc, N,        K};
            Args.Relu = WithRelu;
            if (WithAddend)
              Args.Addend = D.data(), Args.LdAddend = Ldd;
            // In two calls, the second starting mid-block of 6.
            int64_t Split = M / 2;
            Fn(Args, 0, Split);
            Fn(Args, Split, M);
            for (int64_t I = 0; I < M; ++I)
              for (int64_t J = 0; J < Ldc; ++J) {
                float Got = C[(size_t)(I * Ldc + J)];
                if (J >= N) {
                  EXPECT_EQ(Got, 7.0f) << "wrote past row " << I;
                  continue;
                }
                double Want = WithBias ? Bias[(size_t)J] : 0.0;
                for (int64_t Kk = 0; Kk < K; ++Kk)
                  Want += (double)A[(size_t)(I * Lda + Kk)] *
                          B[(size_t)(Kk * Ldb + J)];
                if (WithAddend)
                  Want += D[(size_t)(I * Ldd + J)];
                std::string Where = fmt::format(
                    "isa {}, {}x{}x{}, bias {}, relu {}, addend {}, at ({}, "
                    "{})",
                    (int)Isa, M, N, K, WithBias, WithRelu, WithAddend, I, J);
                if (std::isnan(Want)) {
                  EXPECT_TRUE(std::isnan(Got)) << Where;
                  continue;
                }
                if (WithRelu && !(Want > 0)) {
                  // 0, never -0 (nor a rounding's tiny negative).
                  EXPECT_TRUE((Got == 0 && !std::signbit(Got)) ||
                              (Got > 0 && Got < 1e-6 * (K + 1)))
                      << Where << ": " << Got;
                  continue;
                }
                EXPECT_NEAR(Got, Want, 1e-6 * (K + 1)) << Where;
              }
          }
  }
}

TEST(SmallGemm, ThreadsSplitTheRows) {
  std::mt19937 G(7);
  int64_t M = 100, N = 40, K = 300; // 1.2M multiply-adds: several threads
  std::vector<float> A = randomValues(G, (size_t)(M * K)),
                     B = randomValues(G, (size_t)(K * N)), C1((size_t)(M * N)),
                     C3((size_t)(M * N));
  SmallGemmArgs Args{A.data(), K, B.data(), N, nullptr, C1.data(), N, N, K};
  {
    SettingScope<int> T(numThreads, setNumThreads, 1);
    smallGemm(Args, M);
  }
  Args.C = C3.data();
  {
    SettingScope<int> T(numThreads, setNumThreads, 3);
    smallGemm(Args, M);
  }
  // The same rows in the same order of sums, on whichever thread.
  EXPECT_EQ(C1, C3);
}

PostOp binary(PostOp::Kind K, Tensor Operand) {
  return makePostOp(K, {}, std::move(Operand));
}

/// The fused kernel Fused on A and B with the tail P, against the anchor's
/// reference kernel followed by the tail's.
void expectFusedOnSmallGemm(const std::string &Fused, const std::string &Anchor,
                            const std::vector<Tensor> &AnchorIn,
                            const PostOps &P, const std::string &What) {
  SCOPED_TRACE(What);
  Attrs A;
  encodePostOps(P, A);
  std::vector<Tensor> In = AnchorIn;
  for (const PostOp &Op : P)
    if (Op.isBinary())
      In.push_back(Op.operand);
  int64_t Before = smallGemmCalls();
  Tensor Got = run(Fused, In, A);
  EXPECT_EQ(smallGemmCalls(), Before + 1) << "smallGemm did not run";
  Tensor Want = run(Anchor, AnchorIn);
  applyPostOpsReference(Want, P);
  expectTensor(Got, Want, 1e-5, 1e-5);
}

TEST(SmallGemm, FusedMatMulAndDenseRunOnIt) {
  SettingScope<int64_t> On(smallGemmMaxWork, setSmallGemmMaxWork,
                           int64_t(1) << 23);
  std::mt19937 G(11);
  using K = PostOp::Kind;
  // A transformer's projection: [S, B, 64] @ [64, 192] with its bias.
  expectFusedOnSmallGemm("dnnl.matmul_fused", "matmul",
                         {randomF32(G, {7, 2, 64}), randomF32(G, {64, 192})},
                         {binary(K::Add, randomF32(G, {192}))}, "bias");
  expectFusedOnSmallGemm(
      "dnnl.matmul_fused", "matmul",
      {randomF32(G, {5, 9, 17}), randomF32(G, {1, 17, 33})},
      {binary(K::Add, randomF32(G, {1, 33})), makePostOp(K::Relu, {}),
       binary(K::Multiply, randomF32(G, {5, 9, 33}))},
      "unit batch axis of b, bias, relu, full-size multiply");
  // Its feed-forward layer: bias and relu, both in smallGemm's epilogue.
  expectFusedOnSmallGemm(
      "dnnl.matmul_fused", "matmul",
      {randomF32(G, {7, 2, 64}), randomF32(G, {64, 128})},
      {binary(K::Add, randomF32(G, {128})), makePostOp(K::Relu, {})},
      "bias, relu");
  expectFusedOnSmallGemm("dnnl.matmul_fused", "matmul",
                         {randomF32(G, {3, 11, 8}), randomF32(G, {8, 24})},
                         {binary(K::Add, randomF32(G, {3, 11, 24}))},
                         "a full-size add is not a bias: the addend");
  // Its second projection and the residual: bias, then the add of the
  // layer's input, both in the epilogue; a relu after them too; an add
  // that broadcasts is not an addend.
  expectFusedOnSmallGemm("dnnl.matmul_fused", "matmul",
                         {randomF32(G, {7, 2, 128}), randomF32(G, {128, 64})},
                         {binary(K::Add, randomF32(G, {64})),
                          binary(K::Add, randomF32(G, {7, 2, 64}))},
                         "bias, residual");
  expectFusedOnSmallGemm("dnnl.matmul_fused", "matmul",
                         {randomF32(G, {7, 2, 16}), randomF32(G, {16, 40})},
                         {binary(K::Add, randomF32(G, {40})),
                          binary(K::Add, randomF32(G, {7, 2, 40})),
                          makePostOp(K::Relu, {})},
                         "bias, residual, relu");
  expectFusedOnSmallGemm("dnnl.matmul_fused", "matmul",
                         {randomF32(G, {7, 2, 16}), randomF32(G, {16, 40})},
                         {binary(K::Add, randomF32(G, {40})),
                          binary(K::Add, randomF32(G, {7, 1, 40}))},
                         "bias, an add broadcast along an axis");
  expectFusedOnSmallGemm("dnnl.dense_fused", "dense",
                         {randomF32(G, {14, 64}), randomF32(G, {64, 64})},
                         {binary(K::Add, randomF32(G, {64}))}, "dense, bias");
  expectFusedOnSmallGemm("dnnl.dense_fused", "dense",
                         {randomF32(G, {4, 5, 19}), randomF32(G, {23, 19})}, {},
                         "dense, leading axes flattened, no tail");
}

// Constant dense weights are transposed once per thread and kept with
// their storage: a second call reuses them, and other weights (new ones
// of the same shape, or the same buffer under another shape) never meet a
// stale transposition.
TEST(SmallGemm, ConstantDenseWeightsKeptPerThreadNeverStale) {
  SettingScope<int64_t> On(smallGemmMaxWork, setSmallGemmMaxWork,
                           int64_t(1) << 23);
  std::mt19937 G(17);
  Attrs A{{"weights_constant", int64_t(1)}};
  Tensor X = randomF32(G, {14, 64});
  for (int Round = 0; Round < 3; ++Round) {
    Tensor W = randomF32(G, {48, 64});
    for (int Call = 0; Call < 2; ++Call)
      expectTensor(run("dnnl.dense_fused", {X, W}, A), run("dense", {X, W}),
                   1e-5, 1e-5);
    // The same values seen as [64, 48] (a view of the same storage).
    Tensor Other(W.storage(), W.byteOffset(), Shape{64, 48}, DType::Float32);
    Tensor X2 = randomF32(G, {14, 48});
    expectTensor(run("dnnl.dense_fused", {X2, Other}, A),
                 run("dense", {X2, Other}), 1e-5, 1e-5);
  }
}

TEST(SmallGemm, BatchedOperandsAndLargeProductsStayOnOneDnn) {
  SettingScope<int64_t> On(smallGemmMaxWork, setSmallGemmMaxWork,
                           int64_t(1) << 23);
  std::mt19937 G(13);
  int64_t Before = smallGemmCalls();
  run("dnnl.matmul_fused", {randomF32(G, {2, 7, 8}), randomF32(G, {2, 8, 9})});
  run("dnnl.matmul_fused", {randomF32(G, {8}), randomF32(G, {8, 9})});
  run("dnnl.dense_fused", {randomF32(G, {16, 600}), randomF32(G, {20, 600})});
  EXPECT_EQ(smallGemmCalls(), Before);
  SettingScope<int64_t> Off(smallGemmMaxWork, setSmallGemmMaxWork, 0);
  run("dnnl.matmul_fused", {randomF32(G, {7, 8}), randomF32(G, {8, 9})});
  EXPECT_EQ(smallGemmCalls(), Before);
}

} // namespace
} // namespace rivet::test
