//===- RunRivet.h - Running the rivet CLI from tests ------------*- C++ -*-===//
//
// Test support shared by the tests that drive the command line: run it in a
// separate process and collect its exit status and output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace rivet::testing {

inline const std::string RivetBin = RIVET_BINARY_DIR "/tools/rivet";
/// The runtime-only runner (tools/rivet-run).
inline const std::string RivetRunBin = RIVET_BINARY_DIR "/tools/rivet-run";

struct RunResult {
  int exitCode = -1;  // -1: killed by a signal or not run
  int signal = 0;     // the signal that killed it, if any
  std::string output; // stdout (and stderr, unless dropped)
};

/// Single-quotes S for the shell.
inline std::string shellQuote(const std::string &S) {
  std::string Q = "'";
  for (char C : S)
    Q += C == '\'' ? std::string("'\\''") : std::string(1, C);
  return Q + "'";
}

/// Runs `Bin Args...`; stderr joins the output unless WithStderr is false.
/// Stdin, where given, is what the command reads on its standard input.
/// MemoryLimitKB, when nonzero, is the address-space limit (ulimit -v) of
/// the command.
inline RunResult runBinary(const std::string &Bin,
                           const std::vector<std::string> &Args,
                           bool WithStderr = true,
                           const std::string *Stdin = nullptr,
                           long MemoryLimitKB = 0) {
  std::string Cmd = shellQuote(Bin);
  for (const std::string &A : Args)
    Cmd += " " + shellQuote(A);
  Cmd += WithStderr ? " 2>&1" : " 2>/dev/null";
  if (MemoryLimitKB)
    Cmd = "ulimit -v " + std::to_string(MemoryLimitKB) + "; exec " + Cmd;
  if (Stdin)
    Cmd = "printf '%s' " + shellQuote(*Stdin) + " | (" + Cmd + ")";
  RunResult R;
  FILE *P = popen(Cmd.c_str(), "r");
  if (!P)
    return R;
  std::array<char, 4096> Buf;
  size_t N;
  while ((N = fread(Buf.data(), 1, Buf.size(), P)) > 0)
    R.output.append(Buf.data(), N);
  int Status = pclose(P);
  if (WIFEXITED(Status))
    R.exitCode = WEXITSTATUS(Status);
  else if (WIFSIGNALED(Status))
    R.signal = WTERMSIG(Status);
  return R;
}

/// Runs `rivet Args...` (as runBinary).
inline RunResult runRivet(const std::vector<std::string> &Args,
                          bool WithStderr = true,
                          const std::string *Stdin = nullptr,
                          long MemoryLimitKB = 0) {
  return runBinary(RivetBin, Args, WithStderr, Stdin, MemoryLimitKB);
}

/// An empty folder rivet_<Prefix>_<Name>_<pid> in the temporary directory.
inline std::filesystem::path freshTempDir(const std::string &Prefix,
                                          const std::string &Name) {
  std::filesystem::path D =
      std::filesystem::temp_directory_path() /
      ("rivet_" + Prefix + "_" + Name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(D);
  std::filesystem::create_directories(D);
  return D;
}

/// The name of the running GoogleTest test (for per-test folders).
inline std::string currentTestName() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

/// Whether this CPU has the x86-64-v4 level (AVX-512 F/BW/CD/DQ/VL).
inline bool hostHasX86_64V4() {
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}

inline bool contains(const std::string &S, const std::string &Sub) {
  return S.find(Sub) != std::string::npos;
}

} // namespace rivet::testing
