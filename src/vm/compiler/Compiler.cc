//===- Compiler.cc - IR module to VM executable ---------------------------===//
//
// The driver: type inference when the module has not been checked, the
// optimization pipeline at the requested level, fused functions either
// compiled to native kernels or expanded back to operator calls, lowering
// of every global function (and of everything lifted out of them), the
// native code (JIT or a shared object), main's signature for input
// checking, and binding of the kernel table.
//
//===----------------------------------------------------------------------===//
#include "vm/compiler/Compiler.h"

#include "ir/Printer.h"
#include "ir/TypeInference.h"
#include "ir/Visitor.h"
#include "ir/transforms/LayoutPreference.h"
#include "ir/transforms/Pass.h"
#include "kernels/Error.h"
#include "kernels/Kernel.h"
#include "vm/compiler/InlinePrimitives.h"
#include "vm/compiler/Lowering.h"
#include "vm/compiler/SpecializeInputs.h"

#include "vm/compiler/NativeKernelBuilder.h"
#include <set>

#include <optional>

namespace rivet::vm {

namespace {

bool needsInference(const ir::Module &M) {
  for (const std::string &Name : M.functionNames())
    if (!M.function(Name)->checkedType)
      return true;
  return false;
}

ParamInfo typeInfo(const ir::Type &T, const std::string &Name) {
  ParamInfo Info;
  Info.name = Name;
  if (!T) {
    Info.isTensor = false;
    Info.typeText = std::string(1, '?');
    return Info;
  }
  Info.typeText = ir::typeToString(T);
  const auto *TT = T->as<ir::TensorTypeNode>();
  if (!TT) {
    Info.isTensor = false;
    return Info;
  }
  Info.dtype = TT->dtype;
  if (TT->shape) {
    std::vector<int64_t> Dims;
    for (const ir::Dim &D : *TT->shape)
      Dims.push_back(D.isConst() ? D.value : -1);
    Info.dims = std::move(Dims);
  }
  return Info;
}

/// main's results: a tuple's fields when it returns one per output name
/// (or has no names), else its one result.
std::vector<ParamInfo> resultInfos(const ir::FunctionNode &Main,
                                   const std::vector<std::string> &Names) {
  ir::Type T = Main.body && Main.body->checkedType ? Main.body->checkedType
                                                   : Main.retType;
  auto NameOf = [&](size_t I) {
    return I < Names.size() ? Names[I] : fmt::format("output_{}", I);
  };
  const auto *Tuple = T ? T->as<ir::TupleTypeNode>() : nullptr;
  if (!Tuple || (!Names.empty() && Names.size() != Tuple->fields.size()))
    return {typeInfo(T, NameOf(0))};
  std::vector<ParamInfo> R;
  for (size_t I = 0; I < Tuple->fields.size(); ++I)
    R.push_back(typeInfo(Tuple->fields[I], NameOf(I)));
  return R;
}

/// M without the prelude functions that no other function calls: every
/// module carries the whole prelude, and each of its functions would
/// otherwise be lowered (and its fused groups compiled to native code).
ir::Module withoutUnusedPrelude(const ir::Module &M) {
  std::set<std::string> Keep;
  std::vector<std::string> Work;
  for (const std::string &Name : M.functionNames())
    if (!ir::isPreludeName(Name) && Keep.insert(Name).second)
      Work.push_back(Name);
  while (!Work.empty()) {
    std::string Name = std::move(Work.back());
    Work.pop_back();
    ir::postOrderVisit(M.function(Name), [&](const ir::Expr &E) {
      if (const auto *G = E->as<ir::GlobalVarNode>())
        if (M.hasFunction(G->name) && Keep.insert(G->name).second)
          Work.push_back(G->name);
    });
  }
  if (Keep.size() == M.functionNames().size())
    return M;
  ir::Module R;
  for (const std::string &Adt : M.typeDataNames())
    R.addTypeData(M.typeData(Adt));
  for (const std::string &Name : M.functionNames())
    if (Keep.count(Name))
      R.addFunction(Name, M.function(Name));
  return R;
}

/// For an explicit --cpu/--mattr target, oneDNN's layouts for that CPU
/// rather than the host's: NCHW16c where it has AVX-512, NCHW8c where it
/// has AVX2 (an executable built on an AVX-512 host for x86-64-v3 would
/// otherwise run its convs in 16c, which oneDNN's AVX2 kernels do not
/// take). Null (the host's) for the host or a CPU without either.
/// A GPU target's convs are generated kernels on NCHW tensors: no conv is
/// converted to a blocked layout.
class PlainLayouts : public ir::LayoutPreferences {
public:
  std::optional<ir::ConvLayout> preferredConvLayout(const ir::CallNode &,
                                                    const ir::TensorTypeNode &,
                                                    const ir::TensorTypeNode &,
                                                    int64_t) const override {
    return std::nullopt;
  }
};

std::shared_ptr<const ir::LayoutPreferences>
targetLayoutPreferences(const CodegenOptions &C) {
  if (C.target != Device::CPU)
    return std::make_shared<PlainLayouts>();
  if (!compiler::isExplicitTarget(C))
    return nullptr;
  codegen::TargetOptions T = compiler::targetOptions(C);
  int64_t Block = codegen::targetHasFeature(T, "avx512f") ? 16
                  : codegen::targetHasFeature(T, "avx2")  ? 8
                                                          : 0;
  if (Block == 0)
    return nullptr;
  return std::make_shared<ir::DnnlCpuPreferences>(Block);
}

} // namespace

std::shared_ptr<Executable> compile(const ir::Module &M,
                                    const CompileOptions &Opts) {
  if (!M.hasFunction("main"))
    fail("vm compiler: the module has no @main function");
  ir::Module Optimized = withoutUnusedPrelude(
      compiler::specializeInputShapes(M, Opts.inputShapes));
  if (needsInference(Optimized))
    ir::inferTypes(Optimized);
  ir::PassContext Passes = Opts.passes;
  Passes.optLevel = Opts.optLevel;
  Passes.steps.clear(); // a bisection counts this compilation's steps
  if (!Passes.layoutPreferences)
    Passes.layoutPreferences = targetLayoutPreferences(Opts.codegen);
  // The attention, lstm_stack and layer_norm operators have CPU kernels
  // only; on the GPU attention's products go to cuBLAS and its softmax to a
  // generated kernel, lstm layers stay calls of their own, and a layer
  // norm's arithmetic is generated kernels.
  if (Opts.codegen.target != Device::CPU)
    for (const char *P : {"FuseAttention", "FuseLstmStack", "FuseLayerNorm"})
      if (!Passes.enabled.count(P))
        Passes.disabled.insert(P);
  ir::optimize(Optimized, Passes);
  // The compiler's own steps (see AnchorSelectionStep): a bisection may skip
  // them, last first; a skipped one compiles as if it were switched off.
  bool Anchors = Passes.shouldRunStep(AnchorSelectionStep);
  size_t AnchorStep = Passes.steps.size();
  bool Codegen =
      Opts.codegen.mode != NativeCode::Off && Passes.shouldRunStep(CodegenStep);
  CompileOptions Lowered = Opts;
  Lowered.libraryKernels = Opts.libraryKernels && Anchors;
  std::optional<compiler::NativeKernelBuilder> Native;
  if (Codegen)
    Native.emplace(Opts.codegen);
  compiler::NativeKernelBuilder *NativePtr = Native ? &*Native : nullptr;
  std::optional<ir::Module> PreInline;
  if (Passes.stepObserver && Anchors)
    PreInline = Optimized;
  if (compiler::inlinePrimitiveCalls(Optimized, NativePtr, Anchors,
                                     Opts.libraryKernels))
    ir::inferTypes(Optimized);
  if (PreInline) {
    // Each step's IR against the IR without it: the groups inlined without
    // anchors, with anchors, and (the module itself) with native kernels.
    auto Inlined = [&](bool WithAnchors) {
      ir::Module X = *PreInline;
      if (compiler::inlinePrimitiveCalls(X, nullptr, WithAnchors))
        ir::inferTypes(X);
      return X;
    };
    ir::Module AnchorsOnly = Codegen ? Inlined(true) : Optimized;
    Passes.stepObserver(AnchorStep, AnchorSelectionStep, Inlined(false),
                        AnchorsOnly);
    if (Codegen)
      Passes.stepObserver(AnchorStep + 1, CodegenStep, AnchorsOnly, Optimized);
  }
  // Kernel calls that run better as one (FuseConvChains.cc) exist only now.
  ir::runPasses(Optimized, {"FuseConvChains", "DeadCodeElimination"}, Passes);
  Opts.passes.timings = std::move(Passes.timings); // instrumentation output
  Opts.passes.steps = std::move(Passes.steps);
  const ir::Module *Src = &Optimized;
  auto Exe = std::make_shared<Executable>();
  compiler::ModuleLowering ML(*Src, Lowered, *Exe, NativePtr);
  ML.run();
  if (Native)
    Native->finish(*Exe);
  // GPU library kernels (cuBLAS, cuDNN) make an executable need the GPU
  // even when none of its own kernels runs there.
  if (!Exe->cudaCode)
    for (const KernelEntry &E : Exe->kernels)
      if (E.kind == KernelEntry::Kind::Builtin)
        if (const KernelInfo *I = KernelRegistry::global().find(E.op);
            I && I->device != Device::CPU) {
          Exe->cudaCode.emplace();
          break;
        }

  const auto *Main = Src->function("main")->as<ir::FunctionNode>();
  std::vector<std::string> InputNames;
  if (Main->attrs.has("input_names"))
    InputNames = Main->attrs.getStrings("input_names");
  for (size_t I = 0; I < Main->params.size(); ++I) {
    const ir::Var &P = Main->params[I];
    std::string Name =
        I < InputNames.size() && InputNames.size() == Main->params.size()
            ? InputNames[I]
            : P->nameHint;
    Exe->mainParams.push_back(
        typeInfo(P->checkedType ? P->checkedType : P->typeAnnotation, Name));
  }
  if (Main->attrs.has("output_names"))
    Exe->outputNames = Main->attrs.getStrings("output_names");
  Exe->mainResults = resultInfos(*Main, Exe->outputNames);
  Exe->resolve();
  return Exe;
}

} // namespace rivet::vm
