//===- InlinePrimitives.cc - Fused functions back to operator calls -------===//
#include "vm/compiler/InlinePrimitives.h"

#include "ir/Visitor.h"
#include "ir/transforms/Pass.h"
#include "vm/compiler/AnchorSelection.h"

#include <unordered_map>

namespace rivet::vm::compiler {

namespace {

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
    return ir::callOp(AC.kernel, std::move(KernelArgs), AC.attrs);
  }

public:
  ir::Expr visitCall(const ir::CallNode &N, const ir::Expr &Self) override {
    ir::Expr Callee = N.callee;
    if (!ir::isPrimitiveFunction(Callee))
      return ExprMutator::visitCall(N, Self);
    const auto &Fn = *Callee->as<ir::FunctionNode>();
    std::vector<ir::Expr> Args;
    for (const ir::Expr &A : N.args)
      Args.push_back(mutate(A));
    if (std::optional<AnchorCall> AC = selectAnchor(Callee, N.args))
      return anchorCall(Fn, *AC, Args);
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
};

} // namespace

bool inlinePrimitiveCalls(ir::Module &M) {
  bool Changed = false;
  ir::transformFunctions(M, [&](const ir::Expr &F) {
    ir::Expr New = PrimitiveInliner().mutate(F);
    Changed |= New != F;
    return New;
  });
  return Changed;
}

} // namespace rivet::vm::compiler
