//===- PatternUtil.cc - Helpers for local algebraic rewrites --------------===//
#include "ir/transforms/PatternUtil.h"

#include "ir/Op.h"
#include "ir/transforms/Pass.h"
#include "kernels/Error.h"

#include <cstring>

namespace rivet::ir::pattern {

Dataflow::Dataflow(const Expr &Fn) {
  // Counts parent-to-child edges; every node is visited once, so a node
  // shared by two parents (or a variable read twice) counts twice. Binding
  // occurrences (parameters, let variables, patterns) are not references.
  postOrderVisit(Fn, [this](const Expr &E) {
    auto Use = [this](const Expr &C) {
      if (C)
        ++Uses[C.get()];
    };
    switch (E->kind) {
    case ExprKind::Call: {
      const auto &C = *E->as<CallNode>();
      Use(C.callee);
      for (const Expr &A : C.args)
        Use(A);
      break;
    }
    case ExprKind::Function: Use(E->as<FunctionNode>()->body); break;
    case ExprKind::Let: {
      const auto &L = *E->as<LetNode>();
      Use(L.value);
      Use(L.body);
      if (L.value && L.value->kind != ExprKind::Function)
        Bound.emplace(L.var.get(), L.value);
      break;
    }
    case ExprKind::If: {
      const auto &I = *E->as<IfNode>();
      Use(I.cond);
      Use(I.thenBranch);
      Use(I.elseBranch);
      break;
    }
    case ExprKind::Tuple:
      for (const Expr &F : E->as<TupleNode>()->fields)
        Use(F);
      break;
    case ExprKind::TupleGetItem: Use(E->as<TupleGetItemNode>()->tuple); break;
    case ExprKind::Match: {
      const auto &M = *E->as<MatchNode>();
      Use(M.data);
      for (const Clause &C : M.clauses)
        Use(C.rhs);
      break;
    }
    default: break;
    }
  });
}

const Expr &Dataflow::resolve(const Expr &E) const {
  const Expr *Cur = &E;
  while (*Cur && (*Cur)->kind == ExprKind::Var) {
    auto It = Bound.find((*Cur)->as<VarNode>());
    if (It == Bound.end())
      break;
    Cur = &It->second;
  }
  return *Cur;
}

const Expr *Dataflow::resolveSingleUse(const Expr &E) const {
  const Expr *Cur = &E;
  if (uses(*Cur) != 1)
    return nullptr;
  while (*Cur && (*Cur)->kind == ExprKind::Var) {
    auto It = Bound.find((*Cur)->as<VarNode>());
    if (It == Bound.end())
      return nullptr; // a parameter: nothing to consume
    Cur = &It->second;
    if (uses(*Cur) != 1)
      return nullptr;
  }
  return Cur;
}

int Dataflow::uses(const Expr &E) const {
  auto It = Uses.find(E.get());
  return It == Uses.end() ? 0 : It->second;
}

const Tensor *Dataflow::constantOf(const Expr &E) const {
  const Expr &R = resolve(E);
  const auto *C = R ? R->as<ConstantNode>() : nullptr;
  return C && C->value.hasData() ? &C->value : nullptr;
}

const CallNode *asOpCall(const Expr &E, std::string_view Name) {
  return calledOpName(E) == Name ? E->as<CallNode>() : nullptr;
}

const TensorTypeNode *rankedTensorType(const Expr &E) {
  const auto *T =
      E && E->checkedType ? E->checkedType->as<TensorTypeNode>() : nullptr;
  return T && T->hasKnownRank() ? T : nullptr;
}

int64_t constExtent(const TensorTypeNode &T, size_t I) {
  if (!T.shape || I >= T.shape->size() || !(*T.shape)[I].isConst())
    return -1;
  return (*T.shape)[I].value;
}

std::optional<Tensor> channelVector(const Tensor &S, size_t Rank, size_t Axis,
                                    int64_t L) {
  size_t SRank = (size_t)S.rank();
  if (SRank > Rank || Axis >= Rank || L < 1 || !S.hasData())
    return std::nullopt;
  for (size_t J = 0; J < SRank; ++J) {
    size_t A = Rank - SRank + J;
    int64_t D = S.shape()[J];
    if (D != 1 && !(A == Axis && D == L))
      return std::nullopt;
  }
  // S holds 1 or L values; spread one value over the whole vector.
  size_t ES = dtypeSize(S.dtype());
  Tensor V = Tensor::empty({L}, S.dtype());
  auto *Out = static_cast<char *>(V.rawData());
  const auto *In = static_cast<const char *>(S.rawData());
  for (int64_t I = 0; I < L; ++I)
    std::memcpy(Out + I * ES, In + (S.numel() == 1 ? 0 : I) * ES, ES);
  return V;
}

Tensor alongAxis(const Tensor &V, size_t Rank, size_t Axis) {
  Shape Sh{V.numel()};
  for (size_t I = Axis + 1; I < Rank; ++I)
    Sh.push_back(1);
  return V.reshape(Sh);
}

Tensor concatVectors(const std::vector<Tensor> &Parts) {
  RIVET_CHECK(!Parts.empty(), "concatVectors: no parts");
  int64_t N = 0;
  for (const Tensor &P : Parts)
    N += P.numel();
  Tensor Out = Tensor::empty({N}, Parts[0].dtype());
  auto *Dst = static_cast<char *>(Out.rawData());
  for (const Tensor &P : Parts) {
    RIVET_CHECK(P.dtype() == Out.dtype(), "concatVectors: dtypes differ");
    std::memcpy(Dst, P.rawData(), P.nbytes());
    Dst += P.nbytes();
  }
  return Out;
}

Expr scalarConstant(double Value, DType T) {
  return constant(Tensor::scalar<double>(Value).cast(T));
}

namespace {

/// Rebuilds let chains without the dead bindings.
class BindingDropper : public ExprMutator {
public:
  explicit BindingDropper(const std::unordered_set<const VarNode *> &Dead)
      : Dead(Dead) {}

  Expr visitLet(const LetNode &N, const Expr &Self) override {
    std::vector<const LetNode *> Chain;
    const ExprNode *Cur = &N;
    while (Cur && Cur->kind == ExprKind::Let) {
      Chain.push_back(static_cast<const LetNode *>(Cur));
      Cur = Chain.back()->body.get();
    }
    std::vector<std::pair<Var, Expr>> Kept;
    bool Changed = false;
    for (const LetNode *L : Chain) {
      if (Dead.count(L->var.get())) {
        Changed = true;
        continue;
      }
      Expr V = mutate(L->value);
      Changed |= V != L->value;
      Kept.emplace_back(L->var, std::move(V));
    }
    Expr Body = mutate(Chain.back()->body);
    Changed |= Body != Chain.back()->body;
    if (!Changed)
      return Self;
    for (size_t I = Kept.size(); I-- > 0;)
      Body = let(Kept[I].first, Kept[I].second, Body);
    return Body;
  }

private:
  const std::unordered_set<const VarNode *> &Dead;
};

} // namespace

Expr dropBindings(const Expr &E,
                  const std::unordered_set<const VarNode *> &Dead) {
  if (Dead.empty())
    return E;
  return BindingDropper(Dead).mutate(E);
}

Expr NonPrimitiveMutator::visitFunction(const FunctionNode &N,
                                        const Expr &Self) {
  if (isPrimitiveFunction(Self))
    return Self;
  return ExprMutator::visitFunction(N, Self);
}

} // namespace rivet::ir::pattern
