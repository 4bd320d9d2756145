//===- BisectPasses.h - rivet check --bisect-passes -------------*- C++ -*-===//
//
// Which compilation step makes the VM disagree with the reference
// interpreter: the reference runs once, then vm::bisectPasses compiles with
// prefixes of the steps (vm/compiler/PassBisect.h) and each program is
// judged as rivet check judges the full one (its outputs, its tolerance).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Program.h"

#include "kernels/ExecutionLimits.h"
#include "vm/compiler/PassBisect.h"

#include <string>
#include <vector>

namespace rivet::cli {

struct BisectCheckOptions {
  double rtol = 1e-4, atol = 1e-5;
  bool linear = false;    ///< --bisect-linear
  bool printDiff = false; ///< --print-diff
  bool json = false;      ///< --json: text on stderr, JSON on stdout
};

/// Runs the bisection of P (a module, not compiled yet) on Inputs with the
/// compile options CO, prints the report and returns the exit code: 0 when
/// the fully compiled program agrees, 1 otherwise.
int bisectPassesCheck(const Program &P, const std::vector<Tensor> &Inputs,
                      const vm::CompileOptions &CO,
                      const ExecutionLimits &Limits,
                      const BisectCheckOptions &Opts);

/// The report for people (without the progress lines) and as JSON.
std::string bisectText(const vm::BisectReport &R);
std::string bisectJson(const vm::BisectReport &R);

} // namespace rivet::cli
