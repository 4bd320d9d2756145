//===- EmitLLVM.cc - Loop kernel -> LLVM IR -------------------------------===//
//
// Straightforward IRBuilder code: locals are allocas (SROA promotes them),
// loops are guarded do-while loops (the form the vectorizer expects) with
// llvm.loop metadata from their annotation, buffers are noalias parameters
// of an internal body function. A parallel loop's body is outlined into a
// chunk function that the runtime's parallelFor calls (NativeKernelAbi.h).
// Integer arithmetic of the data wraps (no nsw), as the reference kernels do;
// the index arithmetic of buffer addressing is nsw. Floating-point code is
// exact except the updates of reductions, which may be reassociated, and
// float max/min updates, whose operands lowering keeps free of NaN (nnan
// nsz: the sign of a zero maximum is either).
// A streaming store (StreamingStores.h) on x86-64 runs its loop in two parts:
// ordinary stores up to the first 64-byte boundary, then the rest from a
// base pointer rounded up to it (llvm.ptrmask); after optimization
// (finishStreamingStores) the vector stores addressed from such a base are
// made non-temporal, the vector loads of their loop prefetch 4 KB ahead,
// and every function that streams ends with an sfence.
//
//===----------------------------------------------------------------------===//

#include "codegen/llvm/EmitLLVM.h"
#include "codegen/StreamingStores.h"
#include "codegen/llvm/PowerOfTwoScale.h"

#include "kernels/Error.h"

#include <llvm/ADT/Triple.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Local.h>

#include <set>
#include <unordered_map>

namespace rivet::codegen {
namespace {

using llvm::IRBuilder;
using llvm::Type;
using llvm::Value;

/// The alignment of the base of a streaming loop's aligned part: a cache
/// line, so that any vector width divides it. No other code of a kernel
/// masks a pointer with -64, which is how finishStreamingStores finds those
/// bases again after optimization.
constexpr unsigned kStreamingAlignment = 64;

/// The vector iterations a streaming loop interleaves. LLVM picks 1 for a
/// long body, whose iterations then overlap only as far as the scheduler
/// reaches (an expf is a chain of ~20 dependent operations): llvm-mca puts
/// sigmoid(x * 2 + 1) * x at 14.4 cycles per 8 floats on Zen 3 that way,
/// 11.9 with 2 interleaved and 10.9 with 4 (8: 11.4, spilling), nearer the
/// ~8 of its arithmetic alone, the limit once streaming stores relieve the
/// memory. The rows of a streaming loop are long enough for 4 x 8.
constexpr unsigned kStreamingInterleave = 4;

bool hasParallelLoop(const std::vector<LoopStmt> &Body) {
  for (const LoopStmt &S : Body)
    if (S->kind == LoopStmtKind::For &&
        (S->loopKind == LoopKind::Parallel || hasParallelLoop(S->body)))
      return true;
  return false;
}

class KernelEmitter {
public:
  KernelEmitter(const LoopKernel &K, llvm::Module &M,
                const EmitOptions &Options)
      : K(K), M(M), Options(Options), Ctx(M.getContext()), B(Ctx),
        StreamingTarget(llvm::Triple(M.getTargetTriple()).getArch() ==
                        llvm::Triple::x86_64) {}

  void run() {
    llvm::Type *I64 = B.getInt64Ty();
    llvm::Type *Ptr = B.getPtrTy();
    // A buffer pointer stored into a parallel loop's closure is captured.
    BuffersCaptured = hasParallelLoop(K.body);
    // The body: (ptr noalias buf0, ..., i64 size0, ..., ptr runtime).
    llvm::Function *Body = beginFunction(K.name + ".body", {Ptr});
    Runtime = Body->getArg((unsigned)(K.buffers.size() + K.sizeParams.size()));
    for (const LoopStmt &S : K.body)
      emitStmt(S);
    fenceStreamingStores();
    B.CreateRetVoid();

    // The entry point: unpacks the arrays and calls the body.
    auto *EntryTy = llvm::FunctionType::get(B.getVoidTy(), {Ptr, Ptr, Ptr},
                                            /*isVarArg=*/false);
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
    Args.push_back(Entry->getArg(2));
    B.CreateCall(Body, Args);
    B.CreateRetVoid();
  }

private:
  const LoopKernel &K;
  llvm::Module &M;
  EmitOptions Options;
  llvm::LLVMContext &Ctx;
  IRBuilder<> B;
  bool BuffersCaptured = false;
  int NumParallel = 0;
  /// x86-64 (SSE and its sfence always there): streaming stores become
  /// non-temporal (other targets keep ordinary ones).
  bool StreamingTarget = false;
  /// The aligned part of a streaming loop being emitted: its streaming
  /// store writes StreamBase[StreamIv], StreamIv counting its iterations
  /// from 0 (an address the optimizer sees is aligned every 64 bytes).
  Value *StreamBase = nullptr, *StreamIv = nullptr;
  /// Whether the function being emitted has streaming stores.
  bool Streamed = false;

  // The function being emitted: its buffer and size arguments, the runtime
  // table (null inside a parallel loop's body: a nested parallel loop runs
  // serially, the threads are taken), loop variables in scope, the allocas
  // of the locals by id.
  llvm::Function *F = nullptr;
  std::vector<Value *> BufferArgs, SizeArgs;
  Value *Runtime = nullptr;
  std::unordered_map<int, Value *> Vars;
  std::vector<Value *> Locals;
  /// The values of the nodes of the statement being emitted (null: none):
  /// an expression is a DAG, and a node shared by several operands is
  /// emitted once (emitted per use, a chain of relus doubles per op). A
  /// statement's expressions are straight-line code in one block, reading
  /// memory the statement writes only after them, so each value dominates
  /// the statement's later uses; the map lives for one statement.
  std::unordered_map<const LoopExprNode *, Value *> *Emitted = nullptr;

  /// Installs a fresh map of emitted values for one statement.
  class StatementScope {
  public:
    explicit StatementScope(KernelEmitter &E) : E(E), Outer(E.Emitted) {
      E.Emitted = &Values;
    }
    ~StatementScope() { E.Emitted = Outer; }
    StatementScope(const StatementScope &) = delete;
    StatementScope &operator=(const StatementScope &) = delete;

  private:
    KernelEmitter &E;
    std::unordered_map<const LoopExprNode *, Value *> *Outer;
    std::unordered_map<const LoopExprNode *, Value *> Values;
  };

  /// Starts an internal function (ptr noalias buf0, ..., i64 size0, ...,
  /// Extra...) and makes it the one being emitted, with fresh allocas for
  /// the locals.
  llvm::Function *beginFunction(const std::string &Name,
                                const std::vector<Type *> &Extra) {
    std::vector<Type *> ParamTys(K.buffers.size(), B.getPtrTy());
    ParamTys.insert(ParamTys.end(), K.sizeParams.size(), B.getInt64Ty());
    ParamTys.insert(ParamTys.end(), Extra.begin(), Extra.end());
    auto *Ty = llvm::FunctionType::get(B.getVoidTy(), ParamTys, false);
    F = llvm::Function::Create(Ty, llvm::GlobalValue::InternalLinkage, Name, M);
    F->addFnAttr(llvm::Attribute::NoUnwind);
    BufferArgs.clear();
    SizeArgs.clear();
    for (size_t I = 0; I < K.buffers.size(); ++I) {
      F->addParamAttr((unsigned)I, llvm::Attribute::NoAlias);
      if (!BuffersCaptured)
        F->addParamAttr((unsigned)I, llvm::Attribute::NoCapture);
      if (!K.buffers[I].isOutput)
        F->addParamAttr((unsigned)I, llvm::Attribute::ReadOnly);
      BufferArgs.push_back(F->getArg((unsigned)I));
    }
    for (size_t I = 0; I < K.sizeParams.size(); ++I)
      SizeArgs.push_back(F->getArg((unsigned)(K.buffers.size() + I)));
    B.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", F));
    Streamed = false;
    Vars.clear();
    Locals.assign(K.locals.size(), nullptr);
    for (size_t I = 0; I < K.locals.size(); ++I)
      Locals[I] = B.CreateAlloca(valueType(K.locals[I]), nullptr,
                                 "acc" + std::to_string(I));
    return F;
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
                               BufferArgs.at((size_t)Buffer), Flat);
  }

  void emitStmt(const LoopStmt &S) {
    if (S->kind == LoopStmtKind::For)
      return emitFor(*S);
    StatementScope Scope(*this);
    switch (S->kind) {
    case LoopStmtKind::For: break;
    case LoopStmtKind::Store: {
      DType T = K.buffers.at((size_t)S->id).dtype;
      Value *V = emit(S->value);
      if (T == DType::Bool)
        V = B.CreateZExt(V, B.getInt8Ty());
      Value *Ptr =
          S->streaming && StreamBase
              ? B.CreateInBoundsGEP(memoryType(T), StreamBase, StreamIv)
              : address(S->id, S->indices);
      B.CreateStore(V, Ptr);
      return;
    }
    case LoopStmtKind::Declare:
    case LoopStmtKind::Assign: {
      if (S->nanFree && isFloat(S->value->dtype)) {
        B.CreateStore(emitNanFreeMinMax(*S->value), Locals.at((size_t)S->id));
        return;
      }
      Value *V = S->reassociable && isFloat(S->value->dtype)
                     ? emitReassociableUpdate(*S->value)
                     : emit(S->value);
      B.CreateStore(V, Locals.at((size_t)S->id));
      return;
    }
    }
  }

  /// A reduction's float update (acc + x, acc * x): the operands are
  /// emitted exactly, only the update itself may be reassociated (what the
  /// loop vectorizer needs). Flags on the operands would let LLVM rewrite
  /// the element's own arithmetic ((a / x) * x to a), which changes results
  /// at the edges of the float range.
  Value *emitReassociableUpdate(const LoopExprNode &E) {
    bool Binary = E.kind == LoopExprKind::Op && E.args.size() == 2 &&
                  (E.op == LoopOp::Add || E.op == LoopOp::Mul);
    RIVET_CHECK(Binary, "codegen: a reassociable update that is not an add or "
                        "a multiply");
    Value *X = emit(E.args[0]), *Y = emit(E.args[1]);
    llvm::FastMathFlags Saved = B.getFastMathFlags();
    llvm::FastMathFlags FMF;
    FMF.setAllowReassoc();
    B.setFastMathFlags(FMF);
    Value *R = E.op == LoopOp::Add ? B.CreateFAdd(X, Y) : B.CreateFMul(X, Y);
    B.setFastMathFlags(Saved);
    return R;
  }

  /// A float max/min whose operands are never NaN: the operands are
  /// emitted as usual, only the max/min itself carries nnan nsz (the form
  /// LLVM 16's loop vectorizer recognizes as an fmax/fmin reduction).
  Value *emitNanFreeMinMax(const LoopExprNode &E) {
    RIVET_CHECK(E.kind == LoopExprKind::Op &&
                    (E.op == LoopOp::Max || E.op == LoopOp::Min),
                "codegen: a NaN-free update that is not a max or min");
    Value *X = emit(E.args[0]), *Y = emit(E.args[1]);
    llvm::FastMathFlags Saved = B.getFastMathFlags();
    llvm::FastMathFlags FMF;
    FMF.setNoNaNs();
    FMF.setNoSignedZeros();
    B.setFastMathFlags(FMF);
    Value *R = E.op == LoopOp::Max
                   ? B.CreateSelect(B.CreateFCmpOLT(X, Y), Y, X)
                   : B.CreateSelect(B.CreateFCmpOLT(Y, X), Y, X);
    B.setFastMathFlags(Saved);
    return R;
  }

  void emitFor(const LoopStmtNode &S) {
    if (S.loopKind == LoopKind::Parallel && Runtime)
      return emitParallelFor(S);
    if (isStreamingLoop(S))
      return emitStreamingLoop(S, B.getInt64(0), emit(S.extent));
    emitLoop(S, B.getInt64(0), emit(S.extent),
             loopMetadata(S.loopKind, shortLoopInterleave(S)));
  }

  /// The vector iterations a vectorized loop of a short constant extent
  /// interleaves: one, so that whole vectors cover it. LLVM picks up to 4,
  /// which leaves the rest scalar: a 48-float output row (a generated
  /// matmul accumulating in its row) ran 32 in vectors and 16 in scalars,
  /// 17 us where one vector per iteration took 10.
  static unsigned shortLoopInterleave(const LoopStmtNode &S) {
    constexpr int64_t kShortExtent = 64;
    return S.loopKind == LoopKind::Vectorized && S.extent->isConst() &&
                   S.extent->intValue <= kShortExtent
               ? 1
               : 0;
  }

  /// Whether S is the loop of a streaming store that this target streams.
  bool isStreamingLoop(const LoopStmtNode &S) const {
    return StreamingTarget && S.body.size() == 1 &&
           S.body[0]->kind == LoopStmtKind::Store && S.body[0]->streaming;
  }

  /// The streaming loop S over [Begin, End), vectorized: with non-temporal
  /// stores where its output is large enough (decided at run time for a
  /// symbolic shape: the other branch is the ordinary loop).
  void emitStreamingLoop(const LoopStmtNode &S, Value *Begin, Value *End) {
    LoopExpr Cond = streamingCondition(K, S.body[0]->id);
    if (Cond->isConst()) {
      if (Cond->intValue)
        emitAlignedStreamingLoop(S, Begin, End);
      else
        emitLoop(S, Begin, End, loopMetadata(LoopKind::Vectorized));
      return;
    }
    auto *Stream = llvm::BasicBlock::Create(Ctx, S.name + ".stream", F);
    auto *Plain = llvm::BasicBlock::Create(Ctx, S.name + ".cached", F);
    auto *Join = llvm::BasicBlock::Create(Ctx, S.name + ".join", F);
    B.CreateCondBr(emit(Cond), Stream, Plain);
    B.SetInsertPoint(Stream);
    emitAlignedStreamingLoop(S, Begin, End);
    B.CreateBr(Join);
    B.SetInsertPoint(Plain);
    emitLoop(S, Begin, End, loopMetadata(LoopKind::Vectorized));
    B.CreateBr(Join);
    B.SetInsertPoint(Join);
  }

  /// The streaming loop S over [Begin, End) in two parts: a scalar loop of
  /// ordinary stores up to the first element on a 64-byte boundary, then a
  /// vectorized loop whose store addresses that boundary, a base pointer
  /// rounded up by llvm.ptrmask and assumed aligned (the optimizer then
  /// infers the alignment of the vector stores from it; the mask keeps it
  /// from folding the address back into the buffer's, and lets
  /// finishStreamingStores find the base again: it makes the aligned vector
  /// stores addressed from it non-temporal). An output not aligned to its
  /// element size never reaches a boundary: all its stores are ordinary.
  void emitAlignedStreamingLoop(const LoopStmtNode &S, Value *Begin,
                                Value *End) {
    const LoopStmtNode &St = *S.body[0];
    uint64_t Size = dtypeSize(K.buffers.at((size_t)St.id).dtype);
    Type *I64 = B.getInt64Ty();
    Vars[S.id] = Begin;
    Value *First = address(St.id, St.indices);
    Vars.erase(S.id);
    Value *Base = B.CreateIntrinsic(
        llvm::Intrinsic::ptrmask, {B.getPtrTy(), I64},
        {B.CreateGEP(B.getInt8Ty(), First, B.getInt64(kStreamingAlignment - 1)),
         B.getInt64(-(int64_t)kStreamingAlignment)},
        nullptr, S.name + ".line");
    // LLVM 16 derives no alignment from ptrmask itself.
    B.CreateAlignmentAssumption(M.getDataLayout(), Base, kStreamingAlignment);
    Value *PeelBytes =
        B.CreateSub(B.CreatePtrToInt(Base, I64), B.CreatePtrToInt(First, I64));
    Value *Peel = B.CreateLShr(PeelBytes, llvm::Log2_64(Size));
    Value *Count = B.CreateSub(End, Begin);
    Value *ElementAligned =
        B.CreateICmpEQ(B.CreateAnd(PeelBytes, Size - 1), B.getInt64(0));
    Peel = B.CreateSelect(
        B.CreateAnd(ElementAligned, B.CreateICmpSLT(Peel, Count)), Peel, Count);
    Value *Mid = B.CreateAdd(Begin, Peel, S.name + ".aligned", false, true);
    emitLoop(S, Begin, Mid, scalarLoopMetadata());

    auto *Pre = llvm::BasicBlock::Create(Ctx, S.name + ".streaming", F);
    auto *Done = llvm::BasicBlock::Create(Ctx, S.name + ".streamed", F);
    B.CreateCondBr(B.CreateICmpSLT(Mid, End), Pre, Done);
    B.SetInsertPoint(Pre);
    StreamBase = Base;
    emitLoop(S, B.getInt64(0), B.CreateSub(End, Mid),
             loopMetadata(LoopKind::Vectorized, kStreamingInterleave), Mid);
    StreamBase = StreamIv = nullptr;
    B.CreateBr(Done);
    B.SetInsertPoint(Done);
    Streamed = true;
  }

  /// Non-temporal stores are weakly ordered: neither returning nor the
  /// thread pool's release/acquire handoff orders them before the caller's
  /// (or another thread's) reads; an sfence does.
  void fenceStreamingStores() {
    if (Streamed)
      B.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
  }

  /// for S.id in [Begin, End) { S.body } as a guarded do-while loop; with
  /// an Offset, S.id is the counter plus Offset (and the counter is
  /// StreamIv while a streaming loop is emitted).
  void emitLoop(const LoopStmtNode &S, Value *Begin, Value *End,
                llvm::MDNode *Md, Value *Offset = nullptr) {
    llvm::BasicBlock *Pre = B.GetInsertBlock();
    auto *Header = llvm::BasicBlock::Create(Ctx, S.name + ".body", F);
    auto *Exit = llvm::BasicBlock::Create(Ctx, S.name + ".exit", F);
    B.CreateCondBr(B.CreateICmpSLT(Begin, End), Header, Exit);
    B.SetInsertPoint(Header);
    llvm::PHINode *Iv = B.CreatePHI(B.getInt64Ty(), 2, S.name);
    Iv->addIncoming(Begin, Pre);
    Vars[S.id] = Offset ? B.CreateAdd(Iv, Offset, "", false, true) : Iv;
    if (Offset && StreamBase)
      StreamIv = Iv;
    for (const LoopStmt &Inner : S.body)
      emitStmt(Inner);
    Value *Next = B.CreateAdd(Iv, B.getInt64(1), S.name + ".next", true, true);
    llvm::BranchInst *Latch =
        B.CreateCondBr(B.CreateICmpSLT(Next, End), Header, Exit);
    Iv->addIncoming(Next, B.GetInsertBlock());
    if (Md)
      Latch->setMetadata(llvm::LLVMContext::MD_loop, Md);
    Vars.erase(S.id);
    B.SetInsertPoint(Exit);
  }

  /// A parallel loop: its body is outlined into `void chunk(ptr closure, i64
  /// begin, i64 end)` that runs iterations [begin, end); a closure on this
  /// function's stack holds every value from outside the loop that the body
  /// reads (buffer and size arguments, enclosing loop variables, locals);
  /// Runtime->parallelFor(extent, grain, &closure, chunk) runs the chunks.
  /// Grain: the iterations that make kParallelChunkWork scalar operations
  /// by loopWork of the body (at run time when its extents are symbolic).
  void emitParallelFor(const LoopStmtNode &S) {
    LoopUses U;
    U.stmts(S.body);
    std::vector<int> CapVars, CapLocals;
    for (int V : U.vars)
      if (Vars.count(V))
        CapVars.push_back(V);
    for (int L : U.locals)
      if (!U.declared.count(L))
        CapLocals.push_back(L);

    // The closure: buffers, sizes, loop variables, locals.
    std::vector<Type *> Fields(K.buffers.size(), B.getPtrTy());
    Fields.insert(Fields.end(), K.sizeParams.size() + CapVars.size(),
                  B.getInt64Ty());
    for (int L : CapLocals)
      Fields.push_back(valueType(K.locals.at((size_t)L)));
    auto *ClosureTy = llvm::StructType::get(Ctx, Fields);
    std::vector<Value *> Captured = BufferArgs;
    Captured.insert(Captured.end(), SizeArgs.begin(), SizeArgs.end());
    for (int V : CapVars)
      Captured.push_back(Vars.at(V));
    for (int L : CapLocals)
      Captured.push_back(B.CreateLoad(valueType(K.locals.at((size_t)L)),
                                      Locals.at((size_t)L)));
    // In the entry block, so that a parallel loop inside a serial one
    // does not grow the stack.
    IRBuilder<> EntryB(&F->getEntryBlock(), F->getEntryBlock().begin());
    Value *Closure = EntryB.CreateAlloca(ClosureTy, nullptr, "closure");
    for (size_t I = 0; I < Captured.size(); ++I)
      B.CreateStore(Captured[I],
                    B.CreateStructGEP(ClosureTy, Closure, (unsigned)I));

    Value *Extent = emit(S.extent);
    Value *Grain = grainOf(S);
    llvm::Function *Chunk = emitChunk(S, ClosureTy, CapVars, CapLocals);
    Type *I64 = B.getInt64Ty(), *Ptr = B.getPtrTy();
    auto *ParallelForTy =
        llvm::FunctionType::get(B.getVoidTy(), {I64, I64, Ptr, Ptr}, false);
    // RivetKernelRuntime::parallelFor is the table's first field.
    Value *ParallelFor = B.CreateLoad(Ptr, Runtime, "parallel_for");
    B.CreateCall(ParallelForTy, ParallelFor, {Extent, Grain, Closure, Chunk});
  }

  /// The fewest iterations of S worth a chunk of their own.
  Value *grainOf(const LoopStmtNode &S) {
    LoopExpr Work = loopWork(S.body);
    LoopUses W;
    W.expr(Work);
    for (int V : W.vars)
      if (!Vars.count(V))
        return B.getInt64(1); // work that varies with the iteration
    Value *PerIter = emit(Work);
    PerIter = B.CreateSelect(B.CreateICmpSLT(PerIter, B.getInt64(1)),
                             B.getInt64(1), PerIter);
    return B.CreateSDiv(
        B.CreateAdd(B.getInt64(kParallelChunkWork - 1), PerIter), PerIter,
        "grain");
  }

  /// The outlined body of the parallel loop S: `void name.parN(ptr closure,
  /// i64 begin, i64 end)` unpacks the closure and calls an internal function
  /// with noalias buffer parameters (inlined, so the vectorizer keeps the
  /// no-alias facts) that runs the iterations. A chunk of an innermost loop
  /// is vectorized.
  llvm::Function *emitChunk(const LoopStmtNode &S, llvm::StructType *ClosureTy,
                            const std::vector<int> &CapVars,
                            const std::vector<int> &CapLocals) {
    // Save the enclosing function's state.
    auto IP = B.saveIP();
    llvm::Function *SavedF = F;
    std::vector<Value *> SavedBuffers = BufferArgs, SavedSizes = SizeArgs;
    Value *SavedRuntime = Runtime;
    auto SavedVars = Vars;
    std::vector<Value *> SavedLocals = Locals;
    bool SavedStreamed = Streamed;

    std::string Name = K.name + ".par" + std::to_string(NumParallel++);
    Type *I64 = B.getInt64Ty(), *Ptr = B.getPtrTy();
    size_t NumSizes = K.sizeParams.size();
    // The iterations, with the captured values as parameters.
    std::vector<Type *> Extra(CapVars.size(), I64);
    for (int L : CapLocals)
      Extra.push_back(valueType(K.locals.at((size_t)L)));
    Extra.push_back(I64); // begin
    Extra.push_back(I64); // end
    llvm::Function *Iters = beginFunction(Name + ".iters", Extra);
    Runtime = nullptr;
    unsigned Arg = (unsigned)(K.buffers.size() + NumSizes);
    for (int V : CapVars)
      Vars[V] = Iters->getArg(Arg++);
    for (int L : CapLocals)
      B.CreateStore(Iters->getArg(Arg++), Locals.at((size_t)L));
    Value *Begin = Iters->getArg(Arg), *End = Iters->getArg(Arg + 1);
    LoopUses U;
    U.stmts(S.body);
    if (isStreamingLoop(S))
      emitStreamingLoop(S, Begin, End);
    else
      emitLoop(S, Begin, End,
               U.hasLoop ? nullptr : loopMetadata(LoopKind::Vectorized));
    fenceStreamingStores();
    B.CreateRetVoid();

    // The entry the runtime calls.
    auto *ChunkTy =
        llvm::FunctionType::get(B.getVoidTy(), {Ptr, I64, I64}, false);
    llvm::Function *Chunk = llvm::Function::Create(
        ChunkTy, llvm::GlobalValue::InternalLinkage, Name, M);
    Chunk->addFnAttr(llvm::Attribute::NoUnwind);
    B.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", Chunk));
    std::vector<Value *> Args;
    for (unsigned I = 0; I < ClosureTy->getNumElements(); ++I)
      Args.push_back(
          B.CreateLoad(ClosureTy->getElementType(I),
                       B.CreateStructGEP(ClosureTy, Chunk->getArg(0), I)));
    Args.push_back(Chunk->getArg(1));
    Args.push_back(Chunk->getArg(2));
    B.CreateCall(Iters, Args);
    B.CreateRetVoid();

    F = SavedF;
    BufferArgs = std::move(SavedBuffers);
    SizeArgs = std::move(SavedSizes);
    Runtime = SavedRuntime;
    Vars = std::move(SavedVars);
    Locals = std::move(SavedLocals);
    Streamed = SavedStreamed;
    B.restoreIP(IP);
    return Chunk;
  }

  /// The llvm.loop metadata of a loop of kind Kind; Interleave: how many
  /// vector iterations a vectorized loop interleaves (0: LLVM's choice).
  llvm::MDNode *loopMetadata(LoopKind Kind, unsigned Interleave = 0) {
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
    if (Kind == LoopKind::Vectorized && Interleave)
      Ops.push_back(llvm::MDNode::get(
          Ctx, {llvm::MDString::get(Ctx, "llvm.loop.interleave.count"),
                llvm::ConstantAsMetadata::get(B.getInt32(Interleave))}));
    llvm::MDNode *Id = llvm::MDNode::getDistinct(Ctx, Ops);
    Id->replaceOperandWith(0, Id);
    return Id;
  }

  /// A loop left scalar and rolled: the few iterations before a streaming
  /// loop's aligned part.
  llvm::MDNode *scalarLoopMetadata() {
    std::vector<llvm::Metadata *> Ops{
        nullptr,
        llvm::MDNode::get(
            Ctx, {llvm::MDString::get(Ctx, "llvm.loop.vectorize.enable"),
                  llvm::ConstantAsMetadata::get(B.getFalse())}),
        llvm::MDNode::get(
            Ctx, {llvm::MDString::get(Ctx, "llvm.loop.unroll.disable")})};
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
    if (!Emitted || E->args.empty())
      return emitNode(E);
    auto It = Emitted->find(E.get());
    if (It != Emitted->end())
      return It->second;
    Value *V = emitNode(E);
    Emitted->emplace(E.get(), V);
    return V;
  }

  Value *emitNode(const LoopExpr &E) {
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
      return SizeArgs[(size_t)E->id];
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
    case LoopOp::SignBit: {
      // A sign test of the bits, which x86 blends on directly.
      Type *I = B.getIntNTy(A[0]->getType()->getPrimitiveSizeInBits());
      return B.CreateICmpSLT(B.CreateBitCast(A[0], I),
                             llvm::ConstantInt::get(I, 0));
    }
    case LoopOp::Exp:
      return T == DType::Float32 ? emitExpF32(A[0], isNonPositive(*E.args[0]))
                                 : intrinsic(llvm::Intrinsic::exp, A);
    case LoopOp::Log: return intrinsic(llvm::Intrinsic::log, A);
    case LoopOp::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, A);
    case LoopOp::Pow: return intrinsic(llvm::Intrinsic::pow, A);
    case LoopOp::Sin: return intrinsic(llvm::Intrinsic::sin, A);
    case LoopOp::Cos: return intrinsic(llvm::Intrinsic::cos, A);
    case LoopOp::Floor: return intrinsic(llvm::Intrinsic::floor, A);
    case LoopOp::Ceil: return intrinsic(llvm::Intrinsic::ceil, A);
    case LoopOp::Round: return intrinsic(llvm::Intrinsic::roundeven, A);
    case LoopOp::Tanh:
      return T == DType::Float32 ? emitTanhF32(A[0]) : libm("tanh", T, A);
    case LoopOp::Erf:
      return T == DType::Float32 ? emitErfF32(A[0]) : libm("erf", T, A);
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

  /// expf expanded inline (after Cephes' expf: x = n ln2 + r, a degree-6
  /// polynomial for e^r, scaling by 2^n in two steps so that subnormal and
  /// overflowing results come out right), within 2 ulp of libm: a loop
  /// calling it vectorizes, and there is no vector math library the
  /// runtime could link. The loops calling it are latency-bound, so it has
  /// no operation with a latency of its own (round, float-to-int) and no
  /// select for NaN: n comes from the bits of a float sum, and a NaN
  /// argument stays NaN through the float arithmetic (the integer part
  /// makes the scale factors garbage then, but NaN times anything is NaN).
  /// NonPositive: X is known to be <= 0 or NaN (no upper clamp, and 2^n
  /// in one fixed split). With Options.vectorScale the scaling by 2^n is
  /// the helper call of PowerOfTwoScale.h (vscalefps once vectorized).
  Value *emitExpF32(Value *X, bool NonPositive) {
    Type *Ty = X->getType();
    Type *I32 = B.getInt32Ty();
    auto C = [&](double V) { return llvm::ConstantFP::get(Ty, V); };
    auto MulAdd = [&](Value *A, Value *Bv, Value *Cv) {
      return B.CreateIntrinsic(llvm::Intrinsic::fmuladd, {Ty}, {A, Bv, Cv});
    };
    // Clamped into [-104, 89] so that n fits the exponent: the scaling then
    // overflows to +inf above ln(FLT_MAX) and rounds to the subnormal (or
    // 0) below, with no selects for either. NaN fails both compares and
    // stays NaN.
    Value *Xs = X;
    if (!NonPositive)
      Xs = B.CreateSelect(B.CreateFCmpOGT(Xs, C(89)), C(89), Xs);
    Xs = B.CreateSelect(B.CreateFCmpOLT(Xs, C(-104)), C(-104), Xs);
    // n = x log2(e) rounded to nearest, by adding 1.5 * 2^23: the sum's
    // last mantissa bit is worth 1, so its bits are those of 1.5 * 2^23
    // plus n.
    const double Shifter = 12582912.0; // 1.5 * 2^23, bits 0x4B400000
    Value *T = MulAdd(Xs, C(1.44269504088896341), C(Shifter));
    Value *Z = B.CreateFSub(T, C(Shifter));
    // r = x - n ln2, ln2 split so that n * 0.693359375 is exact.
    Value *R = MulAdd(Z, C(-0.693359375), Xs);
    R = MulAdd(Z, C(2.12194440e-4), R);
    // e^r = 1 + r + r^2 p(r), p of degree 4 fitted for the least maximum
    // relative error over |r| <= ln(2)/2 (4e-9 with float coefficients,
    // far below an ulp; Cephes' degree 5 costs one more multiply-add), in
    // Estrin's form: (p0 + p1 r) + r^2 ((p2 + p3 r) + r^2 p4) has half the
    // latency of Horner's with as many operations.
    Value *R2 = B.CreateFMul(R, R);
    Value *Lo = MulAdd(C(0.1666652113199234), R, C(0.4999999403953552));
    Value *Hi = MulAdd(C(0.008368716575205326), R, C(0.04166838899254799));
    Hi = MulAdd(C(0.001381458598189056), R2, Hi);
    Value *P = MulAdd(Hi, R2, Lo);
    P = MulAdd(P, R2, B.CreateFAdd(R, C(1)));
    if (Options.vectorScale)
      return emitScaleCall(B, P, Z);
    if (NonPositive) {
      // n in [-150, 0]: 2^n as 2^(n + 64) * 2^-64, both normal floats. The
      // sum's bits shifted into a float's exponent are n's (1.5 * 2^23 has
      // no bits below its 10th).
      Value *NExp = B.CreateShl(B.CreateBitCast(T, I32), 23);
      Value *Pow2 =
          B.CreateBitCast(B.CreateAdd(NExp, B.getInt32(191 << 23)), Ty);
      return B.CreateFMul(B.CreateFMul(P, Pow2), C(0x1p-64));
    }
    // n from the sum's bits, then 2^n in two factors.
    Value *N = B.CreateSub(B.CreateBitCast(T, I32), B.getInt32(0x4B400000));
    return emitPortableScale(B, P, N);
  }

  /// The polynomial with coefficients Coef (lowest degree first) at V, in
  /// Horner's form of fused multiply-adds.
  Value *emitHorner(std::initializer_list<double> Coef, Value *V) {
    Type *Ty = V->getType();
    const double *K = Coef.end() - 1;
    Value *R = llvm::ConstantFP::get(Ty, *K);
    while (K-- != Coef.begin())
      R = B.CreateIntrinsic(llvm::Intrinsic::fmuladd, {Ty},
                            {R, V, llvm::ConstantFP::get(Ty, *K)});
    return R;
  }

  /// tanhf expanded inline (after Cephes' tanhf), within 2 ulp of libm:
  /// for |x| < 0.625 an odd polynomial, x + x^3 p(x^2); above, 1 - 2 /
  /// (e^2|x| + 1) with the inline exp (1 from |x| > 9, where e^2|x|
  /// overflows 2^26 and 2 / e rounds away against 1). Computed on |x| and
  /// signed at the end, so that tanh(-0) is -0; NaN falls through the
  /// second branch and stays NaN. libm's tanhf kept the loops calling it
  /// scalar: tanh of 2^20 floats took 79 ms that way, 0.58 ms now (one
  /// Sapphire Rapids core).
  Value *emitTanhF32(Value *X) {
    Type *Ty = X->getType();
    auto C = [&](double V) { return llvm::ConstantFP::get(Ty, V); };
    auto MulAdd = [&](Value *A, Value *Bv, Value *Cv) {
      return B.CreateIntrinsic(llvm::Intrinsic::fmuladd, {Ty}, {A, Bv, Cv});
    };
    Value *A = B.CreateIntrinsic(llvm::Intrinsic::fabs, {Ty}, {X});
    Value *Z = B.CreateFMul(A, A);
    Value *P =
        emitHorner({-3.33332819422e-1, 1.33314422036e-1, -5.37397155531e-2,
                    2.06390887954e-2, -5.70498872745e-3},
                   Z);
    Value *Small = MulAdd(B.CreateFMul(P, Z), A, A);
    Value *E = emitExpF32(B.CreateFAdd(A, A), /*NonPositive=*/false);
    Value *Large =
        B.CreateFSub(C(1), B.CreateFDiv(C(2), B.CreateFAdd(E, C(1))));
    Value *R = B.CreateSelect(B.CreateFCmpOLT(A, C(0.625)), Small, Large);
    return B.CreateIntrinsic(llvm::Intrinsic::copysign, {Ty}, {R, X});
  }

  /// erff expanded inline, within 2 ulp of libm: below |x| = 1 an odd
  /// polynomial x p(x^2), above 1 - e^(-x^2) q(1/x), with the inline exp
  /// and x clamped to 4 (erf rounds to 1 from 3.92). p (degree 5) and q
  /// (degree 9, fitted to erfc(x) e^(x^2) on [1, 4]) have the least
  /// maximum relative error, 4e-8 and 1.5e-8 (tools/scripts/fit_erf.py).
  /// On |x|, signed at the end (erf(-0) = -0); NaN stays NaN through the
  /// second branch. libm's erff kept the loops calling it scalar (GELU).
  Value *emitErfF32(Value *X) {
    Type *Ty = X->getType();
    auto C = [&](double V) { return llvm::ConstantFP::get(Ty, V); };
    Value *A = B.CreateIntrinsic(llvm::Intrinsic::fabs, {Ty}, {X});
    Value *Small = B.CreateFMul(
        A, emitHorner({1.1283791065216064, -0.3761232793331146,
                       0.11280182003974915, -0.02671135403215885,
                       0.004917594138532877, -0.0005631576641462743},
                      B.CreateFMul(A, A)));
    Value *Ac = B.CreateSelect(B.CreateFCmpOGT(A, C(4)), C(4), A);
    Value *Q = emitHorner({0.00012107825750717893, 0.5617679357528687,
                           0.020535847172141075, -0.37586310505867004,
                           0.23039507865905762, 0.23833422362804413,
                           -0.5369493365287781, 0.43824100494384766,
                           -0.17971323430538177, 0.030714072287082672},
                          B.CreateFDiv(C(1), Ac));
    Value *E = emitExpF32(B.CreateFNeg(B.CreateFMul(Ac, Ac)),
                          /*NonPositive=*/true);
    Value *Large = B.CreateIntrinsic(llvm::Intrinsic::fmuladd, {Ty},
                                     {B.CreateFNeg(E), Q, C(1)});
    Value *R = B.CreateSelect(B.CreateFCmpOLT(A, C(1)), Small, Large);
    return B.CreateIntrinsic(llvm::Intrinsic::copysign, {Ty}, {R, X});
  }

  /// Whether E is -|x| (never positive), as sigmoid's exp argument is.
  static bool isNonPositive(const LoopExprNode &E) {
    return E.kind == LoopExprKind::Op && E.op == LoopOp::Neg &&
           E.args[0]->kind == LoopExprKind::Op && E.args[0]->op == LoopOp::Abs;
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

void emitKernel(const LoopKernel &K, llvm::Module &M,
                const EmitOptions &Options) {
  KernelEmitter(K, M, Options).run();
}

namespace {

/// How far ahead of its loads a streaming loop prefetches: 4 KB, beyond the
/// page the hardware's stream prefetcher stops at. A loop with a long body
/// (an expf per element) otherwise overlaps its arithmetic poorly with the
/// memory: the fused sigmoid chain over 64 MB ran at 12-14 GB/s on one
/// Sapphire Rapids core and 14.5-17.8 with prefetches 4-16 KB ahead, where
/// memcpy (glibc's prefetches pages ahead too) ran at 16-18.5.
constexpr int64_t kStreamingPrefetchBytes = 4096;

/// Prefetches, into L1, the data of each vector load in BB (the body of a
/// vectorized streaming loop) kStreamingPrefetchBytes ahead. A load from a
/// loop-invariant address was hoisted out of the loop; one that is not a
/// stream costs an L1 hit. Prefetches never fault, past the end either.
void prefetchLoads(llvm::BasicBlock &BB) {
  std::vector<llvm::LoadInst *> Loads;
  for (llvm::Instruction &I : BB)
    if (auto *L = llvm::dyn_cast<llvm::LoadInst>(&I);
        L && L->getType()->isVectorTy())
      Loads.push_back(L);
  for (llvm::LoadInst *L : Loads) {
    IRBuilder<> B(L);
    Value *Ahead = B.CreateGEP(B.getInt8Ty(), L->getPointerOperand(),
                               B.getInt64(kStreamingPrefetchBytes));
    B.CreateIntrinsic(llvm::Intrinsic::prefetch, {B.getPtrTy()},
                      {Ahead, /*read*/ B.getInt32(0),
                       /*locality*/ B.getInt32(3),
                       /*data*/ B.getInt32(1)});
  }
}

} // namespace

void finishStreamingStores(llvm::Module &M) {
  const llvm::DataLayout &DL = M.getDataLayout();
  llvm::MDNode *Nontemporal = llvm::MDNode::get(
      M.getContext(), {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                          llvm::Type::getInt32Ty(M.getContext()), 1))});
  std::set<llvm::BasicBlock *> StreamingBlocks;
  // Only the calls of llvm.ptrmask are looked at (the analyses are built
  // for the functions that stream, not for every kernel compiled).
  for (llvm::Function &Decl : M) {
    if (Decl.getIntrinsicID() != llvm::Intrinsic::ptrmask)
      continue;
    for (llvm::User *MaskUser : Decl.users()) {
      auto *Mask = llvm::dyn_cast<llvm::IntrinsicInst>(MaskUser);
      auto *Bits =
          Mask ? llvm::dyn_cast<llvm::ConstantInt>(Mask->getArgOperand(1))
               : nullptr;
      if (!Bits || Bits->getSExtValue() != -(int64_t)kStreamingAlignment)
        continue;
      llvm::Function &F = *Mask->getFunction();
      llvm::AssumptionCache AC(F);
      llvm::DominatorTree DT(F);
      // The stores addressed from the base through address arithmetic;
      // an x86 non-temporal vector store needs its own size's alignment.
      std::vector<Value *> Work{Mask};
      std::set<Value *> Seen;
      while (!Work.empty()) {
        Value *P = Work.back();
        Work.pop_back();
        if (!Seen.insert(P).second)
          continue;
        for (llvm::User *U : P->users()) {
          if (auto *GEP = llvm::dyn_cast<llvm::GetElementPtrInst>(U)) {
            Work.push_back(GEP);
            continue;
          }
          auto *St = llvm::dyn_cast<llvm::StoreInst>(U);
          if (!St || St->getPointerOperand() != P)
            continue;
          Type *Ty = St->getValueOperand()->getType();
          uint64_t Bytes = DL.getTypeStoreSize(Ty).getFixedValue();
          llvm::Align Known = std::max(
              St->getAlign(), llvm::getKnownAlignment(P, DL, St, &AC, &DT));
          if (!Ty->isVectorTy() || Known.value() < Bytes)
            continue;
          St->setAlignment(Known);
          St->setMetadata(llvm::LLVMContext::MD_nontemporal, Nontemporal);
          StreamingBlocks.insert(St->getParent());
        }
      }
    }
  }
  for (llvm::BasicBlock *BB : StreamingBlocks)
    prefetchLoads(*BB);
}

} // namespace rivet::codegen
