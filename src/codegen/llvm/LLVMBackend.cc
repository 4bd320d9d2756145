//===- LLVMBackend.cc - Target machines, O3 pipeline, object emission -----===//
//
// The pass builder and target registry headers live only here (the ORC JIT
// is in LLVMJit.cc). The optimization pipeline always runs with
// the TargetMachine of the code it optimizes for: without it the cost model
// knows no vector registers and loops are not vectorized.
//
//===----------------------------------------------------------------------===//

#include "codegen/llvm/LLVMBackend.h"
#include "codegen/CodegenBackend.h"
#include "codegen/llvm/EmitLLVM.h"
#include "codegen/llvm/PowerOfTwoScale.h"

#include "kernels/Error.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Scalar/DeadStoreElimination.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>

#include <mutex>

namespace rivet::codegen {

void initializeLLVM() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

llvm::CodeGenOpt::Level codegenLevel(int Level) {
  return Level <= 0   ? llvm::CodeGenOpt::None
         : Level == 1 ? llvm::CodeGenOpt::Less
         : Level == 2 ? llvm::CodeGenOpt::Default
                      : llvm::CodeGenOpt::Aggressive;
}

namespace {

std::string hostFeatures() {
  llvm::StringMap<bool> Features;
  std::string Out;
  if (!llvm::sys::getHostCPUFeatures(Features))
    return Out;
  for (auto &F : Features)
    Out += (Out.empty() ? "" : ",") + std::string(F.second ? "+" : "-") +
           F.first().str();
  return Out;
}

/// Refuses a CPU or feature name target Tg does not know (LLVM would only
/// warn, once per function, and generate code for its generic CPU).
void checkCpuAndFeatures(const llvm::Target &Tg, const std::string &Triple,
                         const std::string &Cpu, const std::string &Features) {
  std::unique_ptr<llvm::MCSubtargetInfo> STI(
      Tg.createMCSubtargetInfo(Triple, "", ""));
  if (!STI)
    fail("codegen: no subtarget information for {}", Triple);
  if (!STI->isCPUStringValid(Cpu))
    fail("codegen: unknown cpu '{}' for {} (`llc -mtriple={} -mcpu=help` "
         "lists them)",
         Cpu, Triple, Triple);
  // LLVM 16 does not expose its feature table: a known feature is one whose
  // flag, + or -, changes the subtarget's feature bits.
  auto BitsOf = [&](const std::string &FS) {
    std::unique_ptr<llvm::MCSubtargetInfo> S(
        Tg.createMCSubtargetInfo(Triple, "", FS));
    return S->getFeatureBits();
  };
  llvm::FeatureBitset Base = BitsOf("");
  llvm::SmallVector<llvm::StringRef, 16> Items;
  llvm::StringRef(Features).split(Items, ',', -1, false);
  for (llvm::StringRef Item : Items) {
    std::string Name =
        Item.drop_while([](char C) { return C == '+' || C == '-'; }).str();
    if (BitsOf("+" + Name) == Base && BitsOf("-" + Name) == Base)
      fail("codegen: unknown cpu feature '{}' for {} (`llc -mtriple={} "
           "-mattr=help` lists them)",
           Name, Triple, Triple);
  }
}

/// A TargetMachine for T; empty fields take the host's values (the CPU and
/// features only when the triple is the host's too).
std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const TargetOptions &T) {
  initializeLLVM();
  TargetOptions H = hostTarget();
  bool Host = T.triple.empty() || T.triple == H.triple;
  std::string Triple = T.triple.empty() ? H.triple : T.triple;
  std::string Cpu = !T.cpu.empty() && T.cpu != "native" ? T.cpu
                    : Host                              ? H.cpu
                                                        : "generic";
  std::string Features = !T.features.empty() ? T.features
                         : Host && (T.cpu.empty() || T.cpu == "native")
                             ? H.features
                             : "";
  std::string Err;
  const llvm::Target *Tg = llvm::TargetRegistry::lookupTarget(Triple, Err);
  if (!Tg)
    fail("codegen: unknown target triple '{}': {}", Triple, Err);
  checkCpuAndFeatures(*Tg, Triple, Cpu, Features);
  llvm::TargetOptions Opts;
  std::unique_ptr<llvm::TargetMachine> TM(
      Tg->createTargetMachine(Triple, Cpu, Features, Opts, llvm::Reloc::PIC_,
                              std::nullopt, codegenLevel(T.optLevel)));
  if (!TM)
    fail("codegen: cannot create a target machine for {} (cpu {})", Triple,
         Cpu);
  // LLVM aborts the process (report_fatal_error) on a 64-bit triple whose
  // CPU or features cannot run 64-bit code: refuse it first.
  const llvm::MCSubtargetInfo &STI = *TM->getMCSubtargetInfo();
  if (llvm::Triple(Triple).getArch() == llvm::Triple::x86_64 &&
      (!STI.checkFeatures("+64bit") || !STI.checkFeatures("+64bit-mode")))
    fail("codegen: cpu '{}'{}{} cannot run 64-bit code ({})", Cpu,
         Features.empty() ? "" : " with features ", Features, Triple);
  return TM;
}

void verify(llvm::Module &M) {
  std::string Msg;
  llvm::raw_string_ostream OS(Msg);
  if (llvm::verifyModule(M, &OS))
    fail("codegen: generated LLVM IR is invalid: {}", OS.str());
}

/// The new pass manager's default pipeline at Level, tuned for TM.
void optimize(llvm::Module &M, llvm::TargetMachine *TM, int Level) {
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  llvm::PipelineTuningOptions PTO;
  PTO.LoopVectorization = Level >= 2;
  PTO.SLPVectorization = Level >= 2;
  PTO.LoopUnrolling = Level >= 2;
  llvm::PassBuilder PB(TM, PTO);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  // Loops that vectorize and then unroll fully (a generated matmul's
  // output row, accumulated over the reduction) leave each vector stored
  // and reloaded at every step, a store-forwarding chain; the default
  // pipeline eliminates no loads after the vectorizer. EarlyCSE on
  // MemorySSA (loads from stores; GVN does the same at 8x the compile
  // time) and DSE (the stores overwritten) keep the row in registers: a
  // 256x16 @ 16x48 matmul took 18 us, now 6-8; the transformer's -O3
  // compile 2% longer.
  if (Level >= 2)
    PB.registerOptimizerLastEPCallback(
        [](llvm::ModulePassManager &MPM, llvm::OptimizationLevel) {
          addScaleHelperInlining(MPM);
          llvm::FunctionPassManager FPM;
          FPM.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
          FPM.addPass(llvm::DSEPass());
          MPM.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(FPM)));
        });
  llvm::OptimizationLevel OL = Level <= 0   ? llvm::OptimizationLevel::O0
                               : Level == 1 ? llvm::OptimizationLevel::O1
                               : Level == 2 ? llvm::OptimizationLevel::O2
                                            : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager MPM = Level <= 0
                                    ? PB.buildO0DefaultPipeline(OL)
                                    : PB.buildPerModuleDefaultPipeline(OL);
  MPM.run(M, MAM);
}

/// Lets the vectorizers use 512-bit vectors on AVX-512 targets. LLVM tunes
/// Intel's AVX-512 CPUs (Skylake-X to Sapphire Rapids, "prefer-256-bit") for
/// ymm, against the clock drop of 512-bit code on the first of them; for
/// these kernels the halved instruction count wins: on a Sapphire Rapids VM
/// the fused sigmoid chain ran 13.1 -> 10.3 ms, the transformer at S = 128
/// 0.41-0.46 -> 0.30-0.43 ms. oneDNN's kernels use zmm there too.
void preferFullVectorWidth(llvm::Module &M, llvm::TargetMachine &TM) {
  if (!TM.getTargetTriple().isX86() ||
      !TM.getMCSubtargetInfo()->checkFeatures("+avx512f"))
    return;
  for (llvm::Function &F : M)
    if (!F.isDeclaration())
      F.addFnAttr("prefer-vector-width", "512");
}

} // namespace

std::unique_ptr<llvm::Module> buildModule(llvm::LLVMContext &Ctx,
                                          const std::vector<LoopKernel> &Ks,
                                          llvm::TargetMachine &TM, int Level,
                                          bool Optimize) {
  // A loop marked for vectorization that stays scalar (a libm call the
  // target has no vector form of) is not worth a warning on stderr.
  Ctx.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo &DI, void *) {
        if (DI.getSeverity() != llvm::DS_Error)
          return;
        llvm::DiagnosticPrinterRawOStream Printer(llvm::errs());
        DI.print(Printer);
        llvm::errs() << "\n";
      },
      nullptr);
  auto M = std::make_unique<llvm::Module>(
      Ks.empty() ? "rivet" : Ks.front().name, Ctx);
  M->setTargetTriple(TM.getTargetTriple().str());
  M->setDataLayout(TM.createDataLayout());
  EmitOptions Options;
  // The helper calls are inlined by the pipeline of Level >= 2 only.
  Options.vectorScale = Optimize && Level >= 2 && hasVectorScale(TM);
  for (const LoopKernel &K : Ks)
    emitKernel(K, *M, Options);
  preferFullVectorWidth(*M, TM);
  verify(*M);
  if (Optimize) {
    optimize(*M, &TM, Level);
    finishStreamingStores(*M);
  }
  return M;
}

bool targetHasFeature(const TargetOptions &T, const std::string &Feature) {
  return makeTargetMachine(T)->getMCSubtargetInfo()->checkFeatures("+" +
                                                                   Feature);
}

TargetOptions hostTarget() {
  TargetOptions T;
  T.triple = llvm::sys::getProcessTriple();
  T.cpu = llvm::sys::getHostCPUName().str();
  T.features = hostFeatures();
  return T;
}

std::string emitLLVMIR(const LoopKernel &K, const TargetOptions &T,
                       bool Optimize) {
  auto TM = makeTargetMachine(T);
  llvm::LLVMContext Ctx;
  auto M = buildModule(Ctx, {K}, *TM, T.optLevel, Optimize);
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  M->print(OS, nullptr);
  return OS.str();
}

std::vector<uint8_t> emitObject(const std::vector<LoopKernel> &Ks,
                                const TargetOptions &T) {
  auto TM = makeTargetMachine(T);
  llvm::LLVMContext Ctx;
  auto M = buildModule(Ctx, Ks, *TM, T.optLevel, true);
  llvm::SmallVector<char, 0> Buf;
  llvm::raw_svector_ostream OS(Buf);
  // Object emission still goes through the legacy pass manager in LLVM 16.
  llvm::legacy::PassManager PM;
  if (TM->addPassesToEmitFile(PM, OS, nullptr, llvm::CGFT_ObjectFile))
    fail("codegen: the target {} cannot emit object files",
         TM->getTargetTriple().str());
  PM.run(*M);
  return std::vector<uint8_t>(Buf.begin(), Buf.end());
}

} // namespace rivet::codegen
