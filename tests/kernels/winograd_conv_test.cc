//===- winograd_conv_test.cc - Winograd convs against the reference -------===//
//
// conv2d_nchwc by F(2x2, 3x3) and F(4x4, 3x3) over random shapes, pads,
// channel blocks and post-op tails, compared with the reference kernels
// (oneDNN off); each case checks that the Winograd path really ran and
// bounds its error relative to the output's magnitude.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/DnnlConfig.h"
#include "kernels/Threading.h"
#include "kernels/dnnl/WinogradConv.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <random>

namespace rivet::test {
namespace {

bool cpuHasAvx2Fma() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/// Forces the tile size or the products' layout for a scope.
struct ChoiceScope : SettingScope<WinogradChoice> {
  explicit ChoiceScope(WinogradChoice C)
      : SettingScope(winogradChoice, setWinogradChoice, C) {}
};
struct ProductsScope : SettingScope<WinogradProducts> {
  explicit ProductsScope(WinogradProducts P)
      : SettingScope(winogradProducts, setWinogradProducts, P) {}
};

double maxAbsDifference(const Tensor &A, const Tensor &B) {
  std::vector<double> X = A.toDoubleVector(), Y = B.toDoubleVector();
  double M = 0;
  for (size_t I = 0; I < X.size(); ++I)
    M = std::max(M, std::abs(X[I] - Y[I]));
  return M;
}

struct Case {
  int64_t N, C, M, H, W;
  std::vector<int64_t> Pads; // top, left, bottom, right
  int64_t Block, OutBlock;
  bool Bias, Constant;
};

/// Runs C through the fused kernel with Winograd forced to Choice and
/// compares with the reference conv followed by the post-ops. Post-op
/// operands are made here to fit the case's output: "channel" (CHW<o>c),
/// "full" (the output's shape) and "scalar".
void expectWinogradMatches(std::mt19937 &G, const Case &C,
                           WinogradChoice Choice,
                           const std::vector<std::string> &Tail) {
  std::string What = fmt::format(
      "N{} C{} M{} {}x{} pads {},{},{},{} blocks {}/{} bias {} tile {} tail {}",
      C.N, C.C, C.M, C.H, C.W, C.Pads[0], C.Pads[1], C.Pads[2], C.Pads[3],
      C.Block, C.OutBlock, C.Bias, Choice == WinogradChoice::Tile2 ? 2 : 4,
      fmt::join(Tail, "+"));
  SCOPED_TRACE(What);
  std::string DataL = fmt::format("NCHW{}c", C.Block);
  std::string OutL = fmt::format("NCHW{}c", C.OutBlock);
  std::string KernelL = fmt::format("OIHW{}i{}o", C.Block, C.OutBlock);
  std::vector<Tensor> In{
      toBlocked(randomF32(G, {C.N, C.C, C.H, C.W}), "NCHW", DataL),
      toBlocked(randomF32(G, {C.M, C.C, 3, 3}), "OIHW", KernelL)};
  if (C.Bias)
    In.push_back(randomF32(G, {C.M}));
  Attrs A{{"pads",
           std::vector<int64_t>{C.Pads[0], C.Pads[1], C.Pads[2], C.Pads[3]}},
          {"data_layout", DataL},
          {"kernel_layout", KernelL},
          {"out_layout", OutL}};
  int64_t Ho = C.H + C.Pads[0] + C.Pads[2] - 2;
  int64_t Wo = C.W + C.Pads[1] + C.Pads[3] - 2;
  Shape OutShape{C.N, C.M / C.OutBlock, Ho, Wo, C.OutBlock};
  PostOps P;
  for (const std::string &T : Tail) {
    if (T == "relu")
      P.push_back(makePostOp(PostOp::Kind::Relu, {}));
    else if (T == "clip")
      P.push_back(
          makePostOp(PostOp::Kind::Clip, {{"min", -0.5}, {"max", 2.0}}));
    else if (T == "sigmoid")
      P.push_back(makePostOp(PostOp::Kind::Sigmoid, {}));
    else if (T == "channel")
      P.push_back(
          makePostOp(PostOp::Kind::Add, {},
                     randomF32(G, {C.M / C.OutBlock, 1, 1, C.OutBlock})));
    else if (T == "full")
      P.push_back(makePostOp(PostOp::Kind::Add, {}, randomF32(G, OutShape)));
    else if (T == "scalar")
      P.push_back(makePostOp(PostOp::Kind::Multiply, {}, randomF32(G, {})));
  }
  Attrs Fused = A;
  if (C.Constant)
    Fused.set("weights_constant", int64_t(1));
  encodePostOps(P, Fused);
  std::vector<Tensor> FusedIn = In;
  for (const PostOp &Op : P)
    if (Op.isBinary())
      FusedIn.push_back(Op.operand);

  Tensor Want;
  double Scale; // the conv's magnitude: the tail does not grow its error
  {
    DnnlDisabledScope Off;
    Want = run("conv2d_nchwc", In, A);
    Scale = std::max(1.0, maxAbs(Want));
    applyPostOpsReference(Want, P);
  }
  ChoiceScope Forced(Choice);
  // Twice: the second call reuses the cached primitive and, with constant
  // weights, the cached transformed weights.
  for (int Rep = 0; Rep < 2; ++Rep) {
    int64_t Before = winogradConvCalls();
    Tensor Got = run("dnnl.conv2d_nchwc_fused", FusedIn, Fused);
    EXPECT_EQ(winogradConvCalls(), Before + 1) << "Winograd did not run";
    // Errors relative to the conv's magnitude. F(4x4) rounds more than
    // F(2x2) (transform entries up to 8 and 1/24): at most 5.9e-6 and
    // 1.4e-6 over these cases.
    double Bound = Choice == WinogradChoice::Tile4 ? 3e-5 : 3e-6;
    EXPECT_LT(maxAbsDifference(Got, Want) / Scale, Bound);
    expectTensor(Got, Want, 0, Bound * Scale);
  }
}

/// Runs its cases with the products' layout of the parameter; skips where
/// the CPU cannot run the Winograd path.
class WinogradProductsTest : public ::testing::TestWithParam<WinogradProducts> {
protected:
  void SetUp() override {
    if (!cpuHasAvx2Fma())
      GTEST_SKIP() << "Winograd convs need AVX2 and FMA";
    Products.emplace(GetParam());
  }

private:
  std::optional<ProductsScope> Products;
};

TEST_P(WinogradProductsTest, RandomShapesAndTails) {
  std::mt19937 G(41);
  std::uniform_int_distribution<int64_t> Extent(3, 17), PadD(0, 2),
      Blocks(1, 4);
  const std::vector<std::vector<std::string>> Tails = {
      {},
      {"relu"},
      {"channel", "full", "relu"},
      {"scalar", "clip"},
      {"channel", "sigmoid"}};
  int Cases = 0;
  for (WinogradChoice Choice : {WinogradChoice::Tile2, WinogradChoice::Tile4}) {
    for (int I = 0; I < 12; ++I) {
      Case C;
      C.Block = I % 3 == 2 ? 16 : 8;
      C.OutBlock = I % 4 == 3 ? 16 : C.Block;
      C.N = 1 + I % 2;
      C.C = C.Block * Blocks(G);
      C.M = C.OutBlock * Blocks(G);
      C.H = Extent(G);
      C.W = Extent(G);
      C.Pads = {PadD(G), PadD(G), PadD(G), PadD(G)};
      if (C.H + C.Pads[0] + C.Pads[2] < 3 || C.W + C.Pads[1] + C.Pads[3] < 3)
        continue;
      C.Bias = I % 2 == 0;
      C.Constant = I % 3 != 1;
      expectWinogradMatches(G, C, Choice, Tails[(size_t)I % Tails.size()]);
      ++Cases;
    }
  }
  EXPECT_GE(Cases, 20);
}

// resnet18's shapes (fewer channels), where the tiles cover the image
// exactly (56 = 14 x 4) and where they overhang it (7 = 2 x 4 - 1).
TEST_P(WinogradProductsTest, ResNetLikeShapes) {
  std::mt19937 G(43);
  for (WinogradChoice Choice : {WinogradChoice::Tile2, WinogradChoice::Tile4}) {
    expectWinogradMatches(G,
                          {1, 64, 64, 56, 56, {1, 1, 1, 1}, 8, 8, true, true},
                          Choice, {"relu"});
    expectWinogradMatches(G, {1, 128, 96, 7, 7, {1, 1, 1, 1}, 8, 8, true, true},
                          Choice, {"full", "relu"});
  }
}

// Two threads split the transforms over tiles and the products over
// positions; the result is the same.
TEST_P(WinogradProductsTest, TwoThreadsAgree) {
  std::mt19937 G(47);
  SettingScope<int> Threads(numThreads, setNumThreads, 2);
  expectWinogradMatches(G, {2, 64, 64, 30, 30, {1, 1, 1, 1}, 8, 8, true, true},
                        WinogradChoice::Tile4, {"channel", "relu"});
  expectWinogradMatches(G, {1, 64, 32, 7, 7, {1, 1, 1, 1}, 8, 8, true, true},
                        WinogradChoice::Tile2, {"full", "relu"});
}

// With a small scratch limit a conv runs in chunks of tile rows (one row
// per chunk here, then a few); the result is the same.
TEST_P(WinogradProductsTest, ChunksOfTileRows) {
  std::mt19937 G(59);
  SettingScope<int64_t> Limit(winogradScratchLimit, setWinogradScratchLimit, 1);
  for (int64_t Bytes : {1, 40000}) {
    setWinogradScratchLimit(Bytes);
    expectWinogradMatches(G,
                          {2, 16, 24, 13, 11, {1, 1, 1, 1}, 8, 8, true, false},
                          WinogradChoice::Tile2, {"channel", "full", "relu"});
    expectWinogradMatches(G,
                          {3, 32, 16, 9, 14, {0, 2, 1, 0}, 16, 8, false, true},
                          WinogradChoice::Tile4, {"scalar", "clip"});
  }
}

INSTANTIATE_TEST_SUITE_P(Products, WinogradProductsTest,
                         ::testing::Values(WinogradProducts::Auto,
                                           WinogradProducts::TileMajor,
                                           WinogradProducts::ChannelMajor));

// Auto's tile sizes for resnet18's 3x3 stride-1 convs (batch 1): m = 4 from
// 32 tiles of 4x4, m = 2 from 32 tiles of 2x2, and below that m = 2 only
// where oneDNN's direct kernels are AVX2's (WinogradConv.cc says why).
TEST(WinogradConv, AutoTileSizes) {
  bool Avx512 = __builtin_cpu_supports("avx512f");
  EXPECT_EQ(winogradAutoTile(1, 64, 64, 56, 56), 4);
  EXPECT_EQ(winogradAutoTile(1, 128, 128, 28, 28), 4);
  EXPECT_EQ(winogradAutoTile(1, 256, 256, 14, 14), 2);
  EXPECT_EQ(winogradAutoTile(2, 256, 256, 14, 14), 4);
  EXPECT_EQ(winogradAutoTile(1, 512, 512, 7, 7), Avx512 ? 0 : 2);
  EXPECT_EQ(winogradAutoTile(2, 512, 512, 7, 7), 2);
  EXPECT_EQ(winogradAutoTile(1, 16, 64, 56, 56), 0);
  EXPECT_EQ(winogradAutoTile(1, 64, 16, 56, 56), 0);
}

// What Winograd does not take runs on the direct kernel: strides, other
// kernel sizes, groups, and operands broadcast along rows.
TEST(WinogradConv, OtherConvsStayDirect) {
  std::mt19937 G(53);
  ChoiceScope Forced(WinogradChoice::Tile4);
  std::string L8 = "NCHW8c", K8 = "OIHW8i8o";
  auto Conv = [&](const Shape &WS, Attrs A, const PostOps &P) {
    std::vector<Tensor> In{toBlocked(randomF32(G, {1, 16, 12, 12}), "NCHW", L8),
                           toBlocked(randomF32(G, WS), "OIHW", K8)};
    A.set("data_layout", L8);
    A.set("kernel_layout", K8);
    A.set("out_layout", L8);
    Tensor Want;
    {
      DnnlDisabledScope Off;
      Want = run("conv2d_nchwc", In, A);
      applyPostOpsReference(Want, P);
    }
    encodePostOps(P, A);
    for (const PostOp &Op : P)
      In.push_back(Op.operand);
    int64_t Before = winogradConvCalls();
    Tensor Got = run("dnnl.conv2d_nchwc_fused", In, A);
    EXPECT_EQ(winogradConvCalls(), Before);
    expectTensor(Got, Want, 1e-4, 1e-4);
  };
  Attrs Pad1{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  Attrs Strided = Pad1;
  Strided.set("strides", std::vector<int64_t>{2, 2});
  Conv({16, 16, 3, 3}, Strided, {});
  Conv({16, 16, 1, 1}, {}, {});
  Conv({16, 16, 5, 5}, Pad1, {});
  Conv({16, 16, 3, 3}, Pad1,
       {makePostOp(PostOp::Kind::Add, {}, randomF32(G, {1, 1, 12, 1, 1}))});
}

} // namespace
} // namespace rivet::test
