//===- op_properties_test.cc - Operator facts that passes read ------------===//
//
// The facts that AlterOpLayout, SimplifyExpr, FoldScaleAxis and the parallel
// combiners once kept as lists of operator names, read from the registry.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"

#include <gtest/gtest.h>

using namespace rivet;
using namespace rivet::ir;

namespace {

const OpInfo &info(const char *Name) { return OpRegistry::global().get(Name); }

TEST(OpProperties, ZeroPreservingOperators) {
  for (const char *Op : {"add", "subtract", "multiply", "maximum", "minimum",
                         "negative", "relu"}) {
    ASSERT_NE(info(Op).keepsZero, nullptr) << Op;
    EXPECT_TRUE(info(Op).keepsZero(Attrs{})) << Op;
  }
  const OpInfo &Clip = info("clip");
  ASSERT_NE(Clip.keepsZero, nullptr);
  EXPECT_TRUE(Clip.keepsZero(Attrs{{"min", 0.0}, {"max", 6.0}}));
  EXPECT_TRUE(Clip.keepsZero(Attrs{}));
  EXPECT_FALSE(Clip.keepsZero(Attrs{{"min", 1.0}}));
  EXPECT_FALSE(Clip.keepsZero(Attrs{{"max", -1.0}}));
  EXPECT_EQ(info("exp").keepsZero, nullptr); // exp(0) = 1
  EXPECT_TRUE(info("multiply").zeroAbsorbing);
  EXPECT_FALSE(info("add").zeroAbsorbing);
}

TEST(OpProperties, ChannelwisePools) {
  for (const char *Op : {"max_pool", "avg_pool", "lp_pool", "global_avg_pool",
                         "global_max_pool"})
    EXPECT_TRUE(info(Op).channelwisePool) << Op;
  EXPECT_FALSE(info("conv").channelwisePool);
  EXPECT_FALSE(info("max_unpool").channelwisePool);
}

TEST(OpProperties, ShapeOperatorsThatMayChangeNothing) {
  EXPECT_TRUE(info("expand").identityWhenTypeKept);
  EXPECT_TRUE(info("tile").identityWhenTypeKept);
  EXPECT_FALSE(info("transpose").identityWhenTypeKept);
  // SimplifyExpr's reshape-like operators: views whose shape is an attribute.
  for (const char *Op : {"reshape", "flatten", "squeeze", "unsqueeze"}) {
    EXPECT_TRUE(info(Op).viewOfFirstArg) << Op;
    EXPECT_EQ(info(Op).numInputs, 1) << Op;
  }
}

std::optional<ChannelAxes> axes(const char *Op, const Attrs &A,
                                size_t WeightRank) {
  const OpInfo &I = info(Op);
  EXPECT_NE(I.channelAxes, nullptr) << Op;
  return I.channelAxes ? I.channelAxes(A, WeightRank) : std::nullopt;
}

TEST(OpProperties, WeightedAnchorChannelAxes) {
  std::optional<ChannelAxes> Conv = axes("conv", Attrs{}, 4);
  ASSERT_TRUE(Conv);
  EXPECT_EQ(Conv->channelOf(4), 1u);
  EXPECT_EQ(Conv->weightOutput, 0u);
  EXPECT_EQ(Conv->weightInput, 1);
  EXPECT_TRUE(Conv->channelBias);
  EXPECT_EQ(axes("conv", Attrs{{"group", int64_t(2)}}, 4)->weightInput, -1);

  std::optional<ChannelAxes> Dense = axes("dense", Attrs{}, 2);
  ASSERT_TRUE(Dense);
  EXPECT_EQ(Dense->channelOf(3), 2u);
  EXPECT_EQ(Dense->weightOutput, 0u);
  EXPECT_EQ(Dense->weightInput, 1);
  EXPECT_FALSE(Dense->channelBias);

  std::optional<ChannelAxes> Matmul = axes("matmul", Attrs{}, 2);
  ASSERT_TRUE(Matmul);
  EXPECT_EQ(Matmul->channelOf(2), 1u);
  EXPECT_EQ(Matmul->weightOutput, 1u);
  EXPECT_EQ(Matmul->weightInput, 0);
  EXPECT_FALSE(axes("matmul", Attrs{}, 3)); // batched weights

  EXPECT_EQ(axes("gemm", Attrs{}, 2)->weightOutput, 1u);
  EXPECT_EQ(axes("gemm", Attrs{{"trans_b", int64_t(1)}}, 2)->weightOutput, 0u);
  EXPECT_EQ(axes("gemm", Attrs{}, 2)->weightInput, -1);

  EXPECT_EQ(info("add").channelAxes, nullptr);
  EXPECT_EQ(info("conv_transpose").channelAxes, nullptr);
}

} // namespace
