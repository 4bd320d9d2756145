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

/// Adds K to M as `void K.name(ptr buffers, ptr sizes)` (NativeKernel.h's
/// calling convention) plus an internal body function whose buffer
/// parameters are noalias. Throws rivet::Error when K is malformed.
void emitKernel(const LoopKernel &K, llvm::Module &M);

} // namespace rivet::codegen
