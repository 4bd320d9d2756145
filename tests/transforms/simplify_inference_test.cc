//===- simplify_inference_test.cc - SimplifyInference ---------------------===//
#include "support/PassTest.h"

using namespace rivet;

namespace {

TEST(SimplifyInference, BatchNormBecomesScaleAndShift) {
  test::expectTransformFiles({"SimplifyInference"}, "SimplifyInference",
                             "batch_norm");
}

TEST(SimplifyInference, BatchNormFactorsFold) {
  test::expectTransformFiles({"SimplifyInference", "FoldConstant"},
                             "SimplifyInference", "batch_norm_folded");
}

TEST(SimplifyInference, BatchNorm2DAndTrainingForm) {
  test::expectTransformFiles({"SimplifyInference"}, "SimplifyInference",
                             "batch_norm_2d");
}

TEST(SimplifyInference, DropoutIsTheIdentity) {
  test::expectTransformFiles({"SimplifyInference", "DeadCodeElimination"},
                             "SimplifyInference", "dropout");
}

TEST(SimplifyInference, RunsAtLevelZero) {
  ir::Module M =
      test::parseTyped(test::readPassData("SimplifyInference/batch_norm.rvir"));
  ir::PassContext Ctx;
  Ctx.optLevel = 0;
  ir::optimize(M, Ctx);
  EXPECT_EQ(ir::printModule(M).find("batch_norm"), std::string::npos);
}

} // namespace
