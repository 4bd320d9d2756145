//===- interpreter_test.cc - The reference interpreter --------------------===//
#include "ir/Interpreter.h"
#include "ir/Module.h"
#include "ir/Parser.h"

#include "kernels/Error.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <exception>
#include <functional>

using namespace rivet;
using namespace rivet::ir;

namespace {

Expr i64(int64_t V) { return constant(Tensor::scalar<int64_t>(V)); }
Expr f32s(std::vector<float> V) {
  Shape S{(int64_t)V.size()};
  return constant(Tensor::fromVector<float>(V, S));
}
Type i64Type() { return scalarType(DType::Int64); }

int64_t asInt(const Value &V) { return V.tensor().elementAsInt(0); }
std::vector<double> asDoubles(const Value &V) {
  return V.tensor().toDoubleVector();
}

/// Runs Fn on a thread with a small native stack; rethrows its exception.
void onSmallStack(size_t Bytes, const std::function<void()> &Fn) {
  struct Task {
    const std::function<void()> *Fn;
    std::exception_ptr Err;
  } T{&Fn, nullptr};
  pthread_attr_t Attr;
  ASSERT_EQ(pthread_attr_init(&Attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&Attr, Bytes), 0);
  pthread_t Th;
  ASSERT_EQ(pthread_create(
                &Th, &Attr,
                [](void *P) -> void * {
                  auto *T = static_cast<Task *>(P);
                  try {
                    (*T->Fn)();
                  } catch (...) {
                    T->Err = std::current_exception();
                  }
                  return nullptr;
                },
                &T),
            0);
  pthread_attr_destroy(&Attr);
  pthread_join(Th, nullptr);
  if (T.Err)
    std::rethrow_exception(T.Err);
}

/// type List[A] { Cons(A, List[A]), Nil } built with the C++ API.
struct ListADT {
  Constructor cons, nil;
  explicit ListADT(Module &M) {
    Type A = typeVar("A");
    cons = std::make_shared<ConstructorNode>(
        "Cons", "MyList", 0, std::vector<Type>{A, typeCall("MyList", {A})});
    nil = std::make_shared<ConstructorNode>("Nil", "MyList", 1,
                                            std::vector<Type>{});
    M.addTypeData(TypeData{"MyList", {A}, {cons, nil}});
  }
};

} // namespace

TEST(Interpreter, ConstantTupleAndOp) {
  Module M;
  Interpreter I(M);
  Value V =
      I.eval(tuple({i64(3), callOp("add", {f32s({1, 2}), f32s({10, 20})})}));
  ASSERT_TRUE(V.isTuple());
  ASSERT_EQ(V.fields().size(), 2u);
  EXPECT_EQ(asInt(V.fields()[0]), 3);
  EXPECT_EQ(asDoubles(V.fields()[1]), (std::vector<double>{11, 22}));
  Value G = I.eval(tupleGetItem(tuple({i64(1), i64(2)}), 1));
  EXPECT_EQ(asInt(G), 2);
  EXPECT_THROW(I.eval(tupleGetItem(tuple({i64(1)}), 3)), Error);
}

TEST(Interpreter, LetAndShadowing) {
  Module M;
  Interpreter I(M);
  // let %x = 1; let %x' = add(%x, 10) (same name); (%x', %x_outer...)
  Var X1 = var("x"), X2 = var("x");
  Expr E =
      let(X1, i64(1), let(X2, callOp("add", {X1, i64(10)}), tuple({X2, X1})));
  Value V = I.eval(E);
  EXPECT_EQ(asInt(V.fields()[0]), 11);
  EXPECT_EQ(asInt(V.fields()[1]), 1);
  // The same Var node rebound: the inner binding wins in the body.
  Var Y = var("y");
  EXPECT_EQ(asInt(I.eval(let(Y, i64(1), let(Y, i64(2), Y)))), 2);
}

TEST(Interpreter, IfConditions) {
  Module M;
  Interpreter I(M);
  auto Cond = [](bool B) { return constant(Tensor::scalar<bool>(B)); };
  EXPECT_EQ(asInt(I.eval(ifThenElse(Cond(true), i64(1), i64(2)))), 1);
  EXPECT_EQ(asInt(I.eval(ifThenElse(Cond(false), i64(1), i64(2)))), 2);
  EXPECT_EQ(asInt(I.eval(ifThenElse(i64(5), i64(1), i64(2)))), 1);
  try {
    I.eval(ifThenElse(f32s({1, 0}), i64(1), i64(2)));
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("scalar"), std::string::npos)
        << E.what();
  }
}

TEST(Interpreter, ClosureCapturesTensor) {
  Module M;
  Interpreter I(M);
  Var W = var("w"), F = var("f"), X = var("x");
  Expr E = let(W, f32s({1, 2, 3}),
               let(F, function({X}, callOp("multiply", {X, W})),
                   call(F, {f32s({2, 2, 2})})));
  EXPECT_EQ(asDoubles(I.eval(E)), (std::vector<double>{2, 4, 6}));
  // A closure returned out of its defining scope keeps its capture.
  Var W2 = var("w"), Y = var("y");
  Expr MakeAdder = let(W2, i64(100), function({Y}, callOp("add", {Y, W2})));
  Value Adder = I.eval(MakeAdder);
  ASSERT_TRUE(Adder.isClosure());
  EXPECT_EQ(asInt(I.apply(Adder, {Value(Tensor::scalar<int64_t>(5))})), 105);
}

TEST(Interpreter, GlobalNonTailRecursionFactorial) {
  Module M;
  Var N = var("n", i64Type());
  M.addFunction(
      "fact",
      function({N},
               ifThenElse(callOp("less_equal", {N, i64(1)}), i64(1),
                          callOp("multiply",
                                 {N, call(globalVar("fact"),
                                          {callOp("subtract", {N, i64(1)})})})),
               i64Type()));
  Interpreter I(M);
  EXPECT_EQ(asInt(I.call("fact", {Value(Tensor::scalar<int64_t>(20))})),
            2432902008176640000LL);
  EXPECT_THROW(I.call("fact", {}), Error);
  EXPECT_THROW(I.call("nope", {}), Error);
}

TEST(Interpreter, MutualTailRecursionOnSmallStack) {
  Module M;
  Var N1 = var("n", i64Type()), N2 = var("n", i64Type());
  auto T = constant(Tensor::scalar<bool>(true));
  auto F = constant(Tensor::scalar<bool>(false));
  M.addFunction(
      "is_even",
      function({N1}, ifThenElse(callOp("equal", {N1, i64(0)}), T,
                                call(globalVar("is_odd"),
                                     {callOp("subtract", {N1, i64(1)})}))));
  M.addFunction(
      "is_odd",
      function({N2}, ifThenElse(callOp("equal", {N2, i64(0)}), F,
                                call(globalVar("is_even"),
                                     {callOp("subtract", {N2, i64(1)})}))));
  Interpreter I(M);
  onSmallStack(256 * 1024, [&] {
    EXPECT_EQ(
        asInt(I.call("is_even", {Value(Tensor::scalar<int64_t>(100001))})), 0);
    EXPECT_EQ(asInt(I.call("is_odd", {Value(Tensor::scalar<int64_t>(100001))})),
              1);
  });
}

TEST(Interpreter, MillionIterationLocalLoopOnSmallStack) {
  // let %loop = fn(%i, %acc) { if (less(%i, n)) { %loop(add(%i, 1), add(%acc,
  // 2)) } else { %acc } };
  Module M;
  Var Loop = var("loop"), Iv = var("i"), Acc = var("acc");
  Expr Body = ifThenElse(
      callOp("less", {Iv, i64(1000000)}),
      call(Loop, {callOp("add", {Iv, i64(1)}), callOp("add", {Acc, i64(2)})}),
      Acc);
  Expr E = let(Loop, function({Iv, Acc}, Body), call(Loop, {i64(0), i64(0)}));
  Interpreter I(M);
  onSmallStack(256 * 1024, [&] { EXPECT_EQ(asInt(I.eval(E)), 2000000); });
}

TEST(Interpreter, DeepNonTailRecursionIsAnErrorNotACrash) {
  Module M;
  Var N = var("n", i64Type());
  // @down(n) = if (n == 0) { 0 } else { add(@down(n - 1), 1) }
  M.addFunction(
      "down",
      function({N}, ifThenElse(
                        callOp("equal", {N, i64(0)}), i64(0),
                        callOp("add", {call(globalVar("down"),
                                            {callOp("subtract", {N, i64(1)})}),
                                       i64(1)}))));
  Interpreter I(M);
  onSmallStack(256 * 1024, [&] {
    EXPECT_EQ(asInt(I.call("down", {Value(Tensor::scalar<int64_t>(50))})), 50);
    try {
      I.call("down", {Value(Tensor::scalar<int64_t>(10000000))});
      ADD_FAILURE() << "expected an error";
    } catch (const Error &E) {
      EXPECT_NE(std::string(E.what()).find("recursion too deep"),
                std::string::npos)
          << E.what();
      EXPECT_NE(std::string(E.what()).find("@down"), std::string::npos);
    }
  });
}

TEST(Interpreter, ADTsMatchAndConstructorValues) {
  Module M;
  ListADT L(M);
  // @sum(l) = match (l) { Cons(h, t) => add(h, @sum(t)), Nil => 0 }
  Var Lv = var("l"), H = var("h"), T = var("t");
  M.addFunction(
      "sum",
      function(
          {Lv},
          match(Lv, {{PatternNode::constructor(
                          L.cons, {PatternNode::bind(H), PatternNode::bind(T)}),
                      callOp("add", {H, call(globalVar("sum"), {T})})},
                     {PatternNode::constructor(L.nil, {}), i64(0)}})));
  Interpreter I(M);
  // Cons used as a function value: let %c = Cons; %c(1, Cons(2, Nil))
  Var C = var("c");
  Expr List3 = let(
      C, L.cons,
      call(C,
           {i64(1),
            call(L.cons, {i64(2), call(L.cons, {i64(3), call(L.nil, {})})})}));
  Value Lst = I.eval(List3);
  ASSERT_TRUE(Lst.isADT());
  EXPECT_EQ(valueToString(Lst),
            "Cons(int64(1), Cons(int64(2), Cons(int64(3), Nil)))");
  EXPECT_EQ(asInt(I.call("sum", {Lst})), 6);

  // Wildcard, tuple patterns and first-match-wins.
  Var A = var("a");
  Expr TupleMatch = match(
      tuple({i64(7), i64(8)}),
      {{PatternNode::tuple({PatternNode::wildcard(), PatternNode::bind(A)}), A},
       {PatternNode::wildcard(), i64(0)}});
  EXPECT_EQ(asInt(I.eval(TupleMatch)), 8);

  // No clause matches: an error that shows the value.
  Expr NoMatch =
      match(call(L.nil, {}),
            {{PatternNode::constructor(
                  L.cons, {PatternNode::wildcard(), PatternNode::wildcard()}),
              i64(1)}});
  try {
    I.eval(NoMatch);
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("match: no clause matched value Nil"),
              std::string::npos)
        << E.what();
  }
}

TEST(Interpreter, GlobalAsFunctionValue) {
  Module M;
  Var X = var("x"), F = var("f"), Y = var("y");
  M.addFunction("twice", function({X}, callOp("add", {X, X})));
  M.addFunction("apply", function({F, Y}, call(F, {Y})));
  Interpreter I(M);
  Value V = I.eval(call(globalVar("apply"), {globalVar("twice"), i64(21)}));
  EXPECT_EQ(asInt(V), 42);
}

TEST(Interpreter, OperatorErrorsNameTheOperatorAndFunction) {
  Module M;
  Var X = var("x");
  M.addFunction("main", function({X}, callOp("add", {X, f32s({1, 2, 3})})));
  Interpreter I(M);
  try {
    I.call("main", {Value(Tensor::fromVector<float>({1, 2}, {2}))});
    FAIL() << "expected an error";
  } catch (const Error &E) {
    std::string Msg = E.what();
    EXPECT_NE(Msg.find("operator 'add'"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("@main"), std::string::npos) << Msg;
  }
  // A non-tensor argument to an operator.
  EXPECT_THROW(I.eval(callOp("relu", {tuple({})})), Error);
  // Calling something that is not a function.
  EXPECT_THROW(I.eval(call(i64(1), {})), Error);
}

TEST(Interpreter, SplitYieldsATuple) {
  Module M;
  Interpreter I(M);
  Value V = I.eval(callOp("split", {f32s({1, 2, 3, 4, 5, 6})},
                          Attrs{{"sections", int64_t(3)}}));
  ASSERT_TRUE(V.isTuple());
  ASSERT_EQ(V.fields().size(), 3u);
  EXPECT_EQ(asDoubles(V.fields()[2]), (std::vector<double>{5, 6}));
  Value One =
      I.eval(callOp("split", {f32s({1, 2})}, Attrs{{"sections", int64_t(1)}}));
  ASSERT_TRUE(One.isTuple());
  EXPECT_EQ(One.fields().size(), 1u);
}

TEST(Interpreter, LongListIsBuiltAndFreedOnSmallStack) {
  // A tail-recursive loop builds a 300,000-element list; dropping it must not
  // recurse through the destructors.
  Module M;
  ListADT L(M);
  Var Loop = var("loop"), Iv = var("i"), Acc = var("acc");
  Expr Body = ifThenElse(
      callOp("less", {Iv, i64(300000)}),
      call(Loop, {callOp("add", {Iv, i64(1)}), call(L.cons, {Iv, Acc})}), Acc);
  Expr E = let(Loop, function({Iv, Acc}, Body),
               call(Loop, {i64(0), call(L.nil, {})}));
  Interpreter I(M);
  onSmallStack(256 * 1024, [&] {
    Value V = I.eval(E);
    ASSERT_TRUE(V.isADT());
    EXPECT_EQ(asInt(V.fields()[0]), 299999);
  });
}

TEST(Interpreter, ParsedProgramWithPrelude) {
  Module M = parseModule(R"(
def @main(%x: Tensor[(3,), float32]) -> (Tensor[(3,), float32], Tensor[(), int64]) {
  let %w = 2.0f32;
  let %l = Cons(%x, Cons(add(%x, %x), Nil));
  let %m = @map(fn (%t: Tensor[(3,), float32]) { multiply(%t, %w) }, %l);
  (@foldl(fn (%a: Tensor[(3,), float32], %b: Tensor[(3,), float32]) { add(%a, %b) }, %x, %m),
   @length(%m))
}
)");
  Interpreter I(M);
  Value V = I.call("main", {Value(Tensor::fromVector<float>({1, 2, 3}, {3}))});
  ASSERT_TRUE(V.isTuple());
  // x + 2x + 4x = 7x
  EXPECT_EQ(asDoubles(V.fields()[0]), (std::vector<double>{7, 14, 21}));
  EXPECT_EQ(asInt(V.fields()[1]), 2);
}

TEST(Interpreter, PreludeNthOutOfRangeIsAMatchFailure) {
  Module M = parseModule(R"(
def @main(%i: Tensor[(), int64]) -> Tensor[(), int64] {
  @nth(Cons(10i64, Cons(20i64, Nil)), %i)
}
)");
  Interpreter I(M);
  EXPECT_EQ(asInt(I.call("main", {Value(Tensor::scalar<int64_t>(1))})), 20);
  try {
    I.call("main", {Value(Tensor::scalar<int64_t>(2))});
    FAIL() << "expected an error";
  } catch (const Error &E) {
    std::string Msg = E.what();
    EXPECT_NE(Msg.find("no clause matched value Nil"), std::string::npos)
        << Msg;
    EXPECT_NE(Msg.find("@nth"), std::string::npos) << Msg;
  }
}
