//===- MemoryPlanner.h - Shared storage for static tensors ------*- C++ -*-===//
#pragma once

#include "vm/compiler/LoweredFunction.h"

namespace rivet::vm::compiler {

/// Places the static-shape tensors of F that do not escape (returned, passed
/// to a call, stored in an ADT or a closure) in one arena per invocation.
/// Lifetimes come from liveness on the lowered code (jumps only go forward,
/// so a value is live from its allocation to its last use in code order);
/// tensors whose lifetimes do not overlap share bytes (greedy best fit,
/// 64-byte aligned). Escaping tensors keep their own AllocStorage. With
/// Enabled false every static tensor keeps its own storage. Returns the
/// arena's size in bytes.
uint64_t planMemory(LoweredFunction &F, bool Enabled);

} // namespace rivet::vm::compiler
