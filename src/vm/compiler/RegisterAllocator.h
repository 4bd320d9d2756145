//===- RegisterAllocator.h - Virtual to frame registers ---------*- C++ -*-===//
#pragma once

#include "vm/compiler/LoweredFunction.h"

namespace rivet::vm::compiler {

/// Maps F's virtual registers to frame registers, reusing the register of a
/// value after its last use (linear scan: jumps only go forward, so a value
/// is live from its first definition to its last use in code order).
/// Parameters keep registers 0 .. numParams-1. Marks KillRegister after the
/// last use of killable values. Sets F.numRegisters.
void allocateRegisters(LoweredFunction &F);

} // namespace rivet::vm::compiler
