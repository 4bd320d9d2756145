//===- onnx_cli_test.cc - rivet run/dump on ONNX models -------------------===//
//
// The CLI's ONNX path on the tiny models of tests/models/cli/ (written by
// tools/models/export_cli_fixtures.py; they use no operator but If): inputs
// named by their ONNX names (which the IR sanitizes), outputs logged with
// their ONNX names, input checks naming the input, --random-inputs with a
// symbolic dim given by --shape, and clear errors for unsupported operators.
//
//===----------------------------------------------------------------------===//
#include "kernels/Npy.h"
#include "kernels/Tensor.h"
#include "support/RunRivet.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace rivet::testing;
using namespace rivet;

namespace {

const fs::path Fixtures = RIVET_SOURCE_DIR "/tests/models/cli";

class OnnxCli : public ::testing::Test {
protected:
  void SetUp() override { Dir = freshTempDir("onnx_cli", currentTestName()); }
  void TearDown() override { fs::remove_all(Dir); }

  std::string npy(const std::string &Name, const Tensor &T) {
    std::string P = (Dir / (Name + ".npy")).string();
    writeNpy(P, T);
    return P;
  }
  fs::path Dir;
};

TEST_F(OnnxCli, RunsWithOnnxInputAndOutputNames) {
  Tensor X = Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor Ids = Tensor::fromVector<int64_t>({7, -8}, {2});
  RunResult R =
      runRivet({"run", (Fixtures / "passthrough.onnx").string(), "--input",
                "input.1=" + npy("x", X), "--input", "ids:0=" + npy("ids", Ids),
                "--output-dir", (Dir / "out").string()});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  // The outputs are the inputs in reverse order, each logged by ONNX name.
  EXPECT_TRUE(contains(R.output, "output_0 (ONNX output 'ids:0')")) << R.output;
  EXPECT_TRUE(contains(R.output, "output_1 (ONNX output 'input.1')"))
      << R.output;
  EXPECT_TRUE(allClose(readNpy((Dir / "out" / "output_0.npy").string()), Ids));
  EXPECT_TRUE(allClose(readNpy((Dir / "out" / "output_1.npy").string()), X));
}

TEST_F(OnnxCli, DataDependentIf) {
  Tensor A = Tensor::fromVector<float>({1, 2, 3}, {3});
  Tensor B = Tensor::fromVector<float>({-1, -2, -3}, {3});
  for (bool Cond : {true, false}) {
    fs::path Out = Dir / (Cond ? "t" : "f");
    RunResult R =
        runRivet({"run", (Fixtures / "select.onnx").string(), "--input",
                  "cond=" + npy("cond", Tensor::scalar<bool>(Cond)), "--input",
                  "a=" + npy("a", A), "--input", "b=" + npy("b", B),
                  "--output-dir", Out.string()});
    ASSERT_EQ(R.exitCode, 0) << R.output;
    EXPECT_TRUE(contains(R.output, "(ONNX output 'picked')")) << R.output;
    EXPECT_TRUE(
        allClose(readNpy((Out / "output_0.npy").string()), Cond ? A : B));
  }
}

TEST_F(OnnxCli, WrongInputsNameTheInput) {
  std::string Model = (Fixtures / "passthrough.onnx").string();
  std::string Ids = npy("ids", Tensor::fromVector<int64_t>({1, 2}, {2}));
  // Dimension 1 of 'input.1' is 3.
  RunResult R =
      runRivet({"run", Model, "--input",
                "input.1=" + npy("bad", Tensor::zeros({2, 4}, DType::Float32)),
                "--input", "ids:0=" + Ids, "--output-dir", Dir.string()});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "input 'input.1'")) << R.output;
  EXPECT_TRUE(contains(R.output, "dimension 1 is 4 instead of 3")) << R.output;
  // Wrong dtype.
  R = runRivet({"run", Model, "--input",
                "input.1=" + npy("x", Tensor::zeros({2, 3}, DType::Float32)),
                "--input",
                "ids:0=" + npy("ids32", Tensor::zeros({2}, DType::Int32)),
                "--output-dir", Dir.string()});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "input 'ids:0'")) << R.output;
  EXPECT_TRUE(contains(R.output, "dtype int32 instead of int64")) << R.output;
  // Missing input, and an unknown one, list the ONNX names.
  R = runRivet({"run", Model, "--input", "ids:0=" + Ids});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "missing input 'input.1'")) << R.output;
  R = runRivet({"run", Model, "--input", "nope=" + Ids});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "unknown input 'nope'")) << R.output;
  EXPECT_TRUE(contains(R.output, "input.1, ids:0")) << R.output;
}

TEST_F(OnnxCli, RandomInputsWithSymbolicDims) {
  std::string Model = (Fixtures / "passthrough.onnx").string();
  // 'batch' is a dim_param: random inputs need its extent.
  RunResult R = runRivet({"run", Model, "--random-inputs"});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "--shape input.1=")) << R.output;
  R = runRivet({"run", Model, "--random-inputs", "--seed", "3", "--shape",
                "input.1=5x3", "--output-dir", Dir.string()});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  Tensor X = readNpy((Dir / "output_1.npy").string());
  EXPECT_EQ(X.shape(), (Shape{5, 3}));
  EXPECT_EQ(X.dtype(), DType::Float32);
}

TEST_F(OnnxCli, DumpShowsImportedIr) {
  RunResult R = runRivet({"dump", (Fixtures / "select.onnx").string(), "--ir"});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "// ONNX inputs: 'cond', 'a', 'b'"))
      << R.output;
  EXPECT_TRUE(contains(R.output, "// ONNX outputs: 'picked'")) << R.output;
  EXPECT_TRUE(contains(R.output, "def @main")) << R.output;
  EXPECT_TRUE(contains(R.output, "if")) << R.output;
}

TEST_F(OnnxCli, UnsupportedOperatorIsAClearError) {
  std::string Model = (Fixtures / "unsupported.onnx").string();
  for (const std::vector<std::string> &Args :
       {std::vector<std::string>{"run", Model, "--random-inputs"},
        std::vector<std::string>{"dump", Model}}) {
    RunResult R = runRivet(Args);
    EXPECT_EQ(R.signal, 0);
    EXPECT_EQ(R.exitCode, 1) << R.output;
    EXPECT_TRUE(contains(R.output, "error: ")) << R.output;
    EXPECT_TRUE(contains(R.output, "FancyOp")) << R.output;
    EXPECT_TRUE(contains(R.output, "mystery_node")) << R.output;
  }
  RunResult R = runRivet({"run", (Dir / "absent.onnx").string()});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "absent.onnx")) << R.output;
  std::FILE *F = std::fopen((Dir / "junk.onnx").c_str(), "wb");
  ASSERT_NE(F, nullptr);
  std::fputs("this is not a protobuf \xff\xff\xff", F);
  std::fclose(F);
  R = runRivet({"run", (Dir / "junk.onnx").string()});
  EXPECT_EQ(R.signal, 0);
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "junk.onnx")) << R.output;
}

} // namespace
