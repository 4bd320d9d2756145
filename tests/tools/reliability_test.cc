//===- reliability_test.cc - The reproducers of hostile inputs ------------===//
//
// Issue 23: each file in tests/reliability/ once crashed, hung, blew up or
// made the compiled path disagree with the reference. Each must now give a
// clean error (exit 1, "error: ...") or the reference's answer on every
// executor, under a memory limit so that a blow-up fails the test instead
// of the machine.
//
//===----------------------------------------------------------------------===//
#include "support/RunRivet.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace rivet::testing;
namespace fs = std::filesystem;

namespace {

const std::string Dir = RIVET_SOURCE_DIR "/tests/reliability/";
constexpr long kMemoryLimitKB = 2000000; // address space, not resident

fs::path scratch(const std::string &Name) {
  fs::path P = fs::temp_directory_path() /
               ("rivet_reliability_" + Name + "_" + std::to_string(getpid()));
  fs::create_directories(P);
  return P;
}

/// The executors a model runs on: the interpreter, the VM with and without
/// generated code, at the lowest and highest opt levels.
const std::vector<std::vector<std::string>> Executors = {
    {"--executor", "interp"},
    {"-O0"},
    {"-O3"},
    {"-O3", "--codegen", "off"},
};

/// Runs `rivet run Model Args` on every executor; each must fail cleanly
/// with Message in its output.
void expectErrorEverywhere(const std::string &Model,
                           const std::vector<std::string> &Args,
                           const std::string &Message,
                           long MemoryLimitKB = kMemoryLimitKB) {
  for (const std::vector<std::string> &E : Executors) {
    std::vector<std::string> Cmd = {"run", Dir + Model};
    Cmd.insert(Cmd.end(), Args.begin(), Args.end());
    Cmd.insert(Cmd.end(), E.begin(), E.end());
    Cmd.push_back("--output-dir");
    Cmd.push_back(scratch("out").string());
    RunResult R = runRivet(Cmd, true, nullptr, MemoryLimitKB);
    std::string Line = Model + " " + (E.empty() ? "" : E[0]);
    EXPECT_EQ(R.signal, 0) << Line << ": " << R.output;
    EXPECT_EQ(R.exitCode, 1) << Line << ": " << R.output;
    EXPECT_TRUE(contains(R.output, "error: ")) << Line << ": " << R.output;
    EXPECT_TRUE(contains(R.output, Message))
        << Line << ": expected '" << Message << "' in: " << R.output;
  }
}

} // namespace

TEST(Reliability, OccursCheck) {
  expectErrorEverywhere("occurs_check.rvir",
                        {"--input", "x=" + Dir + "x23.npy"},
                        "a type would contain itself");
  expectErrorEverywhere(
      "nest_tuples_untyped_acc.rvir",
      {"--input", "x=" + Dir + "s.npy", "--input", "n=" + Dir + "n.npy"},
      "type error in @main");
}

TEST(Reliability, ScanOutputGrowingWithoutBoundRunsOutOfMemoryCleanly) {
  // A Loop of 10^12 steps that stacks a scan output: it once grew until the
  // machine's memory ran out. Its import checks the memory the stacked
  // outputs need before the first step (require_memory), so it fails at
  // once, within an address space of 300 MB (rivet's own is about 250 MB).
  expectErrorEverywhere("loop_scan_output_1e12.onnx",
                        {"--input", "x=" + Dir + "loop_scan_output_x.npy"},
                        "out of memory: the scan outputs of Loop", 300000);
}

TEST(Reliability, CodeForACpuLevelIsRefusedWhereItCannotRun) {
  RunResult R = runRivet({"run", Dir + "branch_x86-64-v4.rvx", "--input",
                          "x=" + Dir + "branch_x.npy", "--output-dir",
                          scratch("v4").string()},
                         true, nullptr, kMemoryLimitKB);
  EXPECT_EQ(R.signal, 0) << R.output;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512cd")) {
    EXPECT_EQ(R.exitCode, 0) << R.output;
  } else {
    EXPECT_EQ(R.exitCode, 1) << R.output;
    EXPECT_TRUE(contains(R.output, "generated for cpu 'x86-64-v4'"))
        << R.output;
  }
}

TEST(Reliability, InputsThatAreNotFilesAreRefused) {
  RunResult R = runRivet({"run", Dir + "branch.rvx", "--input", "x=/dev/zero"},
                         true, nullptr, kMemoryLimitKB);
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "not a regular file")) << R.output;
  R = runRivet({"dump", "/dev/zero", "--ir"}, true, nullptr, kMemoryLimitKB);
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "not a regular file")) << R.output;
}

TEST(Reliability, LongElementwiseChainsCompileAndAgree) {
  // Once exponential in the chain's length (codegen built the fused group's
  // expression as a tree); check compares the VM with the interpreter.
  for (const char *Model : {"chain_Relu_24.onnx", "chain_Sigmoid_24.onnx",
                            "silu_12.onnx", "relu_let_chain_22.rvir"}) {
    for (const char *Level : {"-O0", "-O3"}) {
      RunResult R = runRivet(
          {"check", Dir + Model, "--input", "x=" + Dir + "x23.npy", Level},
          true, nullptr, kMemoryLimitKB);
      EXPECT_EQ(R.signal, 0) << Model << ": " << R.output;
      EXPECT_EQ(R.exitCode, 0) << Model << " " << Level << ": " << R.output;
    }
  }
}
