//===- localize_cli_test.cc - rivet check --localize names the culprit ----===//
//
// The contract of --localize: with a fault injected into the kernel that
// computes an origin (in the compiled program only), the first divergence
// it reports is that origin, or, when the origin is fused into a kernel
// with others, the origin whose value that kernel computes; its inputs
// agree; and the instance is the first run (the first iteration inside a
// Loop body). Checked for a sample of the origins of every committed model
// (tests/models/*/model.onnx), at -O3, at -O0 and with codegen off, on its
// first data set; without a fault every model localizes nothing.
//
//===----------------------------------------------------------------------===//
#include "support/ModelData.h"
#include "support/RunRivet.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

using namespace rivet::testing;
namespace fs = std::filesystem;

namespace {

const fs::path ModelsDir = RIVET_SOURCE_DIR "/tests/models";

/// The string value of "Key": "..." in JSON text from Pos on (no escapes
/// needed: origins and ops in these models have none), or "".
std::string jsonField(const std::string &J, const std::string &Key,
                      size_t Pos = 0) {
  std::string Pat = "\"" + Key + "\": ";
  size_t At = J.find(Pat, Pos);
  if (At == std::string::npos)
    return "";
  At += Pat.size();
  if (J[At] != '"') { // a literal: up to the next delimiter
    size_t End = J.find_first_of(",}]", At);
    return J.substr(At, End - At);
  }
  size_t End = J.find('"', At + 1);
  return J.substr(At + 1, End - At - 1);
}

struct Report {
  std::string json;
  bool ok = false, injected = false;
  std::string first, instance, inputsAgree, kernelOutput, kernel;
};

Report parse(const std::string &J) {
  Report R;
  R.json = J;
  R.ok = jsonField(J, "ok") == "true";
  R.injected = jsonField(J, "fault_injected") == "true";
  R.kernelOutput = jsonField(J, "fault_kernel_output");
  size_t K = J.find("\"fault_kernel\": [");
  if (K != std::string::npos)
    R.kernel = J.substr(K, J.find(']', K) - K);
  size_t F = J.find("\"first_divergence\": {");
  if (F != std::string::npos) {
    R.first = jsonField(J, "origin", F);
    R.instance = jsonField(J, "instance", F);
    R.inputsAgree = jsonField(J, "inputs_agree", F);
  }
  return R;
}

/// A program to check: the model or .rvir file, and its inputs (one .npy
/// per input, named after it).
struct Subject {
  fs::path file, inputs;
};

/// A committed model with its first data set.
Subject model(const std::string &Name) {
  fs::path Dir = ModelsDir / Name;
  return {Dir / "model.onnx", rivet::test::modelDataSets(Dir).at(0) / "inputs"};
}
/// A program of tests/programs with its inputs.
Subject program(const std::string &Name) {
  fs::path Dir = fs::path(RIVET_SOURCE_DIR "/tests/programs") / Name;
  return {Dir / "program.rvir", Dir / "inputs"};
}

Report localize(const Subject &S, const std::vector<std::string> &Extra) {
  std::vector<std::string> Args = {"check", S.file.string(), "--localize",
                                   "--json"};
  std::vector<std::string> Inputs;
  for (const auto &E : fs::directory_iterator(S.inputs))
    Inputs.push_back("--input=" + E.path().stem().string() + "=" +
                     E.path().string());
  std::sort(Inputs.begin(), Inputs.end());
  Args.insert(Args.end(), Inputs.begin(), Inputs.end());
  Args.insert(Args.end(), Extra.begin(), Extra.end());
  RunResult R = runRivet(Args, /*WithStderr=*/false);
  EXPECT_TRUE(R.exitCode == 0 || R.exitCode == 1) << R.output;
  return parse(R.output);
}

/// The program's origins (rivet dump --origins), in order.
std::vector<std::string> originsOf(const Subject &S) {
  RunResult R = runRivet({"dump", "--origins", S.file.string()},
                         /*WithStderr=*/false);
  EXPECT_EQ(R.exitCode, 0);
  std::vector<std::string> Out;
  std::istringstream In(R.output);
  for (std::string Line; std::getline(In, Line);)
    Out.push_back(Line.substr(0, Line.find('\t')));
  return Out;
}

/// About Count origins spread evenly over the list, the last included.
std::vector<std::string> sample(const std::vector<std::string> &All,
                                size_t Count) {
  std::vector<std::string> S;
  size_t Step = std::max<size_t>(1, All.size() / Count);
  for (size_t I = 0; I < All.size(); I += Step)
    S.push_back(All[I]);
  if (!All.empty() && S.back() != All.back())
    S.push_back(All.back());
  return S;
}

class Localize : public ::testing::TestWithParam<std::string> {};

struct Named {
  int injected = 0; ///< Faults that went in (their kernel ran).
  int inLoop = 0;   ///< Of those, named in a Loop iteration.
  int exactly = 0;  ///< Named by their own origin.
};

/// Faults at Origins under the flags Extra: each one injected is named.
Named expectNamed(const Subject &S, const std::vector<std::string> &Origins,
                  const std::vector<std::string> &Extra) {
  Named N;
  for (const std::string &O : Origins) {
    std::vector<std::string> Args = Extra;
    Args.push_back("--inject-fault=" + O);
    Report R = localize(S, Args);
    if (!R.injected)
      continue; // a branch not taken, or no number to perturb
    ++N.injected;
    SCOPED_TRACE("fault at " + O + ": " + R.json);
    EXPECT_FALSE(R.ok);
    EXPECT_NE(R.kernel.find("\"" + O + "\""), std::string::npos);
    if (R.kernelOutput.empty())
      continue; // the kernel's value is no origin's: nothing to name
    // The origin itself when it has a kernel of its own or is the value
    // of its kernel, else the value its kernel computes.
    EXPECT_EQ(R.first, R.kernelOutput);
    N.exactly += R.first == O;
    if (R.kernel == "\"fault_kernel\": [\"" + O + "\"") {
      EXPECT_EQ(R.first, O);
    }
    EXPECT_EQ(R.inputsAgree, "true");
    if (R.instance.rfind("iteration", 0) == 0) {
      ++N.inLoop;
      EXPECT_EQ(R.instance.rfind("iteration 1 of ", 0), 0u);
    } else { // "run 1", or "run 1 (in @cell)" in another function
      EXPECT_EQ(R.instance.rfind("run 1", 0), 0u);
      EXPECT_TRUE(R.instance.size() == 5 || R.instance[5] == ' ');
    }
  }
  return N;
}

TEST_P(Localize, NamesTheOriginOfAnInjectedFault) {
  Subject S = model(GetParam());
  std::vector<std::string> All = originsOf(S);
  ASSERT_FALSE(All.empty());
  for (const std::vector<std::string> &Flags :
       {std::vector<std::string>{}, {"-O0"}, {"--codegen", "off"}}) {
    SCOPED_TRACE(Flags.empty() ? "-O3" : Flags[0]);
    Report Clean = localize(S, Flags);
    EXPECT_TRUE(Clean.ok) << Clean.json;
    Named N = expectNamed(S, sample(All, Flags.empty() ? 12 : 4), Flags);
    EXPECT_GT(N.injected, 0);
    EXPECT_GT(N.exactly, 0);
  }
}

// The bodies of Loops and the branches of Ifs: every origin of a model with
// one, each fault named in its first iteration.
TEST(LocalizeBodies, LoopBodyFaultsAreNamedInTheFirstIteration) {
  for (const char *Model : {"lstm_cell_loop", "gru_decoder", "rnn_loop"}) {
    SCOPED_TRACE(Model);
    Subject S = model(Model);
    Named N = expectNamed(S, originsOf(S), {});
    EXPECT_GT(N.inLoop, 0) << "no fault inside the Loop body was named";
    EXPECT_GT(N.exactly, 0);
  }
}

TEST(LocalizeBodies, IfBranchFaultsAreNamed) {
  Subject S = model("branch");
  // Either branch runs, whichever the data takes; a fault in the other is
  // never injected.
  Named N = expectNamed(S, {"/pos/Gemm", "/Relu", "/neg/Gemm", "/Tanh"}, {});
  EXPECT_GE(N.exactly, 1);
  EXPECT_EQ(N.inLoop, 0);
}

// .rvir programs: origins are line:column; a recursive function over a
// tree ADT and a loop written as a local tail-recursive function, at -O3
// and -O0.
TEST(LocalizeBodies, RvirProgramFaultsAreNamedByLineAndColumn) {
  for (const char *Name : {"tree_lstm", "growing_accumulator", "rnn_loop"}) {
    SCOPED_TRACE(Name);
    Subject S = program(Name);
    std::vector<std::string> All = originsOf(S);
    ASSERT_FALSE(All.empty());
    EXPECT_NE(All[0].find(':'), std::string::npos) << All[0];
    for (const std::vector<std::string> &Flags :
         {std::vector<std::string>{}, {"-O0"}}) {
      EXPECT_TRUE(localize(S, Flags).ok);
      Named N = expectNamed(S, All, Flags);
      EXPECT_GT(N.exactly, 0);
    }
  }
}

TEST(LocalizeCli, RefusesAnUnknownOriginAndOptionsWithoutLocalize) {
  fs::path Model = ModelsDir / "branch" / "model.onnx";
  RunResult R =
      runRivet({"check", Model.string(), "--random-inputs", "--shape", "x=3x4",
                "--localize", "--inject-fault", "/NoSuchNode"});
  EXPECT_EQ(R.exitCode, 2) << R.output;
  EXPECT_TRUE(contains(R.output, "no call of")) << R.output;
  R = runRivet({"check", Model.string(), "--random-inputs", "--shape", "x=3x4",
                "--json"});
  EXPECT_EQ(R.exitCode, 2) << R.output;
  EXPECT_TRUE(contains(R.output, "is an option of --localize")) << R.output;
}

std::vector<std::string> committedModels() {
  std::vector<std::string> Names;
  for (const auto &E : fs::directory_iterator(ModelsDir))
    if (fs::exists(E.path() / "model.onnx") &&
        !rivet::test::modelDataSets(E.path()).empty())
      Names.push_back(E.path().filename().string());
  std::sort(Names.begin(), Names.end());
  return Names;
}

INSTANTIATE_TEST_SUITE_P(Models, Localize,
                         ::testing::ValuesIn(committedModels()),
                         [](const auto &Info) { return Info.param; });

} // namespace
