//===- run_models_test.cc - Real models against PyTorch -------------------===//
//
// Each model directory (written by tools/models/export_*.py) holds model.onnx
// and test_data_set_<k>/{inputs/<ONNX input name>.npy, expected/output_<i>.npy}
// with PyTorch's outputs. For every data set and every executor, `rivet run
// model.onnx --input NAME=... --executor E` must write exactly the expected
// files, each within rtol 1e-4 / atol 1e-4 (float outputs; others exactly);
// the max abs error is printed and recorded as a test property.
//
// The small models are committed under tests/models/<name>/; resnet18 and
// mobilenet_v2 are read from the model cache ($RIVET_MODEL_CACHE, default
// ~/.cache/rivet/models) and skipped when it does not have them.
//
// Executors: the list below is the differential axis. Every executor must
// match PyTorch on every model; another (an opt level) is one line.
//
//===----------------------------------------------------------------------===//
#include "kernels/Npy.h"
#include "kernels/Tensor.h"
#include "support/RunRivet.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace rivet::testing;
using namespace rivet;

namespace {

const fs::path CommittedDir = RIVET_SOURCE_DIR "/tests/models";
constexpr double Rtol = 1e-4;
constexpr double Atol = 1e-4;

/// How `rivet run` is asked to execute a model.
struct Executor {
  std::string name;              // part of the test name
  std::vector<std::string> args; // extra `rivet run` arguments
};

// The reference interpreter and the compiled path (VM at -O3: oneDNN
// anchors, blocked layouts, Winograd, generated kernels, on every core, so
// convs run as parts): each is compared with PyTorch, and so with the other,
// on every data set.
const std::vector<Executor> &executors() {
  static const std::vector<Executor> E = {
      {"interp", {"--executor", "interp"}},
      {"vm_O3", {"--executor", "vm", "-O3"}}};
  return E;
}

/// The models generated into the cache rather than committed.
const std::vector<std::string> CachedModels = {"resnet18", "mobilenet_v2"};

fs::path modelCacheDir() {
  if (const char *D = std::getenv("RIVET_MODEL_CACHE"); D && *D)
    return D;
  if (const char *H = std::getenv("HOME"); H && *H)
    return fs::path(H) / ".cache" / "rivet" / "models";
  return {};
}

std::set<std::string> npyFiles(const fs::path &Dir) {
  std::set<std::string> S;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(Dir, EC))
    if (E.path().extension() == ".npy")
      S.insert(E.path().filename().string());
  return S;
}

std::vector<std::string> dataSets(const fs::path &ModelDir) {
  std::vector<std::string> R;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(ModelDir, EC))
    if (E.is_directory() &&
        E.path().filename().string().rfind("test_data_set_", 0) == 0)
      R.push_back(E.path().filename().string());
  std::sort(R.begin(), R.end());
  return R;
}

std::vector<std::string> committedModels() {
  std::vector<std::string> R;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(CommittedDir, EC))
    if (E.is_directory() && fs::exists(E.path() / "model.onnx"))
      R.push_back(E.path().filename().string());
  std::sort(R.begin(), R.end());
  return R;
}

/// One test: a model's data set on one executor. An empty dataSet is a
/// cached model that is not in the cache: the test is skipped.
struct Case {
  std::string model;
  fs::path dir;
  std::string dataSet;
  Executor executor;
};

std::vector<Case> allCases() {
  std::vector<Case> R;
  auto Add = [&](const std::string &Model, const fs::path &Dir) {
    std::vector<std::string> Sets = fs::exists(Dir / "model.onnx")
                                        ? dataSets(Dir)
                                        : std::vector<std::string>{""};
    for (const Executor &E : executors())
      for (const std::string &S : Sets)
        R.push_back({Model, Dir, S, E});
  };
  for (const std::string &M : committedModels())
    Add(M, CommittedDir / M);
  for (const std::string &M : CachedModels)
    Add(M, modelCacheDir() / M);
  return R;
}

/// The largest |Got - Want| and whether every element is within tolerance.
struct Comparison {
  double maxAbsError = 0;
  bool close = true;
  std::string problem; // set when shapes or dtypes differ
};

Comparison compare(const Tensor &Got, const Tensor &Want) {
  Comparison C;
  if (Got.dtype() != Want.dtype() || Got.shape() != Want.shape()) {
    C.close = false;
    C.problem = "got " + Got.typeString() + ", expected " + Want.typeString();
    return C;
  }
  std::vector<double> G = Got.toDoubleVector(), W = Want.toDoubleVector();
  bool IsFloat = Want.dtype() == DType::Float32 ||
                 Want.dtype() == DType::Float64 ||
                 Want.dtype() == DType::Float16;
  for (size_t I = 0; I < W.size(); ++I) {
    if (std::isnan(W[I]) && std::isnan(G[I]))
      continue;
    double Err = std::fabs(G[I] - W[I]);
    if (std::isnan(Err)) {
      C.close = false;
      C.maxAbsError = INFINITY;
      continue;
    }
    C.maxAbsError = std::max(C.maxAbsError, Err);
    if (IsFloat ? Err > Atol + Rtol * std::fabs(W[I]) : Err != 0)
      C.close = false;
  }
  return C;
}

fs::path freshTempDir(const std::string &Name) {
  fs::path D = fs::temp_directory_path() /
               ("rivet_models_" + Name + "_" + std::to_string(getpid()));
  fs::remove_all(D);
  fs::create_directories(D);
  return D;
}

class Model : public ::testing::TestWithParam<Case> {};

TEST_P(Model, MatchesPyTorch) {
  const Case &C = GetParam();
  if (C.dataSet.empty())
    GTEST_SKIP() << C.model << " is not in the model cache (" << C.dir
                 << "); generate it with: /usr/bin/python3 "
                    "tools/models/export_all.py --large-only";
  fs::path Set = C.dir / C.dataSet;
  fs::path Out =
      freshTempDir(C.model + "_" + C.dataSet + "_" + C.executor.name);
  std::vector<std::string> Args = {"run", (C.dir / "model.onnx").string(),
                                   "--output-dir", Out.string()};
  Args.insert(Args.end(), C.executor.args.begin(), C.executor.args.end());
  std::set<std::string> Inputs = npyFiles(Set / "inputs");
  ASSERT_FALSE(Inputs.empty()) << "no inputs in " << Set;
  for (const std::string &In : Inputs)
    Args.push_back("--input=" + fs::path(In).stem().string() + "=" +
                   (Set / "inputs" / In).string());

  RunResult R = runRivet(Args);
  ASSERT_EQ(R.signal, 0) << "rivet died of signal " << R.signal << "\n"
                         << R.output;
  ASSERT_EQ(R.exitCode, 0) << R.output;

  std::set<std::string> Expected = npyFiles(Set / "expected");
  ASSERT_FALSE(Expected.empty()) << "no expected outputs in " << Set;
  EXPECT_EQ(npyFiles(Out), Expected) << R.output;
  double MaxErr = 0;
  for (const std::string &F : Expected) {
    if (!fs::exists(Out / F))
      continue;
    Tensor Want = readNpy((Set / "expected" / F).string());
    Tensor Got = readNpy((Out / F).string());
    Comparison Cmp = compare(Got, Want);
    MaxErr = std::max(MaxErr, Cmp.maxAbsError);
    EXPECT_TRUE(Cmp.problem.empty()) << F << ": " << Cmp.problem;
    EXPECT_TRUE(Cmp.close) << F << ": max abs error " << Cmp.maxAbsError
                           << " exceeds rtol " << Rtol << " / atol " << Atol;
  }
  std::printf("[ models   ] %s/%s (%s): max abs error %.3g\n", C.model.c_str(),
              C.dataSet.c_str(), C.executor.name.c_str(), MaxErr);
  RecordProperty("max_abs_error", std::to_string(MaxErr));
  if (!HasFailure())
    fs::remove_all(Out);
}

INSTANTIATE_TEST_SUITE_P(Models, Model, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case> &I) {
                           std::string S =
                               I.param.model + "_" +
                               (I.param.dataSet.empty() ? std::string("cached")
                                                        : I.param.dataSet) +
                               "_" + I.param.executor.name;
                           for (char &Ch : S)
                             if (!isalnum((unsigned char)Ch))
                               Ch = '_';
                           return S;
                         });

// The committed models are the ones tools/models/export_all.py --small-only
// writes, each with several data sets and small enough to commit.
TEST(Models, CommittedSet) {
  std::vector<std::string> Names = committedModels();
  for (const char *Want : {"branch", "lstm", "rnn_loop", "transformer"})
    EXPECT_NE(std::find(Names.begin(), Names.end(), Want), Names.end())
        << "tests/models/" << Want << " is missing";
  for (const std::string &N : Names) {
    fs::path D = CommittedDir / N;
    EXPECT_LT(fs::file_size(D / "model.onnx"), 1u << 20) << N;
    EXPECT_TRUE(fs::exists(D / "meta.json")) << N;
    EXPECT_GE(dataSets(D).size(), 2u) << N;
  }
}

// The comparison itself must be able to fail.
TEST(Models, ComparisonDetectsMismatch) {
  Tensor A = Tensor::fromVector<float>({1.0f, 2.0f, 3.0f}, {3});
  Tensor B = Tensor::fromVector<float>({1.0f, 2.0f, 3.001f}, {3});
  Tensor C = Tensor::fromVector<float>({1.0f, 2.0f, 3.00002f}, {3});
  EXPECT_FALSE(compare(B, A).close);
  EXPECT_NEAR(compare(B, A).maxAbsError, 0.001, 1e-6);
  EXPECT_TRUE(compare(C, A).close);
  EXPECT_FALSE(compare(A.reshape({1, 3}), A).problem.empty());
  Tensor I = Tensor::fromVector<int64_t>({1, 2}, {2});
  Tensor J = Tensor::fromVector<int64_t>({1, 3}, {2});
  EXPECT_FALSE(compare(J, I).close);
}

} // namespace
