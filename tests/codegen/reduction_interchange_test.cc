// Reductions that read across rows (a matmul's q[r, i], a sum over a
// leading axis) run with the output row as the accumulator and the row
// loop innermost: the kernel text shows which groups are rewritten, and
// every kernel, rewritten or not, agrees with the reference interpreter
// over static and symbolic shapes.

#include "codegen/CodegenTestUtil.h"
#include "codegen/ReductionInterchange.h"

using namespace rivet;
using namespace rivet::test;

namespace {

std::string kernelText(const std::vector<std::string> &Types,
                       const std::string &Body) {
  codegen::LoweredKernel L =
      lowerOrFail(parsePrimitive(Types, Body), uniqueKernelName(Body));
  return codegen::printLoopKernel(L.kernel);
}

/// Whether the kernel accumulates into its output row (the rewritten form).
bool accumulatesInOutput(const std::string &Text) {
  return Text.find("= add(out[") != std::string::npos;
}

TEST(ReductionInterchange, MatmulAccumulatesRowsOfTheRightOperand) {
  std::string T =
      kernelText({"Tensor[(n, 16), float32]", "Tensor[(16, 32), float32]"},
                 "matmul(%p0, %p1)");
  EXPECT_TRUE(accumulatesInOutput(T)) << T;
  // The row loop is the vectorized one, inside the reduction.
  EXPECT_NE(T.find("for r"), std::string::npos) << T;
  EXPECT_LT(T.find("for r"), T.find("vectorized {\n          out")) << T;
}

TEST(ReductionInterchange, DotProductsAlongContiguousRowsStay) {
  // dense reads both operands along the reduction: already contiguous.
  std::string T =
      kernelText({"Tensor[(n, 16), float32]", "Tensor[(32, 16), float32]"},
                 "dense(%p0, %p1)");
  EXPECT_FALSE(accumulatesInOutput(T)) << T;
  // max is not a sum; a sum along the last axis reads rows contiguously.
  EXPECT_FALSE(accumulatesInOutput(
      kernelText({"Tensor[(n, 16), float32]"}, "max(%p0, axis=[0])")));
  EXPECT_FALSE(accumulatesInOutput(
      kernelText({"Tensor[(n, 16), float32]"}, "sum(%p0, axis=[1])")));
}

TEST(ReductionInterchange, EpilogueRunsOnTheAccumulatedRow) {
  std::string T = kernelText(
      {"Tensor[(n, 8), float32]", "Tensor[(8, 24), float32]",
       "Tensor[(24), float32]"},
      "let %m = matmul(%p0, %p1);\nlet %b = add(%m, %p2);\nrelu(%b)");
  EXPECT_TRUE(accumulatesInOutput(T)) << T;
  // mean divides the row; a 1-D output keeps its parallel loop instead.
  EXPECT_TRUE(accumulatesInOutput(
      kernelText({"Tensor[(4, n, 16), float64]"}, "mean(%p0, axis=[1])")));
  // A float32 sum accumulates in float64, as the reference does: the
  // float32 output row cannot hold it, so blocks of 16 row elements
  // accumulate in registers (a tail shorter than a block keeps its loop).
  std::string B =
      kernelText({"Tensor[(4, n, 37), float32]"}, "mean(%p0, axis=[1])");
  EXPECT_FALSE(accumulatesInOutput(B)) << B;
  EXPECT_NE(B.find("for i1b in [0, 2)"), std::string::npos) << B;
  EXPECT_NE(B.find("for i1 in [0, 5)"), std::string::npos) << B;
}

TEST(ReductionInterchange, RewrittenAndKeptKernelsMatchTheInterpreter) {
  std::vector<SizeMap> Sizes = {{{"n", 1}}, {{"n", 7}}, {{"n", 33}}};
  expectKernelMatches({"Tensor[(n, 16), float32]", "Tensor[(16, 32), float32]"},
                      "matmul(%p0, %p1)", Sizes, 1e-5, 1e-5);
  expectKernelMatches(
      {"Tensor[(n, 2, 16), float32]", "Tensor[(16, n), float32]"},
      "matmul(%p0, %p1)", Sizes, 1e-5, 1e-5);
  expectKernelMatches(
      {"Tensor[(3, n, 5), float32]", "Tensor[(3, 5, 9), float32]"},
      "matmul(%p0, %p1)", Sizes, 1e-5, 1e-5);
  expectKernelMatches({"Tensor[(n, 8), float32]", "Tensor[(8, 24), float32]",
                       "Tensor[(24), float32]"},
                      "let %m = matmul(%p0, %p1);\nlet %b = add(%m, %p2);\n"
                      "relu(%b)",
                      Sizes, 1e-5, 1e-5);
  expectKernelMatches({"Tensor[(n, 6, 10), float32]"}, "sum(%p0, axis=[0, 1])",
                      Sizes, 1e-5, 1e-5);
  expectKernelMatches({"Tensor[(n, 17), float32]"}, "mean(%p0, axis=[0])",
                      Sizes, 1e-5, 1e-5);
  expectKernelMatches({"Tensor[(3, n, 37), float32]"}, "mean(%p0, axis=[1])",
                      Sizes, 1e-5, 1e-5);
  expectKernelMatches({"Tensor[(2, n, 32), float32]"},
                      "sqrt(sum(%p0, axis=[1]))", Sizes, 1e-5, 1e-5);
  expectKernelMatches({"Tensor[(4, n, 17), float32]"}, "mean(%p0, axis=[1])",
                      Sizes, 1e-5, 1e-5);
  expectKernelMatches({"Tensor[(n, 16), float64]", "Tensor[(16, 5), float64]"},
                      "matmul(%p0, %p1)", Sizes, 1e-12, 1e-12);
  // Integer matmuls accumulate in int64: not rewritten into an int32 output,
  // exact either way.
  expectKernelMatches({"Tensor[(n, 16), int32]", "Tensor[(16, 8), int32]"},
                      "matmul(%p0, %p1)", Sizes, 0, 0);
  expectKernelMatches({"Tensor[(n, 16), int64]", "Tensor[(16, 8), int64]"},
                      "matmul(%p0, %p1)", Sizes, 0, 0);
  expectKernelMatches({"Tensor[(n, 16), float32]", "Tensor[(32, 16), float32]"},
                      "dense(%p0, %p1)", Sizes, 1e-5, 1e-5);
}

} // namespace
