//===- Executable.cc - Compiled program for the VM (in-memory parts) ------===//
//
// Binding the kernel table, structural verification, look-ups and the
// disassembler. Saving and loading are in ExecutableFile.cc.
//
//===----------------------------------------------------------------------===//
#include "vm/Executable.h"
#include "vm/NativeLibrary.h"
#include "vm/Object.h"
#include "vm/RvxFormat.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <span>

namespace rivet::vm {

namespace {

/// The index of the native kernel named Symbol, or -1.
int64_t findNative(const Executable &Exe, const std::string &Symbol) {
  for (size_t I = 0; I < Exe.nativeKernels.size(); ++I)
    if (Exe.nativeKernels[I].symbol == Symbol)
      return (int64_t)I;
  return -1;
}

/// A symbol a shared object can export and a message can quote.
bool isSaneSymbol(const std::string &S) {
  if (S.empty() || S.size() > 256 || std::isdigit((unsigned char)S[0]))
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
    Bad("the symbol name is not an identifier of at most 256 characters");
  if (K.buffers.empty())
    Bad("no output buffer");
  for (size_t B = 0; B < K.buffers.size(); ++B) {
    const NativeKernel::Buffer &Buf = K.buffers[B];
    if ((unsigned)Buf.dtype > (unsigned)kLastDType)
      Bad(fmt::format("buffer {} has an invalid dtype", B));
    if (Buf.dims.size() > 64)
      Bad(fmt::format("buffer {} has rank {}", B, Buf.dims.size()));
    for (int64_t D : Buf.dims)
      if (D < 0 && (uint64_t)(-(D + 1)) >= K.numSizes())
        Bad(fmt::format("buffer {} uses size parameter {} of {}", B, -(D + 1),
                        K.numSizes()));
  }
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

} // namespace

/// Binds every kernel entry to the registry (native ones to their kernel),
/// verifies the bytecode, then binds the native kernels to their code.
/// An operator this runtime does not have is named with its table index.
void Executable::resolve() {
  for (size_t K = 0; K < kernels.size(); ++K) {
    KernelEntry &E = kernels[K];
    if (E.isNative()) {
      int64_t N = findNative(*this, E.op);
      if (N < 0)
        fail("executable: kernel table entry {}: no native kernel '{}'", K,
             E.op);
      E.native = (uint32_t)N;
      E.info = nullptr;
      continue;
    }
    E.info = KernelRegistry::global().find(E.op);
    if (!E.info)
      fail("executable: kernel table entry {}: no kernel for operator '{}' in "
           "this runtime",
           K, E.op);
  }
  verify();
  bool AllBound = true;
  for (const NativeKernel &K : nativeKernels)
    AllBound &= K.fn != nullptr;
  if (AllBound || !nativeUnavailable.empty())
    return;
  if (!nativeCode || nativeCode->sharedObject.empty())
    fail("executable: {} native kernel{} but no native code",
         nativeKernels.size(), nativeKernels.size() == 1 ? "" : "s");
  if (nativeCode->elfMachine != NativeLibrary::hostElfMachine())
    fail("native code: compiled for ELF machine {} ({}), but this machine is "
         "{}; compile the model for this machine",
         nativeCode->elfMachine, nativeCode->triple,
         NativeLibrary::hostElfMachine());
  std::shared_ptr<NativeLibrary> Lib = NativeLibrary::load(
      std::span<const uint8_t>(nativeCode->sharedObject), "native code");
  for (NativeKernel &K : nativeKernels)
    K.fn = reinterpret_cast<RivetKernelFn>(Lib->symbol(K.symbol));
  nativeOwner = std::move(Lib);
}

uint32_t Executable::function(const std::string &Name) const {
  auto It = functionIndex.find(Name);
  if (It != functionIndex.end())
    return It->second;
  for (size_t I = 0; I < functions.size(); ++I)
    if (functions[I].name == Name)
      return (uint32_t)I;
  fail("executable has no function '@{}'", Name);
}

int32_t Executable::constructorTag(const std::string &Name) const {
  for (size_t I = 0; I < constructors.size(); ++I)
    if (constructors[I].name == Name)
      return (int32_t)I;
  return -1;
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

namespace {

/// Checks one function; Where() names the instruction in messages.
class FunctionVerifier {
public:
  FunctionVerifier(const Executable &Exe, const VMFunction &F)
      : Exe(Exe), F(F) {}

  void run() {
    if (F.numParams > F.numRegisters)
      fail("executable: function @{}: {} parameters but only {} registers",
           F.name, F.numParams, F.numRegisters);
    if (F.code.empty())
      fail("executable: function @{} has no code", F.name);
    for (Pc = 0; Pc < F.code.size(); ++Pc)
      check(F.code[Pc]);
    switch (F.code.back().op) {
    case Opcode::Ret:
    case Opcode::TailInvoke:
    case Opcode::TailInvokeClosure:
    case Opcode::Goto:
    case Opcode::Fatal: break;
    default:
      Pc = F.code.size() - 1;
      bad("the last instruction falls off the end of the function");
    }
  }

private:
  [[noreturn]] void bad(const std::string &Msg) const {
    fail("executable: function @{}, instruction {} ({}): {}", F.name, Pc,
         (unsigned)F.code[Pc].op <= (unsigned)Opcode::Fatal
             ? opcodeName(F.code[Pc].op)
             : "invalid opcode",
         Msg);
  }
  void reg(uint32_t R) const {
    if (R >= F.numRegisters)
      bad(fmt::format("register %{} out of range ({} registers)", R,
                      F.numRegisters));
  }
  void regList(uint32_t A, uint32_t B) const {
    if ((uint64_t)A + B > F.pool.size())
      bad(fmt::format("operand list [{}, {}) outside the pool of {}", A,
                      (uint64_t)A + B, F.pool.size()));
    for (uint32_t I = A; I < A + B; ++I)
      reg(F.pool[I]);
  }
  void func(uint32_t C) const {
    if (C >= Exe.functions.size())
      bad(fmt::format("function index {} out of range ({} functions)", C,
                      Exe.functions.size()));
  }
  void dtype(uint32_t C) const {
    if (C > (uint32_t)kLastDType)
      bad(fmt::format("invalid dtype code {}", C));
  }
  void target(int64_t Imm) const {
    int64_t T = (int64_t)Pc + Imm;
    if (T < 0 || T >= (int64_t)F.code.size())
      bad(fmt::format("jump target {} outside the function ({} instructions)",
                      T, F.code.size()));
  }
  void arity(uint32_t Callee, uint32_t Given) const {
    if (Exe.functions[Callee].numParams != Given)
      bad(fmt::format("@{} takes {} arguments, given {}",
                      Exe.functions[Callee].name,
                      Exe.functions[Callee].numParams, Given));
  }

  /// A native entry takes the kernel's inputs and one output (a tensor, or
  /// the shape register of NativeShapeFunction).
  void nativeArity(const KernelEntry &E, const Instruction &I) const {
    // The index resolve() bound, else a search (verify() before resolve()).
    int64_t N = E.native < Exe.nativeKernels.size() &&
                        Exe.nativeKernels[E.native].symbol == E.op
                    ? (int64_t)E.native
                    : findNative(Exe, E.op);
    if (N < 0)
      bad(fmt::format("no native kernel '{}'", E.op));
    const NativeKernel &K = Exe.nativeKernels[(size_t)N];
    if (I.d != K.numInputs() || I.b != I.d + 1)
      bad(fmt::format("native kernel '{}' takes {} inputs and 1 output, given "
                      "{} inputs and {} outputs",
                      K.symbol, K.numInputs(), I.d, I.b - I.d));
  }

  void check(const Instruction &I) {
    switch (I.op) {
    case Opcode::Move:
      reg(I.dst);
      reg(I.a);
      return;
    case Opcode::Ret: reg(I.a); return;
    case Opcode::Invoke: reg(I.dst); [[fallthrough]];
    case Opcode::TailInvoke:
      regList(I.a, I.b);
      func(I.c);
      arity(I.c, I.b);
      return;
    case Opcode::InvokeClosure: reg(I.dst); [[fallthrough]];
    case Opcode::TailInvokeClosure:
      regList(I.a, I.b);
      reg(I.c);
      return;
    case Opcode::InvokeKernel:
      if (I.c >= Exe.kernels.size())
        bad(fmt::format("kernel index {} out of range ({} kernels)", I.c,
                        Exe.kernels.size()));
      regList(I.a, I.b);
      if (I.d > I.b)
        bad(fmt::format("{} inputs of {} operands", I.d, I.b));
      if (Exe.kernels[I.c].kind == KernelEntry::Kind::AllocatingBuiltin) {
        reg(I.dst);
        if (I.d != I.b)
          bad("an allocating kernel takes no output registers");
      } else if ((unsigned)Exe.kernels[I.c].kind >
                 (unsigned)KernelEntry::Kind::NativeShapeFunction) {
        bad("invalid kernel kind");
      } else if (Exe.kernels[I.c].isNative()) {
        nativeArity(Exe.kernels[I.c], I);
      }
      return;
    case Opcode::AllocStorage:
      reg(I.dst);
      if (I.d == 1)
        reg(I.a);
      else if (I.imm < 0)
        bad(fmt::format("negative size {}", I.imm));
      return;
    case Opcode::AllocTensor:
      reg(I.dst);
      reg(I.a);
      dtype(I.c);
      if ((uint64_t)I.b + I.d > F.shapes.size())
        bad(fmt::format("shape [{}, {}) outside the shape pool of {}", I.b,
                        (uint64_t)I.b + I.d, F.shapes.size()));
      for (uint32_t K = I.b; K < I.b + I.d; ++K)
        if (F.shapes[K] < 0)
          bad(fmt::format("negative extent {}", F.shapes[K]));
      if (I.imm < 0)
        bad(fmt::format("negative offset {}", I.imm));
      return;
    case Opcode::AllocTensorReg:
      reg(I.dst);
      if (I.a != kNoStorage)
        reg(I.a);
      reg(I.b);
      dtype(I.c);
      if (I.imm < 0)
        bad(fmt::format("negative offset {}", I.imm));
      return;
    case Opcode::AllocADT:
      reg(I.dst);
      regList(I.a, I.b);
      if ((int32_t)I.c != ADTObj::kTupleTag) {
        if (I.c >= Exe.constructors.size())
          bad(fmt::format("constructor tag {} out of range ({} constructors)",
                          I.c, Exe.constructors.size()));
        if (Exe.constructors[I.c].arity != I.b)
          bad(fmt::format("constructor {} takes {} fields, given {}",
                          Exe.constructors[I.c].name,
                          Exe.constructors[I.c].arity, I.b));
      }
      return;
    case Opcode::AllocClosure:
      reg(I.dst);
      regList(I.a, I.b);
      func(I.c);
      if (I.b > Exe.functions[I.c].numParams)
        bad(fmt::format("{} captured values for @{}, which takes {}", I.b,
                        Exe.functions[I.c].name, Exe.functions[I.c].numParams));
      return;
    case Opcode::GetField:
      reg(I.dst);
      reg(I.a);
      if (I.imm < 0)
        bad(fmt::format("negative field index {}", I.imm));
      return;
    case Opcode::GetTag:
      reg(I.dst);
      reg(I.a);
      return;
    case Opcode::If:
      reg(I.a);
      reg(I.b);
      target(1);
      target(I.imm);
      return;
    case Opcode::Goto: target(I.imm); return;
    case Opcode::LoadConst:
      reg(I.dst);
      if (I.c >= Exe.constants.size())
        bad(fmt::format("constant index {} out of range ({} constants)", I.c,
                        Exe.constants.size()));
      if (!Exe.constants[I.c].defined())
        bad(fmt::format("constant {} is undefined", I.c));
      return;
    case Opcode::LoadConsti: reg(I.dst); return;
    case Opcode::ShapeOf:
      reg(I.dst);
      reg(I.a);
      return;
    case Opcode::ReshapeTensor:
      reg(I.dst);
      reg(I.a);
      reg(I.b);
      return;
    case Opcode::DeviceCopy:
      reg(I.dst);
      reg(I.a);
      return;
    case Opcode::KillRegister: reg(I.dst); return;
    case Opcode::Fatal:
      if (I.c >= Exe.strings.size())
        bad(fmt::format("string index {} out of range ({} strings)", I.c,
                        Exe.strings.size()));
      return;
    }
    bad(fmt::format("invalid opcode {}", (unsigned)I.op));
  }

  const Executable &Exe;
  const VMFunction &F;
  size_t Pc = 0;
};

} // namespace

void Executable::verify() const {
  for (size_t K = 0; K < nativeKernels.size(); ++K) {
    verifyNativeKernel(nativeKernels[K], K);
    if (findNative(*this, nativeKernels[K].symbol) != (int64_t)K)
      fail("executable: native kernel '{}' is defined twice",
           nativeKernels[K].symbol);
  }
  for (const auto &KV : functionIndex)
    if (KV.second >= functions.size())
      fail("executable: function '@{}' has index {} of {} functions", KV.first,
           KV.second, functions.size());
  for (const VMFunction &F : functions)
    FunctionVerifier(*this, F).run();
  if (!mainParams.empty()) {
    auto It = functionIndex.find("main");
    if (It != functionIndex.end() &&
        functions[It->second].numParams != mainParams.size())
      fail("executable: @main takes {} parameters but {} inputs are declared",
           functions[It->second].numParams, mainParams.size());
  }
}

//===----------------------------------------------------------------------===//
// Disassembler
//===----------------------------------------------------------------------===//

namespace {

std::string attrValueText(const AttrValue &V) {
  return std::visit(
      [](const auto &X) -> std::string {
        using T = std::decay_t<decltype(X)>;
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>)
          return fmt::format("{}", X);
        else if constexpr (std::is_same_v<T, std::string>)
          return fmt::format("\"{}\"", X);
        else if constexpr (std::is_same_v<T, Tensor>)
          return X.defined() ? X.typeString() : std::string("Tensor[?]");
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::string R = "[";
          for (size_t I = 0; I < X.size(); ++I)
            R += fmt::format("{}\"{}\"", I ? ", " : "", X[I]);
          return R + "]";
        } else
          return fmt::format("[{}]", fmt::join(X, ", "));
      },
      V);
}

/// Prints disassembly; tolerant of out-of-range indices (printed as such).
class Disassembler {
public:
  explicit Disassembler(const Executable &Exe) : Exe(Exe) {}

  std::string run() {
    for (size_t I = 0; I < Exe.functions.size(); ++I) {
      if (I)
        Out += "\n";
      function(Exe.functions[I]);
    }
    if (!Exe.nativeKernels.empty())
      nativeKernels();
    return Out;
  }

private:
  std::string funcName(uint32_t C) const {
    return C < Exe.functions.size() ? "@" + Exe.functions[C].name
                                    : fmt::format("@<function {}>", C);
  }
  std::string regs(const VMFunction &F, uint32_t A, uint32_t B) const {
    std::string R;
    for (uint64_t I = A; I < (uint64_t)A + B; ++I) {
      if (I != A)
        R += ", ";
      R +=
          I < F.pool.size() ? fmt::format("%{}", F.pool[I]) : std::string("%?");
    }
    return R;
  }
  std::string kernelName(uint32_t C) const {
    if (C >= Exe.kernels.size())
      return fmt::format("<kernel {}>", C);
    const KernelEntry &K = Exe.kernels[C];
    std::string R = K.isNative() ? "native " + K.op : K.op;
    if (K.kind == KernelEntry::Kind::ShapeFunction ||
        K.kind == KernelEntry::Kind::NativeShapeFunction)
      R += ".shape_fn";
    if (!K.attrs.empty()) {
      R += "{";
      bool First = true;
      for (const auto &KV : K.attrs.items()) {
        R += fmt::format("{}{}={}", First ? "" : ", ", KV.first,
                         attrValueText(KV.second));
        First = false;
      }
      R += "}";
    }
    return R;
  }
  static std::string dtypeText(uint32_t C) {
    return C <= (uint32_t)kLastDType ? std::string(dtypeName((DType)C))
                                     : fmt::format("<dtype {}>", C);
  }
  static std::string target(size_t Pc, int64_t Imm) {
    return fmt::format("{}{} (-> {})", Imm >= 0 ? "+" : "", Imm,
                       (int64_t)Pc + Imm);
  }

  /// The native kernels' signatures: s<P> is size parameter P. The same
  /// whether the code is JIT-compiled or a shared object.
  void nativeKernels() {
    Out += "\nnative kernels:\n";
    for (const NativeKernel &K : Exe.nativeKernels) {
      std::vector<std::string> Bufs;
      for (const NativeKernel::Buffer &B : K.buffers) {
        std::vector<std::string> Dims;
        for (int64_t D : B.dims)
          Dims.push_back(D >= 0 ? std::to_string(D)
                                : fmt::format("s{}", -(D + 1)));
        Bufs.push_back(fmt::format("{}[{}]",
                                   (unsigned)B.dtype <= (unsigned)kLastDType
                                       ? dtypeName(B.dtype)
                                       : "?",
                                   fmt::join(Dims, ", ")));
      }
      std::string Out1 = Bufs.empty() ? std::string("?") : Bufs.back();
      if (!Bufs.empty())
        Bufs.pop_back();
      Out +=
          fmt::format("  {}({}) -> {}", K.symbol, fmt::join(Bufs, ", "), Out1);
      for (size_t P = 0; P < K.sizeSources.size(); ++P)
        Out += fmt::format("{} s{} = input {} axis {}", P ? "," : ";", P,
                           K.sizeSources[P].buffer, K.sizeSources[P].axis);
      for (size_t I = 0; I < K.broadcastSizes.size(); ++I) {
        std::vector<std::string> Ops;
        for (int64_t D : K.broadcastSizes[I].operands)
          Ops.push_back(D >= 0 ? std::to_string(D)
                               : fmt::format("s{}", -(D + 1)));
        size_t P = K.sizeSources.size() + I;
        Out += fmt::format("{} s{} = broadcast({})", P ? "," : ";", P,
                           fmt::join(Ops, ", "));
      }
      Out += "\n";
    }
  }

  void function(const VMFunction &F) {
    Out += fmt::format("func @{}(params: {}, registers: {})\n", F.name,
                       F.numParams, F.numRegisters);
    for (size_t Pc = 0; Pc < F.code.size(); ++Pc)
      Out += fmt::format("  {}: {}\n", Pc, instruction(F, Pc));
  }

  std::string instruction(const VMFunction &F, size_t Pc) const {
    const Instruction &I = F.code[Pc];
    const char *N = opcodeName(I.op);
    switch (I.op) {
    case Opcode::Move: return fmt::format("{} %{} = %{}", N, I.dst, I.a);
    case Opcode::Ret: return fmt::format("{} %{}", N, I.a);
    case Opcode::Invoke:
      return fmt::format("{} %{} = {}({})", N, I.dst, funcName(I.c),
                         regs(F, I.a, I.b));
    case Opcode::TailInvoke:
      return fmt::format("{} {}({})", N, funcName(I.c), regs(F, I.a, I.b));
    case Opcode::InvokeClosure:
      return fmt::format("{} %{} = %{}({})", N, I.dst, I.c, regs(F, I.a, I.b));
    case Opcode::TailInvokeClosure:
      return fmt::format("{} %{}({})", N, I.c, regs(F, I.a, I.b));
    case Opcode::InvokeKernel: {
      uint32_t D = std::min(I.d, I.b);
      if (I.c < Exe.kernels.size() &&
          Exe.kernels[I.c].kind == KernelEntry::Kind::AllocatingBuiltin)
        return fmt::format("{} %{} = {}({})", N, I.dst, kernelName(I.c),
                           regs(F, I.a, D));
      return fmt::format("{} {}({}) -> ({})", N, kernelName(I.c),
                         regs(F, I.a, D), regs(F, I.a + D, I.b - D));
    }
    case Opcode::AllocStorage:
      if (I.d == 1)
        return fmt::format("{} %{} = %{} bytes", N, I.dst, I.a);
      return fmt::format("{} %{} = {} bytes", N, I.dst, I.imm);
    case Opcode::AllocTensor: {
      std::vector<int64_t> Shape;
      for (uint64_t K = I.b; K < (uint64_t)I.b + I.d && K < F.shapes.size();
           ++K)
        Shape.push_back(F.shapes[K]);
      return fmt::format("{} %{} = storage %{} + {}, {}, {}", N, I.dst, I.a,
                         I.imm, shapeToString(Shape), dtypeText(I.c));
    }
    case Opcode::AllocTensorReg:
      if (I.a == kNoStorage)
        return fmt::format("{} %{} = fresh storage, shape %{}, {}", N, I.dst,
                           I.b, dtypeText(I.c));
      return fmt::format("{} %{} = storage %{} + {}, shape %{}, {}", N, I.dst,
                         I.a, I.imm, I.b, dtypeText(I.c));
    case Opcode::AllocADT: {
      std::string Ctor = (int32_t)I.c == ADTObj::kTupleTag
                             ? std::string("tuple")
                         : I.c < Exe.constructors.size()
                             ? Exe.constructors[I.c].name
                             : fmt::format("<constructor {}>", I.c);
      return fmt::format("{} %{} = {}({})", N, I.dst, Ctor, regs(F, I.a, I.b));
    }
    case Opcode::AllocClosure:
      return fmt::format("{} %{} = {}[{}]", N, I.dst, funcName(I.c),
                         regs(F, I.a, I.b));
    case Opcode::GetField:
      return fmt::format("{} %{} = %{}.{}", N, I.dst, I.a, I.imm);
    case Opcode::GetTag: return fmt::format("{} %{} = tag %{}", N, I.dst, I.a);
    case Opcode::If:
      return fmt::format("{} %{} == %{} else {}", N, I.a, I.b,
                         target(Pc, I.imm));
    case Opcode::Goto: return fmt::format("{} {}", N, target(Pc, I.imm));
    case Opcode::LoadConst:
      return fmt::format("{} %{} = const[{}] {}", N, I.dst, I.c,
                         I.c < Exe.constants.size() &&
                                 Exe.constants[I.c].defined()
                             ? Exe.constants[I.c].typeString()
                             : std::string("<missing>"));
    case Opcode::LoadConsti: return fmt::format("{} %{} = {}", N, I.dst, I.imm);
    case Opcode::ShapeOf:
      return fmt::format("{} %{} = shape %{}", N, I.dst, I.a);
    case Opcode::ReshapeTensor:
      return fmt::format("{} %{} = %{}, shape %{}", N, I.dst, I.a, I.b);
    case Opcode::DeviceCopy:
      return fmt::format("{} %{} = %{} to device {}", N, I.dst, I.a, I.c);
    case Opcode::KillRegister: return fmt::format("{} %{}", N, I.dst);
    case Opcode::Fatal:
      return fmt::format("{} \"{}\"", N,
                         I.c < Exe.strings.size() ? Exe.strings[I.c]
                                                  : std::string("<missing>"));
    }
    return fmt::format("<invalid opcode {}>", (unsigned)I.op);
  }

  const Executable &Exe;
  std::string Out;
};

} // namespace

std::string Executable::disassemble() const {
  return Disassembler(*this).run();
}

} // namespace rivet::vm
