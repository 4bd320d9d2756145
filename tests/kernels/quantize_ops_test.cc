//===- quantize_ops_test.cc - Quantization kernels ------------------------===//
#include "KernelTestUtil.h"

using namespace rivet;
using namespace rivet::test;

TEST(QuantizeOps, QuantizeRoundsHalfToEvenAndSaturates) {
  Tensor X = f32({0, 1.5, 2.5, -3, 300, 3.5}, {6});
  expectTensor(run("quantize_linear", {X, f32({1}, {})}),
               tensor<uint8_t>({0, 2, 2, 0, 255, 4}, {6}));
  expectTensor(
      run("quantize_linear", {X, f32({1}, {}), tensor<int8_t>({-1}, {})}),
      tensor<int8_t>({-1, 1, 1, -4, 127, 3}, {6}));
  // Scale 2, zero point 128: x / 2 + 128.
  expectTensor(run("quantize_linear", {f32({-256, 2, 3}, {3}), f32({2}, {1}),
                                       tensor<uint8_t>({128}, {1})}),
               tensor<uint8_t>({0, 129, 130}, {3}));
  // int32 input.
  expectTensor(
      run("quantize_linear", {tensor<int32_t>({10, -10}, {2}), f32({4}, {})}),
      tensor<uint8_t>({2, 0}, {2}));
}

TEST(QuantizeOps, PerAxis) {
  // x [1, 2, 2], scale per channel (axis 1): [1, 2], zero points [0, 10].
  Tensor X = f32({1, 2, 4, 8}, {1, 2, 2});
  Tensor S = f32({1, 2}, {2});
  Tensor Z = tensor<uint8_t>({0, 10}, {2});
  Tensor Q = run("quantize_linear", {X, S, Z});
  expectTensor(Q, tensor<uint8_t>({1, 2, 12, 14}, {1, 2, 2}));
  expectTensor(run("dequantize_linear", {Q, S, Z}), X);
  // Axis -1 selects the last axis.
  Attrs A;
  A.set("axis", int64_t(-1));
  expectTensor(run("quantize_linear", {X, S, Z}, A),
               tensor<uint8_t>({1, 11, 4, 14}, {1, 2, 2}));
  expectError(
      [&] {
        run("quantize_linear", {X, f32({1, 2, 3}, {3})});
      },
      "quantize_linear: 'scale' has 3 elements but axis 1");
  expectError(
      [&] {
        run("quantize_linear", {X, S, tensor<uint8_t>({0}, {1})});
      },
      "quantize_linear: 'zero_point' (1,) must have the shape of 'scale' (2,)");
  expectError(
      [&] {
        run("quantize_linear", {X, f32({1}, {}), tensor<int32_t>({0}, {})});
      },
      "quantize_linear: cannot quantize to int32");
}

TEST(QuantizeOps, Dequantize) {
  expectTensor(
      run("dequantize_linear", {tensor<uint8_t>({0, 3, 128, 255}, {4}),
                                f32({2}, {}), tensor<uint8_t>({128}, {})}),
      f32({-256, -250, 0, 254}, {4}));
  expectTensor(
      run("dequantize_linear", {tensor<int32_t>({-5, 7}, {2}), f32({0.5}, {})}),
      f32({-2.5, 3.5}, {2}));
  expectError(
      [&] {
        run("dequantize_linear", {f32({1}, {1}), f32({1}, {})});
      },
      "dequantize_linear: cannot dequantize float32");
}

TEST(QuantizeOps, DynamicQuantize) {
  // Range [-1, 4] -> scale 5/255, zero point round(1 / scale) = 51.
  std::vector<Tensor> R =
      runAll("dynamic_quantize_linear", {f32({0, 2, -1, 4}, {2, 2})});
  ASSERT_EQ(R.size(), 3u);
  expectTensor(R[0], tensor<uint8_t>({51, 153, 0, 255}, {2, 2}));
  expectTensor(R[1], f32({5.0f / 255.0f}, {}));
  expectTensor(R[2], tensor<uint8_t>({51}, {}));
  // All zeros: scale 0, everything maps to the zero point 0.
  std::vector<Tensor> Z = runAll("dynamic_quantize_linear", {f32({0, 0}, {2})});
  expectTensor(Z[0], tensor<uint8_t>({0, 0}, {2}));
  expectTensor(Z[1], f32({0}, {}));
}

TEST(QuantizeOps, IntegerAndQuantizedMatmul) {
  // a - 1 = [[1, 2], [3, 4]], b - 0 = [[1, 0], [1, 1]].
  Tensor A = tensor<uint8_t>({2, 3, 4, 5}, {2, 2});
  Tensor B = tensor<int8_t>({1, 0, 1, 1}, {2, 2});
  expectTensor(run("matmul_integer", {A, B, tensor<uint8_t>({1}, {})}),
               tensor<int32_t>({3, 2, 7, 4}, {2, 2}));
  // Per-row a zero point [1, 2] and per-column b zero point [0, 1]:
  // [[1, 2], [2, 3]] @ [[1, -1], [1, 0]].
  expectTensor(run("matmul_integer", {A, B, tensor<uint8_t>({1, 2}, {2}),
                                      tensor<int8_t>({0, 1}, {2})}),
               tensor<int32_t>({3, -1, 5, -2}, {2, 2}));
  // qlinear_matmul: [[3, 2], [7, 4]] * (0.5 * 1 / 2) = [[0.75, 0.5], [1.75, 1]]
  // -> round half to even [[1, 0], [2, 1]] + 10.
  expectTensor(
      run("qlinear_matmul",
          {A, f32({0.5}, {}), tensor<uint8_t>({1}, {}), B, f32({1}, {}),
           tensor<int8_t>({0}, {}), f32({2}, {}), tensor<uint8_t>({10}, {})}),
      tensor<uint8_t>({11, 10, 12, 11}, {2, 2}));
  expectError(
      [&] {
        run("matmul_integer", {A, B, tensor<uint8_t>({1, 2, 3}, {3})});
      },
      "matmul_integer: zero point (3,) of 'a' does not match its shape (2, 2)");
  expectError(
      [&] {
        run("matmul_integer", {A.cast(DType::Int32), B});
      },
      "matmul_integer: input 'a' must be uint8 or int8");
}
