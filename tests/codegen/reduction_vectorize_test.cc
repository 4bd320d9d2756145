// Fast generated softmax and max/min reductions: a softmax that is its
// group's result computes each exp once (it stores the exps into its output
// from inside the sum), float max/min reductions run on independent lanes
// that vectorize while NaN still propagates, and the inline expf is within
// 2 ulp of the correctly rounded exp. Every kernel is compared with the
// reference interpreter, on rows holding NaN and infinities too.

#include "codegen/CodegenTestUtil.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

using namespace rivet;
using namespace rivet::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Element K along Axis of row Row of X (rows enumerate the other axes in
/// row-major order).
int64_t rowElement(const Shape &Sh, size_t Axis, int64_t Row, int64_t K) {
  int64_t Inner = 1;
  for (size_t D = Axis + 1; D < Sh.size(); ++D)
    Inner *= Sh[D];
  int64_t Outer = Row / Inner, I = Row % Inner;
  return (Outer * Sh[Axis] + K) * Inner + I;
}

int64_t numRows(const Shape &Sh, size_t Axis) {
  int64_t N = 1;
  for (size_t D = 0; D < Sh.size(); ++D)
    if (D != Axis)
      N *= Sh[D];
  return N;
}

void setElement(Tensor &T, int64_t I, double V) {
  if (T.dtype() == DType::Float32)
    T.data<float>()[I] = (float)V;
  else
    T.data<double>()[I] = V;
}

/// Sets, in the rows of X along Axis: row 0 a NaN, row 1 a +inf, row 2 a
/// -inf, row 3 all -inf, row 4 a +inf and a -inf (positions vary with the
/// extent, so that both the lanes and the tail see them).
void injectSpecials(Tensor &X, size_t Axis) {
  const Shape &Sh = X.shape();
  int64_t E = Sh[Axis], Rows = numRows(Sh, Axis);
  auto Set = [&](int64_t Row, int64_t K, double V) {
    if (Row < Rows)
      setElement(X, rowElement(Sh, Axis, Row, K % E), V);
  };
  Set(0, E - 1, kNaN);
  Set(1, E / 2, kInf);
  Set(2, 3, -kInf);
  for (int64_t K = 0; K < E; ++K)
    Set(3, K, -kInf);
  Set(4, 1, kInf);
  Set(4, E - 2 + E, -kInf);
}

/// Lowers and compiles the case once, then checks it on each size map with
/// random inputs and with the special values of Inject.
void expectMatches(const std::vector<std::string> &Types,
                   const std::string &Body, const std::vector<SizeMap> &Sizes,
                   const std::function<void(std::vector<Tensor> &)> &Inject,
                   double Rtol = 1e-5, double Atol = 1e-6) {
  std::string Text = primitiveModuleText(Types, Body);
  SCOPED_TRACE(Text);
  ir::Module M = parsePrimitive(Types, Body);
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName(Body));
  if (L.kernel.name.empty())
    return;
  SCOPED_TRACE(codegen::printLoopKernel(L.kernel));
  RivetKernelFn Fn = testJit().compile(L.kernel);
  uint64_t Seed = 5;
  for (const SizeMap &S : Sizes) {
    std::vector<Tensor> In = randomInputs(M, S, Seed);
    Seed += In.size();
    expectRunOnInputsMatchesInterpreter(M, L, Fn, In, Rtol, Atol);
    Inject(In);
    expectRunOnInputsMatchesInterpreter(M, L, Fn, In, Rtol, Atol);
  }
}

const std::vector<int64_t> kExtents = {1, 7, 8, 9, 17, 64, 129};

std::string typeOf(const std::vector<std::string> &Dims, DType T) {
  std::string S;
  for (const std::string &D : Dims)
    S += (S.empty() ? "" : ", ") + D;
  return fmt::format("Tensor[({}), {}]", S, dtypeName(T));
}

/// softmax-like Body over axis 1 of [6, e] (last axis) or [2, e, 3]
/// (middle axis): one kernel for a symbolic e run at every extent of
/// kExtents, and static kernels for the extents Static.
void expectSoftmaxCases(const std::string &Body, DType T,
                        const std::vector<int64_t> &Static) {
  const size_t Axis = 1;
  auto Inject = [&](std::vector<Tensor> &In) { injectSpecials(In[0], Axis); };
  for (bool Middle : {false, true}) {
    SCOPED_TRACE(fmt::format("middle axis {}", Middle));
    std::vector<SizeMap> Sizes;
    for (int64_t E : kExtents)
      Sizes.push_back({{"r", 6}, {"e", E}});
    expectMatches({typeOf(Middle ? std::vector<std::string>{"2", "e", "3"}
                                 : std::vector<std::string>{"r", "e"},
                          T)},
                  Body, Sizes, Inject);
    for (int64_t E : Static) {
      std::string X = std::to_string(E);
      expectMatches({typeOf(Middle ? std::vector<std::string>{"2", X, "3"}
                                   : std::vector<std::string>{"6", X},
                            T)},
                    Body, {{}}, Inject);
    }
  }
}

TEST(ReductionVectorize, SoftmaxAsTheResultMatchesTheReference) {
  expectSoftmaxCases("softmax(%p0, axis=1)", DType::Float32, kExtents);
  expectSoftmaxCases("softmax(%p0, axis=1)", DType::Float64, {1, 9, 129});
  expectSoftmaxCases("log_softmax(%p0, axis=1)", DType::Float32, {8, 17});
  expectSoftmaxCases("log_softmax(%p0, axis=1)", DType::Float64, {7});
  // A producer inside the group feeds the softmax.
  expectSoftmaxCases("let %a = multiply(%p0, 2f32);\nsoftmax(%a, axis=1)",
                     DType::Float32, {9, 64});
  expectSoftmaxCases("let %a = multiply(%p0, 2f64);\nsoftmax(%a, axis=1)",
                     DType::Float64, {});
}

TEST(ReductionVectorize, SoftmaxAsAnInnerValueMatchesTheReference) {
  for (DType T : {DType::Float32, DType::Float64}) {
    expectSoftmaxCases("let %s = softmax(%p0, axis=1);\nsqrt(%s)", T,
                       T == DType::Float32 ? kExtents
                                           : std::vector<int64_t>{9});
    expectSoftmaxCases("let %s = softmax(%p0, axis=1);\nadd(%s, %s)", T, {17});
  }
}

TEST(ReductionVectorize, SoftmaxResultComputesEachExpOnce) {
  auto Exps = [](const std::vector<std::string> &Types,
                 const std::string &Body) {
    codegen::LoweredKernel L = lowerOrFail(parsePrimitive(Types, Body), "exps");
    return countOccurrences(codegen::printLoopKernel(L.kernel), "exp(");
  };
  // The result along the last axis: the sum stores its exps.
  EXPECT_EQ(Exps({"Tensor[(n, 17), float32]"}, "softmax(%p0, axis=-1)"), 1u);
  EXPECT_EQ(Exps({"Tensor[(4, n, m), float32]"}, "softmax(%p0, axis=2)"), 1u);
  // A middle axis, or a softmax inside the group: exp in the sum and again
  // in the value (the output rows are not the reduction's).
  EXPECT_EQ(Exps({"Tensor[(4, n, m), float32]"}, "softmax(%p0, axis=1)"), 2u);
  EXPECT_EQ(Exps({"Tensor[(n, 17), float32]"},
                 "let %s = softmax(%p0, axis=-1);\nsqrt(%s)"),
            2u);
  // log_softmax has exp in its sum only.
  EXPECT_EQ(Exps({"Tensor[(n, 17), float32]"}, "log_softmax(%p0, axis=-1)"),
            1u);
}

TEST(ReductionVectorize, SoftmaxStoreKeepsTheSumVectorized) {
  codegen::LoweredKernel L = lowerOrFail(
      parsePrimitive({"Tensor[(4, n, n), float32]"}, "softmax(%p0, axis=2)"),
      "smx_vec");
  std::string IR = codegen::emitLLVMIR(L.kernel);
  // The sum loop stores vectors of exps and accumulates vectors; the row
  // is then scaled by vectors of 1 / sum.
  EXPECT_NE(IR.find("store <"), std::string::npos) << IR;
  EXPECT_NE(IR.find("fadd reassoc <"), std::string::npos) << IR;
  EXPECT_NE(IR.find("fmul <"), std::string::npos) << IR;
  EXPECT_EQ(IR.find("fdiv <"), std::string::npos) << IR;
}

/// max or min of [e + 3, e] over axis 1 (one kernel for a symbolic e run
/// at every extent of kExtents, static kernels for the extents Static),
/// with row r < e holding a NaN at position r (every lane and the tail),
/// row e clean, row e + 1 an infinity of each sign, row e + 2 all infinite.
void expectMaxMinCases(const std::string &Op, DType T,
                       const std::vector<int64_t> &Static) {
  std::string Body = Op + "(%p0, axis=[1])";
  SCOPED_TRACE(Body);
  auto Inject = [&](std::vector<Tensor> &In) {
    Tensor &X = In[0];
    int64_t E = X.shape()[1];
    for (int64_t R = 0; R < E; ++R)
      setElement(X, R * E + R, kNaN);
    setElement(X, (E + 1) * E, kInf);
    setElement(X, (E + 1) * E + E - 1, -kInf);
    for (int64_t K = 0; K < E; ++K)
      setElement(X, (E + 2) * E + K, Op == "max" ? -kInf : kInf);
  };
  std::vector<SizeMap> Sizes;
  for (int64_t E : kExtents)
    Sizes.push_back({{"r", E + 3}, {"e", E}});
  expectMatches({typeOf({"r", "e"}, T)}, Body, Sizes, Inject);
  for (int64_t E : Static)
    expectMatches({typeOf({std::to_string(E + 3), std::to_string(E)}, T)}, Body,
                  {{}}, Inject);
}

TEST(ReductionVectorize, MaxMinPropagateNaNFromEveryLane) {
  for (const char *Op : {"max", "min"}) {
    expectMaxMinCases(Op, DType::Float32, kExtents);
    expectMaxMinCases(Op, DType::Float64, {4, 9, 17});
  }
}

TEST(ReductionVectorize, MaxMinOverSeveralAxesAndBodies) {
  auto NaNAt = [](int64_t I) {
    return [I](std::vector<Tensor> &In) { setElement(In[0], I, kNaN); };
  };
  for (DType T : {DType::Float32, DType::Float64}) {
    std::string X = typeOf({"3", "n", "m"}, T);
    std::vector<SizeMap> Sizes = {{{"n", 2}, {"m", 17}}, {{"n", 5}, {"m", 3}}};
    expectMatches({X}, "max(%p0, axis=[1, 2])", Sizes, NaNAt(33));
    expectMatches({X}, "min(%p0, axis=[1, 2], keepdims=1)", Sizes, NaNAt(29));
    expectMatches({X}, "max(%p0)", Sizes, NaNAt(7));
    expectMatches({X}, "max(%p0, axis=[0])", Sizes, NaNAt(4));
    // An elementwise body and a consumer of the maximum.
    expectMatches({X}, "let %a = abs(%p0);\nmax(%a, axis=[2])", Sizes,
                  NaNAt(20));
    expectMatches({X},
                  "let %m = min(%p0, axis=[2], keepdims=1);\n"
                  "subtract(%p0, %m)",
                  Sizes, NaNAt(16));
  }
  // Integers keep their plain loop and agree too.
  expectMatches({"Tensor[(4, n), int32]"}, "max(%p0, axis=[1])", {{{"n", 37}}},
                [](std::vector<Tensor> &) {});
}

TEST(ReductionVectorize, FloatMaxCountsNaNsApart) {
  auto Kernel = [](const std::string &Type) {
    codegen::LoweredKernel L =
        lowerOrFail(parsePrimitive({Type}, "max(%p0, axis=[1])"), "nan_apart");
    return L.kernel;
  };
  // The maximum and a bool that says whether a NaN was seen.
  for (const char *Type :
       {"Tensor[(4, n), float32]", "Tensor[(4, 3), float64]"}) {
    codegen::LoopKernel K = Kernel(Type);
    EXPECT_EQ(K.locals, (std::vector<DType>{K.buffers[0].dtype, DType::Bool}));
    std::string Text = codegen::printLoopKernel(K);
    EXPECT_EQ(countOccurrences(Text, "// reduction, no NaN"), 1u) << Text;
    EXPECT_EQ(countOccurrences(Text, "isnan("), 2u) << Text;
  }
  // Integers have no NaN.
  EXPECT_EQ(Kernel("Tensor[(4, n), int32]").locals.size(), 1u);
}

TEST(ReductionVectorize, FloatMaxBecomesVectorCode) {
  for (auto [Type, Vec] : {std::pair<std::string, std::string>{
                               "Tensor[(4, n), float32]", " x float>"},
                           {"Tensor[(4, n), float64]", " x double>"}}) {
    codegen::LoweredKernel L =
        lowerOrFail(parsePrimitive({Type}, "max(%p0, axis=[1])"), "max_vec");
    std::string IR = codegen::emitLLVMIR(L.kernel);
    // NaN-propagating max on vectors: unordered compares and selects.
    EXPECT_NE(IR.find("fcmp uno <"), std::string::npos) << IR;
    EXPECT_NE(IR.find("select <"), std::string::npos) << IR;
    EXPECT_NE(IR.find(Vec), std::string::npos) << IR;
    EXPECT_EQ(IR.find("fast "), std::string::npos) << IR;
  }
}

/// Units in the last place between two floats of the same sign class.
int64_t ulpDistance(float A, float B) {
  auto Ordered = [](float F) {
    int32_t I = std::bit_cast<int32_t>(F);
    return I < 0 ? (int64_t)INT32_MIN - I : (int64_t)I;
  };
  return std::abs(Ordered(A) - Ordered(B));
}

/// Runs exp(Arg(x)), the kernel of Body, over a sweep of float bit patterns
/// and the ends of the range, and checks it against the correctly rounded
/// exp of Arg(x).
void expectExpf32WithinTwoUlp(const std::string &Body, const std::string &Name,
                              float (*Arg)(float)) {
  codegen::LoweredKernel L =
      lowerOrFail(parsePrimitive({"Tensor[(n), float32]"}, Body), Name);
  RivetKernelFn Fn = testJit().compile(L.kernel);
  std::vector<float> X;
  // Every 2^9-th bit pattern (8M inputs, both signs, NaNs and infinities).
  for (uint64_t Bits = 0; Bits < (1ULL << 32); Bits += 1 << 9)
    X.push_back(std::bit_cast<float>((uint32_t)Bits));
  // Every float near overflow and near underflow (flush to 0).
  for (float V = 88.0f; V <= 89.5f; V = std::nextafter(V, 100.0f))
    X.push_back(V);
  for (float V = -105.0f; V <= -102.5f; V = std::nextafter(V, 0.0f))
    X.push_back(V);
  for (float V : {0.0f, -0.0f, 88.72f, 88.73f, 89.0f, -87.3f, -103.3f, -103.9f,
                  -104.0f, -1e9f, std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(),
                  -std::numeric_limits<float>::quiet_NaN()})
    X.push_back(V);
  std::vector<float> Y(X.size());
  void *Buffers[] = {X.data(), Y.data()};
  int64_t Size = (int64_t)X.size();
  Fn(Buffers, &Size, testRuntime());
  int64_t MaxUlp = 0;
  float Worst = 0;
  for (size_t I = 0; I < X.size(); ++I) {
    float E = (float)std::exp((double)Arg(X[I]));
    if (std::isnan(E)) {
      ASSERT_TRUE(std::isnan(Y[I])) << X[I];
      continue;
    }
    // Exact at the ends: +inf exactly when exp rounds to +inf, 0 for -inf.
    ASSERT_EQ(std::isinf(Y[I]), std::isinf(E)) << X[I] << " -> " << Y[I];
    if (std::isinf(E) || std::isinf(X[I])) {
      ASSERT_EQ(Y[I], E) << X[I];
      continue;
    }
    ASSERT_GE(Y[I], 0.0f) << X[I];
    // The smallest results round correctly (the subnormal 2^-149 where it
    // is nearest, rather than a flush to 0).
    if (E <= 2 * std::numeric_limits<float>::denorm_min()) {
      ASSERT_EQ(Y[I], E) << X[I];
    }
    int64_t U = ulpDistance(Y[I], E);
    if (U > MaxUlp) {
      MaxUlp = U;
      Worst = X[I];
    }
  }
  std::printf(
      "inline expf of %s: max error %lld ulp (at %.9g) over %zu inputs\n",
      Name.c_str(), (long long)MaxUlp, Worst, X.size());
  EXPECT_LE(MaxUlp, 2) << "at " << Worst;
}

TEST(ReductionVectorize, InlineExpf32IsWithinTwoUlpOfTheCorrectlyRoundedExp) {
  expectExpf32WithinTwoUlp("exp(%p0)", "expf_sweep", [](float X) { return X; });
}

// exp(-|x|) (sigmoid's) scales by 2^n in one fixed split: as exact.
TEST(ReductionVectorize, InlineExpf32OfNonPositiveIsWithinTwoUlp) {
  expectExpf32WithinTwoUlp(
      "let %a = abs(%p0);\nlet %n = negative(%a);\nexp(%n)",
      "expf_nonpositive_sweep", [](float X) { return -std::fabs(X); });
}

} // namespace
