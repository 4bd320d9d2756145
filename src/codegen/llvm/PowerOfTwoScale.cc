//===- PowerOfTwoScale.cc - p * 2^n as a call the vectorizer widens -------===//
//
// The helpers: `float rivet_scale_f32(float, float)` (portable code) and
// `<W x float> rivet_scale_f32_vW(<W x float>, <W x float>)` for W = 4, 8,
// 16 (vscalefps). They stay noinline, and the vector ones in
// llvm.compiler.used, until the vectorizer has placed its calls.
//
//===----------------------------------------------------------------------===//

#include "codegen/llvm/PowerOfTwoScale.h"

#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <string>
#include <vector>

namespace rivet::codegen {
namespace {

using llvm::Value;

constexpr const char *kScalarName = "rivet_scale_f32";
/// Marks the helpers, so that the inlining step finds them.
constexpr const char *kHelperAttr = "rivet-scale-helper";
constexpr unsigned kWidths[] = {4, 8, 16};

std::string vectorName(unsigned W) {
  return std::string(kScalarName) + "_v" + std::to_string(W);
}

llvm::Function *newHelper(llvm::Module &M, llvm::Type *Ty,
                          const std::string &Name) {
  auto *FTy = llvm::FunctionType::get(Ty, {Ty, Ty}, /*isVarArg=*/false);
  auto *F =
      llvm::Function::Create(FTy, llvm::GlobalValue::InternalLinkage, Name, M);
  F->setDoesNotAccessMemory();
  F->setDoesNotThrow();
  F->setWillReturn();
  F->setDoesNotRecurse();
  F->addFnAttr(llvm::Attribute::NoInline);
  F->addFnAttr(kHelperAttr);
  return F;
}

/// The portable body, on the integer value of z.
void emitScalarBody(llvm::Function *F) {
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(F->getContext(), "entry", F));
  // Saturating, so that a NaN (whose p is NaN too) is no poison.
  Value *N = B.CreateIntrinsic(llvm::Intrinsic::fptosi_sat,
                               {B.getInt32Ty(), F->getArg(1)->getType()},
                               {F->getArg(1)});
  B.CreateRet(emitPortableScale(B, F->getArg(0), N));
}

/// The W-lane body: vscalefps with every lane enabled, current rounding.
void emitVectorBody(llvm::Function *F, unsigned W) {
  llvm::Module &M = *F->getParent();
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(F->getContext(), "entry", F));
  llvm::Intrinsic::ID Id =
      W == 16  ? llvm::Intrinsic::x86_avx512_mask_scalef_ps_512
      : W == 8 ? llvm::Intrinsic::x86_avx512_mask_scalef_ps_256
               : llvm::Intrinsic::x86_avx512_mask_scalef_ps_128;
  std::vector<Value *> Args = {F->getArg(0), F->getArg(1),
                               llvm::UndefValue::get(F->getReturnType()),
                               W == 16 ? B.getInt16(0xffff) : B.getInt8(0xff)};
  if (W == 16)
    Args.push_back(B.getInt32(4)); // _MM_FROUND_CUR_DIRECTION
  B.CreateRet(B.CreateCall(llvm::Intrinsic::getDeclaration(&M, Id), Args));
}

/// The scalar helper, created with its vector variants on first use.
llvm::Function *scaleHelper(llvm::Module &M) {
  if (llvm::Function *F = M.getFunction(kScalarName))
    return F;
  llvm::Type *F32 = llvm::Type::getFloatTy(M.getContext());
  llvm::Function *Scalar = newHelper(M, F32, kScalarName);
  emitScalarBody(Scalar);
  std::vector<llvm::GlobalValue *> Variants;
  for (unsigned W : kWidths) {
    llvm::Function *V =
        newHelper(M, llvm::FixedVectorType::get(F32, W), vectorName(W));
    emitVectorBody(V, W);
    Variants.push_back(V);
  }
  // Unused until the vectorizer calls them: keep them from dead-code
  // elimination until then.
  llvm::appendToCompilerUsed(M, Variants);
  return Scalar;
}

bool isHelper(const llvm::Function &F) { return F.hasFnAttribute(kHelperAttr); }

/// Makes the helpers always-inline (the vectorizer has run).
struct ReleaseScaleHelpers : llvm::PassInfoMixin<ReleaseScaleHelpers> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    bool Changed = false;
    for (llvm::Function &F : M)
      if (isHelper(F)) {
        F.removeFnAttr(llvm::Attribute::NoInline);
        F.addFnAttr(llvm::Attribute::AlwaysInline);
        Changed = true;
      }
    return Changed ? llvm::PreservedAnalyses::none()
                   : llvm::PreservedAnalyses::all();
  }
};

/// Removes the helpers once inlined.
struct EraseScaleHelpers : llvm::PassInfoMixin<EraseScaleHelpers> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    std::vector<llvm::Function *> Helpers;
    for (llvm::Function &F : M)
      if (isHelper(F))
        Helpers.push_back(&F);
    if (Helpers.empty())
      return llvm::PreservedAnalyses::all();
    llvm::removeFromUsedLists(M, [](llvm::Constant *C) {
      auto *F = llvm::dyn_cast<llvm::Function>(C->stripPointerCasts());
      return F && isHelper(*F);
    });
    for (llvm::Function *F : Helpers)
      if (F->use_empty())
        F->eraseFromParent();
    return llvm::PreservedAnalyses::none();
  }
};

} // namespace

Value *emitPortableScale(llvm::IRBuilder<> &B, Value *P, Value *N) {
  Value *N1 = B.CreateAShr(N, 1);
  auto Pow2 = [&](Value *E) {
    return B.CreateBitCast(B.CreateShl(B.CreateAdd(E, B.getInt32(127)), 23),
                           P->getType());
  };
  return B.CreateFMul(B.CreateFMul(P, Pow2(N1)), Pow2(B.CreateSub(N, N1)));
}

bool hasVectorScale(const llvm::TargetMachine &TM) {
  return TM.getTargetTriple().isX86() &&
         TM.getMCSubtargetInfo()->checkFeatures("+avx512f,+avx512vl");
}

Value *emitScaleCall(llvm::IRBuilder<> &B, Value *P, Value *Z) {
  llvm::Module &M = *B.GetInsertBlock()->getModule();
  llvm::CallInst *Call = B.CreateCall(scaleHelper(M), {P, Z});
  std::vector<std::string> Mappings;
  for (unsigned W : kWidths)
    Mappings.push_back("_ZGV_LLVM_N" + std::to_string(W) + "vv_" + kScalarName +
                       "(" + vectorName(W) + ")");
  llvm::VFABI::setVectorVariantNames(Call, Mappings);
  return Call;
}

void addScaleHelperInlining(llvm::ModulePassManager &MPM) {
  MPM.addPass(ReleaseScaleHelpers());
  MPM.addPass(llvm::AlwaysInlinerPass(/*InsertLifetimeIntrinsics=*/false));
  MPM.addPass(EraseScaleHelpers());
}

} // namespace rivet::codegen
