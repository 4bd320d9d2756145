//===- reduce_ops_test.cc - ONNX reductions, softmax family, cumsum, einsum, det
//-===//
#include "KernelTestUtil.h"

#include <cmath>

using namespace rivet;
using namespace rivet::test;
using Ints = std::vector<int64_t>;

TEST(ReduceOps, NewReductions) {
  Tensor X = f32({1, -2, 3, 4, -5, 6}, {2, 3});
  expectTensor(run("prod", {X}, {{"axis", Ints{1}}}), f32({-6, -120}, {2}));
  expectTensor(
      run("l1_norm", {X}, {{"axis", Ints{0}}, {"keepdims", int64_t(1)}}),
      f32({5, 7, 9}, {1, 3}));
  expectTensor(run("l2_norm", {X}, {{"axis", Ints{1}}}),
               f32({(float)std::sqrt(14.0), (float)std::sqrt(77.0)}, {2}));
  expectTensor(run("sum_square", {X}), f32({91}, {}));
  Tensor P = f32({1, 2, 3, 4}, {2, 2});
  expectTensor(run("log_sum", {P}, {{"axis", Ints{0}}}),
               f32({(float)std::log(4.0), (float)std::log(6.0)}, {2}));
  // log_sum_exp stays finite where exp overflows.
  Tensor Big = f32({1000, 1000, 1, 2}, {2, 2});
  expectTensor(run("log_sum_exp", {Big}, {{"axis", Ints{1}}}),
               f32({(float)(1000 + std::log(2.0)),
                    (float)std::log(std::exp(1.0) + std::exp(2.0))},
                   {2}));
  // Integers: prod and sum_square in int64.
  expectTensor(run("prod", {i64({2, 3, 4}, {3})}), i64({24}, {}));
  expectTensor(run("sum_square", {tensor<int32_t>({2, -3}, {2})}),
               tensor<int32_t>({13}, {}));
  // Empty: prod is 1, log_sum_exp is -inf.
  expectTensor(run("prod", {f32({}, {0, 2})}, {{"axis", Ints{0}}}),
               f32({1, 1}, {2}));
  EXPECT_EQ(run("log_sum_exp", {f32({}, {0})}).elementAsDouble(0), -INFINITY);
  // float16 computes via float.
  expectTensor(run("l1_norm", {f32({-1, 2}, {2}).cast(DType::Float16)}),
               f32({3}, {}).cast(DType::Float16));
}

TEST(ReduceOps, MaxMinOfBool) {
  Tensor B = b8({true, false, false, false}, {2, 2});
  expectTensor(run("max", {B}, {{"axis", Ints{1}}}), b8({true, false}, {2}));
  expectTensor(run("min", {B}, {{"axis", Ints{0}}}), b8({false, false}, {2}));
  expectError([] { run("prod", {b8({true}, {1})}); },
              "prod: input 'x' must have a numeric dtype");
}

// ONNX ReduceMax/ReduceMin-20: over no elements, the identity of the
// dtype (without empty_identity an error, tests/kernels/reduce_test.cc).
TEST(ReduceOps, MaxMinOverNoElementsWithEmptyIdentity) {
  Attrs A{{"axis", Ints{1}}, {"empty_identity", int64_t(1)}};
  Tensor F = run("max", {f32({}, {2, 0})}, A);
  ASSERT_EQ(F.shape(), (Shape{2}));
  EXPECT_EQ(F.elementAsDouble(0), -INFINITY);
  EXPECT_EQ(run("min", {f32({}, {2, 0})}, A).elementAsDouble(1), INFINITY);
  expectTensor(run("max", {tensor<int8_t>({}, {1, 0})}, A),
               tensor<int8_t>({-128}, {1}));
  expectTensor(run("min", {tensor<uint8_t>({}, {1, 0})}, A),
               tensor<uint8_t>({255}, {1}));
  expectTensor(run("min", {tensor<int32_t>({}, {1, 0})}, A),
               tensor<int32_t>({INT32_MAX}, {1}));
  expectTensor(run("max", {b8({}, {1, 0})}, A), b8({false}, {1}));
  expectTensor(run("min", {b8({}, {1, 0})}, A), b8({true}, {1}));
  // Elements present: the attribute changes nothing.
  expectTensor(run("max", {tensor<int8_t>({-3, 7}, {1, 2})}, A),
               tensor<int8_t>({7}, {1}));
  // dyn_reduce passes it on.
  Attrs D{{"reduction", std::string("max")},
          {"keepdims", int64_t(1)},
          {"empty_identity", int64_t(1)}};
  EXPECT_EQ(run("dyn_reduce", {f32({}, {2, 0}), i64({1}, {1})}, D).shape(),
            (Shape{2, 1}));
  expectError(
      [] {
        run("max", {f32({}, {2, 0})}, {{"axis", Ints{1}}});
      },
      "reduction over zero elements");
}

TEST(ReduceOps, DynReduce) {
  Tensor X = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Attrs A{{"reduction", std::string("sum")}, {"keepdims", int64_t(1)}};
  expectTensor(run("dyn_reduce", {X, i64({1}, {1})}, A), f32({6, 15}, {2, 1}));
  // Empty axes: all axes, or the input itself with noop_with_empty_axes.
  expectTensor(run("dyn_reduce", {X, i64({}, {0})}, A), f32({21}, {1, 1}));
  A.set("noop_with_empty_axes", int64_t(1));
  expectTensor(run("dyn_reduce", {X, i64({}, {0})}, A), X);
  Attrs M{{"reduction", std::string("log_sum_exp")}};
  expectTensor(run("dyn_reduce", {f32({0, 0}, {2}), i64({0}, {1})}, M),
               f32({(float)std::log(2.0)}, {}));
  expectError(
      [&] {
        run("dyn_reduce", {X, i64({2}, {1})}, A);
      },
      "sum: axis 2 is out of range for rank 2");
  expectError(
      [&] {
        run("dyn_reduce", {X, i64({0}, {1})},
            {{"reduction", std::string("bogus")}});
      },
      "dyn_reduce: unknown reduction 'bogus'");
  expectError(
      [&] {
        run("dyn_reduce", {X, f32({0}, {1})}, A);
      },
      "dyn_reduce: input 'axes' must have int32 or int64");
}

TEST(ReduceOps, SelectLastIndex) {
  Tensor X = f32({2, 5, 5, 1, 1, 0}, {2, 3});
  expectTensor(run("argmax", {X}, {{"axis", int64_t(1)}}), i64({1, 0}, {2}));
  expectTensor(run("argmax", {X},
                   {{"axis", int64_t(1)}, {"select_last_index", int64_t(1)}}),
               i64({2, 1}, {2}));
  expectTensor(run("argmin", {X},
                   {{"axis", int64_t(0)}, {"select_last_index", int64_t(1)}}),
               i64({1, 1, 1}, {3}));
  expectError(
      [&] {
        run("argmax", {X}, {{"select_last_index", int64_t(3)}});
      },
      "must be 0 or 1");
}

TEST(ReduceOps, SoftmaxFamily) {
  Tensor X = f32({1, 2, 3, 4}, {2, 2});
  double L1 = std::log(std::exp(1.0) + std::exp(2.0));
  expectTensor(
      run("log_softmax", {X}),
      f32({(float)(1 - L1), (float)(2 - L1), (float)(1 - L1), (float)(2 - L1)},
          {2, 2}),
      1e-5, 1e-5);
  expectTensor(run("hardmax", {f32({1, 3, 3, 0, -1, -2}, {2, 3})}),
               f32({0, 1, 0, 1, 0, 0}, {2, 3}));
  expectTensor(
      run("hardmax", {f32({1, 3, 3, 0}, {2, 2})}, {{"axis", int64_t(0)}}),
      f32({0, 1, 1, 0}, {2, 2}));
  // coerce_2d at axis 0: one softmax over all four elements.
  Tensor S =
      run("softmax", {X}, {{"axis", int64_t(0)}, {"coerce_2d", int64_t(1)}});
  double Z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0);
  EXPECT_NEAR(S.elementAsDouble(3), std::exp(4.0) / Z, 1e-6);
  // coerce_2d allows axis == rank (each element alone).
  expectTensor(
      run("softmax", {X}, {{"axis", int64_t(2)}, {"coerce_2d", int64_t(1)}}),
      f32({1, 1, 1, 1}, {2, 2}));
  expectError(
      [&] {
        run("log_softmax", {X}, {{"axis", int64_t(2)}});
      },
      "log_softmax: axis 2 is out of range for rank 2");
  expectError([] { run("hardmax", {i64({1}, {1})}); }, "float dtype");
}

TEST(ReduceOps, CumSum) {
  Tensor X = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  expectTensor(run("cumsum", {X}, {{"axis", int64_t(1)}}),
               f32({1, 3, 6, 4, 9, 15}, {2, 3}));
  expectTensor(run("cumsum", {X, i64({0}, {})}),
               f32({1, 2, 3, 5, 7, 9}, {2, 3}));
  expectTensor(run("cumsum", {X, tensor<int32_t>({-1}, {1})},
                   {{"exclusive", int64_t(1)}, {"reverse", int64_t(1)}}),
               f32({5, 3, 0, 11, 6, 0}, {2, 3}));
  expectTensor(run("cumsum", {i64({1, 2, 3}, {3})},
                   {{"axis", int64_t(0)}, {"exclusive", int64_t(1)}}),
               i64({0, 1, 3}, {3}));
  expectError(
      [&] {
        run("cumsum", {X, i64({2}, {})});
      },
      "cumsum: axis 2 is out of range");
  expectError(
      [&] {
        run("cumsum", {X, i64({0, 1}, {2})});
      },
      "must be a scalar");
  expectError([&] { run("cumsum", {X}); }, "cumsum: attribute 'axis'");
}

TEST(ReduceOps, Einsum) {
  auto E = [](const char *Eq) { return Attrs{{"equation", std::string(Eq)}}; };
  Tensor A = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor B = f32({1, 0, 0, 1, 1, 1}, {3, 2});
  expectTensor(run("einsum", {A, B}, E("ij,jk->ik")),
               f32({4, 5, 10, 11}, {2, 2}));
  expectTensor(run("einsum", {A}, E("ij->ji")),
               f32({1, 4, 2, 5, 3, 6}, {3, 2}));
  expectTensor(run("einsum", {A}, E("ij->i")), f32({6, 15}, {2}));
  // Implicit output: labels seen once, alphabetically ("ba" -> "ab"
  // transposes).
  expectTensor(run("einsum", {A}, E("ba")), f32({1, 4, 2, 5, 3, 6}, {3, 2}));
  expectTensor(run("einsum", {f32({1, 2}, {2}), f32({3, 4}, {2})}, E("i,i")),
               f32({11}, {}));
  // Diagonal (repeated label) and batched ellipsis.
  Tensor M = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  expectTensor(run("einsum", {M}, E("...ii->...i")), f32({1, 4, 5, 8}, {2, 2}));
  // Implicit "bii" keeps b: the trace of each matrix.
  expectTensor(run("einsum", {M}, E("bii")), f32({5, 13}, {2}));
  expectTensor(run("einsum", {M, M}, E("bij,bjk->bik")),
               f32({7, 10, 15, 22, 67, 78, 91, 106}, {2, 2, 2}));
  expectError(
      [&] {
        run("einsum", {A, A}, E("ij,jk->ik"));
      },
      "label 'j' has extents 3 and 2");
  expectError([&] { run("einsum", {A}, E("ijk->i")); },
              "does not match operand 0");
  expectError([&] { run("einsum", {A}, E("ij->z")); }, "output label 'z'");
}

TEST(ReduceOps, Det) {
  expectTensor(run("det", {f32({1, 2, 3, 4}, {2, 2})}), f32({-2}, {}));
  // Needs a row swap; batched.
  expectTensor(run("det", {f32({0, 1, 1, 0, 2, 0, 0, 3}, {2, 2, 2})}),
               f32({-1, 6}, {2}));
  expectTensor(run("det", {f32({1, 2, 3, 2, 4, 6, 1, 0, 1}, {3, 3})}),
               f32({0}, {}));
  expectTensor(
      run("det", {tensor<double>({2, -1, 0, -1, 2, -1, 0, -1, 2}, {3, 3})}),
      tensor<double>({4}, {}));
  expectError(
      [] {
        run("det", {f32({1, 2}, {1, 2})});
      },
      "det: expects square matrices");
  expectError([] { run("det", {i64({1}, {1, 1})}); }, "float dtype");
}
