// The LLVM backend: optimized IR vectorizes inner loops, ahead-of-time object
// emission for the host and for another target, and JIT entry points that
// follow the documented calling convention.

#include "codegen/CodegenTestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace rivet;
using namespace rivet::test;

namespace {

codegen::LoweredKernel lowered(const std::vector<std::string> &Types,
                               const std::string &Body,
                               const std::string &Name) {
  ir::Module M = ir::parseModule(primitiveModuleText(Types, Body), "<test>");
  ir::inferTypes(M);
  return lowerOrFail(M, Name);
}

TEST(NativeKernel, InnerLoopsAreVectorized) {
  codegen::LoweredKernel L =
      lowered({"Tensor[(n, 1024), float32]", "Tensor[(1024), float32]"},
              "let %a = add(%p0, %p1);\nrelu(%a)", "vec_add_relu");
  std::string IR = codegen::emitLLVMIR(L.kernel);
  EXPECT_NE(IR.find(" x float>"), std::string::npos) << IR;
  // Exact elementwise code: no fast-math flags anywhere.
  EXPECT_EQ(IR.find("fast "), std::string::npos);
  EXPECT_EQ(IR.find("reassoc"), std::string::npos);
}

TEST(NativeKernel, UnoptimizedIRHasLoopMetadataAndNoalias) {
  codegen::LoweredKernel L =
      lowered({"Tensor[(n), float64]"}, "exp(%p0)", "meta_exp");
  std::string IR = codegen::emitLLVMIR(L.kernel, {}, /*Optimize=*/false);
  EXPECT_NE(IR.find("llvm.loop.vectorize.enable"), std::string::npos) << IR;
  EXPECT_NE(IR.find("noalias"), std::string::npos) << IR;
  EXPECT_NE(IR.find("define void @meta_exp(ptr"), std::string::npos) << IR;
}

TEST(NativeKernel, ObjectForTheHost) {
  codegen::LoweredKernel L =
      lowered({"Tensor[(n, 8), float32]"}, "sum(%p0, axis=[1])", "obj_sum");
  std::vector<uint8_t> Obj = codegen::emitObject({L.kernel});
  ASSERT_GT(Obj.size(), 64u);
  EXPECT_EQ(std::memcmp(Obj.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
}

TEST(NativeKernel, ObjectForAnotherTarget) {
  codegen::LoweredKernel L =
      lowered({"Tensor[(n), float32]"}, "tanh(%p0)", "obj_tanh");
  codegen::TargetOptions T;
  T.triple = "aarch64-unknown-linux-gnu";
  T.cpu = "generic";
  std::vector<uint8_t> Obj = codegen::emitObject({L.kernel}, T);
  ASSERT_GT(Obj.size(), 20u);
  EXPECT_EQ(std::memcmp(Obj.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
  uint16_t Machine = (uint16_t)(Obj[18] | (Obj[19] << 8));
  EXPECT_EQ(Machine, 183); // EM_AARCH64
}

TEST(NativeKernel, HostCpuFeaturesAreUsed) {
  codegen::LoweredKernel L =
      lowered({"Tensor[(64), float32]"}, "negative(%p0)", "x86_v3");
  codegen::TargetOptions T = codegen::hostTarget();
  if (T.triple.rfind("x86_64", 0) != 0)
    GTEST_SKIP() << "not an x86-64 host";
  T.cpu = "x86-64-v3";
  T.features = "";
  std::string IR = codegen::emitLLVMIR(L.kernel, T);
  EXPECT_NE(IR.find("<8 x float>"), std::string::npos) << IR;
}

// LLVM tunes Intel's AVX-512 CPUs for 256-bit vectors; the backend asks for
// the full width on every AVX-512 target (and cannot on others).
TEST(NativeKernel, AvxFiveTwelveTargetsVectorizeSixteenFloats) {
  codegen::LoweredKernel L =
      lowered({"Tensor[(n, 256), float32]"}, "sigmoid(%p0)", "zmm_sigmoid");
  codegen::TargetOptions T;
  T.triple = "x86_64-pc-linux-gnu";
  for (const char *Cpu : {"sapphirerapids", "skylake-avx512", "znver4"}) {
    T.cpu = Cpu;
    std::string IR = codegen::emitLLVMIR(L.kernel, T);
    EXPECT_NE(IR.find("<16 x float>"), std::string::npos) << Cpu;
    EXPECT_NE(IR.find("\"prefer-vector-width\"=\"512\""), std::string::npos)
        << Cpu;
  }
  T.cpu = "sapphirerapids";
  T.features = "-avx512f";
  EXPECT_EQ(codegen::emitLLVMIR(L.kernel, T).find("<16 x float>"),
            std::string::npos);
  T.cpu = "x86-64-v3";
  T.features = "";
  std::string V3 = codegen::emitLLVMIR(L.kernel, T);
  EXPECT_EQ(V3.find("<16 x float>"), std::string::npos);
  EXPECT_NE(V3.find("<8 x float>"), std::string::npos);
}

// exp's scaling by 2^n is a call the vectorizer widens to vscalefps where
// the target has it; the helpers are gone from the optimized code, and no
// other target (or an unvectorized pipeline) sees them.
TEST(NativeKernel, ExpScalesWithVscalefOnAvxFiveTwelve) {
  codegen::LoweredKernel L = lowered({"Tensor[(n, 256), float32]"},
                                     "sigmoid(%p0)", "zmm_scaled_sigmoid");
  codegen::TargetOptions T;
  T.triple = "x86_64-pc-linux-gnu";
  for (const char *Cpu : {"sapphirerapids", "skylake-avx512", "znver4"}) {
    T.cpu = Cpu;
    std::string IR = codegen::emitLLVMIR(L.kernel, T);
    EXPECT_NE(IR.find("@llvm.x86.avx512.mask.scalef.ps.512"), std::string::npos)
        << Cpu;
    EXPECT_EQ(IR.find("rivet_scale_f32"), std::string::npos) << Cpu;
  }
  T.cpu = "sapphirerapids";
  T.optLevel = 1;
  EXPECT_EQ(codegen::emitLLVMIR(L.kernel, T).find("rivet_scale_f32"),
            std::string::npos);
  T.optLevel = 3;
  for (const char *Cpu : {"x86-64-v3", "znver3"}) {
    T.cpu = Cpu;
    std::string IR = codegen::emitLLVMIR(L.kernel, T);
    EXPECT_EQ(IR.find("avx512.mask.scalef"), std::string::npos) << Cpu;
    EXPECT_EQ(IR.find("rivet_scale_f32"), std::string::npos) << Cpu;
  }
}

TEST(NativeKernel, UnknownTripleIsAnError) {
  codegen::LoweredKernel L =
      lowered({"Tensor[(n), float32]"}, "relu(%p0)", "bad_triple");
  codegen::TargetOptions T;
  T.triple = "nonsense-unknown-nowhere";
  EXPECT_THROW(codegen::emitObject({L.kernel}, T), Error);
}

TEST(NativeKernel, JitCallingConvention) {
  codegen::LoweredKernel L =
      lowered({"Tensor[(n, 2), float32]", "Tensor[(n, 2), float32]"},
              "subtract(%p0, %p1)", "cc_sub");
  RivetKernelFn Fn = testJit().compile(L.kernel);
  std::vector<float> A = {1, 2, 3, 4, 5, 6}, B = {6, 5, 4, 3, 2, 1}, C(6);
  void *Buffers[] = {A.data(), B.data(), C.data()};
  std::vector<int64_t> Sizes =
      codegen::sizeParamValues(L, {{3, 2}, {3, 2}, {3, 2}});
  ASSERT_EQ(Sizes, std::vector<int64_t>{3});
  Fn(Buffers, Sizes.data(), &kernelRuntime());
  EXPECT_EQ(C, (std::vector<float>{-5, -3, -1, 1, 3, 5}));
}

/// X, the special values of float32 (+-0, +-inf, NaN), Specials and a
/// sweep of [Lo, Hi) by Step through the JIT-compiled kernel of Op(x), and
/// libm's Reference of each (as float).
struct UnaryRun {
  std::vector<float> x, y, want;
};
UnaryRun runUnaryF32(const std::string &Op, float (*Reference)(float),
                     std::vector<float> Specials, float Lo, float Hi,
                     float Step) {
  codegen::LoweredKernel L =
      lowered({"Tensor[(n), float32]"}, Op + "(%p0)", Op + "f_accuracy");
  RivetKernelFn Fn = testJit().compile(L.kernel);
  UnaryRun R;
  R.x = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
         -std::numeric_limits<float>::infinity(),
         std::numeric_limits<float>::quiet_NaN()};
  R.x.insert(R.x.end(), Specials.begin(), Specials.end());
  for (float V = Lo; V < Hi; V += Step)
    R.x.push_back(V);
  R.y.resize(R.x.size());
  void *Buffers[] = {R.x.data(), R.y.data()};
  int64_t Size = (int64_t)R.x.size();
  Fn(Buffers, &Size, &kernelRuntime());
  for (float V : R.x)
    R.want.push_back(Reference(V));
  return R;
}

float libmExp(float X) { return std::exp(X); }
float libmTanh(float X) { return std::tanh(X); }
float libmErf(float X) { return std::erf(X); }

TEST(NativeKernel, InlineExpf32IsWithinTwoUlpOfLibm) {
  // float32 exp is expanded inline (vectorizable); it must agree with libm
  // over the whole range, with exact special cases.
  UnaryRun R = runUnaryF32(
      "exp", libmExp,
      {1.0f, -1.0f, 88.72f, 88.73f, -87.3f, -100.0f, -103.2f, -104.0f, 1e-8f},
      -110.0f, 95.0f, 0.0137f);
  for (size_t I = 0; I < R.x.size(); ++I) {
    float E = R.want[I], Y = R.y[I];
    if (std::isnan(E)) {
      EXPECT_TRUE(std::isnan(Y)) << R.x[I];
    } else if (std::isinf(E) || E == 0) {
      EXPECT_EQ(Y, E) << R.x[I];
    } else if (E < std::numeric_limits<float>::min()) {
      // Subnormal: a few units of the smallest subnormal.
      EXPECT_NEAR(Y, E, 4 * std::numeric_limits<float>::denorm_min()) << R.x[I];
    } else {
      EXPECT_NEAR(Y, E, 2 * std::abs(E) * std::numeric_limits<float>::epsilon())
          << R.x[I];
    }
  }
}

/// R's results within 2 ulp of libm's, NaN where libm's is NaN, and exact
/// (the sign included) where libm's is 0 or the argument infinite.
void expectWithinTwoUlpSigned(const UnaryRun &R) {
  for (size_t I = 0; I < R.x.size(); ++I) {
    float T = R.want[I], Y = R.y[I];
    if (std::isnan(T)) {
      EXPECT_TRUE(std::isnan(Y)) << R.x[I];
    } else if (T == 0 || std::isinf(R.x[I])) {
      EXPECT_EQ(Y, T) << R.x[I];
      EXPECT_EQ(std::signbit(Y), std::signbit(T)) << R.x[I];
    } else {
      EXPECT_NEAR(Y, T, 2 * std::abs(T) * std::numeric_limits<float>::epsilon())
          << R.x[I];
    }
  }
}

TEST(NativeKernel, InlineTanhf32IsWithinTwoUlpOfLibm) {
  // float32 tanh is expanded inline (vectorizable): against libm over both
  // branches and their boundary, with exact special cases (the sign of 0).
  UnaryRun R =
      runUnaryF32("tanh", libmTanh,
                  {1e-30f, -1e-30f, 1e-8f, 0.625f, std::nextafter(0.625f, 0.0f),
                   -0.625f, 9.0f, -9.01f, 50.0f, -100.0f},
                  -12.0f, 12.0f, 0.00317f);
  expectWithinTwoUlpSigned(R);
}

TEST(NativeKernel, InlineErff32IsWithinTwoUlpOfLibm) {
  // float32 erf is expanded inline (vectorizable): against libm over both
  // branches, their boundary, the clamp and the tiny arguments, with exact
  // special cases (the sign of 0, +-1 at +-inf).
  UnaryRun R = runUnaryF32("erf", libmErf,
                           {1e-30f, -1e-30f, 1e-8f, 4e-4f, 1.0f,
                            std::nextafter(1.0f, 0.0f), -1.0f, 3.92f, 4.0f,
                            std::nextafter(4.0f, 5.0f), -7.0f, 100.0f},
                           -6.0f, 6.0f, 0.00071f);
  expectWithinTwoUlpSigned(R);
}

} // namespace
