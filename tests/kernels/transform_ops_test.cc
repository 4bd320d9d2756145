//===- transform_ops_test.cc - ONNX shape and creation kernels ------------===//
//
// reshape_dyn, slice_dyn, split_dyn, squeeze, unsqueeze, flatten, expand,
// tile, pad, depth_to_space, space_to_depth, and the creation kernels size,
// shape_of (start/end), constant_of_shape, eye_like and trilu. Expected
// values are computed by hand or with NumPy.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

using namespace rivet;
using namespace rivet::test;

namespace {

Tensor iota(Shape S) {
  std::vector<float> V(numElements(S));
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = (float)I;
  return f32(V, S);
}
using Ints = std::vector<int64_t>;

Tensor ints(Ints V) { return i64(V, {(int64_t)V.size()}); }

} // namespace

TEST(TransformOps, ReshapeDyn) {
  Tensor X = iota({2, 3, 4});
  expectTensor(run("reshape_dyn", {X, ints({4, -1})}), iota({4, 6}));
  EXPECT_EQ(run("reshape_dyn", {X, ints({0, -1})}).shape(), (Shape{2, 12}));
  // allowzero: 0 is a literal zero extent.
  EXPECT_EQ(run("reshape_dyn", {iota({0, 3}), ints({3, 0})},
                {{"allowzero", int64_t(1)}})
                .shape(),
            (Shape{3, 0}));
  expectError(
      [&] {
        run("reshape_dyn", {X, ints({0, 4})}, {{"allowzero", int64_t(1)}});
      },
      "cannot reshape (2, 3, 4) to (0, 4)");
  expectError(
      [&] {
        run("reshape_dyn", {X, ints({5, -1})});
      },
      "reshape_dyn: reshape: cannot reshape");
  expectError(
      [&] {
        run("reshape_dyn", {X, f32({24}, {1})});
      },
      "reshape_dyn: input 'shape' must have int32 or int64");
}

TEST(TransformOps, SliceDyn) {
  Tensor X = iota({3, 4});
  // x[1:3, ::-2] with explicit axes and steps.
  expectTensor(run("slice_dyn", {X, ints({1, -1}), ints({3, -100}),
                                 ints({0, 1}), ints({1, -2})}),
               f32({7, 5, 11, 9}, {2, 2}));
  // Default axes: x[0:2].
  expectTensor(run("slice_dyn", {X, ints({0}), ints({2})}),
               f32({0, 1, 2, 3, 4, 5, 6, 7}, {2, 4}));
  expectError(
      [&] {
        run("slice_dyn", {X, ints({0}), ints({1}), ints({0}), ints({0})});
      },
      "stride 0");
  expectError(
      [&] {
        run("slice_dyn", {X, ints({0})});
      },
      "expected 3 to 5 inputs");
  // int32 lists (converted) and a 0-D int64 one (read in place) select the
  // same as int64 lists: x[1:3, 1].
  Tensor Begin32 = tensor(std::vector<int32_t>{1, 1}, {2});
  Tensor End32 = tensor(std::vector<int32_t>{3, 2}, {2});
  expectTensor(run("slice_dyn", {X, Begin32, End32}), f32({5, 9}, {2, 1}));
  expectTensor(run("slice_dyn", {X, i64({2}, {}), i64({3}, {}), i64({1}, {})}),
               f32({2, 6, 10}, {3, 1}));
  expectError(
      [&] {
        run("slice_dyn", {X, ints({0, 0}), ints({1})});
      },
      "'begin' has 2 entries but 'end' has 1");
}

TEST(TransformOps, SplitDyn) {
  Tensor X = iota({5, 2});
  auto R = runAll("split_dyn", {X, ints({2, 0, 3})},
                  {{"axis", int64_t(0)}, {"num_outputs", int64_t(3)}});
  ASSERT_EQ(R.size(), 3u);
  expectTensor(R[0], f32({0, 1, 2, 3}, {2, 2}));
  EXPECT_EQ(R[1].shape(), (Shape{0, 2}));
  expectTensor(R[2], f32({4, 5, 6, 7, 8, 9}, {3, 2}));
  expectError(
      [&] {
        runAll("split_dyn", {X, ints({2, 2})}, {{"num_outputs", int64_t(2)}});
      },
      "add up to 4, but axis 0 has extent 5");
}

TEST(TransformOps, SqueezeUnsqueezeFlatten) {
  Tensor X = iota({1, 3, 1, 2});
  EXPECT_EQ(run("squeeze", {X}).shape(), (Shape{3, 2}));
  EXPECT_EQ(run("squeeze", {X}, {{"axes", Ints{-2}}}).shape(),
            (Shape{1, 3, 2}));
  expectTensor(run("squeeze_dyn", {X, ints({0, 2})}), iota({3, 2}));
  expectError(
      [&] {
        run("squeeze", {X}, {{"axes", Ints{1}}});
      },
      "squeeze: cannot squeeze axis 1 of extent 3");
  expectError(
      [&] {
        run("squeeze", {X}, {{"axes", Ints{0, -4}}});
      },
      "appears more than once");

  Tensor Y = iota({3, 4});
  EXPECT_EQ(run("unsqueeze", {Y}, {{"axes", Ints{0, 3}}}).shape(),
            (Shape{1, 3, 4, 1}));
  EXPECT_EQ(run("unsqueeze", {Y}, {{"axes", Ints{-1, 1}}}).shape(),
            (Shape{3, 1, 4, 1}));
  EXPECT_EQ(run("unsqueeze_dyn", {Y, ints({2, 0})}).shape(),
            (Shape{1, 3, 1, 4}));
  expectError(
      [&] {
        run("unsqueeze", {Y}, {{"axes", Ints{4}}});
      },
      "unsqueeze: axis 4 is out of range for rank 3");

  Tensor Z = iota({2, 3, 4});
  EXPECT_EQ(run("flatten", {Z}).shape(), (Shape{2, 12}));
  EXPECT_EQ(run("flatten", {Z}, {{"axis", int64_t(0)}}).shape(),
            (Shape{1, 24}));
  EXPECT_EQ(run("flatten", {Z}, {{"axis", int64_t(3)}}).shape(),
            (Shape{24, 1}));
  EXPECT_EQ(run("flatten", {Z}, {{"axis", int64_t(-1)}}).shape(),
            (Shape{6, 4}));
  expectError(
      [&] {
        run("flatten", {Z}, {{"axis", int64_t(4)}});
      },
      "flatten: axis 4 is out of range [-3, 3]");
}

TEST(TransformOps, ExpandAndTile) {
  Tensor X = f32({1, 2, 3}, {3, 1});
  // np.broadcast_to(x, (2, 3, 2))
  expectTensor(run("expand", {X}, {{"shape", Ints{2, 1, 2}}}),
               f32({1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}, {2, 3, 2}));
  // Bidirectional: shape (1,) keeps x's extent.
  expectTensor(run("expand_dyn", {X, ints({1})}), X);
  expectError(
      [&] {
        run("expand", {X}, {{"shape", Ints{2, 2}}});
      },
      "expand: cannot broadcast");

  Tensor Y = i64({1, 2, 3, 4}, {2, 2});
  // np.tile(y, (2, 3))[0] = [1 2 1 2 1 2]
  Tensor T = run("tile", {Y}, {{"repeats", Ints{2, 3}}});
  EXPECT_EQ(T.shape(), (Shape{4, 6}));
  EXPECT_EQ(T.toIntVector(), (Ints{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                   1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  EXPECT_EQ(run("tile_dyn", {Y, ints({0, 1})}).shape(), (Shape{0, 2}));
  expectError(
      [&] {
        run("tile", {Y}, {{"repeats", Ints{2}}});
      },
      "tile: repeats (2,) must have one entry per dimension");
  expectError([&] { run("tile_dyn", {Y, ints({1, -1})}); }, "negative repeat");
}

TEST(TransformOps, Pad) {
  Tensor X = f32({1, 2, 3, 4}, {2, 2});
  // np.pad(x, ((1, 0), (0, 2)), constant_values=9)
  expectTensor(run("pad", {X}, {{"pads", Ints{1, 0, 0, 2}}, {"value", 9.0}}),
               f32({9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9}, {3, 4}));
  // np.pad([1, 2, 3], (2, 2), 'reflect') = [3 2 1 2 3 2 1]
  Tensor V = f32({1, 2, 3}, {3});
  expectTensor(
      run("pad", {V}, {{"pads", Ints{2, 2}}, {"mode", std::string("reflect")}}),
      f32({3, 2, 1, 2, 3, 2, 1}, {7}));
  // np.pad([1, 2, 3], (2, 1), 'edge') = [1 1 1 2 3 3]
  expectTensor(
      run("pad", {V}, {{"pads", Ints{2, 1}}, {"mode", std::string("edge")}}),
      f32({1, 1, 1, 2, 3, 3}, {6}));
  // Negative pads crop; pad_dyn reads pads and value from tensors.
  expectTensor(run("pad_dyn", {V, ints({-1, 1}), f32({7}, {})}),
               f32({2, 3, 7}, {3}));
  // Axes restrict the padded axes.
  expectTensor(run("pad", {X}, {{"pads", Ints{1, 1}}, {"axes", Ints{-1}}}),
               f32({0, 1, 2, 0, 0, 3, 4, 0}, {2, 4}));
  Tensor I = tensor<int32_t>({5}, {1});
  EXPECT_EQ(
      run("pad", {I}, {{"pads", Ints{1, 1}}, {"value", 2.0}}).toIntVector(),
      (Ints{2, 5, 2}));
  expectError(
      [&] {
        run("pad", {X}, {{"pads", Ints{1, 1}}});
      },
      "must have 2 * 2 entries");
  expectError([&] { run("pad", {V}, {{"pads", Ints{-2, -2}}}); }, "below zero");
  // np.pad([1, 2, 3], (4, 2), 'wrap') = [3 1 2 3 1 2 3 1 2]
  expectTensor(
      run("pad", {V}, {{"pads", Ints{4, 2}}, {"mode", std::string("wrap")}}),
      f32({3, 1, 2, 3, 1, 2, 3, 1, 2}, {9}));
  expectTensor(
      run("pad_dyn", {X, ints({0, 1, 0, 1})}, {{"mode", std::string("wrap")}}),
      f32({2, 1, 2, 1, 4, 3, 4, 3}, {2, 4}));
  expectError(
      [&] {
        run("pad", {V}, {{"pads", Ints{1, 1}}, {"mode", std::string("torus")}});
      },
      "unsupported mode 'torus'");
}

TEST(TransformOps, DepthToSpaceAndBack) {
  Tensor X = iota({1, 8, 1, 1});
  // DCR, b = 2: y[0, c, i, j] = x[0, (i * 2 + j) * 2 + c]
  expectTensor(run("depth_to_space", {X}, {{"blocksize", int64_t(2)}}),
               f32({0, 2, 4, 6, 1, 3, 5, 7}, {1, 2, 2, 2}));
  // CRD: y[0, c, i, j] = x[0, c * 4 + i * 2 + j]
  expectTensor(run("depth_to_space", {X},
                   {{"blocksize", int64_t(2)}, {"mode", std::string("CRD")}}),
               iota({1, 2, 2, 2}));
  // space_to_depth inverts DCR depth_to_space.
  Tensor Y = iota({2, 3, 4, 6});
  Tensor S = run("space_to_depth", {Y}, {{"blocksize", int64_t(2)}});
  EXPECT_EQ(S.shape(), (Shape{2, 12, 2, 3}));
  expectTensor(run("depth_to_space", {S}, {{"blocksize", int64_t(2)}}), Y);
  expectError(
      [&] {
        run("depth_to_space", {iota({1, 3, 1, 1})},
            {{"blocksize", int64_t(2)}});
      },
      "channels 3 are not divisible by blocksize^2 = 4");
  expectError(
      [&] {
        run("space_to_depth", {iota({1, 1, 3, 2})},
            {{"blocksize", int64_t(2)}});
      },
      "must be divisible by blocksize 2");
}

TEST(CreationOps, ShapeSizeConstantOfShape) {
  Tensor X = Tensor::meta({2, 3, 4}, DType::Float32);
  EXPECT_EQ(
      run("shape_of", {iota({2, 3, 4})}, {{"start", int64_t(1)}}).toIntVector(),
      (Ints{3, 4}));
  EXPECT_EQ(run("shape_of", {iota({2, 3, 4})},
                {{"start", int64_t(-10)}, {"end", int64_t(-1)}})
                .toIntVector(),
            (Ints{2, 3}));
  EXPECT_EQ(run("shape_of", {iota({2, 3, 4})},
                {{"start", int64_t(2)}, {"end", int64_t(1)}})
                .numel(),
            0);
  EXPECT_EQ(shapeOf("size", {X})[0].shape, Shape{});
  EXPECT_EQ(run("size", {iota({2, 3, 4})}).toIntVector(), (Ints{24}));

  Attrs A{{"value", Tensor::scalar<int32_t>(7)}};
  Tensor C = run("constant_of_shape", {ints({2, 2})}, A);
  EXPECT_EQ(C.dtype(), DType::Int32);
  EXPECT_EQ(C.toIntVector(), (Ints{7, 7, 7, 7}));
  expectTensor(run("constant_of_shape", {ints({0})}), f32({}, {0}));
  expectError(
      [&] {
        run("constant_of_shape", {ints({2, -1})});
      },
      "negative extent -1");
}

TEST(CreationOps, EyeLikeAndTrilu) {
  Tensor X = Tensor::zeros({2, 3}, DType::Int32);
  expectTensor(run("eye_like", {X},
                   {{"k", int64_t(1)}, {"dtype", std::string("float32")}}),
               f32({0, 1, 0, 0, 0, 1}, {2, 3}));
  EXPECT_EQ(run("eye_like", {X}, {{"k", int64_t(-1)}}).toIntVector(),
            (Ints{0, 0, 0, 1, 0, 0}));
  expectError([&] { run("eye_like", {iota({3})}); },
              "eye_like: input must be 2-D");

  Tensor M = iota({3, 3});
  // np.triu(m, 1) and np.tril(m, -1)
  expectTensor(run("trilu", {M, ints({1})}),
               f32({0, 1, 2, 0, 0, 5, 0, 0, 0}, {3, 3}));
  expectTensor(run("trilu", {M, i64({-1}, {})}, {{"upper", int64_t(0)}}),
               f32({0, 0, 0, 3, 0, 0, 6, 7, 0}, {3, 3}));
  expectTensor(run("trilu", {M}), f32({0, 1, 2, 0, 4, 5, 0, 0, 8}, {3, 3}));
  expectError([&] { run("trilu", {iota({3})}); },
              "trilu: input must have rank >= 2");
  expectError(
      [&] {
        run("trilu", {M, ints({1, 2})});
      },
      "input 'k' must have one element");
}
