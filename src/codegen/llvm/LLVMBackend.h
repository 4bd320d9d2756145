//===- LLVMBackend.h - Shared pieces of the LLVM translation units -*- C++ -*-//
//
// Backend-internal: included only by src/codegen/llvm/*.cc. The JIT (ORC)
// and the optimizer/object emitter are separate translation units because
// each of their header sets is slow to compile; this is what they share.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/LoopIR.h"

#include <llvm/Support/CodeGen.h>

#include <memory>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace rivet::codegen {

/// Registers every LLVM target once per process.
void initializeLLVM();

/// The code generator's optimization level for Rivet's 0..3.
llvm::CodeGenOpt::Level codegenLevel(int Level);

/// A module holding Ks (triple and data layout of TM), verified, and
/// optimized at Level with TM's cost model when Optimize is set. Warnings
/// and remarks of the context are silenced (a loop marked for vectorization
/// may stay scalar); errors go to stderr.
std::unique_ptr<llvm::Module> buildModule(llvm::LLVMContext &Ctx,
                                          const std::vector<LoopKernel> &Ks,
                                          llvm::TargetMachine &TM, int Level,
                                          bool Optimize);

} // namespace rivet::codegen
