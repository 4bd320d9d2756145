//===- LoweredFunction.cc - Operands of lowered instructions, assembly ----===//
//
// Which operands are registers read or written (from the operand kinds of
// Opcodes.def), shared by the memory planner and the register allocator,
// and the final layout into a VMFunction.
//
//===----------------------------------------------------------------------===//
#include "vm/compiler/LoweredFunction.h"

#include "kernels/Error.h"

namespace rivet::vm::compiler {

namespace {

enum class Role { Use, Def };

uint32_t &registerField(Instruction &I, Field F) {
  switch (F) {
  case Field::Dst: return I.dst;
  case Field::A: return I.a;
  case Field::B: return I.b;
  case Field::C: return I.c;
  case Field::D: return I.d;
  case Field::Imm: break;
  }
  fail("vm compiler: imm is never a register");
}

/// Calls Fn(Reg, Role) for every register operand of P, as the operand
/// kinds of Opcodes.def say; only InvokeKernel's outputs depend on the
/// kernel entry (written by shape functions, read by kernels that fill
/// preallocated tensors). PI is PendingInst, const or not.
template <typename PI, typename Fn> void forEachRegister(PI &P, Fn &&Visit) {
  auto &I = P.inst;
  const OpcodeInfo &Info = opcodeInfo(I.op);
  for (size_t K = 0; K < kNumFields; ++K) {
    Field Fld = (Field)K;
    auto Reg = [&]() -> auto & {
      return registerField(const_cast<Instruction &>(I), Fld);
    };
    switch (Info.fields[K]) {
    case OperandKind::Def: Visit(Reg(), Role::Def); break;
    case OperandKind::Use: Visit(Reg(), Role::Use); break;
    case OperandKind::StorageOrFresh:
      if (I.a != kNoStorage)
        Visit(Reg(), Role::Use);
      break;
    case OperandKind::SizeRegister:
      if (I.d == 1)
        Visit(Reg(), Role::Use);
      break;
    case OperandKind::RegList:
      for (auto &R : P.regs)
        Visit(R, Role::Use);
      break;
    case OperandKind::KernelResult:
      if (KernelEntry::returnsResult(P.kernelKind))
        Visit(Reg(), Role::Def);
      break;
    case OperandKind::KernelOperands: {
      bool WritesOutputs =
          P.kernelKind == KernelEntry::Kind::ShapeFunction ||
          P.kernelKind == KernelEntry::Kind::NativeShapeFunction;
      for (size_t R = 0; R < P.regs.size(); ++R)
        Visit(P.regs[R], R >= I.d && WritesOutputs ? Role::Def : Role::Use);
      break;
    }
    case OperandKind::None:
    case OperandKind::Clear: // KillRegister: added after allocation
    case OperandKind::ListLength:
    case OperandKind::InputCount:
    case OperandKind::StaticShape:
    case OperandKind::Rank:
    case OperandKind::Callee:
    case OperandKind::ClosureCode:
    case OperandKind::Kernel:
    case OperandKind::Constant:
    case OperandKind::Constructor:
    case OperandKind::DType:
    case OperandKind::Device:
    case OperandKind::Placement:
    case OperandKind::Message:
    case OperandKind::SizeMode:
    case OperandKind::Bytes:
    case OperandKind::Offset:
    case OperandKind::FieldIndex:
    case OperandKind::Jump:
    case OperandKind::Int: break; // not a register
    }
  }
}

} // namespace

void instUses(const PendingInst &P, std::vector<uint32_t> &Out) {
  forEachRegister(P, [&](uint32_t R, Role Ro) {
    if (Ro == Role::Use)
      Out.push_back(R);
  });
}

void instDefs(const PendingInst &P, std::vector<uint32_t> &Out) {
  forEachRegister(P, [&](uint32_t R, Role Ro) {
    if (Ro == Role::Def)
      Out.push_back(R);
  });
}

void renameRegisters(PendingInst &P, const std::vector<uint32_t> &Map) {
  forEachRegister(P, [&](uint32_t &Reg, Role) {
    RIVET_CHECK(Reg < Map.size() && Map[Reg] != kNoVReg,
                "vm compiler: register v{} has no allocation", Reg);
    Reg = Map[Reg];
  });
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
    const OpcodeInfo &Info = opcodeInfo(Ins.op);
    OperandKind A = Info.operand(Field::A);
    if (A == OperandKind::RegList || A == OperandKind::KernelOperands) {
      Ins.a = (uint32_t)Fn.pool.size();
      Ins.b = (uint32_t)P.regs.size();
      Fn.pool.insert(Fn.pool.end(), P.regs.begin(), P.regs.end());
    }
    if (Info.operand(Field::B) == OperandKind::StaticShape) {
      Ins.b = (uint32_t)Fn.shapes.size();
      Ins.d = (uint32_t)P.shape.size();
      Fn.shapes.insert(Fn.shapes.end(), P.shape.begin(), P.shape.end());
    }
    if (Info.operand(Field::Imm) == OperandKind::Jump) {
      RIVET_CHECK(P.label >= 0 && (size_t)P.label < F.labelPos.size(),
                  "vm compiler: jump to an unknown label in {}", F.name);
      int64_t Target = NewIndex[F.labelPos[P.label]];
      Ins.imm = Target - (int64_t)Fn.code.size();
    }
    if (P.origins) {
      Fn.origins.resize(Fn.code.size());
      Fn.origins.push_back(P.origins);
    }
    Fn.code.push_back(Ins);
    for (uint32_t R : P.killAfter)
      Fn.code.push_back(Instruction::killRegister(R));
  }
  if (!Fn.origins.empty())
    Fn.origins.resize(Fn.code.size());
  return Fn;
}

} // namespace rivet::vm::compiler
