// The LLVM backend: optimized IR vectorizes inner loops, ahead-of-time object
// emission for the host and for another target, and JIT entry points that
// follow the documented calling convention.

#include "codegen/CodegenTestUtil.h"

#include <cstring>

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
  codegen::NativeKernelFn Fn = testJit().compile(L.kernel);
  std::vector<float> A = {1, 2, 3, 4, 5, 6}, B = {6, 5, 4, 3, 2, 1}, C(6);
  void *Buffers[] = {A.data(), B.data(), C.data()};
  std::vector<int64_t> Sizes =
      codegen::sizeParamValues(L, {{3, 2}, {3, 2}, {3, 2}});
  ASSERT_EQ(Sizes, std::vector<int64_t>{3});
  Fn(Buffers, Sizes.data());
  EXPECT_EQ(C, (std::vector<float>{-5, -3, -1, 1, 3, 5}));
}

} // namespace
