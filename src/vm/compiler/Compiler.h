//===- Compiler.h - IR module to VM executable ------------------*- C++ -*-===//
//
// Lowers a type-checked module to bytecode: A-normal form, closure
// conversion and lambda lifting, one kernel call per operator call with
// explicit allocation (static shapes from a memory plan, dynamic ones after
// a shape-function call), register allocation.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"
#include "ir/transforms/Pass.h"
#include "kernels/Device.h"
#include "vm/Executable.h"

#include <map>
#include <memory>
#include <string>

namespace rivet::vm {

/// Where the fused groups that codegen accepts run (src/codegen).
enum class NativeCode : uint8_t {
  /// Every group on builtin kernels (reference kernels, oneDNN anchors).
  Off,
  /// Compiled in process with LLVM's ORC JIT (`rivet run MODEL.onnx`); such
  /// an executable cannot be saved.
  Jit,
  /// Object code linked into a shared object that the executable carries
  /// (and the .rvx embeds); loaded without LLVM.
  SharedObject,
};

struct CodegenOptions {
  NativeCode mode = NativeCode::SharedObject;
  /// Where fused groups run: the CPU, or the GPU (--target cuda: kernels
  /// are also compiled to CUDA, placement puts them on the GPU where it
  /// pays, compiler/PlanDevices.h, and the executable needs a GPU).
  Device target = Device::CPU;
  /// For a GPU target: also the kernels placement would keep on the host
  /// for being small (`--gpu-placement all`: tests the GPU code of every
  /// kernel, e.g. the conformance suite's small tensors).
  bool smallKernelsOnGpu = false;
  /// Target CPU and features (`--cpu`, `--mattr`); empty: the host's.
  std::string cpu;
  std::string features;
};

struct CompileOptions {
  /// 0..3: which passes of the default pipeline run (ir/transforms/Pass.h).
  int optLevel = 3;
  /// Pass enables/disables and instrumentation; its optLevel is replaced by
  /// the one above.
  ir::PassContext passes;
  /// Place static-shape tensors whose lifetimes do not overlap in shared
  /// storage (off: one AllocStorage per tensor), for the memory benchmark.
  bool planMemory = true;
  /// Call an operator's library kernel (KernelInfo::libraryFor), where one
  /// is registered, instead of its reference kernel; at every opt level.
  bool libraryKernels = true;
  /// For a GPU target: the library kernels (cuBLAS, cuDNN) may use TF32
  /// tensor cores for float32 (`--allow-tf32`; off: results within the CPU
  /// path's tolerance of the reference).
  bool allowTf32 = false;
  /// Native kernels for fused groups (at optLevel >= 1, where FuseOps runs).
  CodegenOptions codegen;
  /// Compile @main for inputs of these shapes only (by input name:
  /// compiler/SpecializeInputs.h): static shapes, one memory arena.
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// The VM compiler's own steps of a pass bisection (PassBisect.h), counted
/// after the pipeline's passes by ir::PassContext::shouldRunStep, in this
/// order. Anchor selection: a fused group led by conv/dense/matmul becomes
/// one oneDNN call with its tail as post-ops, and an operator with a
/// library kernel calls it (skipped: reference kernels, groups inlined).
/// Codegen: fused groups become native kernels (skipped: NativeCode::Off).
inline constexpr const char *AnchorSelectionStep = "anchor selection";
inline constexpr const char *CodegenStep = "codegen";

/// Compiles M (type inference is run if it has not been). The result is
/// resolved and ready for a VirtualMachine. Throws rivet::Error for what the
/// VM cannot run, naming the construct.
std::shared_ptr<Executable> compile(const ir::Module &M,
                                    const CompileOptions &Opts = {});

} // namespace rivet::vm
