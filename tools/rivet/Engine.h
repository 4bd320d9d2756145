//===- Engine.h - Running @main on either executor --------------*- C++ -*-===//
//
// One engine runs a program's @main repeatedly with the reference
// interpreter or with a VirtualMachine over the program's (shared)
// executable, and flattens each result into named outputs. One engine per
// thread; several VM engines may share one Executable.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Program.h"

#include "ir/Interpreter.h"
#include "vm/VirtualMachine.h"

#include <memory>
#include <string>
#include <vector>

namespace rivet::cli {

enum class ExecutorKind { Interp, VM };

/// Parses --executor's value for command Cmd; throws UsageError.
ExecutorKind parseExecutor(const std::string &Text, const std::string &Cmd);
const char *executorName(ExecutorKind K);

/// The native stack the interpreter gets: interpreted programs may recurse
/// deeply outside tail position (e.g. @map on a long list). Reserved lazily.
inline constexpr size_t BigStackBytes = size_t(512) << 20;

class Engine {
public:
  /// P must outlive the engine; for ExecutorKind::VM it must be compiled
  /// (compileProgram) or be a .rvx file; Interp needs a module. Limits go
  /// to either executor.
  Engine(const Program &P, ExecutorKind K, const ExecutionLimits &Limits);
  ~Engine();

  /// Runs @main on Inputs and returns the flattened result. Call it on a
  /// thread with a big stack (runWithStack) for the interpreter.
  std::vector<NamedOutput> run(const std::vector<Tensor> &Inputs);
  /// Runs @main and drops the result (what bench times).
  void runDiscard(const std::vector<Tensor> &Inputs);

  /// The VM, or null for the interpreter.
  vm::VirtualMachine *machine() { return VM.get(); }
  /// The interpreter, or null for the VM.
  ir::Interpreter *interpreter() { return Interp.get(); }

private:
  const Program &P;
  ExecutorKind Kind;
  std::unique_ptr<ir::Interpreter> Interp;
  std::unique_ptr<vm::VirtualMachine> VM;
};

} // namespace rivet::cli
