//===- Visitor.cc - Traversal and rewriting of expressions ----------------===//
#include "ir/Visitor.h"

#include "ir/Origin.h"
#include "kernels/Error.h"

#include <optional>

namespace rivet::ir {

//===----------------------------------------------------------------------===//
// ExprVisitor
//===----------------------------------------------------------------------===//

void ExprVisitor::visit(const Expr &E) {
  if (!E)
    return;
  if (!Visited.insert(E.get()).second)
    return;
  dispatch(E);
}

void ExprVisitor::dispatch(const Expr &E) {
  switch (E->kind) {
  case ExprKind::Var: return visitVar(*E->as<VarNode>());
  case ExprKind::GlobalVar: return visitGlobalVar(*E->as<GlobalVarNode>());
  case ExprKind::Constant: return visitConstant(*E->as<ConstantNode>());
  case ExprKind::Op: return visitOp(*E->as<OpNode>());
  case ExprKind::Call: return visitCall(*E->as<CallNode>());
  case ExprKind::Function: return visitFunction(*E->as<FunctionNode>());
  case ExprKind::Let: return visitLet(*E->as<LetNode>());
  case ExprKind::If: return visitIf(*E->as<IfNode>());
  case ExprKind::Tuple: return visitTuple(*E->as<TupleNode>());
  case ExprKind::TupleGetItem:
    return visitTupleGetItem(*E->as<TupleGetItemNode>());
  case ExprKind::Constructor:
    return visitConstructor(*E->as<ConstructorNode>());
  case ExprKind::Match: return visitMatch(*E->as<MatchNode>());
  }
}

void ExprVisitor::visitPattern(const Pattern &P) {
  if (!P)
    return;
  if (P->kind == PatternKind::Var)
    visit(P->var);
  if (P->kind == PatternKind::Constructor)
    visit(P->ctor);
  for (const Pattern &C : P->children)
    visitPattern(C);
}

void ExprVisitor::visitVar(const VarNode &) {}
void ExprVisitor::visitGlobalVar(const GlobalVarNode &) {}
void ExprVisitor::visitConstant(const ConstantNode &) {}
void ExprVisitor::visitOp(const OpNode &) {}
void ExprVisitor::visitConstructor(const ConstructorNode &) {}

void ExprVisitor::visitCall(const CallNode &N) {
  visit(N.callee);
  for (const Expr &A : N.args)
    visit(A);
}

void ExprVisitor::visitFunction(const FunctionNode &N) {
  for (const Var &P : N.params)
    visit(P);
  visit(N.body);
}

void ExprVisitor::visitLetBinding(const LetNode &N) {
  visit(N.var);
  visit(N.value);
}

void ExprVisitor::visitLet(const LetNode &N) {
  // Iterate down the chain instead of recursing through visit(body).
  const LetNode *Cur = &N;
  while (true) {
    visitLetBinding(*Cur);
    const Expr &Body = Cur->body;
    if (Body && Body->kind == ExprKind::Let && !Visited.count(Body.get())) {
      Visited.insert(Body.get());
      Cur = Body->as<LetNode>();
      continue;
    }
    visit(Body);
    return;
  }
}

void ExprVisitor::visitIf(const IfNode &N) {
  visit(N.cond);
  visit(N.thenBranch);
  visit(N.elseBranch);
}

void ExprVisitor::visitTuple(const TupleNode &N) {
  for (const Expr &F : N.fields)
    visit(F);
}

void ExprVisitor::visitTupleGetItem(const TupleGetItemNode &N) {
  visit(N.tuple);
}

void ExprVisitor::visitMatch(const MatchNode &N) {
  visit(N.data);
  for (const Clause &C : N.clauses) {
    visitPattern(C.lhs);
    visit(C.rhs);
  }
}

//===----------------------------------------------------------------------===//
// ExprMutator
//===----------------------------------------------------------------------===//

Expr ExprMutator::mutate(const Expr &E) {
  if (!E)
    return E;
  auto It = Memo.find(E.get());
  if (It != Memo.end())
    return It->second;
  // The calls a rewrite of a call makes come from where it came from.
  std::optional<OriginScope> Scope;
  if (const auto *C = E->as<CallNode>())
    Scope.emplace(*C);
  Expr R = dispatch(E);
  Memo[E.get()] = R;
  return R;
}

Expr ExprMutator::dispatch(const Expr &E) {
  switch (E->kind) {
  case ExprKind::Var: return visitVar(*E->as<VarNode>(), E);
  case ExprKind::GlobalVar: return visitGlobalVar(*E->as<GlobalVarNode>(), E);
  case ExprKind::Constant: return visitConstant(*E->as<ConstantNode>(), E);
  case ExprKind::Op: return visitOp(*E->as<OpNode>(), E);
  case ExprKind::Call: return visitCall(*E->as<CallNode>(), E);
  case ExprKind::Function: return visitFunction(*E->as<FunctionNode>(), E);
  case ExprKind::Let: return visitLet(*E->as<LetNode>(), E);
  case ExprKind::If: return visitIf(*E->as<IfNode>(), E);
  case ExprKind::Tuple: return visitTuple(*E->as<TupleNode>(), E);
  case ExprKind::TupleGetItem:
    return visitTupleGetItem(*E->as<TupleGetItemNode>(), E);
  case ExprKind::Constructor:
    return visitConstructor(*E->as<ConstructorNode>(), E);
  case ExprKind::Match: return visitMatch(*E->as<MatchNode>(), E);
  }
  return E;
}

Var ExprMutator::mutateBinder(const Var &V) {
  Expr R = mutate(V);
  if (R == V)
    return V;
  RIVET_CHECK(
      R && R->kind == ExprKind::Var,
      "ExprMutator: binding variable '%{}' was rewritten to a non-variable",
      V->nameHint);
  return std::static_pointer_cast<const VarNode>(R);
}

Pattern ExprMutator::mutatePattern(const Pattern &P) {
  if (!P)
    return P;
  switch (P->kind) {
  case PatternKind::Wildcard: return P;
  case PatternKind::Var: {
    Var V = mutateBinder(P->var);
    return V == P->var ? P : PatternNode::bind(V);
  }
  case PatternKind::Constructor:
  case PatternKind::Tuple: {
    bool Changed = false;
    std::vector<Pattern> Children;
    Children.reserve(P->children.size());
    for (const Pattern &C : P->children) {
      Children.push_back(mutatePattern(C));
      Changed |= Children.back() != C;
    }
    Constructor Ctor = P->ctor;
    if (P->kind == PatternKind::Constructor) {
      Expr NewCtor = mutate(P->ctor);
      if (NewCtor != P->ctor) {
        RIVET_CHECK(NewCtor && NewCtor->kind == ExprKind::Constructor,
                    "ExprMutator: pattern constructor '{}' was rewritten to a "
                    "non-constructor",
                    P->ctor->name);
        Ctor = std::static_pointer_cast<const ConstructorNode>(NewCtor);
        Changed = true;
      }
    }
    if (!Changed)
      return P;
    return P->kind == PatternKind::Tuple
               ? PatternNode::tuple(std::move(Children))
               : PatternNode::constructor(Ctor, std::move(Children));
  }
  }
  return P;
}

Expr ExprMutator::visitVar(const VarNode &, const Expr &Self) { return Self; }
Expr ExprMutator::visitGlobalVar(const GlobalVarNode &, const Expr &Self) {
  return Self;
}
Expr ExprMutator::visitConstant(const ConstantNode &, const Expr &Self) {
  return Self;
}
Expr ExprMutator::visitOp(const OpNode &, const Expr &Self) { return Self; }
Expr ExprMutator::visitConstructor(const ConstructorNode &, const Expr &Self) {
  return Self;
}

Expr ExprMutator::visitCall(const CallNode &N, const Expr &Self) {
  Expr Callee = mutate(N.callee);
  bool Changed = Callee != N.callee;
  std::vector<Expr> Args;
  Args.reserve(N.args.size());
  for (const Expr &A : N.args) {
    Args.push_back(mutate(A));
    Changed |= Args.back() != A;
  }
  if (!Changed)
    return Self;
  Expr R = call(std::move(Callee), std::move(Args), N.attrs);
  return N.covers.empty() ? R : withCovers(R, N.covers);
}

Expr ExprMutator::visitFunction(const FunctionNode &N, const Expr &Self) {
  bool Changed = false;
  std::vector<Var> Params;
  Params.reserve(N.params.size());
  for (const Var &P : N.params) {
    Params.push_back(mutateBinder(P));
    Changed |= Params.back() != P;
  }
  Expr Body = mutate(N.body);
  Changed |= Body != N.body;
  if (!Changed)
    return Self;
  return function(std::move(Params), std::move(Body), N.retType, N.typeParams,
                  N.attrs);
}

Expr ExprMutator::visitLet(const LetNode &N, const Expr &Self) {
  return mutateLetChain(N, Self, nullptr);
}

Expr ExprMutator::mutateLetChain(const LetNode &N, const Expr &Self,
                                 const BindingRewrite &Rewrite) {
  // Collect the chain of lets not yet rewritten, rewrite bindings front to
  // back (the order a recursive traversal would use), then rebuild back to
  // front.
  struct Link {
    const Expr *Orig;
    const LetNode *Node;
    Var NewVar;
    Expr NewValue;
    bool Dropped = false;
  };
  std::vector<Link> Chain;
  Chain.push_back({&Self, &N, nullptr, nullptr});
  while (true) {
    const Expr &Body = Chain.back().Node->body;
    if (Body && Body->kind == ExprKind::Let && !Memo.count(Body.get())) {
      Chain.push_back({&Body, Body->as<LetNode>(), nullptr, nullptr});
      continue;
    }
    break;
  }
  for (Link &L : Chain) {
    L.NewVar = mutateBinder(L.Node->var);
    L.NewValue = mutate(L.Node->value);
    std::optional<OriginScope> Scope;
    if (const auto *C = L.Node->value->as<CallNode>())
      Scope.emplace(*C);
    if (Rewrite && Rewrite(L.NewVar, L.NewValue)) {
      // Later uses of the variable now map (through Memo) to its value.
      Memo[L.Node->var.get()] = L.NewValue;
      L.Dropped = true;
    }
  }
  Expr Body = mutate(Chain.back().Node->body);
  for (size_t I = Chain.size(); I-- > 0;) {
    Link &L = Chain[I];
    Expr R;
    if (L.Dropped)
      R = Body;
    else if (L.NewVar == L.Node->var && L.NewValue == L.Node->value &&
             Body == L.Node->body)
      R = *L.Orig;
    else
      R = let(L.NewVar, L.NewValue, Body);
    if (I != 0) // the outermost link is memoized by mutate()
      Memo[L.Orig->get()] = R;
    Body = R;
  }
  return Body;
}

Expr ExprMutator::visitIf(const IfNode &N, const Expr &Self) {
  Expr C = mutate(N.cond), T = mutate(N.thenBranch), E = mutate(N.elseBranch);
  if (C == N.cond && T == N.thenBranch && E == N.elseBranch)
    return Self;
  return ifThenElse(std::move(C), std::move(T), std::move(E));
}

Expr ExprMutator::visitTuple(const TupleNode &N, const Expr &Self) {
  bool Changed = false;
  std::vector<Expr> Fields;
  Fields.reserve(N.fields.size());
  for (const Expr &F : N.fields) {
    Fields.push_back(mutate(F));
    Changed |= Fields.back() != F;
  }
  return Changed ? tuple(std::move(Fields)) : Self;
}

Expr ExprMutator::visitTupleGetItem(const TupleGetItemNode &N,
                                    const Expr &Self) {
  Expr T = mutate(N.tuple);
  return T == N.tuple ? Self : tupleGetItem(std::move(T), N.index);
}

Expr ExprMutator::visitMatch(const MatchNode &N, const Expr &Self) {
  Expr Data = mutate(N.data);
  bool Changed = Data != N.data;
  std::vector<Clause> Clauses;
  Clauses.reserve(N.clauses.size());
  for (const Clause &C : N.clauses) {
    Pattern L = mutatePattern(C.lhs);
    Expr R = mutate(C.rhs);
    Changed |= L != C.lhs || R != C.rhs;
    Clauses.push_back({std::move(L), std::move(R)});
  }
  return Changed ? match(std::move(Data), std::move(Clauses)) : Self;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

class PostOrderVisitor : public ExprVisitor {
public:
  explicit PostOrderVisitor(const std::function<void(const Expr &)> &F)
      : F(F) {}

  void visit(const Expr &E) override {
    if (!E || !Visited.insert(E.get()).second)
      return;
    if (E->kind == ExprKind::Let) {
      visitLetChain(E);
      return;
    }
    dispatch(E);
    F(E);
  }

private:
  // Post order needs the shared pointers of the chain's inner links, so the
  // chain is walked here rather than in visitLet.
  void visitLetChain(const Expr &Head) {
    std::vector<const Expr *> Chain{&Head};
    while (true) {
      const LetNode *L = (*Chain.back())->as<LetNode>();
      visitLetBinding(*L);
      const Expr &Body = L->body;
      if (Body && Body->kind == ExprKind::Let && !Visited.count(Body.get())) {
        Visited.insert(Body.get());
        Chain.push_back(&Body);
        continue;
      }
      visit(Body);
      break;
    }
    for (size_t I = Chain.size(); I-- > 0;)
      F(*Chain[I]);
  }

  const std::function<void(const Expr &)> &F;
};

// Collects bound and used variables in visiting order.
class VarCollector : public ExprVisitor {
public:
  std::vector<Var> Bound, Used;
  std::unordered_set<const VarNode *> BoundSet, UsedSet;

  void bind(const Var &V) {
    if (V && BoundSet.insert(V.get()).second)
      Bound.push_back(V);
  }
  void visit(const Expr &E) override {
    // Uses are recorded per occurrence (a Var node is visited once anyway).
    if (E && E->kind == ExprKind::Var) {
      auto V = std::static_pointer_cast<const VarNode>(E);
      if (UsedSet.insert(V.get()).second)
        Used.push_back(V);
      return;
    }
    ExprVisitor::visit(E);
  }
  void visitFunction(const FunctionNode &N) override {
    for (const Var &P : N.params)
      bind(P);
    visit(N.body);
  }
  void visitLetBinding(const LetNode &N) override {
    bind(N.var);
    visit(N.value);
  }
  void visitPattern(const Pattern &P) override {
    if (!P)
      return;
    if (P->kind == PatternKind::Var)
      bind(P->var);
    for (const Pattern &C : P->children)
      visitPattern(C);
  }
};

class GlobalCollector : public ExprVisitor {
public:
  std::vector<std::string> Names;
  std::unordered_set<std::string> Seen;
  void visitGlobalVar(const GlobalVarNode &N) override {
    if (Seen.insert(N.name).second)
      Names.push_back(N.name);
  }
};

class Substituter : public ExprMutator {
public:
  explicit Substituter(const std::unordered_map<const VarNode *, Expr> &M)
      : Map(M) {}
  Expr visitVar(const VarNode &N, const Expr &Self) override {
    auto It = Map.find(&N);
    return It == Map.end() ? Self : It->second;
  }
  // Bound variables are never substituted: they are distinct nodes.
  Pattern mutatePattern(const Pattern &P) override { return P; }
  Expr visitFunction(const FunctionNode &N, const Expr &Self) override {
    Expr Body = mutate(N.body);
    if (Body == N.body)
      return Self;
    return function(N.params, std::move(Body), N.retType, N.typeParams,
                    N.attrs);
  }

private:
  const std::unordered_map<const VarNode *, Expr> &Map;
};

} // namespace

void postOrderVisit(const Expr &E, const std::function<void(const Expr &)> &F) {
  PostOrderVisitor V(F);
  V.visit(E);
}

std::vector<Var> freeVars(const Expr &E) {
  VarCollector C;
  C.visit(E);
  std::vector<Var> R;
  for (const Var &V : C.Used)
    if (!C.BoundSet.count(V.get()))
      R.push_back(V);
  return R;
}

std::vector<Var> boundVars(const Expr &E) {
  VarCollector C;
  C.visit(E);
  return C.Bound;
}

std::vector<std::string> referencedGlobals(const Expr &E) {
  GlobalCollector C;
  C.visit(E);
  return C.Names;
}

Expr substitute(const Expr &E,
                const std::unordered_map<const VarNode *, Expr> &Map) {
  Substituter S(Map);
  return S.mutate(E);
}

} // namespace rivet::ir
