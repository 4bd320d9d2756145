//===- dnnl_anchors_test.cc - oneDNN anchors against the reference --------===//
//
// Every case runs twice: through the operator's library kernel (dnnl.conv,
// ...: what the VM calls) with oneDNN on, checking that oneDNN really ran
// (by its cache counters), and through its reference kernel (plain loops,
// no oneDNN). Fused kernels are compared with the anchor and the post-ops
// run one by one on the reference path.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/DnnlConfig.h"
#include "kernels/Threading.h"
#include "kernels/cpu/BlockedDirectConv.h"
#include "kernels/cpu/SmallGemm.h"
#include "kernels/dnnl/DnnlAnchors.h"
#include "kernels/dnnl/DnnlContext.h"

#include <fmt/format.h>

#include <atomic>
#include <random>
#include <thread>

// oneDNN's OpenMP runtime, loaded with libdnnl (weak: the test does not
// link it itself).
extern "C" int omp_get_max_threads() __attribute__((weak));

namespace rivet::test {
namespace {

/// These tests are about oneDNN's paths: the products small enough for
/// smallGemm (small_gemm_test.cc covers it) stay on oneDNN here.
class OneDnnProducts : public ::testing::Environment {
  void SetUp() override { setSmallGemmMaxWork(0); }
};
[[maybe_unused]] ::testing::Environment *const OneDnnOnly =
    ::testing::AddGlobalTestEnvironment(new OneDnnProducts);

/// Calls that took a fast path: oneDNN's primitives and sgemm, the
/// one-row dense's matrix-vector product and our direct conv kernels.
int64_t dnnlCalls() {
  DnnlCacheStats S = dnnlCacheStats();
  return S.primitivesCreated + S.primitiveHits + sgemmCalls() +
         denseGemvCalls() + directConvCalls();
}

/// Op on the reference path: a fused kernel with oneDNN off (its fallback),
/// an operator's reference kernel with oneDNN on, which it must not call
/// (the interpreter is the VM's independent oracle).
Tensor runReference(const std::string &Op, const std::vector<Tensor> &In,
                    const Attrs &A = {}) {
  if (!KernelRegistry::global().libraryKernel(Op)) {
    DnnlDisabledScope Off;
    return run(Op, In, A);
  }
  int64_t Before = dnnlCalls();
  Tensor R = run(Op, In, A);
  EXPECT_EQ(dnnlCalls(), Before)
      << "the reference kernel of " << Op << " called oneDNN";
  return R;
}

/// The kernel the VM calls for Op: its library kernel, or Op itself (the
/// fused kernels).
std::string vmKernel(const std::string &Op) {
  const KernelInfo *L = KernelRegistry::global().libraryKernel(Op);
  return L ? L->name : Op;
}

/// Runs Op's VM kernel with oneDNN on, expects oneDNN to have run and the
/// result to match the reference path.
void expectMatchesReference(const std::string &Op,
                            const std::vector<Tensor> &In, const Attrs &A,
                            const std::string &What) {
  SCOPED_TRACE(What);
  ASSERT_TRUE(dnnlEnabled());
  int64_t Before = dnnlCalls();
  Tensor Fast = run(vmKernel(Op), In, A);
  EXPECT_GT(dnnlCalls(), Before) << "oneDNN did not run";
  Tensor Ref = runReference(Op, In, A);
  expectTensor(Fast, Ref, 1e-4, 1e-4);
}

//===----------------------------------------------------------------------===//
// conv
//===----------------------------------------------------------------------===//

TEST(DnnlAnchors, ConvRandomShapes) {
  std::mt19937 G(7);
  auto Pick = [&](int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(G);
  };
  int Ran = 0;
  for (int Case = 0; Ran < 60 && Case < 1000; ++Case) {
    size_t R = (size_t)Pick(1, 3);
    int64_t N = Pick(1, 2), Group = 1, CG = Pick(1, 4), MG = Pick(1, 4);
    int64_t Kind = Pick(0, 2); // plain, grouped, depthwise
    if (Kind == 1)
      Group = Pick(2, 3);
    if (Kind == 2) {
      Group = Pick(2, 8);
      CG = 1;
      MG = Pick(1, 2);
    }
    Shape XS{N, CG * Group}, WS{MG * Group, CG};
    std::vector<int64_t> Strides, Dil, Pads(2 * R);
    bool Ok = true;
    for (size_t D = 0; D < R; ++D) {
      int64_t In = Pick(R == 3 ? 3 : 4, R == 3 ? 7 : 12), K = Pick(1, 3);
      Strides.push_back(Pick(1, 2));
      Dil.push_back(Pick(1, 2));
      Pads[D] = Pick(0, 2);
      Pads[D + R] = Pick(0, 2);
      XS.push_back(In);
      WS.push_back(K);
      Ok &= In + Pads[D] + Pads[D + R] >= (K - 1) * Dil.back() + 1;
    }
    if (!Ok)
      continue;
    ++Ran;
    Attrs A{{"strides", Strides},
            {"dilations", Dil},
            {"pads", Pads},
            {"group", Group}};
    std::vector<Tensor> In{randomF32(G, XS), randomF32(G, WS)};
    if (Pick(0, 1))
      In.push_back(randomF32(G, {MG * Group}));
    expectMatchesReference(
        "conv", In, A,
        fmt::format("x {} w {} strides {} dilations {} pads {} group {} "
                    "bias {}",
                    shapeToString(XS), shapeToString(WS),
                    fmt::join(Strides, ","), fmt::join(Dil, ","),
                    fmt::join(Pads, ","), Group, In.size() == 3));
  }
  EXPECT_EQ(Ran, 60);
}

TEST(DnnlAnchors, ConvAutoPad) {
  std::mt19937 G(3);
  for (const char *Mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    Attrs A{{"strides", std::vector<int64_t>{2, 2}}, {"auto_pad", Mode}};
    expectMatchesReference(
        "conv", {randomF32(G, {1, 3, 9, 8}), randomF32(G, {4, 3, 4, 3})}, A,
        Mode);
  }
}

TEST(DnnlAnchors, ConvResNetStem) {
  std::mt19937 G(5);
  Attrs A{{"strides", std::vector<int64_t>{2, 2}},
          {"pads", std::vector<int64_t>{3, 3, 3, 3}}};
  expectMatchesReference("conv",
                         {randomF32(G, {1, 3, 64, 64}),
                          randomF32(G, {16, 3, 7, 7}), randomF32(G, {16})},
                         A, "7x7 stride 2 stem");
}

// Two VMs on two threads run the same primitives at once: each execution
// needs its own scratchpad (Debian's oneDNN shares the library one).
TEST(DnnlAnchors, ConcurrentConvsFromTwoThreads) {
  std::mt19937 G(9);
  Attrs A{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  std::vector<Tensor> In = {randomF32(G, {1, 64, 28, 28}),
                            randomF32(G, {64, 64, 3, 3}), randomF32(G, {64})};
  Tensor Ref = runReference("conv", In, A);
  std::atomic<int> Mismatches{0};
  auto Work = [&] {
    for (int I = 0; I < 12; ++I)
      if (!allClose(run("dnnl.conv", In, A), Ref, 1e-4, 1e-4))
        ++Mismatches;
  };
  std::thread T1(Work), T2(Work);
  T1.join();
  T2.join();
  EXPECT_EQ(Mismatches.load(), 0);
}

TEST(DnnlAnchors, NonFloat32StaysOnReference) {
  std::mt19937 G(1);
  Tensor X = randomF32(G, {1, 2, 5, 5}).cast(DType::Float64);
  Tensor W = randomF32(G, {3, 2, 3, 3}).cast(DType::Float64);
  int64_t Before = dnnlCalls();
  Tensor R = run("dnnl.conv", {X, W});
  EXPECT_EQ(dnnlCalls(), Before);
  EXPECT_EQ(R.typeString(), "Tensor[(1, 3, 3, 3), float64]");
}

//===----------------------------------------------------------------------===//
// matmul, dense, gemm
//===----------------------------------------------------------------------===//

TEST(DnnlAnchors, MatMulShapes) {
  std::mt19937 G(11);
  std::vector<std::pair<Shape, Shape>> Cases = {{{3, 4}, {4, 5}},
                                                {{4}, {4, 3}},
                                                {{3, 4}, {4}},
                                                {{2, 3, 4}, {4, 5}},
                                                {{4, 5}, {2, 5, 3}},
                                                {{2, 1, 3, 4}, {5, 4, 6}},
                                                {{1, 3, 4}, {2, 4, 5}},
                                                {{2, 3, 4}, {1, 4, 5}},
                                                {{6, 2, 3}, {6, 3, 2}},
                                                {{64, 128}, {128, 96}},
                                                {{2, 2, 1, 7}, {1, 7, 9}},
                                                {{7}, {3, 7, 2}}};
  for (const auto &[SA, SB] : Cases)
    expectMatchesReference(
        "matmul", {randomF32(G, SA), randomF32(G, SB)}, {},
        fmt::format("{} @ {}", shapeToString(SA), shapeToString(SB)));
}

TEST(DnnlAnchors, Dense) {
  std::mt19937 G(13);
  for (const Shape &XS : {Shape{2, 3, 8}, Shape{8}, Shape{5, 8}})
    expectMatchesReference("dense", {randomF32(G, XS), randomF32(G, {6, 8})},
                           {}, shapeToString(XS));
}

struct GemmCase {
  std::vector<Tensor> inputs;
  Attrs attrs;
  std::string what;
};

/// gemm of an M x K and a K x N matrix, each stored transposed or not, with
/// every shape of c (alpha 0.5, beta 2), and without c (alpha 3).
std::vector<GemmCase> gemmCases(std::mt19937 &G, int64_t M, int64_t K,
                                int64_t N) {
  std::vector<GemmCase> Cases;
  for (int TA = 0; TA < 2; ++TA)
    for (int TB = 0; TB < 2; ++TB)
      for (const Shape &CS : {Shape{}, Shape{N}, Shape{M, 1}, Shape{M, N}})
        Cases.push_back(
            {{randomF32(G, TA ? Shape{K, M} : Shape{M, K}),
              randomF32(G, TB ? Shape{N, K} : Shape{K, N}), randomF32(G, CS)},
             Attrs{{"trans_a", (int64_t)TA},
                   {"trans_b", (int64_t)TB},
                   {"alpha", 0.5},
                   {"beta", 2.0}},
             fmt::format("gemm trans_a {} trans_b {} c {}", TA, TB,
                         shapeToString(CS))});
  Cases.push_back({{randomF32(G, {M, K}), randomF32(G, {K, N})},
                   Attrs{{"alpha", 3.0}},
                   "gemm, no c"});
  return Cases;
}

TEST(DnnlAnchors, Gemm) {
  std::mt19937 G(17);
  for (const GemmCase &C : gemmCases(G, 5, 7, 4))
    expectMatchesReference("gemm", C.inputs, C.attrs, C.what);
}

// A large product with nothing fused runs on oneDNN's sgemm (plain or
// transposed operands, gemm's alpha and beta * c); a batch, a small
// product, a fused tail or packed weights keep the matmul primitive.
TEST(DnnlAnchors, LargePlainProductsRunOnSgemm) {
  std::mt19937 G(19);
  auto Expect = [&](const std::string &Op, const std::vector<Tensor> &In,
                    const Attrs &A, bool Sgemm, const std::string &What) {
    for (int Threads : {1, 2}) {
      SettingScope<int> T(numThreads, setNumThreads, Threads);
      int64_t Before = sgemmCalls();
      expectMatchesReference(Op, In, A,
                             fmt::format("{}, {} threads", What, Threads));
      EXPECT_EQ(sgemmCalls() > Before, Sgemm) << What;
    }
  };
  Expect("matmul", {randomF32(G, {64, 128}), randomF32(G, {128, 96})}, {}, true,
         "64x128 @ 128x96");
  Expect("matmul", {randomF32(G, {1, 64, 128}), randomF32(G, {128, 96})}, {},
         true, "a unit batch axis");
  Expect("matmul", {randomF32(G, {2, 64, 128}), randomF32(G, {128, 96})}, {},
         false, "a batch of two");
  Expect("matmul", {randomF32(G, {3, 4}), randomF32(G, {4, 5})}, {}, false,
         "a small product");
  Expect("dense", {randomF32(G, {2, 40, 80}), randomF32(G, {96, 80})}, {}, true,
         "dense, runtime weights (transposed)");
  for (const GemmCase &C : gemmCases(G, 48, 80, 96))
    Expect("gemm", C.inputs, C.attrs, true, C.what);
}

//===----------------------------------------------------------------------===//
// Fused kernels
//===----------------------------------------------------------------------===//

/// Anchor then post-ops, each as its own reference kernel.
Tensor composedReference(const std::string &Anchor,
                         const std::vector<Tensor> &In, const Attrs &A,
                         const PostOps &P) {
  Tensor R = runReference(Anchor, In, A);
  for (const PostOp &Op : P) {
    Attrs OA;
    if (Op.kind == PostOp::Kind::Clip)
      OA = {{"min", Op.lo}, {"max", Op.hi}};
    std::vector<Tensor> Args{R};
    if (Op.isBinary())
      Args.push_back(Op.operand);
    R = run(postOpName(Op.kind), Args, OA);
  }
  return R;
}

/// Runs the fused kernel (oneDNN on) and compares with the composition.
void expectFusedMatches(const std::string &Fused, const std::string &Anchor,
                        const std::vector<Tensor> &AnchorIn,
                        const Attrs &AnchorAttrs, const PostOps &P,
                        bool ExpectDnnl, const std::string &What) {
  SCOPED_TRACE(What);
  Attrs A = AnchorAttrs;
  encodePostOps(P, A);
  std::vector<Tensor> In = AnchorIn;
  for (const PostOp &Op : P)
    if (Op.isBinary())
      In.push_back(Op.operand);
  int64_t Before = dnnlCalls();
  Tensor Got = run(Fused, In, A);
  if (ExpectDnnl) {
    EXPECT_GT(dnnlCalls(), Before) << "oneDNN did not run";
  }
  expectTensor(Got, composedReference(Anchor, AnchorIn, AnchorAttrs, P), 1e-4,
               1e-4);
  // The fused kernel's own fallback (oneDNN off) agrees too.
  DnnlDisabledScope Off;
  expectTensor(run(Fused, In, A),
               composedReference(Anchor, AnchorIn, AnchorAttrs, P), 1e-5, 1e-5);
}

PostOp unary(PostOp::Kind K) { return makePostOp(K, {}); }
PostOp clip(double Lo, double Hi) {
  return makePostOp(PostOp::Kind::Clip, {{"min", Lo}, {"max", Hi}});
}
PostOp binary(PostOp::Kind K, Tensor T) { return makePostOp(K, {}, T); }

TEST(DnnlFused, ConvTails) {
  std::mt19937 G(19);
  int64_t M = 8;
  Shape XS{2, 4, 10, 9}, WS{M, 4, 3, 3}, OS{2, M, 10, 9};
  Attrs A{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  std::vector<Tensor> In{randomF32(G, XS), randomF32(G, WS)};
  std::vector<Tensor> InBias{In[0], In[1], randomF32(G, {M})};
  using K = PostOp::Kind;
  expectFusedMatches("dnnl.conv_fused", "conv", In, A, {unary(K::Relu)}, true,
                     "relu");
  expectFusedMatches("dnnl.conv_fused", "conv", In, A,
                     {binary(K::Add, randomF32(G, {M, 1, 1})), unary(K::Relu)},
                     true, "per-channel add, relu");
  expectFusedMatches("dnnl.conv_fused", "conv", InBias, A,
                     {binary(K::Multiply, randomF32(G, {1, M, 1, 1})),
                      binary(K::Add, randomF32(G, {M, 1, 1})), clip(0, 0.5)},
                     true,
                     "bias, batch-norm as multiply/add, relu6-style clip");
  expectFusedMatches("dnnl.conv_fused", "conv", InBias, A,
                     {binary(K::Add, randomF32(G, OS)), unary(K::Relu)}, true,
                     "residual add, relu");
  // ResNet's block end: the folded batch-norm shift (taken as the bias), the
  // residual (oneDNN's sum post-op), relu; and two residual-shaped adds
  // (only the first can be the sum).
  expectFusedMatches("dnnl.conv_fused", "conv", In, A,
                     {binary(K::Add, randomF32(G, {1, M, 1, 1})),
                      binary(K::Add, randomF32(G, OS)), unary(K::Relu)},
                     true, "per-channel add, residual add, relu");
  expectFusedMatches(
      "dnnl.conv_fused", "conv", InBias, A,
      {binary(K::Add, randomF32(G, OS)), binary(K::Add, randomF32(G, OS))},
      false, "two residual adds");
  expectFusedMatches("dnnl.conv_fused", "conv", In, A,
                     {binary(K::Multiply, randomF32(G, {})), unary(K::Sigmoid),
                      unary(K::Tanh)},
                     true, "scalar multiply, sigmoid, tanh");
  // Broadcast along a spatial axis only: correct either way (oneDNN may
  // or may not express it).
  expectFusedMatches("dnnl.conv_fused", "conv", In, A,
                     {binary(K::Add, randomF32(G, {1, 1, 10, 1}))}, false,
                     "row-wise add");
}

TEST(DnnlFused, ConvDepthwiseTail) {
  std::mt19937 G(23);
  Attrs A{{"pads", std::vector<int64_t>{1, 1, 1, 1}},
          {"strides", std::vector<int64_t>{2, 2}},
          {"group", int64_t(16)}};
  std::vector<Tensor> In{randomF32(G, {1, 16, 14, 14}),
                         randomF32(G, {16, 1, 3, 3}), randomF32(G, {16})};
  expectFusedMatches("dnnl.conv_fused", "conv", In, A, {clip(0, 6)}, true,
                     "depthwise, relu6");
}

/// X, Wt and B for conv2d_nchwc: NCHW{IB}c, OIHW{KB}i{OB}o, plain [M].
std::vector<Tensor> blockedConvInputs(std::mt19937 &G, const Shape &XS,
                                      const Shape &WS, int64_t IB, int64_t KB,
                                      int64_t OB, bool Bias) {
  Attrs ToData{{"src_layout", std::string("NCHW")},
               {"dst_layout", fmt::format("NCHW{}c", IB)}};
  Attrs ToKernel{{"src_layout", std::string("OIHW")},
                 {"dst_layout", fmt::format("OIHW{}i{}o", KB, OB)}};
  std::vector<Tensor> In{run("layout_transform", {randomF32(G, XS)}, ToData),
                         run("layout_transform", {randomF32(G, WS)}, ToKernel)};
  if (Bias)
    In.push_back(randomF32(G, {WS[0]}));
  return In;
}

Attrs blockedConvAttrs(Attrs A, int64_t IB, int64_t KB, int64_t OB) {
  A.set("data_layout", fmt::format("NCHW{}c", IB));
  A.set("kernel_layout", fmt::format("OIHW{}i{}o", KB, OB));
  A.set("out_layout", fmt::format("NCHW{}c", OB));
  return A;
}

// conv2d_nchwc on oneDNN in place: per-channel operands come as CHW8c,
// residuals blocked like the output.
TEST(DnnlFused, BlockedConvTails) {
  std::mt19937 G(29);
  using K = PostOp::Kind;
  const char *F = "dnnl.conv2d_nchwc_fused", *Anchor = "conv2d_nchwc";
  Attrs A =
      blockedConvAttrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, 8, 8, 8);
  std::vector<Tensor> In =
      blockedConvInputs(G, {2, 16, 10, 9}, {24, 16, 3, 3}, 8, 8, 8, false);
  std::vector<Tensor> InBias =
      blockedConvInputs(G, {2, 16, 10, 9}, {24, 16, 3, 3}, 8, 8, 8, true);
  Shape OS{2, 3, 10, 9, 8}, PerChannel{3, 1, 1, 8};
  expectFusedMatches(F, Anchor, In, A, {unary(K::Relu)}, true, "relu");
  expectFusedMatches(F, Anchor, In, A,
                     {binary(K::Add, randomF32(G, PerChannel)),
                      binary(K::Add, randomF32(G, OS)), unary(K::Relu)},
                     true, "per-channel add as bias, residual, relu");
  expectFusedMatches(F, Anchor, InBias, A,
                     {binary(K::Multiply, randomF32(G, {1, 3, 1, 1, 8})),
                      binary(K::Add, randomF32(G, PerChannel)), clip(0, 0.5)},
                     true, "bias, per-channel multiply and add, clip");
  expectFusedMatches(
      F, Anchor, InBias, A,
      {binary(K::Add, randomF32(G, OS)), binary(K::Add, randomF32(G, OS))},
      false, "two residual adds");
  expectFusedMatches(F, Anchor, In, A,
                     {binary(K::Multiply, randomF32(G, {})), unary(K::Sigmoid)},
                     true, "scalar multiply, sigmoid");
  expectFusedMatches(F, Anchor, In, A,
                     {binary(K::Add, randomF32(G, {1, 1, 10, 1, 1}))}, false,
                     "row-wise add");
  expectFusedMatches(F, Anchor, In, A,
                     {binary(K::Add, randomF32(G, {1, 3, 10, 1, 8}))}, false,
                     "per-channel rows: no plain order, refused or blocked");
}

TEST(DnnlFused, BlockedImageAndDepthwiseConvs) {
  std::mt19937 G(31);
  using K = PostOp::Kind;
  const char *F = "dnnl.conv2d_nchwc_fused", *Anchor = "conv2d_nchwc";
  Attrs Image = blockedConvAttrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                                  {"strides", std::vector<int64_t>{2, 2}}},
                                 1, 1, 8);
  expectFusedMatches(
      F, Anchor,
      blockedConvInputs(G, {1, 3, 15, 14}, {16, 3, 3, 3}, 1, 1, 8, true), Image,
      {unary(K::Relu)}, true, "image, bias, relu");
  Attrs Dw = blockedConvAttrs(
      {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", int64_t(24)}}, 8,
      1, 8);
  expectFusedMatches(
      F, Anchor,
      blockedConvInputs(G, {1, 24, 9, 9}, {24, 1, 3, 3}, 8, 1, 8, false), Dw,
      {binary(K::Add, randomF32(G, {3, 1, 1, 8})), clip(0, 6)}, true,
      "depthwise, per-channel add, relu6");
  // Groups that are not depthwise: the reference path.
  Attrs G2 = blockedConvAttrs({{"group", int64_t(2)}}, 8, 1, 8);
  expectFusedMatches(
      F, Anchor,
      blockedConvInputs(G, {1, 16, 5, 5}, {16, 8, 1, 1}, 8, 1, 8, false), G2,
      {unary(K::Relu)}, false, "two groups");
}

// On several threads blocked convs run as parts (ranges of images and
// output channel blocks) on the runtime's pool; the threshold is lowered so
// that these small convs split too. Uneven ranges, batches, depthwise and
// image convs, 16-channel blocks, and every kind of post-op operand. The
// 16-channel 1x1 convs here are oneDNN's too (our direct kernels off).
TEST(DnnlFused, BlockedConvsAsParts) {
  std::mt19937 G(37);
  using K = PostOp::Kind;
  const char *F = "dnnl.conv2d_nchwc_fused", *Anchor = "conv2d_nchwc";
  SettingScope<int64_t> AllSplit(convPartsMinWork, setConvPartsMinWork, 0);
  SettingScope<DirectConvChoice> OneDnnOnly(
      directConvChoice, setDirectConvChoice, DirectConvChoice::Off);
  for (int Threads : {2, 3}) {
    SettingScope<int> T(numThreads, setNumThreads, Threads);
    auto Expect = [&](const std::vector<Tensor> &In, const Attrs &A,
                      const PostOps &P, const std::string &What) {
      int64_t Before = convPartsCalls();
      expectFusedMatches(F, Anchor, In, A, P, true,
                         fmt::format("{}, {} threads", What, Threads));
      EXPECT_GT(convPartsCalls(), Before) << What << ": not run as parts";
    };
    Attrs A8 =
        blockedConvAttrs({{"pads", std::vector<int64_t>{1, 0, 1, 2}}}, 8, 8, 8);
    // 5 output blocks: ranges of 2 and 3 blocks.
    std::vector<Tensor> In =
        blockedConvInputs(G, {1, 16, 9, 7}, {40, 16, 3, 2}, 8, 8, 8, true);
    Shape OS{1, 5, 9, 8, 8};
    Expect(In, A8,
           {binary(K::Add, randomF32(G, {5, 1, 1, 8})),
            binary(K::Add, randomF32(G, OS)), unary(K::Relu)},
           "bias, per-channel add, residual, relu");
    Expect(In, A8,
           {binary(K::Multiply, randomF32(G, {1, 5, 1, 1, 8})),
            binary(K::Add, randomF32(G, {})), clip(0, 0.5)},
           "per-channel multiply, scalar add, clip");
    // Batches: parts over images, and over images and blocks.
    Expect(blockedConvInputs(G, {3, 8, 6, 6}, {24, 8, 1, 1}, 8, 8, 8, false),
           blockedConvAttrs({}, 8, 8, 8),
           {binary(K::Add, randomF32(G, {3, 3, 6, 6, 8})), unary(K::Sigmoid)},
           "batch 3, residual, sigmoid");
    Expect(blockedConvInputs(G, {2, 16, 5, 6}, {32, 16, 1, 1}, 8, 8, 8, true),
           blockedConvAttrs({{"strides", std::vector<int64_t>{2, 2}}}, 8, 8, 8),
           {binary(K::Add, randomF32(G, {2, 4, 3, 3, 8})),
            binary(K::Multiply, randomF32(G, {4, 1, 1, 8})), unary(K::Tanh)},
           "batch 2, stride 2, residual, per-channel multiply, tanh");
    Expect(
        blockedConvInputs(G, {1, 32, 5, 5}, {64, 32, 3, 1}, 16, 16, 16, true),
        blockedConvAttrs({{"pads", std::vector<int64_t>{1, 0, 1, 0}}}, 16, 16,
                         16),
        {unary(K::Relu)}, "16-channel blocks");
    Expect(blockedConvInputs(G, {1, 3, 11, 10}, {32, 3, 3, 3}, 1, 1, 8, true),
           blockedConvAttrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                             {"strides", std::vector<int64_t>{2, 2}}},
                            1, 1, 8),
           {clip(0, 6)}, "image");
    // Depthwise, 5 blocks in 4 ranges: each part reads its own channels.
    Expect(blockedConvInputs(G, {1, 40, 9, 9}, {40, 1, 3, 3}, 8, 1, 8, false),
           blockedConvAttrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                             {"strides", std::vector<int64_t>{2, 2}},
                             {"group", int64_t(40)}},
                            8, 1, 8),
           {binary(K::Add, randomF32(G, {5, 1, 1, 8})), clip(0, 6)},
           "depthwise, per-channel add, relu6");
    Expect(blockedConvInputs(G, {2, 16, 6, 5}, {16, 1, 3, 3}, 8, 1, 8, true),
           blockedConvAttrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                             {"group", int64_t(16)}},
                            8, 1, 8),
           {binary(K::Add, randomF32(G, {2, 2, 6, 5, 8})), unary(K::Relu)},
           "depthwise, batch 2, bias, residual, relu");
    // Too few output blocks for the threads: the input channels split
    // (batch 1), adds into the first part, activations after the sum.
    Expect(
        blockedConvInputs(G, {1, 64, 6, 5}, {16, 64, 1, 1}, 16, 16, 16, true),
        blockedConvAttrs({}, 16, 16, 16),
        {binary(K::Add, randomF32(G, {1, 1, 6, 5, 16})), clip(0, 6)},
        "one output block, bias, residual, relu6");
    Expect(
        blockedConvInputs(G, {1, 40, 7, 6}, {24, 40, 3, 3}, 8, 8, 8, false),
        blockedConvAttrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, 8, 8, 8),
        {binary(K::Add, randomF32(G, {3, 1, 1, 8})),
         binary(K::Add, randomF32(G, {})), unary(K::Tanh)},
        "three output blocks from five, per-channel and scalar adds, tanh");
    // A multiply does not distribute over the parts' sums: one call.
    {
      int64_t Before = convPartsCalls();
      expectFusedMatches(
          F, Anchor,
          blockedConvInputs(G, {1, 32, 5, 5}, {8, 32, 1, 1}, 8, 8, 8, true),
          blockedConvAttrs({}, 8, 8, 8),
          {binary(K::Multiply, randomF32(G, {1, 1, 1, 8})), unary(K::Relu)},
          true, "one output block, multiply");
      EXPECT_EQ(convPartsCalls(), Before);
    }
    // No images: nothing to split (and nothing for oneDNN to run).
    expectFusedMatches(
        F, Anchor,
        blockedConvInputs(G, {0, 16, 5, 5}, {32, 16, 1, 1}, 8, 8, 8, true),
        blockedConvAttrs({}, 8, 8, 8), {unary(K::Relu)}, false, "batch 0");
  }
}

TEST(DnnlFused, ConvPartRangesKeepThreadsBusy) {
  // 6 output blocks on two threads: 2 ranges of 3 blocks; 4 ranges (1, 2,
  // 1, 2) or 3 (2, 2, 2) leave a thread idle while the other runs a part.
  EXPECT_EQ(balancedPartRanges(6, 1, 2, 4), 2);
  EXPECT_EQ(balancedPartRanges(6, 1, 2, 3), 2);
  EXPECT_EQ(balancedPartRanges(10, 1, 2, 4), 2); // not 2, 3, 2, 3
  // Of equally fast cuts the most ranges.
  EXPECT_EQ(balancedPartRanges(12, 1, 2, 4), 4);
  EXPECT_EQ(balancedPartRanges(9, 1, 2, 4), 4); // 2, 2, 2, 3 as 4, 5
  EXPECT_EQ(balancedPartRanges(5, 1, 3, 6), 5);
  // Images are parts too: 2 x (1, 2) blocks take 4 on two threads, 2 x 3
  // take 3.
  EXPECT_EQ(balancedPartRanges(3, 2, 2, 2), 1);
  EXPECT_EQ(balancedPartRanges(4, 2, 2, 2), 2);
  // One block, or no room for a second range.
  EXPECT_EQ(balancedPartRanges(1, 1, 2, 4), 1);
  EXPECT_EQ(balancedPartRanges(6, 1, 2, 1), 1);
  EXPECT_EQ(balancedPartRanges(6, 1, 2, 0), 1);
}

TEST(DnnlFused, MatMulAndDenseTails) {
  std::mt19937 G(29);
  using K = PostOp::Kind;
  expectFusedMatches("dnnl.matmul_fused", "matmul",
                     {randomF32(G, {2, 6, 5}), randomF32(G, {5, 7})}, {},
                     {binary(K::Add, randomF32(G, {7})), unary(K::Tanh)}, true,
                     "batched matmul, bias, tanh");
  expectFusedMatches(
      "dnnl.matmul_fused", "matmul",
      {randomF32(G, {6, 5}), randomF32(G, {3, 5, 7})}, {},
      {binary(K::Multiply, randomF32(G, {3, 6, 7})), unary(K::Relu)}, true,
      "broadcast weights batch, full multiply");
  expectFusedMatches("dnnl.dense_fused", "dense",
                     {randomF32(G, {2, 3, 8}), randomF32(G, {5, 8})}, {},
                     {binary(K::Add, randomF32(G, {5})), unary(K::Relu)}, true,
                     "dense, bias, relu");
  expectFusedMatches("dnnl.dense_fused", "dense",
                     {randomF32(G, {2, 3, 8}), randomF32(G, {5, 8})}, {},
                     {binary(K::Add, randomF32(G, {3, 1}))}, false,
                     "dense, add along a flattened axis");
}

// On several threads a dense runs as parts: ranges of rows, or of whole
// 64-column blocks when it has few rows (the last part takes the rest);
// bias and tail operands are sliced with them, or the call does not split.
TEST(DnnlFused, TailsAndPackedWeightsKeepThePrimitive) {
  std::mt19937 G(29);
  using K = PostOp::Kind;
  int64_t Before = sgemmCalls();
  expectFusedMatches("dnnl.matmul_fused", "matmul",
                     {randomF32(G, {64, 128}), randomF32(G, {128, 96})}, {},
                     {unary(K::Relu)}, true, "matmul, relu");
  for (bool Constant : {false, true})
    expectFusedMatches(
        "dnnl.dense_fused", "dense",
        {randomF32(G, {64, 128}), randomF32(G, {96, 128})},
        {{"weights_constant", int64_t(Constant)}},
        Constant ? PostOps{} : PostOps{binary(K::Add, randomF32(G, {96}))},
        true, Constant ? "dense, packed weights" : "dense, bias");
  EXPECT_EQ(sgemmCalls(), Before);
}

TEST(DnnlFused, DenseAsParts) {
  std::mt19937 G(41);
  using K = PostOp::Kind;
  const char *F = "dnnl.dense_fused", *Anchor = "dense";
  SettingScope<int64_t> AllSplit(densePartsMinWork, setDensePartsMinWork, 0);
  for (int Threads : {2, 3}) {
    SettingScope<int> T(numThreads, setNumThreads, Threads);
    auto Expect = [&](const std::vector<Tensor> &In, const PostOps &P,
                      bool Parts, const std::string &What) {
      int64_t Before = densePartsCalls();
      for (bool Constant : {false, true}) {
        Attrs A{{"weights_constant", int64_t(Constant)}};
        expectFusedMatches(F, Anchor, In, A, P, true,
                           fmt::format("{}, {} threads, {} weights", What,
                                       Threads,
                                       Constant ? "constant" : "runtime"));
      }
      EXPECT_EQ(densePartsCalls() > Before, Parts) << What;
    };
    // Columns: 200 = 3 blocks of 64 and 8 more (uneven ranges). Three rows
    // of a w too large to stay in cache (fewer rows, or a smaller w, would
    // be matrix-vector products).
    Expect({randomF32(G, {3, 600}), randomF32(G, {200, 600})},
           {binary(K::Add, randomF32(G, {200})), unary(K::Relu)}, true,
           "three rows, bias, relu");
    Expect({randomF32(G, {3, 600}), randomF32(G, {130, 600})},
           {binary(K::Add, randomF32(G, {1, 130})),
            binary(K::Multiply, randomF32(G, {})), clip(-1, 1)},
           true, "three rows (strided columns), bias, scalar multiply, clip");
    Expect({randomF32(G, {3, 600}), randomF32(G, {130, 600})},
           {binary(K::Add, randomF32(G, {3, 130}))}, false,
           "three rows, full-size operand (columns of it are strided)");
    Expect({randomF32(G, {3, 600}), randomF32(G, {130, 600})},
           {binary(K::Add, randomF32(G, {3, 1})), unary(K::Tanh)}, true,
           "three rows, per-row add");
    // Rows, leading axes flattened.
    Expect({randomF32(G, {4, 7, 9}), randomF32(G, {11, 9})},
           {binary(K::Add, randomF32(G, {11})),
            binary(K::Add, randomF32(G, {4, 7, 11})), unary(K::Sigmoid)},
           true, "28 rows, bias, residual, sigmoid");
    Expect({randomF32(G, {4, 7, 9}), randomF32(G, {11, 9})},
           {binary(K::Multiply, randomF32(G, {4, 7, 1}))}, true,
           "28 rows, per-row multiply");
    Expect({randomF32(G, {2, 3, 8}), randomF32(G, {5, 8})},
           {binary(K::Add, randomF32(G, {3, 1}))}, false,
           "an operand along one of the flattened axes");
  }
}

// A dense whose x has one row is a matrix-vector product (DenseGemv.h):
// four rows of w at a time and the rest one by one, 16 columns at a time
// and the rest one by one, in ranges of columns on the pool, with or
// without bias and tails.
TEST(DnnlFused, OneRowDenseIsAMatrixVectorProduct) {
  std::mt19937 G(43);
  using K = PostOp::Kind;
  const char *F = "dnnl.dense_fused", *Anchor = "dense";
  SettingScope<int64_t> AllSplit(densePartsMinWork, setDensePartsMinWork, 0);
  for (int Threads : {1, 2, 3}) {
    SettingScope<int> T(numThreads, setNumThreads, Threads);
    for (auto [Rows, Cols] : {std::pair<int64_t, int64_t>{1000, 1280},
                              {7, 16},
                              {5, 37},
                              {130, 100},
                              {1, 3},
                              {9, 1}})
      for (const Shape &XS : {Shape{1, Cols}, Shape{Cols}, Shape{1, 1, Cols}}) {
        Shape OS = XS;
        OS.back() = Rows;
        std::vector<Tensor> In{randomF32(G, XS), randomF32(G, {Rows, Cols})};
        std::string What = fmt::format("x {}, w {}x{}, {} threads",
                                       shapeToString(XS), Rows, Cols, Threads);
        int64_t Before = denseGemvCalls(), Parts = densePartsCalls();
        expectFusedMatches(F, Anchor, In, {}, {}, true, What + ", no tail");
        expectFusedMatches(F, Anchor, In, {{"weights_constant", int64_t(1)}},
                           {binary(K::Add, randomF32(G, {Rows})),
                            binary(K::Add, randomF32(G, OS)), unary(K::Relu)},
                           true, What + ", bias, residual, relu");
        expectFusedMatches(F, Anchor, In, {},
                           {binary(K::Multiply, randomF32(G, {})),
                            binary(K::Add, randomF32(G, {Rows})), clip(-1, 1)},
                           true, What + ", scalar multiply, bias, clip");
        EXPECT_EQ(denseGemvCalls(), Before + 3) << What;
        EXPECT_EQ(densePartsCalls(), Parts) << What;
      }
  }
  // A few rows (an RNN step's batch) are as many products: two whatever w,
  // up to eight while w stays in cache (64K values).
  for (auto [M, Rows, Cols] :
       {std::tuple<int64_t, int64_t, int64_t>{2, 1000, 1280},
        {2, 30, 40},
        {3, 130, 100},
        {8, 7, 16},
        {5, 9, 1}}) {
    std::string What = fmt::format("x {}x{}, w {}x{}", M, Cols, Rows, Cols);
    int64_t Before = denseGemvCalls();
    expectFusedMatches(
        F, Anchor, {randomF32(G, {M, Cols}), randomF32(G, {Rows, Cols})}, {},
        {binary(K::Add, randomF32(G, {Rows}))}, true, What + ", bias");
    EXPECT_EQ(denseGemvCalls(), Before + 1) << What;
  }
  // More rows, or three of a large w, keep oneDNN.
  for (auto [M, Rows, Cols] :
       {std::tuple<int64_t, int64_t, int64_t>{9, 30, 40}, {3, 300, 300}}) {
    int64_t Before = denseGemvCalls();
    expectFusedMatches(F, Anchor,
                       {randomF32(G, {M, Cols}), randomF32(G, {Rows, Cols})},
                       {}, {binary(K::Add, randomF32(G, {Rows}))}, true,
                       fmt::format("{} rows of {}x{}", M, Rows, Cols));
    EXPECT_EQ(denseGemvCalls(), Before);
  }
}

TEST(DnnlFused, ShapeFunctionRejectsGrowingOperand) {
  std::mt19937 G(31);
  PostOps P{binary(PostOp::Kind::Add, randomF32(G, {2, 3, 4}))};
  Attrs A;
  encodePostOps(P, A);
  expectError(
      [&] {
        run("dnnl.matmul_fused",
            {randomF32(G, {3, 5}), randomF32(G, {5, 4}), P[0].operand}, A);
      },
      "does not broadcast to the anchor's output");
  expectError(
      [&] {
        run("dnnl.matmul_fused", {randomF32(G, {3, 5}), randomF32(G, {5, 4})},
            A);
      },
      "post-op operands");
}

//===----------------------------------------------------------------------===//
// Caches and threads
//===----------------------------------------------------------------------===//

TEST(DnnlCaches, RepeatedShapesReusePrimitives) {
  std::mt19937 G(37);
  Tensor X = randomF32(G, {1, 8, 16, 16}), W = randomF32(G, {8, 8, 3, 3});
  Attrs A{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  run("dnnl.conv", {X, W}, A); // warm up
  DnnlCacheStats S0 = dnnlCacheStats();
  for (int I = 0; I < 5; ++I)
    run("dnnl.conv", {randomF32(G, {1, 8, 16, 16}), W}, A);
  DnnlCacheStats S1 = dnnlCacheStats();
  EXPECT_EQ(S1.primitivesCreated, S0.primitivesCreated);
  EXPECT_GE(S1.primitiveHits - S0.primitiveHits, 5);
}

TEST(DnnlCaches, ConstantWeightsReorderedOnce) {
  std::mt19937 G(41);
  Attrs A{{"pads", std::vector<int64_t>{1, 1, 1, 1}},
          {"weights_constant", int64_t(1)}};
  encodePostOps({}, A);
  Tensor W = randomF32(G, {16, 16, 3, 3});
  std::vector<Tensor> In{randomF32(G, {1, 16, 12, 12}), W};
  Attrs Plain{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  Tensor First = run("dnnl.conv_fused", In, A);
  DnnlCacheStats S0 = dnnlCacheStats();
  Tensor Second = run("dnnl.conv_fused", In, A);
  DnnlCacheStats S1 = dnnlCacheStats();
  EXPECT_EQ(S1.weightReorders, S0.weightReorders);
  expectTensor(Second, First, 0, 0);
  expectTensor(Second, runReference("conv", In, Plain), 1e-4, 1e-4);
  // New weights in a new buffer (possibly at the old address once W dies)
  // are never served from the cache.
  W = Tensor();
  In[1] = randomF32(G, {16, 16, 3, 3});
  expectTensor(run("dnnl.conv_fused", In, A), runReference("conv", In, Plain),
               1e-4, 1e-4);
}

// A dense with constant weights reads them in oneDNN's packed layout (a
// hot GEMV 1x1280 @ 1280x1000 took 0.19 ms on the transposed weights, 0.08
// packed): packed at most once per weight buffer, for one row or several,
// with a bias and an activation, and never served stale for new weights.
TEST(DnnlCaches, ConstantDenseWeightsPackedOnce) {
  std::mt19937 G(43);
  using K = PostOp::Kind;
  // Products this small run on smallGemm, and up to 8 rows as
  // matrix-vector products: 16 rows with smallGemm off reach
  // oneDNN's matmul. (Rows of 2 and 5 once did; on an AVX-512 host, where
  // only this expectation applies, they had not for a while.)
  SettingScope<int64_t> OneDnn(smallGemmMaxWork, setSmallGemmMaxWork, 0);
  for (int64_t Rows : {1, 16}) {
    SCOPED_TRACE(fmt::format("{} rows", Rows));
    Tensor W = randomF32(G, {96, 72});
    PostOps P = {binary(K::Add, randomF32(G, {96})), unary(K::Relu)};
    Attrs A{{"weights_constant", int64_t(1)}};
    encodePostOps(P, A);
    std::vector<Tensor> In{randomF32(G, {Rows, 72}), W, P[0].operand};
    Tensor Want = composedReference("dense", {In[0], W}, {}, P);
    dnnlClearCaches();
    DnnlCacheStats Before = dnnlCacheStats();
    Tensor First = run("dnnl.dense_fused", In, A);
    DnnlCacheStats S0 = dnnlCacheStats();
    // One copy, or none where oneDNN's layout is the transposed one we pass
    // (an AVX2 host's gemm-based matmul may take it as it is).
    int64_t Copies = S0.weightReorders - Before.weightReorders;
    EXPECT_LE(Copies, 1);
    if (Rows == 1) {
      EXPECT_EQ(Copies, 0); // a matrix-vector product reads w as it is
    } else if (__builtin_cpu_supports("avx512f")) {
      EXPECT_EQ(Copies, 1); // oneDNN's AVX-512 matmul packs its weights
    }
    Tensor Second = run("dnnl.dense_fused", In, A);
    DnnlCacheStats S1 = dnnlCacheStats();
    EXPECT_EQ(S1.weightReorders, S0.weightReorders);
    if (Copies == 1) {
      EXPECT_GT(S1.weightHits, S0.weightHits);
    }
    expectTensor(First, Want, 1e-4, 1e-4);
    expectTensor(Second, First, 0, 0);
    W = Tensor();
    In[1] = randomF32(G, {96, 72});
    expectTensor(run("dnnl.dense_fused", In, A),
                 composedReference("dense", {In[0], In[1]}, {}, P), 1e-4, 1e-4);
  }
}

/// Runs Op on In twice in a row per attribute set, from an empty cache, and
/// expects each result to match the reference kernel: a primitive cache
/// that confused the calls would compute one with the other's primitive.
/// Returns how many primitives were created.
int64_t expectDistinctPrimitives(const std::string &Op,
                                 const std::vector<Tensor> &In,
                                 const std::vector<Attrs> &Variants) {
  dnnlClearCaches();
  int64_t Before = dnnlCacheStats().primitivesCreated;
  for (int Round = 0; Round < 2; ++Round)
    for (size_t V = 0; V < Variants.size(); ++V) {
      SCOPED_TRACE(fmt::format("variant {}, round {}", V, Round));
      expectMatchesReference(Op, In, Variants[V], Op);
    }
  return dnnlCacheStats().primitivesCreated - Before;
}

TEST(DnnlCaches, MatMulKeysTellStridesApart) {
  std::mt19937 G(47);
  // Square operands: a and a^T have the same dims and differ only in the
  // strides oneDNN reads them with.
  std::vector<Tensor> In{randomF32(G, {6, 6}), randomF32(G, {6, 6})};
  EXPECT_EQ(expectDistinctPrimitives(
                "gemm", In,
                {{{"trans_a", int64_t(0)}},
                 {{"trans_a", int64_t(1)}},
                 {{"trans_b", int64_t(1)}},
                 {{"trans_a", int64_t(1)}, {"trans_b", int64_t(1)}}}),
            4);
  // dense reads w [N, K] as [K, N] with strides (1, K); matmul reads b
  // [K, N] row-major: with N == K only the strides differ. (Nine rows: fewer
  // would be matrix-vector products.)
  std::vector<Tensor> Rows9{randomF32(G, {9, 6}), In[1]};
  dnnlClearCaches();
  int64_t Before = dnnlCacheStats().primitivesCreated;
  for (int Round = 0; Round < 2; ++Round) {
    expectMatchesReference("dense", Rows9, {}, "dense");
    expectMatchesReference("matmul", Rows9, {}, "matmul");
  }
  EXPECT_EQ(dnnlCacheStats().primitivesCreated - Before, 2);
}

TEST(DnnlCaches, MatMulKeysTellPostOpParametersApart) {
  std::mt19937 G(53);
  std::vector<Tensor> In{randomF32(G, {5, 7}), randomF32(G, {7, 4})};
  // Only a clip bound differs.
  std::vector<Attrs> Clips;
  for (double Hi : {0.25, 0.5}) {
    Attrs A;
    encodePostOps({clip(-0.1, Hi)}, A);
    Clips.push_back(A);
  }
  EXPECT_EQ(expectDistinctPrimitives("dnnl.matmul_fused", In, Clips), 2);
  // Only gemm's alpha (an output scale) or beta (the sum post-op's scale).
  std::vector<Tensor> WithC{In[0], In[1], randomF32(G, {1, 4})};
  EXPECT_EQ(expectDistinctPrimitives("gemm", WithC,
                                     {{{"alpha", 1.0}, {"beta", 0.5}},
                                      {{"alpha", 2.0}, {"beta", 0.5}},
                                      {{"alpha", 1.0}, {"beta", 2.0}}}),
            3);
}

TEST(DnnlThreads, OneAndTwoThreadsAgree) {
  std::mt19937 G(43);
  std::vector<Tensor> In{randomF32(G, {96, 80}), randomF32(G, {80, 72})};
  int Saved = numThreads();
  setNumThreads(1);
  EXPECT_EQ(numThreads(), 1);
  Tensor One = run("dnnl.matmul", In);
  setNumThreads(2);
  EXPECT_EQ(numThreads(), 2);
  Tensor Two = run("dnnl.matmul", In);
  setNumThreads(Saved);
  expectTensor(One, Two, 1e-5, 1e-5);
  expectTensor(One, runReference("matmul", In), 1e-4, 1e-4);
}

// A small call limits oneDNN to one thread for its duration; a small call
// nested in it (a reorder inside a conv) must not lift that limit when it
// ends, or the rest of the outer call runs on threads it was not made for.
TEST(DnnlThreads, NestedWorkScopeKeepsTheOuterLimit) {
  if (!omp_get_max_threads)
    GTEST_SKIP() << "no OpenMP runtime loaded";
  int Saved = numThreads();
  setNumThreads(2);
  {
    dnnlctx::WorkScope Outer(0);
    EXPECT_EQ(omp_get_max_threads(), 1);
    { dnnlctx::WorkScope Inner(0); }
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
  setNumThreads(Saved);
}

} // namespace
} // namespace rivet::test
