//===- fuse_conv_chains_test.cc - FuseConvChains --------------------------===//
//
// The pass on oneDNN conv calls as the VM compiler has them after inlining
// (with DeadCodeElimination after it, as the compiler runs them); the
// compiled path is tests/vm/fuse_conv_chains_test.cc.
//
//===----------------------------------------------------------------------===//
#include "support/PassTest.h"

#include "kernels/cpu/ConvChain.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes = {"FuseConvChains",
                                         "DeadCodeElimination"};

/// The cases' tensors are small: by default (Auto) the pass leaves them.
class FuseConvChains : public ::testing::Test {
  PointwiseDepthwiseChoice Saved = pointwiseDepthwiseChoice();

protected:
  void SetUp() override {
    setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice::Always);
  }
  void TearDown() override { setPointwiseDepthwiseChoice(Saved); }
};

TEST_F(FuseConvChains, BoundPairBecomesOneCall) {
  test::expectTransformFiles(Passes, "FuseConvChains", "pair");
}

TEST_F(FuseConvChains, NestedPairBecomesOneCall) {
  test::expectTransformFiles(Passes, "FuseConvChains", "nested");
}

TEST_F(FuseConvChains, OtherPairsStay) {
  test::expectTransformFiles(Passes, "FuseConvChains", "stays");
}

// By default only pairs whose 1x1 result outgrows L2 are taken;
// switched off, none.
TEST_F(FuseConvChains, TheChoiceDecides) {
  setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice::Auto);
  test::expectTransformFiles(Passes, "FuseConvChains", "small_auto");
  test::expectTransformFiles(Passes, "FuseConvChains", "large_auto");
  setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice::Off);
  test::expectTransformFiles(Passes, "FuseConvChains", "large_off");
}

} // namespace
