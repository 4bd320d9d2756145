//===- indexing_ops_test.cc - Gather, scatter and index kernels -----------===//
//
// gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot(_dyn),
// compress, nonzero and reverse_sequence against hand/NumPy-computed values,
// and their errors on bad indices and shapes.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

using namespace rivet;
using namespace rivet::test;

namespace {
using Ints = std::vector<int64_t>;
Tensor iota(Shape S) {
  std::vector<float> V(numElements(S));
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = (float)I;
  return f32(V, S);
}
} // namespace

TEST(IndexingOps, GatherElements) {
  Tensor X = f32({1, 2, 3, 4}, {2, 2});
  // np.take_along_axis(x, [[0, 0], [1, 0]], axis=1) = [[1, 1], [4, 3]]
  expectTensor(run("gather_elements", {X, i64({0, 0, 1, 0}, {2, 2})},
                   {{"axis", int64_t(1)}}),
               f32({1, 1, 4, 3}, {2, 2}));
  // Negative indices wrap; axis 0.
  expectTensor(run("gather_elements", {X, tensor<int32_t>({-1, 0}, {1, 2})}),
               f32({3, 2}, {1, 2}));
  expectError(
      [&] {
        run("gather_elements", {X, i64({2, 0}, {1, 2})});
      },
      "gather_elements: index 2 is out of range for axis 0 of extent 2");
  expectError(
      [&] {
        run("gather_elements", {X, i64({0}, {1})});
      },
      "must have the rank of data");
  expectError(
      [&] {
        run("gather_elements", {X, f32({0}, {1, 1})});
      },
      "input 'indices' must have int32 or int64");
}

TEST(IndexingOps, GatherND) {
  Tensor X = i64({0, 1, 2, 3}, {2, 2});
  // ONNX example 1: indices [[0, 0], [1, 1]] -> [0, 3]
  EXPECT_EQ(run("gather_nd", {X, i64({0, 0, 1, 1}, {2, 2})}).toIntVector(),
            (Ints{0, 3}));
  // Example 2: indices [[1], [0]] -> rows [[2, 3], [0, 1]]
  Tensor R = run("gather_nd", {X, i64({1, 0}, {2, 1})});
  EXPECT_EQ(R.shape(), (Shape{2, 2}));
  EXPECT_EQ(R.toIntVector(), (Ints{2, 3, 0, 1}));
  // batch_dims = 1: data (2, 2, 2), indices [[1], [0]] -> [[2, 3], [4, 5]]
  Tensor D = i64({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  Tensor B =
      run("gather_nd", {D, i64({1, 0}, {2, 1})}, {{"batch_dims", int64_t(1)}});
  EXPECT_EQ(B.shape(), (Shape{2, 2}));
  EXPECT_EQ(B.toIntVector(), (Ints{2, 3, 4, 5}));
  expectError(
      [&] {
        run("gather_nd", {X, i64({0, 5}, {1, 2})});
      },
      "index 5 is out of range for axis 1");
  expectError(
      [&] {
        run("gather_nd", {X, i64({0, 0, 0}, {1, 3})});
      },
      "the last dimension of indices (1, 3) must be in [1, 2]");
}

TEST(IndexingOps, ScatterElements) {
  Tensor X = Tensor::zeros({3, 3}, DType::Float32);
  // ONNX example: indices [[1, 0, 2], [0, 2, 1]], updates [[1.0, 1.1, 1.2],
  // [2.0, 2.1, 2.2]] on axis 0.
  Tensor Idx = i64({1, 0, 2, 0, 2, 1}, {2, 3});
  Tensor U = f32({1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}, {2, 3});
  expectTensor(run("scatter_elements", {X, Idx, U}),
               f32({2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f}, {3, 3}));
  // Duplicates with add; axis 1 and a negative index.
  Tensor Y = f32({1, 2, 3, 4, 5}, {1, 5});
  expectTensor(run("scatter_elements",
                   {Y, i64({1, -4}, {1, 2}), f32({1.1f, 2.1f}, {1, 2})},
                   {{"axis", int64_t(1)}, {"reduction", std::string("add")}}),
               f32({1, 5.2f, 3, 4, 5}, {1, 5}));
  expectTensor(run("scatter_elements",
                   {Y, i64({0, 0}, {1, 2}), f32({7, 0.5f}, {1, 2})},
                   {{"axis", int64_t(1)}, {"reduction", std::string("min")}}),
               f32({0.5f, 2, 3, 4, 5}, {1, 5}));
  expectError(
      [&] {
        run("scatter_elements", {X, i64({3}, {1, 1}), f32({1}, {1, 1})});
      },
      "index 3 is out of range for axis 0 of extent 3");
  expectError(
      [&] {
        run("scatter_elements", {X, Idx, U},
            {{"reduction", std::string("sub")}});
      },
      "unsupported reduction 'sub'");
  expectError(
      [&] {
        run("scatter_elements", {X, Idx, f32({1}, {1, 1})});
      },
      "must have one shape");
}

TEST(IndexingOps, ScatterND) {
  Tensor X = i64({1, 2, 3, 4, 5, 6, 7, 8}, {8});
  // ONNX example: indices [[4], [3], [1], [7]], updates [9, 10, 11, 12].
  Tensor R = run("scatter_nd",
                 {X, i64({4, 3, 1, 7}, {4, 1}), i64({9, 10, 11, 12}, {4})});
  EXPECT_EQ(R.toIntVector(), (Ints{1, 11, 3, 10, 9, 6, 7, 12}));
  // Slices with mul; an index repeated multiplies twice.
  Tensor M = f32({1, 2, 3, 4}, {2, 2});
  expectTensor(run("scatter_nd",
                   {M, i64({1, 1}, {2, 1}), f32({2, 2, 3, 3}, {2, 2})},
                   {{"reduction", std::string("mul")}}),
               f32({1, 2, 18, 24}, {2, 2}));
  expectError(
      [&] {
        run("scatter_nd", {M, i64({1}, {1, 1}), f32({2}, {1})});
      },
      "updates must have shape (1, 2), got (1,)");
  expectError(
      [&] {
        run("scatter_nd", {M, i64({-3}, {1, 1}), f32({2, 2}, {1, 2})});
      },
      "index -3 is out of range");
}

TEST(IndexingOps, OneHot) {
  Tensor Idx = i64({0, -1, 5, 2}, {4});
  Tensor V = f32({0, 3}, {2});
  // Out-of-range index 5 is all "off"; -1 counts from the end.
  expectTensor(run("one_hot", {Idx, V}, {{"depth", int64_t(3)}}),
               f32({3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 3}, {4, 3}));
  // axis 0 transposes the result; depth from a float tensor.
  expectTensor(
      run("one_hot_dyn", {Idx, f32({3}, {1}), V}, {{"axis", int64_t(0)}}),
      f32({3, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 3}, {3, 4}));
  expectError(
      [&] {
        run("one_hot", {Idx, V}, {{"depth", int64_t(0)}});
      },
      "depth must be positive");
  expectError(
      [&] {
        run("one_hot", {Idx, f32({1, 2, 3}, {3})}, {{"depth", int64_t(2)}});
      },
      "values must be a 1-D tensor [off, on]");
  expectError(
      [&] {
        run("one_hot", {Idx, V}, {{"depth", int64_t(2)}, {"axis", int64_t(2)}});
      },
      "axis 2 is out of range for rank 2");
}

TEST(IndexingOps, CompressAndNonZero) {
  Tensor X = iota({3, 2});
  expectTensor(run("compress", {X, b8({false, true, true}, {3})},
                   {{"axis", int64_t(0)}}),
               f32({2, 3, 4, 5}, {2, 2}));
  // A short condition leaves the rest out; no axis flattens.
  expectTensor(run("compress", {X, b8({true, false, true}, {3})}),
               f32({0, 2}, {2}));
  expectTensor(
      run("compress", {X, b8({false, true}, {2})}, {{"axis", int64_t(-1)}}),
      f32({1, 3, 5}, {3, 1}));
  expectError(
      [&] {
        run("compress", {X, b8({false, false, true}, {3})},
            {{"axis", int64_t(1)}});
      },
      "selects position 2 but the axis has extent 2");

  Tensor N = run("nonzero", {f32({1, 0, 0, 2, 0, 3}, {2, 3})});
  EXPECT_EQ(N.shape(), (Shape{2, 3}));
  EXPECT_EQ(N.toIntVector(), (Ints{0, 1, 1, 0, 0, 2}));
  EXPECT_EQ(run("nonzero", {b8({false, false}, {2})}).shape(), (Shape{1, 0}));
  EXPECT_EQ(run("nonzero", {Tensor::scalar<int32_t>(5)}).shape(),
            (Shape{0, 1}));
}

TEST(IndexingOps, ReverseSequence) {
  // ONNX example: time_axis 0, batch_axis 1, lens [4, 3, 2, 1].
  Tensor X = iota({4, 4});
  Tensor R = run("reverse_sequence", {X, i64({4, 3, 2, 1}, {4})});
  expectTensor(
      R, f32({12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15}, {4, 4}));
  // batch_axis 0, time_axis 1.
  Tensor B = run("reverse_sequence", {iota({2, 3}), i64({2, 3}, {2})},
                 {{"batch_axis", int64_t(0)}, {"time_axis", int64_t(1)}});
  expectTensor(B, f32({1, 0, 2, 5, 4, 3}, {2, 3}));
  expectError(
      [&] {
        run("reverse_sequence", {X, i64({5, 1, 1, 1}, {4})});
      },
      "sequence length 5 is out of range [0, 4]");
  expectError(
      [&] {
        run("reverse_sequence", {X, i64({1, 1}, {2})});
      },
      "one entry per batch (4)");
}

TEST(IndexingOps, OtherDTypes) {
  // float16 reduces through float; bool and int8 move bytes.
  Tensor H = Tensor::fromVector<Half>({Half(1.5f), Half(2.0f)}, {2});
  Tensor R = run("scatter_elements",
                 {H, i64({1, 1}, {2}),
                  Tensor::fromVector<Half>({Half(0.25f), Half(0.25f)}, {2})},
                 {{"reduction", std::string("add")}});
  EXPECT_EQ(R.dtype(), DType::Float16);
  EXPECT_EQ(R.toDoubleVector(), (std::vector<double>{1.5, 2.5}));
  Tensor B = run("gather_nd", {b8({true, false, false, true}, {2, 2}),
                               i64({1, 1, 0, 1}, {2, 2})});
  EXPECT_EQ(B.toIntVector(), (Ints{1, 0}));
  Tensor I8 = tensor<int8_t>({1, 2, 3}, {3});
  EXPECT_EQ(run("reverse_sequence", {I8.reshape({3, 1}), i64({3}, {1})})
                .toIntVector(),
            (Ints{3, 2, 1}));
  EXPECT_EQ(run("one_hot",
                {tensor<uint8_t>({1}, {1}), tensor<int8_t>({-1, 4}, {2})},
                {{"depth", int64_t(2)}})
                .toIntVector(),
            (Ints{-1, 4}));
}
