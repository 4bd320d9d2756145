//===- transform_test.cc - Shape manipulation kernels ---------------------===//
#include "KernelTestUtil.h"

using namespace rivet;
using namespace rivet::test;

static Tensor iota(Shape S) {
  std::vector<float> V(numElements(S));
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = (float)I;
  return f32(V, S);
}
using Ints = std::vector<int64_t>;

TEST(Transform, Reshape) {
  Tensor X = iota({2, 3, 4});
  EXPECT_EQ(run("reshape", {X}, {{"newshape", Ints{4, -1}}}).shape(),
            (Shape{4, 6}));
  EXPECT_EQ(run("reshape", {X}, {{"newshape", Ints{0, -1}}}).shape(),
            (Shape{2, 12}));
  EXPECT_EQ(run("reshape", {X}, {{"newshape", Ints{0, 0, 2, 2}}}).shape(),
            (Shape{2, 3, 2, 2}));
  expectTensor(run("reshape", {X}, {{"newshape", Ints{24}}}), iota({24}));
  expectError(
      [&] {
        run("reshape", {X}, {{"newshape", Ints{5, -1}}});
      },
      "reshape: cannot reshape (2, 3, 4) to (5, -1)");
  expectError(
      [&] {
        run("reshape", {X}, {{"newshape", Ints{-1, -1}}});
      },
      "more than one -1");
  expectError([&] { run("reshape", {X}); },
              "reshape: attribute 'newshape' is missing");
  EXPECT_EQ(run("reshape", {iota({0, 3})}, {{"newshape", Ints{0, 5}}}).shape(),
            (Shape{0, 5}));
  expectError(
      [&] {
        run("reshape", {X}, {{"newshape", Ints{2, 3, 4, 0}}});
      },
      "copies dimension 3 (0) but the input (2, 3, 4) has rank 3");
}

TEST(Transform, Transpose) {
  Tensor X = iota({2, 3});
  expectTensor(run("transpose", {X}), f32({0, 3, 1, 4, 2, 5}, {3, 2}));
  Tensor Y = iota({2, 3, 4});
  Tensor T = run("transpose", {Y}, {{"axes", Ints{1, 2, 0}}});
  ASSERT_EQ(T.shape(), (Shape{3, 4, 2}));
  // T[i, j, k] = Y[k, i, j] = 12k + 4i + j
  for (int I = 0; I < 3; ++I)
    for (int J = 0; J < 4; ++J)
      for (int K = 0; K < 2; ++K)
        EXPECT_EQ(T.elementAsDouble((I * 4 + J) * 2 + K), 12 * K + 4 * I + J);
  EXPECT_EQ(run("transpose", {Y}, {{"axes", Ints{-1, 0, 1}}}).shape(),
            (Shape{4, 2, 3}));
  expectError(
      [&] {
        run("transpose", {Y}, {{"axes", Ints{0, 0, 1}}});
      },
      "not a permutation");
  expectError(
      [&] {
        run("transpose", {Y}, {{"axes", Ints{0, 1}}});
      },
      "one entry per dimension");
}

TEST(Transform, ConcatenateAndStack) {
  Tensor A = iota({2, 2}), B = f32({9, 8}, {2, 1});
  expectTensor(run("concatenate", {A, B}, {{"axis", int64_t(1)}}),
               f32({0, 1, 9, 2, 3, 8}, {2, 3}));
  expectTensor(run("concatenate", {A, A}),
               f32({0, 1, 2, 3, 0, 1, 2, 3}, {4, 2}));
  expectTensor(
      run("concatenate", {A, f32({}, {2, 0})}, {{"axis", int64_t(-1)}}), A);
  expectError(
      [&] {
        run("concatenate", {A, B});
      },
      "concatenate: input 1 has shape (2, 1), incompatible");
  expectError([&] { run("concatenate", {}); }, "at least one input");
  Tensor C = f32({4, 5}, {2});
  expectTensor(run("stack", {iota({2}), C}), f32({0, 1, 4, 5}, {2, 2}));
  expectTensor(run("stack", {iota({2}), C}, {{"axis", int64_t(1)}}),
               f32({0, 4, 1, 5}, {2, 2}));
  expectTensor(run("stack", {iota({2}), C}, {{"axis", int64_t(-1)}}),
               f32({0, 4, 1, 5}, {2, 2}));
  expectError(
      [&] {
        run("stack", {C}, {{"axis", int64_t(2)}});
      },
      "stack: axis 2 is out of range");
  expectError([&] { run("stack", {C, A}); }, "stack: input 1");
}

TEST(Transform, Split) {
  Tensor X = iota({2, 6});
  auto P =
      runAll("split", {X}, {{"axis", int64_t(1)}, {"sections", int64_t(3)}});
  ASSERT_EQ(P.size(), 3u);
  expectTensor(P[1], f32({2, 3, 8, 9}, {2, 2}));
  auto Q =
      runAll("split", {X}, {{"axis", int64_t(1)}, {"indices", Ints{1, 4}}});
  ASSERT_EQ(Q.size(), 3u);
  expectTensor(Q[0], f32({0, 6}, {2, 1}));
  expectTensor(Q[1], f32({1, 2, 3, 7, 8, 9}, {2, 3}));
  expectTensor(Q[2], f32({4, 5, 10, 11}, {2, 2}));
  // array_split style: out-of-range and decreasing points give empty pieces.
  auto R = runAll("split", {iota({5})}, {{"indices", Ints{3, 1, 10}}});
  ASSERT_EQ(R.size(), 4u);
  EXPECT_EQ(R[0].shape(), (Shape{3}));
  EXPECT_EQ(R[1].shape(), (Shape{0}));
  EXPECT_EQ(R[2].shape(), (Shape{4}));
  EXPECT_EQ(R[3].shape(), (Shape{0}));
  expectTensor(R[2], f32({1, 2, 3, 4}, {4}));
  expectError(
      [&] {
        runAll("split", {X}, {{"sections", int64_t(4)}});
      },
      "cannot be split into 4 equal sections");
  // uneven (ONNX Split-18): parts of ceil(7 / 4) = 2, the last smaller, and
  // empty once the extent runs out.
  auto U = runAll("split", {iota({7})},
                  {{"sections", int64_t(4)}, {"uneven", int64_t(1)}});
  ASSERT_EQ(U.size(), 4u);
  expectTensor(U[2], f32({4, 5}, {2}));
  expectTensor(U[3], f32({6}, {1}));
  auto E = runAll("split", {iota({4})},
                  {{"sections", int64_t(5)}, {"uneven", int64_t(1)}});
  ASSERT_EQ(E.size(), 5u);
  EXPECT_EQ(E[3].shape(), (Shape{1}));
  EXPECT_EQ(E[4].shape(), (Shape{0}));
  expectError([&] { runAll("split", {X}); }, "exactly one of");
  expectError(
      [&] {
        runAll("split", {X}, {{"sections", int64_t(2)}, {"indices", Ints{1}}});
      },
      "exactly one of");
}

TEST(Transform, StridedSlice) {
  Tensor X = iota({3, 4});
  expectTensor(
      run("strided_slice", {X}, {{"begin", Ints{1, 1}}, {"end", Ints{3, 3}}}),
      f32({5, 6, 9, 10}, {2, 2}));
  // Negative indices, clamping, negative strides.
  expectTensor(run("strided_slice", {X},
                   {{"begin", Ints{-1}},
                    {"end", Ints{-100}},
                    {"strides", Ints{-1}},
                    {"axes", Ints{1}}}),
               f32({3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}, {3, 4}));
  expectTensor(run("strided_slice", {X},
                   {{"begin", Ints{0}},
                    {"end", Ints{INT64_MAX}},
                    {"strides", Ints{2}},
                    {"axes", Ints{-1}}}),
               f32({0, 2, 4, 6, 8, 10}, {3, 2}));
  expectTensor(run("strided_slice", {X},
                   {{"begin", Ints{10}},
                    {"end", Ints{0}},
                    {"strides", Ints{-2}},
                    {"axes", Ints{0}}}),
               f32({8, 9, 10, 11}, {1, 4}));
  EXPECT_EQ(
      run("strided_slice", {X}, {{"begin", Ints{2}}, {"end", Ints{1}}}).shape(),
      (Shape{0, 4}));
  expectError(
      [&] {
        run("strided_slice", {X},
            {{"begin", Ints{0}}, {"end", Ints{1}}, {"strides", Ints{0}}});
      },
      "strided_slice: stride 0");
  expectError(
      [&] {
        run("strided_slice", {X}, {{"begin", Ints{0}}, {"end", Ints{1, 2}}});
      },
      "'begin' has 1 entries but 'end' has 2");
  expectError(
      [&] {
        run("strided_slice", {X}, {{"begin", Ints{0}}});
      },
      "attribute 'end' is missing");
}

TEST(Transform, Take) {
  Tensor X = iota({3, 2});
  expectTensor(run("take", {X, i64({2, 0, -1}, {3})}, {{"axis", int64_t(0)}}),
               f32({4, 5, 0, 1, 4, 5}, {3, 2}));
  expectTensor(run("take", {X, tensor<int32_t>({1, 0, 1, 1}, {2, 2})},
                   {{"axis", int64_t(1)}}),
               f32({1, 0, 1, 1, 3, 2, 3, 3, 5, 4, 5, 5}, {3, 2, 2}));
  // No axis: flattened; scalar index gives a scalar.
  expectTensor(run("take", {X, i64({5}, {})}), f32({5}, {}));
  expectError(
      [&] {
        run("take", {X, i64({3}, {1})}, {{"axis", int64_t(0)}});
      },
      "take: index 3 is out of range for axis 0 of extent 3");
  expectError(
      [&] {
        run("take", {X, i64({-4}, {1})}, {{"axis", int64_t(0)}});
      },
      "index -4 is out of range");
  expectError(
      [&] {
        run("take", {X, f32({0}, {1})});
      },
      "take: input 'indices' must have int32 or int64");
}

// Copies whose source rows are contiguous go row by row (copyStrided's
// memcpy path); every element size and a source offset, against the element
// formula.
TEST(Transform, UnitStrideRowCopies) {
  for (DType T : {DType::UInt8, DType::Int16, DType::Float32, DType::Int64}) {
    Tensor X = iota({3, 4, 5}).cast(T);
    Tensor P = run("transpose", {X}, {{"axes", Ints{1, 0, 2}}});
    ASSERT_EQ(P.shape(), (Shape{4, 3, 5}));
    Tensor S = run("strided_slice", {X},
                   {{"begin", Ints{1, 1, 1}}, {"end", Ints{3, 4, 4}}});
    ASSERT_EQ(S.shape(), (Shape{2, 3, 3}));
    for (int64_t I = 0; I < 4; ++I)
      for (int64_t J = 0; J < 3; ++J)
        for (int64_t K = 0; K < 5; ++K)
          EXPECT_EQ(P.elementAsInt((I * 3 + J) * 5 + K), (J * 4 + I) * 5 + K)
              << dtypeName(T);
    for (int64_t I = 0; I < 2; ++I)
      for (int64_t J = 0; J < 3; ++J)
        for (int64_t K = 0; K < 3; ++K)
          EXPECT_EQ(S.elementAsInt((I * 3 + J) * 3 + K),
                    ((I + 1) * 4 + J + 1) * 5 + K + 1)
              << dtypeName(T);
  }
}

// Slices whose rows follow each other in the source merge into longer rows
// (one memcpy for x[a:b] of a [n, 8]; the merge of a single axis was once
// skipped): one axis, two axes and the inner axes only, against the element
// formula.
TEST(Transform, SlicesOfWholeRowsMerge) {
  Tensor X = iota({3, 4, 5});
  struct Case {
    Ints Begin, End;
  };
  for (const Case &C : {Case{{1, 0, 0}, {3, 4, 5}}, Case{{0, 1, 0}, {3, 3, 5}},
                        Case{{2, 0, 0}, {3, 4, 5}}}) {
    Tensor S = run("strided_slice", {X}, {{"begin", C.Begin}, {"end", C.End}});
    Shape Want = {C.End[0] - C.Begin[0], C.End[1] - C.Begin[1], 5};
    ASSERT_EQ(S.shape(), Want);
    for (int64_t I = 0; I < Want[0]; ++I)
      for (int64_t J = 0; J < Want[1]; ++J)
        for (int64_t K = 0; K < 5; ++K)
          EXPECT_EQ(S.elementAsInt((I * Want[1] + J) * 5 + K),
                    ((I + C.Begin[0]) * 4 + J + C.Begin[1]) * 5 + K);
  }
  Tensor Y = iota({6, 8});
  Tensor Rows =
      run("strided_slice", {Y}, {{"begin", Ints{1, 0}}, {"end", Ints{5, 8}}});
  ASSERT_EQ(Rows.shape(), (Shape{4, 8}));
  for (int64_t E = 0; E < 32; ++E)
    EXPECT_EQ(Rows.elementAsInt(E), 8 + E);
}
