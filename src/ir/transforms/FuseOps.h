//===- FuseOps.h - Operator fusion with explicit options --------*- C++ -*-===//
//
// The FuseOps pass runs through the pipeline with the default options; tests
// and tools that need another maximum group size call fuseOps directly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"

#include <cstddef>

namespace rivet::ir {

struct FuseOptions {
  /// The most operator calls one primitive function may hold (TVM's
  /// max_fuse_depth default).
  size_t maxGroupSize = 256;
};

/// Groups the operator calls of every function of M into Primitive function
/// literals (see FuseOps.cc). M must be type-checked; re-infer types after.
void fuseOps(Module &M, const FuseOptions &Opts = {});

} // namespace rivet::ir
