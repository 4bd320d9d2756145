//===- blocked_direct_conv_test.cc - Our NCHW16c conv kernel vs reference -===//
//
// conv2d_nchwc by BlockedDirectConv's kernels (1x1 convs by pixel ranges,
// KxK convs on narrow images by rows) over random shapes, pads, batches,
// thread counts and tails, compared with the reference conv and post-ops
// (oneDNN off); each case checks that the kernel really ran, or that a case
// it must refuse went elsewhere. The 1x1 kernel is also run on uneven pixel
// ranges directly, which tests whichever of its compiled forms this CPU
// picks.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/DnnlConfig.h"
#include "kernels/Threading.h"
#include "kernels/cpu/BlockedDirectConv.h"
#include "kernels/dnnl/WinogradConv.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

namespace rivet::test {
namespace {

constexpr int64_t kB = 16;

bool cpuHasAvx512() { return __builtin_cpu_supports("avx512f"); }

/// A conv on 16-channel blocks: its inputs, attributes and tail.
struct Case {
  int64_t N, Ib, Ob, H, W;
  bool Bias;
  std::vector<std::string> Tail;
  Attrs Extra;   // pads, strides: a 1x1 conv unless K is set
  int64_t K = 1; // kernel height and width
};

struct Built {
  std::vector<Tensor> in, fusedIn;
  Attrs attrs, fused;
  PostOps post;
  Shape out;
};

/// Operands for the tail's names: "relu", "clip", "full" (a residual add),
/// "fullmul", "channel" (CHW16c add), "scalar" (multiply), "sigmoid".
Built build(std::mt19937 &G, const Case &C) {
  Built B;
  B.in = {
      toBlocked(randomF32(G, {C.N, C.Ib * kB, C.H, C.W}), "NCHW", "NCHW16c"),
      toBlocked(randomF32(G, {C.Ob * kB, C.Ib * kB, C.K, C.K}), "OIHW",
                "OIHW16i16o")};
  if (C.Bias)
    B.in.push_back(randomF32(G, {C.Ob * kB}));
  B.attrs = C.Extra;
  B.attrs.set("data_layout", std::string("NCHW16c"));
  B.attrs.set("kernel_layout", std::string("OIHW16i16o"));
  B.attrs.set("out_layout", std::string("NCHW16c"));
  B.out = run("conv2d_nchwc", B.in, B.attrs).shape();
  using K = PostOp::Kind;
  for (const std::string &T : C.Tail) {
    if (T == "relu")
      B.post.push_back(makePostOp(K::Relu, {}));
    else if (T == "clip")
      B.post.push_back(makePostOp(K::Clip, {{"min", -0.5}, {"max", 0.75}}));
    else if (T == "sigmoid")
      B.post.push_back(makePostOp(K::Sigmoid, {}));
    else if (T == "full")
      B.post.push_back(makePostOp(K::Add, {}, randomF32(G, B.out)));
    else if (T == "fullmul")
      B.post.push_back(makePostOp(K::Multiply, {}, randomF32(G, B.out)));
    else if (T == "channel")
      B.post.push_back(makePostOp(K::Add, {}, randomF32(G, {C.Ob, 1, 1, kB})));
    else if (T == "scalar")
      B.post.push_back(makePostOp(K::Multiply, {}, randomF32(G, {})));
    else
      ADD_FAILURE() << "unknown tail op " << T;
  }
  B.fused = B.attrs;
  B.fused.set("weights_constant", int64_t(1));
  encodePostOps(B.post, B.fused);
  B.fusedIn = B.in;
  for (const PostOp &Op : B.post)
    if (Op.isBinary())
      B.fusedIn.push_back(Op.operand);
  return B;
}

/// The reference conv and tail, and the conv's magnitude (the bound on the
/// error scales with it: the tail does not grow the error).
Tensor reference(const Built &B, double &Scale) {
  DnnlDisabledScope Off;
  Tensor Want = run("conv2d_nchwc", B.in, B.attrs);
  Scale = std::max(1.0, maxAbs(Want));
  applyPostOpsReference(Want, B.post);
  return Want;
}

/// Runs C through the fused kernel; Taken says whether our kernel must run
/// (else it must not), and the result must match either way.
void expectDirect(std::mt19937 &G, const Case &C, bool Taken) {
  SCOPED_TRACE(fmt::format("N{} {}->{} blocks {}x{} bias {} tail {}", C.N, C.Ib,
                           C.Ob, C.H, C.W, C.Bias, fmt::join(C.Tail, "+")));
  Built B = build(G, C);
  double Scale = 1;
  Tensor Want = reference(B, Scale);
  int64_t Before = directConvCalls();
  Tensor Got = run("dnnl.conv2d_nchwc_fused", B.fusedIn, B.fused);
  EXPECT_EQ(directConvCalls(), Before + (Taken ? 1 : 0));
  expectTensor(Got, Want, 0, 1e-5 * Scale);
}

TEST(BlockedDirectConv, OneByOneRandomShapesTailsAndThreads) {
  if (!cpuHasAvx512())
    GTEST_SKIP() << "the direct conv kernels run on AVX-512 only";
  std::mt19937 G(53);
  std::uniform_int_distribution<int64_t> Extent(1, 23), Blocks(1, 9),
      Batch(1, 3);
  const std::vector<std::vector<std::string>> Tails = {
      {},
      {"full"},
      {"full", "clip"},
      {"clip", "full"},
      {"channel", "scalar", "relu"},
      {"fullmul", "channel", "full", "relu"}};
  SettingScope<int64_t> AllSplit(convPartsMinWork, setConvPartsMinWork, 0);
  SettingScope<DirectConvChoice> Every(directConvChoice, setDirectConvChoice,
                                       DirectConvChoice::Always);
  int Cases = 0;
  for (int Threads : {1, 2, 3}) {
    SettingScope<int> T(numThreads, setNumThreads, Threads);
    for (int I = 0; I < 12; ++I, ++Cases) {
      Case C{Batch(G),
             Blocks(G),
             Blocks(G),
             Extent(G),
             Extent(G),
             I % 2 == 0,
             Tails[(size_t)I % Tails.size()],
             {}};
      expectDirect(G, C, true);
    }
    // Large enough for pixel ranges: one to five output blocks (every tile
    // shape), pixel counts off the tile sizes.
    for (int64_t Ob = 1; Ob <= 5; ++Ob, ++Cases)
      expectDirect(G, {1, 3, Ob, 19, 23, true, {"full", "relu"}, {}}, true);
    expectDirect(G, {2, 2, 2, 13, 11, false, {"clip"}, {}}, true);
  }
  EXPECT_GE(Cases, 50);
}

TEST(BlockedDirectConv, TakesOnlyWhatItCan) {
  if (!cpuHasAvx512())
    GTEST_SKIP() << "the direct conv kernels run on AVX-512 only";
  std::mt19937 G(59);
  Attrs Pad1{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  SettingScope<int> T(numThreads, setNumThreads, 2);
  SettingScope<int64_t> AllSplit(convPartsMinWork, setConvPartsMinWork, 0);
  {
    SettingScope<DirectConvChoice> Every(directConvChoice, setDirectConvChoice,
                                         DirectConvChoice::Always);
    expectDirect(G, {1, 2, 3, 9, 8, true, {"sigmoid"}, {}}, false);
    expectDirect(
        G, {1, 2, 3, 9, 8, true, {"full", "full", "full", "full", "relu"}, {}},
        false);
    expectDirect(
        G, {1, 2, 3, 9, 8, true, {}, {{"strides", std::vector<int64_t>{2, 2}}}},
        false);
    expectDirect(
        G,
        {1, 2, 3, 9, 8, true, {}, {{"pads", std::vector<int64_t>{1, 0, 0, 1}}}},
        false);
    expectDirect(G, {1, 2, 3, 9, 8, true, {"relu"}, {}}, true);
    // Output rows of 9 pixels: no row kernel.
    expectDirect(G, {1, 2, 3, 9, 9, true, {"relu"}, Pad1, 3}, false);
    expectDirect(G,
                 {1,
                  2,
                  3,
                  9,
                  9,
                  true,
                  {"relu"},
                  {{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                   {"strides", std::vector<int64_t>{2, 2}}},
                  3},
                 false);
  }
  // Auto: fewer than two output blocks per thread over the images, or an
  // image of at most 64 pixels.
  expectDirect(G, {1, 2, 1, 9, 8, true, {"full"}, {}}, true);
  expectDirect(G, {1, 2, 3, 9, 8, true, {"full"}, {}}, true);
  expectDirect(G, {1, 2, 4, 9, 8, true, {"full"}, {}}, false);
  expectDirect(G, {2, 2, 2, 9, 8, true, {"full"}, {}}, false);
  expectDirect(G, {1, 3, 6, 7, 7, true, {"full", "relu"}, {}}, true);
  expectDirect(G, {1, 3, 6, 7, 7, true, {"full", "relu"}, Pad1, 3}, true);
  expectDirect(G, {1, 3, 6, 14, 14, true, {"relu"}, Pad1, 3}, false);
  {
    SettingScope<int> One(numThreads, setNumThreads, 1);
    expectDirect(G, {1, 2, 1, 9, 8, true, {"full"}, {}}, false);
    expectDirect(G, {1, 2, 5, 8, 8, true, {"full"}, {}}, true);
  }
  {
    SettingScope<DirectConvChoice> Off(directConvChoice, setDirectConvChoice,
                                       DirectConvChoice::Off);
    expectDirect(G, {1, 2, 1, 9, 8, true, {"full"}, {}}, false);
  }
}

// KxK convs on images whose output rows are 7, 8 or 14 pixels wide: every
// remainder of rows, pads on any side, batches, threads and tails.
TEST(BlockedDirectConv, RowsRandomShapesTailsAndThreads) {
  if (!cpuHasAvx512())
    GTEST_SKIP() << "the direct conv kernels run on AVX-512 only";
  std::mt19937 G(67);
  std::uniform_int_distribution<int64_t> Rows(1, 9), Blocks(1, 4), Batch(1, 2),
      PadD(0, 2), K(1, 3);
  const std::vector<std::vector<std::string>> Tails = {
      {"channel", "full", "relu"}, {}, {"scalar", "clip"}, {"fullmul"}};
  SettingScope<int64_t> AllSplit(convPartsMinWork, setConvPartsMinWork, 0);
  SettingScope<DirectConvChoice> Every(directConvChoice, setDirectConvChoice,
                                       DirectConvChoice::Always);
  // Winograd's algorithm comes first for 3x3 convs where it pays.
  SettingScope<WinogradChoice> NoWinograd(winogradChoice, setWinogradChoice,
                                          WinogradChoice::Off);
  int Cases = 0;
  for (int Threads : {1, 2, 3}) {
    SettingScope<int> T(numThreads, setNumThreads, Threads);
    for (int64_t Wo : {7, 8, 14}) {
      for (int I = 0; I < 4; ++I, ++Cases) {
        int64_t Kk = K(G) | 1; // 1 or 3: padded 1x1 convs too
        std::vector<int64_t> Pads{PadD(G), PadD(G), PadD(G), PadD(G)};
        int64_t W = Wo + Kk - 1 - Pads[1] - Pads[3];
        int64_t H = Rows(G) + Kk - 1 - Pads[0] - Pads[2];
        if (W < 1 || H < 1 || (Kk == 1 && Pads == std::vector<int64_t>(4, 0)))
          continue;
        expectDirect(G,
                     {Batch(G),
                      Blocks(G),
                      Blocks(G),
                      H,
                      W,
                      I % 2 == 0,
                      Tails[(size_t)I % Tails.size()],
                      {{"pads", Pads}},
                      Kk},
                     true);
      }
    }
    // resnet18's last stage, fewer channels.
    Attrs Pad1{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    expectDirect(G, {1, 4, 5, 7, 7, true, {"full", "relu"}, Pad1, 3}, true);
  }
  EXPECT_GE(Cases, 25);
}

// The row kernel's pixel-by-pixel form (CPUs without AVX-512), through the
// conv kernel: every row width, padding and threads.
TEST(BlockedDirectConv, RowsPixelByPixel) {
  if (!cpuHasAvx512())
    GTEST_SKIP() << "the direct conv kernels run on AVX-512 only";
  std::mt19937 G(71);
  SettingScope<bool> Form(directConvBaseline, setDirectConvBaseline, true);
  SettingScope<DirectConvChoice> Every(directConvChoice, setDirectConvChoice,
                                       DirectConvChoice::Always);
  SettingScope<WinogradChoice> NoWinograd(winogradChoice, setWinogradChoice,
                                          WinogradChoice::Off);
  SettingScope<int> T(numThreads, setNumThreads, 2);
  Attrs Pad1{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  for (int64_t W : {7, 8, 14})
    expectDirect(G, {2, 2, 3, 5, W, true, {"full", "relu"}, Pad1, 3}, true);
  expectDirect(G, {1, 2, 3, 9, 8, true, {"channel", "clip"}, {}, 1}, true);
}

// The kernel on ranges that end off the tile sizes, in pieces that together
// cover the image, in its AVX-512 tiles (where the CPU has them) and its
// pixel-by-pixel form.
TEST(BlockedDirectConv, OneByOneKernelOnUnevenPixelRanges) {
  std::mt19937 G(61);
  for (auto [Ob, Baseline] : {std::pair<int64_t, bool>{1, false},
                              {2, false},
                              {3, false},
                              {4, false},
                              {7, false},
                              {3, true}}) {
    SCOPED_TRACE(fmt::format("{} output blocks{}", Ob,
                             Baseline ? ", pixel by pixel" : ""));
    SettingScope<bool> Form(directConvBaseline, setDirectConvBaseline,
                            Baseline || !cpuHasAvx512());
    Case C{1, 2, Ob, 9, 11, true, {"full", "clip"}, {}};
    Built B = build(G, C);
    double Scale = 1;
    Tensor Want = reference(B, Scale);
    Tensor Got = Tensor::empty(B.out, DType::Float32);
    DirectConvArgs A;
    A.x = B.in[0].data<float>();
    A.w = B.in[1].data<float>();
    A.bias = B.in[2].data<float>();
    A.out = Got.data<float>();
    A.inBlocks = C.Ib;
    A.outBlocks = Ob;
    A.outPixels = C.H * C.W;
    A.xBlockStride = A.outPixels * kB;
    A.tailOps = 2;
    A.tail[0] = {DirectConvArgs::TailOp::Kind::Add, OperandForm::Full,
                 B.post[0].operand.data<float>(), 0, 0};
    A.tail[1] = {DirectConvArgs::TailOp::Kind::Clamp, OperandForm::Scalar,
                 nullptr, -0.5f, 0.75f};
    for (auto [P0, P1] :
         {std::pair<int64_t, int64_t>{0, 5}, {5, 30}, {30, 31}, {31, 99}})
      directConvPixels(A, P0, P1);
    expectTensor(Got, Want, 0, 1e-5 * Scale);
  }
}

} // namespace
} // namespace rivet::test
