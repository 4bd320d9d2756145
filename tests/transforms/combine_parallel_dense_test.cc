//===- combine_parallel_dense_test.cc - CombineParallelDense
//---------------===//
#include "support/PassTest.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes{"CombineParallelDense"};

TEST(CombineParallelDense, MatmulsAndTheirBiasAddsMerge) {
  test::expectTransformFiles(Passes, "CombineParallelDense", "matmul_bias");
}

TEST(CombineParallelDense, DenseTailsWithOtherOperandOrderStayApart) {
  test::expectTransformFiles(Passes, "CombineParallelDense",
                             "dense_operand_order");
}

/// Each program must come out of the pass unchanged.
void expectUnchanged(const std::string &Program) {
  test::expectTransform(Passes, Program, Program);
}

TEST(CombineParallelDense, OtherInnerExtentsAndComputedWeightsDoNotMerge) {
  expectUnchanged(R"(
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(3, 2), float32]) -> (Tensor[(2, 2), float32], Tensor[(2, 2), float32], Tensor[(2, 2), float32]) {
  let %a = matmul(%x, const[(3, 2), float32]([1, 2, 3, 4, 5, 6]));
  let %b = matmul(%x, %w);
  let %c = dense(%x, const[(2, 3), float32]([1, 2, 3, 4, 5, 6]));
  (%a, %b, %c)
}
)");
}

TEST(CombineParallelDense, VectorWeightsDoNotMerge) {
  // A 1-D right operand has no column axis to concatenate along.
  expectUnchanged(R"(
def @main(%x: Tensor[(2, 3), float32]) -> (Tensor[(2,), float32], Tensor[(2,), float32]) {
  let %a = matmul(%x, const[(3,), float32]([1, 2, 3]));
  let %b = matmul(%x, const[(3,), float32]([4, 5, 6]));
  (%a, %b)
}
)");
}

} // namespace
