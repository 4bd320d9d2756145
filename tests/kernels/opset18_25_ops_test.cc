//===- opset18_25_ops_test.cc - Kernels of the opset 18-25 operators ------===//
//
// bitwise_* and the shifts on every integer width, rms_norm, group_norm (per
// channel and per group), rotary_embedding, tensor_scatter and the random
// operators, against values computed here from their definitions.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "kernels/Random.h"

#include <cmath>
#include <limits>

using namespace rivet;
using namespace rivet::test;

namespace {

Attrs attrs(std::initializer_list<std::pair<const std::string, int64_t>> L) {
  Attrs A;
  for (auto &[K, V] : L)
    A.set(K, V);
  return A;
}

void expectNear(const Tensor &Got, const std::vector<double> &Want,
                double Tol) {
  ASSERT_EQ(Got.numel(), (int64_t)Want.size());
  for (int64_t I = 0; I < Got.numel(); ++I)
    EXPECT_NEAR(Got.elementAsDouble(I), Want[(size_t)I], Tol) << "at " << I;
}

/// Exact comparison (a double holds no uint64 above 2^53 exactly).
void expectU64(const Tensor &Got, const std::vector<uint64_t> &Want) {
  ASSERT_EQ(Got.dtype(), DType::UInt64);
  EXPECT_EQ(std::vector<uint64_t>(Got.data<uint64_t>(),
                                  Got.data<uint64_t>() + Got.numel()),
            Want);
}

} // namespace

// ONNX BitShift is defined on the unsigned types; the IR shifts take every
// integer type. A shift by the bit width or more gives 0.
TEST(Opset18To25Ops, ShiftsOnUInt64) {
  constexpr uint64_t Max = std::numeric_limits<uint64_t>::max();
  Tensor X = tensor<uint64_t>({Max, 1, 0x8000000000000000ull, 5}, {4});
  Tensor S = tensor<uint64_t>({1, 63, 63, 64}, {4});
  expectU64(run("left_shift", {X, S}), {Max - 1, 0x8000000000000000ull, 0, 0});
  expectU64(run("right_shift", {X, S}), {Max >> 1, 0, 1, 0});
  // Signed: right shifts are arithmetic.
  expectTensor(run("right_shift", {tensor<int16_t>({-8, 8}, {2}),
                                   tensor<int16_t>({1, 16}, {2})}),
               tensor<int16_t>({-4, 0}, {2}));
}

TEST(Opset18To25Ops, BitwiseOnEveryIntegerWidth) {
  expectTensor(run("bitwise_and", {tensor<uint8_t>({0xF0, 0x3C}, {2, 1}),
                                   tensor<uint8_t>({0xFF, 0x0F}, {2})}),
               tensor<uint8_t>({0xF0, 0x00, 0x3C, 0x0C}, {2, 2}));
  expectTensor(run("bitwise_or", {tensor<int8_t>({-128, 5}, {2}),
                                  tensor<int8_t>({1, 2}, {2})}),
               tensor<int8_t>({-127, 7}, {2}));
  constexpr uint64_t Top = 0x8000000000000000ull;
  expectU64(run("bitwise_xor", {tensor<uint64_t>({Top | 1, 6}, {2}),
                                tensor<uint64_t>({Top | 1, 3}, {2})}),
            {0, 5});
  expectU64(run("bitwise_or",
                {tensor<uint64_t>({Top, 6}, {2}), tensor<uint64_t>({1}, {1})}),
            {Top | 1, 7});
  expectTensor(run("bitwise_not", {tensor<int32_t>({0, -1, 5}, {3})}),
               tensor<int32_t>({-1, 0, -6}, {3}));
  expectTensor(run("bitwise_not", {tensor<uint16_t>({0, 0xFF00}, {2})}),
               tensor<uint16_t>({0xFFFF, 0x00FF}, {2}));
  expectError(
      [] {
        run("bitwise_and", {f32({1}, {1}), f32({1}, {1})});
      },
      "integer");
}

TEST(Opset18To25Ops, RmsNormMatchesTheDefinition) {
  // x [2, 3, 4] over the last axis; the scale [3, 1] varies along axis 1,
  // before the normalized axis (unidirectional broadcasting).
  Tensor X = randomTensor({2, 3, 4}, DType::Float32, 3);
  Tensor Scale = f32({0.5f, 2.0f, -1.0f}, {3, 1});
  double Eps = 0.1;
  Attrs A;
  A.set("epsilon", Eps);
  std::vector<double> XV = X.toDoubleVector(), Want(XV.size());
  for (size_t R = 0; R < 6; ++R) {
    double Sq = 0;
    for (size_t J = 0; J < 4; ++J)
      Sq += XV[R * 4 + J] * XV[R * 4 + J];
    double Inv = 1 / std::sqrt(Sq / 4 + Eps);
    for (size_t J = 0; J < 4; ++J)
      Want[R * 4 + J] = XV[R * 4 + J] * Inv * Scale.elementAsDouble(R % 3);
  }
  expectNear(run("rms_norm", {X, Scale}, A), Want, 1e-6);
  // Over axes [1, 3) with a float16 x and a float64 scale.
  Tensor X16 = randomTensor({2, 3, 4}, DType::Float16, 5);
  Tensor S64 = randomTensor({3, 4}, DType::Float64, 6);
  A.set("axis", int64_t(1));
  std::vector<double> HV = X16.toDoubleVector(), W2(HV.size());
  for (size_t R = 0; R < 2; ++R) {
    double Sq = 0;
    for (size_t J = 0; J < 12; ++J)
      Sq += HV[R * 12 + J] * HV[R * 12 + J];
    for (size_t J = 0; J < 12; ++J)
      W2[R * 12 + J] = HV[R * 12 + J] / std::sqrt(Sq / 12 + Eps) *
                       S64.elementAsDouble((int64_t)J);
  }
  Tensor Y = run("rms_norm", {X16, S64}, A);
  EXPECT_EQ(Y.dtype(), DType::Float16);
  expectNear(Y, W2, 2e-3);
  expectError(
      [&] {
        run("rms_norm", {X, f32({1, 2}, {2})});
      },
      "does not broadcast");
}

// GroupNormalization-18's per-group scale and bias equal -21's per-channel
// ones repeated over each group's channels.
TEST(Opset18To25Ops, GroupNormPerGroupEqualsRepeatedPerChannel) {
  Tensor X = randomTensor({2, 6, 3, 2}, DType::Float32, 9);
  Tensor GS = f32({0.5f, -2.0f, 1.5f}, {3}), GB = f32({1.0f, 0.0f, -3.0f}, {3});
  Tensor CS = f32({0.5f, 0.5f, -2.0f, -2.0f, 1.5f, 1.5f}, {6});
  Tensor CB = f32({1.0f, 1.0f, 0.0f, 0.0f, -3.0f, -3.0f}, {6});
  Tensor PerGroup = run("group_norm", {X, GS, GB},
                        attrs({{"num_groups", 3}, {"per_group", 1}}));
  Tensor PerChannel =
      run("group_norm", {X, CS, CB}, attrs({{"num_groups", 3}}));
  expectTensor(PerGroup, PerChannel);
  // The definition: each (instance, group) block of 2 channels x 6 positions.
  std::vector<double> XV = X.toDoubleVector(), Want(XV.size());
  for (size_t Blk = 0; Blk < 6; ++Blk) {
    double M = 0, V = 0;
    for (size_t J = 0; J < 12; ++J)
      M += XV[Blk * 12 + J] / 12;
    for (size_t J = 0; J < 12; ++J)
      V += (XV[Blk * 12 + J] - M) * (XV[Blk * 12 + J] - M) / 12;
    for (size_t J = 0; J < 12; ++J) {
      size_t G = Blk % 3;
      Want[Blk * 12 + J] = (XV[Blk * 12 + J] - M) / std::sqrt(V + 1e-5) *
                               GS.elementAsDouble((int64_t)G) +
                           GB.elementAsDouble((int64_t)G);
    }
  }
  expectNear(PerChannel, Want, 1e-5);
  expectError(
      [&] {
        run("group_norm", {X, GS, GB}, attrs({{"num_groups", 3}}));
      },
      "must have shape (6,)");
  expectError(
      [&] {
        run("group_norm", {X, CS, CB}, attrs({{"num_groups", 4}}));
      },
      "does not divide");
}

TEST(Opset18To25Ops, RotaryEmbeddingHalvesAndInterleaved) {
  // One batch, one head, two positions, head size 4 (all rotated).
  Tensor X = f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
  double A0 = 0.3, A1 = -1.1, B0 = 0.7, B1 = 2.0; // angles at positions 1, 0
  Tensor Cos = f32({(float)std::cos(B0), (float)std::cos(B1),
                    (float)std::cos(A0), (float)std::cos(A1)},
                   {2, 2});
  Tensor Sin = f32({(float)std::sin(B0), (float)std::sin(B1),
                    (float)std::sin(A0), (float)std::sin(A1)},
                   {2, 2});
  Tensor Pos = i64({1, 0}, {1, 2}); // token 0 at position 1, token 1 at 0
  auto rot = [](double X1, double X2, double T) {
    return std::pair{std::cos(T) * X1 - std::sin(T) * X2,
                     std::sin(T) * X1 + std::cos(T) * X2};
  };
  // Halves: pairs (x[i], x[i + 2]).
  auto [H00, H02] = rot(1, 3, A0);
  auto [H01, H03] = rot(2, 4, A1);
  auto [H10, H12] = rot(5, 7, B0);
  auto [H11, H13] = rot(6, 8, B1);
  expectNear(run("rotary_embedding", {X, Cos, Sin, Pos}),
             {H00, H01, H02, H03, H10, H11, H12, H13}, 1e-5);
  // Interleaved: pairs (x[2i], x[2i + 1]).
  auto [I00, I01] = rot(1, 2, A0);
  auto [I02, I03] = rot(3, 4, A1);
  auto [I10, I11] = rot(5, 6, B0);
  auto [I12, I13] = rot(7, 8, B1);
  expectNear(
      run("rotary_embedding", {X, Cos, Sin, Pos}, attrs({{"interleaved", 1}})),
      {I00, I01, I02, I03, I10, I11, I12, I13}, 1e-5);
  // rotary_embedding_dim 2 rotates (x0, x1) only; 3-D x [B, S, H * D] with
  // num_heads 1 is the same data; caches [B, S, 1] without position ids.
  Tensor X3 = f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 4});
  Tensor C3 = f32({(float)std::cos(A0), (float)std::cos(B0)}, {1, 2, 1});
  Tensor S3 = f32({(float)std::sin(A0), (float)std::sin(B0)}, {1, 2, 1});
  auto [P00, P01] = rot(1, 2, A0);
  auto [P10, P11] = rot(5, 6, B0);
  expectNear(run("rotary_embedding", {X3, C3, S3},
                 attrs({{"num_heads", 1}, {"rotary_embedding_dim", 2}})),
             {P00, P01, 3, 4, P10, P11, 7, 8}, 1e-5);
  expectError(
      [&] {
        run("rotary_embedding", {X, Cos, Sin, i64({1, 2}, {1, 2})});
      },
      "out of range");
}

TEST(Opset18To25Ops, TensorScatterLinearAndCircular) {
  // past [2, 4, 1]: batch 0 writes at 1, batch 1 at 3 (circular: 3, then 0).
  Tensor Past = f32({0, 0, 0, 0, 0, 0, 0, 0}, {2, 4, 1});
  Tensor Upd = f32({1, 2, 3, 4}, {2, 2, 1});
  Tensor Idx = i64({1, 3}, {2});
  Attrs Circular = attrs({{"axis", 1}});
  Circular.set("mode", std::string("circular"));
  expectTensor(run("tensor_scatter", {Past, Upd, Idx}, Circular),
               f32({0, 1, 2, 0, 4, 0, 0, 3}, {2, 4, 1}));
  expectTensor(run("tensor_scatter", {Past, Upd}, attrs({{"axis", 1}})),
               f32({1, 2, 0, 0, 3, 4, 0, 0}, {2, 4, 1}));
  expectError(
      [&] {
        run("tensor_scatter", {Past, Upd, Idx}, attrs({{"axis", 1}}));
      },
      "outside the cache");
  // Any dtype: int64 rows of two elements past the axis.
  Tensor P64 = i64({9, 9, 9, 9, 9, 9}, {1, 3, 2});
  expectTensor(run("tensor_scatter",
                   {P64, i64({1, 2}, {1, 1, 2}), i64({2}, {1})},
                   attrs({{"axis", 1}})),
               i64({9, 9, 9, 9, 1, 2}, {1, 3, 2}));
}

TEST(Opset18To25Ops, RandomValuesFollowTheSeed) {
  Attrs A;
  A.set("shape", std::vector<int64_t>{1000});
  A.set("low", -2.0);
  A.set("high", 3.0);
  A.set("seed", 7.0);
  Tensor U1 = run("random_uniform", {}, A), U2 = run("random_uniform", {}, A);
  expectTensor(U1, U2);
  double Sum = 0;
  for (int64_t I = 0; I < U1.numel(); ++I) {
    double V = U1.elementAsDouble(I);
    EXPECT_GE(V, -2.0);
    EXPECT_LT(V, 3.0);
    Sum += V;
  }
  EXPECT_NEAR(Sum / 1000, 0.5, 0.2);
  // Without a seed two calls differ.
  Attrs NoSeed;
  NoSeed.set("dtype", std::string("float64"));
  Tensor Like = Tensor::empty({1000}, DType::Int32);
  Tensor N1 = run("random_normal_like", {Like}, NoSeed);
  Tensor N2 = run("random_normal_like", {Like}, NoSeed);
  EXPECT_EQ(N1.dtype(), DType::Float64);
  EXPECT_NE(N1.toDoubleVector(), N2.toDoubleVector());
  double M = 0, V = 0;
  for (double X : N1.toDoubleVector())
    M += X / 1000;
  for (double X : N1.toDoubleVector())
    V += (X - M) * (X - M) / 1000;
  EXPECT_NEAR(M, 0, 0.15);
  EXPECT_NEAR(V, 1, 0.2);
}
