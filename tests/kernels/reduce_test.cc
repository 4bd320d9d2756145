//===- reduce_test.cc - Reductions, arg-reductions and softmax ------------===//
#include "KernelTestUtil.h"

#include <cmath>

using namespace rivet;
using namespace rivet::test;
using Ints = std::vector<int64_t>;

TEST(Reduce, SumMeanMaxMin) {
  Tensor X = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  expectTensor(run("sum", {X}), f32({21}, {}));
  expectTensor(run("sum", {X}, {{"axis", Ints{0}}}), f32({5, 7, 9}, {3}));
  expectTensor(run("sum", {X}, {{"axis", Ints{-1}}, {"keepdims", int64_t(1)}}),
               f32({6, 15}, {2, 1}));
  expectTensor(run("sum", {X}, {{"axis", Ints{}}, {"keepdims", int64_t(1)}}),
               f32({21}, {1, 1}));
  expectTensor(run("mean", {X}, {{"axis", Ints{1}}}), f32({2, 5}, {2}));
  expectTensor(run("max", {X}, {{"axis", Ints{0}}}), f32({4, 5, 6}, {3}));
  expectTensor(run("min", {X}, {{"axis", Ints{1, 0}}}), f32({1}, {}));
  // 3-D middle axis.
  Tensor Y = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  expectTensor(run("sum", {Y}, {{"axis", Ints{1}}}),
               f32({4, 6, 12, 14}, {2, 2}));
  expectTensor(run("max", {Y}, {{"axis", Ints{0, 2}}}), f32({6, 8}, {2}));
  // Integers.
  expectTensor(run("sum", {i64({1, 2, 3}, {3})}), i64({6}, {}));
  expectTensor(run("mean", {i64({1, 2}, {2})}), i64({1}, {}));
  expectTensor(run("min", {tensor<int8_t>({-5, 3}, {2})}),
               tensor<int8_t>({-5}, {}));
  // Empty: sum is 0, mean is NaN, max is an error.
  expectTensor(run("sum", {f32({}, {0, 2})}, {{"axis", Ints{0}}}),
               f32({0, 0}, {2}));
  EXPECT_TRUE(std::isnan(run("mean", {f32({}, {0})}).elementAsDouble(0)));
  expectError(
      [] {
        run("max", {f32({}, {0, 2})}, {{"axis", Ints{0}}});
      },
      "max: reduction over zero elements of (0, 2)");
  EXPECT_EQ(run("max", {f32({}, {0, 2})}, {{"axis", Ints{1}}}).shape(),
            (Shape{0}));
  // NaN propagates through max.
  EXPECT_TRUE(
      std::isnan(run("max", {f32({1, NAN, 3}, {3})}).elementAsDouble(0)));
  // float16.
  expectTensor(run("sum", {f32({1, 2, 3}, {3}).cast(DType::Float16)}),
               f32({6}, {}).cast(DType::Float16));
}

TEST(Reduce, Errors) {
  Tensor X = f32({1, 2}, {2});
  expectError(
      [&] {
        run("sum", {X}, {{"axis", Ints{1}}});
      },
      "sum: axis 1 is out of range for rank 1");
  expectError(
      [&] {
        run("sum", {X}, {{"axis", Ints{0, -1}}});
      },
      "appears twice");
  expectError(
      [&] {
        run("sum", {X}, {{"keepdims", int64_t(2)}});
      },
      "must be 0 or 1");
  expectError(
      [&] {
        run("sum", {X}, {{"axis", std::string("x")}});
      },
      "sum: attribute 'axis' must be an ints, got string");
  expectError([&] { run("sum", {b8({1}, {1})}); }, "numeric dtype");
}

TEST(Reduce, ArgMaxArgMin) {
  Tensor X = f32({1, 5, 5, 0, 7, -1}, {2, 3});
  expectTensor(run("argmax", {X}), i64({4}, {}));
  expectTensor(run("argmin", {X}), i64({5}, {}));
  expectTensor(run("argmax", {X}, {{"axis", int64_t(1)}}), i64({1, 1}, {2}));
  expectTensor(
      run("argmax", {X}, {{"axis", int64_t(0)}, {"keepdims", int64_t(1)}}),
      i64({0, 1, 0}, {1, 3}));
  expectTensor(run("argmin", {X}, {{"axis", int64_t(-1)}}), i64({0, 2}, {2}));
  expectTensor(run("argmax", {X}, {{"keepdims", int64_t(1)}}),
               i64({4}, {1, 1}));
  expectTensor(run("argmax", {f32({1, NAN, 3, NAN}, {4})}), i64({1}, {}));
  expectTensor(run("argmin", {i64({3, 1, 1}, {3})}), i64({1}, {}));
  expectError([] { run("argmax", {f32({}, {0})}); },
              "argmax: reduction over zero elements");
}

TEST(Reduce, Softmax) {
  Tensor X = f32({1, 2, 3, 1000, 1000, 1000}, {2, 3});
  Tensor S = run("softmax", {X});
  double E1 = std::exp(1.0), E2 = std::exp(2.0), E3 = std::exp(3.0),
         Z = E1 + E2 + E3;
  expectTensor(S, f32({(float)(E1 / Z), (float)(E2 / Z), (float)(E3 / Z),
                       1.f / 3, 1.f / 3, 1.f / 3},
                      {2, 3}));
  Tensor T = run("softmax", {X}, {{"axis", int64_t(0)}});
  EXPECT_NEAR(T.elementAsDouble(0), 0.0, 1e-6);
  EXPECT_NEAR(T.elementAsDouble(3), 1.0, 1e-6);
  expectError([] { run("softmax", {i64({1}, {1})}); }, "float dtype");
  expectError([] { run("softmax", {f32({1}, {})}); },
              "softmax: axis -1 is out of range for rank 0");
}
