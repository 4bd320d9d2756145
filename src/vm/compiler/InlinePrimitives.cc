//===- InlinePrimitives.cc - Fused functions back to operator calls -------===//
#include "vm/compiler/InlinePrimitives.h"

#include "ir/Op.h"
#include "ir/Origin.h"
#include "ir/TypeInference.h"
#include "ir/Visitor.h"
#include "ir/transforms/Pass.h"
#include "kernels/DnnlConfig.h"
#include "kernels/Kernel.h"
#include "vm/compiler/AnchorSelection.h"
#include "vm/compiler/NativeKernelBuilder.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace rivet::vm::compiler {

namespace {

/// True when Fn's body only reshapes a parameter (reshape, squeeze,
/// flatten, ..., OpInfo::viewOfFirstArg): inlined, the VM compiler makes
/// it a view of the argument instead of a kernel that copies it.
bool isViewOfParameter(const ir::FunctionNode &Fn) {
  ir::Expr E = Fn.body;
  bool AnyView = false;
  while (const auto *C = E->as<ir::CallNode>()) {
    const auto *Op = C->callee->as<ir::OpNode>();
    if (!Op || !Op->info || !Op->info->viewOfFirstArg || C->args.empty())
      return false;
    AnyView = true;
    E = C->args[0];
  }
  return AnyView && E->as<ir::VarNode>();
}

/// Beta-reduces calls of Primitive function literals. Parameters become
/// fresh let-bound variables, so a literal called twice binds nothing twice.
class PrimitiveInliner : public ir::ExprMutator {
  /// The one kernel call of an anchor group: parameters become the call's
  /// arguments, constants of the body stay constants.
  static ir::Expr anchorCall(const ir::FunctionNode &Fn, const AnchorCall &AC,
                             const std::vector<ir::Expr> &Args) {
    std::vector<ir::Expr> KernelArgs;
    for (const ir::Expr &A : AC.args) {
      ir::Expr Arg = A;
      for (size_t I = 0; I < Fn.params.size(); ++I)
        if (A.get() == Fn.params[I].get())
          Arg = Args[I];
      KernelArgs.push_back(Arg);
    }
    // One kernel computes every call of the group.
    return ir::withCovers(
        ir::callOp(AC.kernel, std::move(KernelArgs), AC.attrs),
        ir::originsIn(Fn.body));
  }

  /// Group Fn as its anchor call Anchor (a builtin operator call on Fn's
  /// parameters and constants) followed by a native kernel for the rest,
  /// which reads the anchor's result as its first parameter; null when
  /// there is no rest or codegen refuses it.
  ir::Expr anchorWithEpilogue(const ir::FunctionNode &Fn,
                              const ir::Expr &Anchor,
                              const std::vector<ir::Expr> &Args) {
    if (Fn.body.get() == Anchor.get() || !Anchor->checkedType)
      return nullptr;
    ir::Var AnchorOut = ir::var("anchor", Anchor->checkedType);
    struct Replace : ir::ExprMutator {
      const ir::ExprNode *Target;
      ir::Expr By;
      ir::Expr visitCall(const ir::CallNode &C, const ir::Expr &Self) override {
        return Self.get() == Target ? By : ExprMutator::visitCall(C, Self);
      }
    } R;
    R.Target = Anchor.get();
    R.By = AnchorOut;
    ir::Expr TailBody = R.mutate(Fn.body);
    if (TailBody.get() == AnchorOut.get())
      return nullptr;
    // The rest's parameters: the anchor's result, then Fn's parameters it
    // still reads.
    std::unordered_set<const ir::VarNode *> Free;
    for (const ir::Var &V : ir::freeVars(TailBody))
      Free.insert(V.get());
    std::vector<ir::Var> Params = {AnchorOut};
    std::vector<ir::Expr> TailArgs;
    std::unordered_map<const ir::VarNode *, ir::Expr> ToArgs;
    for (size_t I = 0; I < Fn.params.size(); ++I) {
      ToArgs[Fn.params[I].get()] = Args[I];
      if (Free.count(Fn.params[I].get())) {
        Params.push_back(Fn.params[I]);
        TailArgs.push_back(Args[I]);
      }
    }
    Attrs FnAttrs;
    FnAttrs.set(ir::kPrimitiveAttr, int64_t(1));
    ir::Expr Tail = ir::function(std::move(Params), TailBody, nullptr, {},
                                 std::move(FnAttrs));
    try {
      ir::inferType(Tail, M);
    } catch (const Error &) {
      return nullptr;
    }
    if (!Native->lower(Tail))
      return nullptr;
    ir::Var Out = ir::var("anchor_out", Anchor->checkedType);
    TailArgs.insert(TailArgs.begin(), Out);
    return ir::let(Out, ir::substitute(Anchor, ToArgs),
                   ir::call(Tail, std::move(TailArgs)));
  }

public:
  PrimitiveInliner(const ir::Module &M, NativeKernelBuilder *Native,
                   bool Anchors, bool GpuLibraries)
      : M(M), Native(Native), Anchors(Anchors), GpuLibraries(GpuLibraries) {}

  ir::Expr visitCall(const ir::CallNode &N, const ir::Expr &Self) override {
    ir::Expr Callee = N.callee;
    if (!ir::isPrimitiveFunction(Callee))
      return ExprMutator::visitCall(N, Self);
    const auto &Fn = *Callee->as<ir::FunctionNode>();
    std::vector<ir::Expr> Args;
    for (const ir::Expr &A : N.args)
      Args.push_back(mutate(A));
    // For a GPU target, anchors (conv, dense, matmul) run on the GPU: on
    // its library kernel (cuDNN, cuBLAS) followed by a generated epilogue,
    // else generated whole; oneDNN on the host takes only those codegen
    // refuses.
    bool Gpu = Native && Native->targetsGpu();
    bool Dnnl = Anchors && dnnlEnabled() && !Gpu;
    ir::Expr Anchor = firstOperatorCall(Fn);
    bool IsAnchor =
        Anchor &&
        isAnchorOperator(
            Anchor->as<ir::CallNode>()->callee->as<ir::OpNode>()->name());
    // A small anchor is generated whole even when oneDNN could take it with
    // its tail: a 2x32 by 32x50 dense + bias (a decoder step's projection)
    // cost 24 us as one oneDNN call, 1.2 us generated.
    if (Native && IsAnchor && isSmallAnchor(*Anchor->as<ir::CallNode>(), Gpu) &&
        Native->lower(Callee))
      return ir::call(Callee, std::move(Args), N.attrs); // generated whole
    if (Dnnl)
      if (std::optional<AnchorCall> AC = selectAnchor(Callee, N.args))
        return anchorCall(Fn, *AC, Args);
    if (isViewOfParameter(Fn))
      return inlineBody(Fn, Args);
    if (Gpu && Anchors && GpuLibraries && IsAnchor &&
        onGpuLibrary(Fn, Anchor)) {
      if (Fn.body.get() == Anchor.get())
        return inlineBody(Fn, Args); // the library call alone
      if (ir::Expr E = anchorWithEpilogue(Fn, Anchor, Args))
        return E;
    }
    if (Native && Dnnl && IsAnchor) {
      // The anchor stays a library call; its tail, which oneDNN's post-ops
      // cannot express, may become one generated epilogue.
      if (ir::Expr E = anchorWithEpilogue(Fn, Anchor, Args))
        return E;
    } else if (Native && Native->lower(Callee)) {
      return ir::call(Callee, std::move(Args), N.attrs);
    }
    if (!Dnnl && Anchors)
      if (std::optional<AnchorCall> AC = selectAnchor(Callee, N.args))
        return anchorCall(Fn, *AC, Args);
    return inlineBody(Fn, Args);
  }

private:
  /// Whether Anchor, the first call of Fn, has a GPU library kernel that
  /// takes it: float32 operands that are Fn's parameters or constants (the
  /// library call reads them where they are).
  bool onGpuLibrary(const ir::FunctionNode &Fn, const ir::Expr &Anchor) const {
    const auto &C = *Anchor->as<ir::CallNode>();
    if (!KernelRegistry::global().libraryKernel(
            C.callee->as<ir::OpNode>()->name(), Native->target()))
      return false;
    auto Float32 = [](const ir::Type &T) {
      const auto *TT = T ? T->as<ir::TensorTypeNode>() : nullptr;
      return TT && TT->dtype == DType::Float32;
    };
    if (!Float32(C.checkedType))
      return false;
    for (const ir::Expr &A : C.args) {
      bool Leaf =
          A->as<ir::ConstantNode>() ||
          std::any_of(Fn.params.begin(), Fn.params.end(),
                      [&](const ir::Var &P) { return P.get() == A.get(); });
      if (!Leaf || !Float32(A->checkedType))
        return false;
    }
    return true;
  }

  /// Fn's body with its parameters bound to Args.
  ir::Expr inlineBody(const ir::FunctionNode &Fn,
                      const std::vector<ir::Expr> &Args) {
    std::unordered_map<const ir::VarNode *, ir::Expr> Rename;
    std::vector<ir::Var> Fresh;
    for (const ir::Var &P : Fn.params) {
      Fresh.push_back(ir::var(P->nameHint, P->typeAnnotation));
      Rename[P.get()] = Fresh.back();
    }
    // Nested primitives (none today) are inlined too.
    ir::Expr Body = mutate(ir::substitute(Fn.body, Rename));
    for (size_t I = Fresh.size(); I-- > 0;)
      Body = ir::let(Fresh[I], Args[I], Body);
    return Body;
  }

  const ir::Module &M;
  NativeKernelBuilder *Native;
  bool Anchors, GpuLibraries;
};

} // namespace

bool inlinePrimitiveCalls(ir::Module &M, NativeKernelBuilder *Native,
                          bool Anchors, bool GpuLibraries) {
  bool Changed = false;
  ir::transformFunctions(M, [&](const ir::Expr &F) {
    ir::Expr New = PrimitiveInliner(M, Native, Anchors, GpuLibraries).mutate(F);
    Changed |= New != F;
    return New;
  });
  return Changed;
}

} // namespace rivet::vm::compiler
