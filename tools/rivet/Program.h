//===- Program.h - A model, program or executable for the CLI ---*- C++ -*-===//
//
// What every subcommand works on: an ONNX model or a .rvir program (an IR
// module, compiled to bytecode on demand) or a .rvx executable (bytecode
// only; no compiler pipeline). Input preparation and output flattening for
// both executors: the reference interpreter and the VM.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Inputs.h"
#include "Options.h"

#include "kernels/ExecutionLimits.h"
#include "vm/Executable.h"
#include "vm/Object.h"
#include "vm/compiler/Compiler.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace rivet::cli {

/// True when Path names a compiled executable (by its ".rvx" extension).
bool isRvxPath(const std::string &Path);

/// A loaded program of any kind.
struct Program {
  std::string path;
  /// The type-checked module of an ONNX model or .rvir program; absent for
  /// a .rvx file.
  std::optional<LoadedModel> model;
  /// The bytecode: loaded from a .rvx file, or set by compileProgram.
  std::shared_ptr<vm::Executable> exe;
  /// Names of @main's inputs and (when known) outputs as the user sees them.
  std::vector<std::string> inputNames, outputNames;

  bool isExecutable() const { return !model.has_value(); }
  /// How many top-level results @main returns (an ONNX graph's outputs).
  size_t numResults() const;
};

/// Loads Path: a .rvx file is loaded (and validated) as an executable; any
/// other file is parsed or imported and type-checked. Throws rivet::Error.
Program loadProgram(const std::string &Path);

/// Compiles the program's module to bytecode (once) with Opts, carrying the
/// ONNX input and output names into the executable, and showing a long
/// compile's progress (CompileProgress). A .rvx program is returned as
/// loaded.
std::shared_ptr<vm::Executable> compileProgram(Program &P,
                                               vm::CompileOptions &Opts);

/// While alive, shows the progress of a compile under a PassContext on
/// stderr when stderr is a terminal and the compile has run for over a
/// second ($RIVET_PROGRESS_DELAY seconds, for tests): "[3/16] FuseOps
/// 0.4 s", the running step and its time so far, rewritten in place four
/// times a second by a thread of its own (a pass or the code generation
/// after the passes may take long), then the total. Nothing otherwise, so
/// that scripts and tests see the same output however long a compile takes.
class CompileProgress {
public:
  /// Installs the callback in Ctx (PassContext::progress) on a terminal.
  /// Then, when not null, names what follows a pipeline's last pass.
  explicit CompileProgress(ir::PassContext &Ctx,
                           const char *Then = "code generation");
  ~CompileProgress();
  CompileProgress(const CompileProgress &) = delete;
  CompileProgress &operator=(const CompileProgress &) = delete;

private:
  using Clock = std::chrono::steady_clock;
  void report(size_t Step, size_t Steps, const std::string &Pass,
              double Seconds);
  void tick();
  ir::PassContext &Ctx;
  const char *Then;
  Clock::time_point Start;
  double Delay = 1.0;
  std::mutex Lock;
  std::condition_variable Wake;
  bool Done = false, Shown = false;
  std::string Step = "compiling"; // what runs now: "[3/16] FuseOps"
  Clock::time_point Since;        // since when
  std::thread Ticker;
};

/// Removes "-O0".."-O3" from Args and returns the level given (the last one),
/// if any; throws UsageError for another "-O..." spelling.
std::optional<int> takeOptLevel(std::vector<std::string> &Args);
/// The flags of every command that compiles: --no-memory-plan, the pass
/// flags (--print-after PASS|all, --disable-pass PASS, --enable-pass PASS,
/// --time-passes) and the native-code flags (--codegen off|jit|so, --cpu
/// NAME, --mattr FEATURES), and their usage text.
std::vector<FlagSpec> compileFlags();
extern const char *const CompileFlagsUsage;
/// The compile options of a command: Level (default 3) and compileFlags();
/// DefaultCodegen where --codegen is absent. Unknown pass names and
/// malformed codegen values are UsageErrors.
vm::CompileOptions compileOptionsFrom(std::optional<int> Level,
                                      const ParsedArgs &P,
                                      vm::NativeCode DefaultCodegen);
/// The spelling of a --codegen value: "off", "jit" or "so".
const char *codegenName(vm::NativeCode Mode);

/// --threads N: the intra-op thread count of the commands that run.
FlagSpec threadsFlag();
/// Applies --threads N (rivet::setNumThreads; 0: one per hardware thread)
/// when given; otherwise the runtime's default stands (RIVET_NUM_THREADS,
/// else every hardware thread). Returns the thread count in effect.
int applyThreadsFlag(const ParsedArgs &P);
/// --max-call-depth N: the call-depth limit of either executor.
FlagSpec maxCallDepthFlag();
/// The limits of the executors: --max-call-depth N when given (a positive
/// count), else ExecutionLimits' default.
ExecutionLimits executionLimitsFrom(const ParsedArgs &P);
/// With --time-passes: prints the passes' times (from the options'
/// PassContext) to stderr.
void reportPassTimes(const vm::CompileOptions &Opts);

/// The flags shared by every command that takes inputs (--input,
/// --random-inputs, --seed, --shape) and their parsed form.
std::vector<FlagSpec> inputFlags();
InputOptions inputOptionsFrom(const ParsedArgs &P);

/// The arguments of @main from Opts. For a module the declared IR types are
/// checked (prepareInputs); for a .rvx file Executable::mainParams are:
/// dtype, rank and known extents, each error naming the input.
std::vector<Tensor> prepareProgramInputs(const Program &P,
                                         const InputOptions &Opts);

/// The same for an executable alone.
std::vector<Tensor> prepareExecutableInputs(const vm::Executable &Exe,
                                            const InputOptions &Opts);

/// Flattens a VM result exactly as flattenOutputs flattens an interpreter
/// value: tuples depth-first, Some(t) as t, None as an undefined tensor, a
/// List as output_<i>_<j>. ADT values are recognized by the executable's
/// constructor table.
std::vector<NamedOutput> flattenObjectOutputs(const vm::ObjectRef &Result,
                                              const vm::Executable &Exe,
                                              size_t NumResults = 1);

} // namespace rivet::cli
