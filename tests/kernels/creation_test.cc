//===- creation_test.cc - Creation and shape kernels ----------------------===//
#include "KernelTestUtil.h"

using namespace rivet;
using namespace rivet::test;
using Ints = std::vector<int64_t>;

TEST(Creation, ShapeOf) {
  expectTensor(run("shape_of", {f32({}, {2, 0, 3})}), i64({2, 0, 3}, {3}));
  expectTensor(run("shape_of", {f32({1}, {})}), i64({}, {0}));
  auto M = shapeOf("shape_of", {Tensor::meta({4, 5}, DType::Int8)});
  EXPECT_EQ(M[0].shape, (Shape{2}));
  EXPECT_EQ(M[0].dtype, DType::Int64);
}

TEST(Creation, ZerosOnesFull) {
  expectTensor(run("zeros", {}, {{"shape", Ints{2, 2}}}),
               f32({0, 0, 0, 0}, {2, 2}));
  expectTensor(
      run("ones", {}, {{"shape", Ints{3}}, {"dtype", std::string("int32")}}),
      tensor<int32_t>({1, 1, 1}, {3}));
  expectTensor(
      run("ones", {}, {{"shape", Ints{}}, {"dtype", std::string("bool")}}),
      b8({1}, {}));
  expectTensor(run("full", {i64({1ll << 60}, {})}, {{"shape", Ints{2}}}),
               i64({1ll << 60, 1ll << 60}, {2}));
  expectTensor(run("full", {f32({2.5f}, {})},
                   {{"shape", Ints{1, 2}}, {"dtype", std::string("int64")}}),
               i64({2, 2}, {1, 2}));
  expectError([] { run("zeros", {}); }, "zeros: attribute 'shape' is missing");
  expectError(
      [] {
        run("zeros", {}, {{"shape", Ints{-1}}});
      },
      "zeros: negative extent -1");
  expectError(
      [] {
        run("full", {f32({1, 2}, {2})}, {{"shape", Ints{1}}});
      },
      "full: input 'value' must be a scalar");
  expectError(
      [] {
        run("ones", {}, {{"shape", Ints{1}}, {"dtype", std::string("float8")}});
      },
      "ones: unknown dtype 'float8'");
}

TEST(Creation, Arange) {
  const KernelInfo &K = KernelRegistry::global().get("arange");
  EXPECT_TRUE(K.dataDependentShape);
  expectTensor(run("arange", {i64({0}, {}), i64({5}, {}), i64({2}, {})}),
               i64({0, 2, 4}, {3}));
  expectTensor(run("arange", {i64({5}, {}), i64({0}, {}), i64({-2}, {})}),
               i64({5, 3, 1}, {3}));
  expectTensor(run("arange", {i64({0}, {}), i64({-3}, {}), i64({1}, {})}),
               i64({}, {0}));
  expectTensor(run("arange", {f32({0}, {}), f32({1}, {}), f32({0.25f}, {})}),
               f32({0, 0.25f, 0.5f, 0.75f}, {4}));
  expectTensor(run("arange", {f32({0}, {}), f32({1}, {}), f32({0.3f}, {})}),
               f32({0, 0.3f, 0.6f, 0.9f}, {4}));
  expectTensor(run("arange", {i64({1}, {}), i64({4}, {}), i64({1}, {})},
                   {{"dtype", std::string("float32")}}),
               f32({1, 2, 3}, {3}));
  expectError(
      [] {
        run("arange", {i64({0}, {}), i64({5}, {}), i64({0}, {})});
      },
      "arange: step is 0");
  expectError(
      [] {
        run("arange", {i64({0}, {}), f32({5}, {}), i64({1}, {})});
      },
      "same dtype");
  expectError(
      [] {
        run("arange", {i64({0}, {1}), i64({5}, {}), i64({1}, {})});
      },
      "arange: input 'start' must be a scalar");
}

TEST(Creation, EveryOperatorInTheTableIsRegistered) {
  for (const char *Op :
       {"add",           "subtract",    "multiply",      "divide",
        "pow",           "maximum",     "minimum",       "negative",
        "abs",           "relu",        "exp",           "log",
        "tanh",          "sigmoid",     "sqrt",          "equal",
        "not_equal",     "less",        "less_equal",    "greater",
        "greater_equal", "logical_and", "logical_or",    "logical_xor",
        "logical_not",   "where",       "cast",          "dense",
        "matmul",        "reshape",     "transpose",     "concatenate",
        "stack",         "split",       "strided_slice", "take",
        "sum",           "mean",        "max",           "min",
        "argmax",        "argmin",      "softmax",       "shape_of",
        "zeros",         "ones",        "full",          "arange"})
    EXPECT_NE(KernelRegistry::global().find(Op), nullptr) << Op;
  expectError([] { KernelRegistry::global().get("frobnicate"); },
              "no kernel for operator 'frobnicate'");
  expectError(
      [] {
        KernelRegistry::global().add(
            KernelInfo{"add", KernelRegistry::global().get("add").kernel,
                       KernelRegistry::global().get("add").shapeFn, false, {}});
      },
      "registered twice");
}
