//===- Lowering.h - IR functions to lowered bytecode ------------*- C++ -*-===//
//
// The module-wide state of lowering (function, kernel, constant, constructor
// and string tables, the queue of lifted functions) and the lowering of one
// function body to instructions over virtual registers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/LoweredFunction.h"
#include "vm/compiler/PlanDevices.h"

#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace rivet::vm::compiler {

/// A function known at compile time: a lifted function and the variables
/// whose values it captured (passed first on a direct call).
struct KnownFunction {
  uint32_t func = 0;
  std::vector<const ir::VarNode *> captures;
};

/// A function body waiting to be lowered.
struct LoweringJob {
  uint32_t index = 0;
  std::string name;
  ir::Expr fn; // the FunctionNode
  std::vector<const ir::VarNode *> captures;
  std::vector<std::pair<const ir::VarNode *, KnownFunction>> knownInside;
  const ir::VarNode *self = nullptr;
};

class NativeKernelBuilder;

class ModuleLowering {
public:
  /// Native, when given, has the native kernels of the Primitive function
  /// literals left as calls (InlinePrimitives.h).
  ModuleLowering(const ir::Module &M, const CompileOptions &Opts,
                 Executable &Exe, const NativeKernelBuilder *Native = nullptr);
  /// Lowers every global function and everything lifted out of them.
  void run();

  // Tables, used by FunctionLowering.
  uint32_t kernel(KernelEntry::Kind Kind, const std::string &Op,
                  const Attrs &A);
  /// The kernel that computes operator Op's calls: its library kernel
  /// when it has one and the options allow it, else Op itself.
  const std::string &builtinKernel(const std::string &Op) const;
  /// For a GPU target, the GPU library kernel (cuBLAS, cuDNN) that
  /// computes call C of operator Op with its outputs preallocated, or null:
  /// one is registered for Op, the options allow library kernels, and C
  /// reads and writes float32 tensors only. Its attributes are C's plus
  /// "allow_tf32" when the options allow TF32.
  const KernelInfo *gpuLibraryKernel(const ir::CallNode &C,
                                     const std::string &Op,
                                     Attrs &KernelAttrs) const;
  uint32_t constant(const ir::ConstantNode &C);
  /// A constant 1-D int64 tensor holding Dims (a static shape operand).
  uint32_t shapeConstant(const std::vector<int64_t> &Dims);
  uint32_t string(const std::string &S);
  uint32_t global(const std::string &Name, const std::string &Where) const;
  int32_t constructorTag(const ir::ConstructorNode &C) const;
  int32_t constructorTag(const std::string &Adt, const std::string &Name) const;
  /// A function of the executable for a lifted function body.
  uint32_t addJob(LoweringJob Job);
  /// A function that builds constructor C from its arguments (for a
  /// constructor used as a function value).
  uint32_t constructorFunction(const ir::ConstructorNode &C);

  /// The native kernel computing function literal Fn, or null.
  const NativeKernel *nativeKernel(const ir::Expr &Fn) const;

  const ir::Module &module() const { return M; }
  const CompileOptions &options() const { return Opts; }

private:
  KernelPlacement placement(uint32_t K) const;

  const ir::Module &M;
  const CompileOptions &Opts;
  Executable &Exe;
  const NativeKernelBuilder *Native;
  std::deque<LoweringJob> Jobs;
  std::map<std::string, uint32_t> Globals;
  std::map<std::string, int32_t> Ctors; // "adt.name" -> tag
  std::map<std::string, uint32_t> CtorFunctions;
  std::unordered_map<size_t, std::vector<uint32_t>> KernelByHash;
  std::unordered_map<const ir::ConstantNode *, uint32_t> Constants;
  std::map<std::vector<int64_t>, uint32_t> ShapeConstants;
  std::map<std::string, uint32_t> Strings;
};

/// Lowers the body of one job into F.
void lowerFunction(ModuleLowering &ML, const LoweringJob &Job,
                   LoweredFunction &F);

} // namespace rivet::vm::compiler
