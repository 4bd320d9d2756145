//===- layout_test.cc - layout_transform and conv2d_nchwc kernels ---------===//
#include "KernelTestUtil.h"

#include "kernels/Random.h"
#include "kernels/dnnl/DnnlAnchors.h"

#include <random>

using namespace rivet;
using namespace rivet::test;

namespace {

Attrs transformAttrs(const std::string &Src, const std::string &Dst) {
  return Attrs{{"src_layout", Src}, {"dst_layout", Dst}};
}

Tensor transform(const Tensor &X, const std::string &Src,
                 const std::string &Dst) {
  return run("layout_transform", {X}, transformAttrs(Src, Dst));
}

Tensor iota(const Shape &S) {
  std::vector<float> V((size_t)numElements(S));
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = (float)I;
  return f32(V, S);
}

TEST(LayoutTransform, BlocksChannelsIntoTheLastAxis) {
  Tensor X = iota({2, 16, 3, 2});
  Tensor Y = transform(X, "NCHW", "NCHW8c");
  ASSERT_EQ(Y.shape(), (Shape{2, 2, 3, 2, 8}));
  const float *PX = X.data<float>(), *PY = Y.data<float>();
  for (int64_t N = 0; N < 2; ++N)
    for (int64_t C = 0; C < 16; ++C)
      for (int64_t H = 0; H < 3; ++H)
        for (int64_t W = 0; W < 2; ++W)
          EXPECT_EQ(PY[(((N * 2 + C / 8) * 3 + H) * 2 + W) * 8 + C % 8],
                    PX[((N * 16 + C) * 3 + H) * 2 + W]);
}

TEST(LayoutTransform, BlocksWeightsAsOIHWioBlocks) {
  Tensor Wt = iota({16, 8, 3, 1});
  Tensor Y = transform(Wt, "OIHW", "OIHW4i8o");
  ASSERT_EQ(Y.shape(), (Shape{2, 2, 3, 1, 4, 8}));
  const float *PW = Wt.data<float>(), *PY = Y.data<float>();
  for (int64_t O = 0; O < 16; ++O)
    for (int64_t I = 0; I < 8; ++I)
      for (int64_t H = 0; H < 3; ++H)
        EXPECT_EQ(PY[(((O / 8 * 2 + I / 4) * 3 + H) * 4 + I % 4) * 8 + O % 8],
                  PW[(O * 8 + I) * 3 + H]);
}

TEST(LayoutTransform, RoundTripsOverRandomShapes) {
  std::mt19937_64 Rng(11);
  auto Pick = [&](int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(Rng);
  };
  for (int Case = 0; Case < 20; ++Case) {
    int64_t B1 = Pick(1, 4), B2 = Pick(1, 4) * 2;
    Shape S{Pick(1, 3), B1 * B2 * Pick(1, 3), Pick(1, 5), Pick(1, 5)};
    DType T = Case % 3 == 0   ? DType::Int64
              : Case % 3 == 1 ? DType::Float16
                              : DType::Float32;
    Tensor X = randomTensor(S, T, 100 + Case);
    std::string L1 = fmt::format("NCHW{}c", B1),
                L2 = fmt::format("NCHW{}c", B2);
    Tensor Y1 = transform(X, "NCHW", L1);
    expectTensor(transform(Y1, L1, "NCHW"), X, 0, 0);
    // Between two blocks directly, and through NCHW: the same tensor.
    expectTensor(transform(Y1, L1, L2), transform(X, "NCHW", L2), 0, 0);
    // Other layouts of the same axes.
    expectTensor(transform(transform(X, "NCHW", "NHWC"), "NHWC", L2),
                 transform(X, "NCHW", L2), 0, 0);
    Shape WS{B2 * Pick(1, 2), B1 * Pick(1, 2), Pick(1, 3), Pick(1, 3)};
    Tensor Wt = randomTensor(WS, T, 200 + Case);
    std::string KL = fmt::format("OIHW{}i{}o", B1, B2);
    expectTensor(transform(transform(Wt, "OIHW", KL), KL, "OIHW"), Wt, 0, 0);
  }
}

// float32 NCHW <-> NCHW{4,8,16}c and between two blocks run on oneDNN's
// reorders in the library kernel the VM calls (dnnl.layout_transform): the
// same bytes as the reference's gather, which never calls oneDNN.
TEST(LayoutTransform, ChannelBlocksOnOneDnnMatchTheReference) {
  int Case = 0;
  for (int64_t From : {1, 4, 8, 16})
    for (int64_t To : {1, 4, 8, 16}) {
      if (From == To)
        continue;
      Shape S{1 + Case % 2, 48, 5 + Case % 3, 7};
      Tensor X = randomTensor(S, DType::Float32, 300 + Case++);
      auto Name = [](int64_t B) {
        return B == 1 ? std::string("NCHW") : fmt::format("NCHW{}c", B);
      };
      auto Reorders = [] {
        DnnlCacheStats S = dnnlCacheStats();
        return S.primitivesCreated + S.primitiveHits;
      };
      int64_t Before = Reorders();
      Tensor Src = transform(X, "NCHW", Name(From));
      Tensor Want = transform(Src, Name(From), Name(To));
      EXPECT_EQ(Reorders(), Before) << "the reference called oneDNN";
      Tensor Got = run("dnnl.layout_transform", {Src},
                       transformAttrs(Name(From), Name(To)));
      EXPECT_GT(Reorders(), Before)
          << Name(From) << " -> " << Name(To) << " did not run on oneDNN";
      expectTensor(Got, Want, 0, 0);
    }
}

TEST(LayoutTransform, ShapeFunctionAndErrors) {
  auto M =
      shapeOf("layout_transform", {Tensor::meta({1, 32, 7, 7}, DType::Float32)},
              transformAttrs("NCHW", "NCHW16c"));
  EXPECT_EQ(M.at(0).shape, (Shape{1, 2, 7, 7, 16}));
  Tensor X = iota({1, 12, 2, 2});
  expectError([&] { transform(X, "NCHW", "NCHW8c"); }, "does not divide");
  expectError([&] { transform(X, "NCHW", "NCHW8d"); },
              "blocks axis D but does not have it");
  expectError([&] { transform(X, "NCHW", "NCW"); },
              "do not have the same axes");
  expectError([&] { transform(X, "NCHW8c", "NCHW"); }, "needs rank 5");
  expectError([&] { transform(X, "NCHH", "NCHW"); }, "names axis H twice");
  expectError([&] { transform(X, "NCHW", "NCHW0c"); }, "block factor of 0");
  expectError(
      [&] { transform(transform(X, "NCHW", "NCHW4c"), "NCHW2c", "NCHW"); },
      "must be 2");
}

/// conv2d_nchwc computed directly on the blocked tensors (double sums):
/// y[n, m/o, oh, ow, m%o] = b[m] + sum x[n, c/i, ih, iw, c%i] *
/// w[m/o, c/i, kh, kw, c%i, m%o].
Tensor directBlockedConv(const Tensor &X, const Tensor &Wt, const Tensor *B,
                         int64_t IB, int64_t OB, const Shape &Strides,
                         const Shape &Pads, const Shape &Dil) {
  int64_t N = X.dim(0), CO = X.dim(1), H = X.dim(2), W = X.dim(3);
  int64_t MO = Wt.dim(0), KH = Wt.dim(2), KW = Wt.dim(3);
  int64_t OH = (H + Pads[0] + Pads[2] - (KH - 1) * Dil[0] - 1) / Strides[0] + 1;
  int64_t OW = (W + Pads[1] + Pads[3] - (KW - 1) * Dil[1] - 1) / Strides[1] + 1;
  std::vector<float> Y((size_t)(N * MO * OH * OW * OB));
  const float *PX = X.data<float>(), *PW = Wt.data<float>();
  for (int64_t Nb = 0; Nb < N; ++Nb)
    for (int64_t Mo = 0; Mo < MO; ++Mo)
      for (int64_t Oh = 0; Oh < OH; ++Oh)
        for (int64_t Ow = 0; Ow < OW; ++Ow)
          for (int64_t Mi = 0; Mi < OB; ++Mi) {
            double S = B ? B->data<float>()[Mo * OB + Mi] : 0.0;
            for (int64_t Co = 0; Co < CO; ++Co)
              for (int64_t Kh = 0; Kh < KH; ++Kh)
                for (int64_t Kw = 0; Kw < KW; ++Kw) {
                  int64_t Ih = Oh * Strides[0] - Pads[0] + Kh * Dil[0];
                  int64_t Iw = Ow * Strides[1] - Pads[1] + Kw * Dil[1];
                  if (Ih < 0 || Ih >= H || Iw < 0 || Iw >= W)
                    continue;
                  for (int64_t Ci = 0; Ci < IB; ++Ci)
                    S +=
                        (double)
                            PX[(((Nb * CO + Co) * H + Ih) * W + Iw) * IB + Ci] *
                        PW[((((Mo * CO + Co) * KH + Kh) * KW + Kw) * IB + Ci) *
                               OB +
                           Mi];
                }
            Y[(size_t)((((Nb * MO + Mo) * OH + Oh) * OW + Ow) * OB + Mi)] =
                (float)S;
          }
  return f32(Y, {N, MO, OH, OW, OB});
}

TEST(Conv2dNchwc, MatchesConvAndADirectBlockedLoopOverRandomShapes) {
  std::mt19937_64 Rng(5);
  auto Pick = [&](int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(Rng);
  };
  for (int Case = 0; Case < 12; ++Case) {
    int64_t IB = Pick(1, 3) * 2, OB = Case % 2 ? 8 : 4;
    int64_t N = Pick(1, 2), C = IB * Pick(1, 2), M = OB * Pick(1, 2);
    int64_t KH = Pick(1, 3), KW = Pick(1, 3);
    Shape Strides{Pick(1, 2), Pick(1, 2)}, Dil{Pick(1, 2), Pick(1, 2)};
    Shape Pads{Pick(0, 1), Pick(0, 1), Pick(0, 1), Pick(0, 1)};
    int64_t H = (KH - 1) * Dil[0] + Pick(1, 4),
            W = (KW - 1) * Dil[1] + Pick(1, 4);
    Tensor X = randomTensor({N, C, H, W}, DType::Float32, 300 + Case);
    Tensor Wt = randomTensor({M, C, KH, KW}, DType::Float32, 400 + Case);
    Tensor B = randomTensor({M}, DType::Float32, 500 + Case);
    Attrs ConvA{{"strides", Strides}, {"pads", Pads}, {"dilations", Dil}};
    std::string DL = fmt::format("NCHW{}c", IB),
                OL = fmt::format("NCHW{}c", OB),
                KL = fmt::format("OIHW{}i{}o", IB, OB);
    Attrs BlockedA = ConvA;
    BlockedA.set("data_layout", DL);
    BlockedA.set("kernel_layout", KL);
    BlockedA.set("out_layout", OL);
    Tensor XB = transform(X, "NCHW", DL), WB = transform(Wt, "OIHW", KL);
    bool WithBias = Case % 3 != 0;
    std::vector<Tensor> In = {XB, WB};
    if (WithBias)
      In.push_back(B);
    Tensor Y = run("conv2d_nchwc", In, BlockedA);
    Tensor Direct = directBlockedConv(XB, WB, WithBias ? &B : nullptr, IB, OB,
                                      Strides, Pads, Dil);
    expectTensor(Y, Direct, 1e-4, 1e-4);
    std::vector<Tensor> PlainIn = {X, Wt};
    if (WithBias)
      PlainIn.push_back(B);
    expectTensor(transform(Y, OL, "NCHW"), run("conv", PlainIn, ConvA), 1e-5,
                 1e-5);
    auto Meta = shapeOf("conv2d_nchwc", In, BlockedA);
    EXPECT_EQ(Meta.at(0).shape, Y.shape());
  }
}

TEST(LayoutTransform, BlocksOfOneKeepTheBytes) {
  Tensor X = iota({2, 3, 4, 5});
  Tensor Y = transform(X, "NCHW", "NCHW1c");
  ASSERT_EQ(Y.shape(), (Shape{2, 3, 4, 5, 1}));
  for (int64_t I = 0; I < X.numel(); ++I)
    EXPECT_EQ(Y.data<float>()[I], X.data<float>()[I]);
  expectTensor(transform(Y, "NCHW1c", "NCHW"), X, 0, 0);
  // A block of 1 next to a real one still moves the data.
  Tensor Wt = iota({8, 3, 2, 2});
  expectTensor(transform(transform(Wt, "OIHW", "OIHW1i8o"), "OIHW1i8o", "OIHW"),
               Wt, 0, 0);
  EXPECT_EQ(transform(Wt, "OIHW", "OIHW1i8o").data<float>()[1], 12.f);
}

/// conv2d_nchwc with the blocked tensors of X, Wt and B equals conv.
void expectBlockedConvMatches(const Tensor &X, const Tensor &Wt,
                              const Tensor &B, Attrs ConvA, int64_t IB,
                              int64_t KB, int64_t OB) {
  std::string DL = fmt::format("NCHW{}c", IB), OL = fmt::format("NCHW{}c", OB),
              KL = fmt::format("OIHW{}i{}o", KB, OB);
  Attrs BlockedA = ConvA;
  BlockedA.set("data_layout", DL);
  BlockedA.set("kernel_layout", KL);
  BlockedA.set("out_layout", OL);
  Tensor Y =
      run("conv2d_nchwc",
          {transform(X, "NCHW", DL), transform(Wt, "OIHW", KL), B}, BlockedA);
  expectTensor(transform(Y, OL, "NCHW"), run("conv", {X, Wt, B}, ConvA), 1e-5,
               1e-5);
}

TEST(Conv2dNchwc, ImagesGroupsAndDepthwiseMatchConv) {
  Attrs Pad{{"pads", Shape{1, 1, 1, 1}}};
  // An image read plain (NCHW1c) and written blocked.
  expectBlockedConvMatches(randomTensor({1, 3, 7, 6}, DType::Float32, 1),
                           randomTensor({16, 3, 3, 3}, DType::Float32, 2),
                           randomTensor({16}, DType::Float32, 3), Pad, 1, 1, 8);
  // Depthwise: weights [M, 1, KH, KW] blocked as OIHW1i8o.
  Attrs Dw = Pad;
  Dw.set("group", int64_t(16));
  Dw.set("strides", Shape{2, 2});
  expectBlockedConvMatches(randomTensor({2, 16, 7, 6}, DType::Float32, 4),
                           randomTensor({16, 1, 3, 3}, DType::Float32, 5),
                           randomTensor({16}, DType::Float32, 6), Dw, 8, 1, 8);
  // Two groups of 8 channels.
  Attrs G2{{"group", int64_t(2)}};
  expectBlockedConvMatches(randomTensor({1, 16, 4, 4}, DType::Float32, 7),
                           randomTensor({16, 8, 1, 1}, DType::Float32, 8),
                           randomTensor({16}, DType::Float32, 9), G2, 8, 1, 8);
}

TEST(Conv2dNchwc, RejectsMismatchedLayouts) {
  Tensor X = randomTensor({1, 2, 4, 4, 8}, DType::Float32, 1);
  Tensor Wt = randomTensor({2, 2, 3, 3, 8, 8}, DType::Float32, 2);
  Attrs A{{"data_layout", std::string("NCHW8c")},
          {"kernel_layout", std::string("OIHW4i8o")},
          {"out_layout", std::string("NCHW8c")}};
  expectError(
      [&] {
        run("conv2d_nchwc", {X, Wt}, A);
      },
      "must block by the data_layout");
  A.set("kernel_layout", std::string("OHWI8i8o"));
  expectError(
      [&] {
        run("conv2d_nchwc", {X, Wt}, A);
      },
      "kernel_layout must have the form");
  A.set("kernel_layout", std::string("OIHW8i8o"));
  A.set("data_layout", std::string("NHWC8c"));
  expectError(
      [&] {
        run("conv2d_nchwc", {X, Wt}, A);
      },
      "data_layout and out_layout must have the form");
}

} // namespace
