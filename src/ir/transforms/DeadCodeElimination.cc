//===- DeadCodeElimination.cc - Drops unused let bindings -----------------===//
//
// Every IR operator is pure, so a binding whose variable is never used can go,
// whatever its value. A let chain is swept from its end back to its start, so
// a binding used only by dead bindings after it dies in the same sweep.
//
//===----------------------------------------------------------------------===//
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"

#include <unordered_set>

namespace rivet::ir {
namespace {

class DeadBindingRemover : public BindingMutator {
public:
  Expr visitLet(const LetNode &N, const Expr &Self) override {
    std::vector<const Expr *> Chain{&Self};
    while (true) {
      const Expr &Body = (*Chain.back())->as<LetNode>()->body;
      if (Body && Body->kind == ExprKind::Let && !Memo.count(Body.get())) {
        Chain.push_back(&Body);
        continue;
      }
      break;
    }
    Expr Body = mutate((*Chain.back())->as<LetNode>()->body);
    std::unordered_set<const VarNode *> Live;
    for (const Var &V : freeVars(Body))
      Live.insert(V.get());
    // Back to front: a binding is live when something after it uses it.
    for (size_t I = Chain.size(); I-- > 0;) {
      const LetNode &L = *(*Chain[I])->as<LetNode>();
      if (!Live.count(L.var.get())) {
        if (I != 0)
          Memo[Chain[I]->get()] = Body;
        continue;
      }
      Expr Value = mutate(L.value);
      for (const Var &V : freeVars(Value))
        Live.insert(V.get());
      Expr R = Value == L.value && Body == L.body ? *Chain[I]
                                                  : let(L.var, Value, Body);
      if (I != 0)
        Memo[Chain[I]->get()] = R;
      Body = R;
    }
    (void)N;
    return Body;
  }
};

void deadCodeEliminationPass(Module &M, const PassContext &) {
  transformFunctions(
      M, [](const Expr &F) { return DeadBindingRemover().mutate(F); });
}

} // namespace

/// DeadCodeElimination: removes let bindings (values and local functions)
/// whose variables are never used; parameters and signatures stay as they are.
RIVET_REGISTER_PASS("DeadCodeElimination", 1,
                    "Removes let bindings whose variables are never used.",
                    deadCodeEliminationPass);

} // namespace rivet::ir
