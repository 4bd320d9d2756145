//===- Instruction.h - The VM's instruction set -----------------*- C++ -*-===//
//
// Register machine, one frame of registers per call. Every instruction has a
// fixed layout: an opcode, a destination register and up to three operands;
// variable-length operand lists (call arguments, kernel inputs/outputs,
// fields, shapes) live in the function's operand pool at [a, a + b).
// docs/bytecode.md describes each instruction in one line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rivet::vm {

using RegIndex = uint32_t;
/// AllocTensorReg's storage operand when the tensor gets storage of its own.
inline constexpr RegIndex kNoStorage = 0xFFFFFFFFu;

enum class Opcode : uint8_t {
  // dst = reg[a]
  Move,
  // return reg[a]
  Ret,
  // dst = funcs[c](reg[pool[a .. a+b)])
  Invoke,
  // tail call: replace this frame with funcs[c](reg[pool[a .. a+b)])
  TailInvoke,
  // dst = closure reg[c](reg[pool[a .. a+b)])
  InvokeClosure,
  // tail call of closure reg[c](reg[pool[a .. a+b)])
  TailInvokeClosure,
  // kernels[c](inputs: reg[pool[a .. a+d)], outputs: reg[pool[a+d .. a+b)]);
  // for a kernel that allocates its own result (KernelEntry::Kind::
  // AllocatingBuiltin) the result goes to dst instead
  InvokeKernel,
  // dst = new storage of imm bytes (d = 1: the size is the int64 scalar reg[a])
  AllocStorage,
  // dst = tensor in storage reg[a] at byte offset imm, dtype c, static shape
  // shapes[b .. b+d)
  AllocTensor,
  // dst = tensor in storage reg[a] at byte offset imm, dtype c, shape from the
  // int64 1-D tensor reg[b]; a == kNoStorage: in fresh pooled storage
  AllocTensorReg,
  // dst = ADT(tag c, fields reg[pool[a .. a+b)])
  AllocADT,
  // dst = closure(funcs[c], captured reg[pool[a .. a+b)])
  AllocClosure,
  // dst = reg[a].fields[imm]
  GetField,
  // dst = int64 scalar tensor: the tag of ADT reg[a]
  GetTag,
  // if scalar(reg[a]) == scalar(reg[b]) then pc += 1 else pc += imm
  If,
  // pc += imm
  Goto,
  // dst = constants[c]
  LoadConst,
  // dst = int64 scalar tensor imm
  LoadConsti,
  // dst = int64 1-D tensor: the shape of tensor reg[a]
  ShapeOf,
  // dst = tensor reg[a] viewed with the shape in int64 tensor reg[b]
  ReshapeTensor,
  // dst = copy of tensor reg[a] on device c (0 = CPU)
  DeviceCopy,
  // reg[dst] = null (the value is dead; its memory may be reused)
  KillRegister,
  // raise rivet::Error(strings[c])
  Fatal,
};

/// Name of an opcode as the disassembler prints it ("InvokeKernel").
const char *opcodeName(Opcode Op);

/// 32 bytes. Operand pools: `pool` (uint32 register lists) and `shapes`
/// (int64 static shapes) belong to the function (VMFunction).
struct Instruction {
  Opcode op;
  RegIndex dst = 0;
  uint32_t a = 0, b = 0, c = 0, d = 0;
  int64_t imm = 0;
};

} // namespace rivet::vm
