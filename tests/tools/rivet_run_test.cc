//===- rivet_run_test.cc - The runtime-only runner ------------------------===//
//
// rivet-run, which links only the runtime library: it runs a compiled .rvx
// on .npy inputs and writes the same outputs as `rivet run`; it times runs
// (--bench, --json with the device); and every bad input (a missing or
// misshapen input, a corrupt file, a CUDA executable without a GPU) is one
// "error:" line and exit code 1.
//
//===----------------------------------------------------------------------===//
#include "kernels/Npy.h"
#include "kernels/Tensor.h"
#include "support/RunRivet.h"
#include "vm/cuda/Gpu.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace rivet;
using namespace rivet::testing;
namespace fs = std::filesystem;

namespace {

const char *Program = R"(
def @main(%x: Tensor[(n, 8), float32], %b: Tensor[(8,), float32])
    -> (Tensor[(n, 8), float32], Tensor[(n,), float32]) {
  let %y = tanh(multiply(exp(%x), %b));
  (%y, sum(%y, axis=[1]))
}
)";

struct Fixture {
  fs::path Dir = freshTempDir("rivet_run", currentTestName());
  fs::path Src = Dir / "p.rvir", Rvx = Dir / "p.rvx", X = Dir / "x.npy",
           B = Dir / "b.npy";
  Fixture() {
    std::ofstream(Src) << Program;
    std::vector<float> XV(24), BV(8);
    for (size_t I = 0; I < XV.size(); ++I)
      XV[I] = 0.1f * (float)I - 1;
    for (size_t I = 0; I < BV.size(); ++I)
      BV[I] = 0.5f + (float)I;
    writeNpy(X.string(), Tensor::fromVector<float>(XV, {3, 8}));
    writeNpy(B.string(), Tensor::fromVector<float>(BV, {8}));
  }
};

TEST(RivetRun, WritesWhatRivetRunWrites) {
  Fixture F;
  ASSERT_EQ(
      runRivet({"compile", F.Src.string(), "-o", F.Rvx.string()}).exitCode, 0);
  fs::path Want = F.Dir / "want", Got = F.Dir / "got";
  RunResult R =
      runRivet({"run", F.Rvx.string(), "--input", "x=" + F.X.string(),
                "--input", "b=" + F.B.string(), "--output-dir", Want.string()});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  R = runBinary(RivetRunBin,
                {F.Rvx.string(), "--input", "x=" + F.X.string(), "--input",
                 "b=" + F.B.string(), "--output-dir", Got.string()});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  for (const char *Out : {"output_0.npy", "output_1.npy"}) {
    Tensor A = readNpy((Want / Out).string()),
           G = readNpy((Got / Out).string());
    EXPECT_EQ(A.shape(), G.shape()) << Out;
    EXPECT_TRUE(allClose(G, A, 0, 0)) << Out;
  }
  R = runBinary(RivetRunBin,
                {F.Rvx.string(), "--input", "x=" + F.X.string(), "--input",
                 "b=" + F.B.string(), "--bench", "3", "--json"});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "\"device\": \"cpu\"")) << R.output;
  EXPECT_TRUE(contains(R.output, "\"median_ms\"")) << R.output;
}

TEST(RivetRun, BadInputIsOneErrorLine) {
  Fixture F;
  ASSERT_EQ(
      runRivet({"compile", F.Src.string(), "-o", F.Rvx.string()}).exitCode, 0);
  RunResult R =
      runBinary(RivetRunBin, {F.Rvx.string(), "--input", "x=" + F.X.string()});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "error: missing input 'b'")) << R.output;
  R = runBinary(RivetRunBin, {F.Rvx.string(), "--input", "x=" + F.B.string(),
                              "--input", "b=" + F.B.string()});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "error: input 'x'")) << R.output;
  fs::path Cut = F.Dir / "cut.rvx";
  {
    std::ifstream In(F.Rvx, std::ios::binary);
    std::string Bytes((std::istreambuf_iterator<char>(In)), {});
    std::ofstream(Cut, std::ios::binary) << Bytes.substr(0, Bytes.size() / 2);
  }
  R = runBinary(RivetRunBin, {Cut.string()});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "error: ")) << R.output;
  EXPECT_EQ(R.signal, 0);
}

TEST(RivetRun, CudaExecutableWithoutAGpuSaysSo) {
#if !RIVET_HAVE_CUDA
  GTEST_SKIP() << "built without the CUDA toolkit";
#else
  std::string Why;
  if (vm::cuda::available(&Why))
    GTEST_SKIP() << "this machine has a GPU";
  Fixture F;
  RunResult R = runRivet(
      {"compile", F.Src.string(), "--target", "cuda", "-o", F.Rvx.string()});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "target cuda")) << R.output;
  R = runBinary(RivetRunBin, {F.Rvx.string(), "--input", "x=" + F.X.string(),
                              "--input", "b=" + F.B.string()});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(
      contains(R.output, "error: this executable needs a CUDA GPU: " + Why))
      << R.output;
#endif
}

} // namespace
