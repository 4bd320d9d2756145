//===- Pass.h - Optimization passes, their context and pipeline -*- C++ -*-===//
//
// A pass rewrites a type-checked Module in place. Each pass is registered
// once (RIVET_REGISTER_PASS in its own file) with its name, the lowest opt
// level it runs at and a one-line description; the default pipeline lists
// the passes in order, and a PassContext decides which of them run (opt
// level, --disable-pass/--enable-pass) and instruments them (--print-after,
// timing, the verifier between passes).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"

#include <functional>
#include <iosfwd>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace rivet::ir {

class PassContext;
class LayoutPreferences; // ir/transforms/LayoutPreference.h

/// A pass: rewrites M in place (types are re-inferred after it runs).
using PassFunction = void (*)(Module &M, const PassContext &Ctx);

struct PassInfo {
  std::string name;
  /// The pass runs when PassContext::optLevel >= optLevel (unless disabled).
  int optLevel = 0;
  std::string description;
  PassFunction run = nullptr;
};

/// What the passes of one compilation run under.
class PassContext {
public:
  int optLevel = 3;
  /// Passes never run / always run, whatever the level (by name).
  std::set<std::string> disabled, enabled;
  /// Print the module after these passes ("all": after every pass).
  std::set<std::string> printAfter;
  /// Run verifyModule after every pass (tests); a failure names the pass.
  bool verifyEach = false;
  /// Record the wall time of each pass in timings.
  bool timePasses = false;
  /// Where --print-after output goes (stderr when null).
  std::ostream *printStream = nullptr;
  /// The target's layout preferences for AlterOpLayout (null: the
  /// process-wide ones of LayoutPreference.h, if any).
  std::shared_ptr<const LayoutPreferences> layoutPreferences;
  /// Filled by runPasses when timePasses is set, one entry per pass run.
  struct Timing {
    std::string pass;
    double milliseconds;
    /// When it began: steady_clock milliseconds since that clock's epoch
    /// (for a timeline: rivet bench --trace).
    double startMilliseconds = 0;
  };
  mutable std::vector<Timing> timings;
  /// Called as each pass that runs begins (Seconds < 0) and ends (Seconds:
  /// its wall time), the Step-th of Steps: the CLI shows a long compile's
  /// progress with it.
  std::function<void(size_t Step, size_t Steps, const std::string &Pass,
                     double Seconds)>
      progress;

  /// The passes optimize() runs, in order; empty: defaultPipeline(). Tests
  /// insert passes of their own (a deliberately wrong one, for bisection).
  std::vector<std::string> pipeline;

  /// Pass bisection (LLVM's -opt-bisect-limit): the steps of a compilation
  /// are the enabled passes as they run (across every runPasses call under
  /// this context) and the VM compiler's own steps (vm/compiler/PassBisect.h);
  /// only the first bisectLimit steps run, later ones are skipped. -1: all.
  int bisectLimit = -1;
  /// Every step considered so far, run or skipped, in order (shouldRunStep).
  mutable std::vector<std::string> steps;
  /// When set, called after each step that runs with its 1-based index and
  /// the module before and after it (bisection's --print-diff).
  using StepObserver =
      std::function<void(size_t Step, const std::string &Name,
                         const Module &Before, const Module &After)>;
  StepObserver stepObserver;

  /// True when the pass runs under this context.
  bool isEnabled(const PassInfo &P) const;
  /// Records step Name in steps; false when bisectLimit skips it.
  bool shouldRunStep(const std::string &Name) const;
};

class PassRegistry {
public:
  static PassRegistry &global();
  void add(PassInfo Info);
  /// Null when no pass has that name.
  const PassInfo *find(const std::string &Name) const;
  /// Throws rivet::Error listing the known passes.
  const PassInfo &get(const std::string &Name) const;
  std::vector<std::string> names() const;
};

/// The passes of the default pipeline, in the order they run (each one
/// still subject to PassContext::isEnabled).
const std::vector<std::string> &defaultPipeline();

/// Runs the named passes that Ctx enables, in order, re-inferring types after
/// each. Throws rivet::Error (naming the pass) when a pass or the verifier
/// fails, and listing the known passes when Passes names an unknown one.
void runPasses(Module &M, const std::vector<std::string> &Passes,
               const PassContext &Ctx);

/// Runs Ctx.pipeline (the default pipeline when empty) under Ctx.
void optimize(Module &M, const PassContext &Ctx);

/// Checks that M is well formed (every variable bound once and used only in
/// its scope; match patterns name known constructors) and well typed
/// (inferTypes). Throws rivet::Error describing the first problem.
void verifyModule(Module &M);

/// Replaces each global function of M by F(function); F returns its argument
/// unchanged when it has nothing to do. The common shape of a function pass.
void transformFunctions(Module &M,
                        const std::function<Expr(const Expr &Fn)> &F);

/// The attribute that marks a fused primitive function (FuseOps' output).
inline constexpr const char *kPrimitiveAttr = "Primitive";
/// True when E is a function literal with Primitive=1.
bool isPrimitiveFunction(const Expr &E);

namespace detail {
struct PassRegistrar {
  explicit PassRegistrar(PassInfo Info) {
    PassRegistry::global().add(std::move(Info));
  }
};
} // namespace detail

} // namespace rivet::ir

#define RIVET_PASS_CONCAT2(A, B) A##B
#define RIVET_PASS_CONCAT(A, B) RIVET_PASS_CONCAT2(A, B)
/// RIVET_REGISTER_PASS("FoldConstant", 2, "Evaluates ...", foldConstantPass);
#define RIVET_REGISTER_PASS(Name, Level, Description, Fn)                      \
  static ::rivet::ir::detail::PassRegistrar RIVET_PASS_CONCAT(RivetPassReg_,   \
                                                              __COUNTER__)(    \
      ::rivet::ir::PassInfo{Name, Level, Description, Fn})
