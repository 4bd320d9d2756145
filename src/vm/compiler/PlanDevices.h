//===- PlanDevices.h - Put each value on a device ---------------*- C++ -*-===//
//
// Heterogeneous placement for --target cuda (TVM's PlanDevices, on lowered
// bytecode): each kernel call runs where its kernel-table entry says (the
// GPU for the native kernels placement chose, the CPU for the rest); the
// outputs of GPU kernels are allocated on the GPU; and DeviceCopy goes in
// front of an operand that a kernel, a branch or a shape computation reads
// on another device than the one it was made on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Device.h"
#include "vm/compiler/LoweredFunction.h"

#include <functional>

namespace rivet::vm::compiler {

/// How a kernel-table entry uses its operands.
struct KernelPlacement {
  Device device = Device::CPU;
  /// It reads only its inputs' shapes (a data-independent shape function),
  /// so they may be on any device.
  bool shapesOnly = false;
};

/// Places the values of every function of a module: Fns[I] is function
/// Index[I] of the executable, Main is @main's index. A value's device is
/// known where every instruction that writes it says so (a kernel's
/// allocation, a copy, a constant), and across calls: a parameter's device
/// is the join of the arguments of every direct call (main's come from the
/// host), a call's result the join of the callee's returns, to a fixed
/// point. What stays unknown (a loop's carried tensor, made on the host
/// before the loop and on the GPU in it; closure parameters; ADT fields)
/// gets a DeviceCopy that costs nothing at run time when the value is
/// already where it is needed. A copy is reused until a jump target or a
/// redefinition; one of a constant becomes a LoadConst on the device (each
/// VM uploads each constant once). Jumps go forward only (as the memory
/// planner assumes).
void planDevices(const std::vector<LoweredFunction *> &Fns,
                 const std::vector<uint32_t> &Index, uint32_t Main,
                 const std::function<KernelPlacement(uint32_t)> &KernelAt);

} // namespace rivet::vm::compiler
