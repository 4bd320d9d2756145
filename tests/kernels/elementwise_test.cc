//===- elementwise_test.cc - Elementwise and broadcast kernels ------------===//
#include "KernelTestUtil.h"

#include <cmath>

using namespace rivet;
using namespace rivet::test;

TEST(Elementwise, BinaryArithmeticWithBroadcast) {
  Tensor A = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor B = f32({10, 20, 30}, {3});
  expectTensor(run("add", {A, B}), f32({11, 22, 33, 14, 25, 36}, {2, 3}));
  expectTensor(run("subtract", {A, B}),
               f32({-9, -18, -27, -6, -15, -24}, {2, 3}));
  Tensor Col = f32({2, 3}, {2, 1});
  expectTensor(run("multiply", {A, Col}), f32({2, 4, 6, 12, 15, 18}, {2, 3}));
  expectTensor(run("divide", {A, Col}),
               f32({0.5f, 1, 1.5f, 4.f / 3, 5.f / 3, 2}, {2, 3}));
  expectTensor(run("pow", {A, f32({2}, {})}),
               f32({1, 4, 9, 16, 25, 36}, {2, 3}));
  // (2, 1) x (1, 3) -> (2, 3); scalar x scalar; empty dims.
  Tensor R = f32({1, 2, 3}, {1, 3});
  expectTensor(run("add", {Col, R}), f32({3, 4, 5, 4, 5, 6}, {2, 3}));
  expectTensor(run("add", {f32({1}, {}), f32({2}, {})}), f32({3}, {}));
  EXPECT_EQ(run("add", {f32({}, {0, 3}), R}).shape(), (Shape{0, 3}));
  // Rank-3 broadcast against rank-1 and rank-2 middle broadcast.
  Tensor X = f32({1, 2, 3, 4}, {2, 1, 2});
  Tensor Y = f32({10, 20, 30, 40, 50, 60}, {3, 2});
  expectTensor(
      run("add", {X, Y}),
      f32({11, 22, 31, 42, 51, 62, 13, 24, 33, 44, 53, 64}, {2, 3, 2}));
}

TEST(Elementwise, IntegerSemantics) {
  Tensor A = i64({7, -7, 7, -7}, {4});
  Tensor B = i64({2, 2, -2, -2}, {4});
  expectTensor(run("divide", {A, B}), i64({3, -3, -3, 3}, {4}));
  expectError(
      [&] {
        run("divide", {A, i64({0}, {})});
      },
      "divide: integer division by zero");
  expectTensor(run("pow", {i64({2, 3, -2, 2}, {4}), i64({10, 0, 3, -1}, {4})}),
               i64({1024, 1, -8, 0}, {4}));
  // int8 wraps.
  Tensor C = tensor<int8_t>({127, -128}, {2});
  expectTensor(run("add", {C, tensor<int8_t>({1, -1}, {2})}),
               tensor<int8_t>({-128, 127}, {2}));
  expectTensor(run("negative", {C}), tensor<int8_t>({-127, -128}, {2}));
  expectTensor(run("abs", {tensor<int32_t>({-5, 5, 0}, {3})}),
               tensor<int32_t>({5, 5, 0}, {3}));
  expectTensor(run("maximum", {i64({1, 5}, {2}), i64({3}, {})}),
               i64({3, 5}, {2}));
  expectTensor(run("minimum", {i64({1, 5}, {2}), i64({3}, {})}),
               i64({1, 3}, {2}));
  expectTensor(run("relu", {tensor<int16_t>({-3, 0, 4}, {3})}),
               tensor<int16_t>({0, 0, 4}, {3}));
}

TEST(Elementwise, FloatUnary) {
  Tensor X = f32({-1, 0, 0.5f, 2}, {4});
  expectTensor(run("exp", {X}),
               f32({std::exp(-1.f), 1, std::exp(0.5f), std::exp(2.f)}, {4}));
  expectTensor(run("tanh", {X}),
               f32({std::tanh(-1.f), 0, std::tanh(0.5f), std::tanh(2.f)}, {4}));
  expectTensor(run("sigmoid", {f32({0, 100, -100, 2}, {4})}),
               f32({0.5f, 1, 0, 0.880797077977882f}, {4}));
  expectTensor(run("sqrt", {f32({4, 2}, {2})}), f32({2, std::sqrt(2.f)}, {2}));
  Tensor L = run("log", {f32({1, std::exp(1.f), 0, -1}, {4})});
  EXPECT_NEAR(L.elementAsDouble(1), 1.0, 1e-6);
  EXPECT_TRUE(std::isinf(L.elementAsDouble(2)));
  EXPECT_TRUE(std::isnan(L.elementAsDouble(3)));
  expectTensor(run("relu", {X}), f32({0, 0, 0.5f, 2}, {4}));
  expectTensor(run("negative", {X}), f32({1, 0, -0.5f, -2}, {4}));
  expectTensor(run("abs", {X}), f32({1, 0, 0.5f, 2}, {4}));
  // float16 computes through float.
  Tensor H = f32({1, 4, 9}, {3}).cast(DType::Float16);
  expectTensor(run("sqrt", {H}), f32({1, 2, 3}, {3}).cast(DType::Float16));
  expectTensor(run("add", {H, H}), f32({2, 8, 18}, {3}).cast(DType::Float16));
  // float64
  Tensor D = tensor<double>({0.1, 0.2}, {2});
  expectTensor(run("add", {D, D}), tensor<double>({0.2, 0.4}, {2}), 0, 0);
  // NaN propagates through maximum/minimum.
  Tensor M = run("maximum", {f32({NAN, 1}, {2}), f32({0, NAN}, {2})});
  EXPECT_TRUE(std::isnan(M.elementAsDouble(0)));
  EXPECT_TRUE(std::isnan(M.elementAsDouble(1)));
}

TEST(Elementwise, ComparisonsAndLogic) {
  Tensor A = i64({1, 2, 3}, {3});
  Tensor B = i64({2}, {});
  expectTensor(run("equal", {A, B}), b8({0, 1, 0}, {3}));
  expectTensor(run("not_equal", {A, B}), b8({1, 0, 1}, {3}));
  expectTensor(run("less", {A, B}), b8({1, 0, 0}, {3}));
  expectTensor(run("less_equal", {A, B}), b8({1, 1, 0}, {3}));
  expectTensor(run("greater", {A, B}), b8({0, 0, 1}, {3}));
  expectTensor(run("greater_equal", {A, B}), b8({0, 1, 1}, {3}));
  expectTensor(run("less", {f32({NAN, 1}, {2}), f32({1, 2}, {2})}),
               b8({0, 1}, {2}));
  Tensor P = b8({1, 1, 0, 0}, {4}), Q = b8({1, 0, 1, 0}, {4});
  expectTensor(run("logical_and", {P, Q}), b8({1, 0, 0, 0}, {4}));
  expectTensor(run("logical_or", {P, Q}), b8({1, 1, 1, 0}, {4}));
  expectTensor(run("logical_xor", {P, Q}), b8({0, 1, 1, 0}, {4}));
  expectTensor(run("logical_not", {P}), b8({0, 0, 1, 1}, {4}));
  expectTensor(run("equal", {P, Q}), b8({1, 0, 0, 1}, {4}));
}

TEST(Elementwise, WhereAndCast) {
  Tensor C = b8({1, 0}, {2, 1});
  Tensor X = f32({1, 2, 3}, {3});
  Tensor Y = f32({-1}, {});
  expectTensor(run("where", {C, X, Y}), f32({1, 2, 3, -1, -1, -1}, {2, 3}));
  expectError([&] { run("where", {X, X, Y}); }, "where: input 'cond'");
  expectError([&] { run("where", {C, X, i64({1}, {})}); }, "same dtype");
  Attrs A{{"dtype", std::string("int32")}};
  expectTensor(run("cast", {f32({-2.7f, 3.9f}, {2})}, A),
               tensor<int32_t>({-2, 3}, {2}));
  expectTensor(run("cast", {f32({0, -0.5f}, {2})},
                   Attrs{{"dtype", std::string("bool")}}),
               b8({0, 1}, {2}));
  expectTensor(
      run("cast", {b8({1, 0}, {2})}, Attrs{{"dtype", std::string("float16")}}),
      f32({1, 0}, {2}).cast(DType::Float16));
  expectError([&] { run("cast", {X}); }, "cast: attribute 'dtype' is missing");
  expectError(
      [&] {
        run("cast", {X}, Attrs{{"dtype", std::string("f7")}});
      },
      "cast: unknown dtype 'f7'");
  expectError(
      [&] {
        run("cast", {X}, Attrs{{"dtype", int64_t(1)}});
      },
      "cast: attribute 'dtype' must be a string, got int");
}

TEST(Elementwise, Errors) {
  try {
    run("add", {f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({1, 2, 3, 4}, {4})});
    FAIL();
  } catch (const Error &E) {
    EXPECT_STREQ(E.what(), "add: cannot broadcast (2, 3) and (4,)");
  }
  expectError(
      [] {
        run("add", {f32({1}, {1}), i64({1}, {1})});
      },
      "add: inputs 'a' and 'b' must have the same dtype, got float32 "
      "and int64");
  expectError(
      [] {
        run("add", {b8({1}, {1}), b8({1}, {1})});
      },
      "add: input 'a' must have a numeric dtype, got bool");
  expectError([] { run("exp", {i64({1}, {1})}); },
              "exp: input 'x' must have a float dtype, got int64");
  expectError(
      [] {
        run("logical_and", {i64({1}, {1}), i64({1}, {1})});
      },
      "must have bool");
  expectError([] { run("relu", {}); }, "relu: expected 1 input, got 0");
}

TEST(Elementwise, ShapeFunctionsWorkOnMetaTensors) {
  auto M = shapeOf("add", {Tensor::meta({5, 1, 3}, DType::Float32),
                           Tensor::meta({4, 1}, DType::Float32)});
  ASSERT_EQ(M.size(), 1u);
  EXPECT_EQ(M[0].shape, (Shape{5, 4, 3}));
  EXPECT_EQ(M[0].dtype, DType::Float32);
  auto C = shapeOf(
      "less", {Tensor::meta({2}, DType::Int8), Tensor::meta({}, DType::Int8)});
  EXPECT_EQ(C[0].dtype, DType::Bool);
  EXPECT_FALSE(KernelRegistry::global().get("add").dataDependentShape);
}
