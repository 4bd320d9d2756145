//===- simplify_expr_test.cc - SimplifyExpr -------------------------------===//
#include "support/PassTest.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes = {"SimplifyExpr", "DeadCodeElimination"};

TEST(SimplifyExpr, ReshapeChains) {
  test::expectTransformFiles(Passes, "SimplifyExpr", "reshape_chains");
}

TEST(SimplifyExpr, TransposeAndCastChains) {
  test::expectTransformFiles(Passes, "SimplifyExpr", "transpose_cast");
}

TEST(SimplifyExpr, NoOpSlicesPadsAndBroadcasts) {
  test::expectTransformFiles(Passes, "SimplifyExpr", "noop_slices");
}

TEST(SimplifyExpr, UnknownExtentsProveNothing) {
  test::expectTransformFiles(Passes, "SimplifyExpr", "unknown_dims");
}

TEST(SimplifyExpr, LayoutTransformsThatMoveNothingAreReshapes) {
  test::expectTransformFiles(Passes, "SimplifyExpr", "layout_views");
}

} // namespace
