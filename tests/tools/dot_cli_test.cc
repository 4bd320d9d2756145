//===- dot_cli_test.cc - rivet dump --dot renders with Graphviz -----------===//
//
// Every committed model (tests/models, every .onnx file there) and every
// .rvir program (tests/programs) is drawn with dump --dot and with --dot
// --fused, and Graphviz's dot must render each to SVG without a word on
// stderr. The clusters are where the IR has them: fused groups, the Loop
// body of rnn_loop, the branches of the If model, global functions.
// Skipped where dot is missing (CI installs graphviz:
// tools/scripts/install-deps.sh).
//
//===----------------------------------------------------------------------===//
#include "support/RunRivet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace rivet::testing;
namespace fs = std::filesystem;

namespace {

const fs::path Source = RIVET_SOURCE_DIR;

std::string findDot() {
  for (const char *P : {"/usr/bin/dot", "/usr/local/bin/dot"})
    if (fs::exists(P))
      return P;
  return "";
}

/// The committed inputs of dump: every .onnx under tests/models and every
/// program.rvir under tests/programs, sorted.
std::vector<fs::path> committedPrograms() {
  std::vector<fs::path> Out;
  for (const auto &E :
       fs::recursive_directory_iterator(Source / "tests/models"))
    if (E.is_regular_file() && E.path().extension() == ".onnx")
      Out.push_back(E.path());
  for (const auto &E : fs::directory_iterator(Source / "tests/programs"))
    if (fs::exists(E.path() / "program.rvir"))
      Out.push_back(E.path() / "program.rvir");
  std::sort(Out.begin(), Out.end());
  return Out;
}

/// dump --dot (plus Extra) of Program, in full.
RunResult dumpDot(const fs::path &Program, std::vector<std::string> Extra) {
  std::vector<std::string> A = {"dump", Program.string(), "--dot"};
  A.insert(A.end(), Extra.begin(), Extra.end());
  return runRivet(A, /*WithStderr=*/false);
}

class DotTest : public ::testing::Test {
protected:
  void SetUp() override {
    Dot = findDot();
    if (Dot.empty())
      GTEST_SKIP() << "no Graphviz dot (Debian: graphviz)";
    Dir = freshTempDir("dot", currentTestName());
  }
  /// Renders Text with dot -Tsvg: true when it exits 0, says nothing and
  /// writes an SVG.
  ::testing::AssertionResult renders(const std::string &Text,
                                     const std::string &Name) {
    fs::path In = Dir / (Name + ".dot"), Out = Dir / (Name + ".svg");
    std::ofstream(In) << Text;
    RunResult R = runBinary(Dot, {"-Tsvg", In.string(), "-o", Out.string()});
    if (R.exitCode != 0 || !R.output.empty())
      return ::testing::AssertionFailure()
             << "dot exit " << R.exitCode << ": " << R.output;
    std::ifstream Svg(Out);
    std::string Head(256, '\0');
    Svg.read(Head.data(), (std::streamsize)Head.size());
    if (!contains(Head, "<svg") && !contains(Head, "<?xml"))
      return ::testing::AssertionFailure() << "no SVG written";
    return ::testing::AssertionSuccess();
  }
  std::string Dot;
  fs::path Dir;
};

TEST_F(DotTest, EveryCommittedProgramRenders) {
  size_t Drawn = 0;
  for (const fs::path &P : committedPrograms()) {
    std::string Name =
        P.parent_path().filename().string() + "_" + P.stem().string();
    // A model the importer refuses (committed to test the refusal) is
    // refused here the same way.
    RunResult Ir = runRivet({"dump", P.string(), "--ir"});
    if (Ir.exitCode != 0) {
      RunResult R = runRivet({"dump", P.string(), "--dot"});
      EXPECT_EQ(R.exitCode, Ir.exitCode) << P << ": " << R.output;
      EXPECT_TRUE(contains(R.output, "error: ")) << P << ": " << R.output;
      continue;
    }
    for (bool Fused : {false, true}) {
      RunResult R = dumpDot(P, Fused ? std::vector<std::string>{"--fused"}
                                     : std::vector<std::string>{});
      ASSERT_EQ(R.exitCode, 0) << P << (Fused ? " --fused" : "");
      EXPECT_TRUE(R.output.rfind("digraph rivet {", 0) == 0) << P;
      EXPECT_TRUE(renders(R.output, Name + (Fused ? "_fused" : "")))
          << P << (Fused ? " --dot --fused" : " --dot");
      ++Drawn;
    }
  }
  EXPECT_GE(Drawn, 2u * 30);
}

TEST_F(DotTest, LoopModelHasLoopIfAndFusedClusters) {
  fs::path M = Source / "tests/models/rnn_loop/model.onnx";
  RunResult Plain = dumpDot(M, {});
  ASSERT_EQ(Plain.exitCode, 0);
  // The ONNX Loop is a tail-recursive local function, its condition an If.
  EXPECT_TRUE(contains(Plain.output, "label=\"loop %loop\"")) << Plain.output;
  EXPECT_TRUE(contains(Plain.output, "label=\"if\"")) << Plain.output;
  EXPECT_FALSE(contains(Plain.output, "fused group")) << Plain.output;
  // Its operators with their ONNX node names, and the inputs by name.
  EXPECT_TRUE(contains(Plain.output, "</ih/Gemm>")) << Plain.output;
  EXPECT_TRUE(contains(Plain.output, "label=\"xs\\n")) << Plain.output;
  EXPECT_TRUE(contains(Plain.output, "label=\"h_final\"")) << Plain.output;

  RunResult Fused = dumpDot(M, {"--fused"});
  ASSERT_EQ(Fused.exitCode, 0);
  EXPECT_TRUE(contains(Fused.output, "label=\"fused group 1\""));
  EXPECT_TRUE(contains(Fused.output, "label=\"loop %loop\""));
  // The loop's fused groups are nested in its cluster: the Loop body's
  // cluster opens before a fused group and closes after it.
  size_t Loop = Fused.output.find("label=\"loop %loop\"");
  size_t Tanh = Fused.output.find("tanh\\n</Tanh>");
  ASSERT_NE(Tanh, std::string::npos);
  EXPECT_LT(Loop, Tanh);
  // The recursive call points back at the loop without constraining the
  // layout; the first call enters the loop's cluster.
  EXPECT_TRUE(contains(Fused.output, "constraint=false"));
  EXPECT_TRUE(contains(Fused.output, "lhead=cluster_"));
  EXPECT_TRUE(renders(Fused.output, "rnn_loop"));
}

TEST_F(DotTest, BranchModelHasThenAndElseClusters) {
  fs::path M = Source / "tests/models/branch/model.onnx";
  for (bool Fused : {false, true}) {
    RunResult R = dumpDot(M, Fused ? std::vector<std::string>{"--fused"}
                                   : std::vector<std::string>{});
    ASSERT_EQ(R.exitCode, 0);
    EXPECT_TRUE(contains(R.output, "label=\"if\"")) << R.output;
    EXPECT_TRUE(contains(R.output, "subgraph cluster_")) << R.output;
    EXPECT_TRUE(contains(R.output, "label=\"then\"")) << R.output;
    EXPECT_TRUE(contains(R.output, "label=\"else\"")) << R.output;
    EXPECT_EQ(contains(R.output, "fused group"), Fused) << R.output;
  }
}

TEST_F(DotTest, GlobalFunctionsAndMatchClauses) {
  RunResult R =
      dumpDot(Source / "tests/programs/mutual_recursion/program.rvir", {});
  ASSERT_EQ(R.exitCode, 0);
  EXPECT_TRUE(contains(R.output, "label=\"@is_even\"")) << R.output;
  EXPECT_TRUE(contains(R.output, "label=\"@is_odd\"")) << R.output;
  EXPECT_TRUE(contains(R.output, "call @is_odd")) << R.output;
  R = dumpDot(Source / "tests/programs/option_match/program.rvir", {});
  ASSERT_EQ(R.exitCode, 0);
  EXPECT_TRUE(contains(R.output, "label=\"match\"")) << R.output;
}

TEST(DotFlags, DotDrawsIrOnly) {
  std::string M = (Source / "tests/models/branch/model.onnx").string();
  for (const char *Other : {"--bytecode", "--origins"}) {
    RunResult R = runRivet({"dump", M, "--dot", Other});
    EXPECT_EQ(R.exitCode, 2) << Other << ": " << R.output;
    EXPECT_TRUE(contains(R.output, "--dot")) << R.output;
  }
}

} // namespace
