//===- EliminateCommonSubexpr.cc - Reuses identical operator calls --------===//
//
// A let-bound operator call equal to one bound earlier in scope (same
// operator, attributes and structurally equal arguments) is replaced by the
// earlier variable. Scopes follow the let chains: a binding is visible in the
// rest of its chain and in everything nested there (branches, local
// functions), never in a sibling branch or an enclosing scope.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/StructuralEqual.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"

#include <unordered_map>

namespace rivet::ir {
namespace {

/// Constants with more elements than this are compared by node, not by
/// value: hashing every conv weight at every binding costs far more than the
/// rare duplicate weight would save.
constexpr int64_t kMaxComparedElements = 1024;

bool comparedByValue(const Expr &A) {
  const auto *C = A->as<ConstantNode>();
  return C && C->value.numel() <= kMaxComparedElements;
}

size_t hashArg(const Expr &A) {
  if (comparedByValue(A))
    return structuralHash(A);
  if (const auto *G = A->as<GlobalVarNode>())
    return std::hash<std::string>()(G->name);
  if (const auto *O = A->as<OpNode>())
    return std::hash<const void *>()(O->info);
  return std::hash<const void *>()(A.get()); // variables, large constants
}

bool equalArgs(const Expr &A, const Expr &B) {
  if (A == B)
    return true;
  if (A->kind != B->kind)
    return false;
  if (comparedByValue(A) && comparedByValue(B))
    return structuralEqual(A, B);
  if (const auto *G = A->as<GlobalVarNode>())
    return G->name == B->as<GlobalVarNode>()->name;
  if (const auto *O = A->as<OpNode>())
    return O->info == B->as<OpNode>()->info;
  return false;
}

/// Operator calls on atoms (see candidate()): same operator, attributes and
/// arguments.
struct CallHash {
  size_t operator()(const Expr &E) const {
    const auto &C = *E->as<CallNode>();
    size_t H = std::hash<const void *>()(C.callee->as<OpNode>()->info);
    H = H * 31 + C.attrs.hash();
    for (const Expr &A : C.args)
      H = H * 31 + hashArg(A);
    return H;
  }
};
struct CallEqual {
  bool operator()(const Expr &X, const Expr &Y) const {
    const auto &A = *X->as<CallNode>(), &B = *Y->as<CallNode>();
    if (A.callee->as<OpNode>()->info != B.callee->as<OpNode>()->info ||
        A.args.size() != B.args.size() || !(A.attrs == B.attrs))
      return false;
    for (size_t I = 0; I < A.args.size(); ++I)
      if (!equalArgs(A.args[I], B.args[I]))
        return false;
    return true;
  }
};

class CommonSubexprEliminator : public BindingMutator {
public:
  Expr visitLet(const LetNode &N, const Expr &Self) override {
    size_t Mark = Scope.size();
    Expr R = BindingMutator::visitLet(N, Self);
    // Leaving the chain: its bindings go out of scope.
    while (Scope.size() > Mark) {
      auto It = Available.find(Scope.back());
      if (It != Available.end()) {
        It->second.pop_back();
        if (It->second.empty())
          Available.erase(It);
      }
      Scope.pop_back();
    }
    return R;
  }

protected:
  Binding visitBinding(const Var &V, const Expr &Value) override {
    if (isAtom(Value))
      return {Value, true};
    if (!candidate(Value))
      return {Value, false};
    auto It = Available.find(Value);
    if (It != Available.end())
      return {It->second.back(), true};
    Available[Value].push_back(V);
    Scope.push_back(Value);
    return {Value, false};
  }

private:
  /// An operator call whose arguments are atoms, of a deterministic operator.
  static bool candidate(const Expr &E) {
    const auto *C = E->as<CallNode>();
    const auto *O = C ? C->callee->as<OpNode>() : nullptr;
    if (!O || O->info->runTimeOnly)
      return false;
    for (const Expr &A : C->args)
      if (!isAtom(A))
        return false;
    return true;
  }

  /// Calls bound in the enclosing chains, each with the variables bound to
  /// it (innermost last).
  std::unordered_map<Expr, std::vector<Var>, CallHash, CallEqual> Available;
  /// The calls added, in order, to undo them when their chain ends.
  std::vector<Expr> Scope;
};

void eliminateCommonSubexprPass(Module &M, const PassContext &) {
  transformFunctions(
      M, [](const Expr &F) { return CommonSubexprEliminator().mutate(F); });
}

} // namespace

/// EliminateCommonSubexpr: a let-bound operator call identical to one bound
/// earlier in scope reuses the earlier variable.
RIVET_REGISTER_PASS("EliminateCommonSubexpr", 3,
                    "Reuses the variable of an identical operator call bound "
                    "earlier in scope.",
                    eliminateCommonSubexprPass);

} // namespace rivet::ir
