//===- InlinePrimitives.h - Fused functions to kernel calls -----*- C++ -*-===//
//
// Decides how each call of a fused primitive function runs: an anchor with a
// tail oneDNN can apply as post-ops becomes one fused anchor kernel call
// (AnchorSelection.h); a group codegen compiles stays a call of the literal,
// lowered to one native kernel call (NativeKernelBuilder.h); any other call
// becomes the function's body, with the parameters let-bound to the arguments
// (one builtin kernel per operator). An anchor group whose tail the post-ops
// cannot express keeps its anchor as a builtin (oneDNN) call, the tail
// becoming one generated epilogue. With oneDNN disabled, codegen is tried
// for the whole group before the anchor kernel (which then runs the
// reference operators). For a GPU target, an anchor a GPU library kernel
// takes (cuDNN, cuBLAS) becomes its builtin call, the rest of its group one
// generated epilogue; without GPU libraries it is generated whole.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"

namespace rivet::vm::compiler {

class NativeKernelBuilder;

/// Replaces every call of a Primitive function literal in M's functions by
/// an anchor kernel call or the function's body, except the groups Native
/// (when given) accepts; returns true when it changed anything (the caller
/// re-infers types then). Without Anchors no group becomes an anchor kernel
/// call (a bisection's skipped anchor selection step); without
/// GpuLibraries no anchor is split off for a GPU library kernel
/// (`--library-kernels off`).
bool inlinePrimitiveCalls(ir::Module &M, NativeKernelBuilder *Native = nullptr,
                          bool Anchors = true, bool GpuLibraries = true);

} // namespace rivet::vm::compiler
