//===- KernelSlot.h - A kernel-table entry bound for one VM -----*- C++ -*-===//
//
// Private to src/vm: shared by the interpreter loop (VirtualMachine.cc) and
// the kernel-call marshalling (KernelCall.cc).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "vm/ListPrimitives.h"
#include "vm/VirtualMachine.h"

#include <string>
#include <vector>

namespace rivet::vm {

/// A kernel-table entry bound for this VM, with its argument buffers: they
/// are reused by every call (kernels never call back into the VM), so a call
/// copies tensors into place without allocating.
struct VirtualMachine::KernelSlot {
  KernelEntry::Kind Kind;
  const KernelInfo *Info = nullptr;
  Attrs KernelAttrs; // without the marker attributes
  bool ListArgument = false;
  bool ListResult = false;
  bool TupleResult = false;
  std::string Name; // for messages
  /// ListPrimitive entries: the primitive, which reads the operand registers
  /// itself.
  ListPrimitive ListFn = nullptr;
  std::vector<Tensor> Ins, Outs;
  /// Native*: the generated kernel and its argument arrays. Its operands are
  /// read in place (the registers keep them alive), not copied into Ins.
  const NativeKernel *Native = nullptr;
  std::vector<const Tensor *> InPtrs;
  std::vector<void *> Buffers;
  std::vector<int64_t> Sizes;
  /// A native kernel on the GPU: its __global__ function, and the launch's
  /// argument array (pointers to Buffers' and Sizes' elements).
  void *GpuFn = nullptr;
  std::vector<void *> GpuArgs;
  /// Shape-function entries: the shape tensors made last, per output,
  /// rewritten in place by the next call once nothing else holds them.
  std::vector<ObjectRef> ShapeResults;
};

} // namespace rivet::vm
