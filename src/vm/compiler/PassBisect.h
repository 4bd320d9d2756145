//===- PassBisect.h - The first step that breaks a program ------*- C++ -*-===//
//
// Pass bisection (LLVM's -opt-bisect-limit with -print-after). The steps of
// a compilation, in the order they happen: the pipeline's passes that run
// at its level (FuseOps last), the compiler's own steps "anchor selection"
// and "codegen" (Compiler.h; codegen only where native code is on), then
// the passes after inlining (FuseConvChains, DeadCodeElimination).
// Compiling with only the first K steps (ir::PassContext::bisectLimit; the
// rest are skipped, a skipped compiler step compiles as if switched off)
// gives a program that should compute what the full one does; the caller's
// check says whether it agrees with the reference. The first step after
// which it does not is found by binary search over K, or by trying every K
// in order. Probes with 0 steps and with all are made first: when all
// agree there is nothing to find, when 0 diverges no step is to blame.
//
// The search assumes monotonicity: once a step breaks the program, every
// longer prefix stays broken (a later step does not undo the error). Where
// that fails, the binary search still ends on a step K whose prefix K-1
// agrees and K does not (both checked), but perhaps not the first such;
// BisectOptions::linear finds the first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"
#include "vm/Executable.h"
#include "vm/compiler/Compiler.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivet::vm {

/// Whether a compiled program agrees with the reference (the caller runs it
/// and compares; rivet check uses its tolerance and output flattening).
struct StepVerdict {
  bool ok = true;
  /// The largest errors over every output.
  double maxAbsErr = 0, maxRelErr = 0;
  /// Why, when it is not numeric: a compile or run error, a shape mismatch.
  std::string note;
};

/// Runs Exe and judges its results. An exception thrown counts as a
/// divergence with its message as the note.
using StepCheck =
    std::function<StepVerdict(const std::shared_ptr<Executable> &Exe)>;

struct BisectOptions {
  /// Check every prefix in order from 0 steps instead of binary search.
  bool linear = false;
  /// Print the module before and after the first bad step as a unified
  /// diff (BisectReport::diff).
  bool diff = false;
  /// Called after each check with the steps it ran (-1: all) and the
  /// verdict: progress for people.
  std::function<void(int Steps, const StepVerdict &V)> progress;
};

/// One check: the program compiled with the first `steps` steps.
struct BisectProbe {
  int steps = -1; // -1: every step (the full compilation)
  StepVerdict verdict;
};

struct BisectReport {
  /// The steps of the full compilation, in order (step K is steps[K-1]).
  std::vector<std::string> steps;
  /// The fully compiled program agrees with the reference.
  bool ok = true;
  /// Even with no step the program diverges: the cause is lowering, the VM
  /// or a kernel, not a step.
  bool baselineDiverges = false;
  /// 1-based index of the first step after which results diverge; 0: none.
  size_t firstBad = 0;
  /// The verdicts with firstBad-1 and with firstBad steps.
  StepVerdict lastGood, firstBadVerdict;
  /// Every check, in the order made.
  std::vector<BisectProbe> probes;
  /// With BisectOptions::diff: the module before and after step firstBad as
  /// a unified diff (empty when the step leaves the printed IR unchanged).
  std::string diff;
  /// Why there is no diff: the step failed before it made a module.
  std::string diffError;
};

/// Compiles M with Opts (whose passes decide the steps) and with prefixes
/// of its steps, checking each program with Check, and reports the first
/// step after which results diverge. Opts.passes' printAfter and timing
/// are not used for the probes.
BisectReport bisectPasses(const ir::Module &M, const CompileOptions &Opts,
                          const StepCheck &Check, const BisectOptions &BO = {});

/// The module just before and just after step K (1-based) of compiling M
/// with Opts, printed (ir::printModule); nothing when there is no step K.
/// For the compiler's own steps the modules are the IR after inlining the
/// fused groups without and with the step. A step that fails (a pass
/// whose module does not type-check) still shows what it made.
std::optional<std::pair<std::string, std::string>>
printStep(const ir::Module &M, const CompileOptions &Opts, size_t K);

/// A unified diff (`diff -u`) of two texts line by line, Context lines
/// around each change, with --- OldName and +++ NewName headers; empty when
/// the texts are equal. Deterministic (Myers' algorithm, linear space).
std::string unifiedDiff(const std::string &Old, const std::string &New,
                        const std::string &OldName, const std::string &NewName,
                        size_t Context = 3);

} // namespace rivet::vm
