//===- Executable.cc - Compiled program for the VM (in-memory parts) ------===//
//
// Binding the kernel table, structural verification, look-ups and the
// disassembler. Saving and loading are in ExecutableFile.cc.
//
//===----------------------------------------------------------------------===//
#include "vm/Executable.h"
#include "vm/ListPrimitives.h"
#include "vm/NativeLibrary.h"
#include "vm/Object.h"
#include "vm/RvxFormat.h"
#include "vm/Verifier.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string_view>

namespace rivet::vm {

/// Binds every kernel entry to the registry (native ones to their kernel),
/// verifies the bytecode, then binds the native kernels to their code.
/// An operator this runtime does not have is named with its table index.
void Executable::resolve() {
  for (size_t K = 0; K < kernels.size(); ++K) {
    KernelEntry &E = kernels[K];
    if (E.isNative()) {
      int64_t N = findNativeKernel(E.op);
      if (N < 0)
        fail("executable: kernel table entry {}: no native kernel '{}'", K,
             E.op);
      E.native = (uint32_t)N;
      E.info = nullptr;
      continue;
    }
    if (E.kind == KernelEntry::Kind::ListPrimitive) {
      if (!findListPrimitive(E.op))
        fail("executable: kernel table entry {}: no List primitive '{}' in "
             "this runtime",
             K, E.op);
      E.info = nullptr;
      continue;
    }
    E.info = KernelRegistry::global().find(E.op);
    if (!E.info)
      fail("executable: kernel table entry {}: no kernel for operator '{}' in "
           "this runtime",
           K, E.op);
    // A kernel of another device takes its outputs preallocated there (a
    // shape function reads only shapes, on the host).
    if (E.info->device != Device::CPU &&
        E.kind != KernelEntry::Kind::ShapeFunction &&
        (E.kind != KernelEntry::Kind::Builtin || !cudaCode))
      fail("executable: kernel table entry {}: kernel '{}' runs on {}, so it "
           "must be a builtin call in an executable with GPU code",
           K, E.op, deviceName(E.info->device));
  }
  for (const NativeKernel &K : nativeKernels)
    if (K.device != Device::CPU && !cudaCode)
      fail("executable: native kernel '{}' runs on {} but there is no code "
           "for that device",
           K.symbol, deviceName(K.device));
  verify();
  resolved = true;
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

Device Executable::kernelDevice(uint32_t K) const {
  if (K >= kernels.size())
    return Device::CPU;
  const KernelEntry &E = kernels[K];
  if (E.kind == KernelEntry::Kind::Builtin && E.info)
    return E.info->device; // a GPU library kernel (resolved)
  if (E.kind != KernelEntry::Kind::Native || E.native >= nativeKernels.size())
    return Device::CPU;
  return nativeKernels[E.native].device;
}

int64_t Executable::findNativeKernel(const std::string &Symbol) const {
  for (size_t I = 0; I < nativeKernels.size(); ++I)
    if (nativeKernels[I].symbol == Symbol)
      return (int64_t)I;
  return -1;
}

void Executable::verify() const { verifyExecutable(*this); }

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
    if (Exe.kernelDevice(C) != Device::CPU)
      R += fmt::format(" on {}", deviceName(Exe.kernelDevice(C)));
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
      auto Extents = [](const std::vector<int64_t> &Dims) {
        std::vector<std::string> S;
        for (int64_t D : Dims)
          S.push_back(D >= 0 ? std::to_string(D)
                             : fmt::format("s{}", -(D + 1)));
        return fmt::format("({})", fmt::join(S, ", "));
      };
      for (size_t I = 0; I < K.broadcastSizes.size(); ++I) {
        size_t P = K.sizeSources.size() + I;
        Out += fmt::format("{} s{} = broadcast{}", P ? "," : ";", P,
                           Extents(K.broadcastSizes[I].operands));
      }
      for (const NativeKernel::EmptyReduction &R : K.emptyReductions)
        Out += fmt::format("; {} over {} to {} must not be empty", R.op,
                           Extents(R.reduced), Extents(R.kept));
      Out += "\n";
    }
  }

  void function(const VMFunction &F) {
    Out += fmt::format("func @{}(params: {}, registers: {})\n", F.name,
                       F.numParams, F.numRegisters);
    for (size_t Pc = 0; Pc < F.code.size(); ++Pc)
      Out += fmt::format("  {}: {}\n", Pc, instruction(F, Pc));
  }

  /// The instruction as Opcodes.def's syntax column writes it, each field
  /// printed as its kind says.
  std::string instruction(const VMFunction &F, size_t Pc) const {
    const Instruction &I = F.code[Pc];
    if (!isValidOpcode(I.op))
      return fmt::format("<invalid opcode {}>", (unsigned)I.op);
    const OpcodeInfo &Info = opcodeInfo(I.op);
    std::string R = Info.name;
    R += ' ';
    for (const char *S = Info.syntax; *S; ++S) {
      if (*S != '{') {
        R += *S;
        continue;
      }
      const char *Close = std::strchr(S, '}');
      std::string_view Name(S + 1, (size_t)(Close - S - 1));
      static constexpr std::string_view Names[] = {"dst", "a", "b",
                                                   "c",   "d", "imm"};
      size_t K = std::find(std::begin(Names), std::end(Names), Name) -
                 std::begin(Names);
      R += operand(F, Pc, (Field)K, Info.fields[K]);
      S = Close;
    }
    return R;
  }

  /// Field Fld of instruction Pc, printed as kind K.
  std::string operand(const VMFunction &F, size_t Pc, Field Fld,
                      OperandKind K) const {
    const Instruction &I = F.code[Pc];
    int64_t V = I.field(Fld);
    uint32_t U = (uint32_t)V;
    switch (K) {
    case OperandKind::None:
    case OperandKind::ListLength:
    case OperandKind::InputCount:
    case OperandKind::Rank: return "";
    case OperandKind::Def:
    case OperandKind::Use:
    case OperandKind::Clear: return fmt::format("%{}", U);
    case OperandKind::StorageOrFresh:
      return U == kNoStorage ? std::string("fresh storage")
                             : fmt::format("storage %{}", U);
    case OperandKind::SizeRegister:
      return I.d == 1 ? fmt::format("%{}", U) : std::string();
    case OperandKind::Bytes: return I.d == 1 ? "" : std::to_string(V);
    case OperandKind::RegList: return regs(F, I.a, I.b);
    case OperandKind::KernelResult:
      return I.c < Exe.kernels.size() &&
                     KernelEntry::returnsResult(Exe.kernels[I.c].kind)
                 ? fmt::format("%{} = ", U)
                 : std::string();
    case OperandKind::KernelOperands: {
      uint32_t D = std::min(I.d, I.b);
      if (I.c < Exe.kernels.size() &&
          KernelEntry::returnsResult(Exe.kernels[I.c].kind))
        return fmt::format("({})", regs(F, I.a, D));
      return fmt::format("({}) -> ({})", regs(F, I.a, D),
                         regs(F, I.a + D, I.b - D));
    }
    case OperandKind::StaticShape: {
      std::vector<int64_t> Shape;
      for (uint64_t S = I.b; S < (uint64_t)I.b + I.d && S < F.shapes.size();
           ++S)
        Shape.push_back(F.shapes[S]);
      return shapeToString(Shape);
    }
    case OperandKind::Callee:
    case OperandKind::ClosureCode: return funcName(U);
    case OperandKind::Kernel: return kernelName(U);
    case OperandKind::Constant:
      return fmt::format("const[{}] {}", U,
                         U < Exe.constants.size() && Exe.constants[U].defined()
                             ? Exe.constants[U].typeString()
                             : std::string("<missing>"));
    case OperandKind::Constructor:
      return (int32_t)U == ADTObj::kTupleTag ? std::string("tuple")
             : U < Exe.constructors.size()   ? Exe.constructors[U].name
                                           : fmt::format("<constructor {}>", U);
    case OperandKind::DType: return dtypeText(U);
    case OperandKind::Message:
      return fmt::format("\"{}\"", U < Exe.strings.size()
                                       ? Exe.strings[U]
                                       : std::string("<missing>"));
    case OperandKind::Jump: return target(Pc, V);
    case OperandKind::Device:
      return U < kNumDevices ? deviceName((Device)U)
                             : fmt::format("<device {}>", U);
    case OperandKind::Placement:
      return U == 0            ? std::string()
             : U < kNumDevices ? fmt::format(" on {}", deviceName((Device)U))
                               : fmt::format(" on <device {}>", U);
    case OperandKind::SizeMode:
    case OperandKind::Offset:
    case OperandKind::FieldIndex:
    case OperandKind::Int: return std::to_string(V);
    }
    return "?";
  }

  const Executable &Exe;
  std::string Out;
};

} // namespace

std::string Executable::disassemble() const {
  return Disassembler(*this).run();
}

} // namespace rivet::vm
