//===- pointwise_depthwise_conv_test.cc - 1x1 + depthwise conv in one pass ===//
//
// dnnl.conv2d_nchwc_pw_dw (a 1x1 conv2d_nchwc_fused call and the depthwise
// one after it) over random shapes, windows, strides, pads, batches, thread
// counts and tails, compared with the two convs and tails by the reference
// kernels (oneDNN off); each case checks that the one-pass kernel ran, or
// that a pair it must refuse ran as two calls, with the same result.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/DnnlConfig.h"
#include "kernels/Threading.h"
#include "kernels/cpu/ConvChain.h"
#include "kernels/cpu/PointwiseDepthwiseConv.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

#include <unistd.h>

namespace rivet::test {
namespace {

constexpr int64_t kB = 16;

bool cpuHasAvx512() { return __builtin_cpu_supports("avx512f"); }

/// A 1x1 conv of Ib -> Eb channel blocks and a K x K depthwise conv after
/// it (stride S, pads Pads), each with a bias (as the model has it: an add
/// of a per-channel operand) or not and a tail by name: "relu", "clip6",
/// "channel" (an add per channel), "scalar" (a multiply), "full" (an add
/// of an operand of the output's shape), "sigmoid".
struct Pair {
  int64_t N, Ib, Eb, H, W, K, S;
  std::vector<int64_t> Pads; // top, left, bottom, right
  std::vector<std::string> Tail1, Tail2;
};

struct Stage {
  std::vector<Tensor> in; // x (left empty for the depthwise), w, operands
  Attrs attrs, fused;
  PostOps post;
};

Stage stage(std::mt19937 &G, const Tensor *X, const Tensor &W, const Shape &Out,
            Attrs A, const std::vector<std::string> &Tail, int64_t Channels) {
  Stage St;
  if (X)
    St.in.push_back(*X);
  St.in.push_back(W);
  St.attrs = A;
  using K = PostOp::Kind;
  for (const std::string &T : Tail) {
    if (T == "relu")
      St.post.push_back(makePostOp(K::Relu, {}));
    else if (T == "clip6")
      St.post.push_back(makePostOp(K::Clip, {{"min", 0.0}, {"max", 6.0}}));
    else if (T == "sigmoid")
      St.post.push_back(makePostOp(K::Sigmoid, {}));
    else if (T == "channel")
      St.post.push_back(
          makePostOp(K::Add, {}, randomF32(G, {Channels / kB, 1, 1, kB})));
    else if (T == "scalar")
      St.post.push_back(makePostOp(K::Multiply, {}, randomF32(G, {})));
    else if (T == "full")
      St.post.push_back(makePostOp(K::Add, {}, randomF32(G, Out)));
    else
      ADD_FAILURE() << "unknown tail op " << T;
  }
  St.fused = A;
  St.fused.set("weights_constant", int64_t(1));
  encodePostOps(St.post, St.fused);
  for (const PostOp &Op : St.post)
    if (Op.isBinary())
      St.in.push_back(Op.operand);
  return St;
}

Attrs blockedAttrs(const char *KernelLayout) {
  return {{"data_layout", std::string("NCHW16c")},
          {"kernel_layout", std::string(KernelLayout)},
          {"out_layout", std::string("NCHW16c")}};
}

/// Runs P through dnnl.conv2d_nchwc_pw_dw; Fused says whether the one-pass
/// kernel must run (else the two calls), and the result must match the
/// reference either way.
void expectPair(std::mt19937 &G, const Pair &P, bool Fused) {
  SCOPED_TRACE(fmt::format(
      "N{} {}->{} blocks {}x{}, dw {}x{} s{} pads {}, tails {} / {}", P.N, P.Ib,
      P.Eb, P.H, P.W, P.K, P.K, P.S, fmt::join(P.Pads, ","),
      fmt::join(P.Tail1, "+"), fmt::join(P.Tail2, "+")));
  int64_t E = P.Eb * kB;
  Tensor X =
      toBlocked(randomF32(G, {P.N, P.Ib * kB, P.H, P.W}), "NCHW", "NCHW16c");
  Tensor W1 =
      toBlocked(randomF32(G, {E, P.Ib * kB, 1, 1}), "OIHW", "OIHW16i16o");
  Tensor W2 = toBlocked(randomF32(G, {E, 1, P.K, P.K}), "OIHW", "OIHW1i16o");
  Attrs A1 = blockedAttrs("OIHW16i16o");
  Attrs A2 = blockedAttrs("OIHW1i16o");
  A2.set("group", E);
  A2.set("strides", std::vector<int64_t>{P.S, P.S});
  A2.set("pads", P.Pads);
  Shape Mid = {P.N, P.Eb, P.H, P.W, kB};
  Shape Out =
      run("conv2d_nchwc", {Tensor::zeros(Mid, DType::Float32), W2}, A2).shape();
  Stage S1 = stage(G, &X, W1, Mid, A1, P.Tail1, E);
  Stage S2 = stage(G, nullptr, W2, Out, A2, P.Tail2, E);

  // The reference: each conv and its tail by the reference kernels.
  Tensor Want;
  double Scale = 1;
  {
    DnnlDisabledScope Off;
    Tensor M = run("conv2d_nchwc", {X, W1}, A1);
    applyPostOpsReference(M, S1.post);
    Want = run("conv2d_nchwc", {M, W2}, A2);
    Scale = std::max(1.0, maxAbs(Want));
    applyPostOpsReference(Want, S2.post);
  }
  std::vector<Tensor> In = S1.in;
  In.insert(In.end(), S2.in.begin(), S2.in.end());
  Attrs A = pointwiseDepthwiseAttrs(S1.fused, (int64_t)S1.in.size(), S2.fused);
  int64_t Before = pointwiseDepthwiseCalls();
  Tensor Got = run(kPointwiseDepthwiseOp, In, A);
  EXPECT_EQ(pointwiseDepthwiseCalls(), Before + (Fused ? 1 : 0));
  expectTensor(Got, Want, 0, 1e-5 * Scale);
}

TEST(PointwiseDepthwiseConv, RandomShapesWindowsTailsAndThreads) {
  if (!cpuHasAvx512())
    GTEST_SKIP() << "the one-pass kernel runs on AVX-512 only";
  SettingScope<PointwiseDepthwiseChoice> Every(
      pointwiseDepthwiseChoice, setPointwiseDepthwiseChoice,
      PointwiseDepthwiseChoice::Always);
  std::mt19937 G(71);
  std::uniform_int_distribution<int64_t> Extent(1, 30), Blocks(1, 7),
      Batch(1, 2), Stride(1, 2);
  const std::vector<std::vector<std::string>> Tails = {
      {}, {"channel", "clip6"}, {"relu"}, {"scalar", "channel", "relu"}};
  int Cases = 0;
  for (int Threads : {1, 2, 3}) {
    SettingScope<int> T(numThreads, setNumThreads, Threads);
    for (int I = 0; I < 10; ++I, ++Cases) {
      int64_t K = I % 5 == 4 ? 5 : 3, Pad = I % 3 == 2 ? 0 : K / 2;
      Pair P{Batch(G),
             Blocks(G),
             Blocks(G),
             Extent(G) + K,
             Extent(G) + K,
             K,
             Stride(G),
             {Pad, Pad, Pad, Pad},
             Tails[(size_t)I % Tails.size()],
             Tails[(size_t)(I + 1) % Tails.size()]};
      expectPair(G, P, true);
    }
    // MobileNet's shapes (channels, images and strides), smaller batches
    // of blocks; the tails as the model has them.
    for (auto [Ib, Eb, H, S] :
         std::vector<std::array<int64_t, 4>>{{1, 6, 112, 2},
                                             {2, 9, 56, 1},
                                             {2, 12, 28, 1},
                                             {4, 24, 14, 1},
                                             {10, 60, 7, 1},
                                             {6, 36, 14, 2}})
      expectPair(G,
                 {1,
                  Ib,
                  Eb,
                  H,
                  H,
                  3,
                  S,
                  {1, 1, 1, 1},
                  {"channel", "clip6"},
                  {"channel", "clip6"}},
                 true);
    Cases += 6;
  }
  // Uneven pads, images narrower than a tile, a window as large as the
  // image, rings that wrap several times (a tall image).
  SettingScope<int> One(numThreads, setNumThreads, 1);
  expectPair(G, {1, 2, 3, 9, 5, 3, 1, {0, 1, 2, 2}, {"relu"}, {}}, true);
  expectPair(G, {2, 1, 2, 3, 3, 3, 1, {1, 1, 1, 1}, {}, {"channel"}}, true);
  expectPair(G, {1, 1, 2, 4, 4, 3, 2, {0, 0, 0, 0}, {}, {}}, true);
  expectPair(G, {1, 3, 20, 400, 9, 3, 1, {1, 1, 1, 1}, {"clip6"}, {"relu"}},
             true);
  EXPECT_GE(Cases, 45);
}

TEST(PointwiseDepthwiseConv, RefusedPairsRunAsTwoCalls) {
  std::mt19937 G(73);
  bool Avx512 = cpuHasAvx512();
  SettingScope<int> T(numThreads, setNumThreads, 2);
  SettingScope<PointwiseDepthwiseChoice> Every(
      pointwiseDepthwiseChoice, setPointwiseDepthwiseChoice,
      PointwiseDepthwiseChoice::Always);
  // Tails it does not apply: a sigmoid; an operand of the output's shape.
  expectPair(G, {1, 2, 3, 10, 10, 3, 1, {1, 1, 1, 1}, {"sigmoid"}, {}}, false);
  expectPair(G, {1, 2, 3, 10, 10, 3, 1, {1, 1, 1, 1}, {}, {"full"}}, false);
  // Switched off (and what it takes otherwise, as a control).
  {
    SettingScope<PointwiseDepthwiseChoice> Off(pointwiseDepthwiseChoice,
                                               setPointwiseDepthwiseChoice,
                                               PointwiseDepthwiseChoice::Off);
    expectPair(G, {1, 2, 3, 10, 10, 3, 1, {1, 1, 1, 1}, {"relu"}, {}}, false);
  }
  expectPair(G, {1, 2, 3, 10, 10, 3, 1, {1, 1, 1, 1}, {"relu"}, {}}, Avx512);
  // Auto: a 1x1 result of at least L2 per image, as mobilenet_v2's 96 x
  // 112 x 112 (4.8 MB); its 384 x 14 x 14 (0.3 MB) stays two calls.
  {
    SettingScope<PointwiseDepthwiseChoice> Auto(pointwiseDepthwiseChoice,
                                                setPointwiseDepthwiseChoice,
                                                PointwiseDepthwiseChoice::Auto);
    long L2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    int64_t Big = 1;
    while (6 * kB * Big * Big * 4 < (L2 > 0 ? L2 : 1 << 20))
      ++Big;
    expectPair(G,
               {1,
                1,
                6,
                Big,
                Big,
                3,
                2,
                {1, 1, 1, 1},
                {"channel", "clip6"},
                {"channel", "clip6"}},
               Avx512);
    expectPair(G,
               {2,
                4,
                24,
                14,
                14,
                3,
                1,
                {1, 1, 1, 1},
                {"channel", "clip6"},
                {"channel", "clip6"}},
               false);
  }
  // With oneDNN off the calls run the reference kernels.
  {
    DnnlDisabledScope Off;
    expectPair(G, {1, 1, 2, 6, 6, 3, 1, {1, 1, 1, 1}, {"relu"}, {}}, false);
  }
}

TEST(PointwiseDepthwiseConv, MalformedCallsAreErrors) {
  std::mt19937 G(79);
  Tensor X = toBlocked(randomF32(G, {1, 16, 4, 4}), "NCHW", "NCHW16c");
  Tensor W1 = toBlocked(randomF32(G, {16, 16, 1, 1}), "OIHW", "OIHW16i16o");
  Attrs A1 = blockedAttrs("OIHW16i16o");
  // No "pw_inputs": not a chain's attributes.
  EXPECT_THROW(run(kPointwiseDepthwiseOp, {X, W1}, A1), Error);
  // More first-call inputs named than given.
  Attrs A = pointwiseDepthwiseAttrs(A1, 5, blockedAttrs("OIHW1i16o"));
  EXPECT_THROW(run(kPointwiseDepthwiseOp, {X, W1}, A), Error);
}

} // namespace
} // namespace rivet::test
