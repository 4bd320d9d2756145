//===- LowerPrimitive.h - Fused primitive function -> loop kernel -*- C++ -*-=//
//
// Lowers a fused group (a function literal with Primitive=1 whose body is a
// let chain of operator calls, as FuseOps builds it; a type-checked module)
// to one loop nest over its output: every operator's compute rule is inlined
// into its consumer, so no intermediate buffer exists; a reduction inside the
// group accumulates into a scalar local. Static extents become constants;
// symbolic and unknown extents become size parameters read from the shapes
// of the kernel's buffers at run time, so one kernel serves every size.
// A group with an operator that has no compute rule (an opaque operator, a
// dtype or attribute the rule does not handle) is refused with a reason; it
// stays on the builtin kernels. A kernel big enough (or possibly big
// enough) gets a parallel outer loop, and an output too large for the
// caches streaming stores (StreamingStores.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/ComputeRule.h"
#include "codegen/LoopIR.h"
#include "ir/Expr.h"

#include <optional>
#include <string>
#include <vector>

namespace rivet::codegen {

/// Where the run-time value of a size parameter comes from: the extent of
/// axis `axis` of buffer `buffer` (inputs in parameter order, then the
/// output).
struct SizeParamSource {
  size_t buffer = 0;
  size_t axis = 0;
};

struct LoweredKernel {
  LoopKernel kernel;
  /// One per kernel.sizeParams entry.
  std::vector<SizeParamSource> sizeSources;
  /// Extents that must broadcast together (each 1 or the one common other
  /// value) for the kernel's broadcast reads to stay in bounds, one list
  /// per broadcast axis of an operator in the group; the generated code
  /// does not check them, its caller must.
  std::vector<std::vector<LoopExpr>> broadcastChecks;
  /// Reductions without an identity that may run over no elements; the
  /// caller must report an error for them, as the reference does.
  std::vector<EmptyReductionCheck> emptyReductionChecks;
};

struct LoweringOptions {
  /// Run the outermost output loop whose extent is not 1 on the runtime's
  /// thread pool when the kernel's work (loopWork) may reach
  /// minParallelWork: always when that loop's extent or its body's work is
  /// symbolic (the backend's run-time Grain then decides how many threads
  /// run), else when the static estimate reaches it. A rank-1 output's one
  /// loop is both parallel and, per chunk, vectorized.
  bool parallel = true;
  int64_t minParallelWork = 2 * kParallelChunkWork;
  /// Make an elementwise nest whose operands line up with the output one
  /// flat loop (CollapseLoops.h). Off for GPU kernels, whose emitter binds
  /// the nest's loops to blocks and threads as they are.
  bool collapse = true;
};

struct LoweringResult {
  std::optional<LoweredKernel> lowered;
  /// Why the group was refused (empty on success).
  std::string unsupported;
  bool ok() const { return lowered.has_value(); }
};

/// Lowers the function literal Fn (type-checked) to a kernel named Name.
/// Never throws for an unsupported group: the result says why.
LoweringResult lowerPrimitive(const ir::Expr &Fn, const std::string &Name,
                              const LoweringOptions &Opts = {});

/// The extents E broadcasts when it is a broadcast extent built by lowering
/// (select(eq(A, 1), B, A) nested: A's operands then B's), or E itself when
/// it is a constant or a size parameter; nullopt for any other expression.
std::optional<std::vector<LoopExpr>> broadcastOperands(const LoopExpr &E);

/// The values of K's size parameters for buffers of the given shapes (inputs
/// then output), in the order the kernel expects them.
std::vector<int64_t>
sizeParamValues(const LoweredKernel &K,
                const std::vector<std::vector<int64_t>> &BufferShapes);

} // namespace rivet::codegen
