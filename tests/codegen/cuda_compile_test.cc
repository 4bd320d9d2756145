//===- cuda_compile_test.cc - Every generated kernel compiles for the GPU -===//
//
// Issue 24's test without a GPU: the fused groups of every committed model
// and program, lowered as for the CPU, become CUDA source (EmitCuda.h) that
// NVRTC compiles to sm_80 and sm_90 cubins and compute_90 PTX. Running the
// code needs a GPU (tools/scripts/gpu-check.sh, when one is lent); compiling
// it does not. Skipped where the CUDA toolkit was not found at configure
// time or NVRTC cannot be loaded.
//
//===----------------------------------------------------------------------===//
#include "codegen/LowerPrimitive.h"
#include "frontend/onnx/Importer.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "ir/Visitor.h"
#include "ir/transforms/Pass.h"

#ifdef RIVET_HAVE_CUDA
#include "codegen/cuda/EmitCuda.h"
#include "codegen/cuda/Nvrtc.h"
#endif

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace rivet;

#ifdef RIVET_HAVE_CUDA
namespace {

/// The fused groups (Primitive=1 function literals) of M.
class PrimitiveCollector : public ir::ExprVisitor {
public:
  std::vector<ir::Expr> found;
  void visit(const ir::Expr &E) override {
    if (ir::isPrimitiveFunction(E)) {
      found.push_back(E);
      return;
    }
    ir::ExprVisitor::visit(E);
  }
};

/// The loop kernels of M's fused groups after the -O3 pipeline, and how many
/// groups lowering refused (they stay on builtin kernels on every target).
std::vector<codegen::LoopKernel> kernelsOf(ir::Module M, size_t &Refused) {
  ir::inferTypes(M);
  ir::PassContext Ctx;
  Ctx.optLevel = 3;
  ir::optimize(M, Ctx);
  PrimitiveCollector C;
  for (const std::string &Name : M.functionNames())
    C.visit(M.function(Name));
  std::vector<codegen::LoopKernel> Ks;
  for (const ir::Expr &Fn : C.found) {
    codegen::LoweringResult R =
        codegen::lowerPrimitive(Fn, "rivet_k" + std::to_string(Ks.size()));
    if (R.ok())
      Ks.push_back(R.lowered->kernel);
    else
      ++Refused;
  }
  return Ks;
}

void expectCompilesForTheGpu(const std::string &What, ir::Module M) {
  size_t Refused = 0;
  std::vector<codegen::LoopKernel> Ks = kernelsOf(std::move(M), Refused);
  if (Ks.empty())
    return;
  std::string Src = codegen::cuda::emitCudaSource(Ks);
  try {
    std::vector<codegen::cuda::CudaImage> Images = codegen::cuda::compileCuda(
        Src, What, codegen::cuda::kCubinArchs, codegen::cuda::kPtxArch);
    ASSERT_EQ(Images.size(), 3u);
    std::printf("%s: %zu kernels for sm_80, sm_90 and compute_90 (%zu "
                "groups stay on builtin kernels)\n",
                What.c_str(), Ks.size(), Refused);
    for (const auto &I : Images)
      EXPECT_FALSE(I.bytes.empty()) << What << " " << I.arch;
  } catch (const Error &E) {
    ADD_FAILURE() << What << ": " << E.what() << "\nsource:\n" << Src;
  }
}

bool haveNvrtc() {
  std::string Why;
  if (codegen::cuda::nvrtcAvailable(&Why))
    return true;
  std::printf("skipped: %s\n", Why.c_str());
  return false;
}

} // namespace

TEST(CudaCompile, KernelsOfEveryCommittedModel) {
  if (!haveNvrtc())
    GTEST_SKIP();
  size_t Models = 0;
  for (const auto &D :
       fs::directory_iterator(RIVET_SOURCE_DIR "/tests/models")) {
    fs::path P = D.path() / "model.onnx";
    if (!fs::exists(P))
      continue;
    SCOPED_TRACE(P.string());
    expectCompilesForTheGpu(D.path().filename().string(),
                            frontend::importOnnxFile(P.string()));
    ++Models;
  }
  EXPECT_GE(Models, 5u);
}

TEST(CudaCompile, KernelsOfEveryProgram) {
  if (!haveNvrtc())
    GTEST_SKIP();
  size_t Programs = 0;
  for (const auto &D :
       fs::directory_iterator(RIVET_SOURCE_DIR "/tests/programs")) {
    fs::path P = D.path() / "program.rvir";
    if (!fs::exists(P))
      continue;
    SCOPED_TRACE(P.string());
    std::ifstream In(P);
    std::stringstream S;
    S << In.rdbuf();
    expectCompilesForTheGpu(D.path().filename().string(),
                            ir::parseModule(S.str(), P.string()));
    ++Programs;
  }
  EXPECT_GE(Programs, 10u);
}

TEST(CudaCompile, OneLaunchCoversEverySize) {
  if (!haveNvrtc())
    GTEST_SKIP();
  // A dynamic extent is a kernel parameter, and the output's axes are one
  // flat index over a grid-stride loop: one kernel serves every size.
  ir::Module M = ir::parseModule(R"(
def @main(%x: Tensor[(?, 8), float32], %y: Tensor[(?, 8), float32]) {
  maximum(exp(%x), add(%y, 1f32))
}
)");
  size_t Refused = 0;
  std::vector<codegen::LoopKernel> Ks = kernelsOf(M, Refused);
  ASSERT_FALSE(Ks.empty()); // @main's, and the prelude's
  std::string Src = codegen::cuda::emitCudaSource(Ks);
  EXPECT_NE(Src.find("const long long s0"), std::string::npos) << Src;
  EXPECT_NE(Src.find("rv_flat += rv_step"), std::string::npos) << Src;
  EXPECT_NE(Src.find("expf("), std::string::npos) << Src;
  EXPECT_NO_THROW(codegen::cuda::compileCuda(Src, "dynamic", {"sm_80"}, ""));
}

/// The CUDA source of the one kernel of Text's @main.
std::string mainKernelSource(const std::string &Text) {
  ir::Module M = ir::parseModule(Text);
  ir::inferTypes(M);
  ir::PassContext Ctx;
  Ctx.optLevel = 3;
  ir::optimize(M, Ctx);
  PrimitiveCollector C;
  C.visit(M.function("main"));
  EXPECT_EQ(C.found.size(), 1u) << Text;
  if (C.found.empty())
    return "";
  codegen::LoweringResult R = codegen::lowerPrimitive(C.found[0], "rivet_k0");
  EXPECT_TRUE(R.ok()) << Text;
  return R.ok() ? codegen::cuda::emitCudaSource({R.lowered->kernel}) : "";
}

/// A softmax row and a mean along the last axis go to a warp each (lanes
/// stride the row, partial sums and maxima meet through shuffles); an
/// elementwise kernel stays one thread per element.
TEST(CudaCompile, RowReductionsShareAWarp) {
  if (!haveNvrtc())
    GTEST_SKIP();
  for (const char *Text : {R"(
def @main(%x: Tensor[(?, 1024), float32]) {
  softmax(%x, axis=-1)
}
)",
                           R"(
def @main(%x: Tensor[(?, 64), float32]) {
  mean(%x, axis=[-1], keepdims=1)
}
)"}) {
    std::string Src = mainKernelSource(Text);
    EXPECT_NE(Src.find("rv_lane"), std::string::npos) << Src;
    EXPECT_NE(Src.find("__shfl_xor_sync"), std::string::npos) << Src;
    EXPECT_NE(Src.find("__syncwarp"), std::string::npos) << Src;
    EXPECT_NO_THROW(codegen::cuda::compileCuda(Src, "rows", {"sm_80"}, ""));
  }
  std::string Map = mainKernelSource(R"(
def @main(%x: Tensor[(?, 64), float32]) {
  tanh(%x)
}
)");
  EXPECT_EQ(Map.find("rv_lane"), std::string::npos) << Map;
}

TEST(CudaCompile, SourceThatDoesNotCompileIsAnErrorWithTheLog) {
  if (!haveNvrtc())
    GTEST_SKIP();
  try {
    codegen::cuda::compileCuda("extern \"C\" __global__ void k() { nope; }",
                               "broken", {"sm_80"}, "");
    ADD_FAILURE() << "broken source compiled";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("'broken' does not compile for "
                                         "sm_80"),
              std::string::npos)
        << E.what();
    EXPECT_NE(std::string(E.what()).find("nope"), std::string::npos)
        << E.what();
  }
}
#else
TEST(CudaCompile, SkippedWithoutTheCudaToolkit) {
  GTEST_SKIP() << "the CUDA toolkit was not found at configure time";
}
#endif
