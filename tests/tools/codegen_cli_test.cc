//===- codegen_cli_test.cc - --threads and the native-code flags ----------===//
//
// The CLI's intra-op thread count (--threads N, RIVET_NUM_THREADS, bench's
// "threads" and "concurrency") and its native-code flags (--codegen
// off|jit|so, --cpu, --mattr): accepted where documented, malformed values
// rejected with exit code 2, and the outputs independent of both the thread
// count and the codegen mode.
//
//===----------------------------------------------------------------------===//
#include "kernels/Npy.h"
#include "kernels/Tensor.h"
#include "support/RunRivet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace rivet::testing;
using namespace rivet;

namespace {

const fs::path Source = RIVET_SOURCE_DIR;

/// The transformer encoder: matmuls (oneDNN anchors) and fusable chains.
const fs::path Transformer = Source / "tests/models/transformer/model.onnx";
const fs::path TransformerInput =
    Source / "tests/models/transformer/test_data_set_0/inputs/src.npy";

fs::path scratch(const std::string &Name) {
  fs::path D = fs::path(::testing::TempDir()) / "codegen_cli" / Name;
  fs::remove_all(D);
  fs::create_directories(D);
  return D;
}

double jsonNumber(const std::string &J, const std::string &Key) {
  std::smatch M;
  std::regex Re("\"" + Key + "\": (-?[0-9.eE+-]+)");
  if (!std::regex_search(J, M, Re))
    return std::nan("");
  return std::stod(M[1]);
}

/// `rivet run` of the transformer with extra flags into Dir; the output.
Tensor runTransformer(const std::vector<std::string> &Extra,
                      const fs::path &Dir) {
  std::vector<std::string> Args = {
      "run",          Transformer.string(),
      "--input",      "src=" + TransformerInput.string(),
      "--output-dir", Dir.string()};
  Args.insert(Args.end(), Extra.begin(), Extra.end());
  RunResult R = runRivet(Args);
  EXPECT_EQ(R.exitCode, 0) << R.output;
  return readNpy((Dir / "output_0.npy").string());
}

/// Max |A - B| / (1 + |B|) over the elements; infinity when the shapes or
/// dtypes differ.
double maxRelativeDiff(const Tensor &A, const Tensor &B) {
  if (A.dtype() != B.dtype() || A.shape() != B.shape())
    return INFINITY;
  double M = 0;
  for (int64_t I = 0; I < A.numel(); ++I) {
    double X = A.elementAsDouble(I), Y = B.elementAsDouble(I);
    M = std::max(M, std::fabs(X - Y) / (1 + std::fabs(Y)));
  }
  return M;
}

TEST(CodegenCli, OneAndTwoThreadsGiveTheSameOutputs) {
  Tensor Ref = runTransformer({"--executor", "interp"}, scratch("interp"));
  Tensor One = runTransformer({"--threads", "1"}, scratch("t1"));
  Tensor Two = runTransformer({"--threads", "2"}, scratch("t2"));
  Tensor All = runTransformer({"--threads", "0"}, scratch("t0"));
  EXPECT_LE(maxRelativeDiff(One, Ref), 1e-4);
  EXPECT_LE(maxRelativeDiff(Two, One), 1e-5);
  EXPECT_LE(maxRelativeDiff(All, One), 1e-5);
}

TEST(CodegenCli, EveryCodegenModeGivesTheSameOutputs) {
  Tensor Ref = runTransformer({"--executor", "interp"}, scratch("ref"));
  for (const char *Mode : {"off", "jit", "so"}) {
    Tensor T = runTransformer({"--codegen", Mode, "--threads", "2"},
                              scratch(std::string("mode_") + Mode));
    EXPECT_LE(maxRelativeDiff(T, Ref), 1e-4) << Mode;
  }
  // A .rvx file carries its shared object (the default of compile).
  fs::path Dir = scratch("rvx");
  fs::path Rvx = Dir / "t.rvx";
  RunResult C = runRivet({"compile", Transformer.string(), "-o", Rvx.string(),
                          "--cpu", "x86-64-v2", "--mattr", "+sse4.2"});
  ASSERT_EQ(C.exitCode, 0) << C.output;
  EXPECT_TRUE(contains(C.output, "codegen so")) << C.output;
  RunResult R = runRivet({"run", Rvx.string(), "--input",
                          "src=" + TransformerInput.string(), "--output-dir",
                          Dir.string(), "--threads", "1"});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_LE(maxRelativeDiff(readNpy((Dir / "output_0.npy").string()), Ref),
            1e-4);
}

TEST(CodegenCli, BenchReportsThreadsAndConcurrency) {
  RunResult R = runRivet({"bench", Transformer.string(), "--input",
                          "src=" + TransformerInput.string(), "--threads", "2",
                          "--concurrency", "1", "--warmup", "1", "--repeat",
                          "3", "--min-time", "0", "--codegen", "off"},
                         /*WithStderr=*/false);
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_EQ(jsonNumber(R.output, "threads"), 2) << R.output;
  EXPECT_EQ(jsonNumber(R.output, "concurrency"), 1) << R.output;
  EXPECT_TRUE(contains(R.output, "\"codegen\": \"off\"")) << R.output;
  // The default is jit.
  R = runRivet({"bench", Transformer.string(), "--input",
                "src=" + TransformerInput.string(), "--warmup", "0", "--repeat",
                "1", "--min-time", "0"},
               /*WithStderr=*/false);
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "\"codegen\": \"jit\"")) << R.output;
}

TEST(CodegenCli, DefaultThreadCountIsEveryCoreOrTheEnvironment) {
  std::vector<std::string> Args = {
      "bench",      Transformer.string(),
      "--input",    "src=" + TransformerInput.string(),
      "--warmup",   "0",
      "--repeat",   "1",
      "--min-time", "0",
      "--codegen",  "off"};
  unsetenv("RIVET_NUM_THREADS");
  RunResult R = runRivet(Args, /*WithStderr=*/false);
  ASSERT_EQ(R.exitCode, 0) << R.output;
  unsigned Cores = std::thread::hardware_concurrency();
  EXPECT_EQ(jsonNumber(R.output, "threads"), Cores ? Cores : 1) << R.output;
  setenv("RIVET_NUM_THREADS", "3", 1);
  R = runRivet(Args, /*WithStderr=*/false);
  unsetenv("RIVET_NUM_THREADS");
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_EQ(jsonNumber(R.output, "threads"), 3) << R.output;
}

TEST(CodegenCli, MalformedValuesAreUsageErrors) {
  std::string M = Transformer.string();
  std::string In = "src=" + TransformerInput.string();
  fs::path Out = scratch("bad") / "x.rvx";
  struct Case {
    std::vector<std::string> args;
    const char *message;
  };
  std::vector<Case> Cases = {
      {{"run", M, "--input", In, "--codegen", "llvm"}, "--codegen"},
      {{"run", M, "--input", In, "--threads", "-1"}, "--threads"},
      {{"run", M, "--input", In, "--threads", "two"}, "--threads"},
      {{"check", M, "--input", In, "--threads", "5000"}, "--threads"},
      {{"bench", M, "--input", In, "--threads"}, "--threads"},
      {{"bench", M, "--input", In, "--concurrency", "0"}, "--concurrency"},
      {{"run", M, "--input", In, "--mattr", "avx2"}, "--mattr"},
      {{"run", M, "--input", In, "--mattr", "+avx2,"}, "--mattr"},
      {{"compile", M, "-o", Out.string(), "--cpu", ""}, "--cpu"},
      {{"compile", M, "-o", Out.string(), "--cpu", "sky lake"}, "--cpu"},
      {{"compile", M, "-o", Out.string(), "--codegen", "jit"}, "--codegen"},
      {{"compile", M, "-o", Out.string(), "--threads", "2"}, "--threads"},
  };
  for (const Case &C : Cases) {
    RunResult R = runRivet(C.args);
    std::string Line;
    for (const std::string &A : C.args)
      Line += A + " ";
    EXPECT_EQ(R.exitCode, 2) << Line << "\n" << R.output;
    EXPECT_TRUE(contains(R.output, C.message)) << Line << "\n" << R.output;
  }
  EXPECT_FALSE(fs::exists(Out));
}

TEST(CodegenCli, UsageTextsListTheFlags) {
  RunResult R = runRivet({"help", "bench"});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  for (const char *Flag :
       {"--threads", "--concurrency", "--codegen", "--cpu", "--mattr"})
    EXPECT_TRUE(contains(R.output, Flag)) << Flag;
  R = runRivet({"help", "compile"});
  for (const char *Flag : {"--codegen", "--cpu", "--mattr"})
    EXPECT_TRUE(contains(R.output, Flag)) << Flag;
}

} // namespace

// Issue 23, reproducers 5 and 6: a CPU or feature LLVM does not know, or one
// that cannot run 64-bit code, is refused before LLVM would abort; code for
// a CPU level is refused at load on a CPU that lacks the level's features.
TEST(CodegenCli, UnknownOrUnusableTargetsAreErrors) {
  std::string M = Transformer.string();
  fs::path Out = scratch("target") / "x.rvx";
  struct Case {
    std::vector<std::string> flags;
    const char *message;
  };
  std::vector<Case> Cases = {
      {{"--cpu", "i386"}, "cpu 'i386' cannot run 64-bit code"},
      {{"--cpu", "pentium9000"}, "unknown cpu 'pentium9000'"},
      {{"--mattr", "-64bit-mode"}, "cannot run 64-bit code"},
      {{"--mattr", "+avx9000"}, "unknown cpu feature 'avx9000'"},
  };
  for (const Case &C : Cases) {
    std::vector<std::string> Args = {"compile", M, "-o", Out.string()};
    Args.insert(Args.end(), C.flags.begin(), C.flags.end());
    RunResult R = runRivet(Args);
    EXPECT_EQ(R.signal, 0) << C.flags[1] << ": " << R.output;
    EXPECT_EQ(R.exitCode, 1) << C.flags[1] << ": " << R.output;
    EXPECT_TRUE(contains(R.output, C.message)) << R.output;
    EXPECT_FALSE(fs::exists(Out));
  }

  RunResult C =
      runRivet({"compile", M, "-o", Out.string(), "--cpu", "x86-64-v4"});
  ASSERT_EQ(C.exitCode, 0) << C.output;
  RunResult R = runRivet({"run", Out.string(), "--input",
                          "src=" + TransformerInput.string(), "--output-dir",
                          scratch("target-out").string()});
  EXPECT_EQ(R.signal, 0) << R.output;
  if (hostHasX86_64V4()) {
    EXPECT_EQ(R.exitCode, 0) << R.output;
  } else {
    EXPECT_EQ(R.exitCode, 1) << R.output;
    EXPECT_TRUE(contains(R.output, "this CPU does not have")) << R.output;
  }
}
