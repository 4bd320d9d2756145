//===- parser_test.cc - The .rvir parser ----------------------------------===//
#include "ir/Parser.h"

#include "ir/Op.h"
#include "ir/Printer.h"
#include "ir/StructuralEqual.h"
#include "ir/Visitor.h"
#include "kernels/Error.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace rivet;
using namespace rivet::ir;

namespace {

const ParseOptions NoPrelude{false};

Module parse(const std::string &Text) {
  return parseModule(Text, "test.rvir", NoPrelude);
}

/// The message of the Error that parsing Text throws ("" when it parses).
std::string parseError(const std::string &Text) {
  try {
    parse(Text);
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

const FunctionNode &fn(const Module &M, const std::string &Name) {
  return *M.function(Name)->as<FunctionNode>();
}

/// Releases a long let chain link by link: the recursive destructor of
/// shared_ptr would otherwise overflow the stack.
void releaseChain(Expr E) {
  std::vector<Expr> Links;
  while (E && E->kind == ExprKind::Let) {
    Expr Next = E->as<LetNode>()->body;
    Links.push_back(std::move(E));
    E = std::move(Next);
  }
  for (Expr &L : Links)
    L.reset();
}

const char *ListDef = "type List[A] { Cons(A, List[A]), Nil }\n";

} // namespace

TEST(Parser, PreambleExample) {
  std::string Text = std::string(ListDef) + R"(
// line comment
/* block
   comment */
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
)";
  Module M = parse(Text);
  ASSERT_TRUE(M.hasFunction("main"));
  const FunctionNode &Main = fn(M, "main");
  ASSERT_EQ(Main.params.size(), 2u);
  auto *XT = Main.params[0]->typeAnnotation->as<TensorTypeNode>();
  ASSERT_TRUE(XT && XT->shape);
  EXPECT_TRUE((*XT->shape)[0].isSymbol());
  EXPECT_EQ((*XT->shape)[0].name, "n");
  EXPECT_EQ((*XT->shape)[1].value, 3);
  auto *RT = Main.retType->as<TensorTypeNode>();
  EXPECT_TRUE((*RT->shape)[0].isAny());

  // let %y = add(%x, %x)
  auto *L1 = Main.body->as<LetNode>();
  ASSERT_TRUE(L1);
  EXPECT_EQ(L1->var->nameHint, "y");
  auto *Add = L1->value->as<CallNode>();
  ASSERT_TRUE(Add && Add->callee->as<OpNode>());
  EXPECT_EQ(Add->callee->as<OpNode>()->name(), "add");
  EXPECT_EQ(Add->args[0], Main.params[0]);
  EXPECT_EQ(Add->args[1], Main.params[0]);

  // The recursive local: %loop inside its own body is the let's var.
  auto *L2 = L1->body->as<LetNode>();
  auto *Loop = L2->value->as<FunctionNode>();
  ASSERT_TRUE(Loop);
  auto *If = Loop->body->as<IfNode>();
  ASSERT_TRUE(If);
  auto *Rec = If->thenBranch->as<CallNode>();
  ASSERT_TRUE(Rec);
  EXPECT_EQ(Rec->callee, L2->var);
  // %steps in the closure is the parameter of @main.
  EXPECT_EQ(If->cond->as<CallNode>()->args[1], Main.params[1]);

  // let %s = sum(%t.0, axis=[0], keepdims=1)
  auto *L5 = L2->body->as<LetNode>()->body->as<LetNode>()->body->as<LetNode>();
  auto *Sum = L5->value->as<CallNode>();
  ASSERT_TRUE(Sum);
  EXPECT_EQ(Sum->attrs.getInts("axis"), std::vector<int64_t>{0});
  EXPECT_EQ(Sum->attrs.getInt("keepdims"), 1);
  auto *Get = Sum->args[0]->as<TupleGetItemNode>();
  ASSERT_TRUE(Get);
  EXPECT_EQ(Get->index, 0);

  auto *Match = L5->body->as<MatchNode>();
  ASSERT_TRUE(Match);
  ASSERT_EQ(Match->clauses.size(), 2u);
  auto *Data = Match->data->as<CallNode>();
  ASSERT_TRUE(Data && Data->callee->as<ConstructorNode>());
  EXPECT_EQ(Data->callee->as<ConstructorNode>()->name, "Cons");
  // A bare nullary constructor is a call with no arguments.
  auto *NilCall = Data->args[1]->as<CallNode>();
  ASSERT_TRUE(NilCall);
  EXPECT_EQ(NilCall->callee->as<ConstructorNode>()->name, "Nil");
  EXPECT_TRUE(NilCall->args.empty());
  const Pattern &P0 = Match->clauses[0].lhs;
  EXPECT_EQ(P0->kind, PatternKind::Constructor);
  EXPECT_EQ(P0->children[0]->kind, PatternKind::Var);
  EXPECT_EQ(P0->children[1]->kind, PatternKind::Wildcard);
  EXPECT_EQ(Match->clauses[0].rhs, P0->children[0]->var);
}

TEST(Parser, TypeDefinitions) {
  Module M = parse("type Tree[A] { Leaf, Node(Tree[A], A, Tree[A]) }\n"
                   "type Pair { P(Tensor[(), int64], Tensor[?, float32]) }\n"
                   "def @f(%t: Tree[Pair]) { %t }\n");
  const TypeData &Tree = M.typeData("Tree");
  ASSERT_EQ(Tree.typeParams.size(), 1u);
  ASSERT_EQ(Tree.constructors.size(), 2u);
  EXPECT_EQ(Tree.constructors[0]->name, "Leaf");
  EXPECT_EQ(Tree.constructors[0]->tag, 0);
  EXPECT_EQ(Tree.constructors[1]->tag, 1);
  EXPECT_EQ(Tree.constructors[1]->adt, "Tree");
  // Field types refer to the type parameter node itself.
  EXPECT_EQ(Tree.constructors[1]->inputs[1], Tree.typeParams[0]);
  EXPECT_EQ(M.findConstructor("P")->adt, "Pair");
  auto *PT =
      M.typeData("Pair").constructors[0]->inputs[1]->as<TensorTypeNode>();
  EXPECT_FALSE(PT->hasKnownRank());
  auto *Arg = fn(M, "f").params[0]->typeAnnotation->as<TypeCallNode>();
  ASSERT_TRUE(Arg);
  EXPECT_EQ(Arg->adt, "Tree");
  EXPECT_EQ(Arg->args[0]->as<TypeCallNode>()->adt, "Pair");
}

TEST(Parser, ForwardReferencesAndMutualRecursion) {
  // Constructors, ADTs and globals used before their definitions.
  Module M = parse(R"(
def @even(%n: Tensor[(), int64]) -> Bool {
  if (equal(%n, 0)) { T } else { @odd(subtract(%n, 1)) }
}
def @odd(%n: Tensor[(), int64]) -> Bool {
  if (equal(%n, 0)) { F } else { @even(subtract(%n, 1)) }
}
type Bool { T, F }
)");
  auto *If = fn(M, "even").body->as<IfNode>();
  auto *Call = If->elseBranch->as<CallNode>();
  ASSERT_TRUE(Call);
  EXPECT_EQ(Call->callee->as<GlobalVarNode>()->name, "odd");
  EXPECT_EQ(If->thenBranch->as<CallNode>()->callee->as<ConstructorNode>()->adt,
            "Bool");
  EXPECT_EQ(M.functionNames(), (std::vector<std::string>{"even", "odd"}));
}

TEST(Parser, ShadowingResolvesToInnermost) {
  Module M = parse(R"(
def @f(%x) {
  let %x = add(%x, %x);
  let %g = fn (%x) { negative(%x) };
  (%x, %g)
}
)");
  const FunctionNode &F = fn(M, "f");
  auto *L1 = F.body->as<LetNode>();
  // The value of the first let refers to the parameter.
  EXPECT_EQ(L1->value->as<CallNode>()->args[0], F.params[0]);
  auto *L2 = L1->body->as<LetNode>();
  auto *G = L2->value->as<FunctionNode>();
  EXPECT_EQ(G->body->as<CallNode>()->args[0], G->params[0]);
  auto *T = L2->body->as<TupleNode>();
  EXPECT_EQ(T->fields[0], L1->var);
  EXPECT_NE(L1->var, F.params[0]);
}

TEST(Parser, NonFunctionLetDoesNotSeeItself) {
  EXPECT_EQ(parseError("def @f() {\n  let %a = add(%a, 1);\n  %a\n}\n"),
            "test.rvir:2:16: undefined variable '%a'");
}

TEST(Parser, ScalarLiterals) {
  Module M = parse(R"(
def @f() {
  (3, 3i8, 3i16, 3i32, 3i64, 200u8, -7, 1.5, 1e-3, 1.5f16, 1.5f32, 0.1f64,
   true, false, nan, inf, -inf, nanf64, -inff16, 2f64, -9223372036854775808)
}
)");
  auto *T = fn(M, "f").body->as<TupleNode>();
  ASSERT_TRUE(T);
  auto C = [&](size_t I) -> const Tensor & {
    return T->fields.at(I)->as<ConstantNode>()->value;
  };
  std::vector<DType> Want = {DType::Int64,   DType::Int8,    DType::Int16,
                             DType::Int32,   DType::Int64,   DType::UInt8,
                             DType::Int64,   DType::Float32, DType::Float32,
                             DType::Float16, DType::Float32, DType::Float64,
                             DType::Bool,    DType::Bool,    DType::Float32,
                             DType::Float32, DType::Float32, DType::Float64,
                             DType::Float16, DType::Float64, DType::Int64};
  ASSERT_EQ(T->fields.size(), Want.size());
  for (size_t I = 0; I < Want.size(); ++I) {
    EXPECT_EQ(C(I).dtype(), Want[I]) << "literal " << I;
    EXPECT_EQ(C(I).rank(), 0) << "literal " << I;
  }
  EXPECT_EQ(*C(1).data<int8_t>(), 3);
  EXPECT_EQ(*C(5).data<uint8_t>(), 200);
  EXPECT_EQ(*C(6).data<int64_t>(), -7);
  EXPECT_EQ(*C(7).data<float>(), 1.5f);
  EXPECT_EQ(*C(8).data<float>(), 1e-3f);
  EXPECT_EQ((float)*C(9).data<Half>(), 1.5f);
  EXPECT_EQ(*C(11).data<double>(), 0.1);
  EXPECT_TRUE(*C(12).data<bool>());
  EXPECT_FALSE(*C(13).data<bool>());
  EXPECT_TRUE(std::isnan(*C(14).data<float>()));
  EXPECT_EQ(*C(15).data<float>(), INFINITY);
  EXPECT_EQ(*C(16).data<float>(), -INFINITY);
  EXPECT_TRUE(std::isnan(*C(17).data<double>()));
  EXPECT_EQ((float)*C(18).data<Half>(), -INFINITY);
  EXPECT_EQ(*C(19).data<double>(), 2.0);
  EXPECT_EQ(*C(20).data<int64_t>(), INT64_MIN);
}

TEST(Parser, TensorConstants) {
  Module M = parse(R"(
def @f() {
  (const[(2, 2), float32]([1, 2.5, -3, nan]), const[(3,), int32]([1, -2, 3]),
   const[(2,), bool]([true, false]), const[(0,), float64]([]),
   const[(), uint8]([255]))
}
)");
  auto *T = fn(M, "f").body->as<TupleNode>();
  const Tensor &A = T->fields[0]->as<ConstantNode>()->value;
  EXPECT_EQ(A.shape(), (Shape{2, 2}));
  EXPECT_EQ(A.data<float>()[1], 2.5f);
  EXPECT_EQ(A.data<float>()[2], -3.0f);
  EXPECT_TRUE(std::isnan(A.data<float>()[3]));
  const Tensor &B = T->fields[1]->as<ConstantNode>()->value;
  EXPECT_EQ(B.dtype(), DType::Int32);
  EXPECT_EQ(B.data<int32_t>()[1], -2);
  const Tensor &C = T->fields[2]->as<ConstantNode>()->value;
  EXPECT_TRUE(C.data<bool>()[0]);
  EXPECT_FALSE(C.data<bool>()[1]);
  EXPECT_EQ(T->fields[3]->as<ConstantNode>()->value.numel(), 0);
  const Tensor &E = T->fields[4]->as<ConstantNode>()->value;
  EXPECT_EQ(E.rank(), 0);
  EXPECT_EQ(*E.data<uint8_t>(), 255);
}

TEST(Parser, AttributeKinds) {
  Module M = parse(R"(
def @f(%x) {
  reshape(%x, a=3, b=-1.5, c="s\"q\n", d=[1, 2], e=[1, 2.5], f=["a", "b"],
          g=[], h=floats[], i=strings[], j=const[(2,), int64]([4, 5]), k=1e10,
          l=nan, m=ints[3])
}
)");
  const Attrs &A = fn(M, "f").body->as<CallNode>()->attrs;
  EXPECT_EQ(std::get<int64_t>(A.items().at("a")), 3);
  EXPECT_EQ(std::get<double>(A.items().at("b")), -1.5);
  EXPECT_EQ(std::get<std::string>(A.items().at("c")), "s\"q\n");
  EXPECT_EQ(std::get<std::vector<int64_t>>(A.items().at("d")),
            (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(std::get<std::vector<double>>(A.items().at("e")),
            (std::vector<double>{1, 2.5}));
  EXPECT_EQ(std::get<std::vector<std::string>>(A.items().at("f")),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(std::get<std::vector<int64_t>>(A.items().at("g")).empty());
  EXPECT_TRUE(std::get<std::vector<double>>(A.items().at("h")).empty());
  EXPECT_TRUE(std::get<std::vector<std::string>>(A.items().at("i")).empty());
  const Tensor &J = std::get<Tensor>(A.items().at("j"));
  EXPECT_EQ(J.data<int64_t>()[1], 5);
  EXPECT_EQ(std::get<double>(A.items().at("k")), 1e10);
  EXPECT_TRUE(std::isnan(std::get<double>(A.items().at("l"))));
  EXPECT_EQ(std::get<std::vector<int64_t>>(A.items().at("m")),
            (std::vector<int64_t>{3}));
}

TEST(Parser, TypesOfAllForms) {
  Module M = parse(std::string(ListDef) + R"(
def @f[A, B](%a: Tensor[(1, n, ?), float32], %b: Tensor[(3,), int64],
             %c: Tensor[(), bool], %d: Tensor[?, float16], %e: (A, List[B]),
             %g: (), %h: (A,), %i: fn[C](C, A) -> C, %j: fn() -> ()) -> B {
  %b
}
)");
  const FunctionNode &F = fn(M, "f");
  ASSERT_EQ(F.typeParams.size(), 2u);
  auto Ann = [&](size_t I) { return F.params[I]->typeAnnotation; };
  EXPECT_EQ(typeToString(Ann(0)), "Tensor[(1, n, ?), float32]");
  EXPECT_EQ(typeToString(Ann(1)), "Tensor[(3,), int64]");
  EXPECT_EQ(typeToString(Ann(2)), "Tensor[(), bool]");
  EXPECT_EQ(typeToString(Ann(3)), "Tensor[?, float16]");
  EXPECT_EQ(typeToString(Ann(4)), "(A, List[B])");
  EXPECT_EQ(Ann(4)->as<TupleTypeNode>()->fields[0], F.typeParams[0]);
  EXPECT_EQ(typeToString(Ann(5)), "()");
  EXPECT_EQ(typeToString(Ann(6)), "(A,)");
  auto *FT = Ann(7)->as<FuncTypeNode>();
  ASSERT_TRUE(FT);
  ASSERT_EQ(FT->typeParams.size(), 1u);
  EXPECT_EQ(FT->params[0], FT->typeParams[0]);
  EXPECT_EQ(FT->params[1], F.typeParams[0]);
  EXPECT_EQ(typeToString(Ann(8)), "fn() -> ()");
  EXPECT_EQ(F.retType, F.typeParams[1]);
}

TEST(Parser, CallsOfEveryCallee) {
  Module M = parse(std::string(ListDef) + R"(
def @g(%x) { %x }
def @f(%x) {
  let %h = fn (%y) { %y };
  (@g(%x), %h(%x), (fn (%z) { %z })(%x), Cons(%x, Nil), @g, Cons, relu,
   (%x, %x).1, if (true) { 1 } else if (false) { 2 } else { 3 })
}
)");
  auto *T = fn(M, "f").body->as<LetNode>()->body->as<TupleNode>();
  ASSERT_TRUE(T);
  EXPECT_EQ(T->fields[0]->as<CallNode>()->callee->kind, ExprKind::GlobalVar);
  EXPECT_EQ(T->fields[1]->as<CallNode>()->callee->kind, ExprKind::Var);
  EXPECT_EQ(T->fields[2]->as<CallNode>()->callee->kind, ExprKind::Function);
  EXPECT_EQ(T->fields[3]->as<CallNode>()->callee->kind, ExprKind::Constructor);
  EXPECT_EQ(T->fields[4]->kind, ExprKind::GlobalVar);
  EXPECT_EQ(T->fields[5]->kind, ExprKind::Constructor); // non-nullary bare
  EXPECT_EQ(T->fields[6]->kind, ExprKind::Op);
  EXPECT_EQ(T->fields[7]->as<TupleGetItemNode>()->index, 1);
  auto *If = T->fields[8]->as<IfNode>();
  ASSERT_TRUE(If);
  EXPECT_EQ(If->elseBranch->kind, ExprKind::If);
}

// Operators with dotted names (the VM compiler's kernel operators, which
// the printer writes so) parse, as calls and as values; a tuple index
// after a dot stays one.
TEST(Parser, DottedOperatorNames) {
  Module M = parse(R"(
def @f(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) {
  (dnnl.dense_fused(%x, %w), dnnl.dense_fused, (%x, %x).1)
}
)");
  auto *T = fn(M, "f").body->as<TupleNode>();
  ASSERT_TRUE(T);
  auto *Op = T->fields[0]->as<CallNode>()->callee->as<OpNode>();
  ASSERT_TRUE(Op);
  EXPECT_EQ(Op->name(), "dnnl.dense_fused");
  EXPECT_EQ(T->fields[1]->kind, ExprKind::Op);
  EXPECT_EQ(T->fields[2]->as<TupleGetItemNode>()->index, 1);
}

TEST(Parser, FunctionAttributesAndNestedPatterns) {
  Module M = parse(std::string(ListDef) + R"(
def @f(%l: List[(Tensor[(), int64], Tensor[(), int64])], Primitive=1) {
  match (%l) {
    Cons((%a, _), Cons((_, %b: Tensor[(), int64]), _)) => add(%a, %b),
    Cons(%p, Nil) => %p.0,
    _ => 0,
  }
}
)");
  const FunctionNode &F = fn(M, "f");
  EXPECT_EQ(F.attrs.getInt("Primitive"), 1);
  auto *Mt = F.body->as<MatchNode>();
  ASSERT_EQ(Mt->clauses.size(), 3u);
  const Pattern &P = Mt->clauses[0].lhs;
  EXPECT_EQ(P->children[0]->kind, PatternKind::Tuple);
  EXPECT_EQ(P->children[1]->children[0]->children[1]->var->typeAnnotation->kind,
            TypeKind::Tensor);
  auto *Add = Mt->clauses[0].rhs->as<CallNode>();
  EXPECT_EQ(Add->args[0], P->children[0]->children[0]->var);
  EXPECT_EQ(Add->args[1], P->children[1]->children[0]->children[1]->var);
  EXPECT_EQ(Mt->clauses[2].lhs->kind, PatternKind::Wildcard);
}

TEST(Parser, ParseExprWithContext) {
  Module Ctx = parse(std::string(ListDef) + "def @id(%x) { %x }\n");
  Expr E = parseExpr("let %a = 1; let %b = Cons(%a, Nil); @id(%b)", Ctx);
  auto *L = E->as<LetNode>();
  ASSERT_TRUE(L);
  EXPECT_EQ(L->body->as<LetNode>()->value->as<CallNode>()->args[0], L->var);
  try {
    parseExpr("@nope(1)", Ctx);
    FAIL() << "expected an error";
  } catch (const Error &Err) {
    EXPECT_STREQ(Err.what(), "<string>:1:1: undefined global function '@nope'");
  }
  Type T = parseType("List[Tensor[(2,), int8]]", Ctx);
  EXPECT_EQ(typeToString(T), "List[Tensor[(2,), int8]]");
}

TEST(Parser, WithPrelude) {
  Module M = parseModule(R"(
def @main(%l: List[Tensor[(), int64]]) -> Tensor[(), int64] {
  @length(@map(fn (%x) { add(%x, 1) }, %l))
}
)");
  EXPECT_TRUE(M.hasFunction("main"));
  EXPECT_TRUE(M.hasFunction("map"));
  EXPECT_TRUE(M.findTypeData("Option"));
  // The prelude is not printed by default, so main round-trips alone.
  Module Again = parseModule(printModule(M));
  EXPECT_TRUE(structuralEqual(M, Again)) << structuralDiff(M, Again);
}

TEST(Parser, NestingTooDeepIsAnError) {
  std::string Deep = "def @f() { " + std::string(100000, '(');
  std::string Msg = parseError(Deep);
  EXPECT_NE(Msg.find("nesting too deep"), std::string::npos) << Msg;
  std::string DeepType = "def @f(%x: " + std::string(100000, '(') + ") { 1 }";
  Msg = parseError(DeepType);
  EXPECT_NE(Msg.find("nesting too deep"), std::string::npos) << Msg;
  std::string DeepCalls = "def @f(%x) { ";
  for (int I = 0; I < 50000; ++I)
    DeepCalls += "relu(";
  Msg = parseError(DeepCalls);
  EXPECT_NE(Msg.find("nesting too deep"), std::string::npos) << Msg;
  std::string DeepIf = "def @f(%x) { if (%x) { 1 ";
  for (int I = 0; I < 50000; ++I)
    DeepIf += "} else if (%x) { 1 ";
  Msg = parseError(DeepIf);
  EXPECT_NE(Msg.find("nesting too deep"), std::string::npos) << Msg;
}

TEST(Parser, LongLetChain) {
  const int N = 100000;
  std::string Text = "def @f(%x) {\n";
  for (int I = 0; I < N; ++I)
    Text += "  let %x = add(%x, %x);\n";
  Text += "  %x\n}\n";
  {
    Module M = parse(Text);
    Expr Body = fn(M, "f").body;
    int Count = 0;
    Expr Cur = Body;
    Expr PrevVar = fn(M, "f").params[0];
    while (Cur->kind == ExprKind::Let) {
      auto *L = Cur->as<LetNode>();
      ASSERT_EQ(L->value->as<CallNode>()->args[0], PrevVar);
      PrevVar = L->var;
      Cur = L->body;
      ++Count;
    }
    EXPECT_EQ(Count, N);
    EXPECT_EQ(Cur, PrevVar);
    std::string Printed = printModule(M);
    Module Again = parse(Printed);
    EXPECT_TRUE(structuralEqual(M, Again));
    EXPECT_EQ(structuralHash(fn(M, "f").body),
              structuralHash(fn(Again, "f").body));
    Expr B1 = fn(M, "f").body, B2 = fn(Again, "f").body;
    M = Module();
    Again = Module();
    Cur = nullptr;
    Body = nullptr;
    releaseChain(std::move(B1));
    releaseChain(std::move(B2));
  }
}

// Each malformed input must fail with exactly this location and message.
struct BadInput {
  const char *Text;
  const char *Error;
};

class ParseErrors : public ::testing::TestWithParam<BadInput> {};

TEST_P(ParseErrors, ExactLocationAndMessage) {
  EXPECT_EQ(parseError(GetParam().Text), GetParam().Error);
}

INSTANTIATE_TEST_SUITE_P(
    Parser, ParseErrors,
    ::testing::Values(
        BadInput{"def @f(%x, %y) {\n  add(%x %y)\n}",
                 "test.rvir:2:10: expected ')' after arguments, found '%y'"},
        BadInput{"def @f(%x) {\n  ad(%x, %x)\n}",
                 "test.rvir:2:3: unknown operator 'ad'"},
        BadInput{"def @f(%x) {\n  dnnl.nope(%x)\n}",
                 "test.rvir:2:3: unknown operator 'dnnl.nope'"},
        BadInput{"def @f(%x) {\n  add(%x, %z)\n}",
                 "test.rvir:2:11: undefined variable '%z'"},
        BadInput{"type L { Cons(Tensor[(), int64], L), Nil }\n"
                 "def @f(%x) { Conz(%x, Nil) }",
                 "test.rvir:2:14: unknown constructor 'Conz'"},
        BadInput{"def @f() { 1 }\ndef @g() { 2 }\ndef @f() { 3 }",
                 "test.rvir:3:5: duplicate definition of '@f'"},
        BadInput{"def @f() { @g() }",
                 "test.rvir:1:12: undefined global function '@g'"},
        BadInput{"def @f(%x: Tensor[(2, 3), floot32]) { %x }",
                 "test.rvir:1:27: unknown dtype 'floot32'"},
        BadInput{"def @f(%x: Lst[Tensor[(), int64]]) { %x }",
                 "test.rvir:1:12: unknown type 'Lst'"},
        BadInput{
            "def @f() {\n  let %a = 1\n  %a\n}",
            "test.rvir:3:3: expected ';' after the let binding, found '%a'"},
        BadInput{"def @f() { 1",
                 "test.rvir:1:13: expected '}' at the end of the block, found "
                 "end of input"},
        BadInput{
            "def @f() { \"s\" }",
            "test.rvir:1:12: expected an expression, found string literal"},
        BadInput{"def @f() { 3q8 }",
                 "test.rvir:1:12: invalid numeric suffix 'q8'"},
        BadInput{"def @f() { 300i8 }",
                 "test.rvir:1:12: literal '300i8' out of range for int8"},
        BadInput{
            "def @f() { const[(2, 2), float32]([1, 2, 3]) }",
            "test.rvir:1:12: constant of shape (2, 2) needs 4 values, got 3"},
        BadInput{"def @f() {\n  /* never closed\n}",
                 "test.rvir:2:3: unterminated block comment"},
        BadInput{"def @f(%x) { sum(%x, axis=1, axis=2) }",
                 "test.rvir:1:30: duplicate attribute 'axis'"},
        BadInput{"def @f(%x) { sum(axis=1, %x) }",
                 "test.rvir:1:26: positional argument after attributes"},
        BadInput{"type L { A, B }\ndef @f(%x) { match (%x) { A => 1 B => 2 } }",
                 "test.rvir:2:34: expected ',' or '}' after the match clause, "
                 "found 'B'"},
        BadInput{"def @f() { 1 }\nfoo",
                 "test.rvir:2:1: expected 'def' or 'type' at top level, found "
                 "'foo'"},
        BadInput{"def @f(%x) { %x.a }",
                 "test.rvir:1:17: expected a tuple index after '.', found 'a'"},
        BadInput{"type L[A] { C(A) }\ndef @f(%x: L[Tensor[(), int64], "
                 "Tensor[(), int64]]) { %x }",
                 "test.rvir:2:12: type 'L' expects 1 type argument, got 2"},
        BadInput{"def @f() { 1 } $",
                 "test.rvir:1:16: unexpected character '$'"},
        BadInput{"def @f() { \"abc }",
                 "test.rvir:1:12: unterminated string literal"},
        BadInput{"type A { X }\ntype A { Y }",
                 "test.rvir:2:6: duplicate definition of type 'A'"},
        BadInput{"def @f(%x) { if (%x) { 1 } }",
                 "test.rvir:1:28: expected 'else', found '}'"}));

TEST(Parser, NestedLetsNearTheLimitStillRoundTrip) {
  // The printer wraps a let chain in an argument in braces; that must not
  // cost nesting levels, or text near the limit would not read back.
  const int Levels = kMaxParseNesting / 2 - 5;
  std::string Text = "def @f(%x) { ";
  for (int I = 0; I < Levels; ++I)
    Text += "add(let %a = %x; %a, ";
  Text += "%x";
  for (int I = 0; I < Levels; ++I)
    Text += ")";
  Text += " }";
  Module M = parse(Text);
  Module Again = parse(printModule(M));
  EXPECT_TRUE(structuralEqual(M, Again));
}
