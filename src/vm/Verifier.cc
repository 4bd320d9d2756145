//===- Verifier.cc - The one structural check of an executable ------------===//
//
// Each operand kind of Opcodes.def has one rule here; only InvokeKernel's
// kernel-kind-dependent arity is checked by opcode.
//
//===----------------------------------------------------------------------===//
#include "vm/Verifier.h"

#include "kernels/ListPrimitiveSpec.h"
#include "vm/Executable.h"
#include "vm/ListPrimitives.h"
#include "vm/Object.h"
#include "vm/RvxFormat.h"

#include <fmt/format.h>

#include <cctype>

namespace rivet::vm {

namespace {

using rvx::kMaxRank;
using rvx::kMaxRegisters;

/// A symbol a shared object can export and a message can quote.
bool isSaneSymbol(const std::string &S) {
  if (S.empty() || S.size() > rvx::kMaxSymbol ||
      std::isdigit((unsigned char)S[0]))
    return false;
  for (char C : S)
    if (!std::isalnum((unsigned char)C) && C != '_')
      return false;
  return true;
}

/// Checks the structure of native kernel K: a sane symbol, buffers of known
/// dtypes and bounded ranks, size parameters read from an input axis that
/// exists, broadcast sizes over constants and earlier size parameters,
/// extents referring to existing size parameters.
void verifyNativeKernel(const NativeKernel &K, size_t Index) {
  auto Bad = [&](const std::string &Msg) {
    fail("executable: native kernel {} ('{}'): {}", Index, K.symbol, Msg);
  };
  if (!isSaneSymbol(K.symbol))
    Bad(fmt::format("the symbol name is not an identifier of at most {} "
                    "characters",
                    rvx::kMaxSymbol));
  if (K.buffers.empty())
    Bad("no output buffer");
  for (size_t B = 0; B < K.buffers.size(); ++B) {
    const NativeKernel::Buffer &Buf = K.buffers[B];
    if ((unsigned)Buf.dtype > (unsigned)kLastDType)
      Bad(fmt::format("buffer {} has an invalid dtype", B));
    if (Buf.dims.size() > kMaxRank)
      Bad(fmt::format("buffer {} has rank {}", B, Buf.dims.size()));
    for (int64_t D : Buf.dims)
      if (D < 0 && (uint64_t)(-(D + 1)) >= K.numSizes())
        Bad(fmt::format("buffer {} uses size parameter {} of {}", B, -(D + 1),
                        K.numSizes()));
  }
  for (const NativeKernel::EmptyReduction &R : K.emptyReductions)
    for (const std::vector<int64_t> *Dims : {&R.reduced, &R.kept})
      for (int64_t D : *Dims)
        if (D < 0 && (uint64_t)(-(D + 1)) >= K.numSizes())
          Bad(fmt::format("the empty-reduction check of {} uses size "
                          "parameter {} of {}",
                          R.op, -(D + 1), K.numSizes()));
  for (size_t I = 0; I < K.broadcastSizes.size(); ++I) {
    size_t P = K.sizeSources.size() + I;
    const std::vector<int64_t> &Ops = K.broadcastSizes[I].operands;
    if (Ops.size() < 2 || Ops.size() > rvx::kMaxBroadcastOperands)
      Bad(fmt::format("size parameter {} broadcasts {} extents (2 to {})", P,
                      Ops.size(), rvx::kMaxBroadcastOperands));
    for (int64_t D : Ops)
      if (D < 0 && (uint64_t)(-(D + 1)) >= P)
        Bad(fmt::format("size parameter {} broadcasts size parameter {}, "
                        "which is not an earlier one",
                        P, -(D + 1)));
  }
  for (size_t P = 0; P < K.sizeSources.size(); ++P) {
    const NativeKernel::SizeSource &S = K.sizeSources[P];
    if (S.buffer >= K.numInputs())
      Bad(fmt::format("size parameter {} reads buffer {} of {} inputs", P,
                      S.buffer, K.numInputs()));
    if (S.axis >= K.buffers[S.buffer].dims.size())
      Bad(fmt::format("size parameter {} reads axis {} of input {}, which has "
                      "rank {}",
                      P, S.axis, S.buffer, K.buffers[S.buffer].dims.size()));
  }
}

const char *fieldName(Field F) {
  static const char *const Names[] = {"dst", "a", "b", "c", "d", "imm"};
  return Names[(size_t)F];
}

/// Checks one function, instruction by instruction, field by field.
class FunctionVerifier {
public:
  FunctionVerifier(const Executable &Exe, const VMFunction &F)
      : Exe(Exe), F(F) {}

  void run() {
    if (F.numRegisters > kMaxRegisters)
      fail("executable: function '{}' has {} registers (at most {})", F.name,
           F.numRegisters, kMaxRegisters);
    if (F.numParams > F.numRegisters)
      fail("executable: function '{}' has {} parameters but only {} "
           "registers",
           F.name, F.numParams, F.numRegisters);
    if (F.code.empty())
      fail("executable: function '{}' has no instructions", F.name);
    for (Pc = 0; Pc < F.code.size(); ++Pc)
      check(F.code[Pc]);
    // Every other instruction that falls through has a next one.
    if (!opcodeInfo(F.code.back().op).ends())
      fail("executable: function '{}': the last instruction ({}) can fall off "
           "the end",
           F.name, opcodeName(F.code.back().op));
  }

private:
  template <typename... Args>
  [[noreturn]] void bad(fmt::format_string<Args...> Fmt, Args &&...A) const {
    fail("executable: function '{}': instruction {} ({}): {}", F.name, Pc,
         opcodeName(F.code[Pc].op), fmt::format(Fmt, std::forward<Args>(A)...));
  }

  void reg(uint64_t R, const char *Role) const {
    if (R >= F.numRegisters)
      bad("{} register {} is out of range (the function has {} registers)",
          Role, R, F.numRegisters);
  }
  /// Registers pool[Begin .. Begin+Count).
  void regList(uint64_t Begin, uint64_t Count) const {
    if (Begin + Count > F.pool.size())
      bad("register list [{}, {}) is outside the pool of {} entries", Begin,
          Begin + Count, F.pool.size());
    for (uint64_t K = Begin; K < Begin + Count; ++K)
      reg(F.pool[K], "listed");
  }
  const VMFunction &func(uint32_t C) const {
    if (C >= Exe.functions.size())
      bad("function index {} is out of range ({} functions)", C,
          Exe.functions.size());
    return Exe.functions[C];
  }
  void nonNegative(int64_t V, const char *Role) const {
    if (V < 0)
      bad("negative {} {}", Role, V);
  }

  /// The rule of one operand kind; I.b is the list length or shape start,
  /// I.d the shape's rank or the kernel's input count (Opcodes.def).
  void operand(const Instruction &I, Field Fld, OperandKind K) {
    int64_t V = I.field(Fld);
    uint32_t U = (uint32_t)V;
    switch (K) {
    case OperandKind::None:
    case OperandKind::ListLength:
    case OperandKind::InputCount:
    case OperandKind::Rank:
    case OperandKind::Int: return; // checked with their partner, or any
    case OperandKind::Device:
    case OperandKind::Placement:
      if (U >= kNumDevices)
        bad("device {} does not exist (0 = CPU, 1 = CUDA)", V);
      // Without GPU code the VM neither sets up a GPU nor brings results
      // back from one.
      if (U != 0 && !Exe.needsGpu())
        bad("device {} ({}) in an executable without GPU code", V,
            deviceName((Device)U));
      return;
    case OperandKind::Def:
    case OperandKind::Use:
    case OperandKind::Clear: reg(U, fieldName(Fld)); return;
    case OperandKind::StorageOrFresh:
      if (U != kNoStorage)
        reg(U, "storage");
      return;
    case OperandKind::SizeRegister:
      if (I.d == 1)
        reg(U, "size");
      return;
    case OperandKind::RegList: regList(I.a, I.b); return;
    case OperandKind::KernelOperands: kernelOperands(I); return;
    case OperandKind::KernelResult:
      if (I.c < Exe.kernels.size() &&
          KernelEntry::returnsResult(Exe.kernels[I.c].kind))
        reg(U, "dst");
      return;
    case OperandKind::StaticShape:
      if (I.d > kMaxRank)
        bad("rank {} (at most {})", I.d, kMaxRank);
      if ((uint64_t)I.b + I.d > F.shapes.size())
        bad("shape [{}, {}) is outside the shapes of {} entries", I.b,
            (uint64_t)I.b + I.d, F.shapes.size());
      for (uint64_t S = I.b; S < (uint64_t)I.b + I.d; ++S)
        nonNegative(F.shapes[S], "extent");
      return;
    case OperandKind::Callee: {
      const VMFunction &Callee = func(U);
      if (I.b != Callee.numParams)
        bad("passes {} arguments to '{}', which takes {}", I.b, Callee.name,
            Callee.numParams);
      return;
    }
    case OperandKind::ClosureCode: {
      const VMFunction &Code = func(U);
      if (I.b > Code.numParams)
        bad("captures {} values for '{}', which takes {}", I.b, Code.name,
            Code.numParams);
      return;
    }
    case OperandKind::Kernel:
      if (U >= Exe.kernels.size())
        bad("kernel index {} is out of range ({} kernels)", U,
            Exe.kernels.size());
      return;
    case OperandKind::Constant:
      if (U >= Exe.constants.size())
        bad("constant index {} is out of range ({} constants)", U,
            Exe.constants.size());
      if (!Exe.constants[U].defined())
        bad("constant {} is undefined", U);
      return;
    case OperandKind::Constructor:
      if ((int32_t)U == ADTObj::kTupleTag)
        return;
      if (U >= Exe.constructors.size())
        bad("constructor tag {} is out of range ({} constructors)", U,
            Exe.constructors.size());
      if (I.b != Exe.constructors[U].arity)
        bad("{} fields for constructor '{}' of arity {}", I.b,
            Exe.constructors[U].name, Exe.constructors[U].arity);
      return;
    case OperandKind::DType:
      if (U > (uint32_t)kLastDType)
        bad("invalid dtype code {}", U);
      return;
    case OperandKind::Message:
      if (U >= Exe.strings.size())
        bad("string index {} is out of range ({} strings)", U,
            Exe.strings.size());
      return;
    case OperandKind::SizeMode:
      if (U > 1)
        bad("invalid size mode {}", U);
      return;
    case OperandKind::Bytes:
      if (I.d == 0)
        nonNegative(V, "size");
      return;
    case OperandKind::Offset: nonNegative(V, "offset"); return;
    case OperandKind::FieldIndex: nonNegative(V, "field index"); return;
    case OperandKind::Jump:
      if (V < -(int64_t)F.code.size() || V > (int64_t)F.code.size() ||
          (int64_t)Pc + V < 0 || (int64_t)Pc + V >= (int64_t)F.code.size())
        bad("jump offset {} leaves the function ({} instructions)", V,
            F.code.size());
      return;
    }
    bad("operand {} has an invalid kind", fieldName(Fld));
  }

  /// InvokeKernel's operand list: its length depends on the kernel entry.
  void kernelOperands(const Instruction &I) {
    if (I.c >= Exe.kernels.size())
      return; // the Kernel operand reports it
    if (I.d > I.b)
      bad("{} inputs but only {} registers listed", I.d, I.b);
    regList(I.a, I.b);
    const KernelEntry &E = Exe.kernels[I.c];
    if (KernelEntry::returnsResult(E.kind) && I.d != I.b)
      bad("an allocating kernel takes no output registers");
    if (E.kind == KernelEntry::Kind::ListPrimitive) {
      if (!findListPrimitiveSpec(E.op) || !findListPrimitive(E.op))
        bad("no List primitive '{}'", E.op);
      try {
        checkListOperands(E.op, I.d);
      } catch (const Error &X) {
        bad("{}", X.what());
      }
      return;
    }
    if (!E.isNative())
      return;
    // A native entry takes the kernel's inputs and one output (a tensor, or
    // the shape register of NativeShapeFunction). The index resolve()
    // bound, else a search.
    int64_t N = E.native < Exe.nativeKernels.size() &&
                        Exe.nativeKernels[E.native].symbol == E.op
                    ? (int64_t)E.native
                    : Exe.findNativeKernel(E.op);
    if (N < 0)
      bad("no native kernel '{}'", E.op);
    const NativeKernel &K = Exe.nativeKernels[(size_t)N];
    if (I.d != K.numInputs() || I.b != I.d + 1)
      bad("native kernel '{}' takes {} inputs and 1 output, given {} inputs "
          "and {} outputs",
          K.symbol, K.numInputs(), I.d, I.b - I.d);
  }

  void check(const Instruction &I) {
    if (!isValidOpcode(I.op))
      fail("executable: function '{}': instruction {}: invalid opcode {}",
           F.name, Pc, (unsigned)I.op);
    const OpcodeInfo &Info = opcodeInfo(I.op);
    for (size_t K = 0; K < kNumFields; ++K)
      operand(I, (Field)K, Info.fields[K]);
  }

  const Executable &Exe;
  const VMFunction &F;
  size_t Pc = 0;
};

} // namespace

void verifyExecutable(const Executable &Exe) {
  for (size_t K = 0; K < Exe.kernels.size(); ++K)
    if ((unsigned)Exe.kernels[K].kind > (unsigned)KernelEntry::kLastKind)
      fail("executable: kernel table entry {} has invalid kind {}", K,
           (unsigned)Exe.kernels[K].kind);
  for (size_t K = 0; K < Exe.nativeKernels.size(); ++K) {
    verifyNativeKernel(Exe.nativeKernels[K], K);
    if (Exe.findNativeKernel(Exe.nativeKernels[K].symbol) != (int64_t)K)
      fail("executable: native kernel '{}' is defined twice",
           Exe.nativeKernels[K].symbol);
  }
  for (const auto &KV : Exe.functionIndex)
    if (KV.second >= Exe.functions.size())
      fail("executable: function '@{}' has index {} of {} functions", KV.first,
           KV.second, Exe.functions.size());
  for (const VMFunction &F : Exe.functions)
    FunctionVerifier(Exe, F).run();
  if (!Exe.mainParams.empty()) {
    auto It = Exe.functionIndex.find("main");
    if (It != Exe.functionIndex.end() &&
        Exe.functions[It->second].numParams != Exe.mainParams.size())
      fail("executable: @main takes {} parameters but {} inputs are declared",
           Exe.functions[It->second].numParams, Exe.mainParams.size());
  }
}

} // namespace rivet::vm
