//===- label_encoder_test.cc - label_encoder: mappings and defaults -------===//
#include "KernelTestUtil.h"

#include "kernels/StringTable.h"

#include <cmath>
#include <limits>

using namespace rivet;
using namespace rivet::test;

namespace {

using Strings = std::vector<std::string>;

Tensor strings(const Strings &V) {
  return stringTensor(V, {(int64_t)V.size()});
}
Strings texts(const Tensor &T) { return stringValues(T); }

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(LabelEncoder, StringsToIntsWithDefault) {
  Attrs A{{"keys_strings", Strings{"a", "b", "c"}},
          {"values_ints", std::vector<int64_t>{0, 1, 2}}};
  Tensor X = strings({"a", "b", "d", "c", ""});
  Tensor R = run("label_encoder", {X}, A);
  EXPECT_EQ(R.dtype(), DType::Int64);
  EXPECT_EQ(R.toIntVector(), (std::vector<int64_t>{0, 1, -1, 2, -1}));
  A.set("default_int", int64_t(42));
  EXPECT_EQ(run("label_encoder", {X}, A).toIntVector(),
            (std::vector<int64_t>{0, 1, 42, 2, 42}));
}

TEST(LabelEncoder, IntsToStringsKeepsShape) {
  Attrs A{{"keys_ints", std::vector<int64_t>{7, -3}},
          {"values_strings", Strings{"seven", "minus three"}}};
  Tensor R = run("label_encoder", {i64({-3, 7, 0, 7}, {2, 2})}, A);
  EXPECT_EQ(R.typeString(), Tensor::empty({2, 2}, DType::String).typeString());
  EXPECT_EQ(texts(R), (Strings{"minus three", "seven", "_Unused", "seven"}));
  A.set("default_string", std::string("?"));
  EXPECT_EQ(texts(run("label_encoder", {i64({5}, {1})}, A)), (Strings{"?"}));
}

TEST(LabelEncoder, FloatKeysMatchNaNAndBothZeros) {
  Attrs A{{"keys_floats", std::vector<double>{0.5, kNaN, 0.0}},
          {"values_floats", std::vector<double>{1.0, 2.0, 3.0}}};
  Tensor R =
      run("label_encoder", {f32({0.5f, std::nanf(""), -0.0f, 0.25f}, {4})}, A);
  EXPECT_EQ(R.dtype(), DType::Float32);
  std::vector<double> V = R.toDoubleVector();
  EXPECT_EQ(V[0], 1.0);
  EXPECT_EQ(V[1], 2.0);
  EXPECT_EQ(V[2], 3.0);
  // The default default is -0.0.
  EXPECT_EQ(V[3], 0.0);
  EXPECT_TRUE(std::signbit(V[3]));
}

TEST(LabelEncoder, FloatsToStringsAndIntsToFloats) {
  Attrs S{{"keys_floats", std::vector<double>{1.5}},
          {"values_strings", Strings{"one and a half"}},
          {"default_string", std::string("other")}};
  EXPECT_EQ(texts(run("label_encoder", {tensor<double>({1.5, 2.5}, {2})}, S)),
            (Strings{"one and a half", "other"}));
  Attrs F{{"keys_ints", std::vector<int64_t>{1}},
          {"values_floats", std::vector<double>{0.25}},
          {"default_float", 9.0}};
  expectTensor(run("label_encoder", {i64({1, 2}, {2})}, F),
               f32({0.25f, 9.0f}, {2}), 0, 0);
}

TEST(LabelEncoder, NarrowIntegerKeysAndValuesOfADType) {
  // ONNX opset 4: int16 and int32 keys and values (their own dtypes).
  Attrs A{{"keys_ints", std::vector<int64_t>{-2, 300}},
          {"values_ints", std::vector<int64_t>{10, 20}},
          {"default_int", int64_t(-7)},
          {"dtype", std::string("int16")}};
  Tensor R = run("label_encoder", {tensor<int32_t>({300, -2, 4}, {3})}, A);
  EXPECT_EQ(R.dtype(), DType::Int16);
  EXPECT_EQ(R.toIntVector(), (std::vector<int64_t>{20, 10, -7}));
}

TEST(LabelEncoder, LastOfEqualKeysCounts) {
  Attrs A{{"keys_strings", Strings{"a", "a"}},
          {"values_ints", std::vector<int64_t>{1, 2}}};
  EXPECT_EQ(run("label_encoder", {strings({"a"})}, A).toIntVector(),
            (std::vector<int64_t>{2}));
}

TEST(LabelEncoder, RefusesInconsistentAttributesAndInputs) {
  Tensor X = strings({"a"});
  expectError(
      [&] {
        run("label_encoder", {X},
            {{"keys_strings", Strings{"a"}},
             {"keys_ints", std::vector<int64_t>{1}},
             {"values_ints", std::vector<int64_t>{1}}});
      },
      "exactly one of the attributes keys_strings, keys_ints and "
      "keys_floats, got keys_strings, keys_ints");
  expectError(
      [&] {
        run("label_encoder", {X}, {{"keys_strings", Strings{"a"}}});
      },
      "values_floats, got none");
  expectError(
      [&] {
        run("label_encoder", {X},
            {{"keys_strings", Strings{"a", "b"}},
             {"values_ints", std::vector<int64_t>{1}}});
      },
      "2 keys but 1 values");
  expectError(
      [&] {
        run("label_encoder", {i64({1}, {1})},
            {{"keys_strings", Strings{"a"}},
             {"values_ints", std::vector<int64_t>{1}}});
      },
      "x must have a string dtype to match string keys, got int64");
  expectError(
      [&] {
        run("label_encoder", {X},
            {{"keys_strings", Strings{"a"}},
             {"values_ints", std::vector<int64_t>{1}},
             {"dtype", std::string("float32")}});
      },
      "dtype float32 cannot hold integer values");
}

} // namespace
