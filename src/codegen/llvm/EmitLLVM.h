//===- EmitLLVM.h - Loop kernel -> LLVM IR (backend-internal) ---*- C++ -*-===//
//
// Shared by the two LLVM translation units of the backend only; it declares
// LLVM types forward so that it stays cheap to include.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/LoopIR.h"

namespace llvm {
class Module;
} // namespace llvm

namespace rivet::codegen {

/// Target choices of the emitted code that the loop IR does not make.
struct EmitOptions {
  /// exp scales by 2^n through the vectorizable helper call of
  /// PowerOfTwoScale.h (the target has vscalefps, and the pipeline
  /// vectorizes and then inlines the helpers).
  bool vectorScale = false;
};

/// Adds K to M as `void K.name(ptr buffers, ptr sizes, ptr runtime)`
/// (CodegenBackend.h's calling convention) plus internal functions: the body,
/// whose buffer parameters are noalias, and one chunk function per parallel
/// loop. Throws rivet::Error when K is malformed.
void emitKernel(const LoopKernel &K, llvm::Module &M,
                const EmitOptions &Options = {});

/// After optimization: makes the vector stores of streaming loops that are
/// aligned to their size non-temporal (x86 emits those as vmovntps and the
/// like; a store the optimizer could not prove aligned stays ordinary), and
/// has the vector loads of those loops prefetch a few KB ahead.
void finishStreamingStores(llvm::Module &M);

} // namespace rivet::codegen
