//===- run_programs_test.cc - Programs run through the rivet CLI ----------===//
//
// Every directory tests/programs/<name>/ with program.rvir, inputs/<param>.npy
// and expected/output_*.npy (computed with NumPy by tools/gen_program_data.py)
// is one test: `rivet run` must produce exactly the expected files, each
// allClose (rtol 1e-4, atol 1e-5). The second half checks the CLI's errors:
// each bad invocation exits 1 (or 2 for usage) with a clear message and never
// dies of a signal.
//
//===----------------------------------------------------------------------===//
#include "kernels/Npy.h"
#include "kernels/Tensor.h"
#include "support/RunRivet.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace rivet::testing;
using namespace rivet;

namespace {

const fs::path ProgramsDir = RIVET_SOURCE_DIR "/tests/programs";

std::vector<std::string> programNames() {
  std::vector<std::string> Names;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(ProgramsDir, EC))
    if (E.is_directory() && fs::exists(E.path() / "program.rvir"))
      Names.push_back(E.path().filename().string());
  std::sort(Names.begin(), Names.end());
  return Names;
}

std::set<std::string> npyFiles(const fs::path &Dir) {
  std::set<std::string> S;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(Dir, EC))
    if (E.path().extension() == ".npy")
      S.insert(E.path().filename().string());
  return S;
}

class Program : public ::testing::TestWithParam<std::string> {};

TEST_P(Program, MatchesNumPy) {
  const std::string Name = GetParam();
  fs::path Dir = ProgramsDir / Name;
  fs::path Out = freshTempDir("programs", Name);
  std::vector<std::string> Args = {"run", (Dir / "program.rvir").string(),
                                   "--output-dir", Out.string()};
  for (const std::string &In : npyFiles(Dir / "inputs"))
    Args.push_back("--input=" + fs::path(In).stem().string() + "=" +
                   (Dir / "inputs" / In).string());
  RunResult R = runRivet(Args);
  ASSERT_EQ(R.signal, 0) << "rivet died of signal " << R.signal << "\n"
                         << R.output;
  ASSERT_EQ(R.exitCode, 0) << R.output;

  std::set<std::string> Expected = npyFiles(Dir / "expected");
  ASSERT_FALSE(Expected.empty()) << "no expected outputs for " << Name;
  std::set<std::string> Actual = npyFiles(Out);
  EXPECT_EQ(Actual, Expected) << R.output;
  for (const std::string &F : Expected) {
    if (!Actual.count(F))
      continue;
    Tensor Want = readNpy((Dir / "expected" / F).string());
    Tensor Got = readNpy((Out / F).string());
    EXPECT_TRUE(allClose(Got, Want, 1e-4, 1e-5))
        << Name << "/" << F << ": got " << Got.typeString() << ", expected "
        << Want.typeString();
    // Every written output is announced on stdout.
    EXPECT_NE(R.output.find(fs::path(F).stem().string() + ": "),
              std::string::npos)
        << R.output;
  }
  fs::remove_all(Out);
}

INSTANTIATE_TEST_SUITE_P(Programs, Program, ::testing::ValuesIn(programNames()),
                         [](const ::testing::TestParamInfo<std::string> &I) {
                           std::string S = I.param;
                           for (char &C : S)
                             if (!isalnum((unsigned char)C))
                               C = '_';
                           return S;
                         });

TEST(Programs, AtLeastFifteen) { EXPECT_GE(programNames().size(), 15u); }

// CLI error handling.
class CliErrors : public ::testing::Test {
protected:
  void SetUp() override {
    Dir = freshTempDir(
        "programs",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { fs::remove_all(Dir); }
  std::string write(const std::string &Name, const std::string &Text) {
    fs::path P = Dir / Name;
    std::ofstream(P, std::ios::binary) << Text;
    return P.string();
  }
  std::string npy(const std::string &Name, const Tensor &T) {
    fs::path P = Dir / Name;
    writeNpy(P.string(), T);
    return P.string();
  }
  /// Runs rivet and checks the exit code and a message substring.
  void expectError(const std::vector<std::string> &Args, int Code,
                   const std::string &Substring) {
    RunResult R = runRivet(Args);
    EXPECT_EQ(R.signal, 0) << "died of signal " << R.signal << ": " << R.output;
    EXPECT_EQ(R.exitCode, Code) << R.output;
    if (Code == 1) {
      EXPECT_NE(R.output.find("error: "), std::string::npos) << R.output;
    }
    EXPECT_NE(R.output.find(Substring), std::string::npos)
        << "expected '" << Substring << "' in:\n"
        << R.output;
  }
  std::string simpleProgram() {
    return write("simple.rvir",
                 "def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), "
                 "float32] {\n  relu(%x)\n}\n");
  }
  fs::path Dir;
};

TEST_F(CliErrors, MalformedText) {
  std::string P =
      write("bad.rvir", "def @main(%x: Tensor[(2, 3), float32] {\n");
  expectError({"run", P}, 1, "bad.rvir:");
}

TEST_F(CliErrors, TypeError) {
  std::string P = write(
      "typeerr.rvir",
      "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), int64]) -> "
      "Tensor[(2, 3), float32] {\n  add(%x, %y)\n}\n");
  expectError({"run", P, "--random-inputs"}, 1, "add");
}

TEST_F(CliErrors, MissingInput) {
  expectError({"run", simpleProgram()}, 1,
              "missing input 'x' of type Tensor[(2, 3), float32]");
}

TEST_F(CliErrors, WronglyShapedInput) {
  std::string In = npy("x.npy", Tensor::zeros({3, 2}, DType::Float32));
  expectError({"run", simpleProgram(), "--input", "x=" + In}, 1,
              "input 'x': expected Tensor[(2, 3), float32], got Tensor[(3, 2), "
              "float32]");
}

TEST_F(CliErrors, WrongDtypeInput) {
  std::string In = npy("x.npy", Tensor::zeros({2, 3}, DType::Int64));
  expectError({"run", simpleProgram(), "--input", "x=" + In}, 1, "dtype int64");
}

TEST_F(CliErrors, UnknownInputName) {
  std::string In = npy("x.npy", Tensor::zeros({2, 3}, DType::Float32));
  expectError(
      {"run", simpleProgram(), "--input", "x=" + In, "--input", "zz=" + In}, 1,
      "unknown input 'zz'");
}

TEST_F(CliErrors, GarbageNpy) {
  std::string In = write("garbage.npy", "\x93NUMPY this is not a header");
  expectError({"run", simpleProgram(), "--input", "x=" + In}, 1, "garbage.npy");
}

TEST_F(CliErrors, UnreadableNpy) {
  std::string In = (Dir / "does_not_exist.npy").string();
  expectError({"run", simpleProgram(), "--input", "x=" + In}, 1,
              "does_not_exist.npy");
}

TEST_F(CliErrors, MissingProgramFile) {
  expectError({"run", (Dir / "nope.rvir").string()}, 1, "nope.rvir");
}

TEST_F(CliErrors, DynamicDimNeedsShapeForRandomInputs) {
  std::string P =
      write("dyn.rvir", "def @main(%x: Tensor[(n, 3), float32]) -> Tensor[(n, "
                        "3), float32] {\n  relu(%x)\n}\n");
  expectError({"run", P, "--random-inputs"}, 1, "--shape x=");
  fs::path Out = Dir / "out";
  RunResult R = runRivet({"run", P, "--random-inputs", "--seed", "7", "--shape",
                          "x=5x3", "--output-dir", Out.string()});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_NE(R.output.find("output_0: Tensor[(5, 3), float32] -> "),
            std::string::npos)
      << R.output;
  Tensor T = readNpy((Out / "output_0.npy").string());
  EXPECT_EQ(T.shape(), (Shape{5, 3}));
  // A contradicting --shape is an error.
  expectError({"run", P, "--random-inputs", "--shape", "x=5x4"}, 1,
              "input 'x'");
}

TEST_F(CliErrors, RuntimeErrorInProgram) {
  std::string P =
      write("nth.rvir", "def @main(%i: Tensor[(), int64]) -> Tensor[(), int64] "
                        "{\n  @nth(Cons(1i64, Nil), %i)\n}\n");
  std::string In = npy("i.npy", Tensor::scalar<int64_t>(3));
  expectError({"run", P, "--input", "i=" + In}, 1, "no clause matched");
}

TEST_F(CliErrors, UsageErrorsExitTwo) {
  expectError({"run"}, 2, "missing PROGRAM");
  expectError({"frobnicate"}, 2, "unknown command 'frobnicate'");
  expectError({"run", simpleProgram(), "--bogus"}, 2,
              "unknown option '--bogus'");
  expectError({"run", simpleProgram(), "--input", "novalue"}, 2, "NAME=VALUE");
  expectError({"run", simpleProgram(), "--executor", "jit"}, 2,
              "unknown executor 'jit'");
  expectError({"run", simpleProgram(), "--random-inputs", "--seed", "x1"}, 2,
              "--seed");
}

TEST_F(CliErrors, HelpAndDump) {
  RunResult H = runRivet({"--help"});
  EXPECT_EQ(H.exitCode, 0);
  EXPECT_NE(H.output.find("run PROGRAM.rvir"), std::string::npos) << H.output;
  RunResult D = runRivet({"dump", simpleProgram(), "--ir"});
  EXPECT_EQ(D.exitCode, 0) << D.output;
  EXPECT_NE(D.output.find("def @main"), std::string::npos) << D.output;
  EXPECT_NE(D.output.find("relu"), std::string::npos) << D.output;
}

} // namespace

// Issue 23, reproducer 7: an input that is not a regular file (a device, a
// FIFO, a directory) is refused before it is read; a FIFO must not block.
TEST_F(CliErrors, InputsThatAreNotRegularFiles) {
  std::string Fifo = (Dir / "fifo").string();
  ASSERT_EQ(::mkfifo(Fifo.c_str(), 0600), 0);
  expectError({"run", simpleProgram(), "--input", "x=/dev/zero"}, 1,
              "/dev/zero: not a regular file (a character device)");
  expectError({"run", simpleProgram(), "--input", "x=" + Fifo}, 1,
              "not a regular file (a FIFO)");
  expectError({"dump", "/dev/zero", "--ir"}, 1, "not a regular file");
  expectError({"run", Fifo}, 1, "not a regular file (a FIFO)");
  expectError({"run", Dir.string() + ".rvx"}, 1, "cannot open");
  std::string Rvx = (Dir / "m.rvx").string();
  RunResult C = runRivet({"compile", simpleProgram(), "-o", Rvx});
  ASSERT_EQ(C.exitCode, 0) << C.output;
  expectError({"run", Rvx, "--input", "x=" + Fifo}, 1, "a FIFO");
  expectError({"run", Dir.string()}, 1, "not a regular file (a directory)");
}

// Issue 23, reproducer 8: compile -o never replaces a device, FIFO or
// directory, nor the input program; run writes all outputs or none.
TEST_F(CliErrors, OutputTargetsAreCheckedAndWrittenWhole) {
  std::string Prog = simpleProgram();
  std::string Fifo = (Dir / "fifo").string();
  ASSERT_EQ(::mkfifo(Fifo.c_str(), 0600), 0);
  expectError({"compile", Prog, "-o", Fifo}, 1,
              "exists and is not a regular file; refusing to replace it");
  struct stat St;
  ASSERT_EQ(::stat(Fifo.c_str(), &St), 0);
  EXPECT_TRUE(S_ISFIFO(St.st_mode)) << "the FIFO was replaced";
  expectError({"compile", Prog, "-o", Dir.string()}, 1, "not a regular file");
  expectError({"compile", Prog, "-o", Prog}, 1,
              "is the input program itself; refusing to overwrite it");
  std::ifstream In(Prog);
  std::string Text((std::istreambuf_iterator<char>(In)),
                   std::istreambuf_iterator<char>());
  EXPECT_NE(Text.find("relu(%x)"), std::string::npos) << "the input changed";

  // Two outputs; the second's target is a directory: neither is written.
  std::string Two = write("two.rvir", "def @main(%x: Tensor[(2,), float32]) {\n"
                                      "  (relu(%x), negative(%x))\n}\n");
  fs::path Out = Dir / "out";
  fs::create_directories(Out / "output_1.npy");
  expectError({"run", Two, "--random-inputs", "--output-dir", Out.string()}, 1,
              "output_1.npy: exists and is not a regular file");
  EXPECT_FALSE(fs::exists(Out / "output_0.npy"));
  for (const auto &E : fs::directory_iterator(Out))
    EXPECT_EQ(E.path().filename().string().find(".tmp"), std::string::npos)
        << "a temporary file was left behind: " << E.path();
  fs::remove(Out / "output_1.npy");
  RunResult R =
      runRivet({"run", Two, "--random-inputs", "--output-dir", Out.string()});
  EXPECT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(fs::exists(Out / "output_0.npy"));
  EXPECT_TRUE(fs::exists(Out / "output_1.npy"));
}

// Issue 23, item 7: a .rvx under another name is recognized by its magic;
// check --expected with a folder that does not exist is an error.
TEST_F(CliErrors, ExecutablesWithoutTheirExtensionAndMissingExpectedDirs) {
  std::string Rvx = (Dir / "model.rvx").string();
  ASSERT_EQ(runRivet({"compile", simpleProgram(), "-o", Rvx}).exitCode, 0);
  std::string Plain = (Dir / "model").string();
  fs::copy_file(Rvx, Plain);
  std::string In = npy("x.npy", Tensor::zeros({2, 3}, DType::Float32));
  RunResult R = runRivet({"run", Plain, "--input", "x=" + In, "--output-dir",
                          (Dir / "out").string()});
  EXPECT_EQ(R.exitCode, 0) << R.output;
  expectError({"check", simpleProgram(), "--random-inputs", "--expected",
               (Dir / "missing").string()},
              1, "not a directory");
}
