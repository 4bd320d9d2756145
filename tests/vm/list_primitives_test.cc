//===- list_primitives_test.cc - Lists stored as arrays in the VM ---------===//
//
// The List primitives (list_length, list_at, list_insert, list_erase) on the
// VM's packed Lists (vm/PackedList.h) against the reference interpreter's
// Cons cells: programs that build Lists in loops, insert and erase at
// positions (negative ones too), keep older versions of a List alive, mix
// packed Lists with Cons cells and with the prelude's functions (match sees
// an array as Cons cells), and fail out of range, agree on every executor.
// The cost is checked by counting, not timing: a loop that appends to the
// List it carries runs a constant number of instructions per step and
// copies O(1) elements per step amortized.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/ListPrimitiveSpec.h"
#include "support/Differential.h"
#include "vm/ListPrimitives.h"
#include "vm/PackedList.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace rivet;
using namespace rivet::vm;
using namespace rivet::testing::diff;

namespace {

ir::Module parse(const std::string &Text) {
  ir::Module M = ir::parseModule(Text, "lists.rvir");
  ir::inferTypes(M);
  return M;
}

/// Runs @main of Text on In on the interpreter and on every executor and
/// expects the same outcome; returns the interpreter's.
Outcome expectAgreement(const std::string &Text, const std::vector<Tensor> &In,
                        const std::string &What) {
  return rivet::testing::diff::expectAgreement(parse(Text), In, What);
}

Tensor vec(std::vector<float> V) {
  int64_t N = (int64_t)V.size();
  return Tensor::fromVector<float>(std::move(V), {N});
}
Tensor i64(int64_t V) { return Tensor::scalar<int64_t>(V); }

/// Appends x * i for i < n to the List it carries, then reads it back.
const char *const AppendLoop = R"(
def @main(%x: Tensor[(3,), float32], %n: Tensor[(), int64]) {
  let %build = fn (%i: Tensor[(), int64], %acc: List[Tensor[(3,), float32]])
      -> List[Tensor[(3,), float32]] {
    if (less(%i, %n)) {
      %build(add(%i, 1i64),
             list_insert(%acc, multiply(%x, cast(%i, dtype="float32"))))
    } else {
      %acc
    }
  };
  let %l = %build(0i64, Nil);
  (list_length(%l), @length(%l), list_at(%l, -1i64), list_at(%l, 0i64),
   @nth(%l, 1i64), @rev(%l), concat_list(%l, axis=0, new_axis=1),
   concat_list(%l, axis=0), %l)
}
)";

/// Each step inserts in the middle, before the last element and at the
/// front, and erases at a position chosen by the step (from the front, from
/// the back, negative), through an If that passes the List on.
const char *const InsertEraseLoop = R"(
def @main(%x: Tensor[(2,), float32], %n: Tensor[(), int64]) {
  let %build = fn (%i: Tensor[(), int64], %acc: List[Tensor[(2,), float32]])
      -> List[Tensor[(2,), float32]] {
    if (less(%i, %n)) {
      let %v = add(%x, cast(%i, dtype="float32"));
      let %a = list_insert(%acc, %v, divide(list_length(%acc), 2i64));
      let %b = list_insert(%a, negative(%v), -1i64);
      let %c = if (equal(mod(%i, 3i64), 2i64)) {
        list_erase(%b, 0i64)
      } else {
        if (equal(mod(%i, 3i64), 1i64)) { list_erase(%b, -2i64) } else { list_erase(%b) }
      };
      %build(add(%i, 1i64), list_insert(%c, multiply(%v, %v), 0i64))
    } else {
      %acc
    }
  };
  let %l = %build(0i64, Nil);
  (list_length(%l), concat_list(%l, axis=0), list_erase(%l, 1i64), %l)
}
)";

/// Older versions of a List stay as they were: two appends to the same List
/// (the second must copy), an append to a List that dropped its last
/// element, and the original read after all of them.
const char *const Versions = R"(
def @main(%x: Tensor[(2,), float32], %y: Tensor[(2,), float32]) {
  let %l = list_insert(list_insert(Nil, %x), %y);
  let %a = list_insert(%l, add(%x, %y));
  let %b = list_insert(%l, subtract(%x, %y));
  let %c = list_insert(list_erase(%l), multiply(%x, %y));
  let %d = list_insert(list_erase(%l, 0i64), %x);
  (list_length(%a), list_length(%b), list_length(%c), list_length(%d),
   list_length(%l), %a, %b, %c, %d, %l)
}
)";

/// Packed Lists meet Cons cells: a Cons whose tail is packed, primitives on
/// Cons cells, split_to_list's result read by primitives and by match, the
/// prelude's @map and @foldl over a packed List.
const char *const Mixed = R"(
def @main(%m: Tensor[(4, 2), float32], %x: Tensor[(2,), float32]) {
  let %s = split_to_list(%m, axis=0, keepdims=0);
  let %c = Cons(%x, %s);
  let %cons = Cons(%x, Cons(negative(%x), Nil));
  let %sum = @foldl(fn (%acc: Tensor[(2,), float32], %e: Tensor[(2,), float32])
                        -> Tensor[(2,), float32] { add(%acc, %e) }, %x, %s);
  (list_length(%s), list_at(%s, -1i64), @nth(%s, 2i64), @rev(%s),
   list_length(%c), list_at(%c, 1i64), @length(%c),
   concat_list(%c, axis=0, new_axis=1), list_insert(%c, %x, 2i64),
   list_at(%cons, -2i64), list_insert(%cons, %x), list_erase(%cons),
   @map(fn (%e: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
     multiply(%e, %e) }, %s),
   %sum)
}
)";

/// A primitive applied to %l (a List of n copies of x) with position %p.
std::string primitiveOn(const std::string &Call) {
  return R"(
def @main(%x: Tensor[(2,), float32], %n: Tensor[(), int64], %p: Tensor[?, int64]) {
  let %build = fn (%i: Tensor[(), int64], %acc: List[Tensor[(2,), float32]])
      -> List[Tensor[(2,), float32]] {
    if (less(%i, %n)) { %build(add(%i, 1i64), list_insert(%acc, %x)) } else { %acc }
  };
  let %l = %build(0i64, Nil);
  )" + Call +
         "\n}\n";
}

} // namespace

TEST(ListPrimitives, TheVMRunsEveryPrimitive) {
  for (const ListPrimitiveSpec &S : kListPrimitives)
    EXPECT_TRUE(findListPrimitive(S.name)) << S.name;
  EXPECT_FALSE(findListPrimitive("concat_list"));
}

TEST(ListPrimitives, AppendLoopAgrees) {
  for (int64_t N : {2, 3, 17, 100}) {
    Outcome O = expectAgreement(AppendLoop, {vec({1, -2, 0.5f}), i64(N)},
                                "append loop, n = " + std::to_string(N));
    ASSERT_FALSE(O.Error) << *O.Error;
    EXPECT_EQ(O.Out[0].elementAsInt(0), N);
  }
  // Too short for @nth(l, 1), or empty for concat_list: both executors fail.
  for (int64_t N : {0, 1}) {
    Outcome O = expectAgreement(AppendLoop, {vec({1, 2, 3}), i64(N)},
                                "append loop, n = " + std::to_string(N));
    EXPECT_TRUE(O.Error);
  }
}

TEST(ListPrimitives, InsertAndEraseAtPositionsAgree) {
  for (int64_t N : {0, 1, 2, 3, 4, 10, 40}) {
    Outcome O = expectAgreement(InsertEraseLoop, {vec({1, -1}), i64(N)},
                                "insert/erase loop, n = " + std::to_string(N));
    // Only an empty List cannot be concatenated.
    EXPECT_EQ(O.Error.has_value(), N == 0) << O.Error.value_or("");
  }
}

TEST(ListPrimitives, OlderVersionsStayAsTheyWere) {
  Outcome O =
      expectAgreement(Versions, {vec({1, 2}), vec({10, 20})}, "versions");
  ASSERT_FALSE(O.Error) << *O.Error;
  std::vector<int64_t> Lengths;
  for (size_t I = 0; I < 5; ++I)
    Lengths.push_back(O.Out[I].elementAsInt(0));
  EXPECT_EQ(Lengths, (std::vector<int64_t>{3, 3, 2, 2, 2}));
  // %a = [x, y, x + y], %b = [x, y, x - y]: the second append copied.
  EXPECT_EQ(O.Out[7].toDoubleVector(), (std::vector<double>{11, 22}));
  EXPECT_EQ(O.Out[10].toDoubleVector(), (std::vector<double>{-9, -18}));
  // %l is still [x, y].
  EXPECT_EQ(O.Out[O.Out.size() - 1].toDoubleVector(),
            (std::vector<double>{10, 20}));
}

TEST(ListPrimitives, PackedListsAndConsCellsMix) {
  Tensor M = Tensor::fromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  Outcome O = expectAgreement(Mixed, {M, vec({-1, 1})}, "mixed");
  ASSERT_FALSE(O.Error) << *O.Error;
  EXPECT_EQ(O.Out[0].elementAsInt(0), 4);
}

TEST(ListPrimitives, PositionsAndErrorsAgree) {
  struct Case {
    const char *Call;
    std::vector<int64_t> Ns, Ps;
  };
  for (const Case &C : std::vector<Case>{
           {"list_at(%l, %p)", {0, 1, 3}, {-4, -3, -1, 0, 2, 3}},
           {"(list_length(%l), list_insert(%l, negative(%x), %p))",
            {0, 1, 3},
            {-4, -3, -1, 0, 3, 4}},
           {"(list_length(%l), list_erase(%l, %p))",
            {0, 1, 3},
            {-4, -3, -1, 0, 2, 3}},
           {"list_erase(%l)", {0, 1, 2}, {0}},
           {"concat_list(%l, axis=0)", {0, 1, 2}, {0}}})
    for (int64_t N : C.Ns)
      for (int64_t P : C.Ps)
        expectAgreement(primitiveOn(C.Call), {vec({1, 2}), i64(N), i64(P)},
                        std::string(C.Call) + ", n = " + std::to_string(N) +
                            ", p = " + std::to_string(P));
  // A position must be one integer.
  Outcome O = expectAgreement(
      primitiveOn("list_at(%l, %p)"),
      {vec({1, 2}), i64(3), Tensor::fromVector<int64_t>({0, 1}, {2})},
      "two positions");
  ASSERT_TRUE(O.Error);
  EXPECT_NE(O.Error->find("the position must be one integer"),
            std::string::npos)
      << *O.Error;
  O = expectAgreement(primitiveOn("list_at(%l, %p)"),
                      {vec({1, 2}), i64(3), i64(3)}, "out of range");
  ASSERT_TRUE(O.Error);
  EXPECT_NE(O.Error->find("position 3 is out of range for a List of 3 "
                          "elements (allowed: -3 to 2)"),
            std::string::npos)
      << *O.Error;
}

/// Instructions per run and elements copied by packed Lists per run, for
/// @main of M on In, compiled at Level.
struct Cost {
  uint64_t Instructions, Copies;
};
Cost costOf(const ir::Module &M, int Level, const std::vector<Tensor> &In) {
  CompileOptions O;
  O.optLevel = Level;
  VirtualMachine VM(compile(M, O));
  std::vector<ObjectRef> Args;
  for (const Tensor &T : In)
    Args.push_back(makeTensor(T));
  VM.invoke("main", Args); // warm: per-VM caches
  uint64_t I0 = VM.instructionCount(), C0 = packedListElementsCopied();
  VM.invoke("main", Args);
  return {VM.instructionCount() - I0, packedListElementsCopied() - C0};
}

/// Expects F(n) to grow linearly: F(1000) - F(100) within 20% of
/// 10 * (F(100) - F(10)) (quadratic growth would give 100 times).
template <typename Fn> void expectLinear(Fn F, const std::string &What) {
  double A = (double)F(10), B = (double)F(100), C = (double)F(1000);
  EXPECT_GT(B, A) << What;
  double Ratio = (C - B) / (10 * (B - A));
  EXPECT_GT(Ratio, 0.8) << What << ": " << A << ", " << B << ", " << C;
  EXPECT_LT(Ratio, 1.25) << What << ": " << A << ", " << B << ", " << C;
}

TEST(ListPrimitives, AppendLoopCostsConstantPerStep) {
  // The loop appends, reads the last element and the length each step.
  ir::Module M = parse(R"(
def @main(%x: Tensor[(3,), float32], %n: Tensor[(), int64]) {
  let %build = fn (%i: Tensor[(), int64], %acc: List[Tensor[(3,), float32]])
      -> List[Tensor[(3,), float32]] {
    if (less(%i, %n)) {
      let %l = list_insert(%acc, add(%x, cast(list_length(%acc), dtype="float32")));
      %build(add(%i, 1i64), list_insert(%l, list_at(%l, -1i64)))
    } else {
      %acc
    }
  };
  concat_list(%build(0i64, Nil), axis=0)
}
)");
  for (int Level : {0, 3}) {
    std::string At = " at -O" + std::to_string(Level);
    auto Run = [&](int64_t N) {
      return costOf(M, Level, {vec({1, 2, 3}), i64(N)});
    };
    expectLinear([&](int64_t N) { return Run(N).Instructions; },
                 "instructions" + At);
    // Appends in place: only the arrays' growth copies (geometric, < 2 per
    // element appended), where copying per step would copy n^2 / 2.
    for (int64_t N : {10, 100, 1000})
      EXPECT_LE(Run(N).Copies, (uint64_t)(2 * 2 * N)) << "n = " << N << At;
  }
}

TEST(ListPrimitives, ListArgumentsArePackedOnce) {
  // Reads the argument List at a position each step: invoke packs it once
  // (n elements copied), not each step.
  ir::Module M = parse(R"(
def @main(%l: List[Tensor[(2,), float32]], %n: Tensor[(), int64]) {
  let %loop = fn (%i: Tensor[(), int64], %acc: Tensor[(2,), float32])
      -> Tensor[(2,), float32] {
    if (less(%i, %n)) {
      %loop(add(%i, 1i64),
            add(%acc, list_at(%l, subtract(-1i64, mod(%i, list_length(%l))))))
    } else {
      %acc
    }
  };
  (%loop(0i64, list_at(%l, 0i64)), %l)
}
)");
  auto ListOf = [&](int64_t N) {
    ir::Value L = ir::Value::adt(M.findConstructor("Nil"), {});
    for (int64_t I = 0; I < N; ++I)
      L = ir::Value::adt(M.findConstructor("Cons"),
                         {vec({(float)I, 1}), std::move(L)});
    return L;
  };
  for (int Level : {0, 3}) {
    CompileOptions O;
    O.optLevel = Level;
    std::shared_ptr<Executable> Exe = compile(M, O);
    auto Run = [&](int64_t N) {
      VirtualMachine VM(Exe);
      std::vector<ObjectRef> Args = {toObject(ListOf(N), *Exe),
                                     makeTensor(i64(N))};
      uint64_t C0 = packedListElementsCopied();
      ObjectRef R = VM.invoke("main", Args);
      // The List comes back as Cons cells.
      EXPECT_TRUE(R->as<ADTObj>()->fields[1]->as<ADTObj>());
      return Cost{VM.instructionCount(), packedListElementsCopied() - C0};
    };
    expectLinear([&](int64_t N) { return Run(N).Instructions; },
                 "-O" + std::to_string(Level));
    for (int64_t N : {10, 100, 1000})
      EXPECT_EQ(Run(N).Copies, (uint64_t)N);
    ir::Interpreter I(M);
    std::vector<Tensor> Want, Got;
    rivet::testing::flattenValue(I.call("main", {ListOf(50), i64(50)}), Want);
    VirtualMachine VM(Exe);
    rivet::testing::flattenValue(
        toValue(VM.invoke("main",
                          {toObject(ListOf(50), *Exe), makeTensor(i64(50))}),
                *Exe, M),
        Got);
    EXPECT_EQ(difference(Outcome{Got, {}}, Outcome{Want, {}}), "");
  }
}

TEST(PackedList, AppendsInPlaceAndCopiesOnlyToBranch) {
  ObjectRef X = makeTensor(Tensor::scalar<float>(1));
  ObjectRef L = packedList({});
  std::vector<ObjectRef> Versions = {L};
  uint64_t C0 = packedListElementsCopied();
  for (int I = 0; I < 1000; ++I)
    Versions.push_back(Versions.back()->as<ListObj>()->appended(X));
  // Growth copied fewer than 2 elements per append.
  EXPECT_LT(packedListElementsCopied() - C0, 2000u);
  for (size_t I = 0; I < Versions.size(); ++I)
    ASSERT_EQ(Versions[I]->as<ListObj>()->size(), I);
  // Appending to an older version copies it; the newer ones do not change.
  const ListObj &Old = *Versions[500]->as<ListObj>();
  ObjectRef Y = makeTensor(Tensor::scalar<float>(2));
  C0 = packedListElementsCopied();
  ObjectRef Branch = Old.appended(Y);
  EXPECT_EQ(packedListElementsCopied() - C0, 500u);
  EXPECT_EQ((*Branch->as<ListObj>())[500], Y);
  EXPECT_EQ((*Versions[501]->as<ListObj>())[500], X);
  // The branch owns the end of its new array: it appends in place.
  C0 = packedListElementsCopied();
  ObjectRef Next = Branch->as<ListObj>()->appended(Y);
  EXPECT_EQ(packedListElementsCopied() - C0, 0u);
  EXPECT_EQ(Next->as<ListObj>()->size(), 502u);
}

TEST(PackedList, DroppingAnEndSharesTheArray) {
  std::vector<ObjectRef> Elems;
  for (int I = 0; I < 5; ++I)
    Elems.push_back(makeTensor(Tensor::scalar<int64_t>(I)));
  ObjectRef L = packedList(Elems);
  const ListObj &P = *L->as<ListObj>();
  uint64_t C0 = packedListElementsCopied();
  ObjectRef Front = P.erased(0), Back = P.erased(4);
  EXPECT_EQ(packedListElementsCopied() - C0, 0u);
  EXPECT_EQ((*Front->as<ListObj>())[0], Elems[1]);
  EXPECT_EQ(Back->as<ListObj>()->size(), 4u);
  ObjectRef Middle = P.erased(2);
  EXPECT_EQ(packedListElementsCopied() - C0, 4u);
  EXPECT_EQ((*Middle->as<ListObj>())[2], Elems[3]);
  // A List that dropped its last element no longer ends at its array's
  // end: appending to it copies, and the original keeps its element 4.
  ObjectRef Again = Back->as<ListObj>()->appended(Elems[0]);
  EXPECT_EQ((*Again->as<ListObj>())[4], Elems[0]);
  EXPECT_EQ(P[4], Elems[4]);
}

TEST(PackedList, ResultsComeBackAsConsCells) {
  std::vector<ObjectRef> Elems = {makeTensor(Tensor::scalar<int64_t>(7)),
                                  makeTensor(Tensor::scalar<int64_t>(8))};
  ObjectRef Inner = packedList(Elems);
  ObjectRef Tuple = std::make_shared<ADTObj>(
      ADTObj::kTupleTag, std::vector<ObjectRef>{Elems[0], Inner});
  ObjectRef Cells = withConsCells(Tuple, /*ConsTag=*/0, /*NilTag=*/1);
  const auto *T = Cells->as<ADTObj>();
  ASSERT_TRUE(T);
  EXPECT_EQ(T->fields[0], Elems[0]);
  const auto *Cons = T->fields[1]->as<ADTObj>();
  ASSERT_TRUE(Cons);
  EXPECT_EQ(Cons->tag, 0);
  EXPECT_EQ(Cons->fields[0], Elems[0]);
  const auto *Next = Cons->fields[1]->as<ADTObj>();
  ASSERT_TRUE(Next);
  EXPECT_EQ(Next->fields[0], Elems[1]);
  EXPECT_EQ(Next->fields[1]->as<ADTObj>()->tag, 1);
  // Nothing packed: the value itself.
  ObjectRef Plain = std::make_shared<ADTObj>(1, std::vector<ObjectRef>{});
  EXPECT_EQ(withConsCells(Plain, 0, 1), Plain);
}
