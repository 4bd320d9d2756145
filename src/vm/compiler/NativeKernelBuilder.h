//===- NativeKernelBuilder.h - Fused groups as native kernels ---*- C++ -*-===//
//
// The compiler's side of native code: each fused group (a Primitive
// function literal) that codegen lowers to a loop kernel becomes a native
// kernel of the executable, called by one InvokeKernel; the accepted kernels
// are compiled together at the end, in process (JIT) or into one shared
// object the executable carries. An output extent may be a constant, an
// input's extent, or the NumPy broadcast of input extents (a broadcast size
// the VM computes and checks at every call, as it checks every broadcast
// the kernel's reads assume); a group with another computed output extent
// is refused (no shape function could allocate its output), as is one
// codegen refuses: those stay on builtin kernels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/CodegenBackend.h"
#include "codegen/LoopIR.h"
#include "ir/Expr.h"
#include "vm/Executable.h"
#include "vm/compiler/Compiler.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace rivet::vm::compiler {

/// The first operator call group Fn evaluates (the innermost first call of
/// its first let value, e.g. the conv of `add(conv(..), b)`), or null.
ir::Expr firstOperatorCall(const ir::FunctionNode &Fn);

/// The codegen target of --cpu/--mattr (empty fields: the host's).
codegen::TargetOptions targetOptions(const CodegenOptions &Opts);

/// Whether Opts names a target other than the host (no --cpu, "native" or
/// the host's CPU name, and no --mattr, is the host).
bool isExplicitTarget(const CodegenOptions &Opts);

class NativeKernelBuilder {
public:
  explicit NativeKernelBuilder(const CodegenOptions &Opts);

  /// The native kernel computing the Primitive function literal Fn, lowered
  /// on the first request (the same literal gives the same kernel); null
  /// when the group stays on builtin kernels.
  const NativeKernel *lower(const ir::Expr &Fn);
  /// The kernel lower() gave for Fn, or null.
  const NativeKernel *find(const ir::ExprNode *Fn) const;
  /// The kernel named Symbol, or null.
  const NativeKernel *findSymbol(const std::string &Symbol) const;

  /// Compiles the kernels (per the options' mode) and adds them to Exe.
  /// For a target this machine cannot run, the code is still built but
  /// left unbound (Executable::nativeUnavailable).
  void finish(Executable &Exe);

  /// Whether kernels may be placed on a GPU (the options' target).
  bool targetsGpu() const { return Opts.target != Device::CPU; }
  Device target() const { return Opts.target; }

  /// "group of <op>: <reason>" for every group left on builtin kernels.
  const std::vector<std::string> &refusals() const { return Refusals; }

private:
  Device placeKernel(const NativeKernel &NK, const codegen::LoopKernel &K);
  CodegenOptions Opts;
  std::vector<codegen::LoopKernel> Loops;
  std::vector<NativeKernel> Kernels;
  std::unordered_map<const ir::ExprNode *, int64_t> ByFunction; // -1 refused
  std::vector<std::string> Refusals;
};

} // namespace rivet::vm::compiler
