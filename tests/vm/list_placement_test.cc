//===- list_placement_test.cc - Tensors a loop appends lie in order -------===//
//
// AllocListTensor places a tensor that a program appends to a List right
// after the List's earlier tensors, in an arena (vm/TensorArena.h), so that
// concat_list over its outermost axis is a view, not a copy. Placement must
// never change a result: programs that append in loops, keep older Lists
// and append to them again (the second append copies the List), join along
// inner axes (which must copy), and mix placed and unplaced tensors agree
// with the reference interpreter on every executor. Whether the join is a
// view is checked on the VM's result, and the arenas' reuse by counting the
// reservations mapped, not by timing.
//
//===----------------------------------------------------------------------===//
#include "support/Differential.h"
#include "support/PassTest.h"
#include "vm/TensorArena.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace rivet;
using namespace rivet::vm;
using namespace rivet::testing::diff;

namespace {

ir::Module parse(const std::string &Text) {
  return rivet::test::parseTyped(Text, "placement.rvir");
}

Tensor rows(int64_t N, int64_t Cols) {
  std::vector<float> V;
  for (int64_t I = 0; I < N * Cols; ++I)
    V.push_back(0.25f * (float)I - 3.0f);
  return Tensor::fromVector<float>(V, {N, Cols});
}
Tensor i64(int64_t V) { return Tensor::scalar<int64_t>(V); }

/// Step i appends x[:i + 1] * (i + 1) (a dynamic shape: placed), as
/// torch's exported sequence loops do; the List is joined along its first
/// axis (a view), along the second (a copy) and stacked when the rows are
/// equal; its elements are read after the joins.
const char *const SliceLoop = R"(
def @main(%x: Tensor[(?, 3), float32], %n: Tensor[(), int64]) {
  let %build = fn (%i: Tensor[(), int64], %acc: List[Tensor[(?, 3), float32]])
      -> List[Tensor[(?, 3), float32]] {
    if (less(%i, %n)) {
      let %j = add(%i, 1i64);
      let %s = slice_dyn(%x, const[(1,), int64]([0]), reshape(%j, newshape=[1]),
                     const[(1,), int64]([0]), const[(1,), int64]([1]));
      %build(%j, list_insert(%acc, multiply(%s, cast(%j, dtype="float32"))))
    } else {
      %acc
    }
  };
  let %l = %build(0i64, Nil);
  (concat_list(%l, axis=0), list_at(%l, 0i64), list_at(%l, -1i64),
   list_length(%l))
}
)";

/// Every element has x's shape: joins along axis 0 and 1 and stacks along
/// axes 0 and 1.
const char *const SameShapeLoop = R"(
def @main(%x: Tensor[(?, 3), float32], %n: Tensor[(), int64]) {
  let %build = fn (%i: Tensor[(), int64], %acc: List[Tensor[(?, 3), float32]])
      -> List[Tensor[(?, 3), float32]] {
    if (less(%i, %n)) {
      %build(add(%i, 1i64),
             list_insert(%acc, add(%x, cast(%i, dtype="float32"))))
    } else {
      %acc
    }
  };
  let %l = %build(0i64, Nil);
  (concat_list(%l, axis=0), concat_list(%l, axis=1),
   concat_list(%l, axis=0, new_axis=1), concat_list(%l, axis=1, new_axis=1))
}
)";

/// An older List appended to twice: the first append extends its array
/// (placed after it: a view), the second copies it (its tensor is not next
/// to the List's: the join copies). The older List itself is still joined.
const char *const TwoAppends = R"(
def @main(%x: Tensor[(?, 3), float32], %n: Tensor[(), int64]) {
  let %build = fn (%i: Tensor[(), int64], %acc: List[Tensor[(?, 3), float32]])
      -> List[Tensor[(?, 3), float32]] {
    if (less(%i, %n)) {
      %build(add(%i, 1i64), list_insert(%acc, negative(%x)))
    } else {
      %acc
    }
  };
  let %l = %build(0i64, Nil);
  let %a = list_insert(%l, multiply(%x, 2.0f32));
  let %b = list_insert(%l, multiply(%x, 3.0f32));
  let %c = list_insert(%l, %x, 0i64);
  (concat_list(%a, axis=0), concat_list(%b, axis=0), concat_list(%l, axis=0),
   concat_list(%c, axis=0))
}
)";

TEST(ListPlacement, JoinsAgreeWithTheInterpreter) {
  for (const char *Text : {SliceLoop, SameShapeLoop, TwoAppends}) {
    ir::Module M = parse(Text);
    for (int64_t Rows : {1, 4})
      for (int64_t N : {0, 1, 2, 7})
        expectAgreement(M, {rows(Rows, 3), i64(N)},
                        std::string(Text).substr(0, 0) + "rows " +
                            std::to_string(Rows) + ", n " + std::to_string(N));
  }
  // A List with no rows in its elements: zero-byte tensors are placed
  // nowhere, and the join of them is empty.
  expectAgreement(parse(SameShapeLoop), {rows(0, 3), i64(3)}, "empty rows");
}

/// The VM's result of @main of M: its fields as tensors.
std::vector<Tensor> runVM(VirtualMachine &VM, const std::vector<Tensor> &In) {
  std::vector<ObjectRef> Args;
  for (const Tensor &T : In)
    Args.push_back(makeTensor(T));
  ObjectRef R = VM.invoke("main", Args);
  std::vector<Tensor> Out;
  for (const ObjectRef &F : asADT(R, "result").fields)
    if (F && F->kind == ObjectKind::Tensor)
      Out.push_back(asTensor(F, "field"));
  return Out;
}

bool inArena(const Tensor &T) {
  return T.hasData() && TensorArena::owning(*T.storage()) != nullptr;
}

TEST(ListPlacement, AppendedTensorsJoinAsAView) {
  ir::Module M = parse(SliceLoop);
  for (int Level : {0, 3}) {
    CompileOptions O;
    O.optLevel = Level;
    std::shared_ptr<Executable> Exe = compile(M, O);
    size_t Placed = 0;
    for (const VMFunction &F : Exe->functions)
      for (const Instruction &I : F.code)
        Placed += I.op == Opcode::AllocListTensor;
    EXPECT_EQ(Placed, 1u) << "-O" << Level;
    VirtualMachine VM(Exe);
    std::vector<Tensor> Out = runVM(VM, {rows(50, 3), i64(50)});
    ASSERT_EQ(Out.size(), 4u);
    EXPECT_EQ(Out[0].shape(), (Shape{50 * 51 / 2, 3}));
    EXPECT_TRUE(inArena(Out[0])) << "-O" << Level;
    // The join views the elements' own bytes.
    EXPECT_EQ(Out[1].rawData(), Out[0].rawData());
    EXPECT_EQ(static_cast<char *>(Out[2].rawData()) + Out[2].nbytes(),
              static_cast<char *>(Out[0].rawData()) + Out[0].nbytes());
    // The placed bytes count while their arena lives (the join holds it).
    EXPECT_GE(TensorArena::placedBytes(), Out[0].nbytes());
    EXPECT_GE(TensorArena::peakPlacedBytes(), TensorArena::placedBytes());
    // Running again reuses the dead arenas' address space (the results
    // dropped: a join still held keeps its arena).
    Out.clear();
    runVM(VM, {rows(40, 3), i64(40)});
    size_t Mapped = TensorArena::reservationsMapped();
    for (int K = 0; K < 5; ++K)
      runVM(VM, {rows(40, 3), i64(40)});
    EXPECT_EQ(TensorArena::reservationsMapped(), Mapped) << "-O" << Level;
    EXPECT_EQ(TensorArena::placedBytes(), 0u) << "-O" << Level;
  }
}

TEST(ListPlacement, OnlyOuterJoinsOfAdjacentTensorsAreViews) {
  CompileOptions O;
  VirtualMachine VM(compile(parse(SameShapeLoop), O));
  // Elements of one row: nothing but extents of 1 before any axis.
  std::vector<Tensor> Out = runVM(VM, {rows(1, 3), i64(4)});
  ASSERT_EQ(Out.size(), 4u);
  for (const Tensor &T : Out)
    EXPECT_TRUE(inArena(T)) << T.typeString();
  // Of two rows: the joins along axis 1 interleave the elements' rows.
  Out = runVM(VM, {rows(2, 3), i64(4)});
  ASSERT_EQ(Out.size(), 4u);
  EXPECT_TRUE(inArena(Out[0]));  // [8, 3]
  EXPECT_FALSE(inArena(Out[1])); // [2, 12]
  EXPECT_TRUE(inArena(Out[2]));  // [4, 2, 3]
  EXPECT_FALSE(inArena(Out[3])); // [2, 4, 3]
  VirtualMachine VM2(compile(parse(TwoAppends), O));
  Out = runVM(VM2, {rows(2, 3), i64(3)});
  ASSERT_EQ(Out.size(), 4u);
  EXPECT_TRUE(inArena(Out[0]));
  EXPECT_FALSE(inArena(Out[1])); // after %a's tensor, not after %l's
  EXPECT_TRUE(inArena(Out[2]));
  EXPECT_FALSE(inArena(Out[3]));        // inserted at the front
  float Want = -(0.25f * 0 - 3.0f) * 1; // -x[0, 0]
  EXPECT_EQ(Out[2].data<float>()[0], Want);
  EXPECT_EQ(Out[1].data<float>()[Out[1].numel() - 6], 3 * (0.25f * 0 - 3.0f));
}

TEST(ListPlacement, VMsOnSeveralThreadsShareTheArenaCache) {
  // Each thread's VM builds and joins its own Lists while the others do;
  // the process-wide cache of dead arenas is shared. Results must be what
  // one VM alone computes.
  ir::Module M = parse(SliceLoop);
  std::shared_ptr<Executable> Exe = compile(M, CompileOptions());
  std::vector<Tensor> Want;
  {
    VirtualMachine VM(Exe);
    Want = runVM(VM, {rows(30, 3), i64(30)});
  }
  std::vector<std::string> Failures(4);
  std::vector<std::thread> Threads;
  for (size_t T = 0; T < Failures.size(); ++T)
    Threads.emplace_back([&, T] {
      VirtualMachine VM(Exe);
      for (int K = 0; K < 40; ++K) {
        std::vector<Tensor> Got = runVM(VM, {rows(30, 3), i64(30)});
        if (Got.size() != Want.size() || Got[0].nbytes() != Want[0].nbytes() ||
            std::memcmp(Got[0].rawData(), Want[0].rawData(),
                        Want[0].nbytes()) != 0 ||
            !inArena(Got[0])) {
          Failures[T] = "run " + std::to_string(K);
          return;
        }
      }
    });
  for (std::thread &T : Threads)
    T.join();
  for (size_t T = 0; T < Failures.size(); ++T)
    EXPECT_EQ(Failures[T], "") << "thread " << T;
}

TEST(TensorArena, ClaimsFollowEachOtherAndJoinAsOneSpan) {
  std::shared_ptr<TensorArena> A = TensorArena::create();
  ASSERT_TRUE(A); // tests run without address-space limits
  std::shared_ptr<Storage> S1 = A->claim(12, 4), S2 = A->claim(16, 4);
  ASSERT_TRUE(S1 && S2);
  EXPECT_EQ(static_cast<char *>(S1->data()) + 12, S2->data());
  EXPECT_EQ(TensorArena::owning(*S1), A.get());
  // An 8-byte element after 28 bytes of 4-byte ones is aligned: a gap.
  std::shared_ptr<Storage> S3 = A->claim(8, 8);
  EXPECT_EQ(static_cast<char *>(S2->data()) + 20, S3->data());
  EXPECT_EQ(A->claim(0, 4), nullptr);

  Tensor T1(S1, 0, {3}, DType::Float32), T2(S2, 0, {4}, DType::Float32);
  Tensor Empty(S3, 0, {0}, DType::Float32);
  std::shared_ptr<Storage> J = TensorArena::adjacent({T1, Empty, T2});
  ASSERT_TRUE(J);
  EXPECT_EQ(J->data(), S1->data());
  EXPECT_EQ(J->size(), 28u);
  // Out of order, with a gap, or with a tensor from elsewhere: no span.
  EXPECT_EQ(TensorArena::adjacent({T2, T1}), nullptr);
  Tensor T3(S3, 0, {2}, DType::Float32);
  EXPECT_EQ(TensorArena::adjacent({T1, T2, T3}), nullptr);
  Tensor Heap = Tensor::empty({2}, DType::Float32);
  EXPECT_EQ(TensorArena::adjacent({Heap, T1}), nullptr);
  EXPECT_EQ(TensorArena::adjacent({T1, Heap}), nullptr);
  EXPECT_EQ(TensorArena::owning(*Heap.storage()), nullptr);
  // A part of a claim views the same bytes.
  Tensor Tail(S1, 8, {1}, DType::Float32);
  EXPECT_TRUE(TensorArena::adjacent({Tail, T2}));

  // The span keeps the arena and its bytes alive after the claims die.
  std::memcpy(S1->data(), "abcdefghijkl", 12);
  std::weak_ptr<TensorArena> Weak = A;
  A.reset();
  S1.reset();
  T1 = Tensor();
  Tail = Tensor();
  EXPECT_FALSE(Weak.expired());
  EXPECT_EQ(std::memcmp(J->data(), "abcdefghijkl", 12), 0);
  J.reset();
  S2.reset();
  S3.reset();
  T2 = T3 = Empty = Tensor();
  EXPECT_TRUE(Weak.expired());
}

TEST(TensorArena, AMostlyDeadArenaClaimsNoMore) {
  std::shared_ptr<TensorArena> A = TensorArena::create();
  ASSERT_TRUE(A);
  // Claimed address space is committed but never touched here.
  std::shared_ptr<Storage> Big = A->claim(size_t(80) << 20, 64);
  std::shared_ptr<Storage> Small = A->claim(64, 64);
  ASSERT_TRUE(Big && Small);
  Big.reset();
  EXPECT_EQ(A->claim(64, 64), nullptr);
  // A new arena starts from a cached or new reservation.
  std::shared_ptr<TensorArena> B = TensorArena::create();
  ASSERT_TRUE(B);
  EXPECT_TRUE(B->claim(64, 64));
}

} // namespace
