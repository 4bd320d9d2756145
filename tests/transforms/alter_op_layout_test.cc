//===- alter_op_layout_test.cc - AlterOpLayout ----------------------------===//
#include "support/PassTest.h"

#include "ir/transforms/LayoutPreference.h"
#include "kernels/DnnlConfig.h"

#include <map>

using namespace rivet;
using namespace rivet::ir;

namespace {

const std::vector<std::string> Pass = {"AlterOpLayout"};
const char *Dir = "AlterOpLayout";

/// A test target that blocks every conv it can by Block.
ScopedLayoutPreferences prefer(int64_t Block) {
  return ScopedLayoutPreferences(
      std::make_shared<UniformBlockPreferences>(Block));
}

TEST(AlterOpLayout, ConvReluConvStaysBlockedBetweenTheEdges) {
  auto P = prefer(8);
  test::expectTransformFiles(Pass, Dir, "conv_relu_conv");
}

TEST(AlterOpLayout, SixteenChannelBlocks) {
  auto P = prefer(16);
  test::expectTransform(
      Pass, test::readPassData("AlterOpLayout/conv_relu_conv.rvir"),
      test::readPassData("AlterOpLayout/conv_relu_conv_16c.expected.rvir"));
}

TEST(AlterOpLayout, ResidualAddStaysBlocked) {
  auto P = prefer(8);
  test::expectTransformFiles(Pass, Dir, "residual");
}

TEST(AlterOpLayout, PerChannelOperandsAreBlockedLikeTheData) {
  auto P = prefer(8);
  test::expectTransformFiles(Pass, Dir, "per_channel");
}

TEST(AlterOpLayout, ChannelsTheBlockDoesNotDivideStayNchw) {
  auto P = prefer(8);
  test::expectTransformFiles(Pass, Dir, "channels_not_divisible");
}

TEST(AlterOpLayout, PoolsStayBlockedOtherConsumersAreEdges) {
  auto P = prefer(8);
  test::expectTransformFiles(Pass, Dir, "edges");
}

TEST(AlterOpLayout, NestedCallsAsImportedAreRewrittenInPlace) {
  auto P = prefer(8);
  // The importer writes a conv with its bias as add(conv(...), b).
  test::expectTransform(Pass, R"(
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(8, 8, 3, 3), float32],
          %b: Tensor[(8, 1, 1), float32]) -> Tensor[(1, 8, 4, 4), float32] {
  let %c = add(conv(%x, %w, pads=[1, 1, 1, 1]), %b);
  let %r = relu(%c);
  %r
}
)",
                        R"(
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(8, 8, 3, 3), float32],
          %b: Tensor[(8, 1, 1), float32]) -> Tensor[(1, 8, 4, 4), float32] {
  let %xb = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW8c");
  let %wb = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW8i8o");
  let %bb = layout_transform(%b, src_layout="CHW", dst_layout="CHW8c");
  let %cb = add(conv2d_nchwc(%xb, %wb, pads=[1, 1, 1, 1], data_layout="NCHW8c",
                             kernel_layout="OIHW8i8o", out_layout="NCHW8c"),
                %bb);
  let %rb = relu(%cb);
  let %r = layout_transform(%rb, src_layout="NCHW8c", dst_layout="NCHW");
  %r
}
)");
}

TEST(AlterOpLayout, NoPreferenceNoChange) {
  ScopedLayoutPreferences None(nullptr);
  std::string Text = test::readPassData("AlterOpLayout/conv_relu_conv.rvir");
  test::expectTransform(Pass, Text, Text);
}

TEST(AlterOpLayout, ASecondRunChangesNothing) {
  auto P = prefer(8);
  for (const char *Case : {"conv_relu_conv", "residual", "edges"}) {
    Module Once =
        test::runPassesOn(test::parseTyped(test::readPassData(
                              std::string(Dir) + "/" + Case + ".rvir")),
                          Pass);
    Module Twice = test::runPassesOn(Once, Pass);
    EXPECT_TRUE(structuralEqual(Once, Twice)) << Case << ":\n"
                                              << structuralDiff(Once, Twice);
  }
}

/// Blocks the first conv by 16 and the others by 8.
class FirstConvSixteen : public LayoutPreferences {
public:
  std::optional<ConvLayout> preferredConvLayout(const CallNode &,
                                                const TensorTypeNode &,
                                                const TensorTypeNode &,
                                                int64_t) const override {
    return Calls++ == 0 ? ConvLayout{16, 16} : ConvLayout{8, 8};
  }
  mutable int Calls = 0;
};

TEST(AlterOpLayout, ChangingTheBlockConvertsDirectly) {
  ScopedLayoutPreferences P(std::make_shared<FirstConvSixteen>());
  test::expectTransform(
      Pass, test::readPassData("AlterOpLayout/conv_relu_conv.rvir"), R"(
def @main(%x: Tensor[(1, 16, 6, 6), float32], %w1: Tensor[(16, 16, 3, 3), float32],
          %w2: Tensor[(8, 16, 1, 1), float32]) -> Tensor[(1, 8, 6, 6), float32] {
  let %xb = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  let %w1b = layout_transform(%w1, src_layout="OIHW", dst_layout="OIHW16i16o");
  let %c1b = conv2d_nchwc(%xb, %w1b, pads=[1, 1, 1, 1], data_layout="NCHW16c",
                          kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  let %rb = relu(%c1b);
  let %r8 = layout_transform(%rb, src_layout="NCHW16c", dst_layout="NCHW8c");
  let %w2b = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW8i8o");
  let %c2b = conv2d_nchwc(%r8, %w2b, data_layout="NCHW8c",
                          kernel_layout="OIHW8i8o", out_layout="NCHW8c");
  let %c2 = layout_transform(%c2b, src_layout="NCHW8c", dst_layout="NCHW");
  %c2
})");
}

/// A constant weight [8, 8, 1, 1] in the text format.
std::string constantWeight() {
  std::string V;
  for (int I = 0; I < 64; ++I)
    V += fmt::format("{}{}", I ? ", " : "", (I % 7) * 0.125 - 0.375);
  return "const[(8, 8, 1, 1), float32]([" + V + "])";
}

TEST(AlterOpLayout, ConstantWeightsAndPrimitiveFunctionsAreLeftToOthers) {
  auto P = prefer(8);
  // The transform of a constant weight stays a call (FoldConstant folds
  // it); a primitive function's body is not touched.
  std::string W = constantWeight();
  test::expectTransform(Pass,
                        fmt::format(R"(
def @main(%x: Tensor[(1, 8, 3, 3), float32]) -> Tensor[(1, 8, 3, 3), float32] {{
  let %c = conv(%x, {0});
  let %f = fn (%p0: Tensor[(1, 8, 3, 3), float32], Primitive=1) {{
    let %q = conv(%p0, {0});
    relu(%q)
  }};
  %f(%c)
}}
)",
                                    W),
                        fmt::format(R"(
def @main(%x: Tensor[(1, 8, 3, 3), float32]) -> Tensor[(1, 8, 3, 3), float32] {{
  let %xb = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW8c");
  let %wb = layout_transform({0}, src_layout="OIHW", dst_layout="OIHW8i8o");
  let %cb = conv2d_nchwc(%xb, %wb, data_layout="NCHW8c",
                         kernel_layout="OIHW8i8o", out_layout="NCHW8c");
  let %f = fn (%p0: Tensor[(1, 8, 3, 3), float32], Primitive=1) {{
    let %q = conv(%p0, {0});
    relu(%q)
  }};
  let %c = layout_transform(%cb, src_layout="NCHW8c", dst_layout="NCHW");
  %f(%c)
}}
)",
                                    W));
}

TEST(AlterOpLayout, IsRegisteredAtLevelThree) {
  const PassInfo &P = PassRegistry::global().get("AlterOpLayout");
  EXPECT_EQ(P.optLevel, 3);
}

} // namespace

// A compilation's own context carries the target's preferences; nothing
// process-wide is installed here.
TEST(AlterOpLayout, PreferencesFromThePassContext) {
  ir::Module M =
      test::parseTyped(test::readPassData("AlterOpLayout/conv_relu_conv.rvir"));
  ir::PassContext Ctx;
  Ctx.layoutPreferences = std::make_shared<UniformBlockPreferences>(8);
  ir::Module Blocked = M;
  ir::runPasses(Blocked, {"AlterOpLayout"}, Ctx);
  ir::Module Expected = test::parseTyped(
      test::readPassData("AlterOpLayout/conv_relu_conv.expected.rvir"));
  EXPECT_TRUE(test::sameUserFunctions(Blocked, Expected))
      << ir::printModule(Blocked);
  ScopedLayoutPreferences None(nullptr);
  ir::Module Plain = M;
  ir::runPasses(Plain, {"AlterOpLayout"}, ir::PassContext());
  EXPECT_TRUE(test::sameUserFunctions(Plain, M));
}

namespace {

/// An image conv (3 channels), a depthwise conv and a grouped conv that is
/// not depthwise.
const char *ImageDepthwiseGrouped = R"(
def @main(%x: Tensor[(1, 3, 6, 6), float32], %w1: Tensor[(16, 3, 3, 3), float32],
          %w2: Tensor[(16, 1, 3, 3), float32],
          %w3: Tensor[(16, 8, 1, 1), float32]) -> Tensor[(1, 16, 6, 6), float32] {
  let %c1 = conv(%x, %w1, pads=[1, 1, 1, 1]);
  let %c2 = conv(%c1, %w2, pads=[1, 1, 1, 1], group=16);
  let %c3 = conv(%c2, %w3, group=2);
  %c3
}
)";

} // namespace

// The CPU's oneDNN preferences: an image is read plain (NCHW1c, the same
// bytes) and written blocked, a depthwise conv stays blocked with its group
// (weights OIHW1i8o), other grouped convs stay NCHW.
TEST(AlterOpLayout, DnnlCpuPreferencesBlockImagesAndDepthwiseConvs) {
  ScopedLayoutPreferences P(std::make_shared<DnnlCpuPreferences>(8));
  test::expectTransform(Pass, ImageDepthwiseGrouped, R"(
def @main(%x: Tensor[(1, 3, 6, 6), float32], %w1: Tensor[(16, 3, 3, 3), float32],
          %w2: Tensor[(16, 1, 3, 3), float32],
          %w3: Tensor[(16, 8, 1, 1), float32]) -> Tensor[(1, 16, 6, 6), float32] {
  let %x1 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW1c");
  let %w1b = layout_transform(%w1, src_layout="OIHW", dst_layout="OIHW1i8o");
  let %c1b = conv2d_nchwc(%x1, %w1b, pads=[1, 1, 1, 1], data_layout="NCHW1c",
                          kernel_layout="OIHW1i8o", out_layout="NCHW8c");
  let %w2b = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW1i8o");
  let %c2b = conv2d_nchwc(%c1b, %w2b, pads=[1, 1, 1, 1], group=16,
                          data_layout="NCHW8c", kernel_layout="OIHW1i8o",
                          out_layout="NCHW8c");
  let %c2 = layout_transform(%c2b, src_layout="NCHW8c", dst_layout="NCHW");
  let %c3 = conv(%c2, %w3, group=2);
  %c3
}
)");
}

// With AVX-512's 16-channel blocks, channels 16 does not divide are padded
// up to a multiple of it where that adds at most half of them: 24 runs as
// 32 (zero filters, zero input channels), a depthwise conv fed padded
// channels pads its groups (48 needs none here).
TEST(AlterOpLayout, DnnlCpuPreferencesPadChannelsToSixteenChannelBlocks) {
  ScopedLayoutPreferences P(std::make_shared<DnnlCpuPreferences>(16));
  test::expectTransform(Pass, R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(24, 16, 1, 1), float32],
          %w2: Tensor[(48, 24, 1, 1), float32], %w3: Tensor[(48, 1, 3, 3), float32],
          %w4: Tensor[(32, 48, 1, 1), float32]) -> Tensor[(1, 32, 4, 4), float32] {
  let %c1 = conv(%x, %w1);
  let %c2 = conv(%c1, %w2);
  let %c3 = conv(%c2, %w3, pads=[1, 1, 1, 1], group=48);
  let %c4 = conv(%c3, %w4);
  %c4
}
)",
                        R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(24, 16, 1, 1), float32],
          %w2: Tensor[(48, 24, 1, 1), float32], %w3: Tensor[(48, 1, 3, 3), float32],
          %w4: Tensor[(32, 48, 1, 1), float32]) -> Tensor[(1, 32, 4, 4), float32] {
  let %x16 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  let %w1b = layout_transform(pad(%w1, pads=[0, 0, 0, 0, 8, 0, 0, 0]),
                              src_layout="OIHW", dst_layout="OIHW16i16o");
  let %c1 = conv2d_nchwc(%x16, %w1b, data_layout="NCHW16c",
                         kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  let %w2b = layout_transform(pad(%w2, pads=[0, 0, 0, 0, 0, 8, 0, 0]),
                              src_layout="OIHW", dst_layout="OIHW16i16o");
  let %c2 = conv2d_nchwc(%c1, %w2b, data_layout="NCHW16c",
                         kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  let %w3b = layout_transform(%w3, src_layout="OIHW", dst_layout="OIHW1i16o");
  let %c3 = conv2d_nchwc(%c2, %w3b, pads=[1, 1, 1, 1], group=48,
                         data_layout="NCHW16c", kernel_layout="OIHW1i16o",
                         out_layout="NCHW16c");
  let %w4b = layout_transform(%w4, src_layout="OIHW", dst_layout="OIHW16i16o");
  let %c4b = conv2d_nchwc(%c3, %w4b, data_layout="NCHW16c",
                          kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  let %c4 = layout_transform(%c4b, src_layout="NCHW16c", dst_layout="NCHW");
  %c4
}
)");
}

// Padding channels stay zero through what keeps zeros zero: a conv with a
// padded bias, clip to [0, 6], a depthwise conv with padded groups, a
// residual add, a multiply by a scalar. An add of a scalar would not: the
// tensor goes back to NCHW before it, its padding cropped.
TEST(AlterOpLayout, PaddedChannelsStayBlockedWhileTheyStayZero) {
  ScopedLayoutPreferences P(std::make_shared<DnnlCpuPreferences>(16));
  test::expectTransform(Pass, R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(24, 16, 1, 1), float32],
          %b1: Tensor[(24, 1, 1), float32], %w2: Tensor[(24, 1, 3, 3), float32],
          %w3: Tensor[(24, 24, 1, 1), float32]) -> Tensor[(1, 24, 4, 4), float32] {
  let %c1 = clip(add(conv(%x, %w1), %b1), min=0.0, max=6.0);
  let %c2 = conv(%c1, %w2, pads=[1, 1, 1, 1], group=24);
  let %c3 = multiply(add(conv(%c2, %w3), %c1), 2.0);
  let %c4 = add(%c3, 1.0);
  %c4
}
)",
                        R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(24, 16, 1, 1), float32],
          %b1: Tensor[(24, 1, 1), float32], %w2: Tensor[(24, 1, 3, 3), float32],
          %w3: Tensor[(24, 24, 1, 1), float32]) -> Tensor[(1, 24, 4, 4), float32] {
  let %x16 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  let %w1b = layout_transform(pad(%w1, pads=[0, 0, 0, 0, 8, 0, 0, 0]),
                              src_layout="OIHW", dst_layout="OIHW16i16o");
  let %b1b = layout_transform(pad(%b1, pads=[0, 0, 0, 8, 0, 0]),
                              src_layout="CHW", dst_layout="CHW16c");
  let %c1 = clip(add(conv2d_nchwc(%x16, %w1b, data_layout="NCHW16c",
                                  kernel_layout="OIHW16i16o",
                                  out_layout="NCHW16c"), %b1b),
                 min=0.0, max=6.0);
  let %w2b = layout_transform(pad(%w2, pads=[0, 0, 0, 0, 8, 0, 0, 0]),
                              src_layout="OIHW", dst_layout="OIHW1i16o");
  let %c2 = conv2d_nchwc(%c1, %w2b, pads=[1, 1, 1, 1], group=32,
                         data_layout="NCHW16c", kernel_layout="OIHW1i16o",
                         out_layout="NCHW16c");
  let %w3b = layout_transform(pad(%w3, pads=[0, 0, 0, 0, 8, 8, 0, 0]),
                              src_layout="OIHW", dst_layout="OIHW16i16o");
  let %c3b = multiply(add(conv2d_nchwc(%c2, %w3b, data_layout="NCHW16c",
                                       kernel_layout="OIHW16i16o",
                                       out_layout="NCHW16c"), %c1), 2.0);
  let %c3 = pad(layout_transform(%c3b, src_layout="NCHW16c", dst_layout="NCHW"),
                pads=[0, 0, 0, 0, 0, -8, 0, 0]);
  let %c4 = add(%c3, 1.0);
  %c4
}
)");
}

/// A test target that blocks each conv as its number of output channels
/// says.
class ByOutputChannels : public LayoutPreferences {
public:
  explicit ByOutputChannels(std::map<int64_t, ConvLayout> Choices)
      : Choices(std::move(Choices)) {}
  std::optional<ConvLayout> preferredConvLayout(const CallNode &,
                                                const TensorTypeNode &,
                                                const TensorTypeNode &W,
                                                int64_t) const override {
    auto It = Choices.find((*W.shape)[0].value);
    if (It == Choices.end())
      return std::nullopt;
    return It->second;
  }

private:
  std::map<int64_t, ConvLayout> Choices;
};

// A padded value wanted in another block goes through NCHW (cropped, then
// padded for the other block if it pads too), never directly.
TEST(AlterOpLayout, PaddedValuesChangeBlocksThroughNchw) {
  ScopedLayoutPreferences P(std::make_shared<ByOutputChannels>(
      std::map<int64_t, ConvLayout>{{24, {16, 16}}, {8, {8, 8}}}));
  test::expectTransform(Pass, R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(24, 16, 1, 1), float32],
          %w2: Tensor[(8, 24, 1, 1), float32]) -> Tensor[(1, 8, 4, 4), float32] {
  let %c1 = conv(%x, %w1);
  let %c2 = conv(%c1, %w2);
  %c2
}
)",
                        R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(24, 16, 1, 1), float32],
          %w2: Tensor[(8, 24, 1, 1), float32]) -> Tensor[(1, 8, 4, 4), float32] {
  let %x16 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  let %w1b = layout_transform(pad(%w1, pads=[0, 0, 0, 0, 8, 0, 0, 0]),
                              src_layout="OIHW", dst_layout="OIHW16i16o");
  let %c1b = conv2d_nchwc(%x16, %w1b, data_layout="NCHW16c",
                          kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  let %c1 = pad(layout_transform(%c1b, src_layout="NCHW16c", dst_layout="NCHW"),
                pads=[0, 0, 0, 0, 0, -8, 0, 0]);
  let %c1_8 = layout_transform(%c1, src_layout="NCHW", dst_layout="NCHW8c");
  let %w2b = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW8i8o");
  let %c2b = conv2d_nchwc(%c1_8, %w2b, data_layout="NCHW8c",
                          kernel_layout="OIHW8i8o", out_layout="NCHW8c");
  let %c2 = layout_transform(%c2b, src_layout="NCHW8c", dst_layout="NCHW");
  %c2
}
)");
}

// Where padding would double the channels (8 to 16), a conv runs on
// 8-channel blocks (oneDNN's AVX2 kernels) rather than plain NCHW; a
// depthwise conv keeps the 8-channel block its input comes in; a conv of 8
// input channels to 16 reads them as an image (NCHW1c).
TEST(AlterOpLayout, DnnlCpuPreferencesFallBackToEightChannelBlocks) {
  ScopedLayoutPreferences P(std::make_shared<DnnlCpuPreferences>(16));
  test::expectTransform(Pass, R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(8, 16, 1, 1), float32],
          %w2: Tensor[(8, 1, 3, 3), float32],
          %w3: Tensor[(16, 8, 1, 1), float32]) -> Tensor[(1, 16, 4, 4), float32] {
  let %c1 = conv(%x, %w1);
  let %c2 = conv(%c1, %w2, pads=[1, 1, 1, 1], group=8);
  let %c3 = conv(%c2, %w3);
  %c3
}
)",
                        R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w1: Tensor[(8, 16, 1, 1), float32],
          %w2: Tensor[(8, 1, 3, 3), float32],
          %w3: Tensor[(16, 8, 1, 1), float32]) -> Tensor[(1, 16, 4, 4), float32] {
  let %x8 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW8c");
  let %w1b = layout_transform(%w1, src_layout="OIHW", dst_layout="OIHW8i8o");
  let %c1 = conv2d_nchwc(%x8, %w1b, data_layout="NCHW8c",
                         kernel_layout="OIHW8i8o", out_layout="NCHW8c");
  let %w2b = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW1i8o");
  let %c2 = conv2d_nchwc(%c1, %w2b, pads=[1, 1, 1, 1], group=8,
                         data_layout="NCHW8c", kernel_layout="OIHW1i8o",
                         out_layout="NCHW8c");
  let %c2_1 = layout_transform(%c2, src_layout="NCHW8c", dst_layout="NCHW1c");
  let %w3b = layout_transform(%w3, src_layout="OIHW", dst_layout="OIHW1i16o");
  let %c3b = conv2d_nchwc(%c2_1, %w3b, data_layout="NCHW1c",
                          kernel_layout="OIHW1i16o", out_layout="NCHW16c");
  let %c3 = layout_transform(%c3b, src_layout="NCHW16c", dst_layout="NCHW");
  %c3
}
)");
}

TEST(AlterOpLayout, DnnlCpuPreferencesNeedOneDnn) {
  ScopedLayoutPreferences P(std::make_shared<DnnlCpuPreferences>(8));
  DnnlDisabledScope Off;
  test::expectTransform(Pass, ImageDepthwiseGrouped, ImageDepthwiseGrouped);
}

TEST(AlterOpLayout, DnnlCpuPreferencesAreTheDefault) {
  // Whatever the host's block, a pass context without preferences uses the
  // installed ones, which start as the CPU's.
  auto Installed = currentLayoutPreferences();
  ASSERT_TRUE(Installed);
  EXPECT_TRUE(dynamic_cast<const DnnlCpuPreferences *>(Installed.get()));
}
