//===- EmitLLVM.cc - Loop kernel -> LLVM IR -------------------------------===//
//
// Straightforward IRBuilder code: locals are allocas (SROA promotes them),
// loops are guarded do-while loops (the form the vectorizer expects) with
// llvm.loop metadata from their annotation, buffers are noalias parameters
// of an internal body function. Integer arithmetic of the data wraps (no
// nsw), as the reference kernels do; the index arithmetic of buffer
// addressing is nsw. Floating-point code is exact except the updates of
// reductions, which may be reassociated.
//
//===----------------------------------------------------------------------===//

#include "codegen/llvm/EmitLLVM.h"

#include "kernels/Error.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <unordered_map>

namespace rivet::codegen {
namespace {

using llvm::IRBuilder;
using llvm::Type;
using llvm::Value;

class KernelEmitter {
public:
  KernelEmitter(const LoopKernel &K, llvm::Module &M)
      : K(K), M(M), Ctx(M.getContext()), B(Ctx) {}

  void run() {
    llvm::Type *I64 = B.getInt64Ty();
    llvm::Type *Ptr = B.getPtrTy();
    // The body: (ptr noalias buf0, ..., i64 size0, ...).
    std::vector<Type *> ParamTys(K.buffers.size(), Ptr);
    ParamTys.insert(ParamTys.end(), K.sizeParams.size(), I64);
    auto *BodyTy = llvm::FunctionType::get(B.getVoidTy(), ParamTys, false);
    llvm::Function *Body = llvm::Function::Create(
        BodyTy, llvm::GlobalValue::InternalLinkage, K.name + ".body", M);
    Body->addFnAttr(llvm::Attribute::NoUnwind);
    for (size_t I = 0; I < K.buffers.size(); ++I) {
      Body->addParamAttr((unsigned)I, llvm::Attribute::NoAlias);
      Body->addParamAttr((unsigned)I, llvm::Attribute::NoCapture);
      if (!K.buffers[I].isOutput)
        Body->addParamAttr((unsigned)I, llvm::Attribute::ReadOnly);
    }
    emitBody(*Body);

    // The entry point: unpacks the arrays and calls the body.
    auto *EntryTy =
        llvm::FunctionType::get(B.getVoidTy(), {Ptr, Ptr}, /*isVarArg=*/false);
    llvm::Function *Entry = llvm::Function::Create(
        EntryTy, llvm::GlobalValue::ExternalLinkage, K.name, M);
    Entry->addFnAttr(llvm::Attribute::NoUnwind);
    B.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", Entry));
    std::vector<Value *> Args;
    for (size_t I = 0; I < K.buffers.size(); ++I)
      Args.push_back(B.CreateLoad(
          Ptr, B.CreateConstInBoundsGEP1_64(Ptr, Entry->getArg(0), I),
          K.buffers[I].name));
    for (size_t I = 0; I < K.sizeParams.size(); ++I)
      Args.push_back(B.CreateLoad(
          I64, B.CreateConstInBoundsGEP1_64(I64, Entry->getArg(1), I),
          K.sizeParams[I]));
    B.CreateCall(Body, Args);
    B.CreateRetVoid();
  }

private:
  const LoopKernel &K;
  llvm::Module &M;
  llvm::LLVMContext &Ctx;
  IRBuilder<> B;
  llvm::Function *F = nullptr;
  std::unordered_map<int, Value *> Vars;
  std::vector<Value *> Locals; // allocas, by id

  void emitBody(llvm::Function &Body) {
    F = &Body;
    B.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", F));
    Locals.resize(K.locals.size());
    for (size_t I = 0; I < K.locals.size(); ++I)
      Locals[I] = B.CreateAlloca(valueType(K.locals[I]), nullptr,
                                 "acc" + std::to_string(I));
    for (const LoopStmt &S : K.body)
      emitStmt(S);
    B.CreateRetVoid();
  }

  /// The type of a value in registers (bool is i1).
  Type *valueType(DType T) {
    switch (T) {
    case DType::Bool: return B.getInt1Ty();
    case DType::Int8:
    case DType::UInt8: return B.getInt8Ty();
    case DType::Int16:
    case DType::UInt16: return B.getInt16Ty();
    case DType::Int32:
    case DType::UInt32: return B.getInt32Ty();
    case DType::Int64:
    case DType::UInt64: return B.getInt64Ty();
    case DType::Float32: return B.getFloatTy();
    case DType::Float64: return B.getDoubleTy();
    default: fail("codegen: dtype {} has no LLVM type", dtypeName(T));
    }
  }

  /// The type of an element in memory (bool is a byte).
  Type *memoryType(DType T) {
    return T == DType::Bool ? B.getInt8Ty() : valueType(T);
  }

  Value *address(int Buffer, const std::vector<LoopExpr> &Indices) {
    RIVET_CHECK(Buffer >= 0 && (size_t)Buffer < K.buffers.size(),
                "codegen: buffer {} of {}", Buffer, K.buffers.size());
    const LoopBuffer &Buf = K.buffers[(size_t)Buffer];
    RIVET_CHECK(Indices.size() == Buf.shape.size(),
                "codegen: {} indices for buffer {} of rank {}", Indices.size(),
                Buf.name, Buf.shape.size());
    Value *Flat = B.getInt64(0);
    for (size_t D = 0; D < Indices.size(); ++D) {
      Value *Scaled =
          D == 0 ? Flat
                 : B.CreateMul(Flat, emit(Buf.shape[D]), "", false, true);
      Flat = B.CreateAdd(Scaled, emit(Indices[D]), "", false, true);
    }
    return B.CreateInBoundsGEP(memoryType(Buf.dtype),
                               F->getArg((unsigned)Buffer), Flat);
  }

  void emitStmt(const LoopStmt &S) {
    switch (S->kind) {
    case LoopStmtKind::For: return emitFor(*S);
    case LoopStmtKind::Store: {
      DType T = K.buffers.at((size_t)S->id).dtype;
      Value *V = emit(S->value);
      if (T == DType::Bool)
        V = B.CreateZExt(V, B.getInt8Ty());
      B.CreateStore(V, address(S->id, S->indices));
      return;
    }
    case LoopStmtKind::Declare:
    case LoopStmtKind::Assign: {
      bool Reassoc = S->reassociable && isFloat(S->value->dtype);
      llvm::FastMathFlags Saved = B.getFastMathFlags();
      if (Reassoc) {
        llvm::FastMathFlags FMF;
        FMF.setAllowReassoc();
        B.setFastMathFlags(FMF);
      }
      Value *V = emit(S->value);
      B.setFastMathFlags(Saved);
      B.CreateStore(V, Locals.at((size_t)S->id));
      return;
    }
    }
  }

  /// A guarded do-while loop. Parallel loops run serially for now: the
  /// runtime has no parallel-for entry point (src/kernels/Threading.h) yet.
  void emitFor(const LoopStmtNode &S) {
    Value *Extent = emit(S.extent);
    llvm::BasicBlock *Pre = B.GetInsertBlock();
    auto *Header = llvm::BasicBlock::Create(Ctx, S.name + ".body", F);
    auto *Exit = llvm::BasicBlock::Create(Ctx, S.name + ".exit", F);
    B.CreateCondBr(B.CreateICmpSGT(Extent, B.getInt64(0)), Header, Exit);
    B.SetInsertPoint(Header);
    llvm::PHINode *Iv = B.CreatePHI(B.getInt64Ty(), 2, S.name);
    Iv->addIncoming(B.getInt64(0), Pre);
    Vars[S.id] = Iv;
    for (const LoopStmt &Inner : S.body)
      emitStmt(Inner);
    Value *Next = B.CreateAdd(Iv, B.getInt64(1), S.name + ".next", true, true);
    llvm::BranchInst *Latch =
        B.CreateCondBr(B.CreateICmpSLT(Next, Extent), Header, Exit);
    Iv->addIncoming(Next, B.GetInsertBlock());
    if (llvm::MDNode *Md = loopMetadata(S.loopKind))
      Latch->setMetadata(llvm::LLVMContext::MD_loop, Md);
    Vars.erase(S.id);
    B.SetInsertPoint(Exit);
  }

  llvm::MDNode *loopMetadata(LoopKind Kind) {
    const char *Key = Kind == LoopKind::Vectorized
                          ? "llvm.loop.vectorize.enable"
                      : Kind == LoopKind::Unrolled ? "llvm.loop.unroll.full"
                                                   : nullptr;
    if (!Key)
      return nullptr;
    std::vector<llvm::Metadata *> Ops{nullptr};
    if (Kind == LoopKind::Vectorized)
      Ops.push_back(
          llvm::MDNode::get(Ctx, {llvm::MDString::get(Ctx, Key),
                                  llvm::ConstantAsMetadata::get(B.getTrue())}));
    else
      Ops.push_back(llvm::MDNode::get(Ctx, {llvm::MDString::get(Ctx, Key)}));
    llvm::MDNode *Id = llvm::MDNode::getDistinct(Ctx, Ops);
    Id->replaceOperandWith(0, Id);
    return Id;
  }

  Value *constant(const LoopExprNode &E) {
    Type *Ty = valueType(E.dtype);
    if (isFloat(E.dtype))
      return llvm::ConstantFP::get(Ty, E.floatValue);
    return llvm::ConstantInt::get(Ty, (uint64_t)E.intValue, isSigned(E.dtype));
  }

  /// A call of a libm function (by its double name; "f" suffix for float).
  Value *libm(const char *Name, DType T, std::vector<Value *> Args) {
    std::string Sym = std::string(Name) + (T == DType::Float32 ? "f" : "");
    Type *Ty = valueType(T);
    std::vector<Type *> Tys(Args.size(), Ty);
    llvm::FunctionCallee Fn =
        M.getOrInsertFunction(Sym, llvm::FunctionType::get(Ty, Tys, false));
    if (auto *Decl = llvm::dyn_cast<llvm::Function>(Fn.getCallee())) {
      // As with -fno-math-errno: a pure function the optimizer may move.
      Decl->setDoesNotAccessMemory();
      Decl->setDoesNotThrow();
      Decl->addFnAttr(llvm::Attribute::WillReturn);
    }
    llvm::CallInst *C = B.CreateCall(Fn, Args);
    C->setDoesNotAccessMemory();
    return C;
  }

  Value *intrinsic(llvm::Intrinsic::ID Id, std::vector<Value *> Args) {
    return B.CreateIntrinsic(Id, {Args[0]->getType()}, Args);
  }

  Value *emit(const LoopExpr &E) {
    switch (E->kind) {
    case LoopExprKind::Const: return constant(*E);
    case LoopExprKind::Var: {
      auto It = Vars.find(E->id);
      RIVET_CHECK(It != Vars.end(), "codegen: loop variable {} out of scope",
                  E->name);
      return It->second;
    }
    case LoopExprKind::SizeParam:
      RIVET_CHECK(E->id >= 0 && (size_t)E->id < K.sizeParams.size(),
                  "codegen: size parameter {}", E->id);
      return F->getArg((unsigned)(K.buffers.size() + (size_t)E->id));
    case LoopExprKind::Load: {
      Value *V = B.CreateLoad(memoryType(E->dtype), address(E->id, E->args));
      if (E->dtype == DType::Bool)
        V = B.CreateICmpNE(V, B.getInt8(0));
      return V;
    }
    case LoopExprKind::Local:
      return B.CreateLoad(valueType(E->dtype), Locals.at((size_t)E->id));
    case LoopExprKind::Op: return emitOp(*E);
    }
    return nullptr;
  }

  Value *emitOp(const LoopExprNode &E) {
    std::vector<Value *> A;
    for (const LoopExpr &X : E.args)
      A.push_back(emit(X));
    DType T = E.args.empty() ? E.dtype : E.args[0]->dtype;
    bool Fp = isFloat(T);
    bool Signed = isSigned(T) && !Fp;
    switch (E.op) {
    case LoopOp::Add:
      return Fp ? B.CreateFAdd(A[0], A[1]) : B.CreateAdd(A[0], A[1]);
    case LoopOp::Sub:
      return Fp ? B.CreateFSub(A[0], A[1]) : B.CreateSub(A[0], A[1]);
    case LoopOp::Mul:
      return Fp ? B.CreateFMul(A[0], A[1]) : B.CreateMul(A[0], A[1]);
    case LoopOp::Div:
      return Fp       ? B.CreateFDiv(A[0], A[1])
             : Signed ? B.CreateSDiv(A[0], A[1])
                      : B.CreateUDiv(A[0], A[1]);
    case LoopOp::Rem:
      return Fp       ? B.CreateFRem(A[0], A[1])
             : Signed ? B.CreateSRem(A[0], A[1])
                      : B.CreateURem(A[0], A[1]);
    case LoopOp::Min:
    case LoopOp::Max: {
      bool IsMax = E.op == LoopOp::Max;
      if (!Fp) {
        Value *Lt =
            Signed ? B.CreateICmpSLT(A[0], A[1]) : B.CreateICmpULT(A[0], A[1]);
        return IsMax ? B.CreateSelect(Lt, A[1], A[0])
                     : B.CreateSelect(Lt, A[0], A[1]);
      }
      // NaN propagates (the first NaN operand), else A < B ? B : A (max).
      Value *R = IsMax
                     ? B.CreateSelect(B.CreateFCmpOLT(A[0], A[1]), A[1], A[0])
                     : B.CreateSelect(B.CreateFCmpOLT(A[1], A[0]), A[1], A[0]);
      R = B.CreateSelect(B.CreateFCmpUNO(A[1], A[1]), A[1], R);
      return B.CreateSelect(B.CreateFCmpUNO(A[0], A[0]), A[0], R);
    }
    case LoopOp::Neg: return Fp ? B.CreateFNeg(A[0]) : B.CreateNeg(A[0]);
    case LoopOp::Abs:
      if (Fp)
        return intrinsic(llvm::Intrinsic::fabs, A);
      if (!Signed)
        return A[0];
      return B.CreateSelect(
          B.CreateICmpSLT(A[0], llvm::ConstantInt::get(A[0]->getType(), 0)),
          B.CreateNeg(A[0]), A[0]);
    case LoopOp::Not: return B.CreateNot(A[0]);
    case LoopOp::And: return B.CreateAnd(A[0], A[1]);
    case LoopOp::Or: return B.CreateOr(A[0], A[1]);
    case LoopOp::Xor: return B.CreateXor(A[0], A[1]);
    case LoopOp::Shl:
    case LoopOp::Shr: return emitShift(E.op == LoopOp::Shl, Signed, A[0], A[1]);
    case LoopOp::EQ:
      return Fp ? B.CreateFCmpOEQ(A[0], A[1]) : B.CreateICmpEQ(A[0], A[1]);
    case LoopOp::NE:
      return Fp ? B.CreateFCmpUNE(A[0], A[1]) : B.CreateICmpNE(A[0], A[1]);
    case LoopOp::LT:
      return Fp       ? B.CreateFCmpOLT(A[0], A[1])
             : Signed ? B.CreateICmpSLT(A[0], A[1])
                      : B.CreateICmpULT(A[0], A[1]);
    case LoopOp::LE:
      return Fp       ? B.CreateFCmpOLE(A[0], A[1])
             : Signed ? B.CreateICmpSLE(A[0], A[1])
                      : B.CreateICmpULE(A[0], A[1]);
    case LoopOp::GT:
      return Fp       ? B.CreateFCmpOGT(A[0], A[1])
             : Signed ? B.CreateICmpSGT(A[0], A[1])
                      : B.CreateICmpUGT(A[0], A[1]);
    case LoopOp::GE:
      return Fp       ? B.CreateFCmpOGE(A[0], A[1])
             : Signed ? B.CreateICmpSGE(A[0], A[1])
                      : B.CreateICmpUGE(A[0], A[1]);
    case LoopOp::Select: return B.CreateSelect(A[0], A[1], A[2]);
    case LoopOp::Cast: return emitCast(A[0], T, E.dtype);
    case LoopOp::IsNan: return B.CreateFCmpUNO(A[0], A[0]);
    case LoopOp::Exp: return intrinsic(llvm::Intrinsic::exp, A);
    case LoopOp::Log: return intrinsic(llvm::Intrinsic::log, A);
    case LoopOp::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, A);
    case LoopOp::Pow: return intrinsic(llvm::Intrinsic::pow, A);
    case LoopOp::Sin: return intrinsic(llvm::Intrinsic::sin, A);
    case LoopOp::Cos: return intrinsic(llvm::Intrinsic::cos, A);
    case LoopOp::Floor: return intrinsic(llvm::Intrinsic::floor, A);
    case LoopOp::Ceil: return intrinsic(llvm::Intrinsic::ceil, A);
    case LoopOp::Round: return intrinsic(llvm::Intrinsic::roundeven, A);
    case LoopOp::Tanh: return libm("tanh", T, A);
    case LoopOp::Erf: return libm("erf", T, A);
    case LoopOp::Tan: return libm("tan", T, A);
    case LoopOp::Asin: return libm("asin", T, A);
    case LoopOp::Acos: return libm("acos", T, A);
    case LoopOp::Atan: return libm("atan", T, A);
    case LoopOp::Sinh: return libm("sinh", T, A);
    case LoopOp::Cosh: return libm("cosh", T, A);
    case LoopOp::Asinh: return libm("asinh", T, A);
    case LoopOp::Acosh: return libm("acosh", T, A);
    case LoopOp::Atanh: return libm("atanh", T, A);
    case LoopOp::Log1p: return libm("log1p", T, A);
    case LoopOp::Expm1: return libm("expm1", T, A);
    }
    fail("codegen: operation {} has no LLVM lowering", loopOpName(E.op));
  }

  /// The reference's shifts: an amount outside [0, bits) gives 0 (or -1 for
  /// a negative signed value shifted right), never poison.
  Value *emitShift(bool Left, bool Signed, Value *X, Value *N) {
    Type *Ty = X->getType();
    unsigned Bits = Ty->getIntegerBitWidth();
    Value *InRange = B.CreateICmpULT(N, llvm::ConstantInt::get(Ty, Bits));
    Value *Amount = B.CreateSelect(InRange, N, llvm::ConstantInt::get(Ty, 0));
    Value *Shifted = Left     ? B.CreateShl(X, Amount)
                     : Signed ? B.CreateAShr(X, Amount)
                              : B.CreateLShr(X, Amount);
    Value *Out = llvm::ConstantInt::get(Ty, 0);
    if (!Left && Signed) {
      // A negative amount gives 0; a huge one the sign.
      Value *Neg = B.CreateICmpSLT(X, llvm::ConstantInt::get(Ty, 0));
      Value *Big = B.CreateSelect(Neg, llvm::ConstantInt::getSigned(Ty, -1),
                                  llvm::ConstantInt::get(Ty, 0));
      Value *AmountNeg = B.CreateICmpSLT(N, llvm::ConstantInt::get(Ty, 0));
      Out = B.CreateSelect(AmountNeg, llvm::ConstantInt::get(Ty, 0), Big);
    }
    return B.CreateSelect(InRange, Shifted, Out);
  }

  Value *emitCast(Value *V, DType From, DType To) {
    Type *Ty = valueType(To);
    if (From == To)
      return V;
    if (To == DType::Bool)
      return isFloat(From)
                 ? B.CreateFCmpUNE(V, llvm::ConstantFP::get(V->getType(), 0))
                 : B.CreateICmpNE(V, llvm::ConstantInt::get(V->getType(), 0));
    if (From == DType::Bool)
      return isFloat(To) ? B.CreateUIToFP(V, Ty) : B.CreateZExt(V, Ty);
    if (isFloat(From) && isFloat(To))
      return B.CreateFPCast(V, Ty);
    if (isFloat(From))
      return isSigned(To) ? B.CreateFPToSI(V, Ty) : B.CreateFPToUI(V, Ty);
    if (isFloat(To))
      return isSigned(From) ? B.CreateSIToFP(V, Ty) : B.CreateUIToFP(V, Ty);
    return B.CreateIntCast(V, Ty, isSigned(From));
  }
};

} // namespace

void emitKernel(const LoopKernel &K, llvm::Module &M) {
  KernelEmitter(K, M).run();
}

} // namespace rivet::codegen
