//===- LLVMJit.cc - In-process compilation of loop kernels (ORC LLJIT) ----===//
//
// One LLJIT per JitCompiler, for the host CPU and its features; each call of
// compile is one module, optimized by buildModule before the JIT sees it.
// Symbols the kernels call (libm, memset) resolve in the running process.
//
//===----------------------------------------------------------------------===//

#include "codegen/CodegenBackend.h"
#include "codegen/llvm/LLVMBackend.h"

#include "kernels/Error.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <mutex>

namespace rivet::codegen {
namespace {

[[noreturn]] void failLLVM(const char *What, llvm::Error E) {
  fail("codegen: {}: {}", What, llvm::toString(std::move(E)));
}

template <typename T> T check(const char *What, llvm::Expected<T> V) {
  if (!V)
    failLLVM(What, V.takeError());
  return std::move(*V);
}

} // namespace

struct JitCompiler::Impl {
  std::unique_ptr<llvm::orc::LLJIT> Jit;
  std::unique_ptr<llvm::TargetMachine> TM;
  int OptLevel = 3;
  std::mutex Mu;
};

JitCompiler::JitCompiler(int OptLevel) : P(std::make_unique<Impl>()) {
  initializeLLVM();
  P->OptLevel = OptLevel;
  auto JTMB = check("detecting the host",
                    llvm::orc::JITTargetMachineBuilder::detectHost());
  JTMB.setCodeGenOptLevel(codegenLevel(OptLevel));
  P->TM = check("creating the target machine", JTMB.createTargetMachine());
  P->Jit = check(
      "creating the JIT",
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(JTMB).create());
  // libm (tanhf, erff, ...) and memset/memcpy resolve in the process.
  P->Jit->getMainJITDylib().addGenerator(
      check("searching the process for symbols",
            llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                P->Jit->getDataLayout().getGlobalPrefix())));
}

JitCompiler::~JitCompiler() = default;

std::vector<RivetKernelFn>
JitCompiler::compile(const std::vector<LoopKernel> &Ks) {
  std::lock_guard<std::mutex> Lock(P->Mu);
  if (Ks.empty())
    return {};
  auto Ctx = std::make_unique<llvm::LLVMContext>();
  auto M = buildModule(*Ctx, Ks, *P->TM, P->OptLevel, true);
  M->setDataLayout(P->Jit->getDataLayout());
  if (llvm::Error E = P->Jit->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(M), std::move(Ctx))))
    failLLVM("adding kernels to the JIT", std::move(E));
  std::vector<RivetKernelFn> Fns;
  for (const LoopKernel &K : Ks)
    Fns.push_back(check("looking up a kernel", P->Jit->lookup(K.name))
                      .toPtr<RivetKernelFn>());
  return Fns;
}

} // namespace rivet::codegen
