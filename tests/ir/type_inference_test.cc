//===- type_inference_test.cc - Type inference and checking ---------------===//
#include "ir/Module.h"
#include "ir/Op.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"

#include <gtest/gtest.h>

using namespace rivet;
using namespace rivet::ir;

namespace {

std::string str(const Type &T) { return typeToString(T); }

Module parseAndInfer(const std::string &Text) {
  Module M = parseModule(Text);
  inferTypes(M);
  return M;
}

/// The type error inferTypes reports for Text ("" when none).
std::string inferError(const std::string &Text) {
  Module M = parseModule(Text);
  try {
    inferTypes(M);
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

#define EXPECT_CONTAINS(Msg, Substr)                                           \
  do {                                                                         \
    std::string M_ = (Msg);                                                    \
    EXPECT_NE(M_.find(Substr), std::string::npos)                              \
        << "message: '" << M_ << "', expected to contain: '" << (Substr)       \
        << "'";                                                                \
  } while (false)

/// Finds the first variable bound with NameHint anywhere under E.
const VarNode *findVar(const Expr &E, const std::string &Name);

const VarNode *findInPattern(const Pattern &P, const std::string &Name) {
  if (!P)
    return nullptr;
  if (P->kind == PatternKind::Var && P->var->nameHint == Name)
    return P->var.get();
  for (const Pattern &C : P->children)
    if (auto *V = findInPattern(C, Name))
      return V;
  return nullptr;
}

const VarNode *findVar(const Expr &E, const std::string &Name) {
  if (!E)
    return nullptr;
  switch (E->kind) {
  case ExprKind::Let: {
    auto *L = E->as<LetNode>();
    if (L->var->nameHint == Name)
      return L->var.get();
    if (auto *V = findVar(L->value, Name))
      return V;
    return findVar(L->body, Name);
  }
  case ExprKind::Function: {
    auto *F = E->as<FunctionNode>();
    for (const Var &P : F->params)
      if (P->nameHint == Name)
        return P.get();
    return findVar(F->body, Name);
  }
  case ExprKind::Call: {
    auto *C = E->as<CallNode>();
    if (auto *V = findVar(C->callee, Name))
      return V;
    for (const Expr &A : C->args)
      if (auto *V = findVar(A, Name))
        return V;
    return nullptr;
  }
  case ExprKind::If: {
    auto *I = E->as<IfNode>();
    for (const Expr *X : {&I->cond, &I->thenBranch, &I->elseBranch})
      if (auto *V = findVar(*X, Name))
        return V;
    return nullptr;
  }
  case ExprKind::Tuple:
    for (const Expr &X : E->as<TupleNode>()->fields)
      if (auto *V = findVar(X, Name))
        return V;
    return nullptr;
  case ExprKind::TupleGetItem:
    return findVar(E->as<TupleGetItemNode>()->tuple, Name);
  case ExprKind::Match: {
    auto *Mt = E->as<MatchNode>();
    if (auto *V = findVar(Mt->data, Name))
      return V;
    for (const Clause &C : Mt->clauses) {
      if (auto *V = findInPattern(C.lhs, Name))
        return V;
      if (auto *V = findVar(C.rhs, Name))
        return V;
    }
    return nullptr;
  }
  default: return nullptr;
  }
}

std::string varType(const Module &M, const std::string &Fn,
                    const std::string &Var) {
  const VarNode *V = findVar(M.function(Fn), Var);
  if (!V)
    return "<no var %" + Var + ">";
  return V->checkedType ? str(V->checkedType) : "<untyped>";
}

std::string fnType(const Module &M, const std::string &Fn) {
  return str(M.function(Fn)->checkedType);
}

TEST(TypeInference, OperatorCallsAndLets) {
  Module M = parseAndInfer(R"(
def @main(%x: Tensor[(n, 3), float32], %w: Tensor[(4, 3), float32]) -> Tensor[(n, 4), float32] {
  let %y = add(%x, %x);
  let %z: Tensor[(n, 3), float32] = relu(%y);
  let %d = dense(%z, %w);
  let %s = sum(%d, axis=[1], keepdims=1);
  multiply(%d, %s)
}
)");
  EXPECT_EQ(fnType(M, "main"), "fn(Tensor[(n, 3), float32], Tensor[(4, 3), "
                               "float32]) -> Tensor[(n, 4), float32]");
  EXPECT_EQ(varType(M, "main", "y"), "Tensor[(n, 3), float32]");
  EXPECT_EQ(varType(M, "main", "d"), "Tensor[(n, 4), float32]");
  EXPECT_EQ(varType(M, "main", "s"), "Tensor[(n, 1), float32]");
  auto *F = M.function("main")->as<FunctionNode>();
  ASSERT_TRUE(F->body->checkedType);
  EXPECT_EQ(str(F->body->checkedType), "Tensor[(n, 4), float32]");
}

// `?` in a let's annotation says nothing: the variable keeps what inference
// knows of the value (the ONNX importer writes `?` for exporter symbols).
TEST(TypeInference, UnknownExtentsOfAnAnnotationComeFromTheValue) {
  Module M = parseAndInfer(R"(
def @main(%x: Tensor[(n, 3), float32], %w: Tensor[(4, 3), float32]) {
  let %y: Tensor[(?, ?), float32] = add(%x, %x);
  let %z: Tensor[(n, ?), float32] = dense(%y, %w);
  %z
}
)");
  EXPECT_EQ(varType(M, "main", "y"), "Tensor[(n, 3), float32]");
  EXPECT_EQ(varType(M, "main", "z"), "Tensor[(n, 4), float32]");
  EXPECT_EQ(fnType(M, "main"), "fn(Tensor[(n, 3), float32], Tensor[(4, 3), "
                               "float32]) -> Tensor[(n, 4), float32]");
}

TEST(TypeInference, TuplesIfAndMatch) {
  Module M = parseAndInfer(R"(
def @main(%x: Tensor[(2, 3), float32], %c: Tensor[(), bool]) -> Tensor[(?, 3), float32] {
  let %t = (%x, sum(%x));
  let %a = %t.0;
  let %b = if (%c) { %a } else { concatenate(%a, %a) };
  let %o = Some(%b);
  let %p = (%b, 1i64);
  let %e = match (%p) {
    (%v, _) => %v,
  };
  match (%o) {
    Some(%r) => add(%r, %e),
    None => %e,
  }
}
)");
  EXPECT_EQ(varType(M, "main", "t"),
            "(Tensor[(2, 3), float32], Tensor[(), float32])");
  EXPECT_EQ(varType(M, "main", "a"), "Tensor[(2, 3), float32]");
  // The branches (2, 3) and (4, 3) generalize to (?, 3).
  EXPECT_EQ(varType(M, "main", "b"), "Tensor[(?, 3), float32]");
  EXPECT_EQ(varType(M, "main", "o"), "Option[Tensor[(?, 3), float32]]");
  EXPECT_EQ(varType(M, "main", "v"), "Tensor[(?, 3), float32]");
  EXPECT_EQ(varType(M, "main", "r"), "Tensor[(?, 3), float32]");
}

TEST(TypeInference, ClosuresAndHigherOrderParams) {
  Module M = parseAndInfer(R"(
def @apply(%f: fn(Tensor[(3,), float32]) -> Tensor[(3,), float32], %x: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
  %f(%x)
}
def @main(%x: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
  let %k = exp(%x);
  let %g = fn (%v) { add(%v, %k) };
  let %twice = fn (%h, %u) { %h(%h(%u)) };
  let %r = %twice(%g, %x);
  @apply(fn (%q) { tanh(%q) }, %r)
}
)");
  EXPECT_EQ(varType(M, "main", "g"),
            "fn(Tensor[(3,), float32]) -> Tensor[(3,), float32]");
  EXPECT_EQ(varType(M, "main", "h"),
            "fn(Tensor[(3,), float32]) -> Tensor[(3,), float32]");
  EXPECT_EQ(varType(M, "main", "q"), "Tensor[(3,), float32]");
  EXPECT_EQ(varType(M, "main", "r"), "Tensor[(3,), float32]");
}

TEST(TypeInference, PreludePolymorphism) {
  Module M = parseAndInfer(R"(
def @main(%x: Tensor[(2,), float32], %i: Tensor[(), int64]) -> Tensor[(), int64] {
  let %l = Cons(%x, Cons(%x, Nil));
  let %m = @map(fn (%v) { greater(%v, %v) }, %l);
  let %n = @map(fn (%v) { cast(%v, dtype="int64") }, %l);
  let %s = @foldl(fn (%acc, %e) { add(%acc, sum(%e)) }, 0i64, %n);
  let %h = @nth(%m, %i);
  let %empty = Nil;
  let %len = @length(%empty);
  add(%s, %len)
}
)");
  EXPECT_EQ(varType(M, "main", "l"), "List[Tensor[(2,), float32]]");
  EXPECT_EQ(varType(M, "main", "m"), "List[Tensor[(2,), bool]]");
  EXPECT_EQ(varType(M, "main", "n"), "List[Tensor[(2,), int64]]");
  EXPECT_EQ(varType(M, "main", "acc"), "Tensor[(), int64]");
  EXPECT_EQ(varType(M, "main", "h"), "Tensor[(2,), bool]");
  // An element type nothing constrains defaults to the empty tuple.
  EXPECT_EQ(varType(M, "main", "empty"), "List[()]");
  // The prelude itself is checked too, with its type variables rigid.
  EXPECT_EQ(fnType(M, "map"), "fn[A, B](fn(A) -> B, List[A]) -> List[B]");
}

TEST(TypeInference, UserDefinedListMapFoldlWithBuilders) {
  // type L[T] { C(T, L[T]), N }
  Module M;
  Type TV = typeVar("T");
  TypeData TD;
  TD.name = "L";
  TD.typeParams = {TV};
  auto C = std::make_shared<ConstructorNode>(
      "C", "L", 0, std::vector<Type>{TV, typeCall("L", {TV})});
  auto N = std::make_shared<ConstructorNode>("N", "L", 1, std::vector<Type>{});
  TD.constructors = {C, N};
  M.addTypeData(TD);
  // def @fold[A, B](%f: fn(A, B) -> A, %z: A, %l: L[B]) -> A
  Type A = typeVar("A"), B = typeVar("B");
  Var F = var("f", funcType({A, B}, A)), Z = var("z", A),
      L = var("l", typeCall("L", {B}));
  Var H = var("h"), T = var("t");
  Expr Body =
      match(L, {Clause{PatternNode::constructor(
                           C, {PatternNode::bind(H), PatternNode::bind(T)}),
                       call(globalVar("fold"), {F, call(F, {Z, H}), T})},
                Clause{PatternNode::constructor(N, {}), Z}});
  M.addFunction("fold", function({F, Z, L}, Body, A, {A, B}));
  // def @main(%x: Tensor[(n,), float32]) -> Tensor[(n,), float32]
  Var X = var("x", tensorType({Dim::symbol("n")}, DType::Float32));
  Var Acc = var("acc"), E = var("e");
  Expr List = call(C, {X, call(C, {X, N})});
  Expr Main = call(globalVar("fold"),
                   {function({Acc, E}, callOp("add", {Acc, E})), X, List});
  M.addFunction("main", function({X}, Main, X->typeAnnotation));
  inferTypes(M);
  EXPECT_EQ(str(M.function("main")->checkedType),
            "fn(Tensor[(n,), float32]) -> Tensor[(n,), float32]");
  EXPECT_EQ(str(Acc->checkedType), "Tensor[(n,), float32]");
  EXPECT_EQ(str(List->checkedType), "L[Tensor[(n,), float32]]");
  EXPECT_EQ(str(H->checkedType), "B");
  EXPECT_EQ(str(M.function("fold")->checkedType),
            "fn[A, B](fn(A, B) -> A, A, L[B]) -> A");
}

TEST(TypeInference, SelfAndMutualRecursionOfGlobals) {
  Module M = parseAndInfer(R"(
def @even(%n: Tensor[(), int64]) -> Tensor[(), bool] {
  if (equal(%n, 0i64)) { true } else { @odd(subtract(%n, 1i64)) }
}
def @odd(%n: Tensor[(), int64]) -> Tensor[(), bool] {
  if (equal(%n, 0i64)) { false } else { @even(subtract(%n, 1i64)) }
}
def @count(%n: Tensor[(), int64], %acc: Tensor[(k,), float32]) -> Tensor[(k,), float32] {
  if (greater(%n, 0i64)) { @count(subtract(%n, 1i64), relu(%acc)) } else { %acc }
}
def @main(%x: Tensor[(5,), float32]) {
  let %b = @even(4i64);
  @count(3i64, %x)
}
)");
  EXPECT_EQ(fnType(M, "odd"), "fn(Tensor[(), int64]) -> Tensor[(), bool]");
  // The symbol k of @count is bound to 5 by the argument.
  EXPECT_EQ(fnType(M, "main"),
            "fn(Tensor[(5,), float32]) -> Tensor[(5,), float32]");
}

TEST(TypeInference, LetBoundLoopAccumulatorGeneralizesToAny) {
  Module M = parseAndInfer(R"(
def @main(%x: Tensor[(1, 3), float32], %steps: Tensor[(), int64]) -> Tensor[(?, 3), float32] {
  let %loop = fn (%i: Tensor[(), int64], %acc) {
    if (less(%i, %steps)) { %loop(add(%i, 1i64), concatenate(%acc, %x)) } else { %acc }
  };
  %loop(0i64, %x)
}
)");
  EXPECT_EQ(varType(M, "main", "acc"), "Tensor[(?, 3), float32]");
  EXPECT_EQ(varType(M, "main", "loop"), "fn(Tensor[(), int64], Tensor[(?, 3), "
                                        "float32]) -> Tensor[(?, 3), float32]");
  // The caller's own variable keeps its precise type.
  EXPECT_EQ(varType(M, "main", "x"), "Tensor[(1, 3), float32]");
}

TEST(TypeInference, LoopWithUnchangedShapeStaysPrecise) {
  Module M = parseAndInfer(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  let %loop = fn (%i, %acc) {
    if (less(%i, 10i64)) { %loop(add(%i, 1i64), tanh(%acc)) } else { (%acc, %i) }
  };
  %loop(0i64, %x)
}
)");
  EXPECT_EQ(fnType(M, "main"), "fn(Tensor[(2, 3), float32]) -> (Tensor[(2, 3), "
                               "float32], Tensor[(), int64])");
}

TEST(TypeInference, ClosedExpressionAndConstructorValues) {
  Module M = Module::withPrelude();
  Expr E = parseExpr(
      "let %f = Cons; let %g = fn (%a: Tensor[(), float32]) { %f(%a, Nil) }; "
      "%g(1.5)",
      M);
  EXPECT_EQ(str(inferType(E, M)), "List[Tensor[(), float32]]");
  EXPECT_EQ(str(E->checkedType), "List[Tensor[(), float32]]");
}

TEST(TypeInference, GlobalWithoutReturnTypeIsInferred) {
  Module M = parseAndInfer(R"(
def @helper(%x: Tensor[(4,), float32]) { sigmoid(%x) }
def @main(%x: Tensor[(4,), float32]) { @helper(%x) }
)");
  EXPECT_EQ(fnType(M, "helper"),
            "fn(Tensor[(4,), float32]) -> Tensor[(4,), float32]");
  EXPECT_EQ(fnType(M, "main"),
            "fn(Tensor[(4,), float32]) -> Tensor[(4,), float32]");
}

TEST(TypeInference, RecursiveGlobalsWithoutReturnTypes) {
  Module M = parseAndInfer(R"(
type Tree[A] {
  Leaf(A),
  Node(Tree[A], Tree[A]),
}
def @sum(%l: List[Tensor[(3,), float32]]) {
  match (%l) {
    Nil => const[(3,), float32]([0, 0, 0]),
    Cons(%h, %t) => add(%h, @sum(%t)),
  }
}
def @len[A](%l: List[A]) {
  match (%l) { Nil => 0i64, Cons(_, %t) => add(1i64, @len(%t)) }
}
def @even(%n: Tensor[(), int64]) {
  if (equal(%n, 0i64)) { true } else { @odd(subtract(%n, 1i64)) }
}
def @odd(%n: Tensor[(), int64]) {
  if (equal(%n, 0i64)) { false } else { @even(subtract(%n, 1i64)) }
}
def @cell(%t: Tree[Tensor[(1, 4), float32]]) {
  match (%t) {
    Leaf(%x) => (tanh(%x), %x),
    Node(%l, %r) => {
      let %a = @cell(%l);
      let %b = @cell(%r);
      (tanh(add(%a.0, %b.0)), add(%a.1, %b.1))
    },
  }
}
def @grow(%x: Tensor[(n, 2), float32], %k: Tensor[(), int64]) {
  if (greater(%k, 0i64)) {
    @grow(concatenate(%x, %x, axis=0), subtract(%k, 1i64))
  } else {
    %x
  }
}
def @main(%x: Tensor[(3,), float32]) {
  (@sum(Cons(%x, Nil)), @len(Cons(%x, Nil)), @even(3i64))
}
)");
  EXPECT_EQ(fnType(M, "sum"),
            "fn(List[Tensor[(3,), float32]]) -> Tensor[(3,), float32]");
  EXPECT_EQ(fnType(M, "len"), "fn[A](List[A]) -> Tensor[(), int64]");
  EXPECT_EQ(fnType(M, "odd"), "fn(Tensor[(), int64]) -> Tensor[(), bool]");
  EXPECT_EQ(fnType(M, "cell"), "fn(Tree[Tensor[(1, 4), float32]]) -> "
                               "(Tensor[(1, 4), float32], Tensor[(1, 4), "
                               "float32])");
  // The recursive call's result has the dims its arguments give: n is
  // bound to `?` (a concatenation), not to the caller's n.
  EXPECT_EQ(fnType(M, "grow"), "fn(Tensor[(n, 2), float32], Tensor[(), "
                               "int64]) -> Tensor[(?, 2), float32]");
}

TEST(TypeInference, LongLetChainsDoNotExhaustTheStack) {
  // let %v1 = add(%x, %x); let %v2 = add(%v1, %v1); ... %vN
  Var X = var("x", tensorType({Dim::symbol("n")}, DType::Float32));
  const int N = 10000;
  std::vector<Var> Vs;
  for (int I = 0; I < N; ++I)
    Vs.push_back(var("v" + std::to_string(I)));
  Expr Body = Vs.back();
  for (int I = N - 1; I >= 0; --I) {
    Expr Prev = I == 0 ? Expr(X) : Expr(Vs[I - 1]);
    Body = let(Vs[I], callOp("add", {Prev, Prev}), Body);
  }
  Module M;
  M.addFunction("main", function({X}, Body));
  inferTypes(M);
  EXPECT_EQ(str(Vs.back()->checkedType), "Tensor[(n,), float32]");
  EXPECT_EQ(str(M.function("main")->checkedType),
            "fn(Tensor[(n,), float32]) -> Tensor[(n,), float32]");
}

TEST(TypeInference, TheTextFormatExample) {
  Module M = parseAndInfer(R"(
def @main(%x: Tensor[(n, 3), float32], %steps: Tensor[(), int64]) -> Tensor[(?, 3), float32] {
  let %y: Tensor[(n, 3), float32] = add(%x, %x);
  let %loop = fn (%i: Tensor[(), int64], %acc) {
    if (less(%i, %steps)) { %loop(add(%i, 1i64), relu(%acc)) } else { %acc }
  };
  let %r = %loop(0i64, %y);
  let %t = (%r, %y);
  let %s = sum(%t.0, axis=[0], keepdims=1);
  match (Cons(%s, Nil)) {
    Cons(%h, _) => %h,
    Nil => %s,
  }
}
)");
  EXPECT_EQ(varType(M, "main", "r"), "Tensor[(n, 3), float32]");
  EXPECT_EQ(varType(M, "main", "s"), "Tensor[(1, 3), float32]");
  EXPECT_EQ(varType(M, "main", "h"), "Tensor[(1, 3), float32]");
}

// Errors: the message names the function, the operator or callee, the
// argument and the types.
TEST(TypeInferenceErrors, OperatorDTypeMismatch) {
  EXPECT_CONTAINS(
      inferError(
          "def @main(%a: Tensor[(2,), float32], %b: Tensor[(2,), int64]) "
          "{ add(%a, %b) }"),
      "type error in @main: call to 'add', argument 2: add: dtypes differ (no "
      "implicit promotion): Tensor[(2,), float32] and Tensor[(2,), int64]");
}

TEST(TypeInferenceErrors, OperatorShapeMismatch) {
  EXPECT_CONTAINS(
      inferError(
          "def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(4, 5), float32]) "
          "{ matmul(%a, %b) }"),
      "type error in @main: call to 'matmul': matmul: inner dimensions differ: "
      "Tensor[(2, 3), float32] and Tensor[(4, 5), float32]");
}

TEST(TypeInferenceErrors, ExpOfInteger) {
  EXPECT_CONTAINS(inferError("def @main(%a: Tensor[(2,), int64]) { exp(%a) }"),
                  "call to 'exp', argument 1: exp: expects a float tensor");
}

TEST(TypeInferenceErrors, MissingRequiredAttribute) {
  EXPECT_CONTAINS(
      inferError("def @main(%a: Tensor[(6,), float32]) { reshape(%a) }"),
      "type error in @main: call to 'reshape': reshape: attribute 'newshape' "
      "is required");
}

TEST(TypeInferenceErrors, WrongOperatorArity) {
  EXPECT_CONTAINS(
      inferError("def @main(%a: Tensor[(6,), float32]) { add(%a) }"),
      "call to 'add' expects 2 arguments, got 1");
}

TEST(TypeInferenceErrors, WrongFunctionArity) {
  EXPECT_CONTAINS(
      inferError(
          "def @f(%a: Tensor[(), float32]) -> Tensor[(), float32] { %a }\n"
          "def @main(%a: Tensor[(), float32]) { @f(%a, %a) }"),
      "type error in @main: call to @f expects 1 argument, got 2");
}

TEST(TypeInferenceErrors, WrongConstructorArity) {
  EXPECT_CONTAINS(inferError("def @main(%a: Tensor[(), float32]) { Cons(%a) }"),
                  "constructor Cons expects 2 arguments, got 1");
}

TEST(TypeInferenceErrors, ArgumentDimensionMismatchAtCall) {
  EXPECT_CONTAINS(
      inferError(
          "def @f(%a: Tensor[(3,), float32]) -> Tensor[(3,), float32] { %a }\n"
          "def @main(%a: Tensor[(4,), float32]) { @f(%a) }"),
      "type error in @main: call to @f, argument 1: expected Tensor[(3,), "
      "float32], got Tensor[(4,), float32]");
}

TEST(TypeInferenceErrors, ReturnTypeMismatch) {
  EXPECT_CONTAINS(
      inferError("def @main(%a: Tensor[(4,), float32]) -> Tensor[(4,), int64] "
                 "{ %a }"),
      "type error in @main: the function body does not match its return type: "
      "expected Tensor[(4,), int64], got Tensor[(4,), float32]");
}

TEST(TypeInferenceErrors, LetAnnotationMismatch) {
  EXPECT_CONTAINS(
      inferError("def @main(%a: Tensor[(4,), float32]) "
                 "{ let %b: Tensor[(4, 1), float32] = %a; %b }"),
      "type error in @main: let %b: expected Tensor[(4, 1), float32], got "
      "Tensor[(4,), float32]");
}

TEST(TypeInferenceErrors, BranchesWithDifferentDTypes) {
  EXPECT_CONTAINS(
      inferError("def @main(%c: Tensor[(), bool], %a: Tensor[(4,), float32]) "
                 "{ if (%c) { %a } else { cast(%a, dtype=\"int32\") } }"),
      "type error in @main: the branches of 'if' have different types: "
      "Tensor[(4,), float32] and Tensor[(4,), int32]");
}

TEST(TypeInference, BranchesWithDifferentRanksHaveAnUnknownRank) {
  // ONNX If branches (and sequence elements) may differ in rank.
  Module M = parseAndInfer(
      "def @main(%c: Tensor[(), bool], %a: Tensor[(4,), float32]) "
      "{ if (%c) { %a } else { sum(%a) } }");
  auto *F = M.function("main")->as<FunctionNode>();
  EXPECT_EQ(str(F->body->checkedType), "Tensor[?, float32]");
}

TEST(TypeInferenceErrors, NonScalarCondition) {
  EXPECT_CONTAINS(
      inferError(
          "def @main(%c: Tensor[(2,), bool]) { if (%c) { 1 } else { 2 } }"),
      "type error in @main: the condition of 'if' must be a scalar (rank-0) "
      "tensor, got Tensor[(2,), bool]");
}

TEST(TypeInferenceErrors, TupleIndexOutOfRange) {
  EXPECT_CONTAINS(
      inferError(
          "def @main(%a: Tensor[(), float32]) { let %t = (%a, %a); %t.2 }"),
      "tuple index 2 is out of range for (Tensor[(), float32], "
      "Tensor[(), float32]) (2 fields)");
}

TEST(TypeInferenceErrors, MatchClausesDisagree) {
  EXPECT_CONTAINS(
      inferError("def @main(%o: Option[Tensor[(), float32]]) "
                 "{ match (%o) { Some(%v) => %v, None => 1i64 } }"),
      "type error in @main: clause 2 of 'match' has a type different from the "
      "previous clauses");
}

TEST(TypeInferenceErrors, PatternOfAnotherType) {
  EXPECT_CONTAINS(inferError("def @main(%o: Option[Tensor[(), float32]]) "
                             "{ match (%o) { Cons(%v, _) => %v } }"),
                  "pattern Cons (of type 'List') cannot match a value of type "
                  "Option[Tensor[(), float32]]");
}

TEST(TypeInferenceErrors, CallingANonFunction) {
  EXPECT_CONTAINS(
      inferError("def @main(%a: Tensor[(), float32]) { %a(%a) }"),
      "cannot call a value of type Tensor[(), float32]: it is not a function");
}

TEST(TypeInferenceErrors, UnannotatedGlobalParameter) {
  EXPECT_CONTAINS(
      inferError("def @main(%a) { %a }"),
      "type error in @main: parameter %a of a global function needs a type "
      "annotation");
}

TEST(TypeInferenceErrors, UnconstrainedVariable) {
  EXPECT_CONTAINS(
      inferError(
          "def @main(%a: Tensor[(), float32]) { let %f = fn (%u) { %u }; %a }"),
      "type error in @main: cannot infer the type of variable %u");
}

TEST(TypeInferenceErrors, ReturnTypeOnlyRecursiveCallsDetermine) {
  EXPECT_CONTAINS(inferError("def @f(%a: Tensor[(), int64]) { @f(%a) }"),
                  "type error in @f: cannot infer the return type of @f: only "
                  "its recursive calls determine it; declare it");
  // Through each other: the first of the group in module order is named.
  EXPECT_CONTAINS(inferError(R"(
def @main(%a: Tensor[(), int64]) { @g(%a) }
def @g(%a: Tensor[(), int64]) { @h(%a) }
def @h(%a: Tensor[(), int64]) { if (less(%a, 0i64)) { @g(%a) } else { @h(%a) } }
)"),
                  "type error in @g: cannot infer the return type of @g");
}

TEST(TypeInferenceErrors, RecursiveGlobalBodyErrorNamesIt) {
  // An error in the body of a recursive global without a return type names
  // that global, whichever member of its group was asked for.
  EXPECT_CONTAINS(inferError(R"(
def @main(%n: Tensor[(), int64]) { @f(%n) }
def @f(%n: Tensor[(), int64]) {
  if (equal(%n, 0i64)) { 1f32 } else { add(@f(subtract(%n, 1i64)), 1i64) }
}
)"),
                  "type error in @f: call to 'add'");
}

TEST(TypeInferenceErrors, LoopCarriedDTypeChangeIsAnError) {
  EXPECT_CONTAINS(inferError(R"(
def @main(%x: Tensor[(3,), float32]) {
  let %loop = fn (%i: Tensor[(), int64], %acc) {
    if (less(%i, 3i64)) { %loop(add(%i, 1i64), cast(%acc, dtype="float64")) } else { %acc }
  };
  %loop(0i64, %x)
}
)"),
                  "type error in @main: call to 'cast': its result conflicts "
                  "with the type its uses "
                  "require: Tensor[(3,), float32] and Tensor[(3,), float64] "
                  "(dtypes differ)");
}

TEST(TypeInferenceErrors, GenericInstantiationConflict) {
  EXPECT_CONTAINS(
      inferError("def @main(%a: Tensor[(), float32], %b: Tensor[(), int64]) "
                 "{ Cons(%a, Cons(%b, Nil)) }"),
      "type error in @main: constructor Cons, argument 2");
}

} // namespace

// Issue 23, reproducers 1 and 2 (shared/reliability): a type variable unified
// with a type containing it used to leave a cyclic binding behind, and the
// error message's own printing recursed until the stack overflowed.
TEST(TypeInferenceErrors, SelfApplicationIsAnInfiniteType) {
  EXPECT_CONTAINS(inferError("def @main(%x: Tensor[(2, 3), float32]) {\n"
                             "  let %f = fn (%g) { %g(%g) };\n"
                             "  %x\n"
                             "}"),
                  "type error in @main: call of a closure, argument 1");
  EXPECT_CONTAINS(inferError("def @main(%x: Tensor[(2, 3), float32]) {\n"
                             "  let %f = fn (%g) { %g(%g) };\n"
                             "  %x\n"
                             "}"),
                  "a type would contain itself (an infinite type)");
}

TEST(TypeInferenceErrors, AccumulatorGrowingIntoNestedTuplesIsAnError) {
  EXPECT_CONTAINS(
      inferError("def @main(%x: Tensor[(), float32], %n: Tensor[(), int64]) "
                 "-> Tensor[(), float32] { let %l = fn (%i: Tensor[(), int64], "
                 "%a) { if (less(%i, %n)) { %l(add(%i, 1i64), (%a, %x)) } "
                 "else { %x } }; %l(0i64, %x) }"),
      "type error in @main");
}
