//===- vm_cli_test.cc - rivet compile/run .rvx/check/bench/dump on the VM -===//
//
// The CLI's VM path, each step in its own process: `rivet compile` writes a
// .rvx that `rivet run` (a separate process, no compiler pipeline) runs to the
// same outputs as the reference interpreter on the model itself, for the
// committed models (every data set, of different sequence lengths, through
// one .rvx) and for a selection of .rvir programs; `check` verdicts and exit
// codes; `bench` JSON; `dump --bytecode`; and input errors on a .rvx that
// name the input.
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
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace rivet::testing;
using namespace rivet;

namespace {

const fs::path Source = RIVET_SOURCE_DIR;

/// "--input NAME=FILE" for every FILE.npy in Dir, NAME being its stem.
std::vector<std::string> inputArgs(const fs::path &Dir) {
  std::vector<fs::path> Files;
  for (const auto &E : fs::directory_iterator(Dir))
    if (E.path().extension() == ".npy")
      Files.push_back(E.path());
  std::sort(Files.begin(), Files.end());
  std::vector<std::string> Args;
  for (const fs::path &F : Files) {
    Args.push_back("--input");
    Args.push_back(F.stem().string() + "=" + F.string());
  }
  return Args;
}

std::vector<std::string> concat(std::vector<std::string> A,
                                const std::vector<std::string> &B) {
  A.insert(A.end(), B.begin(), B.end());
  return A;
}

/// The output_*.npy files of Dir by name.
std::map<std::string, Tensor> readOutputs(const fs::path &Dir) {
  std::map<std::string, Tensor> R;
  for (const auto &E : fs::directory_iterator(Dir))
    if (E.path().extension() == ".npy")
      R[E.path().filename().string()] = readNpy(E.path().string());
  return R;
}

void expectSameOutputs(const fs::path &VmDir, const fs::path &RefDir,
                       const std::string &What) {
  std::map<std::string, Tensor> Vm = readOutputs(VmDir),
                                Ref = readOutputs(RefDir);
  ASSERT_FALSE(Ref.empty()) << What;
  ASSERT_EQ(Vm.size(), Ref.size()) << What;
  for (const auto &[Name, T] : Ref) {
    ASSERT_TRUE(Vm.count(Name)) << What << ": the VM wrote no " << Name;
    EXPECT_EQ(Vm[Name].dtype(), T.dtype()) << What << " " << Name;
    EXPECT_EQ(Vm[Name].shape(), T.shape()) << What << " " << Name;
    EXPECT_TRUE(allClose(Vm[Name], T, 1e-4, 1e-5)) << What << " " << Name;
  }
}

class VmCli : public ::testing::Test {
protected:
  void SetUp() override { Dir = freshTempDir("vm_cli", currentTestName()); }
  void TearDown() override { fs::remove_all(Dir); }

  std::string npy(const std::string &Name, const Tensor &T) {
    std::string P = (Dir / (Name + ".npy")).string();
    writeNpy(P, T);
    return P;
  }

  /// Compiles Model to a .rvx, then runs every input set through that one
  /// .rvx and the model on the interpreter, and compares the outputs.
  void compileAndCompare(const fs::path &Model,
                         const std::vector<fs::path> &InputDirs,
                         const std::string &Opt = "-O3") {
    std::string Name = Model.parent_path().filename().string();
    fs::path Rvx = Dir / (Name + Opt + ".rvx");
    RunResult C =
        runRivet({"compile", Model.string(), "-o", Rvx.string(), Opt});
    ASSERT_EQ(C.exitCode, 0) << C.output;
    ASSERT_TRUE(fs::exists(Rvx));
    for (size_t I = 0; I < InputDirs.size(); ++I) {
      fs::path VmOut = Dir / fmt::format("{}{}_vm_{}", Name, Opt, I);
      fs::path RefOut = Dir / fmt::format("{}{}_ref_{}", Name, Opt, I);
      std::vector<std::string> In = inputArgs(InputDirs[I]);
      RunResult V = runRivet(
          concat({"run", Rvx.string(), "--output-dir", VmOut.string()}, In));
      ASSERT_EQ(V.exitCode, 0) << Name << " set " << I << ": " << V.output;
      RunResult R = runRivet(concat({"run", Model.string(), "--executor",
                                     "interp", "--output-dir", RefOut.string()},
                                    In));
      ASSERT_EQ(R.exitCode, 0) << R.output;
      expectSameOutputs(VmOut, RefOut,
                        fmt::format("{} {} set {}", Name, Opt, I));
      // The log names the ONNX outputs as run on the model does.
      if (Model.extension() == ".onnx") {
        EXPECT_TRUE(contains(V.output, "(ONNX output '")) << V.output;
      }
    }
  }

  fs::path Dir;
};

std::vector<fs::path> dataSetInputs(const fs::path &ModelDir) {
  std::vector<fs::path> R;
  for (const auto &E : fs::directory_iterator(ModelDir))
    if (E.is_directory() &&
        E.path().filename().string().rfind("test_data_set_", 0) == 0)
      R.push_back(E.path() / "inputs");
  std::sort(R.begin(), R.end());
  return R;
}

class CommittedModel : public VmCli,
                       public ::testing::WithParamInterface<const char *> {};

TEST_P(CommittedModel, CompiledRvxAgreesWithInterpreterOnEveryDataSet) {
  fs::path ModelDir = Source / "tests/models" / GetParam();
  std::vector<fs::path> Sets = dataSetInputs(ModelDir);
  ASSERT_GE(Sets.size(), 2u);
  compileAndCompare(ModelDir / "model.onnx", Sets);
}

TEST_P(CommittedModel, CompiledAtO0AgreesToo) {
  fs::path ModelDir = Source / "tests/models" / GetParam();
  std::vector<fs::path> Sets = dataSetInputs(ModelDir);
  Sets.resize(1);
  compileAndCompare(ModelDir / "model.onnx", Sets, "-O0");
}

INSTANTIATE_TEST_SUITE_P(Models, CommittedModel,
                         ::testing::Values("branch", "rnn_loop", "lstm",
                                           "transformer", "resblock"));

class Program : public VmCli,
                public ::testing::WithParamInterface<const char *> {};

TEST_P(Program, CompiledRvxAgreesWithInterpreter) {
  fs::path P = Source / "tests/programs" / GetParam();
  compileAndCompare(P / "program.rvir", {P / "inputs"});
}

INSTANTIATE_TEST_SUITE_P(Programs, Program,
                         ::testing::Values("factorial", "rnn_loop", "list_fold",
                                           "option_match", "split_concat_stack",
                                           "tree_adt", "growing_accumulator",
                                           "map_closure", "tuples"));

TEST_F(VmCli, RunModelDirectlyOnTheVmMatchesCompiledRvx) {
  // run MODEL.onnx (VM, default) == run OUT.rvx in another process.
  fs::path ModelDir = Source / "tests/models/rnn_loop";
  std::vector<std::string> In = inputArgs(ModelDir / "test_data_set_1/inputs");
  fs::path Rvx = Dir / "m.rvx";
  ASSERT_EQ(runRivet({"compile", (ModelDir / "model.onnx").string(), "-o",
                      Rvx.string()})
                .exitCode,
            0);
  RunResult A = runRivet(concat({"run", (ModelDir / "model.onnx").string(),
                                 "--output-dir", (Dir / "a").string()},
                                In));
  ASSERT_EQ(A.exitCode, 0) << A.output;
  RunResult B = runRivet(
      concat({"run", Rvx.string(), "--output-dir", (Dir / "b").string()}, In));
  ASSERT_EQ(B.exitCode, 0) << B.output;
  expectSameOutputs(Dir / "b", Dir / "a", "rnn_loop direct vs .rvx");
  // The expected outputs (PyTorch's) agree as well.
  expectSameOutputs(Dir / "b", ModelDir / "test_data_set_1/expected",
                    "rnn_loop .rvx vs PyTorch");
}

// compile --input-shape: the branch model (x: batch x 4) for its test
// input's shape runs it as the dynamic executable does (PyTorch's
// outputs), has no shape functions, and rejects another shape naming the
// input; a shape that contradicts the model or names no input is an error.
TEST_F(VmCli, CompileForOneInputShape) {
  fs::path ModelDir = Source / "tests/models/branch";
  std::string Model = (ModelDir / "model.onnx").string();
  std::vector<std::string> In = inputArgs(ModelDir / "test_data_set_2/inputs");
  fs::path Rvx = Dir / "static.rvx";
  RunResult C = runRivet(
      {"compile", Model, "-o", Rvx.string(), "--input-shape", "x=5x4"});
  ASSERT_EQ(C.exitCode, 0) << C.output;
  RunResult D = runRivet({"dump", Rvx.string(), "--bytecode"});
  ASSERT_EQ(D.exitCode, 0) << D.output;
  EXPECT_FALSE(contains(D.output, "shape_fn")) << D.output;
  RunResult R = runRivet(
      concat({"run", Rvx.string(), "--output-dir", (Dir / "s").string()}, In));
  ASSERT_EQ(R.exitCode, 0) << R.output;
  expectSameOutputs(Dir / "s", ModelDir / "test_data_set_2/expected",
                    "branch compiled for its input's shape vs PyTorch");
  RunResult Other =
      runRivet({"run", Rvx.string(), "--random-inputs", "--shape", "x=3x4"});
  EXPECT_EQ(Other.exitCode, 1) << Other.output;
  EXPECT_TRUE(contains(Other.output, "input 'x'")) << Other.output;
  for (const char *Bad : {"x=5x3", "y=5x4", "x=5"}) {
    RunResult E = runRivet({"compile", Model, "-o", (Dir / "bad.rvx").string(),
                            "--input-shape", Bad});
    EXPECT_EQ(E.exitCode, 1) << Bad << ": " << E.output;
    EXPECT_TRUE(contains(E.output, "input shape for")) << E.output;
  }
  RunResult Twice =
      runRivet({"compile", Model, "-o", (Dir / "t.rvx").string(),
                "--input-shape", "x=5x4", "--input-shape", "x=5x4"});
  EXPECT_EQ(Twice.exitCode, 2) << Twice.output;
}

TEST_F(VmCli, CheckPassesAndFailsWithExitCodes) {
  fs::path ModelDir = Source / "tests/models/lstm";
  fs::path Set = ModelDir / "test_data_set_2";
  std::vector<std::string> In = inputArgs(Set / "inputs");
  RunResult R =
      runRivet(concat({"check", (ModelDir / "model.onnx").string()}, In));
  EXPECT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "max abs")) << R.output;
  EXPECT_TRUE(contains(R.output, "max rel")) << R.output;
  EXPECT_TRUE(contains(R.output, "output_2 ('c_n')")) << R.output;
  EXPECT_FALSE(contains(R.output, "FAIL")) << R.output;
  // Against PyTorch's outputs: within 1e-4.
  R = runRivet(concat({"check", (ModelDir / "model.onnx").string(),
                       "--expected", (Set / "expected").string()},
                      In));
  EXPECT_EQ(R.exitCode, 0) << R.output;
  // Against wrong expected outputs: FAIL, exit 1.
  fs::path Wrong = Dir / "wrong";
  fs::create_directories(Wrong);
  for (const auto &E : fs::directory_iterator(Set / "expected")) {
    Tensor T = readNpy(E.path().string());
    Tensor U = T.clone();
    U.data<float>()[0] += 0.5f;
    writeNpy((Wrong / E.path().filename()).string(), U);
  }
  R = runRivet(concat({"check", (ModelDir / "model.onnx").string(),
                       "--expected", Wrong.string()},
                      In));
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "FAIL")) << R.output;
  EXPECT_FALSE(contains(R.output, "error:")) << R.output;
  // Random inputs need a --shape for the dynamic sequence length...
  std::string Transformer =
      (Source / "tests/models/transformer/model.onnx").string();
  R = runRivet({"check", Transformer, "--random-inputs"});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "--shape src=")) << R.output;
  R = runRivet({"check", Transformer, "--random-inputs", "--seed", "4",
                "--shape", "src=5x2x16"});
  EXPECT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "PASS")) << R.output;
  // A .rvx cannot be checked: there is no reference.
  fs::path Rvx = Dir / "l.rvx";
  ASSERT_EQ(runRivet({"compile", (ModelDir / "model.onnx").string(), "-o",
                      Rvx.string()})
                .exitCode,
            0);
  R = runRivet({"check", Rvx.string(), "--random-inputs"});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "error: ")) << R.output;
  // Bad tolerance: a usage error.
  R = runRivet({"check", (ModelDir / "model.onnx").string(), "--rtol", "x"});
  EXPECT_EQ(R.exitCode, 2) << R.output;
}

TEST_F(VmCli, CheckOnPrograms) {
  for (const char *Name : {"factorial", "list_fold", "tree_adt"}) {
    fs::path P = Source / "tests/programs" / Name;
    RunResult R = runRivet(concat({"check", (P / "program.rvir").string(),
                                   "--rtol", "1e-6", "--atol", "1e-7"},
                                  inputArgs(P / "inputs")));
    EXPECT_EQ(R.exitCode, 0) << Name << ": " << R.output;
    EXPECT_TRUE(contains(R.output, "PASS")) << R.output;
  }
}

/// The value of "Key": number in a flat JSON object, or NaN.
double jsonNumber(const std::string &J, const std::string &Key) {
  std::smatch M;
  std::regex Re("\"" + Key + "\": (-?[0-9.eE+-]+)");
  if (!std::regex_search(J, M, Re))
    return std::nan("");
  return std::stod(M[1]);
}

TEST_F(VmCli, MaxCallDepthIsOneSettingForBothExecutors) {
  // @down(n) needs n + 1 frames (@main's tail call replaces its own).
  fs::path Prog = Dir / "down.rvir";
  {
    std::ofstream Out(Prog);
    Out << "def @down(%n: Tensor[(), int64]) {\n"
           "  if (equal(%n, 0i64)) { 0i64 } else { add(@down(subtract(%n, "
           "1i64)), 1i64) }\n"
           "}\n"
           "def @main(%n: Tensor[(), int64]) { @down(%n) }\n";
  }
  auto Run = [&](const std::string &Exec, int64_t N,
                 std::vector<std::string> Extra) {
    std::vector<std::string> Args = {
        "run",          Prog.string(),
        "--executor",   Exec,
        "--input",      "n=" + npy("n", Tensor::scalar<int64_t>(N)),
        "--output-dir", (Dir / "out").string()};
    return runRivet(concat(Args, Extra));
  };
  for (const char *Exec : {"interp", "vm"}) {
    SCOPED_TRACE(Exec);
    RunResult R = Run(Exec, 39, {"--max-call-depth", "40"});
    EXPECT_EQ(R.exitCode, 0) << R.output;
    R = Run(Exec, 40, {"--max-call-depth=40"});
    EXPECT_EQ(R.exitCode, 1) << R.output;
    EXPECT_TRUE(contains(R.output, "call stack overflow: more than 40 nested "
                                   "calls (only calls in tail position run "
                                   "in constant memory)"))
        << R.output;
    // The default, the same on both.
    R = Run(Exec, 99999, {});
    EXPECT_EQ(R.exitCode, 0) << R.output;
    R = Run(Exec, 100000, {});
    EXPECT_EQ(R.exitCode, 1) << R.output;
    EXPECT_TRUE(contains(R.output, "more than 100000 nested calls"))
        << R.output;
  }
  RunResult R = Run("vm", 1, {"--max-call-depth", "0"});
  EXPECT_EQ(R.exitCode, 2) << R.output;
  EXPECT_TRUE(contains(R.output, "'--max-call-depth' expects a positive"))
      << R.output;
  // check runs both executors under the limit.
  R = runRivet({"check", Prog.string(), "--input",
                "n=" + npy("n", Tensor::scalar<int64_t>(40)),
                "--max-call-depth", "40"});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "more than 40 nested calls")) << R.output;
}

TEST_F(VmCli, BenchPrintsJson) {
  for (const char *Executor : {"vm", "interp"}) {
    RunResult R = runRivet(
        {"bench", (Source / "tests/models/rnn_loop/model.onnx").string(),
         "--shape", "xs=4x2x4", "--shape", "h0=2x8", "--warmup", "1",
         "--repeat", "5", "--min-time", "0.05", "--executor", Executor},
        /*WithStderr=*/false);
    ASSERT_EQ(R.exitCode, 0) << R.output;
    std::string J = R.output;
    ASSERT_FALSE(J.empty());
    EXPECT_EQ(J.front(), '{') << J;
    EXPECT_EQ(J[J.find_last_not_of("\n")], '}') << J;
    EXPECT_EQ(std::count(J.begin(), J.end(), '{'), 1) << J; // one object
    for (const char *Key : {"median_ms", "min_ms", "max_ms", "mean_ms",
                            "repeat", "threads", "concurrency"})
      EXPECT_FALSE(std::isnan(jsonNumber(J, Key))) << Key << " in " << J;
    EXPECT_TRUE(contains(J, std::string("\"executor\": \"") + Executor + "\""))
        << J;
    EXPECT_GE(jsonNumber(J, "repeat"), 5);
    EXPECT_LE(jsonNumber(J, "min_ms"), jsonNumber(J, "median_ms"));
    EXPECT_LE(jsonNumber(J, "median_ms"), jsonNumber(J, "max_ms"));
    EXPECT_GE(jsonNumber(J, "threads"), 1);
    EXPECT_EQ(jsonNumber(J, "concurrency"), 1);
  }
  // Two engines on two threads share one executable.
  fs::path Rvx = Dir / "b.rvx";
  ASSERT_EQ(
      runRivet({"compile",
                (Source / "tests/programs/factorial/program.rvir").string(),
                "-o", Rvx.string()})
          .exitCode,
      0);
  RunResult R = runRivet(
      {"bench", Rvx.string(), "--input",
       "n=" + (Source / "tests/programs/factorial/inputs/n.npy").string(),
       "--concurrency", "2", "--threads", "1", "--repeat", "20", "--min-time",
       "0"},
      /*WithStderr=*/false);
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_EQ(jsonNumber(R.output, "concurrency"), 2) << R.output;
  EXPECT_EQ(jsonNumber(R.output, "threads"), 1) << R.output;
  EXPECT_GE(jsonNumber(R.output, "repeat"), 40) << R.output;
}

// --serve keeps one warmed-up engine and times one batch per line of stdin
// (a driver interleaves other engines' batches between them).
TEST_F(VmCli, BenchServeTimesOneBatchPerLine) {
  std::vector<std::string> Args = {
      "bench",      (Source / "tests/models/rnn_loop/model.onnx").string(),
      "--shape",    "xs=4x2x4",
      "--shape",    "h0=2x8",
      "--warmup",   "1",
      "--repeat",   "3",
      "--min-time", "0",
      "--serve"};
  std::string Three = "go\ngo\ngo\n";
  RunResult R = runRivet(Args, /*WithStderr=*/false, &Three);
  ASSERT_EQ(R.exitCode, 0) << R.output;
  std::vector<std::string> Lines;
  for (size_t Pos = 0, End;
       (End = R.output.find('\n', Pos)) != std::string::npos; Pos = End + 1)
    Lines.push_back(R.output.substr(Pos, End - Pos));
  ASSERT_EQ(Lines.size(), 3u) << R.output;
  for (size_t I = 0; I < Lines.size(); ++I) {
    EXPECT_EQ(jsonNumber(Lines[I], "batch"), (double)I) << Lines[I];
    EXPECT_GE(jsonNumber(Lines[I], "repeat"), 3) << Lines[I];
    EXPECT_LE(jsonNumber(Lines[I], "min_ms"),
              jsonNumber(Lines[I], "median_ms"));
    EXPECT_LE(jsonNumber(Lines[I], "median_ms"),
              jsonNumber(Lines[I], "max_ms"));
  }
  // No input, no batch; and it times one engine only.
  std::string None;
  RunResult Empty = runRivet(Args, /*WithStderr=*/false, &None);
  EXPECT_EQ(Empty.exitCode, 0);
  EXPECT_EQ(Empty.output, "");
  Args.push_back("--profile");
  RunResult Refused = runRivet(Args, /*WithStderr=*/true, &Three);
  EXPECT_EQ(Refused.exitCode, 2) << Refused.output;
  EXPECT_TRUE(contains(Refused.output, "--serve")) << Refused.output;
}

// --profile adds each kernel instruction's time per run (the loop's body
// kernels run once per iteration) and a table on stderr.
TEST_F(VmCli, BenchProfileTimesKernels) {
  std::vector<std::string> Args = {
      "bench",      (Source / "tests/models/rnn_loop/model.onnx").string(),
      "--shape",    "xs=4x2x4",
      "--shape",    "h0=2x8",
      "--warmup",   "1",
      "--repeat",   "5",
      "--min-time", "0",
      "--profile"};
  RunResult R = runRivet(Args, /*WithStderr=*/false);
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "\"profile\": [{\"function\": ")) << R.output;
  EXPECT_TRUE(contains(R.output, "\"ms_per_run\": ")) << R.output;
  // Four loop iterations: some kernel runs four times per run.
  EXPECT_TRUE(contains(R.output, "\"calls_per_run\": 4.00")) << R.output;
  RunResult Table = runRivet(Args, /*WithStderr=*/true);
  EXPECT_TRUE(contains(Table.output, "ms/run")) << Table.output;
  EXPECT_TRUE(contains(Table.output, "kernel instructions")) << Table.output;
  Args.push_back("--executor");
  Args.push_back("interp");
  RunResult Interp = runRivet(Args, /*WithStderr=*/true);
  EXPECT_EQ(Interp.exitCode, 2) << Interp.output;
  EXPECT_TRUE(contains(Interp.output, "--profile")) << Interp.output;
}

TEST_F(VmCli, DumpBytecode) {
  fs::path Model = Source / "tests/models/rnn_loop/model.onnx";
  RunResult R = runRivet({"dump", Model.string(), "--bytecode"});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "InvokeKernel")) << R.output;
  EXPECT_TRUE(contains(R.output, "Ret")) << R.output;
  EXPECT_TRUE(contains(R.output, "main")) << R.output;
  // Tail calls become TailInvoke*: the loop runs in constant memory.
  EXPECT_TRUE(contains(R.output, "TailInvoke")) << R.output;
  // The same from the .rvx file; --ir is refused there.
  fs::path Rvx = Dir / "r.rvx";
  ASSERT_EQ(runRivet({"compile", Model.string(), "-o", Rvx.string()}).exitCode,
            0);
  RunResult F = runRivet({"dump", Rvx.string(), "--bytecode"});
  ASSERT_EQ(F.exitCode, 0) << F.output;
  // Every fused group of rnn_loop is generated but its gather by data
  // indices, which the builtin kernel range-checks (a generated kernel cannot
  // raise); the .rvx dump is the same less that note.
  const std::string Refused = "\nfused groups left to builtin kernels:\n";
  size_t RefusedAt = R.output.find(Refused);
  ASSERT_NE(RefusedAt, std::string::npos) << R.output;
  EXPECT_EQ(R.output.substr(RefusedAt + Refused.size()),
            "  group of take: take: indices from data (range checked at run "
            "time)\n");
  EXPECT_EQ(F.output + "\n", R.output.substr(0, RefusedAt + 1));
  // Compiled here, the dump also says why groups stayed builtin (the .rvx
  // does not record it): attention has no compute rule (a library kernel
  // computes it).
  RunResult T = runRivet(
      {"dump", (Source / "tests/models/transformer/model.onnx").string(),
       "--bytecode"});
  ASSERT_EQ(T.exitCode, 0) << T.output;
  size_t At = T.output.find(Refused);
  ASSERT_NE(At, std::string::npos) << T.output;
  EXPECT_TRUE(contains(T.output.substr(At), "group of attention: operator "
                                            "'attention' has no compute rule"))
      << T.output;
  RunResult I = runRivet({"dump", Rvx.string(), "--ir"});
  EXPECT_EQ(I.exitCode, 1) << I.output;
  EXPECT_TRUE(contains(I.output, "--bytecode")) << I.output;
  // The pool's peak after one run.
  RunResult Peak =
      runRivet({"dump", Model.string(), "--bytecode", "--peak-memory",
                "--random-inputs", "--shape", "xs=3x2x4", "--shape", "h0=2x8"});
  ASSERT_EQ(Peak.exitCode, 0) << Peak.output;
  std::smatch M;
  ASSERT_TRUE(std::regex_search(Peak.output, M,
                                std::regex("peak storage in use after one "
                                           "run: ([0-9]+) bytes")))
      << Peak.output;
  EXPECT_GT(std::stoll(M[1]), 0);
}

TEST_F(VmCli, WrongInputsOfAnRvxNameTheInput) {
  fs::path Rvx = Dir / "p.rvx";
  ASSERT_EQ(runRivet({"compile",
                      (Source / "tests/models/cli/passthrough.onnx").string(),
                      "-o", Rvx.string()})
                .exitCode,
            0);
  std::string Ids = npy("ids", Tensor::fromVector<int64_t>({1, 2}, {2}));
  // Dimension 1 of 'input.1' is 3.
  RunResult R =
      runRivet({"run", Rvx.string(), "--input",
                "input.1=" + npy("bad", Tensor::zeros({2, 4}, DType::Float32)),
                "--input", "ids:0=" + Ids, "--output-dir", Dir.string()});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "input 'input.1'")) << R.output;
  EXPECT_TRUE(contains(R.output, "dimension 1 is 4 instead of 3")) << R.output;
  // Wrong rank.
  R = runRivet({"run", Rvx.string(), "--input",
                "input.1=" + npy("r1", Tensor::zeros({3}, DType::Float32)),
                "--input", "ids:0=" + Ids});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "input 'input.1'")) << R.output;
  EXPECT_TRUE(contains(R.output, "rank 1 instead of 2")) << R.output;
  // Wrong dtype.
  R = runRivet({"run", Rvx.string(), "--input",
                "input.1=" + npy("x", Tensor::zeros({2, 3}, DType::Float32)),
                "--input",
                "ids:0=" + npy("ids32", Tensor::zeros({2}, DType::Int32))});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "input 'ids:0'")) << R.output;
  EXPECT_TRUE(contains(R.output, "dtype int32 instead of int64")) << R.output;
  // Missing and unknown inputs list the ONNX names.
  R = runRivet({"run", Rvx.string(), "--input", "ids:0=" + Ids});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "missing input 'input.1'")) << R.output;
  R = runRivet({"run", Rvx.string(), "--input", "nope=" + Ids});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "unknown input 'nope'")) << R.output;
  EXPECT_TRUE(contains(R.output, "input.1, ids:0")) << R.output;
  // A good run, with the ONNX output names.
  R = runRivet({"run", Rvx.string(), "--input",
                "input.1=" + npy("x", Tensor::zeros({5, 3}, DType::Float32)),
                "--input", "ids:0=" + Ids, "--output-dir",
                (Dir / "o").string()});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "output_0 (ONNX output 'ids:0')")) << R.output;
  EXPECT_EQ(readNpy((Dir / "o/output_1.npy").string()).shape(), (Shape{5, 3}));
  // The interpreter cannot run a .rvx.
  R = runRivet({"run", Rvx.string(), "--executor", "interp"});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "VM only")) << R.output;
}

TEST_F(VmCli, CompileErrors) {
  RunResult R = runRivet(
      {"compile", (Source / "tests/models/cli/unsupported.onnx").string(), "-o",
       (Dir / "u.rvx").string()});
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "FancyOp")) << R.output;
  EXPECT_FALSE(fs::exists(Dir / "u.rvx"));
  R = runRivet(
      {"compile", (Source / "tests/programs/factorial/program.rvir").string()});
  EXPECT_EQ(R.exitCode, 2) << R.output;
  R = runRivet({"compile",
                (Source / "tests/programs/factorial/program.rvir").string(),
                "-o", (Dir / "f.rvx").string(), "-O7"});
  EXPECT_EQ(R.exitCode, 2) << R.output;
  // A file that is not an executable.
  std::FILE *F = std::fopen((Dir / "junk.rvx").c_str(), "wb");
  ASSERT_NE(F, nullptr);
  std::fputs("definitely not an executable", F);
  std::fclose(F);
  R = runRivet({"run", (Dir / "junk.rvx").string()});
  EXPECT_EQ(R.signal, 0);
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "junk.rvx")) << R.output;
}

} // namespace
