//===- fuse_attention_test.cc - FuseAttention -----------------------------===//
#include "support/PassTest.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes = {"FuseAttention",
                                         "DeadCodeElimination"};

TEST(FuseAttention, BatchedProductsAroundASoftmax) {
  test::expectTransformFiles(Passes, "FuseAttention", "bmm_softmax_bmm");
}

TEST(FuseAttention, SequenceFirstHeadsReadInPlace) {
  test::expectTransformFiles(Passes, "FuseAttention", "sequence_first");
}

} // namespace
