//===- printer_test.cc - The .rvir printer and round trips ----------------===//
#include "ir/Printer.h"

#include "ir/Parser.h"
#include "ir/StructuralEqual.h"
#include "kernels/Error.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>

using namespace rivet;
using namespace rivet::ir;

namespace {

const ParseOptions NoPrelude{false};

Module parse(const std::string &Text) {
  return parseModule(Text, "test.rvir", NoPrelude);
}

/// parse(print(M)) must be structurally equal to M, and printing is stable.
void expectRoundTrip(const Module &M) {
  std::string Text = printModule(M, {true});
  Module Again = parse(Text);
  EXPECT_TRUE(structuralEqual(M, Again))
      << structuralDiff(M, Again) << "\n--- text ---\n"
      << Text;
  EXPECT_EQ(printModule(Again, {true}), Text);
}

/// print(parse(T)) == T for text already in canonical form.
void expectCanonical(const std::string &Text) {
  Module M = parse(Text);
  // includePrelude: these texts define List themselves.
  EXPECT_EQ(printModule(M, {true}), Text);
  expectRoundTrip(M);
}

Tensor f32(std::vector<float> V, Shape S) { return Tensor::fromVector(V, S); }

} // namespace

TEST(Printer, CanonicalPreambleProgram) {
  expectCanonical(R"(type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @main(%x: Tensor[(n, 3), float32], %steps: Tensor[(), int64]) -> Tensor[(?, 3), float32] {
  let %y: Tensor[(n, 3), float32] = add(%x, %x);
  let %loop = fn (%i: Tensor[(), int64], %acc) {
    if (less(%i, %steps)) {
      %loop(add(%i, 1), relu(%acc))
    } else {
      %acc
    }
  };
  let %r = %loop(0, %y);
  let %t = (%r, %y);
  let %s = sum(%t.0, axis=[0], keepdims=1);
  match (Cons(%s, Nil)) {
    Cons(%h, _) => %h,
    Nil => %s,
  }
}
)");
}

TEST(Printer, CanonicalLiteralsAndAttributes) {
  expectCanonical(R"(def @f(%x: Tensor[?, float32], Primitive=1) {
  let %c = (1.5, 3i8, 3i16, 3i32, 200u8, -2, true, false, nan, -inf, 0.1f64, 1.5f16, 1e-07, -0.0, 100000.0);
  let %d = const[(2, 2), float32]([1.0, 2.5, nan, -inf]);
  let %e = const[(3,), int8]([-128, 0, 127]);
  let %g = const[(2,), bool]([true, false]);
  reshape(%x, a=1.5, b="s\"\n", c=[1, 2], d=[1.0, 2.5], e=["a"], f=[], g=floats[], h=strings[], i=const[(), int64]([3]), j=-7, k=1e+20)
}
)");
}

TEST(Printer, CanonicalGenericsClosuresAndPatterns) {
  expectCanonical(R"(type Tree[A] {
  Leaf,
  Node(Tree[A], A, Tree[A]),
}

def @size[A](%t: Tree[A]) -> Tensor[(), int64] {
  match (%t) {
    Leaf => 0,
    Node(%l, _, %r) => add(add(@size(%l), 1), @size(%r)),
  }
}

def @apply[A, B](%f: fn(A) -> B, %x: A) -> B {
  %f(%x)
}

def @main(%p: (Tensor[(2,), float32], Tensor[(), int64]), %u: ()) {
  let %g = fn (%y) -> Tensor[(2,), float32] {
    let %z = negative(%y);
    %z
  };
  let %q = @apply(%g, %p.0);
  let %k = (fn (%w) {
    %w
  })(%q);
  let %n = fn[T] (%v: T) -> (T,) {
    (%v,)
  };
  match (%p) {
    (%a, _) => {
      let %b = (%a,);
      %b.0
    },
    %other: (Tensor[(2,), float32], Tensor[(), int64]) => %other.0,
  }
}
)");
}

TEST(Printer, ShadowedNamesAreRenamed) {
  Module M = parse("def @f(%x) { let %x = relu(%x); let %x = relu(%x); "
                   "let %x1 = relu(%x); %x1 }");
  EXPECT_EQ(printModule(M), R"(def @f(%x) {
  let %x1 = relu(%x);
  let %x2 = relu(%x1);
  let %x11 = relu(%x2);
  %x11
}
)");
  expectRoundTrip(M);
}

TEST(Printer, BuilderModuleWithEveryNodeKind) {
  Module M;
  Type A = typeVar("A");
  TypeData Opt{"Maybe", {A}, {}};
  auto Just = std::make_shared<ConstructorNode>("Just", "Maybe", 0,
                                                std::vector<Type>{A});
  auto Nothing = std::make_shared<ConstructorNode>("Nothing", "Maybe", 1,
                                                   std::vector<Type>{});
  Opt.constructors = {Just, Nothing};
  M.addTypeData(Opt);

  Type T23 = tensorType({Dim::constant(2), Dim::symbol("n")}, DType::Float32);
  Var X = var("x", T23);
  Var Y = var("", nullptr); // no hint
  Var Z = var("in.put-1", scalarType(DType::Int64));
  Var F = var("f");
  Var P = var("p");
  Var H = var("h");
  // A recursive local: let %f = fn (%p) { %f(%p) }
  Expr Rec = function({P}, call(F, {P}));
  Expr Body = let(
      Y, callOp("add", {X, constant(f32({1, 2, 3, 4}, {2, 2}))}),
      let(F, Rec,
          let(Z, constant(Tensor::scalar<int64_t>(7)),
              match(
                  call(Just, {tuple({Y, Z})}),
                  {{PatternNode::constructor(
                        Just, {PatternNode::tuple({PatternNode::bind(H),
                                                   PatternNode::wildcard()})}),
                    ifThenElse(callOp("less", {Z, Z}),
                               tupleGetItem(tuple({H, Y}), 1),
                               call(globalVar("g"), {H}))},
                   {PatternNode::constructor(Nothing, {}),
                    callOp("sum", {X},
                           Attrs{{"axis", std::vector<int64_t>{1}},
                                 {"keepdims", int64_t(0)}})}}))));
  M.addFunction("main", function({X}, Body, T23));
  Type B = typeVar("B");
  Var Q = var("q", B);
  M.addFunction("g",
                function({Q}, tuple({Q, op("relu"), call(Nothing, {}), Just}),
                         nullptr, {B}));
  // Type variables with the same name in different scopes.
  Type A2 = typeVar("A");
  Var R = var("r", funcType({A2}, A2, {A2}));
  M.addFunction(
      "h", function({R}, R, nullptr, {}, Attrs{{"Primitive", int64_t(1)}}));
  expectRoundTrip(M);
  std::string Text = printModule(M);
  EXPECT_NE(
      Text.find(
          "let %x1 = add(%x, const[(2, 2), float32]([1.0, 2.0, 3.0, 4.0]));"),
      std::string::npos)
      << Text;
  EXPECT_NE(Text.find("let %in_put_1: Tensor[(), int64] = 7;"),
            std::string::npos)
      << Text;
}

TEST(Printer, FloatsRoundTripBitExactly) {
  std::mt19937 Rng(42);
  std::vector<float> F;
  std::vector<double> D;
  std::vector<Half> H;
  for (int I = 0; I < 2000; ++I) {
    float FV = std::bit_cast<float>((uint32_t)Rng());
    double DV = std::bit_cast<double>(((uint64_t)Rng() << 32) | Rng());
    if (std::isnan(FV))
      FV = 1.0f;
    if (std::isnan(DV))
      DV = 1.0;
    F.push_back(FV);
    D.push_back(DV);
    Half HV;
    HV.Bits = (uint16_t)Rng();
    if (std::isnan((float)HV))
      HV.Bits = 0x3c00;
    H.push_back(HV);
  }
  for (float V :
       {0.0f, -0.0f, 1e-45f, 3.4028235e38f, 0.1f, INFINITY, -INFINITY})
    F.push_back(V);
  for (double V : {0.0, -0.0, 5e-324, 1.7976931348623157e308, 0.1, 1e100})
    D.push_back(V);
  Module M;
  M.addFunction(
      "f",
      function({}, tuple({constant(Tensor::fromVector(F, {(int64_t)F.size()})),
                          constant(Tensor::fromVector(D, {(int64_t)D.size()})),
                          constant(Tensor::fromVector(H, {(int64_t)H.size()})),
                          constant(Tensor::scalar<float>(F[5])),
                          constant(Tensor::scalar<double>(D[5])),
                          constant(Tensor::scalar<Half>(H[5]))})));
  Module Again = parse(printModule(M));
  auto *T1 = M.function("f")->as<FunctionNode>()->body->as<TupleNode>();
  auto *T2 = Again.function("f")->as<FunctionNode>()->body->as<TupleNode>();
  for (size_t I = 0; I < 6; ++I) {
    const Tensor &A = T1->fields[I]->as<ConstantNode>()->value;
    const Tensor &B = T2->fields[I]->as<ConstantNode>()->value;
    ASSERT_EQ(A.dtype(), B.dtype());
    ASSERT_EQ(A.shape(), B.shape());
    EXPECT_EQ(std::memcmp(A.rawData(), B.rawData(), A.nbytes()), 0) << I;
  }
  EXPECT_TRUE(structuralEqual(M, Again));
}

TEST(Printer, NanAndInfinityInAttributesAndConstants) {
  Module M;
  Var X = var("x");
  M.addFunction(
      "f",
      function({X},
               callOp("reshape",
                      {X, constant(Tensor::scalar<float>(NAN)),
                       constant(Tensor::scalar<double>(-INFINITY))},
                      Attrs{{"a", NAN},
                            {"b", std::vector<double>{INFINITY, -0.0, NAN}},
                            {"c", 2.0}})));
  std::string Text = printModule(M);
  EXPECT_EQ(Text, "def @f(%x) {\n  reshape(%x, nan, -inff64, a=nan, "
                  "b=[inf, -0.0, nan], c=2.0)\n}\n");
  expectRoundTrip(M);
}

TEST(Printer, AttributeKindsSurviveRoundTrip) {
  // An int attribute stays int and a float stays float, even when integral.
  std::vector<AttrValue> Values = {
      int64_t(3),
      3.0,
      std::string("x y"),
      std::vector<int64_t>{},
      std::vector<double>{},
      std::vector<std::string>{},
      std::vector<double>{1, 2},
      std::vector<int64_t>{-1, 9223372036854775807},
      std::vector<std::string>{"", "\x01\xff"},
      Tensor::scalar<float>(2.0f),
      Tensor::fromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}),
  };
  Module Ctx;
  for (const AttrValue &V : Values) {
    std::string Text = printAttrValue(V);
    Var X = var("x");
    Module M;
    M.addFunction("f", function({X}, callOp("relu", {X}, Attrs{{"v", V}})));
    Module Again = parse(printModule(M));
    EXPECT_TRUE(structuralEqual(M, Again)) << Text;
    const Attrs &A =
        Again.function("f")->as<FunctionNode>()->body->as<CallNode>()->attrs;
    EXPECT_EQ(A.items().at("v").index(), V.index()) << Text;
  }
}

TEST(Printer, PreludeIsSkippedByName) {
  Module M = Module::withPrelude();
  Var X = var("x");
  M.addFunction("main", function({X}, X));
  std::string Text = printModule(M);
  EXPECT_EQ(Text, "def @main(%x) {\n  %x\n}\n");
  std::string Full = printModule(M, {true});
  EXPECT_NE(Full.find("type List[A]"), std::string::npos);
  EXPECT_NE(Full.find("def @map"), std::string::npos);
  // Parsing the short text brings the prelude back.
  Module Again = parseModule(Text);
  EXPECT_TRUE(structuralEqual(M, Again)) << structuralDiff(M, Again);
  // Parsing the full text with the prelude import: the text's own
  // definitions replace the prelude's.
  Module Full2 = parseModule(Full);
  EXPECT_TRUE(structuralEqual(M, Full2)) << structuralDiff(M, Full2);
}

TEST(Printer, PrintExpr) {
  Var X = var("x");
  Var Y = var("y");
  Expr E = let(Y, callOp("relu", {X}), tuple({Y}));
  EXPECT_EQ(printExpr(E), "let %y = relu(%x);\n(%y,)");
  EXPECT_EQ(printExpr(tuple({})), "()");
  EXPECT_EQ(printConstant(Tensor::scalar<int32_t>(-5)), "-5i32");
  Tensor B = Tensor::empty({}, DType::Bool);
  *B.data<bool>() = true;
  EXPECT_EQ(printConstant(B), "true");
}

TEST(Printer, LetChainIsFlatAndLong) {
  const int N = 100000;
  Var X = var("x");
  std::vector<Var> Vars;
  for (int I = 0; I < N; ++I)
    Vars.push_back(var("v"));
  Expr Body = Vars.back();
  for (int I = N; I-- > 0;)
    Body =
        let(Vars[I], callOp("relu", {I ? Expr(Vars[I - 1]) : Expr(X)}), Body);
  std::string Text = printExpr(Body);
  EXPECT_EQ(Text.substr(0, 20), "let %v = relu(%x);\nl");
  EXPECT_NE(Text.find("let %v99999 = relu(%v99998);\n%v99999"),
            std::string::npos);
  // Release the chain link by link (the recursive destructor would overflow).
  std::vector<Expr> Links;
  for (Expr E = Body; E->kind == ExprKind::Let; E = E->as<LetNode>()->body)
    Links.push_back(E);
  Body = nullptr;
  for (Expr &L : Links)
    L.reset();
}
