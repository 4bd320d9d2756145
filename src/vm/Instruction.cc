//===- Instruction.cc - The VM's instruction set --------------------------===//
#include "vm/Instruction.h"

namespace rivet::vm {

namespace {

/// Whether a row of Opcodes.def pairs its fields as the verifier, the
/// compiler and the disassembler assume: a list's length in b, a static
/// shape's rank in d, the kernel operands with their kernel, input count and
/// result, the dynamic storage size with its mode and byte count, and
/// arities checked against a list.
constexpr bool rowIsConsistent(const OpcodeInfo &R) {
  using K = OperandKind;
  auto Is = [&](Field F, K Kind) { return R.operand(F) == Kind; };
  bool List = Is(Field::A, K::RegList) || Is(Field::A, K::KernelOperands);
  if (List != Is(Field::B, K::ListLength))
    return false;
  if (Is(Field::B, K::StaticShape) != Is(Field::D, K::Rank))
    return false;
  bool Kernel = Is(Field::A, K::KernelOperands);
  if (Kernel != Is(Field::C, K::Kernel) ||
      Kernel != Is(Field::D, K::InputCount) ||
      Kernel != Is(Field::Dst, K::KernelResult))
    return false;
  bool Sized = Is(Field::D, K::SizeMode);
  if (Sized != Is(Field::A, K::SizeRegister) ||
      Sized != Is(Field::Imm, K::Bytes))
    return false;
  if ((Is(Field::C, K::Callee) || Is(Field::C, K::ClosureCode) ||
       Is(Field::C, K::Constructor)) &&
      !Is(Field::A, K::RegList))
    return false;
  return R.syntax != nullptr;
}

constexpr bool tableIsConsistent() {
  for (size_t Op = 0; Op < kNumOpcodes; ++Op)
    if (!rowIsConsistent(opcodeInfo((Opcode)Op)))
      return false;
  return true;
}
static_assert(tableIsConsistent(),
              "a row of Opcodes.def pairs its fields inconsistently");

} // namespace

int64_t Instruction::field(Field F) const {
  switch (F) {
  case Field::Dst: return dst;
  case Field::A: return a;
  case Field::B: return b;
  case Field::C: return c;
  case Field::D: return d;
  case Field::Imm: return imm;
  }
  return 0;
}

namespace {
Instruction make(Opcode Op, RegIndex Dst = 0, uint32_t A = 0, uint32_t B = 0,
                 uint32_t C = 0, uint32_t D = 0, int64_t Imm = 0) {
  return Instruction{Op, Dst, A, B, C, D, Imm};
}
} // namespace

Instruction Instruction::move(RegIndex Dst, RegIndex Src) {
  return make(Opcode::Move, Dst, Src);
}
Instruction Instruction::ret(RegIndex Result) {
  return make(Opcode::Ret, 0, Result);
}
Instruction Instruction::invoke(bool Tail, RegIndex Dst, uint32_t Func) {
  return make(Tail ? Opcode::TailInvoke : Opcode::Invoke, Tail ? 0 : Dst, 0, 0,
              Func);
}
Instruction Instruction::invokeClosure(bool Tail, RegIndex Dst,
                                       RegIndex Closure) {
  return make(Tail ? Opcode::TailInvokeClosure : Opcode::InvokeClosure,
              Tail ? 0 : Dst, 0, 0, Closure);
}
Instruction Instruction::invokeKernel(uint32_t Kernel, uint32_t NumInputs,
                                      RegIndex Dst) {
  return make(Opcode::InvokeKernel, Dst, 0, 0, Kernel, NumInputs);
}
Instruction Instruction::allocStorage(RegIndex Dst, int64_t Bytes) {
  return make(Opcode::AllocStorage, Dst, 0, 0, 0, 0, Bytes);
}
Instruction Instruction::allocStorageDynamic(RegIndex Dst, RegIndex Bytes) {
  return make(Opcode::AllocStorage, Dst, Bytes, 0, 0, 1);
}
Instruction Instruction::allocTensor(RegIndex Dst, RegIndex Storage,
                                     int64_t Offset, uint32_t DTypeCode) {
  return make(Opcode::AllocTensor, Dst, Storage, 0, DTypeCode, 0, Offset);
}
Instruction Instruction::allocTensorReg(RegIndex Dst, RegIndex Storage,
                                        int64_t Offset, RegIndex Shape,
                                        uint32_t DTypeCode) {
  return make(Opcode::AllocTensorReg, Dst, Storage, Shape, DTypeCode, 0,
              Offset);
}
Instruction Instruction::allocListTensor(RegIndex Dst, RegIndex List,
                                         RegIndex Shape, uint32_t DTypeCode) {
  return make(Opcode::AllocListTensor, Dst, List, Shape, DTypeCode);
}
Instruction Instruction::allocADT(RegIndex Dst, uint32_t Tag) {
  return make(Opcode::AllocADT, Dst, 0, 0, Tag);
}
Instruction Instruction::allocClosure(RegIndex Dst, uint32_t Func) {
  return make(Opcode::AllocClosure, Dst, 0, 0, Func);
}
Instruction Instruction::getField(RegIndex Dst, RegIndex Value, int64_t Index) {
  return make(Opcode::GetField, Dst, Value, 0, 0, 0, Index);
}
Instruction Instruction::getTag(RegIndex Dst, RegIndex Value) {
  return make(Opcode::GetTag, Dst, Value);
}
Instruction Instruction::ifEqual(RegIndex Lhs, RegIndex Rhs, int64_t Offset) {
  return make(Opcode::If, 0, Lhs, Rhs, 0, 0, Offset);
}
Instruction Instruction::jump(int64_t Offset) {
  return make(Opcode::Goto, 0, 0, 0, 0, 0, Offset);
}
Instruction Instruction::loadConst(RegIndex Dst, uint32_t Constant) {
  return make(Opcode::LoadConst, Dst, 0, 0, Constant);
}
Instruction Instruction::loadConsti(RegIndex Dst, int64_t Value) {
  return make(Opcode::LoadConsti, Dst, 0, 0, 0, 0, Value);
}
Instruction Instruction::shapeOf(RegIndex Dst, RegIndex Tensor) {
  return make(Opcode::ShapeOf, Dst, Tensor);
}
Instruction Instruction::reshapeTensor(RegIndex Dst, RegIndex Tensor,
                                       RegIndex Shape) {
  return make(Opcode::ReshapeTensor, Dst, Tensor, Shape);
}
Instruction Instruction::deviceCopy(RegIndex Dst, RegIndex Tensor,
                                    uint32_t Device) {
  return make(Opcode::DeviceCopy, Dst, Tensor, 0, Device);
}
Instruction Instruction::killRegister(RegIndex Reg) {
  return make(Opcode::KillRegister, Reg);
}
Instruction Instruction::fatal(uint32_t Message) {
  return make(Opcode::Fatal, 0, 0, 0, Message);
}

} // namespace rivet::vm
