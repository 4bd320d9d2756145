//===- Instruction.h - The VM's instruction set -----------------*- C++ -*-===//
//
// Register machine, one frame of registers per call. Every instruction has a
// fixed layout: an opcode, a destination register and up to four operands
// and an immediate; variable-length operand lists (call arguments, kernel
// inputs/outputs, fields) live in the function's operand pool at [a, a + b).
// What each field of each opcode holds is written once, in Opcodes.def;
// docs/bytecode.md describes each instruction in one line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rivet::vm {

using RegIndex = uint32_t;
/// AllocTensorReg's storage operand when the tensor gets storage of its own.
inline constexpr RegIndex kNoStorage = 0xFFFFFFFFu;

enum class Opcode : uint8_t {
#define RIVET_OPCODE(Name, ...) Name,
#include "vm/Opcodes.def"
};

inline constexpr size_t kNumOpcodes = 0
#define RIVET_OPCODE(Name, ...) +1
#include "vm/Opcodes.def"
    ;

/// What one field of an instruction holds (a column of Opcodes.def).
enum class OperandKind : uint8_t {
  None,           // unused
  Def,            // a register the instruction writes
  Use,            // a register the instruction reads
  Clear,          // a register the instruction empties (KillRegister)
  StorageOrFresh, // a storage register read, or kNoStorage (fresh storage)
  SizeRegister,   // a register read when the SizeMode field is 1
  RegList,        // a: first pool entry of registers read, ListLength long
  ListLength,     // b: the length of the register list at a
  KernelOperands, // a: a kernel's inputs then outputs in the pool
  KernelResult,   // dst: written when the kernel entry allocates its result
  InputCount,     // d: how many of a kernel's operands are inputs
  StaticShape,    // b: first extent in the shapes pool, Rank long
  Rank,           // d: the length of the static shape at b
  Callee,         // c: a function called with exactly ListLength arguments
  ClosureCode,    // c: a function capturing at most its parameter count
  Kernel,         // c: a kernel-table index
  Constant,       // c: a constant-table index
  Constructor,    // c: a constructor tag (arity ListLength), or kTupleTag
  DType,          // c: a DType code
  Device,         // c: a device index (kernels/Device.h: 0 CPU, 1 CUDA)
  Placement,      // c or d: the device a value is made on (as Device)
  Message,        // c: a string-table index
  SizeMode,       // d: 0 (imm is the size) or 1 (SizeRegister a is)
  Bytes,          // imm: a byte count >= 0 when SizeMode is 0
  Offset,         // imm: a byte offset >= 0
  FieldIndex,     // imm: a field index >= 0
  Jump,           // imm: a target relative to this instruction
  Int,            // imm: any int64
};

/// The fields of an instruction, in the order of Opcodes.def's columns.
enum class Field : uint8_t { Dst, A, B, C, D, Imm };
inline constexpr size_t kNumFields = 6;

/// Properties of an opcode (Opcodes.def's Flags column).
enum OpcodeFlags : uint8_t {
  NoFlags = 0,
  /// Control never falls through to the next instruction.
  Ends = 1,
  /// The registers it reads escape the frame's lifetime analysis (stored in
  /// a frame or an object): the memory planner keeps them out of the arena.
  Escapes = 2,
  /// dst refers to the same storage as reg[a].
  AliasesA = 4,
};

/// One row of Opcodes.def.
struct OpcodeInfo {
  const char *name;
  std::array<OperandKind, kNumFields> fields;
  uint8_t flags;
  /// The disassembly after the name ({dst}, {a}, ... print the fields).
  const char *syntax;

  constexpr OperandKind operand(Field F) const { return fields[(size_t)F]; }
  constexpr bool ends() const { return flags & Ends; }
  /// Control may go elsewhere than the next instruction (a jump operand).
  constexpr bool jumps() const {
    return fields[(size_t)Field::Imm] == OperandKind::Jump;
  }
  constexpr bool escapes() const { return flags & Escapes; }
  constexpr bool aliasesA() const { return flags & AliasesA; }
};

namespace opcode_table {
using enum OperandKind;
inline constexpr OpcodeInfo kOpcodeTable[] = {
#define RIVET_OPCODE(Name, Dst, A, B, C, D, Imm, Flags, Syntax)                \
  {#Name, {Dst, A, B, C, D, Imm}, Flags, Syntax},
#include "vm/Opcodes.def"
};
static_assert(std::size(kOpcodeTable) == kNumOpcodes);
} // namespace opcode_table

/// The row of Op; Op must be valid (isValidOpcode).
constexpr const OpcodeInfo &opcodeInfo(Opcode Op) {
  return opcode_table::kOpcodeTable[(size_t)Op];
}
constexpr bool isValidOpcode(Opcode Op) { return (size_t)Op < kNumOpcodes; }
/// Name of an opcode as the disassembler prints it ("InvokeKernel"), or
/// "<invalid opcode>".
constexpr const char *opcodeName(Opcode Op) {
  return isValidOpcode(Op) ? opcodeInfo(Op).name : "<invalid opcode>";
}

/// 32 bytes. Operand pools: `pool` (uint32 register lists) and `shapes`
/// (int64 static shapes) belong to the function (VMFunction). The builders
/// name each opcode's operands; list and shape operands are filled in by
/// whoever lays out the pools (the compiler's assembly, or a test).
struct Instruction {
  Opcode op;
  RegIndex dst = 0;
  uint32_t a = 0, b = 0, c = 0, d = 0;
  int64_t imm = 0;

  /// The value of field F (imm truncated to 64 bits as stored).
  int64_t field(Field F) const;

  static Instruction move(RegIndex Dst, RegIndex Src);
  static Instruction ret(RegIndex Result);
  /// Invoke (TailInvoke when Tail) of function Func; the arguments are a
  /// register list.
  static Instruction invoke(bool Tail, RegIndex Dst, uint32_t Func);
  static Instruction invokeClosure(bool Tail, RegIndex Dst, RegIndex Closure);
  /// A kernel-table entry with NumInputs inputs; Dst only for an allocating
  /// entry.
  static Instruction invokeKernel(uint32_t Kernel, uint32_t NumInputs,
                                  RegIndex Dst = 0);
  static Instruction allocStorage(RegIndex Dst, int64_t Bytes);
  static Instruction allocStorageDynamic(RegIndex Dst, RegIndex Bytes);
  /// The static shape is laid out separately (shapes[b .. b+d)).
  static Instruction allocTensor(RegIndex Dst, RegIndex Storage, int64_t Offset,
                                 uint32_t DTypeCode);
  /// Storage kNoStorage: fresh pooled storage.
  static Instruction allocTensorReg(RegIndex Dst, RegIndex Storage,
                                    int64_t Offset, RegIndex Shape,
                                    uint32_t DTypeCode);
  /// Host memory after the tensors placed for List reg[List].
  static Instruction allocListTensor(RegIndex Dst, RegIndex List,
                                     RegIndex Shape, uint32_t DTypeCode);
  static Instruction allocADT(RegIndex Dst, uint32_t Tag);
  static Instruction allocClosure(RegIndex Dst, uint32_t Func);
  static Instruction getField(RegIndex Dst, RegIndex Value, int64_t Index);
  static Instruction getTag(RegIndex Dst, RegIndex Value);
  /// The jump offset is filled in when labels are resolved.
  static Instruction ifEqual(RegIndex Lhs, RegIndex Rhs, int64_t Offset = 0);
  static Instruction jump(int64_t Offset = 0);
  static Instruction loadConst(RegIndex Dst, uint32_t Constant);
  static Instruction loadConsti(RegIndex Dst, int64_t Value);
  static Instruction shapeOf(RegIndex Dst, RegIndex Tensor);
  static Instruction reshapeTensor(RegIndex Dst, RegIndex Tensor,
                                   RegIndex Shape);
  static Instruction deviceCopy(RegIndex Dst, RegIndex Tensor, uint32_t Device);
  static Instruction killRegister(RegIndex Reg);
  static Instruction fatal(uint32_t Message);
};

} // namespace rivet::vm
