// Property tests of the compute rules: for every operator with a rule, a
// one-operator primitive function lowered, JIT-compiled and run over several
// sizes of its symbolic extents equals the reference interpreter, for float32,
// float64, integer and bool dtypes where the operator takes them.

#include "codegen/CodegenTestUtil.h"
#include "codegen/ComputeRule.h"

#include <limits>
#include <set>

using namespace rivet;
using namespace rivet::test;

namespace {

/// One operator case: argument types and the call (arguments %p0, %p1, ...).
struct OpCase {
  std::string op; // the operator the case covers
  std::vector<std::string> types;
  std::string call;
};

const std::vector<SizeMap> kSizes = {
    // "?" is 1, equal to n, or n is 1: the run-time broadcasting cases.
    {{"n", 1}, {"m", 5}, {"?", 2}},
    {{"n", 3}, {"m", 4}, {"?", 3}},
    {{"n", 17}, {"m", 9}, {"?", 1}},
};

std::string t(const std::string &Dims, const std::string &DType) {
  return "Tensor[(" + Dims + "), " + DType + "]";
}

std::vector<OpCase> binaryCases(const std::string &Op,
                                const std::vector<std::string> &DTypes) {
  std::vector<OpCase> Out;
  // Symbolic, broadcast against a lower-rank static argument.
  for (const std::string &D : DTypes)
    Out.push_back({Op, {t("n, 4", D), t("4", D)}, Op + "(%p0, %p1)"});
  // Unknown extents broadcasting at run time (one side may be 1).
  Out.push_back(
      {Op, {t("?, 3", DTypes[0]), t("n, 1", DTypes[0])}, Op + "(%p0, %p1)"});
  // Static shapes, both sides broadcasting.
  Out.push_back(
      {Op, {t("2, 1, 5", DTypes[0]), t("3, 1", DTypes[0])}, Op + "(%p0, %p1)"});
  return Out;
}

/// Symbolic shapes for each dtype; a static one too when Static is set.
std::vector<OpCase> unaryCases(const std::string &Op,
                               const std::vector<std::string> &DTypes,
                               const std::string &Attrs = "",
                               bool Static = true) {
  std::vector<OpCase> Out;
  for (const std::string &D : DTypes)
    Out.push_back({Op, {t("n, m", D)}, Op + "(%p0" + Attrs + ")"});
  if (Static)
    Out.push_back({Op, {t("3, 8", DTypes[0])}, Op + "(%p0" + Attrs + ")"});
  return Out;
}

const std::vector<std::string> kNumeric = {"float32", "float64", "int64",
                                           "int32"};
const std::vector<std::string> kFloat = {"float32", "float64"};

std::vector<OpCase> binaryOpCases() {
  std::vector<OpCase> C;
  auto Add = [&](std::vector<OpCase> V) {
    C.insert(C.end(), V.begin(), V.end());
  };
  for (const char *Op : {"add", "subtract", "multiply", "maximum", "minimum"})
    Add(binaryCases(Op, kNumeric));
  for (const char *Op : {"divide", "pow"})
    Add(binaryCases(Op, kFloat));
  // Integer division by nonzero constants (truncating; -1 negates).
  C.push_back({"divide", {t("n, 4", "int64")}, "divide(%p0, 3i64)"});
  C.push_back(
      {"divide", {t("?, 3", "int64")}, "divide(subtract(%p0, 5i64), 4i64)"});
  C.push_back({"divide", {t("n", "int32")}, "divide(%p0, -1i32)"});
  C.push_back(
      {"divide", {t("n, 2", "int32")}, "divide(subtract(%p0, 6i32), -4i32)"});
  C.push_back({"divide", {t("n", "uint8")}, "divide(%p0, 3u8)"});
  Add(binaryCases("mod", kFloat));
  C.push_back({"mod",
               {t("n, 4", "float32"), t("4", "float32")},
               "mod(%p0, %p1, fmod=1)"});
  for (const char *Op : {"left_shift", "right_shift", "bitwise_and",
                         "bitwise_or", "bitwise_xor"})
    Add(binaryCases(Op, {"int64", "int32", "uint8"}));
  for (const char *Op :
       {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
    Add(binaryCases(Op, {"float32", "int64"}));
  for (const char *Op : {"logical_and", "logical_or", "logical_xor"})
    Add(binaryCases(Op, {"bool"}));
  return C;
}

std::vector<OpCase> unaryOpCases() {
  std::vector<OpCase> C;
  auto Add = [&](std::vector<OpCase> V) {
    C.insert(C.end(), V.begin(), V.end());
  };
  Add(unaryCases("logical_not", {"bool"}));
  Add(unaryCases("bitwise_not", {"int64", "int8", "uint16"}));
  for (const char *Op : {"negative", "abs", "relu", "sign"})
    Add(unaryCases(Op, {"float32", "float64", "int64", "int8"}));
  for (const char *Op :
       {"exp",  "log",  "tanh",  "sqrt",  "ceil",  "floor",   "round",
        "erf",  "sin",  "cos",   "tan",   "asin",  "acos",    "atan",
        "sinh", "cosh", "asinh", "acosh", "atanh", "sigmoid", "reciprocal"})
    Add(unaryCases(Op, kFloat, "", /*Static=*/false));
  Add(unaryCases("isnan", {"float32"}));
  Add(unaryCases("isinf", {"float64"}, ", detect_negative=0"));
  C.push_back({"where",
               {t("n, 1", "bool"), t("n, 4", "float32"), t("4", "float32")},
               "where(%p0, %p1, %p2)"});
  C.push_back({"where",
               {t("?", "bool"), t("?", "int64"), t("", "int64")},
               "where(%p0, %p1, %p2)"});
  for (const char *To : {"int32", "float64", "bool", "int8"})
    C.push_back({"cast",
                 {t("n, 3", "float32")},
                 std::string("cast(%p0, dtype=\"") + To + "\")"});
  C.push_back({"cast", {t("n", "int64")}, "cast(%p0, dtype=\"float32\")"});
  C.push_back({"cast", {t("n", "bool")}, "cast(%p0, dtype=\"int32\")"});
  C.push_back({"cast_like",
               {t("n, 2", "int32"), t("1", "float64")},
               "cast_like(%p0, %p1)"});
  C.push_back({"full_like",
               {t("n, 2", "float32")},
               "full_like(%p0, value=2.5, dtype=\"int64\")"});
  return C;
}

std::vector<OpCase> activationCases() {
  std::vector<OpCase> C;
  auto Add = [&](std::vector<OpCase> V) {
    C.insert(C.end(), V.begin(), V.end());
  };
  Add(unaryCases("elu", kFloat, ", alpha=0.7"));
  Add(unaryCases("selu", kFloat));
  Add(unaryCases("celu", kFloat, ", alpha=1.5"));
  Add(unaryCases("leaky_relu", kFloat, ", alpha=0.1"));
  Add(unaryCases("hard_sigmoid", kFloat));
  Add(unaryCases("hard_swish", kFloat));
  Add(unaryCases("thresholded_relu", kFloat, ", alpha=0.25"));
  Add(unaryCases("shrink", kFloat, ", lambd=0.3, bias=0.1"));
  Add(unaryCases("softplus", kFloat));
  Add(unaryCases("softsign", kFloat));
  Add(unaryCases("clip", kFloat, ", min=-0.5, max=0.25"));
  Add(unaryCases("clip", {"int32", "uint8"}, ", min=2, max=6"));
  C.push_back({"clip", {t("n", "float32")}, "clip(%p0, max=0.1)"});
  C.push_back(
      {"prelu", {t("n, 3", "float32"), t("3", "float32")}, "prelu(%p0, %p1)"});
  return C;
}

std::vector<OpCase> injectiveCases() {
  std::vector<OpCase> C;
  C.push_back(
      {"reshape", {t("n, 6", "float32")}, "reshape(%p0, newshape=[-1, 3, 2])"});
  C.push_back(
      {"reshape", {t("4, 6", "int64")}, "reshape(%p0, newshape=[3, 8])"});
  C.push_back({"flatten", {t("n, 3, 4", "float64")}, "flatten(%p0, axis=2)"});
  C.push_back({"squeeze", {t("n, 1, 4", "float32")}, "squeeze(%p0, axes=[1])"});
  C.push_back(
      {"unsqueeze", {t("n, 4", "bool")}, "unsqueeze(%p0, axes=[0, 2])"});
  C.push_back({"transpose",
               {t("n, 3, 5", "float32")},
               "transpose(%p0, axes=[2, 0, 1])"});
  C.push_back({"transpose", {t("n, m", "int64")}, "transpose(%p0)"});
  C.push_back(
      {"expand", {t("n, 1", "float32")}, "expand(%p0, shape=[2, 1, 5])"});
  C.push_back(
      {"concatenate",
       {t("n, 2", "float32"), t("n, 3", "float32"), t("n, 1", "float32")},
       "concatenate(%p0, %p1, %p2, axis=1)"});
  C.push_back({"concatenate",
               {t("n, 2", "int64"), t("m, 2", "int64")},
               "concatenate(%p0, %p1)"});
  C.push_back({"stack",
               {t("n, 2", "float32"), t("n, 2", "float32")},
               "stack(%p0, %p1, axis=1)"});
  C.push_back({"strided_slice",
               {t("n, 10", "float32")},
               "strided_slice(%p0, begin=[1], end=[9], strides=[3], "
               "axes=[1])"});
  C.push_back({"strided_slice",
               {t("8, m", "float64")},
               "strided_slice(%p0, begin=[-1, 0], end=[-9, 4], "
               "strides=[-2, 1])"});
  // Constant indices in range; data indices stay on the builtin kernel,
  // which checks them (GroupsThatCanFailOnTheirDataStayOnBuiltinKernels).
  C.push_back({"take", {t("n, 10", "float32")}, "take(%p0, 3i64, axis=1)"});
  C.push_back({"pad",
               {t("n, 3", "float32")},
               "pad(%p0, pads=[1, 2, 0, 1], value=1.5)"});
  C.push_back({"pad",
               {t("3, 4", "float32")},
               "pad(%p0, pads=[2, 1, 2, 3], mode=\"reflect\")"});
  C.push_back({"pad",
               {t("n, 4", "int64")},
               "pad(%p0, pads=[0, 2, 0, 3], mode=\"edge\")"});
  C.push_back({"pad",
               {t("n, 3", "int32")},
               "pad(%p0, pads=[2, 7, 1, -1], mode=\"wrap\")"});
  C.push_back({"tile", {t("n, 3", "float32")}, "tile(%p0, repeats=[2, 3])"});
  C.push_back({"shape_of", {t("n, 3, m", "float32")}, "shape_of(%p0)"});
  C.push_back({"shape_of", {t("?, 2, n", "int64")}, "shape_of(%p0, start=1)"});
  C.push_back(
      {"shape_of", {t("n, m", "float32")}, "shape_of(%p0, start=-1, end=5)"});
  C.push_back({"shape_of", {t("n, ?", "float32")}, "add(shape_of(%p0), 1i64)"});
  return C;
}

std::vector<OpCase> reductionCases() {
  std::vector<OpCase> C;
  for (const char *Op :
       {"sum", "mean", "max", "min", "prod", "l1_norm", "sum_square"}) {
    std::string S(Op);
    C.push_back({S, {t("n, 6", "float32")}, S + "(%p0, axis=[1])"});
    C.push_back(
        {S, {t("n, 3, 4", "float64")}, S + "(%p0, axis=[0, 2], keepdims=1)"});
    C.push_back({S, {t("n, 5", "int64")}, S + "(%p0)"});
  }
  for (const char *Op : {"l2_norm", "log_sum", "log_sum_exp"}) {
    std::string S(Op);
    C.push_back({S, {t("n, 6", "float32")}, S + "(%p0, axis=[-1])"});
    C.push_back({S, {t("4, m", "float64")}, S + "(%p0, keepdims=1)"});
  }
  C.push_back({"max", {t("n, 4", "bool")}, "max(%p0, axis=[1])"});
  C.push_back(
      {"min", {t("n, 4", "int32")}, "min(%p0, axis=[0], empty_identity=1)"});
  C.push_back({"softmax", {t("n, 7", "float32")}, "softmax(%p0, axis=-1)"});
  C.push_back({"softmax", {t("3, n, 2", "float64")}, "softmax(%p0, axis=1)"});
  C.push_back(
      {"log_softmax", {t("n, 7", "float32")}, "log_softmax(%p0, axis=1)"});
  C.push_back({"rms_norm",
               {t("n, 6", "float32"), t("6", "float32")},
               "rms_norm(%p0, %p1)"});
  C.push_back({"rms_norm",
               {t("2, n, 3", "float64"), t("n, 1", "float64")},
               "rms_norm(%p0, %p1, axis=1, epsilon=0.5)"});
  C.push_back({"rms_norm",
               {t("n, 4", "float32"), t("n, 4", "float64")},
               "multiply(rms_norm(%p0, %p1, axis=0, stash_type=11), 2f32)"});
  return C;
}

std::vector<OpCase> allCases() {
  std::vector<OpCase> C;
  for (auto *Family : {binaryOpCases, unaryOpCases, activationCases,
                       injectiveCases, reductionCases}) {
    std::vector<OpCase> F = Family();
    C.insert(C.end(), F.begin(), F.end());
  }
  return C;
}

/// Float reductions accumulate in their own dtype (the reference in double).
double rtolFor(const OpCase &C) {
  for (const std::string &T : C.types)
    if (T.find("float32") != std::string::npos)
      return 1e-4;
  return 1e-6;
}

void expectCasesMatch(const std::vector<OpCase> &Cases) {
  for (const OpCase &C : Cases) {
    SCOPED_TRACE(C.call);
    expectKernelMatches(C.types, C.call, kSizes, rtolFor(C), 1e-5);
  }
}

// One test per family, so that ctest runs them in parallel.
TEST(ComputeRules, BinaryOperatorsMatchTheInterpreter) {
  expectCasesMatch(binaryOpCases());
}
TEST(ComputeRules, UnaryOperatorsMatchTheInterpreter) {
  expectCasesMatch(unaryOpCases());
}
TEST(ComputeRules, ActivationsMatchTheInterpreter) {
  expectCasesMatch(activationCases());
}
TEST(ComputeRules, InjectiveMatchTheInterpreter) {
  expectCasesMatch(injectiveCases());
}
TEST(ComputeRules, ReductionsMatchTheInterpreter) {
  expectCasesMatch(reductionCases());
}

// Issue 23: where the reference raises an error on some data (an index out
// of range), codegen refuses the group and the
// builtin kernel, which checks, runs it; a generated kernel cannot raise.
TEST(ComputeRules, GroupsThatCanFailOnTheirDataStayOnBuiltinKernels) {
  struct Case {
    std::vector<std::string> types;
    std::string call;
  };
  std::vector<Case> Cases = {
      {{"Tensor[(n, 10), float32]", "Tensor[(3, 2), int64]"},
       "take(%p0, %p1, axis=1)"},
      {{"Tensor[(10, 2), int32]", "Tensor[(n), int64]"},
       "take(%p0, %p1, axis=0)"},
  };
  for (const Case &C : Cases) {
    ir::Module M = parsePrimitive(C.types, C.call);
    codegen::LoweringResult R =
        codegen::lowerPrimitive(primitiveOf(M), uniqueKernelName("refused"));
    EXPECT_FALSE(R.ok()) << C.call;
  }
}

// sigmoid tests the sign bit where the reference tests x >= 0, and its exp
// of -|x| scales by a fixed split: zeros of both signs, NaNs of both signs,
// infinities and the tails where exp(-|x|) is subnormal or 0 agree too.
TEST(ComputeRules, SigmoidAtSpecialValuesMatchesTheInterpreter) {
  const float Inf = std::numeric_limits<float>::infinity();
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> X = {0.0f,    -0.0f,   NaN,    -NaN,   Inf,     -Inf,
                          1e-30f,  -1e-30f, 0.5f,   -0.5f,  20.0f,   -20.0f,
                          87.0f,   -87.0f,  -88.0f, -90.0f, -100.0f, -103.0f,
                          -104.0f, -110.0f, 1e30f,  -1e30f};
  // Enough elements for the vector loop to take every value.
  std::vector<float> Values;
  for (int Rep = 0; Rep < 8; ++Rep)
    Values.insert(Values.end(), X.begin(), X.end());
  ir::Module M = parsePrimitive({"Tensor[(n), float32]"}, "sigmoid(%p0)");
  codegen::LoweredKernel L =
      lowerOrFail(M, uniqueKernelName("sigmoid_special"));
  RivetKernelFn Fn = testJit().compile(L.kernel);
  expectRunOnInputsMatchesInterpreter(
      M, L, Fn, {Tensor::fromVector(Values, {(int64_t)Values.size()})}, 1e-6,
      0);
}

TEST(ComputeRules, EveryRuleHasACase) {
  std::set<std::string> Covered;
  for (const OpCase &C : allCases())
    Covered.insert(C.op);
  // The anchors' rules have their cases in anchor_rules_test.cc.
  const std::set<std::string> Anchors = {
      "dense",   "matmul",          "conv",           "max_pool", "avg_pool",
      "lp_pool", "global_avg_pool", "global_max_pool"};
  for (const std::string &Name : codegen::ComputeRuleRegistry::global().names())
    EXPECT_TRUE(Covered.count(Name) || Anchors.count(Name))
        << "no test case for rule '" << Name << "'";
}

} // namespace
