// Lowering of fused groups: multi-operator chains become one loop nest with
// no intermediate buffers and agree with the interpreter; reductions land in
// scalar locals at the right loop depth; opaque operators are refused.

#include "codegen/CodegenTestUtil.h"

using namespace rivet;
using namespace rivet::test;

namespace {

const std::vector<SizeMap> kSizes = {
    {{"n", 1}, {"m", 3}, {"?", 2}},
    {{"n", 5}, {"m", 8}, {"?", 5}},
    {{"n", 12}, {"m", 1}, {"?", 1}},
};

TEST(LowerPrimitive, MultiplyAddReluWithBroadcasting) {
  std::vector<std::string> Types = {"Tensor[(n, m), float32]",
                                    "Tensor[(m), float32]",
                                    "Tensor[(n, 1), float32]"};
  std::string Body = "let %a = multiply(%p0, %p1);\n"
                     "let %b = add(%a, %p2);\n"
                     "relu(%b)";
  expectKernelMatches(Types, Body, kSizes);
  codegen::LoweredKernel L = lowerOrFail(parsePrimitive(Types, Body), "chain");
  // Inputs and one output only; one store in one loop nest.
  EXPECT_EQ(L.kernel.buffers.size(), 4u);
  std::string Text = codegen::printLoopKernel(L.kernel);
  EXPECT_EQ(countOccurrences(Text, " = "), 1u) << Text;
  EXPECT_EQ(countOccurrences(Text, "for "), 2u) << Text;
  EXPECT_NE(Text.find("vectorized"), std::string::npos) << Text;
  // n and m are the kernel's only size parameters.
  EXPECT_EQ(L.kernel.sizeParams, (std::vector<std::string>{"n", "m"}));
}

TEST(LowerPrimitive, TransposeThenAdd) {
  expectKernelMatches(
      {"Tensor[(n, 4, m), float64]", "Tensor[(m, n, 4), float64]"},
      "let %t = transpose(%p0, axes=[2, 0, 1]);\n"
      "add(%t, %p1)",
      kSizes);
}

TEST(LowerPrimitive, ReductionOfAnInjectiveInput) {
  expectKernelMatches({"Tensor[(n, 6), float32]"},
                      "let %r = reshape(%p0, newshape=[-1, 2, 3]);\n"
                      "let %e = exp(%r);\n"
                      "sum(%e, axis=[1, 2])",
                      kSizes, 1e-4, 1e-5);
}

TEST(LowerPrimitive, ReductionFeedingElementwiseIsHoisted) {
  std::vector<std::string> Types = {"Tensor[(n, m), float32]"};
  std::string Body = "let %e = exp(%p0);\n"
                     "let %s = sum(%e, axis=[1], keepdims=1);\n"
                     "let %d = divide(%e, %s);\n"
                     "multiply(%d, 2.0)";
  expectKernelMatches(Types, Body, kSizes, 1e-4, 1e-6);
  codegen::LoweredKernel L =
      lowerOrFail(parsePrimitive(Types, Body), "hoisted");
  std::string Text = codegen::printLoopKernel(L.kernel);
  // The accumulator is computed once per row, before the loop over columns.
  size_t Local = Text.find("local acc0");
  size_t Inner = Text.find("for i1");
  ASSERT_NE(Local, std::string::npos) << Text;
  ASSERT_NE(Inner, std::string::npos) << Text;
  EXPECT_LT(Local, Inner) << Text;
  EXPECT_EQ(L.kernel.buffers.size(), 2u);
}

TEST(LowerPrimitive, SoftmaxChainWithCast) {
  expectKernelMatches({"Tensor[(?, 5), float64]"},
                      "let %s = softmax(%p0, axis=1);\n"
                      "let %c = cast(%s, dtype=\"float32\");\n"
                      "sqrt(%c)",
                      kSizes, 1e-5, 1e-6);
}

TEST(LowerPrimitive, ComparisonSelectAndIntegers) {
  expectKernelMatches({"Tensor[(n, 3), int64]", "Tensor[(3), int64]"},
                      "let %m = greater(%p0, %p1);\n"
                      "let %a = add(%p0, %p1);\n"
                      "let %w = where(%m, %a, %p1);\n"
                      "multiply(%w, 3i64)",
                      kSizes);
}

TEST(LowerPrimitive, StaticShapesGiveConstantExtents) {
  std::vector<std::string> Types = {"Tensor[(4, 8), float32]",
                                    "Tensor[(8), float32]"};
  std::string Body = "let %a = add(%p0, %p1);\nsigmoid(%a)";
  expectKernelMatches(Types, Body, {{}});
  codegen::LoweredKernel L = lowerOrFail(parsePrimitive(Types, Body), "static");
  EXPECT_TRUE(L.kernel.sizeParams.empty());
  EXPECT_NE(codegen::printLoopKernel(L.kernel).find("[0, 8) vectorized"),
            std::string::npos)
      << codegen::printLoopKernel(L.kernel);
}

TEST(LowerPrimitive, RefusesOpaqueOperators) {
  ir::Module M = parsePrimitive({"Tensor[(n, 4), float32]"},
                                "let %a = relu(%p0);\nargmax(%a, axis=1)");
  codegen::LoweringResult R = codegen::lowerPrimitive(primitiveOf(M), "opaque");
  EXPECT_FALSE(R.ok());
  EXPECT_NE(R.unsupported.find("argmax"), std::string::npos) << R.unsupported;
}

TEST(LowerPrimitive, RefusesIntegerDivision) {
  ir::Module M = parsePrimitive({"Tensor[(n), int32]", "Tensor[(n), int32]"},
                                "divide(%p0, %p1)");
  codegen::LoweringResult R = codegen::lowerPrimitive(primitiveOf(M), "idiv");
  EXPECT_FALSE(R.ok());
  EXPECT_NE(R.unsupported.find("divide"), std::string::npos) << R.unsupported;
  // A zero constant divisor too (the reference kernel fails at run time).
  M = parsePrimitive({"Tensor[(n), int32]"}, "divide(%p0, 0i32)");
  R = codegen::lowerPrimitive(primitiveOf(M), "idiv0");
  EXPECT_FALSE(R.ok());
  EXPECT_NE(R.unsupported.find("nonzero constant"), std::string::npos)
      << R.unsupported;
}

TEST(LowerPrimitive, RefusesContractionsNotKnownToAgree) {
  // Two unknown contraction extents: the loop nest would read one operand up
  // to the other's extent.
  for (const char *Body : {"matmul(%p0, %p1)", "dense(%p0, %p2)"}) {
    ir::Module M =
        parsePrimitive({"Tensor[(n, ?), float32]", "Tensor[(?, 4), float32]",
                        "Tensor[(4, ?), float32]"},
                       Body);
    codegen::LoweringResult R =
        codegen::lowerPrimitive(primitiveOf(M), "contraction");
    EXPECT_FALSE(R.ok()) << Body;
    EXPECT_NE(R.unsupported.find("contraction extents are not known to agree"),
              std::string::npos)
        << R.unsupported;
  }
  // One symbol on both sides is one size parameter, checked per call.
  expectKernelMatches({"Tensor[(n, m), float32]", "Tensor[(m, 4), float32]"},
                      "matmul(%p0, %p1)", kSizes);
}

TEST(LowerPrimitive, RefusesNonFunctions) {
  ir::Module M = parsePrimitive({"Tensor[(n), float32]"}, "relu(%p0)");
  EXPECT_FALSE(codegen::lowerPrimitive(
                   M.function("main")->as<ir::FunctionNode>()->body, "x")
                   .ok());
}

} // namespace
