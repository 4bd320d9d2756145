//===- combine_parallel_conv2d_test.cc - CombineParallelConv2D
//-------------===//
#include "support/PassTest.h"

#include "ir/transforms/ParallelOpCombiner.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes{"CombineParallelConv2D"};

TEST(CombineParallelConv2D, ConvsAndTheirCommonTailsMerge) {
  test::expectTransformFiles(Passes, "CombineParallelConv2D",
                             "branches_with_tails");
}

TEST(CombineParallelConv2D, ThreeBranchesMerge) {
  test::expectTransformFiles(Passes, "CombineParallelConv2D", "three_branches");
}

/// Each program must come out of the pass unchanged.
void expectUnchanged(const std::string &Program) {
  test::expectTransform(Passes, Program, Program);
}

TEST(CombineParallelConv2D, DifferentStridesDoNotMerge) {
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32]) -> (Tensor[(1, 1, 4, 4), float32], Tensor[(1, 1, 2, 2), float32]) {
  let %a = conv(%x, const[(1, 2, 1, 1), float32]([1, 2]));
  let %b = conv(%x, const[(1, 2, 1, 1), float32]([3, 4]), strides=[2, 2]);
  (%a, %b)
}
)");
}

TEST(CombineParallelConv2D, DifferentInputsGroupsAndComputedWeightsDoNotMerge) {
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 2, 2), float32], %y: Tensor[(1, 2, 2, 2), float32], %w: Tensor[(2, 2, 1, 1), float32]) -> (Tensor[(1, 2, 2, 2), float32], Tensor[(1, 2, 2, 2), float32], Tensor[(1, 2, 2, 2), float32], Tensor[(1, 2, 2, 2), float32], Tensor[(1, 2, 2, 2), float32]) {
  let %a = conv(%x, const[(2, 2, 1, 1), float32]([1, 2, 3, 4]));
  let %b = conv(%y, const[(2, 2, 1, 1), float32]([1, 2, 3, 4]));
  let %c = conv(%x, %w);
  let %d = conv(%y, const[(2, 1, 1, 1), float32]([1, 2]), group=2);
  let %e = conv(%y, const[(2, 1, 1, 1), float32]([3, 4]), group=2);
  (%a, %b, %c, %d, %e)
}
)");
}

TEST(CombineParallelConv2D, MinimumBranchCountIsHonoured) {
  ir::Module M = test::parseTyped(
      test::readPassData("CombineParallelConv2D/three_branches.rvir"));
  ir::Module Four = M, Three = M;
  ir::pattern::combineParallelOps(Four, "conv", 4);
  EXPECT_TRUE(ir::structuralEqual(Four, M)) << ir::printModule(Four);
  ir::pattern::combineParallelOps(Three, "conv", 3);
  ir::inferTypes(Three);
  ir::Module Expected = test::parseTyped(
      test::readPassData("CombineParallelConv2D/three_branches.expected.rvir"));
  EXPECT_TRUE(ir::structuralEqual(Three, Expected)) << ir::printModule(Three);
}

} // namespace
