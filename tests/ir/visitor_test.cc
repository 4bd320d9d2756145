//===- visitor_test.cc - ExprVisitor, ExprMutator and helpers -------------===//
#include "ir/Visitor.h"

#include "ir/Op.h"
#include "ir/Parser.h"
#include "ir/StructuralEqual.h"

#include <gtest/gtest.h>
#include <map>

using namespace rivet;
using namespace rivet::ir;

namespace {

const ParseOptions NoPrelude{false};

Expr parseFn(const std::string &Text) {
  Module M = parseModule(
      "type List[A] { Cons(A, List[A]), Nil }\ndef @f" + Text, "t", NoPrelude);
  return M.function("f");
}

class KindCounter : public ExprVisitor {
public:
  std::map<ExprKind, int> Counts;
  int Patterns = 0;
  void visit(const Expr &E) override {
    // Inner links of a let chain do not pass through visit(); they are
    // counted in visitLetBinding.
    if (E && !Visited.count(E.get()) && E->kind != ExprKind::Let)
      ++Counts[E->kind];
    ExprVisitor::visit(E);
  }
  void visitLetBinding(const LetNode &N) override {
    ++Counts[ExprKind::Let];
    ExprVisitor::visitLetBinding(N);
  }
  void visitPattern(const Pattern &P) override {
    ++Patterns;
    ExprVisitor::visitPattern(P);
  }
};

/// Replaces every call of add by subtract.
class AddToSubtract : public ExprMutator {
public:
  Expr visitOp(const OpNode &N, const Expr &Self) override {
    if (N.name() == "add")
      return op("subtract");
    return Self;
  }
};

std::vector<Expr> chainLinks(Expr E) {
  std::vector<Expr> Links;
  while (E && E->kind == ExprKind::Let) {
    Links.push_back(E);
    E = E->as<LetNode>()->body;
  }
  return Links;
}

/// Drops a long let chain link by link (see parser_test.cc).
void release(Expr &E) {
  std::vector<Expr> Links = chainLinks(E);
  E = nullptr;
  for (Expr &L : Links)
    L.reset();
}

Expr longChain(int N, Var &X) {
  X = var("x");
  std::vector<Var> Vs;
  for (int I = 0; I < N; ++I)
    Vs.push_back(var("v"));
  Expr B = Vs.back();
  for (int I = N; I-- > 0;)
    B = let(Vs[I], callOp("add", {I ? Expr(Vs[I - 1]) : Expr(X), X}), B);
  return B;
}

} // namespace

TEST(Visitor, VisitsEveryNodeKindOnce) {
  Expr F = parseFn(R"((%x, %l) {
  let %t = (%x, relu(%x));
  let %g = fn (%y) { %y };
  match (%l) {
    Cons((%a, _), %rest) => if (%a) { %g(%t.0) } else { @f(%x, Nil) },
    _ => Cons(1, Nil),
  }
})");
  KindCounter C;
  C.visit(F);
  EXPECT_EQ(C.Counts[ExprKind::Function], 2);
  EXPECT_EQ(C.Counts[ExprKind::Let], 2);
  EXPECT_EQ(C.Counts[ExprKind::Match], 1);
  EXPECT_EQ(C.Counts[ExprKind::If], 1);
  EXPECT_EQ(C.Counts[ExprKind::Tuple], 1);
  EXPECT_EQ(C.Counts[ExprKind::TupleGetItem], 1);
  EXPECT_EQ(C.Counts[ExprKind::GlobalVar], 1);
  EXPECT_EQ(C.Counts[ExprKind::Op], 1);
  EXPECT_EQ(C.Counts[ExprKind::Constant], 1);
  // Constructor nodes: Cons (shared by the pattern and the call) and Nil.
  EXPECT_EQ(C.Counts[ExprKind::Constructor], 2);
  // Vars: %x %l %t %g %y %a %rest (each node once).
  EXPECT_EQ(C.Counts[ExprKind::Var], 7);
  // Calls: relu, %g(..), @f(..), Nil (twice: distinct nodes), Cons(1, Nil).
  EXPECT_EQ(C.Counts[ExprKind::Call], 6);
  EXPECT_EQ(C.Patterns, 6); // Cons(..), (..), %a, _, %rest, _
}

TEST(Visitor, DagIsVisitedOnce) {
  Var X = var("x");
  Expr Shared = callOp("relu", {X});
  Expr E = tuple({Shared, Shared, callOp("add", {Shared, Shared})});
  int Calls = 0;
  postOrderVisit(E, [&](const Expr &N) {
    if (N->kind == ExprKind::Call)
      ++Calls;
  });
  EXPECT_EQ(Calls, 2);
}

TEST(Visitor, PostOrderPutsChildrenFirst) {
  Expr F = parseFn("(%x) { let %a = relu(%x); let %b = relu(%a); (%a, %b) }");
  std::vector<ExprKind> Order;
  postOrderVisit(F, [&](const Expr &N) { Order.push_back(N->kind); });
  ASSERT_FALSE(Order.empty());
  EXPECT_EQ(Order.back(), ExprKind::Function);
  EXPECT_EQ(Order[Order.size() - 2], ExprKind::Let); // outer let last
  EXPECT_EQ(Order[Order.size() - 3], ExprKind::Let);
  EXPECT_EQ(Order[Order.size() - 4], ExprKind::Tuple);
}

TEST(Visitor, MutatorRebuildsOnlyWhatChanged) {
  Expr F = parseFn(R"((%x) {
  let %a = add(%x, %x);
  let %b = relu(%x);
  (%a, %b, negative(%b))
})");
  F->as<FunctionNode>()
      ->body->as<LetNode>()
      ->body->as<LetNode>()
      ->value->checkedType = scalarType(DType::Float32);
  AddToSubtract M;
  Expr G = M.mutate(F);
  ASSERT_NE(G, F);
  auto *L1 = G->as<FunctionNode>()->body->as<LetNode>();
  EXPECT_EQ(L1->value->as<CallNode>()->callee->as<OpNode>()->name(),
            "subtract");
  auto *OldL2 = F->as<FunctionNode>()->body->as<LetNode>()->body->as<LetNode>();
  auto *L2 = L1->body->as<LetNode>();
  // relu(%x) did not change: the same node, with its checkedType.
  EXPECT_EQ(L2->value, OldL2->value);
  EXPECT_TRUE(L2->value->checkedType);
  // The inner let did not change either.
  EXPECT_EQ(L1->body, F->as<FunctionNode>()->body->as<LetNode>()->body);
  // Variables are kept (binding and uses stay linked).
  EXPECT_EQ(L1->var, F->as<FunctionNode>()->body->as<LetNode>()->var);

  // Nothing to change: the very same pointer comes back.
  Expr H = parseFn("(%x) { match (%x) { Cons(%h, _) => relu(%h), _ => %x } }");
  AddToSubtract M2;
  EXPECT_EQ(M2.mutate(H), H);
}

TEST(Visitor, MutatorIsMemoizedOnDags) {
  Var X = var("x");
  Expr Shared = callOp("add", {X, X});
  Expr E = tuple({Shared, Shared});
  AddToSubtract M;
  Expr R = M.mutate(E);
  auto *T = R->as<TupleNode>();
  EXPECT_EQ(T->fields[0], T->fields[1]);
  EXPECT_NE(T->fields[0], Shared);
}

TEST(Visitor, FreeAndBoundVars) {
  Var X = var("x"), Y = var("y"), Z = var("z"), P = var("p"), H = var("h");
  auto Ctor =
      std::make_shared<ConstructorNode>("C", "T", 0, std::vector<Type>{});
  Expr E = let(Z, callOp("add", {X, Y}),
               function({P}, match(P, {{PatternNode::constructor(
                                            Ctor, {PatternNode::bind(H)}),
                                        tuple({H, Z, X})}})));
  std::vector<Var> Free = freeVars(E);
  ASSERT_EQ(Free.size(), 2u);
  EXPECT_EQ(Free[0], X);
  EXPECT_EQ(Free[1], Y);
  std::vector<Var> Bound = boundVars(E);
  EXPECT_EQ(Bound, (std::vector<Var>{Z, P, H}));
  EXPECT_EQ(referencedGlobals(parseFn("() { (@f, @f(@f)) }")),
            (std::vector<std::string>{"f"}));
}

TEST(Visitor, Substitute) {
  Var X = var("x"), Y = var("y");
  Expr E = callOp("add", {X, callOp("relu", {Y})});
  Expr R = substitute(E, {{X.get(), constant(Tensor::scalar<float>(1))}});
  EXPECT_TRUE(
      structuralEqual(R, callOp("add", {constant(Tensor::scalar<float>(1)),
                                        callOp("relu", {Y})})));
  // The untouched argument is shared.
  EXPECT_EQ(R->as<CallNode>()->args[1], E->as<CallNode>()->args[1]);
}

TEST(Visitor, LongLetChainDoesNotOverflow) {
  const int N = 100000;
  Var X;
  Expr Chain = longChain(N, X);
  KindCounter C;
  C.visit(Chain);
  EXPECT_EQ(C.Counts[ExprKind::Let], N);
  EXPECT_EQ(C.Counts[ExprKind::Call], N);

  size_t Nodes = 0;
  postOrderVisit(Chain, [&](const Expr &) { ++Nodes; });
  // lets, calls, op nodes (one per callOp), vars (plus %x).
  EXPECT_EQ(Nodes, (size_t)(N + N + N + N + 1));

  EXPECT_EQ(freeVars(Chain), std::vector<Var>{X});

  AddToSubtract M;
  Expr R = M.mutate(Chain);
  std::vector<Expr> Links = chainLinks(R);
  ASSERT_EQ(Links.size(), (size_t)N);
  EXPECT_EQ(Links.back()
                ->as<LetNode>()
                ->value->as<CallNode>()
                ->callee->as<OpNode>()
                ->name(),
            "subtract");
  // Same variables, so the bodies line up.
  EXPECT_EQ(Links.back()->as<LetNode>()->body,
            chainLinks(Chain).back()->as<LetNode>()->body);

  // A mutator that changes nothing returns the chain itself.
  ExprMutator Identity;
  EXPECT_EQ(Identity.mutate(Chain), Chain);

  Links.clear();
  release(R);
  release(Chain);
}
