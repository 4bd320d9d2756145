//===- pass_cli_test.cc - The pass flags of the CLI -----------------------===//
//
// -O levels, --print-after, --disable-pass/--enable-pass, --time-passes and
// dump --optimized/--fused, driven through the rivet binary.
//
//===----------------------------------------------------------------------===//
#include "support/RunRivet.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace rivet::testing;

namespace {

/// A file name of this test's own: ctest runs the tests of this file in
/// parallel processes, which must not share one.
std::string tempPath(const std::string &Ext) {
  return ::testing::TempDir() + "/pass_cli_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + Ext;
}

/// A program with a foldable constant subexpression and a fusable chain.
std::string writeProgram() {
  std::string Path = tempPath(".rvir");
  std::ofstream(Path) << R"(
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  let %c = add(const[(3,), float32]([1.0, 2.0, 3.0]), 1.0);
  let %y = multiply(%x, %c);
  relu(add(%y, %x))
}
)";
  return Path;
}

TEST(PassCli, OptimizedFoldsConstantsAtO2ButNotAtO0) {
  std::string P = writeProgram();
  RunResult O0 = runRivet({"dump", "--optimized", "-O0", P});
  ASSERT_EQ(O0.exitCode, 0) << O0.output;
  EXPECT_TRUE(contains(O0.output, "add(const[(3,), float32]")) << O0.output;
  RunResult O2 = runRivet({"dump", "--optimized", "-O2", P});
  ASSERT_EQ(O2.exitCode, 0) << O2.output;
  EXPECT_FALSE(contains(O2.output, "add(const[(3,), float32]")) << O2.output;
  EXPECT_TRUE(contains(O2.output, "[2.0, 3.0, 4.0]")) << O2.output;
  EXPECT_FALSE(contains(O2.output, "Primitive")) << O2.output;
}

TEST(PassCli, FusedListsTheGroups) {
  RunResult R = runRivet({"dump", "--fused", writeProgram()});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "fused groups")) << R.output;
  EXPECT_TRUE(contains(R.output, "Primitive=1")) << R.output;
  // Each operator with its origin: the line and column of its call.
  EXPECT_TRUE(contains(R.output, "multiply <4:12>, add <5:8>, relu <5:3>"))
      << R.output;
}

TEST(PassCli, DisablePassKeepsItsWorkUndone) {
  RunResult R = runRivet({"dump", "--optimized", "--disable-pass",
                          "FoldConstant", writeProgram()});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "add(const[(3,), float32]")) << R.output;
}

TEST(PassCli, PrintAfterAndTimePasses) {
  std::string Out = tempPath(".rvx");
  RunResult R = runRivet({"compile", writeProgram(), "-o", Out, "--print-after",
                          "FoldConstant", "--time-passes"});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "// after FoldConstant")) << R.output;
  EXPECT_TRUE(contains(R.output, "// pass FoldConstant")) << R.output;
  EXPECT_TRUE(contains(R.output, "// passes total")) << R.output;
}

TEST(PassCli, UnknownPassIsAUsageError) {
  RunResult R = runRivet({"compile", writeProgram(), "-o", "/dev/null",
                          "--print-after", "FoldConstants"});
  EXPECT_EQ(R.exitCode, 2) << R.output;
  EXPECT_TRUE(contains(R.output, "unknown pass 'FoldConstants'")) << R.output;
}

TEST(PassCli, EveryLevelRunsTheSameProgram) {
  std::string P = writeProgram();
  RunResult Ref =
      runRivet({"run", P, "--random-inputs", "--seed", "3", "--executor",
                "interp", "--output-dir", tempPath("_ref")});
  ASSERT_EQ(Ref.exitCode, 0) << Ref.output;
  for (const char *Level : {"-O0", "-O1", "-O2", "-O3"}) {
    RunResult R =
        runRivet({"check", P, "--random-inputs", "--seed", "3", Level});
    EXPECT_EQ(R.exitCode, 0) << Level << ": " << R.output;
  }
}

} // namespace
