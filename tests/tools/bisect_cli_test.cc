//===- bisect_cli_test.cc - rivet check --bisect-passes -------------------===//
//
// The command line of pass bisection on committed models and programs: the
// step list, no divergence where check passes, --json, --bisect-linear, and
// (at zero tolerance, where some step's rounding differs from the
// reference's) the first bad step with its diff. Which step is wrong for
// sure is tested in process with a deliberately wrong pass
// (tests/vm/pass_bisect_test.cc).
//
//===----------------------------------------------------------------------===//
#include "support/RunRivet.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace rivet::testing;
namespace fs = std::filesystem;

namespace {

const fs::path Models = RIVET_SOURCE_DIR "/tests/models";
const fs::path Programs = RIVET_SOURCE_DIR "/tests/programs";

bool contains(const std::string &S, const std::string &Part) {
  return S.find(Part) != std::string::npos;
}

/// `check MODEL --input NAME=FILE ...` with the first data set's inputs.
std::vector<std::string> checkModel(const std::string &Name) {
  fs::path Dir = Models / Name;
  std::vector<std::string> Args = {"check", (Dir / "model.onnx").string()};
  std::vector<fs::path> Inputs;
  for (const auto &E :
       fs::directory_iterator(Dir / "test_data_set_0" / "inputs"))
    Inputs.push_back(E.path());
  std::sort(Inputs.begin(), Inputs.end());
  for (const fs::path &P : Inputs)
    Args.insert(Args.end(), {"--input", P.stem().string() + "=" + P.string()});
  return Args;
}

std::vector<std::string> operator+(std::vector<std::string> A,
                                   const std::vector<std::string> &B) {
  A.insert(A.end(), B.begin(), B.end());
  return A;
}

/// The literal after "Key": in JSON text (up to the next delimiter).
std::string jsonField(const std::string &J, const std::string &Key) {
  std::string Pat = "\"" + Key + "\": ";
  size_t At = J.find(Pat);
  if (At == std::string::npos)
    return "";
  At += Pat.size();
  if (J[At] == '"')
    return J.substr(At + 1, J.find('"', At + 1) - At - 1);
  return J.substr(At, J.find_first_of(",}]", At) - At);
}

TEST(BisectCli, AModelThatAgreesListsItsStepsAndBlamesNone) {
  RunResult R = runRivet(checkModel("resblock") +
                         std::vector<std::string>{"--bisect-passes"});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "pass bisection")) << R.output;
  // The numbered steps: the passes at -O3, then the compiler's own.
  for (const char *Step :
       {"    1  SimplifyInference\n", "  FuseOps\n", "  anchor selection\n",
        "  codegen\n", "  FuseConvChains\n"})
    EXPECT_TRUE(contains(R.output, Step)) << Step << "\n" << R.output;
  EXPECT_TRUE(contains(R.output, "no step diverges")) << R.output;
  // Only the full compilation was needed.
  EXPECT_TRUE(contains(R.output, "every step"));
  EXPECT_FALSE(contains(R.output, "first 1"));
}

TEST(BisectCli, JsonOnStdout) {
  RunResult R =
      runRivet(checkModel("resblock") +
                   std::vector<std::string>{"--bisect-passes", "--json", "-O1"},
               /*WithStderr=*/false);
  ASSERT_EQ(R.exitCode, 0) << R.output;
  ASSERT_EQ(R.output.rfind("{\"ok\": true", 0), 0u) << R.output;
  EXPECT_EQ(jsonField(R.output, "first_bad_step"), "null") << R.output;
  // -O1: SimplifyInference, DeadCodeElimination, FuseOps, anchor
  // selection, codegen, DeadCodeElimination.
  EXPECT_EQ(jsonField(R.output, "steps"), "6") << R.output;
  EXPECT_TRUE(contains(R.output, "\"step_names\": [\"SimplifyInference\", "
                                 "\"DeadCodeElimination\", \"FuseOps\", "
                                 "\"anchor selection\", \"codegen\", "
                                 "\"DeadCodeElimination\"]"))
      << R.output;
  EXPECT_EQ(R.output.find('\n'), R.output.size() - 1) << R.output;
}

TEST(BisectCli, ProgramsLinearAndWithoutCodegen) {
  fs::path P = Programs / "softmax_reduce";
  RunResult R =
      runRivet({"check", (P / "program.rvir").string(), "--input",
                "x=" + (P / "inputs" / "x.npy").string(), "--bisect-passes",
                "--bisect-linear", "--codegen", "off", "--print-diff"});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "no step diverges")) << R.output;
  EXPECT_FALSE(contains(R.output, "  codegen\n")) << R.output;
  EXPECT_FALSE(contains(R.output, "--- before")) << R.output;
}

TEST(BisectCli, ZeroToleranceFindsARoundingStepWithItsDiff) {
  // Some step (the attention kernel, a oneDNN call, generated code) rounds
  // differently from the reference: at zero tolerance the bisection names
  // one, the text and the JSON agree on which, and the diff is its own.
  RunResult Json =
      runRivet(checkModel("transformer") +
                   std::vector<std::string>{"--bisect-passes", "--rtol", "0",
                                            "--atol", "0", "--json"},
               /*WithStderr=*/false);
  if (Json.exitCode == 0)
    GTEST_SKIP() << "every step is bit-exact here";
  ASSERT_EQ(Json.exitCode, 1) << Json.output;
  ASSERT_EQ(jsonField(Json.output, "ok"), "false") << Json.output;
  std::string Index = jsonField(Json.output, "index");
  std::string Name = jsonField(Json.output, "name");
  ASSERT_FALSE(Index.empty()) << Json.output;
  RunResult R =
      runRivet(checkModel("transformer") +
               std::vector<std::string>{"--bisect-passes", "--rtol", "0",
                                        "--atol", "0", "--print-diff"});
  ASSERT_EQ(R.exitCode, 1) << R.output;
  std::string Step = "step " + Index + " (" + Name + ")";
  EXPECT_TRUE(contains(R.output, "diverge after " + Step)) << R.output;
  EXPECT_TRUE(contains(R.output, "results agree ")) << R.output;
  EXPECT_TRUE(contains(R.output, "--- before " + Step + "\n+++ after " + Step +
                                     "\n@@ -") ||
              contains(R.output, Step + " leaves the printed IR unchanged"))
      << R.output;
}

TEST(BisectCli, UsageErrors) {
  std::vector<std::string> Base = checkModel("resblock");
  for (const std::vector<std::string> &Extra :
       std::vector<std::vector<std::string>>{
           {"--print-diff"},
           {"--bisect-linear"},
           {"--bisect-passes", "--localize"},
           {"--bisect-passes", "--expected", Models.string()}}) {
    RunResult R = runRivet(Base + Extra);
    EXPECT_EQ(R.exitCode, 2) << Extra[0] << "\n" << R.output;
  }
  RunResult R = runRivet(Base + std::vector<std::string>{"--print-diff"});
  EXPECT_TRUE(contains(R.output, "is an option of --bisect-passes"))
      << R.output;
}

} // namespace
