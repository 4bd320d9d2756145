//===- CodegenBackend.h - Loop kernels to machine code (LLVM 16) -*- C++
//-*-===//
//
// The LLVM backend behind an LLVM-free interface: a LoopKernel becomes LLVM
// IR (inner loops marked for vectorization, buffers noalias, reassociation
// only on reduction updates), is optimized at O3 for a target machine, and
// is either JIT-compiled in process (ORC LLJIT) or emitted as an object file
// for a given triple/CPU/features (the .rvx embeds it; the runtime loads it
// without LLVM).
//
// Calling convention of every generated kernel (the symbol is the kernel's
// name; src/kernels/NativeKernelAbi.h is the binding contract):
//   extern "C" void kernel(void *const *buffers, const int64_t *sizes,
//                          const RivetKernelRuntime *runtime);
// buffers: the data pointers of the inputs in parameter order, then of the
// output; each dense row-major with the dtype of the kernel's signature.
// sizes: the values of the kernel's size parameters (LoopKernel::sizeParams
// order; LoweredKernel::sizeSources says which buffer extent each is). The
// output buffer must not overlap an input. runtime: the runtime's services
// (&rivet::kernelRuntime() in process); a parallel loop runs through
// runtime->parallelFor, so generated code needs no runtime symbol.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/LoopIR.h"
#include "kernels/NativeKernelAbi.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rivet::codegen {

/// What to generate code for; empty fields mean the host's.
struct TargetOptions {
  std::string triple;   // e.g. "x86_64-pc-linux-gnu"
  std::string cpu;      // e.g. "znver4", "x86-64-v3" (--cpu)
  std::string features; // e.g. "+avx2,+fma" (--mattr)
  int optLevel = 3;     // 0..3
};

/// The host's triple, CPU name and feature string, as LLVM detects them.
TargetOptions hostTarget();

/// Whether code for T may use Feature (an LLVM name: "avx2", "avx512f"),
/// by T's CPU and feature string. Throws rivet::Error for an unknown triple
/// or CPU.
bool targetHasFeature(const TargetOptions &T, const std::string &Feature);

/// The textual LLVM IR of K (after optimization when Optimize is set).
std::string emitLLVMIR(const LoopKernel &K, const TargetOptions &T = {},
                       bool Optimize = true);

/// An ELF/COFF/Mach-O object file (by the triple) defining the kernels Ks.
/// Throws rivet::Error for an unknown triple or CPU.
std::vector<uint8_t> emitObject(const std::vector<LoopKernel> &Ks,
                                const TargetOptions &T = {});

/// Compiles kernels in process for the host. Kernels live as long as the
/// compiler; compile() is thread-safe.
class JitCompiler {
public:
  explicit JitCompiler(int OptLevel = 3);
  ~JitCompiler();
  JitCompiler(const JitCompiler &) = delete;
  JitCompiler &operator=(const JitCompiler &) = delete;

  /// Compiles Ks as one module (one optimization and code generation
  /// pipeline for all of them: per-module set-up dominates small kernels)
  /// and returns their entry points in order. Kernel names must be unique
  /// within this compiler.
  std::vector<RivetKernelFn> compile(const std::vector<LoopKernel> &Ks);
  /// One kernel.
  RivetKernelFn compile(const LoopKernel &K) {
    return compile(std::vector{K})[0];
  }

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace rivet::codegen
