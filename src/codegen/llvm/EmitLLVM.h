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

/// Adds K to M as `void K.name(ptr buffers, ptr sizes, ptr runtime)`
/// (NativeKernel.h's calling convention) plus internal functions: the body,
/// whose buffer parameters are noalias, and one chunk function per parallel
/// loop. Throws rivet::Error when K is malformed.
void emitKernel(const LoopKernel &K, llvm::Module &M);

/// After optimization: makes the vector stores of streaming loops that are
/// aligned to their size non-temporal (x86 emits those as vmovntps and the
/// like; a store the optimizer could not prove aligned stays ordinary).
void finishStreamingStores(llvm::Module &M);

} // namespace rivet::codegen
