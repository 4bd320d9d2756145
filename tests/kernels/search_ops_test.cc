//===- search_ops_test.cc - topk and unique -------------------------------===//
#include "KernelTestUtil.h"

using namespace rivet;
using namespace rivet::test;

TEST(SearchOps, TopK) {
  Tensor X = f32({1, 4, 4, 2, 9, 0, 3, 3}, {2, 4});
  auto R = runAll("topk", {X}, {{"k", int64_t(2)}});
  ASSERT_EQ(R.size(), 2u);
  expectTensor(R[0], f32({4, 4, 9, 3}, {2, 2}));
  expectTensor(R[1], i64({1, 2, 0, 2}, {2, 2})); // ties: lower index first
  R = runAll("topk", {X}, {{"k", int64_t(3)}, {"largest", int64_t(0)}});
  expectTensor(R[0], f32({1, 2, 4, 0, 3, 3}, {2, 3}));
  expectTensor(R[1], i64({0, 3, 1, 1, 2, 3}, {2, 3}));
  R = runAll("topk", {X}, {{"k", int64_t(1)}, {"axis", int64_t(0)}});
  expectTensor(R[0], f32({9, 4, 4, 3}, {1, 4}));
  expectTensor(R[1], i64({1, 0, 0, 1}, {1, 4}));
  R = runAll("dyn_topk", {i64({5, 7, 6}, {3}), i64({2}, {1})});
  expectTensor(R[0], i64({7, 6}, {2}));
  expectTensor(R[1], i64({1, 2}, {2}));
  expectError(
      [&] {
        runAll("topk", {X}, {{"k", int64_t(5)}});
      },
      "topk: k = 5 is out of range for an axis of extent 4");
  expectError(
      [&] {
        runAll("dyn_topk", {X, i64({-1}, {})});
      },
      "k = -1 is out of range");
  expectError([&] { runAll("dyn_topk", {X, f32({1}, {})}); }, "int32 or int64");
  expectError(
      [&] {
        runAll("topk", {f32({1}, {})}, {{"k", int64_t(1)}});
      },
      "rank >= 1");
}

TEST(SearchOps, UniqueFlat) {
  Tensor X = f32({2, 1, 1, 3, 4, 3}, {6});
  auto R = runAll("unique", {X});
  ASSERT_EQ(R.size(), 4u);
  expectTensor(R[0], f32({1, 2, 3, 4}, {4}));
  expectTensor(R[1], i64({1, 0, 3, 4}, {4}));
  expectTensor(R[2], i64({1, 0, 0, 2, 3, 2}, {6}));
  expectTensor(R[3], i64({2, 1, 2, 1}, {4}));
  R = runAll("unique", {X}, {{"sorted", int64_t(0)}});
  expectTensor(R[0], f32({2, 1, 3, 4}, {4}));
  expectTensor(R[1], i64({0, 1, 3, 4}, {4}));
  expectTensor(R[2], i64({0, 1, 1, 2, 3, 2}, {6}));
  expectTensor(R[3], i64({1, 2, 2, 1}, {4}));
  // Shape function on a 2-D input flattens.
  EXPECT_EQ(shapeOf("unique", {i64({1, 1, 2, 2}, {2, 2})})[0].shape,
            (Shape{2}));
}

TEST(SearchOps, UniqueAxis) {
  Tensor X = i64({1, 0, 0, 1, 0, 0, 2, 3, 4}, {3, 3});
  auto R = runAll("unique", {X}, {{"axis", int64_t(0)}});
  expectTensor(R[0], i64({1, 0, 0, 2, 3, 4}, {2, 3}));
  expectTensor(R[1], i64({0, 2}, {2}));
  expectTensor(R[2], i64({0, 0, 1}, {3}));
  expectTensor(R[3], i64({2, 1}, {2}));
  // Columns: (1,1,2), (0,0,3), (0,0,4) -> sorted (0,0,3), (0,0,4), (1,1,2).
  R = runAll("unique", {X}, {{"axis", int64_t(-1)}});
  expectTensor(R[0], i64({0, 0, 1, 0, 0, 1, 3, 4, 2}, {3, 3}));
  expectTensor(R[2], i64({2, 0, 1}, {3}));
  expectError(
      [] {
        runAll("unique", {f32({1}, {})}, {{"axis", int64_t(0)}});
      },
      "unique: cannot take unique slices of a scalar");
  expectError(
      [&] {
        runAll("unique", {X}, {{"axis", int64_t(2)}});
      },
      "unique: axis 2 is out of range for rank 2");
}
