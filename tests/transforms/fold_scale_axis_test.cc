//===- fold_scale_axis_test.cc - FoldScaleAxis
//-----------------------------===//
#include "support/PassTest.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes{"FoldScaleAxis"};

TEST(FoldScaleAxis, BatchNormAfterConvFoldsIntoWeightsAndBias) {
  test::expectTransformFiles(Passes, "FoldScaleAxis", "conv_batch_norm");
}

TEST(FoldScaleAxis, ShiftBecomesTheBiasOfABiaslessConv) {
  test::expectTransformFiles(Passes, "FoldScaleAxis",
                             "conv_no_bias_scale_first_operand");
}

TEST(FoldScaleAxis, InputChannelScaleFoldsForwardIntoConv) {
  test::expectTransformFiles(Passes, "FoldScaleAxis", "conv_input_scale");
}

TEST(FoldScaleAxis, DenseGemmAndMatmulScalesFold) {
  test::expectTransformFiles(Passes, "FoldScaleAxis", "dense_matmul_gemm");
}

/// Each program must come out of the pass unchanged.
void expectUnchanged(const std::string &Program) {
  test::expectTransform(Passes, Program, Program);
}

TEST(FoldScaleAxis, ConvWithASecondConsumerIsNotScaled) {
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32]) -> (Tensor[(1, 2, 2, 2), float32], Tensor[(1, 2, 2, 2), float32]) {
  let %c = conv(%x, const[(2, 2, 1, 1), float32]([1, 2, 3, 4]));
  let %m = multiply(%c, const[(2, 1, 1), float32]([2, 3]));
  (%m, %c)
}
)");
}

TEST(FoldScaleAxis, ScaleAlongAnotherAxisIsNotFolded) {
  // (2,) broadcasts along the width, not the channels.
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32]) -> Tensor[(1, 2, 2, 2), float32] {
  let %c = conv(%x, const[(2, 2, 1, 1), float32]([1, 2, 3, 4]));
  multiply(%c, const[(2,), float32]([2, 3]))
}
)");
}

TEST(FoldScaleAxis, ComputedScaleIsNotFolded) {
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32], %s: Tensor[(2, 1, 1), float32]) -> Tensor[(1, 2, 2, 2), float32] {
  let %c = conv(%x, const[(2, 2, 1, 1), float32]([1, 2, 3, 4]));
  multiply(%c, %s)
}
)");
}

TEST(FoldScaleAxis, ScaleThatGrowsTheResultIsNotFolded) {
  // The scale has a batch axis of 2: the product is larger than the conv.
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32]) -> Tensor[(2, 2, 2, 2), float32] {
  let %c = conv(%x, const[(2, 2, 1, 1), float32]([1, 2, 3, 4]));
  multiply(%c, const[(2, 2, 1, 1), float32]([1, 2, 3, 4]))
}
)");
}

TEST(FoldScaleAxis, InputScaleOfAGroupedConvIsNotFolded) {
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32]) -> Tensor[(1, 2, 2, 2), float32] {
  let %s = multiply(%x, const[(2, 1, 1), float32]([2, 3]));
  conv(%s, const[(2, 1, 1, 1), float32]([1, 2]), group=2)
}
)");
}

TEST(FoldScaleAxis, ScaleAfterReluIsNotFolded) {
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32]) -> Tensor[(1, 2, 2, 2), float32] {
  let %c = relu(conv(%x, const[(2, 2, 1, 1), float32]([1, 2, 3, 4])));
  multiply(%c, const[(2, 1, 1), float32]([-2, 3]))
}
)");
}

TEST(FoldScaleAxis, PrimitiveFunctionsAreLeftAlone) {
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32]) -> Tensor[(1, 2, 2, 2), float32] {
  let %f = fn (%p: Tensor[(1, 2, 2, 2), float32], Primitive=1) {
    multiply(conv(%p, const[(2, 2, 1, 1), float32]([1, 2, 3, 4])), const[(2, 1, 1), float32]([2, 3]))
  };
  %f(%x)
}
)");
}

TEST(FoldScaleAxis, GroupedConvOutputScaleFolds) {
  // Output channels scale independently of the groups.
  test::expectTransform(Passes, R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32]) -> Tensor[(1, 2, 2, 2), float32] {
  multiply(conv(%x, const[(2, 1, 1, 1), float32]([1, 2]), group=2), const[(2, 1, 1), float32]([2, 3]))
}
)",
                        R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32]) -> Tensor[(1, 2, 2, 2), float32] {
  conv(%x, multiply(const[(2, 1, 1, 1), float32]([1, 2]), const[(2, 1, 1, 1), float32]([2, 3])), group=2)
}
)");
}

} // namespace
