//===- nn_ops_test.cc - Convolution, pooling, normalization, gemm ---------===//
#include "KernelTestUtil.h"
#include "kernels/Random.h"

#include <cmath>

using namespace rivet;
using namespace rivet::test;

namespace {

std::vector<float> arange(int N) {
  std::vector<float> V(N);
  for (int I = 0; I < N; ++I)
    V[I] = (float)I;
  return V;
}

Attrs ints(
    std::initializer_list<std::pair<const std::string, std::vector<int64_t>>>
        L) {
  Attrs A;
  for (auto &[K, V] : L)
    A.set(K, V);
  return A;
}

/// Direct-loop 2-D convolution in double (the definition), for cross-checks.
std::vector<double> naiveConv2d(const Tensor &X, const Tensor &W, int64_t G,
                                int64_t S, int64_t P, int64_t D, int64_t OH,
                                int64_t OW) {
  std::vector<double> XV = X.toDoubleVector(), WV = W.toDoubleVector();
  int64_t N = X.shape()[0], C = X.shape()[1], H = X.shape()[2],
          Wd = X.shape()[3];
  int64_t M = W.shape()[0], KH = W.shape()[2], KW = W.shape()[3];
  int64_t CG = C / G, MG = M / G;
  std::vector<double> R(N * M * OH * OW, 0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double Acc = 0;
          int64_t g = m / MG;
          for (int64_t c = 0; c < CG; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * S - P + kh * D, iw = ow * S - P + kw * D;
                if (ih < 0 || ih >= H || iw < 0 || iw >= Wd)
                  continue;
                Acc += XV[((n * C + g * CG + c) * H + ih) * Wd + iw] *
                       WV[((m * CG + c) * KH + kh) * KW + kw];
              }
          R[((n * M + m) * OH + oh) * OW + ow] = Acc;
        }
  return R;
}

} // namespace

TEST(NNOps, ConvPaddingAndStrides) {
  // The example of the ONNX Conv specification.
  Tensor X = f32(arange(25), {1, 1, 5, 5});
  Tensor W = f32(std::vector<float>(9, 1.0f), {1, 1, 3, 3});
  expectTensor(run("conv", {X, W}, ints({{"pads", {1, 1, 1, 1}}})),
               f32({12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                    117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84},
                   {1, 1, 5, 5}));
  expectTensor(run("conv", {X, W}),
               f32({54, 63, 72, 99, 108, 117, 144, 153, 162}, {1, 1, 3, 3}));
  expectTensor(
      run("conv", {X, W}, ints({{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}})),
      f32({12, 27, 24, 63, 108, 81, 72, 117, 84}, {1, 1, 3, 3}));
  // pads (1, 0, 1, 0): H padded by 1 on both ends, W not; stride 2 -> 3x2.
  expectTensor(
      run("conv", {X, W}, ints({{"pads", {1, 0, 1, 0}}, {"strides", {2, 2}}})),
      f32({21, 33, 99, 117, 111, 123}, {1, 1, 3, 2}));
}

TEST(NNOps, ConvGroupsDilationBiasAgainstDirectLoops) {
  Tensor X = randomTensor({2, 4, 7, 6}, DType::Float64, 11);
  Tensor W = randomTensor({6, 2, 3, 2}, DType::Float64, 12);
  Attrs A = ints(
      {{"pads", {2, 1, 2, 1}}, {"dilations", {2, 2}}, {"strides", {1, 1}}});
  A.set("group", int64_t(2));
  // A rectangular kernel: (7 + 4 - 5) + 1 = 7 rows, (6 + 2 - 3) + 1 = 6
  // columns.
  EXPECT_EQ(run("conv", {X, W}, A).shape(), (Shape{2, 6, 7, 6}));

  Tensor W3 = randomTensor({6, 2, 3, 3}, DType::Float64, 13);
  Tensor B = Tensor::fromVector<double>({1, 2, 3, 4, 5, 6}, {6});
  Attrs A3 = ints(
      {{"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}, {"strides", {2, 2}}});
  A3.set("group", int64_t(2));
  Tensor Y = run("conv", {X, W3, B}, A3);
  ASSERT_EQ(Y.shape(), (Shape{2, 6, 4, 3}));
  std::vector<double> Ref = naiveConv2d(X, W3, 2, 2, 2, 2, 4, 3);
  for (size_t I = 0; I < Ref.size(); ++I)
    Ref[I] += (double)((I / 12) % 6 + 1);
  expectTensor(Y, Tensor::fromVector(Ref, {2, 6, 4, 3}), 1e-12, 1e-12);
}

TEST(NNOps, Conv1DAnd3DAndAutoPad) {
  Tensor X1 = f32({1, 2, 3, 4, 5}, {1, 1, 5});
  Tensor W1 = f32({1, 0, -1}, {1, 1, 3});
  expectTensor(run("conv", {X1, W1}), f32({-2, -2, -2}, {1, 1, 3}));
  Attrs Same;
  Same.set("auto_pad", std::string("SAME_UPPER"));
  expectTensor(run("conv", {X1, W1}, Same),
               f32({-2, -2, -2, -2, 4}, {1, 1, 5}));
  Same.set("auto_pad", std::string("SAME_LOWER"));
  Same.set("strides", std::vector<int64_t>{2});
  // Output 3, total pad 2 -> (1, 1).
  expectTensor(run("conv", {X1, W1}, Same), f32({-2, -2, 4}, {1, 1, 3}));
  Attrs Valid;
  Valid.set("auto_pad", std::string("VALID"));
  Valid.set("pads", std::vector<int64_t>{5, 5}); // ignored under VALID
  expectTensor(run("conv", {X1, W1}, Valid), f32({-2, -2, -2}, {1, 1, 3}));

  Tensor X3 = f32(std::vector<float>(2 * 3 * 4 * 5, 1.0f), {1, 2, 3, 4, 5});
  Tensor W3 = f32(std::vector<float>(2 * 2 * 2 * 2, 1.0f), {1, 2, 2, 2, 2});
  Tensor Y3 = run("conv", {X3, W3});
  EXPECT_EQ(Y3.shape(), (Shape{1, 1, 2, 3, 4}));
  EXPECT_EQ(Y3.elementAsDouble(0), 16.0);

  // float16 computes through float.
  Tensor XH = X1.cast(DType::Float16), WH = W1.cast(DType::Float16);
  expectTensor(run("conv", {XH, WH}),
               f32({-2, -2, -2}, {1, 1, 3}).cast(DType::Float16));
}

TEST(NNOps, ConvErrors) {
  Tensor X = f32(arange(16), {1, 2, 2, 4});
  expectError(
      [&] {
        run("conv", {X, f32(arange(12), {1, 3, 2, 2})});
      },
      "conv: weight (1, 3, 2, 2) expects 3 input channels");
  expectError(
      [&] {
        run("conv", {X, f32(arange(8), {1, 2, 2, 2})}, [] {
          Attrs A;
          A.set("auto_pad", std::string("SAME"));
          return A;
        }());
      },
      "conv: unknown auto_pad 'SAME'");
  expectError(
      [&] {
        run("conv", {X, f32(arange(2 * 2 * 3 * 3), {2, 2, 3, 3})});
      },
      "conv: the window (3 with dilation 1) is larger than the padded input");
  expectError(
      [&] {
        run("conv", {X, f32(arange(8), {1, 2, 2, 2}), f32({1, 2}, {2})});
      },
      "conv: bias must have shape (1,)");
  expectError(
      [&] {
        run("conv", {i64({1}, {1, 1, 1}), i64({1}, {1, 1, 1})});
      },
      "conv: input 'x' must have a float dtype");
  expectError(
      [&] {
        run("conv", {X, f32(arange(8), {1, 2, 2, 2})},
            ints({{"strides", {1}}}));
      },
      "conv: attribute 'strides' must have 2 entries");
}

TEST(NNOps, ConvTranspose) {
  // The example of the ONNX ConvTranspose specification.
  Tensor X = f32(arange(9), {1, 1, 3, 3});
  Tensor W = f32(std::vector<float>(18, 1.0f), {1, 2, 3, 3});
  std::vector<float> One = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                            27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<float> Both = One;
  Both.insert(Both.end(), One.begin(), One.end());
  expectTensor(run("conv_transpose", {X, W}), f32(Both, {1, 2, 5, 5}));
  // pads crop the full output; output_shape larger than it extends with zeros.
  Tensor Cropped =
      run("conv_transpose", {X, W}, ints({{"pads", {1, 1, 1, 1}}}));
  EXPECT_EQ(Cropped.shape(), (Shape{1, 2, 3, 3}));
  EXPECT_EQ(Cropped.elementAsDouble(0), 8.0);
  Tensor Ext = run("conv_transpose", {X, W}, ints({{"output_shape", {6, 5}}}));
  EXPECT_EQ(Ext.shape(), (Shape{1, 2, 6, 5}));
  EXPECT_EQ(Ext.elementAsDouble(25), 0.0); // the added last row
  EXPECT_EQ(Ext.elementAsDouble(24), 8.0);
  // Stride 2, 1-D with bias: x = [1, 2], w = [1, 1, 1] -> [1, 1, 3, 2, 2] + 1.
  Tensor Y1 =
      run("conv_transpose",
          {f32({1, 2}, {1, 1, 2}), f32({1, 1, 1}, {1, 1, 3}), f32({1}, {1})},
          ints({{"strides", {2}}}));
  expectTensor(Y1, f32({2, 2, 4, 3, 3}, {1, 1, 5}));
  expectError(
      [&] {
        run("conv_transpose", {X, f32(arange(18), {2, 1, 3, 3})});
      },
      "conv_transpose: weight (2, 1, 3, 3) must have 1");
}

TEST(NNOps, MaxPoolWithIndices) {
  Tensor X = f32(arange(16), {1, 1, 4, 4});
  Attrs A = ints({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
  expectTensor(run("max_pool", {X}, A), f32({5, 7, 13, 15}, {1, 1, 2, 2}));
  A.set("with_indices", int64_t(1));
  std::vector<Tensor> R = runAll("max_pool", {X}, A);
  ASSERT_EQ(R.size(), 2u);
  expectTensor(R[1], i64({5, 7, 13, 15}, {1, 1, 2, 2}));
  A.set("storage_order", int64_t(1));
  expectTensor(runAll("max_pool", {X}, A)[1],
               i64({5, 13, 7, 15}, {1, 1, 2, 2}));
  // Indices include the batch/channel offset.
  Tensor X2 = f32(arange(32), {1, 2, 4, 4});
  A.set("storage_order", int64_t(0));
  expectTensor(runAll("max_pool", {X2}, A)[1],
               i64({5, 7, 13, 15, 21, 23, 29, 31}, {1, 2, 2, 2}));
}

TEST(NNOps, MaxPoolCeilDilationsPadsAndDTypes) {
  Tensor X = f32(arange(16), {1, 1, 4, 4});
  Attrs A = ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}});
  EXPECT_EQ(run("max_pool", {X}, A).shape(), (Shape{1, 1, 1, 1}));
  A.set("ceil_mode", int64_t(1));
  expectTensor(run("max_pool", {X}, A), f32({10, 11, 14, 15}, {1, 1, 2, 2}));
  Attrs D = ints({{"kernel_shape", {2, 2}}, {"dilations", {2, 2}}});
  expectTensor(run("max_pool", {X}, D), f32({10, 11, 14, 15}, {1, 1, 2, 2}));
  // Padding never wins, even against negative values.
  Tensor Neg = f32({-1, -2, -3, -4}, {1, 1, 2, 2});
  expectTensor(run("max_pool", {Neg},
                   ints({{"kernel_shape", {2, 2}}, {"pads", {1, 1, 1, 1}}})),
               f32({-1, -1, -2, -1, -1, -2, -3, -3, -4}, {1, 1, 3, 3}));
  Tensor U = tensor<uint8_t>({1, 200, 3, 4}, {1, 1, 2, 2});
  expectTensor(run("max_pool", {U}, ints({{"kernel_shape", {2, 1}}})),
               tensor<uint8_t>({3, 200}, {1, 1, 1, 2}));
  expectError(
      [&] {
        run("max_pool", {X}, ints({{"kernel_shape", {2}}}));
      },
      "max_pool: attribute 'kernel_shape' must have 2 entries");
  expectError(
      [&] {
        run("max_pool", {f32({1}, {1, 1})}, ints({{"kernel_shape", {1}}}));
      },
      "max_pool: input 'x' must have rank >= 3");
  expectError(
      [&] {
        run("max_pool", {i64({1}, {1, 1, 1})}, ints({{"kernel_shape", {1}}}));
      },
      "max_pool: input 'x' must be a float dtype, int8 or uint8");
}

TEST(NNOps, AveragePoolCountIncludePad) {
  Tensor X = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  Attrs A = ints({{"kernel_shape", {2, 2}}, {"pads", {1, 1, 1, 1}}});
  expectTensor(run("avg_pool", {X}, A),
               f32({1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}, {1, 1, 3, 3}));
  A.set("count_include_pad", int64_t(1));
  expectTensor(
      run("avg_pool", {X}, A),
      f32({0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1}, {1, 1, 3, 3}));
  // SAME_UPPER on 1-D: [1, 2, 3], k 2 -> pads (0, 1): [1.5, 2.5, 3].
  Attrs S = ints({{"kernel_shape", {2}}});
  S.set("auto_pad", std::string("SAME_UPPER"));
  expectTensor(run("avg_pool", {f32({1, 2, 3}, {1, 1, 3})}, S),
               f32({1.5, 2.5, 3}, {1, 1, 3}));
  expectTensor(
      run("lp_pool", {f32({3, 4}, {1, 1, 2})}, ints({{"kernel_shape", {2}}})),
      f32({5}, {1, 1, 1}));
}

TEST(NNOps, GlobalPools) {
  Tensor X = f32({1, 2, 3, 4, -1, -2, -3, -4}, {1, 2, 2, 2});
  expectTensor(run("global_avg_pool", {X}), f32({2.5, -2.5}, {1, 2, 1, 1}));
  expectTensor(run("global_max_pool", {X}), f32({4, -1}, {1, 2, 1, 1}));
  expectError(
      [&] {
        run("global_avg_pool", {f32({1, 2}, {1, 2})});
      },
      "global_avg_pool: input 'x' must have rank >= 3");
}

TEST(NNOps, MaxUnpool) {
  Tensor X = f32({5, 6, 7, 8}, {1, 1, 2, 2});
  Tensor I = i64({5, 7, 13, 15}, {1, 1, 2, 2});
  Attrs A = ints({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}});
  std::vector<float> E(16, 0);
  E[5] = 5, E[7] = 6, E[13] = 7, E[15] = 8;
  expectTensor(run("max_unpool", {X, I}, A), f32(E, {1, 1, 4, 4}));
  // A larger output shape keeps the coordinates of the default one.
  Tensor Y = run("max_unpool_to_shape", {X, I, i64({1, 1, 5, 5}, {4})}, A);
  EXPECT_EQ(Y.shape(), (Shape{1, 1, 5, 5}));
  EXPECT_EQ(Y.elementAsDouble(6), 5.0);
  EXPECT_EQ(Y.elementAsDouble(18), 8.0);
  expectError(
      [&] {
        run("max_unpool", {X, i64({5, 7, 13, 16}, {1, 1, 2, 2})}, A);
      },
      "max_unpool: index 16 is out of range");
}

TEST(NNOps, BatchNorm) {
  Tensor X = f32({1, 2}, {1, 2, 1, 1});
  Attrs A;
  A.set("epsilon", 0.0);
  expectTensor(run("batch_norm",
                   {X, f32({1, 2}, {2}), f32({0, 1}, {2}), f32({0, 1}, {2}),
                    f32({1, 4}, {2})},
                   A),
               f32({1, 2}, {1, 2, 1, 1}));
  // Training: batch statistics and running-stat update.
  A.set("training", int64_t(1));
  A.set("momentum", 0.5);
  std::vector<Tensor> R = runAll("batch_norm",
                                 {f32({1, 3}, {2, 1}), f32({1}, {1}),
                                  f32({0}, {1}), f32({0}, {1}), f32({3}, {1})},
                                 A);
  ASSERT_EQ(R.size(), 3u);
  expectTensor(R[0], f32({-1, 1}, {2, 1}));
  expectTensor(R[1], f32({1}, {1}));
  expectTensor(R[2], f32({2}, {1}));
  expectError(
      [&] {
        run("batch_norm", {X, f32({1}, {1}), f32({0, 1}, {2}), f32({0, 1}, {2}),
                           f32({1, 4}, {2})});
      },
      "batch_norm: input 'scale' must have shape (2,)");
}

TEST(NNOps, InstanceAndLayerNorm) {
  Attrs E0;
  E0.set("epsilon", 0.0);
  expectTensor(run("instance_norm",
                   {f32({1, 3}, {1, 1, 2}), f32({2}, {1}), f32({1}, {1})}, E0),
               f32({-1, 3}, {1, 1, 2}));
  Tensor X = f32({1, 3, 2, 6}, {2, 2});
  expectTensor(run("layer_norm", {X, f32({2, 3}, {2}), f32({1, 1}, {2})}, E0),
               f32({-1, 4, -1, 4}, {2, 2}));
  Attrs S = E0;
  S.set("with_stats", int64_t(1));
  std::vector<Tensor> R = runAll("layer_norm", {X, f32({1}, {1})}, S);
  ASSERT_EQ(R.size(), 3u);
  expectTensor(R[0], f32({-1, 1, -1, 1}, {2, 2}));
  expectTensor(R[1], f32({2, 4}, {2, 1}));
  expectTensor(R[2], f32({1, 0.5}, {2, 1}));
  // axis 0 normalizes everything.
  S.set("axis", int64_t(0));
  EXPECT_EQ(runAll("layer_norm", {X, f32({1, 1, 1, 1}, {2, 2})}, S)[1].shape(),
            (Shape{1, 1}));
  expectError(
      [&] {
        run("layer_norm", {X, f32({1, 2, 3}, {3})});
      },
      "layer_norm: input 'scale' (3,) does not broadcast");
  expectError(
      [&] {
        run("layer_norm", {X, f32({1}, {1})}, [] {
          Attrs A;
          A.set("axis", int64_t(2));
          return A;
        }());
      },
      "layer_norm: axis 2 is out of range for rank 2");
}

TEST(NNOps, LRNAndMeanVarianceNorm) {
  Attrs A;
  A.set("size", int64_t(3));
  A.set("alpha", 3.0);
  A.set("beta", 1.0);
  A.set("bias", 1.0);
  expectTensor(run("lrn", {f32({1, 2, 3}, {1, 3, 1, 1})}, A),
               f32({1.0f / 6, 2.0f / 15, 3.0f / 14}, {1, 3, 1, 1}));
  expectTensor(run("mean_variance_norm", {f32({1, 3, 5, 9}, {1, 2, 1, 2})}),
               f32({-1, 1, -1, 1}, {1, 2, 1, 2}), 1e-6, 1e-6);
  expectError([&] { run("mean_variance_norm", {f32({1}, {1})}); },
              "mean_variance_norm: axis 2 is out of range for rank 1");
}

TEST(NNOps, Gemm) {
  Tensor A = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor B = f32({1, 0, 0, 1, 1, 1}, {3, 2});
  expectTensor(run("gemm", {A, B}), f32({4, 5, 10, 11}, {2, 2}));
  Attrs T;
  T.set("trans_a", int64_t(1));
  T.set("trans_b", int64_t(1));
  T.set("alpha", 2.0);
  T.set("beta", 0.5);
  // a^T is [3, 2]... use a [3, 2] a and [2, 3] b so that a^T b^T is [2, 2].
  Tensor AT = f32({1, 4, 2, 5, 3, 6}, {3, 2});
  Tensor BT = f32({1, 0, 1, 0, 1, 1}, {2, 3});
  expectTensor(run("gemm", {AT, BT, f32({2, 4}, {2})}, T),
               f32({9, 12, 21, 24}, {2, 2}));
  expectTensor(
      run("gemm", {tensor<int32_t>({1, 2}, {1, 2}),
                   tensor<int32_t>({3, 4}, {2, 1}), tensor<int32_t>({1}, {})}),
      tensor<int32_t>({12}, {1, 1}));
  expectError([&] { run("gemm", {A, A}); }, "gemm: inner dimensions differ");
  expectError(
      [&] {
        run("gemm", {A, B, f32({1, 2, 3}, {3})});
      },
      "gemm: c (3,) cannot be broadcast to the result (2, 2)");
}

TEST(NNOps, ConvIntegerAndQLinearConv) {
  Tensor X = tensor<uint8_t>({2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 1, 3, 3});
  Tensor W = tensor<uint8_t>({1, 1, 1, 1}, {1, 1, 2, 2});
  expectTensor(run("conv_integer", {X, W, tensor<uint8_t>({1}, {})}),
               tensor<int32_t>({12, 16, 24, 28}, {1, 1, 2, 2}));
  expectTensor(run("conv_integer", {X, W}),
               tensor<int32_t>({16, 20, 28, 32}, {1, 1, 2, 2}));
  // qlinear_conv: 10 * 4 * (0.5 * 0.25 / 0.1) = 50, plus the zero point 5.
  auto QL = [](uint8_t XV) {
    return run("qlinear_conv",
               {tensor<uint8_t>({XV}, {1, 1, 1, 1}), f32({0.5}, {}),
                tensor<uint8_t>({0}, {}), tensor<int8_t>({4}, {1, 1, 1, 1}),
                f32({0.25}, {1}), tensor<int8_t>({0}, {1}), f32({0.1f}, {}),
                tensor<uint8_t>({5}, {})});
  };
  expectTensor(QL(10), tensor<uint8_t>({55}, {1, 1, 1, 1}));
  expectTensor(QL(255), tensor<uint8_t>({255}, {1, 1, 1, 1})); // saturates
  expectError(
      [&] {
        run("conv_integer", {X.cast(DType::Float32), W});
      },
      "conv_integer: input 'x' must be uint8 or int8");
}
