//===- PowerOfTwoScale.h - p * 2^n, a call the vectorizer widens *- C++ -*-===//
//
// The last step of an inline exp scales p by 2^n. Portable code needs six
// integer and float operations for it (two factors, so that subnormal and
// overflowing results come out right); AVX-512's vscalefps does it in one,
// with the same single rounding. The loop vectorizer cannot widen a target
// intrinsic, so the scale is a call to an internal helper with vector
// variants (the vector function ABI attribute): the vectorizer calls the
// variant of its width, and after vectorization every helper is inlined.
// (What it gains on a fused sigmoid chain: docs/benchmarks.md.)
// Backend-internal: included by the LLVM translation units only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/PassManager.h>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace rivet::codegen {

/// Whether TM's vectors scale by powers of two in one instruction of every
/// width the vectorizer may pick (x86 with AVX-512 F and VL).
bool hasVectorScale(const llvm::TargetMachine &TM);

/// P * 2^Z for float32 scalars P and Z, Z integral in [-150, 128]: a call
/// to the module's scale helper, which the loop vectorizer widens to
/// vscalefps. Without vectorization the helper computes the same product
/// in portable code.
llvm::Value *emitScaleCall(llvm::IRBuilder<> &B, llvm::Value *P,
                           llvm::Value *Z);

/// P * 2^N for float32 P and int32 N in [-150, 128] in portable code:
/// 2^(N/2) * 2^(N - N/2), each factor a normal float, so that only the
/// last product rounds (subnormal and overflowing results come out right).
llvm::Value *emitPortableScale(llvm::IRBuilder<> &B, llvm::Value *P,
                               llvm::Value *N);

/// Adds to MPM the passes that inline the scale helpers once the
/// vectorizer has run, and remove them.
void addScaleHelperInlining(llvm::ModulePassManager &MPM);

} // namespace rivet::codegen
