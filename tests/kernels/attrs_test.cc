//===- attrs_test.cc - Attribute getters and serialization ----------------===//
#include "KernelTestUtil.h"

using namespace rivet;
using namespace rivet::test;

static Attrs sample() {
  return Attrs{{"axis", int64_t(-1)},
               {"alpha", 0.5},
               {"mode", std::string("constant")},
               {"axes", std::vector<int64_t>{0, 2}},
               {"scales", std::vector<double>{1.5, 2.0}},
               {"names", std::vector<std::string>{"a", "", "ccc"}},
               {"value", f32({1, 2, 3, 4}, {2, 2})},
               {"meta", Tensor::meta({3}, DType::Int8)}};
}

TEST(Attrs, Getters) {
  Attrs A = sample();
  EXPECT_EQ(A.getInt("axis"), -1);
  EXPECT_EQ(A.getFloat("alpha"), 0.5);
  EXPECT_EQ(A.getFloat("axis"), -1.0); // int accepted as float
  EXPECT_EQ(A.getString("mode"), "constant");
  EXPECT_EQ(A.getInts("axes"), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(A.getFloats("axes"), (std::vector<double>{0, 2}));
  EXPECT_EQ(A.getStrings("names").size(), 3u);
  EXPECT_EQ(A.getTensor("value").numel(), 4);
  EXPECT_EQ(A.getInt("missing", 7), 7);
  EXPECT_EQ(A.getInts("missing", {1}), (std::vector<int64_t>{1}));
  EXPECT_EQ(A.getString("missing", "x"), "x");
  EXPECT_EQ(A.getFloat("missing", 2.5), 2.5);
  Attrs B{{"f", 3.0}, {"g", 3.5}, {"e", std::vector<int64_t>{}}};
  EXPECT_EQ(B.getInt("f"), 3); // integral float accepted as int
  expectError([&] { B.getInt("g"); }, "attribute 'g' must be an int");
  EXPECT_TRUE(B.getStrings("e").empty()); // `[]` is also an empty string list
}

TEST(Attrs, GetterErrors) {
  Attrs A = sample();
  try {
    A.getInt("nope");
    FAIL();
  } catch (const Error &E) {
    EXPECT_STREQ(E.what(), "attribute 'nope' is missing");
  }
  try {
    A.getInt("mode");
    FAIL();
  } catch (const Error &E) {
    EXPECT_STREQ(E.what(), "attribute 'mode' must be an int, got string");
  }
  expectError([&] { A.getString("axis"); },
              "attribute 'axis' must be a string, got int");
  expectError([&] { A.getInts("mode"); }, "must be an ints, got string");
  expectError([&] { A.getTensor("axes"); }, "must be a tensor, got ints");
  expectError([&] { A.getStrings("axes"); }, "got ints");
  expectError([&] { A.getInt("axis", 0), A.getInt("alpha", 0); },
              "attribute 'alpha' must be an int");
}

TEST(Attrs, SerializeRoundTrip) {
  Attrs A = sample();
  std::vector<uint8_t> Bytes;
  A.serialize(Bytes);
  size_t Pos = 0;
  Attrs B = Attrs::deserialize(Bytes.data(), Bytes.size(), Pos);
  EXPECT_EQ(Pos, Bytes.size());
  EXPECT_TRUE(A == B);
  EXPECT_EQ(A.hash(), B.hash());
  EXPECT_FALSE(B.getTensor("meta").hasData());
  EXPECT_EQ(B.getTensor("value").toDoubleVector(),
            (std::vector<double>{1, 2, 3, 4}));
  // Empty attrs and a concatenation of two blobs.
  std::vector<uint8_t> Two;
  Attrs().serialize(Two);
  A.serialize(Two);
  Pos = 0;
  EXPECT_TRUE(Attrs::deserialize(Two.data(), Two.size(), Pos).empty());
  EXPECT_TRUE(Attrs::deserialize(Two.data(), Two.size(), Pos) == A);
  EXPECT_EQ(Pos, Two.size());
}

TEST(Attrs, TruncatedAndGarbageBytesThrow) {
  std::vector<uint8_t> Bytes;
  sample().serialize(Bytes);
  for (size_t N = 0; N < Bytes.size(); ++N) {
    size_t Pos = 0;
    EXPECT_THROW(Attrs::deserialize(Bytes.data(), N, Pos), Error) << N;
  }
  // Flipping bytes must never crash: either an Error or some Attrs.
  for (size_t I = 0; I < Bytes.size(); ++I)
    for (uint8_t X : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> Bad = Bytes;
      Bad[I] ^= X;
      size_t Pos = 0;
      try {
        Attrs::deserialize(Bad.data(), Bad.size(), Pos);
      } catch (const Error &) {
      }
    }
  // A huge count with little data.
  std::vector<uint8_t> Huge = {0xff, 0xff, 0xff, 0xff, 0, 0};
  size_t Pos = 0;
  expectError([&] { Attrs::deserialize(Huge.data(), Huge.size(), Pos); },
              "truncated");
  // An invalid kind tag.
  std::vector<uint8_t> BadKind = {1, 0, 0, 0, 1, 0, 0, 0, 'x', 9};
  Pos = 0;
  expectError([&] { Attrs::deserialize(BadKind.data(), BadKind.size(), Pos); },
              "invalid kind tag 9");
}

TEST(Attrs, EqualityAndHash) {
  Attrs A = sample(), B = sample();
  EXPECT_TRUE(A == B);
  EXPECT_EQ(A.hash(), B.hash());
  B.set("axis", int64_t(0));
  EXPECT_FALSE(A == B);
  Attrs C = sample();
  C.set("value", f32({1, 2, 3, 5}, {2, 2}));
  EXPECT_FALSE(A == C);
  EXPECT_NE(A.hash(), C.hash());
  Attrs D{{"x", int64_t(1)}}, E{{"x", 1.0}};
  EXPECT_FALSE(D == E); // different kinds
  Attrs N1{{"x", std::nan("")}}, N2{{"x", std::nan("")}};
  EXPECT_TRUE(N1 == N2);
}
