//===- fuse_layer_norm_test.cc - FuseLayerNorm ----------------------------===//
#include "support/PassTest.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes = {"FuseLayerNorm",
                                         "DeadCodeElimination"};

TEST(FuseLayerNorm, TorchsArithmeticBecomesOneCall) {
  test::expectTransformFiles(Passes, "FuseLayerNorm", "torch_layer_norm");
}

} // namespace
