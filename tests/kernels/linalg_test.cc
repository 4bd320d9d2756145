//===- linalg_test.cc - dense and matmul kernels --------------------------===//
#include "KernelTestUtil.h"
#include "kernels/Random.h"

using namespace rivet;
using namespace rivet::test;

/// Naive matmul of 2-D row-major double data, for cross-checking.
static std::vector<double> naive(const std::vector<double> &A,
                                 const std::vector<double> &B, int64_t M,
                                 int64_t K, int64_t N) {
  std::vector<double> C(M * N, 0);
  for (int64_t I = 0; I < M; ++I)
    for (int64_t J = 0; J < N; ++J)
      for (int64_t L = 0; L < K; ++L)
        C[I * N + J] += A[I * K + L] * B[L * N + J];
  return C;
}

TEST(Linalg, Dense) {
  Tensor X = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor W = f32({1, 0, -1, 2, 2, 2}, {2, 3});
  expectTensor(run("dense", {X, W}), f32({-2, 12, -2, 30}, {2, 2}));
  // Leading batch dims.
  Tensor X3 = X.reshape({2, 1, 3});
  EXPECT_EQ(run("dense", {X3, W}).shape(), (Shape{2, 1, 2}));
  expectError(
      [&] {
        run("dense", {X, f32({1, 2}, {1, 2})});
      },
      "dense: reduction dimensions differ");
  expectError(
      [&] {
        run("dense", {i64({1}, {1, 1}), i64({1}, {1, 1})});
      },
      "dense: input 'x' must have a float dtype");
}

TEST(Linalg, Matmul2DAgainstNaive) {
  Tensor A = randomTensor({5, 7}, DType::Float64, 1);
  Tensor B = randomTensor({7, 3}, DType::Float64, 2);
  Tensor C = run("matmul", {A, B});
  EXPECT_EQ(C.shape(), (Shape{5, 3}));
  expectTensor(
      C,
      Tensor::fromVector(naive(A.toDoubleVector(), B.toDoubleVector(), 5, 7, 3),
                         {5, 3}),
      1e-12, 1e-12);
}

TEST(Linalg, MatmulNumPySemantics) {
  Tensor M = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor V = f32({1, 0, -1}, {3});
  expectTensor(run("matmul", {M, V}), f32({-2, -2}, {2}));
  expectTensor(run("matmul", {f32({1, 1}, {2}), M}), f32({5, 7, 9}, {3}));
  expectTensor(run("matmul", {V, V}), f32({2}, {}));
  // Batch broadcast: (2, 1, 2, 3) x (3, 3, 1) -> (2, 3, 2, 1).
  Tensor A = randomTensor({2, 1, 2, 3}, DType::Float32, 3);
  Tensor B = randomTensor({3, 3, 1}, DType::Float32, 4);
  Tensor C = run("matmul", {A, B});
  ASSERT_EQ(C.shape(), (Shape{2, 3, 2, 1}));
  std::vector<double> AD = A.toDoubleVector(), BD = B.toDoubleVector(),
                      CD = C.toDoubleVector();
  for (int I = 0; I < 2; ++I)
    for (int J = 0; J < 3; ++J) {
      std::vector<double> Am(AD.begin() + I * 6, AD.begin() + I * 6 + 6);
      std::vector<double> Bm(BD.begin() + J * 3, BD.begin() + J * 3 + 3);
      std::vector<double> R = naive(Am, Bm, 2, 3, 1);
      for (int K = 0; K < 2; ++K)
        EXPECT_NEAR(CD[(I * 3 + J) * 2 + K], R[K], 1e-5);
    }
  // Integers and float16.
  expectTensor(
      run("matmul", {i64({1, 2, 3, 4}, {2, 2}), i64({5, 6, 7, 8}, {2, 2})}),
      i64({19, 22, 43, 50}, {2, 2}));
  Tensor H = f32({1, 2, 3, 4}, {2, 2}).cast(DType::Float16);
  expectTensor(run("matmul", {H, H}),
               f32({7, 10, 15, 22}, {2, 2}).cast(DType::Float16));
  // K = 0 gives zeros.
  expectTensor(run("matmul", {f32({}, {2, 0}), f32({}, {0, 2})}),
               f32({0, 0, 0, 0}, {2, 2}));
}

TEST(Linalg, MatmulErrors) {
  expectError(
      [] {
        run("matmul", {f32({1, 2}, {1, 2}), f32({1, 2}, {1, 2})});
      },
      "matmul: inner dimensions differ: (1, 2) and (1, 2)");
  expectError(
      [] {
        run("matmul", {f32({1}, {}), f32({1}, {1})});
      },
      "rank >= 1");
  expectError(
      [] {
        shapeOf("matmul", {Tensor::meta({2, 2, 3}, DType::Float32),
                           Tensor::meta({3, 3, 4}, DType::Float32)});
      },
      "matmul: cannot broadcast batch dimensions");
  auto S = shapeOf("matmul", {Tensor::meta({4, 1, 2, 3}, DType::Float32),
                              Tensor::meta({5, 3, 6}, DType::Float32)});
  EXPECT_EQ(S[0].shape, (Shape{4, 5, 2, 6}));
}
