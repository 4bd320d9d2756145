//===- LoweredFunction.cc - Operands of lowered instructions, assembly ----===//
//
// The per-opcode knowledge of which operands are registers read or written,
// shared by the memory planner and the register allocator, and the final
// layout into a VMFunction.
//
//===----------------------------------------------------------------------===//
#include "vm/compiler/LoweredFunction.h"

#include "kernels/Error.h"

namespace rivet::vm::compiler {

void instUses(const PendingInst &P, std::vector<uint32_t> &Out) {
  const Instruction &I = P.inst;
  switch (I.op) {
  case Opcode::Move:
  case Opcode::Ret:
  case Opcode::GetField:
  case Opcode::GetTag:
  case Opcode::ShapeOf:
  case Opcode::DeviceCopy: Out.push_back(I.a); break;
  case Opcode::Invoke:
  case Opcode::TailInvoke:
  case Opcode::AllocADT:
  case Opcode::AllocClosure:
    Out.insert(Out.end(), P.regs.begin(), P.regs.end());
    break;
  case Opcode::InvokeClosure:
  case Opcode::TailInvokeClosure:
    Out.push_back(I.c);
    Out.insert(Out.end(), P.regs.begin(), P.regs.end());
    break;
  case Opcode::InvokeKernel:
    // Builtin outputs are preallocated tensors the kernel writes into: the
    // register is read (its value stays the same object).
    if (P.kernelKind == KernelEntry::Kind::Builtin ||
        P.kernelKind == KernelEntry::Kind::Native)
      Out.insert(Out.end(), P.regs.begin(), P.regs.end());
    else
      Out.insert(Out.end(), P.regs.begin(), P.regs.begin() + I.d);
    break;
  case Opcode::AllocStorage:
    if (I.d == 1)
      Out.push_back(I.a);
    break;
  case Opcode::AllocTensor: Out.push_back(I.a); break;
  case Opcode::AllocTensorReg:
    if (I.a != kNoStorage)
      Out.push_back(I.a);
    Out.push_back(I.b);
    break;
  case Opcode::If:
  case Opcode::ReshapeTensor:
    Out.push_back(I.a);
    Out.push_back(I.b);
    break;
  case Opcode::Goto:
  case Opcode::LoadConst:
  case Opcode::LoadConsti:
  case Opcode::KillRegister:
  case Opcode::Fatal: break;
  }
}

void instDefs(const PendingInst &P, std::vector<uint32_t> &Out) {
  const Instruction &I = P.inst;
  switch (I.op) {
  case Opcode::Move:
  case Opcode::Invoke:
  case Opcode::InvokeClosure:
  case Opcode::AllocStorage:
  case Opcode::AllocTensor:
  case Opcode::AllocTensorReg:
  case Opcode::AllocADT:
  case Opcode::AllocClosure:
  case Opcode::GetField:
  case Opcode::GetTag:
  case Opcode::LoadConst:
  case Opcode::LoadConsti:
  case Opcode::ShapeOf:
  case Opcode::ReshapeTensor:
  case Opcode::DeviceCopy: Out.push_back(I.dst); break;
  case Opcode::InvokeKernel:
    if (P.kernelKind == KernelEntry::Kind::AllocatingBuiltin)
      Out.push_back(I.dst);
    else if (P.kernelKind == KernelEntry::Kind::ShapeFunction ||
             P.kernelKind == KernelEntry::Kind::NativeShapeFunction)
      Out.insert(Out.end(), P.regs.begin() + I.d, P.regs.end());
    break;
  case Opcode::Ret:
  case Opcode::TailInvoke:
  case Opcode::TailInvokeClosure:
  case Opcode::If:
  case Opcode::Goto:
  case Opcode::KillRegister:
  case Opcode::Fatal: break;
  }
}

bool endsFallThrough(Opcode Op) {
  return Op == Opcode::Ret || Op == Opcode::TailInvoke ||
         Op == Opcode::TailInvokeClosure || Op == Opcode::Goto ||
         Op == Opcode::Fatal;
}

void renameRegisters(PendingInst &P, const std::vector<uint32_t> &Map) {
  auto R = [&](uint32_t &Reg) {
    RIVET_CHECK(Reg < Map.size() && Map[Reg] != kNoVReg,
                "vm compiler: register v{} has no allocation", Reg);
    Reg = Map[Reg];
  };
  Instruction &I = P.inst;
  switch (I.op) {
  case Opcode::Move:
  case Opcode::GetField:
  case Opcode::GetTag:
  case Opcode::ShapeOf:
  case Opcode::DeviceCopy:
  case Opcode::AllocTensor:
    R(I.dst);
    R(I.a);
    break;
  case Opcode::Ret: R(I.a); break;
  case Opcode::Invoke:
  case Opcode::AllocADT:
  case Opcode::AllocClosure:
    R(I.dst);
    for (uint32_t &X : P.regs)
      R(X);
    break;
  case Opcode::TailInvoke:
    for (uint32_t &X : P.regs)
      R(X);
    break;
  case Opcode::InvokeClosure:
    R(I.dst);
    R(I.c);
    for (uint32_t &X : P.regs)
      R(X);
    break;
  case Opcode::TailInvokeClosure:
    R(I.c);
    for (uint32_t &X : P.regs)
      R(X);
    break;
  case Opcode::InvokeKernel:
    if (P.kernelKind == KernelEntry::Kind::AllocatingBuiltin)
      R(I.dst);
    for (uint32_t &X : P.regs)
      R(X);
    break;
  case Opcode::AllocStorage:
    R(I.dst);
    if (I.d == 1)
      R(I.a);
    break;
  case Opcode::AllocTensorReg:
    R(I.dst);
    if (I.a != kNoStorage)
      R(I.a);
    R(I.b);
    break;
  case Opcode::If:
    R(I.a);
    R(I.b);
    break;
  case Opcode::ReshapeTensor:
    R(I.dst);
    R(I.a);
    R(I.b);
    break;
  case Opcode::LoadConst:
  case Opcode::LoadConsti: R(I.dst); break;
  case Opcode::Goto:
  case Opcode::KillRegister:
  case Opcode::Fatal: break;
  }
}

VMFunction assemble(const LoweredFunction &F) {
  // Final index of each pending instruction (deleted ones: of the next one).
  std::vector<uint32_t> NewIndex(F.code.size() + 1);
  uint32_t N = 0;
  for (size_t I = 0; I < F.code.size(); ++I) {
    NewIndex[I] = N;
    if (!F.code[I].deleted)
      N += 1 + (uint32_t)F.code[I].killAfter.size();
  }
  NewIndex[F.code.size()] = N;

  VMFunction Fn;
  Fn.name = F.name;
  Fn.numParams = F.numParams;
  Fn.numRegisters = F.numRegisters;
  Fn.code.reserve(N);
  for (size_t I = 0; I < F.code.size(); ++I) {
    const PendingInst &P = F.code[I];
    if (P.deleted)
      continue;
    Instruction Ins = P.inst;
    switch (Ins.op) {
    case Opcode::Invoke:
    case Opcode::TailInvoke:
    case Opcode::InvokeClosure:
    case Opcode::TailInvokeClosure:
    case Opcode::InvokeKernel:
    case Opcode::AllocADT:
    case Opcode::AllocClosure:
      Ins.a = (uint32_t)Fn.pool.size();
      Ins.b = (uint32_t)P.regs.size();
      Fn.pool.insert(Fn.pool.end(), P.regs.begin(), P.regs.end());
      break;
    case Opcode::AllocTensor:
      Ins.b = (uint32_t)Fn.shapes.size();
      Ins.d = (uint32_t)P.shape.size();
      Fn.shapes.insert(Fn.shapes.end(), P.shape.begin(), P.shape.end());
      break;
    case Opcode::If:
    case Opcode::Goto: {
      RIVET_CHECK(P.label >= 0 && (size_t)P.label < F.labelPos.size(),
                  "vm compiler: jump to an unknown label in {}", F.name);
      int64_t Target = NewIndex[F.labelPos[P.label]];
      Ins.imm = Target - (int64_t)Fn.code.size();
      break;
    }
    default: break;
    }
    Fn.code.push_back(Ins);
    for (uint32_t R : P.killAfter) {
      Instruction K;
      K.op = Opcode::KillRegister;
      K.dst = R;
      Fn.code.push_back(K);
    }
  }
  return Fn;
}

} // namespace rivet::vm::compiler
