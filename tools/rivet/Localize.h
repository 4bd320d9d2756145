//===- Localize.h - Where a compiled program first diverges -----*- C++ -*-===//
//
// rivet check --localize. The reference interpreter runs first and keeps
// the value of every origin (ir/Origin.h) each time it is computed; then
// the VM runs with a kernel observer that compares each kernel's output, as
// it is made, with the reference's value of the same origin at the same run
// (the n-th against the n-th: an operator in a loop body runs once per
// iteration on both). The first value that disagrees in the VM's order is
// the first divergence; whether its inputs still agreed tells the culprit
// from a consequence. Values fused away, or in another layout than the
// reference's, are not compared. A fault injected into one kernel's output
// (in the VM only) tests that the report names it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Program.h"

#include "kernels/ExecutionLimits.h"

#include <optional>
#include <string>
#include <vector>

namespace rivet::cli {

struct LocalizeOptions {
  double rtol = 1e-4, atol = 1e-5;
  /// In the VM only, the first run of the kernel that computes this origin
  /// gets faultScale times its output's largest magnitude (faultScale
  /// when it is all 0) added to its first element. Empty: no fault.
  std::string faultOrigin;
  double faultScale = 1e-2;
  /// Rows of the table of the largest divergences.
  size_t worst = 10;
};

/// One compared value that disagrees.
struct Divergence {
  std::string origin, op;
  /// Which run of the origin: "iteration 3 of @main$loop", "run 1".
  std::string instance;
  uint64_t run = 0; // 1: the first time it was computed
  double maxAbsErr = 0, maxRelErr = 0;
  /// Whether every input of the kernel still agreed with the reference (or
  /// came from values not compared that read only agreeing ones).
  bool inputsAgree = true;
  std::string note; // a mismatch that is not numeric
};

struct LocalizeReport {
  bool ok = true;
  std::optional<Divergence> first;
  /// The largest divergences, largest absolute error first.
  std::vector<Divergence> worst;
  size_t compared = 0;      ///< Values compared.
  size_t notComparable = 0; ///< Outputs in another shape (layout) or run.
  bool faultInjected = false;
  std::vector<std::string> faultKernel; ///< The perturbed kernel's origins.
  /// The origin whose value that kernel computes ("" when none is
  /// observable): the report names it when the fault went into a call
  /// fused into the kernel.
  std::string faultKernelOutput;
};

/// The origins of P's module (every call's), to check --inject-fault's.
std::vector<std::string> programOrigins(const Program &P);

/// Splits --inject-fault's ORIGIN[:SCALE] (origins of .rvir programs are
/// "line:column", so the text is an origin itself first) into Opts.
/// Throws UsageError when no call of the program has that origin.
void parseFaultSpec(const std::string &Spec, const Program &P,
                    LocalizeOptions &Opts);

/// Runs both executors on Inputs and compares value by value. P must be
/// compiled in this process (compileProgram) from its model.
LocalizeReport localizeDivergence(const Program &P,
                                  const std::vector<Tensor> &Inputs,
                                  const ExecutionLimits &Limits,
                                  const LocalizeOptions &Opts);

/// The report for people (stderr) and as JSON (stdout, --json).
std::string localizeText(const LocalizeReport &R);
std::string localizeJson(const LocalizeReport &R);

} // namespace rivet::cli
