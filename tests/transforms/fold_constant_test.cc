//===- fold_constant_test.cc - FoldConstant -------------------------------===//
#include "support/PassTest.h"

#include "ir/transforms/FoldConstant.h"

using namespace rivet;
using namespace rivet::ir;

namespace {

const std::vector<std::string> Passes = {"FoldConstant", "DeadCodeElimination"};

TEST(FoldConstant, ArithmeticOnConstants) {
  test::expectTransformFiles(Passes, "FoldConstant", "arithmetic");
}

TEST(FoldConstant, StaticShapeQueries) {
  test::expectTransformFiles(Passes, "FoldConstant", "shape_queries");
}

TEST(FoldConstant, TuplesAndProjections) {
  test::expectTransformFiles(Passes, "FoldConstant", "tuples");
}

TEST(FoldConstant, PrimitiveFunctionsStay) {
  test::expectTransformFiles(Passes, "FoldConstant", "primitive");
}

/// Runs foldConstants on @main of Text and returns the printed result.
std::string foldMain(const std::string &Text) {
  Module M = test::parseTyped(Text);
  M.addFunction("main", foldConstants(M.function("main"), M));
  inferTypes(M);
  return printModule(M);
}

TEST(FoldConstant, CallsThatFailStayForRunTime) {
  // Training dropout with ratio > 0 is refused by its kernel: the error
  // belongs to run time, not to the compiler.
  std::string Out = foldMain(R"(
def @main(%x: Tensor[(2,), float32]) {
  let %d = dropout(const[(2,), float32]([1, 2]), 0.5, true);
  let %y = %d.0;
  add(%x, %y)
}
)");
  EXPECT_NE(Out.find("dropout("), std::string::npos) << Out;
}

TEST(FoldConstant, HugeResultsStayUnfolded) {
  // 4096 x 4096 x 2 float32 is 128 MiB, over kMaxFoldedBytes.
  std::string Out = foldMain(R"(
def @main(%x: Tensor[(4096, 4096, 2), float32]) {
  let %big = full(1.0, shape=[4096, 4096, 2]);
  let %small = full(1.0, shape=[2, 2]);
  (add(%x, %big), %small)
}
)");
  EXPECT_NE(Out.find("shape=[4096, 4096, 2]"), std::string::npos) << Out;
  EXPECT_EQ(Out.find("shape=[2, 2]"), std::string::npos) << Out;
}

} // namespace
