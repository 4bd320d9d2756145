//===- Instruction.cc - The VM's instruction set --------------------------===//
#include "vm/Instruction.h"

namespace rivet::vm {

const char *opcodeName(Opcode Op) {
  switch (Op) {
  case Opcode::Move: return "Move";
  case Opcode::Ret: return "Ret";
  case Opcode::Invoke: return "Invoke";
  case Opcode::TailInvoke: return "TailInvoke";
  case Opcode::InvokeClosure: return "InvokeClosure";
  case Opcode::TailInvokeClosure: return "TailInvokeClosure";
  case Opcode::InvokeKernel: return "InvokeKernel";
  case Opcode::AllocStorage: return "AllocStorage";
  case Opcode::AllocTensor: return "AllocTensor";
  case Opcode::AllocTensorReg: return "AllocTensorReg";
  case Opcode::AllocADT: return "AllocADT";
  case Opcode::AllocClosure: return "AllocClosure";
  case Opcode::GetField: return "GetField";
  case Opcode::GetTag: return "GetTag";
  case Opcode::If: return "If";
  case Opcode::Goto: return "Goto";
  case Opcode::LoadConst: return "LoadConst";
  case Opcode::LoadConsti: return "LoadConsti";
  case Opcode::ShapeOf: return "ShapeOf";
  case Opcode::ReshapeTensor: return "ReshapeTensor";
  case Opcode::DeviceCopy: return "DeviceCopy";
  case Opcode::KillRegister: return "KillRegister";
  case Opcode::Fatal: return "Fatal";
  }
  return "<invalid opcode>";
}

} // namespace rivet::vm
