//===- signal_ops_test.cc - dft, stft, windows, mel_weight_matrix ---------===//
#include "KernelTestUtil.h"

#include <cmath>

using namespace rivet;
using namespace rivet::test;

namespace {

void expectNear(const Tensor &T, const std::vector<double> &E,
                double Tol = 1e-5) {
  std::vector<double> V = T.toDoubleVector();
  ASSERT_EQ(V.size(), E.size());
  for (size_t I = 0; I < E.size(); ++I)
    EXPECT_NEAR(V[I], E[I], Tol) << "at " << I;
}

TEST(DftKernel, RealComplexInverseOnesided) {
  Tensor X = f32({1, 2, 3, 4}, {1, 4, 1});
  Tensor Y = run("dft", {X});
  EXPECT_EQ(Y.shape(), (Shape{1, 4, 2}));
  // numpy.fft.fft([1, 2, 3, 4]) = [10, -2+2j, -2, -2-2j].
  expectNear(Y, {10, 0, -2, 2, -2, 0, -2, -2});
  expectNear(run("dft", {X}, Attrs{{"onesided", int64_t(1)}}),
             {10, 0, -2, 2, -2, 0});
  expectNear(run("dft", {Y}, Attrs{{"inverse", int64_t(1)}}),
             {1, 0, 2, 0, 3, 0, 4, 0});
  // dft_length pads or truncates: fft([1, 2]) = [3, -1].
  expectNear(run("dft", {X}, Attrs{{"dft_length", int64_t(2)}}), {3, 0, -1, 0});
  expectNear(run("dft_dynamic", {X, i64({2}, {1})}), {3, 0, -1, 0});
  expectNear(run("dft_dynamic", {X, Tensor::zeros({0}, DType::Int64)}),
             Y.toDoubleVector());
}

TEST(DftKernel, AxisAndFloat64) {
  // Transform along axis 0 (no batch dimension), float64.
  Tensor X = tensor<double>({1, 0, 1, 0}, {2, 2, 1});
  Tensor Y = run("dft", {X}, Attrs{{"axis", int64_t(0)}});
  EXPECT_EQ(Y.dtype(), DType::Float64);
  // Columns [1, 1] and [0, 0]: fft = [2, 0] and [0, 0].
  expectNear(Y, {2, 0, 0, 0, 0, 0, 0, 0});
  expectError(
      [&] {
        run("dft", {X}, Attrs{{"axis", int64_t(2)}});
      },
      "axis 2 is out of range");
  expectError(
      [&] {
        run("dft", {f32({1, 2, 3}, {1, 3})});
      },
      "[..., N, 1] (real) or [..., N, 2] (complex)");
  expectError([&] { run("dft", {i64({1, 2}, {2, 1})}); }, "float");
}

// DFT-20 passes the axis as an input: dft_dynamic's third argument, whose
// zero elements mean the 'axis' attribute.
TEST(DftKernel, AxisInput) {
  Tensor X = tensor<double>({1, 0, 1, 0}, {2, 2, 1});
  Tensor Absent = Tensor::zeros({0}, DType::Int64);
  Tensor Y0 = run("dft", {X}, Attrs{{"axis", int64_t(0)}});
  Tensor Y1 = run("dft", {X}, Attrs{{"axis", int64_t(1)}});
  expectNear(run("dft_dynamic", {X, Absent, i64({0}, {})}),
             Y0.toDoubleVector());
  expectNear(run("dft_dynamic", {X, Absent, i64({-2}, {})}),
             Y1.toDoubleVector());
  expectNear(
      run("dft_dynamic", {X, Absent, Absent}, Attrs{{"axis", int64_t(0)}}),
      Y0.toDoubleVector());
  // The axis decides which extent dft_length and onesided change.
  EXPECT_EQ(shapeOf("dft_dynamic", {X, i64({3}, {}), i64({0}, {})})[0].shape,
            (Shape{3, 2, 2}));
  expectError(
      [&] {
        run("dft_dynamic", {X, Absent, i64({2}, {})});
      },
      "axis 2 is out of range");
}

// The sums run in double: where the exact transform is 0 (the imaginary part
// of bin N/2 of a real signal), the float32 result is 0 to double rounding.
// (ONNX's test_dft_inverse data, from a float32 FFT, has 1.9e-7 there.)
TEST(DftKernel, AccurateInDouble) {
  std::vector<float> V(200, 0.0f);
  for (size_t I = 0; I < 100; ++I)
    V[2 * I] = (float)I; // x[n, m] = 10 n + m, imaginary parts 0
  Tensor Y = run("dft", {f32(V, {1, 10, 10, 2})},
                 Attrs{{"axis", int64_t(1)}, {"inverse", int64_t(1)}});
  for (int64_t M = 0; M < 10; ++M) {
    EXPECT_NEAR(Y.elementAsDouble(2 * (50 + M)), -5, 1e-6);
    EXPECT_LT(std::fabs(Y.elementAsDouble(2 * (50 + M) + 1)), 1e-12);
  }
}

TEST(StftKernel, FramesAndWindow) {
  Tensor X = f32({1, 2, 3, 4, 5}, {1, 5, 1});
  Attrs A{{"frame_step", int64_t(2)}, {"frame_length", int64_t(2)}};
  Tensor Y = run("stft", {X, Tensor::zeros({0}, DType::Float32)}, A);
  EXPECT_EQ(Y.shape(), (Shape{1, 2, 2, 2}));
  // Frames [1, 2] and [3, 4]: fft = [3, -1] and [7, -1].
  expectNear(Y, {3, 0, -1, 0, 7, 0, -1, 0});
  Tensor W = f32({0.5f, 1}, {2});
  Tensor YW = run("stft_dynamic",
                  {X, i64({2}, {}), W, Tensor::zeros({0}, DType::Int64)});
  // Windowed frames [0.5, 2] and [1.5, 4].
  expectNear(YW, {2.5, 0, -1.5, 0, 5.5, 0, -2.5, 0});
  expectError(
      [&] {
        run("stft", {X, Tensor::zeros({0}, DType::Float32)},
            Attrs{{"frame_step", int64_t(2)}});
      },
      "one of 'window' and 'frame_length'");
  expectError(
      [&] {
        run("stft", {X, W}, Attrs{{"frame_step", int64_t(0)}});
      },
      "frame_step must be positive");
}

TEST(WindowKernels, PeriodicAndSymmetric) {
  expectNear(run("hann_window", {}, Attrs{{"size", int64_t(4)}}),
             {0, 0.5, 1, 0.5});
  expectNear(run("hann_window", {},
                 Attrs{{"size", int64_t(5)}, {"periodic", int64_t(0)}}),
             {0, 0.5, 1, 0.5, 0});
  // numpy.hamming(5) uses 0.54/0.46; ONNX uses 25/46 and 21/46.
  expectNear(run("hamming_window", {},
                 Attrs{{"size", int64_t(5)}, {"periodic", int64_t(0)}}),
             {4.0 / 46, 25.0 / 46, 1, 25.0 / 46, 4.0 / 46});
  // numpy.blackman(5).
  expectNear(run("blackman_window_dynamic", {i64({5}, {})},
                 Attrs{{"periodic", int64_t(0)}}),
             {0, 0.34, 1, 0.34, 0});
  Tensor D = run("hann_window_dynamic", {tensor<int32_t>({4}, {1})},
                 Attrs{{"dtype", std::string("float64")}});
  EXPECT_EQ(D.dtype(), DType::Float64);
  expectNear(D, {0, 0.5, 1, 0.5});
  expectError(
      [&] {
        run("hann_window", {}, Attrs{{"size", int64_t(-1)}});
      },
      "must be non-negative");
  expectError([&] { run("hann_window_dynamic", {f32({4}, {})}); },
              "must be an integer scalar");
}

TEST(MelWeightMatrixKernel, MatchesReference) {
  // The ONNX reference implementation for (3, 16, 8000, 0, 4000).
  std::vector<double> E = {1,   0, 0, 0, 1, 0, 0, 0.5, 0.5, 0, 0, 1, 0, 0,
                           0.5, 0, 0, 0, 0, 0, 0, 0,   0,   0, 0, 0, 0};
  Tensor S = run("mel_weight_matrix", {},
                 Attrs{{"num_mel_bins", int64_t(3)},
                       {"dft_length", int64_t(16)},
                       {"sample_rate", int64_t(8000)},
                       {"lower_edge_hertz", 0.0},
                       {"upper_edge_hertz", 4000.0}});
  EXPECT_EQ(S.shape(), (Shape{9, 3}));
  expectNear(S, E);
  Tensor D = run("mel_weight_matrix_dynamic",
                 {i64({3}, {}), i64({16}, {}), i64({8000}, {}), f32({0}, {}),
                  f32({4000}, {})});
  expectNear(D, E);
  expectError(
      [&] {
        run("mel_weight_matrix_dynamic",
            {i64({0}, {}), i64({16}, {}), i64({8000}, {}), f32({0}, {}),
             f32({4000}, {})});
      },
      "must be positive");
}

} // namespace
