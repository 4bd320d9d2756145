//===- fuse_lstm_stack_test.cc - FuseLstmStack ----------------------------===//
#include "support/PassTest.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes = {"FuseLstmStack",
                                         "DeadCodeElimination"};

TEST(FuseLstmStack, TorchsTwoLayersAsExported) {
  test::expectTransformFiles(Passes, "FuseLstmStack", "torch_two_layers");
}

TEST(FuseLstmStack, DeepStacksFuseWhereTheLayersAllowIt) {
  test::expectTransformFiles(Passes, "FuseLstmStack", "deep_and_blocked");
}

} // namespace
