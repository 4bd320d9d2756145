//===- NativeKernelBuilder.cc - Fused groups as native kernels ------------===//
#include "vm/compiler/NativeKernelBuilder.h"

#include "codegen/CodegenBackend.h"
#include "codegen/LowerPrimitive.h"
#include "codegen/SharedObject.h"
#if RIVET_HAVE_CUDA
#include "codegen/cuda/EmitCuda.h"
#include "codegen/cuda/Nvrtc.h"
#endif
#include "kernels/Error.h"
#include "vm/RvxFormat.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>

namespace rivet::vm::compiler {

namespace {

std::string firstOpName(const ir::FunctionNode &Fn) {
  ir::Expr C = firstOperatorCall(Fn);
  return C ? C->as<ir::CallNode>()->callee->as<ir::OpNode>()->name()
           : std::string("group");
}

/// Op with every character a C identifier cannot have replaced by '_'.
std::string symbolPart(const std::string &Op) {
  std::string S = Op;
  for (char &C : S)
    if (!std::isalnum((unsigned char)C))
      C = '_';
  return S;
}

/// The "+name" entries of an LLVM feature string.
std::set<std::string> enabledFeatures(const std::string &Features) {
  std::set<std::string> Out;
  std::stringstream SS(Features);
  std::string F;
  while (std::getline(SS, F, ','))
    if (F.size() > 1 && F[0] == '+')
      Out.insert(F.substr(1));
  return Out;
}

/// The host as LLVM sees it (detected once).
const codegen::TargetOptions &host() {
  static const codegen::TargetOptions H = codegen::hostTarget();
  return H;
}

bool isHostCpu(const std::string &Cpu) {
  return Cpu.empty() || Cpu == "native" || Cpu == host().cpu;
}

/// The broadcast sizes of a kernel being described: each distinct set of
/// operands becomes one size parameter after the sourced ones.
class BroadcastSizes {
public:
  BroadcastSizes(NativeKernel &NK, const codegen::LoopKernel &K)
      : NK(NK), K(K) {}

  /// The extent code (NativeKernel::Buffer::dims) of E: a constant, a size
  /// parameter, or the broadcast size of E's operands (added when new);
  /// nullopt with Why set when E is another computed extent.
  std::optional<int64_t> extent(const codegen::LoopExpr &E, std::string &Why) {
    std::optional<std::vector<int64_t>> Ops = operands(E, Why);
    if (!Ops)
      return std::nullopt;
    if (Ops->empty())
      return 1;
    if (Ops->size() == 1)
      return Ops->front();
    return NativeKernel::sizeParamDim(sizeFor(std::move(*Ops)));
  }

  /// Adds the check that Extents broadcast together (a broadcast size the
  /// VM computes and so checks, though nothing reads it); false with Why set
  /// when one is not expressible.
  bool require(const std::vector<codegen::LoopExpr> &Extents,
               std::string &Why) {
    std::vector<int64_t> All;
    for (const codegen::LoopExpr &E : Extents) {
      std::optional<std::vector<int64_t>> Ops = operands(E, Why);
      if (!Ops)
        return false;
      All.insert(All.end(), Ops->begin(), Ops->end());
    }
    normalize(All);
    // One extent, or constants only (the type checker matched those).
    if (All.size() > 1 &&
        std::any_of(All.begin(), All.end(), [](int64_t D) { return D < 0; }))
      sizeFor(std::move(All));
    return true;
  }

private:
  NativeKernel &NK;
  const codegen::LoopKernel &K;

  /// The operands' extent codes without 1s and repeats, in a canonical
  /// order; nullopt when E is not a broadcast of constants and parameters.
  std::optional<std::vector<int64_t>> operands(const codegen::LoopExpr &E,
                                               std::string &Why) {
    std::optional<std::vector<codegen::LoopExpr>> Leaves =
        codegen::broadcastOperands(E);
    if (!Leaves) {
      Why = fmt::format("extent {} is computed, neither an input's extent "
                        "nor a broadcast of them",
                        codegen::printLoopExpr(E, &K));
      return std::nullopt;
    }
    std::vector<int64_t> Ops;
    for (const codegen::LoopExpr &X : *Leaves) {
      if (X->kind == codegen::LoopExprKind::Const && X->intValue < 0) {
        Why = fmt::format("negative extent {}", X->intValue);
        return std::nullopt;
      }
      Ops.push_back(X->kind == codegen::LoopExprKind::Const
                        ? X->intValue
                        : NativeKernel::sizeParamDim((uint32_t)X->id));
    }
    normalize(Ops);
    return Ops;
  }

  static void normalize(std::vector<int64_t> &Ops) {
    std::erase(Ops, 1);
    std::sort(Ops.begin(), Ops.end(), std::greater<int64_t>());
    Ops.erase(std::unique(Ops.begin(), Ops.end()), Ops.end());
  }

  uint32_t sizeFor(std::vector<int64_t> Ops) {
    for (size_t I = 0; I < NK.broadcastSizes.size(); ++I)
      if (NK.broadcastSizes[I].operands == Ops)
        return (uint32_t)(K.sizeParams.size() + I);
    NK.broadcastSizes.push_back({std::move(Ops)});
    return (uint32_t)(K.sizeParams.size() + NK.broadcastSizes.size() - 1);
  }
};

/// Builds the executable's description of lowered kernel L, or says why the
/// VM cannot allocate its output.
std::optional<NativeKernel> describe(const codegen::LoweredKernel &L,
                                     std::string &Why) {
  const codegen::LoopKernel &K = L.kernel;
  NativeKernel NK;
  NK.symbol = K.name;
  BroadcastSizes Broadcasts(NK, K);
  if (K.buffers.empty() || !K.buffers.back().isOutput) {
    Why = "the kernel has no single output";
    return std::nullopt;
  }
  size_t NumInputs = K.buffers.size() - 1;
  for (size_t B = 0; B < K.buffers.size(); ++B) {
    if (B < NumInputs && K.buffers[B].isOutput) {
      Why = "the kernel has several outputs";
      return std::nullopt;
    }
    NativeKernel::Buffer Buf;
    Buf.dtype = K.buffers[B].dtype;
    for (const codegen::LoopExpr &D : K.buffers[B].shape) {
      std::optional<int64_t> Code;
      if (D->kind == codegen::LoopExprKind::Const) {
        Code = D->intValue;
      } else if (D->kind == codegen::LoopExprKind::SizeParam) {
        Code = NativeKernel::sizeParamDim((uint32_t)D->id);
      } else if (B == NumInputs) {
        // The output's extent may be a broadcast of the inputs' extents.
        std::string Inner;
        Code = Broadcasts.extent(D, Inner);
      }
      if (!Code) {
        Why = fmt::format("extent {} of buffer {} is computed ({}), not an "
                          "input's extent or a broadcast of them",
                          Buf.dims.size(), B, codegen::printLoopExpr(D, &K));
        return std::nullopt;
      }
      Buf.dims.push_back(*Code);
    }
    NK.buffers.push_back(std::move(Buf));
  }
  for (const codegen::SizeParamSource &S : L.sizeSources) {
    if (S.buffer >= NumInputs) {
      Why =
          fmt::format("output extent {} is not the extent of an input", S.axis);
      return std::nullopt;
    }
    NK.sizeSources.push_back({(uint32_t)S.buffer, (uint32_t)S.axis});
  }
  for (const std::vector<codegen::LoopExpr> &C : L.broadcastChecks) {
    std::string Inner;
    if (!Broadcasts.require(C, Inner)) {
      Why = fmt::format("a broadcast the VM cannot check: {}", Inner);
      return std::nullopt;
    }
  }
  for (const codegen::EmptyReductionCheck &C : L.emptyReductionChecks) {
    NativeKernel::EmptyReduction E{C.op, {}, {}};
    for (auto [From, To] :
         {std::pair{&C.reduced, &E.reduced}, std::pair{&C.kept, &E.kept}}) {
      for (const codegen::LoopExpr &D : *From) {
        std::string Inner;
        std::optional<int64_t> Code = Broadcasts.extent(D, Inner);
        if (!Code) {
          Why = fmt::format("{} may reduce over no elements, and the VM "
                            "cannot check it: {}",
                            C.op, Inner);
          return std::nullopt;
        }
        To->push_back(*Code);
      }
    }
    NK.emptyReductions.push_back(std::move(E));
  }
  return NK;
}

} // namespace

ir::Expr firstOperatorCall(const ir::FunctionNode &Fn) {
  ir::Expr E = Fn.body;
  while (const auto *L = E->as<ir::LetNode>()) {
    if (L->value->as<ir::CallNode>())
      break;
    E = L->body;
  }
  if (const auto *L = E->as<ir::LetNode>())
    E = L->value;
  ir::Expr Found;
  while (const auto *C = E->as<ir::CallNode>()) {
    if (!C->callee->as<ir::OpNode>())
      break;
    Found = E;
    auto Inner =
        std::find_if(C->args.begin(), C->args.end(), [](const ir::Expr &A) {
          return A->as<ir::CallNode>() != nullptr;
        });
    if (Inner == C->args.end())
      break;
    E = *Inner;
  }
  return Found;
}

codegen::TargetOptions targetOptions(const CodegenOptions &Opts) {
  codegen::TargetOptions T;
  T.cpu = Opts.cpu;
  T.features = Opts.features;
  return T;
}

bool isExplicitTarget(const CodegenOptions &Opts) {
  return !isHostCpu(Opts.cpu) || !Opts.features.empty();
}

NativeKernelBuilder::NativeKernelBuilder(const CodegenOptions &O) : Opts(O) {}

const NativeKernel *NativeKernelBuilder::lower(const ir::Expr &FnE) {
  auto [It, New] = ByFunction.emplace(FnE.get(), -1);
  if (!New)
    return It->second < 0 ? nullptr : &Kernels[(size_t)It->second];
  const auto *Fn = FnE->as<ir::FunctionNode>();
  if (!Fn)
    return nullptr;
  std::string Op = firstOpName(*Fn);
  std::string Name =
      fmt::format("rivet_k{}_{}", Kernels.size(), symbolPart(Op));
  codegen::LoweringOptions LO;
  LO.collapse = Opts.target == Device::CPU;
  codegen::LoweringResult R = codegen::lowerPrimitive(FnE, Name, LO);
  if (!R.ok()) {
    Refusals.push_back(fmt::format("group of {}: {}", Op, R.unsupported));
    return nullptr;
  }
  std::string Why;
  std::optional<NativeKernel> NK = describe(*R.lowered, Why);
  if (!NK) {
    Refusals.push_back(fmt::format("group of {}: {}", Op, Why));
    return nullptr;
  }
  NK->device = placeKernel(*NK, R.lowered->kernel);
  It->second = (int64_t)Kernels.size();
  Kernels.push_back(std::move(*NK));
  Loops.push_back(std::move(R.lowered->kernel));
  return &Kernels.back();
}

/// Where a kernel runs for the options' target. On a GPU target: the GPU,
/// except a kernel whose every buffer is small and static (loop counters,
/// conditions, scalar arithmetic), which stays on the host: a launch costs
/// more than its work, and its result usually steers control flow on the
/// host. A kernel the CUDA emitter cannot express stays on the CPU too.
Device NativeKernelBuilder::placeKernel(const NativeKernel &NK,
                                        const codegen::LoopKernel &K) {
  if (Opts.target == Device::CPU)
    return Device::CPU;
  constexpr int64_t kHostElements = 64;
  bool Small = true;
  for (const NativeKernel::Buffer &B : NK.buffers) {
    int64_t N = 1;
    for (int64_t D : B.dims)
      N = D < 0 ? kHostElements + 1 : N * D;
    Small &= N <= kHostElements;
  }
  if (Small && !Opts.smallKernelsOnGpu)
    return Device::CPU;
#if RIVET_HAVE_CUDA
  try {
    codegen::cuda::emitCudaSource({K});
  } catch (const Error &E) {
    Refusals.push_back(
        fmt::format("{} stays on the CPU: {}", NK.symbol, E.what()));
    return Device::CPU;
  }
  // One GPU thread would run it all (a reduction to one value: the CUDA
  // backend has no block reductions yet), far slower than the CPU.
  if (!codegen::cuda::runsInParallel(K)) {
    Refusals.push_back(fmt::format("{} stays on the CPU: its CUDA form has "
                                   "no parallel loop nest",
                                   NK.symbol));
    return Device::CPU;
  }
  return Opts.target;
#else
  (void)K;
  fail("vm compiler: this build of Rivet has no CUDA backend (configure "
       "found no CUDA toolkit), so it cannot compile for {}",
       deviceName(Opts.target));
#endif
}

const NativeKernel *
NativeKernelBuilder::findSymbol(const std::string &Symbol) const {
  for (const NativeKernel &K : Kernels)
    if (K.symbol == Symbol)
      return &K;
  return nullptr;
}

const NativeKernel *NativeKernelBuilder::find(const ir::ExprNode *Fn) const {
  auto It = ByFunction.find(Fn);
  return It == ByFunction.end() || It->second < 0
             ? nullptr
             : &Kernels[(size_t)It->second];
}

/// The GPU code of the kernels placed on the GPU, or nothing.
static std::optional<CudaCodeInfo>
compileGpuKernels(const std::vector<NativeKernel> &Kernels,
                  const std::vector<codegen::LoopKernel> &Loops) {
  std::vector<codegen::LoopKernel> OnGpu;
  for (size_t I = 0; I < Kernels.size(); ++I)
    if (Kernels[I].device == Device::CUDA)
      OnGpu.push_back(Loops[I]);
  if (OnGpu.empty())
    return std::nullopt;
#if RIVET_HAVE_CUDA
  namespace cu = codegen::cuda;
  CudaCodeInfo Code;
  for (cu::CudaImage &I :
       cu::compileCuda(cu::emitCudaSource(OnGpu), "rivet_kernels",
                       cu::kCubinArchs, cu::kPtxArch)) {
    if (I.ptx && (I.bytes.empty() || I.bytes.back() != 0))
      I.bytes.push_back(0); // the driver reads PTX as a C string
    Code.images.push_back({I.arch, I.ptx, std::move(I.bytes)});
  }
  return Code;
#else
  fail("vm compiler: this build of Rivet has no CUDA backend");
#endif
}

void NativeKernelBuilder::finish(Executable &Exe) {
  Exe.nativeRefusals = Refusals;
  if (Kernels.empty())
    return;
  Exe.cudaCode = compileGpuKernels(Kernels, Loops);
  if (Opts.mode == NativeCode::Jit) {
    auto Jit = std::make_shared<codegen::JitCompiler>();
    std::vector<RivetKernelFn> Fns = Jit->compile(Loops);
    for (size_t I = 0; I < Kernels.size(); ++I)
      Kernels[I].fn = Fns[I];
    Exe.nativeJit = true;
    Exe.nativeOwner = std::move(Jit);
    Exe.nativeKernels = std::move(Kernels);
    return;
  }

  NativeCodeInfo Code;
  Code.sharedObject = codegen::linkSharedObject(
      codegen::emitObject(Loops, targetOptions(Opts)));
  if (Code.sharedObject.size() >= 20)
    std::memcpy(&Code.elfMachine, Code.sharedObject.data() + 18, 2);
  // What the code was generated for, as LLVMBackend resolves empty fields.
  bool HostCpu = Opts.cpu.empty() || Opts.cpu == "native";
  Code.triple = host().triple;
  Code.cpu = HostCpu ? host().cpu : Opts.cpu;
  Code.features = !Opts.features.empty() ? Opts.features
                  : HostCpu              ? host().features
                                         : "";
  std::set<std::string> HostFeatures = enabledFeatures(host().features);
  std::vector<std::string> Missing;
  for (const std::string &F : enabledFeatures(Code.features))
    if (!HostFeatures.count(F))
      Missing.push_back(F);
  // What the code may use is what the target enables, by its CPU (an
  // explicit --cpu x86-64-v4 implies AVX-512) and its features: the loader
  // refuses the file on a CPU without one of those it can check.
  codegen::TargetOptions Target = targetOptions(Opts);
  for (const std::string &F : rvx::checkableCpuFeatures())
    if (codegen::targetHasFeature(Target, F))
      Code.requiredFeatures.push_back(F);
  if (!Missing.empty() || !isHostCpu(Opts.cpu))
    Exe.nativeUnavailable = fmt::format(
        "the native code was generated for cpu '{}'{}{}, which this machine "
        "('{}') cannot run; compile for this machine to run here",
        Code.cpu, Missing.empty() ? "" : " with features +",
        fmt::join(Missing, ", +"), host().cpu);
  Exe.nativeKernels = std::move(Kernels);
  Exe.nativeCode = std::move(Code);
}

} // namespace rivet::vm::compiler
