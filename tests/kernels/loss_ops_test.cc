//===- loss_ops_test.cc - nll_loss and softmax_cross_entropy_loss ---------===//
#include "KernelTestUtil.h"

#include <cmath>

using namespace rivet;
using namespace rivet::test;

TEST(LossOps, NllLoss) {
  // input [N=2, C=3], target [2].
  Tensor X = f32({-1, -2, -3, -4, -5, -6}, {2, 3});
  Tensor T = i64({2, 0}, {2});
  expectTensor(run("nll_loss", {X, T}, {{"reduction", std::string("none")}}),
               f32({3, 4}, {2}));
  expectTensor(run("nll_loss", {X, T}, {{"reduction", std::string("sum")}}),
               f32({7}, {}));
  expectTensor(run("nll_loss", {X, T}), f32({3.5}, {})); // mean is the default
  // Weighted mean divides by the summed weights.
  Tensor W = f32({1, 0.5, 2}, {3});
  expectTensor(run("nll_loss", {X, T, W}), f32({(3 * 2 + 4 * 1) / 3.0f}, {}));
  // ignore_index: the ignored target contributes neither loss nor weight.
  expectTensor(run("nll_loss", {X, T, W}, {{"ignore_index", int64_t(0)}}),
               f32({3}, {}));
  // input [N=1, C=2, d=2], target [1, 2].
  Tensor X3 = f32({-1, -2, -3, -4}, {1, 2, 2});
  expectTensor(run("nll_loss", {X3, i64({1, 0}, {1, 2})},
                   {{"reduction", std::string("none")}}),
               f32({3, 2}, {1, 2}));
  expectError(
      [&] {
        run("nll_loss", {X, i64({3, 0}, {2})});
      },
      "nll_loss: target 3 at position 0 is out of range for 3 classes");
  expectError(
      [&] {
        run("nll_loss", {X, i64({0}, {1})});
      },
      "does not match input shape");
  expectError(
      [&] {
        run("nll_loss", {X, T}, {{"reduction", std::string("avg")}});
      },
      "must be none, sum or mean");
  expectError(
      [&] {
        run("nll_loss", {X, T, f32({1}, {1})});
      },
      "weight must have shape (3,)");
}

TEST(LossOps, SoftmaxCrossEntropy) {
  Tensor X = f32({1, 2, 3, 0, 0, 0}, {2, 3});
  Tensor T = i64({2, 1}, {2});
  auto R = runAll("softmax_cross_entropy_loss", {X, T},
                  {{"reduction", std::string("none")}});
  ASSERT_EQ(R.size(), 2u);
  double L0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  double L1 = std::log(3.0);
  expectTensor(R[0], f32({(float)(L0 - 3), (float)L1}, {2}), 1e-5, 1e-6);
  expectTensor(R[1],
               f32({(float)(1 - L0), (float)(2 - L0), (float)(3 - L0),
                    (float)-L1, (float)-L1, (float)-L1},
                   {2, 3}),
               1e-5, 1e-6);
  R = runAll("softmax_cross_entropy_loss", {X, T},
             {{"ignore_index", int64_t(1)}});
  expectTensor(R[0], f32({(float)(L0 - 3)}, {}), 1e-5, 1e-6);
  expectError(
      [&] {
        runAll("softmax_cross_entropy_loss",
               {i64({1, 2}, {1, 2}), i64({0}, {1})});
      },
      "float dtype");
}
