//===- structural_equal_test.cc - Alpha-equivalence and hashing -----------===//
#include "ir/StructuralEqual.h"

#include "ir/Parser.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace rivet;
using namespace rivet::ir;

namespace {

const ParseOptions NoPrelude{false};

const char *Defs = "type List[A] { Cons(A, List[A]), Nil }\n";

Expr body(const std::string &Fn) {
  Module M = parseModule(std::string(Defs) + "def @f" + Fn, "t", NoPrelude);
  return M.function("f");
}

void expectEqual(const std::string &A, const std::string &B) {
  Expr EA = body(A), EB = body(B);
  EXPECT_TRUE(structuralEqual(EA, EB)) << A << "\nvs\n" << B;
  EXPECT_EQ(structuralHash(EA), structuralHash(EB)) << A << "\nvs\n" << B;
}

void expectDifferent(const std::string &A, const std::string &B) {
  Expr EA = body(A), EB = body(B);
  EXPECT_FALSE(structuralEqual(EA, EB)) << A << "\nvs\n" << B;
  EXPECT_FALSE(structuralEqual(EB, EA)) << B << "\nvs\n" << A;
}

} // namespace

TEST(StructuralEqual, AlphaRenamingIsEqual) {
  expectEqual("(%x) { let %y = add(%x, %x); relu(%y) }",
              "(%a) { let %b = add(%a, %a); relu(%b) }");
  expectEqual("[A](%x: A) -> A { %x }", "[B](%y: B) -> B { %y }");
  expectEqual("(%l: List[Tensor[(), int64]]) { match (%l) { Cons(%h, %t) => "
              "%h, Nil => 0 } }",
              "(%m: List[Tensor[(), int64]]) { match (%m) { Cons(%q, %r) => "
              "%q, Nil => 0 } }");
  expectEqual("(%x) { let %f = fn (%y) { %f(%y) }; %f(%x) }",
              "(%a) { let %g = fn (%b) { %g(%b) }; %g(%a) }");
  expectEqual("(%x: fn[A](A) -> A) { %x }", "(%y: fn[Z](Z) -> Z) { %y }");
  // Shadowing versus distinct names.
  expectEqual("(%x) { let %x = relu(%x); %x }",
              "(%x) { let %y = relu(%x); %y }");
  expectEqual("() { (nan, -0.0, const[(2,), float16]([nan, 1])) }",
              "() { (nan, -0.0, const[(2,), float16]([nan, 1.0])) }");
}

TEST(StructuralEqual, DifferencesAreNotEqual) {
  expectDifferent("(%x) { add(%x, %x) }", "(%x) { subtract(%x, %x) }");
  expectDifferent("(%x) { sum(%x, axis=[0]) }", "(%x) { sum(%x, axis=[1]) }");
  expectDifferent("(%x) { sum(%x, axis=[0]) }", "(%x) { sum(%x) }");
  expectDifferent("(%x) { sum(%x, axis=1) }", "(%x) { sum(%x, axis=1.0) }");
  expectDifferent("() { 1 }", "() { 2 }");
  expectDifferent("() { 1 }", "() { 1i32 }");
  expectDifferent("() { 0.0 }", "() { -0.0 }");
  expectDifferent("() { const[(2,), int64]([1, 2]) }",
                  "() { const[(1, 2), int64]([1, 2]) }");
  expectDifferent("(%x: Tensor[(n, 3), float32]) { %x }",
                  "(%x: Tensor[(m, 3), float32]) { %x }");
  expectDifferent("(%x: Tensor[(2, 3), float32]) { %x }",
                  "(%x: Tensor[(2, ?), float32]) { %x }");
  expectDifferent("(%x: Tensor[?, float32]) { %x }",
                  "(%x: Tensor[(), float32]) { %x }");
  expectDifferent("(%x: Tensor[(3,), float32]) { %x }",
                  "(%x: Tensor[(3,), float64]) { %x }");
  expectDifferent("(%x) { %x }", "(%x: Tensor[(), float32]) { %x }");
  expectDifferent("(%x, %y) { add(%x, %y) }", "(%x, %y) { add(%y, %x) }");
  expectDifferent("(%x) { (%x, %x).0 }", "(%x) { (%x, %x).1 }");
  expectDifferent("(%x) { Cons(%x, Nil) }", "(%x) { Nil }");
  expectDifferent("[A, B](%x: A, %y: B) { %x }", "[A, B](%x: B, %y: A) { %x }");
  expectDifferent("(%x) { let %y = relu(%x); let %z = relu(%y); %y }",
                  "(%x) { let %y = relu(%x); let %z = relu(%y); %z }");
  expectDifferent("(%l: List[Tensor[(), int64]]) { match (%l) { Cons(%h, _) => "
                  "%h, _ => 0 } }",
                  "(%l: List[Tensor[(), int64]]) { match (%l) { Cons(_, %t) => "
                  "%t, _ => 0 } }");
  expectDifferent("(%x) { if (%x) { 1 } else { 2 } }",
                  "(%x) { if (%x) { 2 } else { 1 } }");
  expectDifferent("(%x, Primitive=1) { %x }", "(%x) { %x }");
  EXPECT_FALSE(structuralEqual(globalVar("f"), globalVar("g")));
  EXPECT_TRUE(structuralEqual(globalVar("f"), globalVar("f")));
}

TEST(StructuralEqual, FreeVariables) {
  Var X = var("x"), Y = var("x");
  Expr A = callOp("relu", {X}), B = callOp("relu", {Y});
  EXPECT_TRUE(structuralEqual(A, A));
  EXPECT_TRUE(structuralEqual(A, callOp("relu", {X})));
  EXPECT_FALSE(structuralEqual(A, B));
  EXPECT_TRUE(structuralEqual(A, B, /*MapFreeVars=*/true));
  // Mapping is one to one.
  Expr C = callOp("add", {X, X}), D = callOp("add", {X, Y});
  EXPECT_FALSE(structuralEqual(C, D, true));
  EXPECT_EQ(structuralHash(A), structuralHash(B));
}

TEST(StructuralEqual, Types) {
  Type A = typeVar("A"), B = typeVar("B");
  EXPECT_TRUE(structuralEqual(funcType({A}, A, {A}), funcType({B}, B, {B})));
  EXPECT_FALSE(structuralEqual(funcType({A}, A, {A}), funcType({B}, A, {B})));
  EXPECT_EQ(structuralHash(funcType({A}, A, {A})),
            structuralHash(funcType({B}, B, {B})));
  EXPECT_TRUE(structuralEqual(typeCall("List", {scalarType(DType::Int64)}),
                              typeCall("List", {scalarType(DType::Int64)})));
  EXPECT_FALSE(structuralEqual(typeCall("List", {scalarType(DType::Int64)}),
                               typeCall("Option", {scalarType(DType::Int64)})));
  EXPECT_TRUE(structuralEqual(tupleType({}), tupleType({})));
  EXPECT_FALSE(structuralEqual(tupleType({}), tupleType({tupleType({})})));
  // Free type variables compare by name.
  EXPECT_TRUE(structuralEqual(typeVar("T"), typeVar("T")));
  EXPECT_FALSE(structuralEqual(typeVar("T"), typeVar("U")));
}

TEST(StructuralEqual, ModulesAndHashesOfParsedPrograms) {
  const char *P1 = R"(
type Opt[A] { S(A), N }
def @f(%x) { @g(%x) }
def @g(%y) { S(%y) }
)";
  const char *P2 = R"(
type Opt[B] { S(B), N }
def @g(%q) { S(%q) }
def @f(%p) { @g(%p) }
)";
  const char *P3 = R"(
type Opt[A] { S(A), N }
def @f(%x) { @g(%x) }
def @g(%y) { N }
)";
  Module M1 = parseModule(P1, "1", NoPrelude),
         M2 = parseModule(P2, "2", NoPrelude),
         M3 = parseModule(P3, "3", NoPrelude);
  EXPECT_TRUE(structuralEqual(M1, M2)) << structuralDiff(M1, M2);
  EXPECT_FALSE(structuralEqual(M1, M3));
  EXPECT_EQ(structuralDiff(M1, M3).substr(0, 3), "@g:");
  EXPECT_EQ(structuralHash(M1.function("f")), structuralHash(M2.function("f")));
  EXPECT_NE(structuralHash(M1.function("g")), structuralHash(M3.function("g")));
  // The hash tells most different expressions apart.
  EXPECT_NE(structuralHash(body("(%x) { add(%x, %x) }")),
            structuralHash(body("(%x) { subtract(%x, %x) }")));
  EXPECT_NE(structuralHash(body("() { 1.5 }")),
            structuralHash(body("() { 2.5 }")));
}

TEST(StructuralEqual, LongLetChainsAreIterative) {
  const int N = 100000;
  auto Build = [&](const char *Hint) {
    Var X = var("x");
    std::vector<Var> Vs;
    for (int I = 0; I < N; ++I)
      Vs.push_back(var(Hint));
    Expr B = Vs.back();
    for (int I = N; I-- > 0;)
      B = let(Vs[I], callOp("relu", {I ? Expr(Vs[I - 1]) : Expr(X)}), B);
    return function({X}, B);
  };
  Expr A = Build("a"), B = Build("b");
  EXPECT_TRUE(structuralEqual(A, B));
  EXPECT_EQ(structuralHash(A), structuralHash(B));
  for (Expr *E : {&A, &B}) {
    std::vector<Expr> Links;
    for (Expr L = (*E)->as<FunctionNode>()->body; L->kind == ExprKind::Let;
         L = L->as<LetNode>()->body)
      Links.push_back(L);
    *E = nullptr;
    for (Expr &L : Links)
      L.reset();
  }
}
