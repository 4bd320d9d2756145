//===- activation_ops_test.cc - Activation and extended elementwise kernels
//===//
//
// Expected values are computed by hand or with NumPy (noted where it helps).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include <cmath>
#include <limits>

using namespace rivet;
using namespace rivet::test;

namespace {
Tensor f64(std::vector<double> V, Shape S) { return tensor(V, S); }
Tensor u8(std::vector<uint8_t> V, Shape S) { return tensor(V, S); }
const float Inf = std::numeric_limits<float>::infinity();
} // namespace

TEST(Activation, ParameterizedFloat) {
  Tensor X = f32({-2, -0.5f, 0, 0.5f, 2}, {5});
  expectTensor(run("elu", {X}),
               f32({std::exp(-2.f) - 1, std::exp(-0.5f) - 1, 0, 0.5f, 2}, {5}));
  expectTensor(
      run("elu", {X}, Attrs{{"alpha", 2.0}}),
      f32({2 * (std::exp(-2.f) - 1), 2 * (std::exp(-0.5f) - 1), 0, 0.5f, 2},
          {5}));
  // selu defaults: alpha 1.6732632, gamma 1.0507010.
  Tensor S = run("selu", {X});
  EXPECT_NEAR(S.elementAsDouble(0), 1.0507010 * 1.6732632 * (std::exp(-2.) - 1),
              1e-5);
  EXPECT_NEAR(S.elementAsDouble(4), 2 * 1.0507010, 1e-5);
  // celu(x, alpha=2) = max(0, x) + min(0, 2 * (exp(x / 2) - 1)).
  expectTensor(
      run("celu", {X}, Attrs{{"alpha", 2.0}}),
      f32({2 * (std::exp(-1.f) - 1), 2 * (std::exp(-0.25f) - 1), 0, 0.5f, 2},
          {5}));
  expectTensor(run("leaky_relu", {X}), f32({-0.02f, -0.005f, 0, 0.5f, 2}, {5}));
  expectTensor(run("leaky_relu", {X}, Attrs{{"alpha", 0.1}}),
               f32({-0.2f, -0.05f, 0, 0.5f, 2}, {5}));
  expectTensor(run("hard_sigmoid", {X}),
               f32({0.1f, 0.4f, 0.5f, 0.6f, 0.9f}, {5}));
  expectTensor(run("hard_sigmoid", {X}, Attrs{{"alpha", 1.0}, {"beta", 0.0}}),
               f32({0, 0, 0, 0.5f, 1}, {5}));
  // hard_swish: x * clip(x / 6 + 0.5, 0, 1).
  expectTensor(run("hard_swish", {f32({-4, -1, 0, 1, 4}, {5})}),
               f32({0, -1.f / 3, 0, 2.f / 3, 4}, {5}));
  expectTensor(run("thresholded_relu", {X}), f32({0, 0, 0, 0, 2}, {5}));
  expectTensor(run("thresholded_relu", {X}, Attrs{{"alpha", 0.25}}),
               f32({0, 0, 0, 0.5f, 2}, {5}));
  expectTensor(run("shrink", {X}, Attrs{{"lambd", 1.0}, {"bias", 0.5}}),
               f32({-1.5f, 0, 0, 0, 1.5f}, {5}));
  expectTensor(run("shrink", {X}), f32({-2, 0, 0, 0, 2}, {5}));
  // softplus = log(1 + e^x), stable for large |x|.
  expectTensor(run("softplus", {f32({-100, 0, 1, 100}, {4})}),
               f32({0, std::log(2.f), std::log1p(std::exp(1.f)), 100}, {4}));
  expectTensor(run("softsign", {X}),
               f32({-2.f / 3, -1.f / 3, 0, 1.f / 3, 2.f / 3}, {5}));
  // float16 and float64 compute too.
  expectTensor(run("leaky_relu", {X.cast(DType::Float16)}),
               f32({-0.02f, -0.005f, 0, 0.5f, 2}, {5}).cast(DType::Float16),
               1e-3, 1e-4);
  expectTensor(run("elu", {f64({-1, 1}, {2})}),
               f64({std::expm1(-1.0), 1}, {2}));
  // shrink also takes integers.
  expectTensor(run("shrink", {tensor<int32_t>({-5, -1, 0, 1, 5}, {5})},
                   Attrs{{"lambd", 1.5}, {"bias", 1.0}}),
               tensor<int32_t>({-4, 0, 0, 0, 4}, {5}));
}

TEST(Activation, Errors) {
  expectError([] { run("elu", {i64({1}, {1})}); },
              "elu: input 'x' must have a float dtype");
  expectError(
      [] {
        run("celu", {f32({1}, {1})}, Attrs{{"alpha", 0.0}});
      },
      "celu: attribute 'alpha' must not be 0");
  expectError(
      [] {
        run("selu", {f32({1}, {1})}, Attrs{{"alpha", std::string("x")}});
      },
      "selu:");
  expectError(
      [] {
        run("softsign", {f32({1}, {1}), f32({1}, {1})});
      },
      "softsign: expected 1 input, got 2");
}

TEST(Activation, Clip) {
  Tensor X = f32({-3, -1, 0, 2, NAN}, {5});
  Tensor R = run("clip", {X}, Attrs{{"min", -2.0}, {"max", 1.0}});
  expectTensor(R.reshape({5}), f32({-2, -1, 0, 1, NAN}, {5}));
  expectTensor(run("clip", {X}, Attrs{{"max", 0.0}}),
               f32({-3, -1, 0, 0, NAN}, {5}));
  expectTensor(run("clip", {X}), X);
  // min > max: everything becomes max (np.clip).
  expectTensor(
      run("clip", {f32({-1, 5}, {2})}, Attrs{{"min", 2.0}, {"max", 1.0}}),
      f32({1, 1}, {2}));
  expectTensor(run("clip", {tensor<int8_t>({-128, -5, 5, 127}, {4})},
                   Attrs{{"min", -10.0}, {"max", 300.0}}),
               tensor<int8_t>({-10, -5, 5, 127}, {4}));
  expectTensor(run("clip", {i64({INT64_MIN, 3}, {2})}, Attrs{{"min", 0.0}}),
               i64({0, 3}, {2}));
  expectError([] { run("clip", {b8({1}, {1})}); },
              "clip: input 'x' must have a numeric dtype");
}

TEST(Activation, PRelu) {
  Tensor X = f32({-1, 2, -3, 4, -5, 6}, {2, 3});
  expectTensor(run("prelu", {X, f32({0.5f}, {1})}),
               f32({-0.5f, 2, -1.5f, 4, -2.5f, 6}, {2, 3}));
  expectTensor(run("prelu", {X, f32({1, 2, 3}, {3})}),
               f32({-1, 2, -9, 4, -10, 6}, {2, 3}));
  expectTensor(run("prelu", {X, f32({0, 10}, {2, 1})}),
               f32({0, 2, 0, 4, -50, 6}, {2, 3}));
  expectTensor(run("prelu", {i64({-4, 4}, {2}), i64({3}, {})}),
               i64({-12, 4}, {2}));
  expectError(
      [&] {
        run("prelu", {X, f32({1, 2}, {2})});
      },
      "prelu: cannot broadcast");
  expectError(
      [&] {
        run("prelu", {f32({1, 2}, {2}), f32({1, 2, 3, 4}, {2, 2})});
      },
      "prelu: slope of shape (2, 2) does not broadcast to x of shape (2,)");
  expectError([&] { run("prelu", {X, i64({1}, {1})}); }, "same dtype");
}

TEST(Activation, Dropout) {
  Tensor X = f32({1, 2, 3}, {3});
  std::vector<Tensor> R = runAll("dropout", {X, f32({0.5f}, {}), b8({0}, {})});
  ASSERT_EQ(R.size(), 2u);
  expectTensor(R[0], X);
  expectTensor(R[1], b8({1, 1, 1}, {3}));
  R = runAll("dropout", {X, tensor<double>({0.0}, {}), b8({1}, {})});
  expectTensor(R[0], X);
  expectError(
      [&] {
        runAll("dropout", {X, f32({0.25f}, {}), b8({1}, {})});
      },
      "dropout: training mode with ratio 0.25 drops at random");
  expectError(
      [&] {
        runAll("dropout", {X, f32({1.5f}, {}), b8({0}, {})});
      },
      "dropout: ratio must be in [0, 1)");
  expectError(
      [&] {
        runAll("dropout", {X, f32({0.5f, 1}, {2}), b8({0}, {})});
      },
      "must be scalars");
}

TEST(ElementwiseExt, RoundingAndMath) {
  // np.round: half to even.
  expectTensor(
      run("round", {f32({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f}, {7})}),
      f32({0, 2, 2, -0, -2, 2, -3}, {7}));
  expectTensor(run("ceil", {f32({-1.5f, 1.2f}, {2})}), f32({-1, 2}, {2}));
  expectTensor(run("floor", {f32({-1.5f, 1.2f}, {2})}), f32({-2, 1}, {2}));
  expectTensor(run("reciprocal", {f32({-4, 0.5f}, {2})}),
               f32({-0.25f, 2}, {2}));
  // np.sign; NaN stays NaN.
  Tensor Sg = run("sign", {f32({-3, 0, 2, NAN}, {4})});
  expectTensor(Sg, f32({-1, 0, 1, NAN}, {4}));
  expectTensor(run("sign", {tensor<int8_t>({-7, 0, 9}, {3})}),
               tensor<int8_t>({-1, 0, 1}, {3}));
  expectTensor(run("sign", {u8({0, 200}, {2})}), u8({0, 1}, {2}));
  // math.erf(0.5) = 0.5204998778130465
  expectTensor(run("erf", {f64({0, 0.5, -0.5}, {3})}),
               f64({0, 0.5204998778130465, -0.5204998778130465}, {3}), 1e-12,
               1e-12);
  Tensor X = f32({0.25f, -0.5f}, {2});
  for (auto [Op, Fn] : std::vector<std::pair<const char *, double (*)(double)>>{
           {"sin", std::sin},
           {"cos", std::cos},
           {"tan", std::tan},
           {"asin", std::asin},
           {"acos", std::acos},
           {"atan", std::atan},
           {"sinh", std::sinh},
           {"cosh", std::cosh},
           {"asinh", std::asinh},
           {"atanh", std::atanh}}) {
    Tensor R = run(Op, {X});
    EXPECT_NEAR(R.elementAsDouble(0), Fn(0.25), 1e-6) << Op;
    EXPECT_NEAR(R.elementAsDouble(1), Fn(-0.5), 1e-6) << Op;
  }
  EXPECT_NEAR(run("acosh", {f32({2}, {1})}).elementAsDouble(0), std::acosh(2.0),
              1e-6);
  EXPECT_TRUE(std::isnan(run("asin", {f32({2}, {1})}).elementAsDouble(0)));
  expectError([] { run("sin", {i64({1}, {1})}); },
              "sin: input 'x' must have a float dtype");
}

TEST(ElementwiseExt, IsNaNIsInf) {
  Tensor X = f32({-Inf, Inf, NAN, 1}, {4});
  expectTensor(run("isnan", {X}), b8({0, 0, 1, 0}, {4}));
  expectTensor(run("isinf", {X}), b8({1, 1, 0, 0}, {4}));
  expectTensor(run("isinf", {X}, Attrs{{"detect_positive", int64_t(0)}}),
               b8({1, 0, 0, 0}, {4}));
  expectTensor(run("isinf", {X}, Attrs{{"detect_negative", int64_t(0)}}),
               b8({0, 1, 0, 0}, {4}));
  expectTensor(run("isinf", {X.cast(DType::Float16)}), b8({1, 1, 0, 0}, {4}));
  expectError(
      [&] {
        run("isinf", {X}, Attrs{{"detect_negative", int64_t(2)}});
      },
      "isinf: attribute 'detect_negative' must be 0 or 1");
  expectError([] { run("isnan", {i64({1}, {1})}); },
              "isnan: input 'x' must have a float dtype");
}

TEST(ElementwiseExt, Mod) {
  // np.mod([-4, 7, 5, 4, -7, 8], [2, -3, 8, -2, 3, 5]) = [0, -2, 5, 0, 2, 3]
  Tensor A = i64({-4, 7, 5, 4, -7, 8}, {6});
  Tensor B = i64({2, -3, 8, -2, 3, 5}, {6});
  expectTensor(run("mod", {A, B}), i64({0, -2, 5, 0, 2, 3}, {6}));
  // np.fmod: the sign of the dividend.
  expectTensor(run("mod", {A, B}, Attrs{{"fmod", int64_t(1)}}),
               i64({0, 1, 5, 0, -1, 3}, {6}));
  expectTensor(run("mod", {tensor<int8_t>({-128, 5}, {2}),
                           tensor<int8_t>({-1, 3}, {2})}),
               tensor<int8_t>({0, 2}, {2}));
  // np.fmod(-4.3, 2.1) = -0.1, np.mod(-4.3, 2.1) = 2.0 (float64).
  expectTensor(run("mod", {f64({-4.3, 4.3}, {2}), f64({2.1}, {})},
                   Attrs{{"fmod", int64_t(1)}}),
               f64({-0.1, 0.1}, {2}), 1e-9, 1e-9);
  expectTensor(run("mod", {f64({-4.3, 4.3}, {2}), f64({2.1}, {})}),
               f64({2.0, 0.1}, {2}), 1e-9, 1e-9);
  expectTensor(run("mod", {u8({7, 200}, {2}), u8({3}, {})}), u8({1, 2}, {2}));
  expectError(
      [&] {
        run("mod", {A, i64({0}, {})});
      },
      "mod: integer modulo by zero");
  expectError(
      [&] {
        run("mod", {A, B}, Attrs{{"fmod", int64_t(3)}});
      },
      "mod: attribute 'fmod' must be 0 or 1");
}

TEST(ElementwiseExt, Shifts) {
  expectTensor(
      run("left_shift", {u8({16, 4, 1, 255}, {4}), u8({1, 2, 3, 8}, {4})}),
      u8({32, 16, 8, 0}, {4}));
  expectTensor(
      run("right_shift", {u8({16, 4, 1, 255}, {4}), u8({1, 2, 3, 9}, {4})}),
      u8({8, 1, 0, 0}, {4}));
  expectTensor(run("left_shift", {u8({255}, {1}), u8({1}, {})}),
               u8({254}, {1}));
  expectTensor(run("right_shift", {i64({-8, 8}, {2}), i64({1, 70}, {2})}),
               i64({-4, 0}, {2}));
  expectError(
      [] {
        run("left_shift", {f32({1}, {1}), f32({1}, {1})});
      },
      "left_shift: input 'a' must have an integer dtype, got float32");
  expectError(
      [] {
        run("right_shift", {u8({1}, {1}), i64({1}, {1})});
      },
      "same dtype");
}

TEST(ElementwiseExt, PowMixedDTypes) {
  // np.power(np.array([1, 2, 3], np.int32), np.array([4., 5., 6.])) -> [1, 32,
  // 729]
  expectTensor(
      run("pow", {tensor<int32_t>({1, 2, 3}, {3}), f32({4, 5, 6}, {3})}),
      tensor<int32_t>({1, 32, 729}, {3}));
  expectTensor(run("pow", {f32({1, 2, 3}, {3}), i64({4, 5, 6}, {3})}),
               f32({1, 32, 729}, {3}));
  expectTensor(run("pow", {f32({4, 9}, {2}), tensor<int32_t>({-1}, {})}),
               f32({0.25f, 1.f / 9}, {2}));
  // Integer base and exponent of different widths stay exact.
  expectTensor(run("pow", {i64({3, -2}, {2}), tensor<int32_t>({39, 3}, {2})}),
               i64({4052555153018976267LL, -8}, {2}));
  // 2^0.5 truncated to int64 is 1.
  expectTensor(run("pow", {i64({2}, {1}), f64({0.5}, {1})}), i64({1}, {1}));
  expectError(
      [] {
        run("pow", {b8({1}, {1}), f32({1}, {1})});
      },
      "pow: input 'a'");
  expectError(
      [] {
        run("pow", {f32({1}, {1}), b8({1}, {1})});
      },
      "pow: input 'b'");
}

TEST(ElementwiseExt, CastLikeLegacyBroadcastFullLike) {
  expectTensor(
      run("cast_like", {f32({1.7f, -2.5f}, {2}), tensor<int8_t>({0}, {1})}),
      tensor<int8_t>({1, -2}, {2}));
  expectTensor(run("cast_like", {f32({1, 0}, {2}), b8({}, {0})}),
               b8({1, 0}, {2}));
  // b of shape (3,) aligned at axis 1 of a (2, 3, 4) -> (1, 3, 1).
  Tensor A = Tensor::zeros({2, 3, 4}, DType::Float32);
  Tensor B = f32({1, 2, 3}, {3});
  expectTensor(run("legacy_broadcast", {B, A}, Attrs{{"axis", int64_t(1)}}),
               f32({1, 2, 3}, {1, 3, 1}));
  expectTensor(run("legacy_broadcast", {B, A}, Attrs{{"axis", int64_t(-2)}}),
               f32({1, 2, 3}, {1, 3, 1}));
  expectTensor(run("legacy_broadcast", {f32({1, 2, 3, 4, 5, 6}, {2, 3}), A},
                   Attrs{{"axis", int64_t(0)}}),
               f32({1, 2, 3, 4, 5, 6}, {2, 3, 1}));
  expectError(
      [&] {
        run("legacy_broadcast", {B, A}, Attrs{{"axis", int64_t(3)}});
      },
      "legacy_broadcast: axis 3 does not fit b of shape (3,) into a of shape "
      "(2, 3, 4)");
  expectError(
      [&] {
        run("legacy_broadcast", {B, A});
      },
      "legacy_broadcast: attribute 'axis'");
  expectTensor(run("full_like", {f32({5, 6}, {2, 1})},
                   Attrs{{"value", 1.0}, {"dtype", std::string("bool")}}),
               b8({1, 1}, {2, 1}));
  expectTensor(run("full_like", {i64({5, 6, 7}, {3})}, Attrs{{"value", -2.0}}),
               i64({-2, -2, -2}, {3}));
  expectError([] { run("full_like", {i64({5}, {1})}); },
              "full_like: attribute 'value'");
}
