//===- InlinePrimitives.h - Fused functions back to operator calls -*- C++
//-*-===//
//
// Until a fused primitive function has a generated kernel, the VM runs it as
// builtin kernels: an anchor with a tail oneDNN can apply as post-ops
// becomes one fused anchor kernel call (AnchorSelection.h); any other call
// of a Primitive function literal becomes its body, with the parameters
// let-bound to the arguments (one builtin kernel per operator).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"

namespace rivet::vm::compiler {

/// Replaces every call of a Primitive function literal in M's functions by
/// the function's body; returns true when it changed anything (the caller
/// re-infers types then).
bool inlinePrimitiveCalls(ir::Module &M);

} // namespace rivet::vm::compiler
