//===- string_ops_test.cc - String tensors: table, cast, npy, operators ---===//
#include "KernelTestUtil.h"

#include "kernels/Npy.h"
#include "kernels/Random.h"
#include "kernels/StringTable.h"

using namespace rivet;
using namespace rivet::test;

namespace {

Tensor strings(const std::vector<std::string> &V, Shape S) {
  return stringTensor(V, S);
}
std::vector<std::string> texts(const Tensor &T) { return stringValues(T); }

TEST(StringTable, EqualTextEqualHandles) {
  EXPECT_EQ(internString("monday"), internString(std::string("mon") + "day"));
  EXPECT_NE(internString("monday"), internString("Monday"));
  EXPECT_EQ(internString(""), nullptr);
  EXPECT_EQ(stringOf(nullptr), "");
  // A fresh string tensor reads as empty strings, never as garbage.
  EXPECT_EQ(texts(Tensor::empty({2}, DType::String)),
            (std::vector<std::string>{"", ""}));
}

TEST(StringTable, CastToAndFromNumbers) {
  Tensor F = f32({0.039187793f, 1.5f, -2.0f}, {3});
  Tensor S = F.cast(DType::String);
  EXPECT_EQ(texts(S), (std::vector<std::string>{"0.039187793", "1.5", "-2"}));
  EXPECT_TRUE(allClose(S.cast(DType::Float32), F, 0, 0));
  Tensor Special = strings({"INF", "-inf", "NaN", "+Inf"}, {4});
  std::vector<double> V = Special.cast(DType::Float32).toDoubleVector();
  EXPECT_TRUE(std::isinf(V[0]) && V[0] > 0);
  EXPECT_TRUE(std::isinf(V[1]) && V[1] < 0);
  EXPECT_TRUE(std::isnan(V[2]));
  EXPECT_TRUE(std::isinf(V[3]) && V[3] > 0);
  EXPECT_EQ(strings({"12", "-7"}, {2}).cast(DType::Int64).toIntVector(),
            (std::vector<int64_t>{12, -7}));
  expectError([&] { strings({"twelve"}, {1}).cast(DType::Float32); },
              "'twelve' is not a number");
}

TEST(StringTable, NpyRoundTripAsNumpyUnicode) {
  Tensor S = strings({"a", "", "naïve", "日本"}, {2, 2});
  std::vector<uint8_t> Bytes = npyBytes(S);
  std::string Header(Bytes.begin() + 10, Bytes.begin() + 60);
  EXPECT_NE(Header.find("'descr': '<U5'"), std::string::npos) << Header;
  Tensor Back = readNpyBytes(Bytes.data(), Bytes.size(), "s.npy");
  EXPECT_EQ(Back.dtype(), DType::String);
  EXPECT_EQ(Back.shape(), (Shape{2, 2}));
  EXPECT_EQ(texts(Back), texts(S));
}

TEST(StringOps, EqualComparesText) {
  Tensor R = run("equal", {strings({"a", "b", "c"}, {3}), strings({"a"}, {1})});
  EXPECT_EQ(R.toIntVector(), (std::vector<int64_t>{1, 0, 0}));
}

TEST(StringOps, Normalizer) {
  Attrs A{{"case_change_action", std::string("UPPER")},
          {"stopwords", std::vector<std::string>{"monday"}}};
  Tensor R = run("string_normalizer",
                 {strings({"Monday", "tuesday", "wednesday"}, {1, 3})}, A);
  EXPECT_EQ(R.shape(), (Shape{1, 2}));
  EXPECT_EQ(texts(R), (std::vector<std::string>{"TUESDAY", "WEDNESDAY"}));
  // Everything removed: one empty string.
  Tensor E = run("string_normalizer", {strings({"monday"}, {1})}, A);
  EXPECT_EQ(texts(E), (std::vector<std::string>{""}));
}

TEST(StringOps, SplitPadsAndCounts) {
  std::vector<Tensor> R =
      runAll("string_split", {strings({"a,b,,c", "x"}, {2})},
             Attrs{{"delimiter", std::string(",")}, {"maxsplit", int64_t(2)}});
  EXPECT_EQ(R[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(texts(R[0]),
            (std::vector<std::string>{"a", "b", ",c", "x", "", ""}));
  EXPECT_EQ(R[1].toIntVector(), (std::vector<int64_t>{3, 1}));
  std::vector<Tensor> W =
      runAll("string_split", {strings({"  hello   world  "}, {1})});
  EXPECT_EQ(texts(W[0]), (std::vector<std::string>{"hello", "world"}));
}

TEST(StringOps, ConcatBroadcastsAndRegexMatchesWhole) {
  Tensor C =
      run("string_concat", {strings({"a", "b"}, {2}), strings({"!"}, {})});
  EXPECT_EQ(texts(C), (std::vector<std::string>{"a!", "b!"}));
  Tensor M =
      run("regex_full_match", {strings({"abc@x.com", "abc@x.com.", "no"}, {3})},
          Attrs{{"pattern", std::string(R"([a-z]+@[a-z]+\.com)")}});
  EXPECT_EQ(M.toIntVector(), (std::vector<int64_t>{1, 0, 0}));
  expectError(
      [&] {
        run("regex_full_match", {strings({"a"}, {1})},
            Attrs{{"pattern", std::string("(")}});
      },
      "invalid pattern");
}

TEST(StringOps, ArithmeticRefusesStrings) {
  expectError(
      [&] {
        run("add", {strings({"a"}, {1}), strings({"b"}, {1})});
      },
      "string");
}

} // namespace

TEST(StringTable, RandomStringsAreShortWordsAndSeeded) {
  Tensor A = randomTensor({50}, DType::String, 3);
  EXPECT_EQ(stringValues(A),
            stringValues(randomTensor({50}, DType::String, 3)));
  for (const std::string &W : stringValues(A)) {
    EXPECT_LE(W.size(), 8u);
    for (char C : W)
      EXPECT_TRUE(C >= 'a' && C <= 'z') << W;
  }
}
