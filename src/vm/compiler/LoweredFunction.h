//===- LoweredFunction.h - Bytecode before allocation and layout -*- C++
//-*-===//
//
// What lowering produces and the later passes (memory planning, register
// allocation, assembly) rewrite: instructions over unbounded virtual
// registers, with operand lists inline and jumps naming labels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Type.h"
#include "vm/Executable.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rivet::vm::compiler {

inline constexpr uint32_t kNoVReg = 0xFFFFFFFFu;

/// One instruction of a lowered function. The fields of `inst` mean what
/// Instruction.h says, except that registers are virtual, the operand list
/// of Invoke*, InvokeKernel, AllocADT and AllocClosure is `regs` and the
/// static shape of AllocTensor is `shape` (assembly moves them to the pools).
struct PendingInst {
  Instruction inst;
  std::vector<uint32_t> regs;
  std::vector<int64_t> shape;
  /// If/Goto: the label jumped to.
  int32_t label = -1;
  /// InvokeKernel: the kind of the kernel-table entry (decides whether the
  /// operands after the inputs are written or read).
  KernelEntry::Kind kernelKind = KernelEntry::Kind::Builtin;
  /// InvokeKernel whose result may share its first input's memory
  /// (KernelInfo::viewFn): the memory planner keeps that input's storage
  /// for as long as the result lives.
  bool viewsFirstInput = false;
  /// AllocStorage emitted for one static tensor; the memory planner may move
  /// that tensor into the function's arena and delete this instruction.
  bool ownStorage = false;
  /// AllocTensor: bytes of the tensor (for the memory planner).
  uint64_t bytes = 0;
  /// Dropped by assembly (a label on it falls to the next instruction).
  bool deleted = false;
  /// Physical registers to kill right after this instruction.
  std::vector<uint32_t> killAfter;
  /// InvokeKernel of an operator or a fused group: where its values come
  /// from (VMFunction::origins).
  std::shared_ptr<const KernelOrigins> origins;
};

/// A function between lowering and assembly.
struct LoweredFunction {
  std::string name;
  uint32_t numParams = 0;
  std::vector<PendingInst> code;
  /// Label -> index in `code` of the instruction it precedes.
  std::vector<uint32_t> labelPos;
  /// Per virtual register: its IR type when known (null otherwise).
  std::vector<ir::Type> vregType;
  /// Per virtual register: worth a KillRegister after its last use.
  std::vector<bool> killable;
  /// The arena's AllocStorage (index 0 of `code`) and its register.
  uint32_t arenaVReg = kNoVReg;
  /// Set by register allocation.
  uint32_t numRegisters = 0;
};

/// The virtual registers instruction I reads / writes (derived from the
/// operand kinds of Opcodes.def).
void instUses(const PendingInst &I, std::vector<uint32_t> &Out);
void instDefs(const PendingInst &I, std::vector<uint32_t> &Out);
/// Rewrites every register operand through Map (virtual -> physical).
void renameRegisters(PendingInst &I, const std::vector<uint32_t> &Map);

/// Resolves labels, moves operand lists to the pools, emits the kills and
/// drops deleted instructions.
VMFunction assemble(const LoweredFunction &F);

} // namespace rivet::vm::compiler
