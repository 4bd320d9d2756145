// Property tests of the anchors' compute rules (the generated path used when
// oneDNN is off): dense, matmul, conv and the pools, lowered, JIT-compiled and
// run over several sizes of their symbolic extents, equal the reference
// interpreter; an anchor with an elementwise tail lowers to one loop nest.

#include "codegen/CodegenTestUtil.h"
#include "codegen/ComputeRule.h"

#include <set>

using namespace rivet;
using namespace rivet::test;

namespace {

struct OpCase {
  std::string op; // the operator the case covers
  std::vector<std::string> types;
  std::string call;
};

// Spatial extents stay large enough for every window below; "?" is 1, equal
// to n, or n is 1 (run-time broadcasting of matmul batch axes).
const std::vector<SizeMap> kSizes = {
    {{"n", 1}, {"m", 5}, {"h", 5}, {"w", 7}, {"?", 2}},
    {{"n", 3}, {"m", 2}, {"h", 8}, {"w", 4}, {"?", 3}},
    {{"n", 2}, {"m", 1}, {"h", 4}, {"w", 9}, {"?", 1}},
};

std::string t(const std::string &Dims, const std::string &DType = "float32") {
  return "Tensor[(" + Dims + "), " + DType + "]";
}

std::vector<OpCase> denseCases() {
  return {
      {"dense", {t("n, 5"), t("4, 5")}, "dense(%p0, %p1)"},
      {"dense",
       {t("n, m, 6", "float64"), t("3, 6", "float64")},
       "dense(%p0, %p1)"},
      {"dense", {t("2, 3, 8"), t("5, 8")}, "dense(%p0, %p1)"},
      {"dense", {t("7"), t("m, 7")}, "dense(%p0, %p1)"},
  };
}

std::vector<OpCase> matmulCases() {
  std::vector<OpCase> C = {
      {"matmul", {t("n, 4"), t("4, m")}, "matmul(%p0, %p1)"},
      // Batch axes: one operand without, both with, broadcast 1s.
      {"matmul", {t("2, n, 3, 4"), t("4, 5")}, "matmul(%p0, %p1)"},
      {"matmul", {t("n, 2, 3"), t("n, 3, 4")}, "matmul(%p0, %p1)"},
      {"matmul",
       {t("n, 1, 3, 4", "float64"), t("5, 4, m", "float64")},
       "matmul(%p0, %p1)"},
      // An unknown batch extent that may be 1 at run time.
      {"matmul", {t("?, 3, 4"), t("n, 4, 2")}, "matmul(%p0, %p1)"},
      // 1-D operands.
      {"matmul", {t("4"), t("n, 4, m")}, "matmul(%p0, %p1)"},
      {"matmul", {t("n, 6"), t("6")}, "matmul(%p0, %p1)"},
      {"matmul", {t("m"), t("m")}, "matmul(%p0, %p1)"},
      // Static.
      {"matmul", {t("3, 17"), t("17, 9")}, "matmul(%p0, %p1)"},
  };
  for (const char *D : {"int32", "int64", "uint8"})
    C.push_back(
        {"matmul", {t("n, 3, 5", D), t("5, m", D)}, "matmul(%p0, %p1)"});
  return C;
}

std::vector<OpCase> convCases() {
  return {
      // 2-D, static, strided and padded.
      {"conv",
       {t("1, 3, 7, 7"), t("4, 3, 3, 3")},
       "conv(%p0, %p1, strides=[2, 2], pads=[1, 1, 1, 1])"},
      // Symbolic batch, bias, dilation, asymmetric pads.
      {"conv",
       {t("n, 2, 6, 5"), t("4, 2, 3, 2"), t("4")},
       "conv(%p0, %p1, %p2, dilations=[2, 1], pads=[0, 1, 2, 0])"},
      // Symbolic spatial extents, groups.
      {"conv",
       {t("n, 4, h, w"), t("6, 2, 3, 3")},
       "conv(%p0, %p1, group=2, pads=[1, 1, 1, 1])"},
      // Depthwise with stride and bias.
      {"conv",
       {t("n, 3, h, w"), t("3, 1, 3, 3"), t("3")},
       "conv(%p0, %p1, %p2, group=3, strides=[2, 2], pads=[1, 1, 1, 1])"},
      // auto_pad over symbolic and static extents.
      {"conv",
       {t("n, 2, h, w"), t("3, 2, 3, 3")},
       "conv(%p0, %p1, strides=[2, 1], auto_pad=\"SAME_UPPER\")"},
      {"conv",
       {t("2, 2, 6, 5", "float64"), t("3, 2, 2, 2", "float64")},
       "conv(%p0, %p1, auto_pad=\"SAME_LOWER\")"},
      {"conv",
       {t("n, 2, h, w"), t("2, 2, 2, 3")},
       "conv(%p0, %p1, strides=[2, 2], auto_pad=\"VALID\")"},
      // 1-D and 3-D.
      {"conv",
       {t("n, 2, w", "float64"), t("3, 2, 3", "float64")},
       "conv(%p0, %p1, pads=[2, 1], strides=[2])"},
      {"conv",
       {t("1, 2, 4, 3, 5"), t("2, 2, 2, 2, 3"), t("2")},
       "conv(%p0, %p1, %p2, pads=[1, 0, 1, 0, 1, 1])"},
  };
}

std::vector<OpCase> poolCases() {
  return {
      {"max_pool",
       {t("n, 3, h, w")},
       "max_pool(%p0, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])"},
      {"max_pool",
       {t("n, 2, h, w")},
       "max_pool(%p0, kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1)"},
      {"max_pool",
       {t("2, 3, 6, 6", "int8")},
       "max_pool(%p0, kernel_shape=[2, 2], dilations=[2, 1], pads=[1, 0, 0, "
       "1])"},
      {"max_pool",
       {t("n, 2, w", "float64")},
       "max_pool(%p0, kernel_shape=[3], auto_pad=\"SAME_UPPER\")"},
      {"avg_pool",
       {t("n, 3, h, w")},
       "avg_pool(%p0, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])"},
      {"avg_pool",
       {t("n, 3, h, w")},
       "avg_pool(%p0, kernel_shape=[3, 2], pads=[1, 1, 1, 1], "
       "count_include_pad=1)"},
      {"avg_pool",
       {t("n, 2, h, w", "float64")},
       "avg_pool(%p0, kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 0, 0], "
       "ceil_mode=1, count_include_pad=1)"},
      {"avg_pool",
       {t("2, 4, 6, 6")},
       "avg_pool(%p0, kernel_shape=[2, 2], strides=[2, 2])"},
      {"lp_pool",
       {t("n, 2, h, w")},
       "lp_pool(%p0, kernel_shape=[2, 2], pads=[1, 1, 0, 0], p=2)"},
      {"lp_pool",
       {t("n, 2, w", "float64")},
       "lp_pool(%p0, kernel_shape=[3], strides=[2], p=1)"},
      {"global_avg_pool", {t("n, 3, h, w")}, "global_avg_pool(%p0)"},
      {"global_avg_pool", {t("2, 3, 4, 5", "float64")}, "global_avg_pool(%p0)"},
      {"global_max_pool", {t("n, 3, h, w")}, "global_max_pool(%p0)"},
  };
}

std::vector<OpCase> allCases() {
  std::vector<OpCase> C;
  for (auto *Family : {denseCases, matmulCases, convCases, poolCases}) {
    std::vector<OpCase> F = Family();
    C.insert(C.end(), F.begin(), F.end());
  }
  return C;
}

// float32 contractions accumulate in float32 (the reference too, in another
// order); float64 ones agree to rounding.
void expectCasesMatch(const std::vector<OpCase> &Cases) {
  for (const OpCase &C : Cases) {
    SCOPED_TRACE(C.call);
    bool F32 = C.types[0].find("float32") != std::string::npos;
    expectKernelMatches(C.types, C.call, kSizes, F32 ? 1e-4 : 1e-9,
                        F32 ? 1e-5 : 1e-12);
  }
}

TEST(AnchorRules, DenseMatchesTheInterpreter) {
  expectCasesMatch(denseCases());
}
TEST(AnchorRules, MatmulMatchesTheInterpreter) {
  expectCasesMatch(matmulCases());
}
TEST(AnchorRules, ConvMatchesTheInterpreter) { expectCasesMatch(convCases()); }
TEST(AnchorRules, PoolsMatchTheInterpreter) { expectCasesMatch(poolCases()); }

TEST(AnchorRules, EveryAnchorHasARuleAndACase) {
  std::set<std::string> Covered;
  for (const OpCase &C : allCases())
    Covered.insert(C.op);
  for (const char *Op : {"dense", "matmul", "conv", "max_pool", "avg_pool",
                         "lp_pool", "global_avg_pool", "global_max_pool"}) {
    EXPECT_NE(codegen::ComputeRuleRegistry::global().find(Op), nullptr)
        << "no compute rule for '" << Op << "'";
    EXPECT_TRUE(Covered.count(Op)) << "no test case for '" << Op << "'";
  }
}

/// The lowered kernel of Body (asserting that lowering succeeds).
codegen::LoweredKernel lowered(const std::vector<std::string> &Types,
                               const std::string &Body) {
  ir::Module M = ir::parseModule(primitiveModuleText(Types, Body), "<test>");
  ir::inferTypes(M);
  return lowerOrFail(M, uniqueKernelName("fused"));
}

/// Anchor + elementwise tail: one loop nest over the output (the tail is
/// applied to the accumulated value, no intermediate buffer), equal to the
/// interpreter.
void expectFusedOneNest(const std::vector<std::string> &Types,
                        const std::string &Body) {
  SCOPED_TRACE(Body);
  codegen::LoweredKernel L = lowered(Types, Body);
  ASSERT_EQ(L.kernel.body.size(), 1u) << codegen::printLoopKernel(L.kernel);
  EXPECT_EQ(L.kernel.body[0]->kind, codegen::LoopStmtKind::For);
  EXPECT_EQ(L.kernel.buffers.size(), Types.size() + 1);
  expectKernelMatches(Types, Body, kSizes, 1e-4, 1e-5);
}

TEST(AnchorRules, ConvWithBiasAndReluIsOneLoopNest) {
  expectFusedOneNest({t("n, 3, h, w"), t("4, 3, 3, 3"), t("4, 1, 1")},
                     "let %c = conv(%p0, %p1, pads=[1, 1, 1, 1]);\n"
                     "let %a = add(%c, %p2);\n"
                     "relu(%a)");
  // Static shapes, strided depthwise, a clip tail.
  expectFusedOneNest({t("2, 4, 9, 9"), t("4, 1, 3, 3"), t("4")},
                     "let %c = conv(%p0, %p1, %p2, group=4, strides=[2, 2]);\n"
                     "clip(%c, min=0.0, max=0.25)");
}

TEST(AnchorRules, MatmulAndDenseWithTailsAreOneLoopNest) {
  expectFusedOneNest({t("n, 3, 8"), t("8, m"), t("m")},
                     "let %p = matmul(%p0, %p1);\n"
                     "let %a = add(%p, %p2);\n"
                     "tanh(%a)");
  expectFusedOneNest({t("n, 8"), t("5, 8"), t("5")},
                     "let %d = dense(%p0, %p1);\n"
                     "let %a = add(%d, %p2);\n"
                     "sigmoid(%a)");
}

TEST(AnchorRules, PoolAfterElementwiseIsOneLoopNest) {
  // The pool reads its producer's value at each window position.
  expectFusedOneNest({t("n, 2, h, w"), t("2, 1, 1")},
                     "let %a = add(%p0, %p1);\n"
                     "let %r = relu(%a);\n"
                     "max_pool(%r, kernel_shape=[2, 2], pads=[1, 1, 0, 0])");
}

TEST(AnchorRules, UnsupportedCasesAreRefusedWithAReason) {
  ir::Module M =
      ir::parseModule(primitiveModuleText({t("1, 2, 5, 5", "float16"),
                                           t("2, 2, 3, 3", "float16")},
                                          "conv(%p0, %p1)"),
                      "<test>");
  ir::inferTypes(M);
  codegen::LoweringResult R =
      codegen::lowerPrimitive(primitiveOf(M), uniqueKernelName("f16"));
  EXPECT_FALSE(R.ok());
  EXPECT_NE(R.unsupported.find("float16"), std::string::npos) << R.unsupported;
}

} // namespace
