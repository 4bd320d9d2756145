//===- rnn_ops_test.cc - lstm, gru and rnn kernels ------------------------===//
//
// Expected values were computed with NumPy from the ONNX equations.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

using namespace rivet;
using namespace rivet::test;

namespace {

Tensor emptyF() { return Tensor::zeros({0}, DType::Float32); }
Tensor emptyI() { return Tensor::zeros({0}, DType::Int32); }

/// Values Start, Start + Step, ... as float32 of shape S.
Tensor ramp(Shape S, double Start, double Step) {
  std::vector<float> V((size_t)numElements(S));
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = (float)(Start + Step * (double)I);
  return f32(V, S);
}

void expectNear(const Tensor &T, const std::vector<double> &E,
                double Tol = 1e-5) {
  std::vector<double> V = T.toDoubleVector();
  ASSERT_EQ(V.size(), E.size());
  for (size_t I = 0; I < E.size(); ++I)
    EXPECT_NEAR(V[I], E[I], Tol) << "at " << I;
}

TEST(LstmKernel, BiasAndPeepholes) {
  Tensor X = f32({1, 2}, {2, 1, 1});
  Tensor W = ramp({1, 8, 1}, 0, 0.1);
  Tensor R = ramp({1, 8, 2}, -0.4, 0.05);
  Tensor B = ramp({1, 16}, 0, 0.01);
  Tensor P = f32({0.1f, 0.2f, 0.3f, -0.1f, -0.2f, -0.3f}, {1, 6});
  std::vector<Tensor> Out =
      runAll("lstm", {X, W, R, B, emptyI(), emptyF(), emptyF(), P},
             Attrs{{"hidden_size", int64_t(2)}});
  ASSERT_EQ(Out.size(), 3u);
  EXPECT_EQ(Out[0].shape(), (Shape{2, 1, 1, 2}));
  expectNear(Out[0], {0.2007584063892085, 0.22702938204868925,
                      0.3921975367809843, 0.44442988713286885});
  expectNear(Out[1], {0.3921975367809843, 0.44442988713286885});
  expectNear(Out[2], {0.687714010487665, 0.833328125706875});
}

TEST(GruKernel, LinearBeforeReset) {
  Tensor X = f32({1, 2}, {2, 1, 1});
  Tensor W = ramp({1, 6, 1}, 0, 0.1);
  Tensor R = ramp({1, 6, 2}, -0.3, 0.05);
  Tensor B = ramp({1, 12}, 0, 0.01);
  std::vector<Tensor> Out0 = runAll("gru", {X, W, R, B, emptyI(), emptyF()});
  expectNear(Out0[0], {0.2391013814850327, 0.26322539715541204,
                       0.5063435618994152, 0.5255751825781702});
  std::vector<Tensor> Out1 = runAll("gru", {X, W, R, B, emptyI(), emptyF()},
                                    Attrs{{"linear_before_reset", int64_t(1)}});
  expectNear(Out1[0], {0.22315290863508452, 0.24968160357617242,
                       0.4876206287156678, 0.5123967539922242});
  expectNear(Out1[1], {0.4876206287156678, 0.5123967539922242});
}

TEST(RnnKernel, BidirectionalWithSequenceLengths) {
  Tensor X = f32({1, 2, 3, 4, 5, 6}, {3, 2, 1});
  Tensor W = f32({0.5f, -0.3f}, {2, 1, 1});
  Tensor R = f32({0.2f, 0.4f}, {2, 1, 1});
  Tensor Lens = tensor<int32_t>({3, 2}, {2});
  std::vector<Tensor> Out =
      runAll("rnn", {X, W, R, emptyF(), Lens, emptyF()},
             Attrs{{"direction", std::string("bidirectional")}});
  EXPECT_EQ(Out[0].shape(), (Shape{3, 2, 2, 1}));
  // Steps past a sequence's length are zero.
  expectNear(Out[0],
             {0.46211715726000974, 0.7615941559557649, -0.5653435583817118,
              -0.7322038416181024, 0.9205200777639946, 0.9733483940675081,
              -0.8516308441836609, -0.8336546070121552, 0.9907183179544911, 0.0,
              -0.9051482536448665, 0.0});
  expectNear(Out[1], {0.9907183179544911, 0.9733483940675081,
                      -0.5653435583817118, -0.7322038416181024});
}

TEST(RnnKernel, LayoutActivationsAndClip) {
  // Batch-first layout gives the same numbers, transposed.
  Tensor X = f32({1, 2}, {1, 2, 1}); // [batch 1, seq 2, input 1]
  Tensor W = f32({1}, {1, 1, 1}), R = f32({1}, {1, 1, 1});
  std::vector<Tensor> Out =
      runAll("rnn", {X, W, R, emptyF(), emptyI(), emptyF()},
             Attrs{{"layout", int64_t(1)},
                   {"activations", std::vector<std::string>{"Relu"}}});
  EXPECT_EQ(Out[0].shape(), (Shape{1, 2, 1, 1}));
  expectNear(Out[0], {1, 3}); // relu(1), relu(2 + 1)
  EXPECT_EQ(Out[1].shape(), (Shape{1, 1, 1}));
  Out = runAll("rnn", {X, W, R, emptyF(), emptyI(), emptyF()},
               Attrs{{"layout", int64_t(1)},
                     {"clip", 2.0},
                     {"activations", std::vector<std::string>{"Affine"}},
                     {"activation_alpha", std::vector<double>{2.0}},
                     {"activation_beta", std::vector<double>{1.0}}});
  // h1 = 2 * 1 + 1 = 3; h2 = 2 * clip(2 + 3) + 1 = 5.
  expectNear(Out[0], {3, 5});
}

TEST(RnnKernel, Errors) {
  Tensor X = f32({1, 2}, {2, 1, 1});
  Tensor W = f32({1}, {1, 1, 1}), R = f32({1}, {1, 1, 1});
  expectError(
      [&] {
        runAll("rnn",
               {X, f32({1, 2}, {1, 2, 1}), R, emptyF(), emptyI(), emptyF()});
      },
      "w must be (1, 1, 1)");
  expectError(
      [&] {
        runAll("rnn", {X, W, R, emptyF(), emptyI(), emptyF()},
               Attrs{{"direction", std::string("sideways")}});
      },
      "direction must be forward, reverse or bidirectional");
  expectError(
      [&] {
        runAll("rnn", {X, W, R, emptyF(), emptyI(), emptyF()},
               Attrs{{"activations", std::vector<std::string>{"Gelu"}}});
      },
      "unknown activation function 'Gelu'");
  expectError(
      [&] {
        runAll("rnn", {X, W, R, emptyF(), tensor<int32_t>({5}, {1}), emptyF()});
      },
      "sequence length 5 is out of range");
  expectError(
      [&] {
        runAll("gru", {X, W, R, emptyF(), emptyI(), emptyF()});
      },
      "w must be (1, 3, 1)");
  expectError(
      [&] {
        runAll("lstm", {tensor<int32_t>({1}, {1, 1, 1}), W, R, emptyF(),
                        emptyI(), emptyF(), emptyF(), emptyF()});
      },
      "float");
}

} // namespace

// The recurrences' tanh (computed from one exp, not libm's tanh): a
// one-unit RNN with W = 1, R = 0 gives Y[t] = tanh(x[t]), within one float
// ulp of std::tanh over tiny, moderate and huge inputs and the specials
// (a zero's sign is the recurrence's: -0 * 1 + 0 * h is +0).
TEST(RnnKernel, TanhMatchesLibm) {
  std::vector<float> Xs = {0.0f,     -0.0f,  1e-30f,   -1e-9f,   9.9e-5f,
                           1e-4f,    -1e-4f, 0.001f,   0.1f,     -0.2499f,
                           0.5f,     1.0f,   -3.0f,    9.0f,     20.0f,
                           -1000.0f, 1e30f,  INFINITY, -INFINITY};
  for (int I = -200; I <= 200; ++I)
    Xs.push_back((float)I * 0.0371f);
  Xs.push_back(NAN); // last: R h is 0 * NaN = NaN from then on
  int64_t T = (int64_t)Xs.size();
  Tensor X = f32(Xs, {T, 1, 1});
  Tensor W = f32({1}, {1, 1, 1}), R = f32({0}, {1, 1, 1});
  Tensor Y = runAll("rnn", {X, W, R, emptyF(), emptyI(), emptyF()},
                    Attrs{{"hidden_size", int64_t(1)}})[0];
  ASSERT_EQ(Y.numel(), T);
  for (int64_t I = 0; I < T; ++I) {
    float Got = (float)Y.elementAsDouble(I);
    float Want = (float)std::tanh((double)Xs[(size_t)I]);
    if (std::isnan(Want)) {
      EXPECT_TRUE(std::isnan(Got)) << Xs[(size_t)I];
      continue;
    }
    EXPECT_LE(std::fabs(Got - Want),
              std::nextafter(std::fabs(Want), INFINITY) - std::fabs(Want))
        << "tanh(" << Xs[(size_t)I] << ")";
  }
}
