//===- npy_test.cc - .npy reading and writing -----------------------------===//
#include "KernelTestUtil.h"
#include "kernels/Npy.h"
#include "kernels/Random.h"

#include <cstdio>
#include <fstream>
#include <iterator>

using namespace rivet;
using namespace rivet::test;

static std::string fixture(const std::string &Name) {
  return std::string(RIVET_SOURCE_DIR) + "/tests/kernels/data/" + Name + ".npy";
}

static std::vector<uint8_t> fileBytes(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(F), {});
}

TEST(Npy, ReadsNumPyFixtures) {
  expectTensor(readNpy(fixture("f32_2x3")),
               f32({-1, -0.5, 0, 0.5, 1, 1.5}, {2, 3}));
  expectTensor(readNpy(fixture("f32_2x3_v2")),
               f32({-1, -0.5, 0, 0.5, 1, 1.5}, {2, 3}));
  expectTensor(readNpy(fixture("f64_scalar")), Tensor::scalar<double>(3.25));
  Tensor H = readNpy(fixture("f16_4"));
  EXPECT_EQ(H.dtype(), DType::Float16);
  EXPECT_EQ(H.toDoubleVector(),
            (std::vector<double>{1.0, -2.5, 65504.0, 6.103515625e-05}));
  expectTensor(readNpy(fixture("i64_3")), i64({-1, 0, 1ll << 40}, {3}));
  expectTensor(readNpy(fixture("i32_2x2")),
               tensor<int32_t>({1, -2, 3, -4}, {2, 2}));
  expectTensor(readNpy(fixture("i16_2")), tensor<int16_t>({-300, 300}, {2}));
  expectTensor(readNpy(fixture("i8_3")), tensor<int8_t>({-128, 0, 127}, {3}));
  expectTensor(readNpy(fixture("u8_3")), tensor<uint8_t>({0, 128, 255}, {3}));
  expectTensor(readNpy(fixture("bool_2x2")),
               b8({true, false, false, true}, {2, 2}));
  Tensor E = readNpy(fixture("f32_empty_0x3"));
  EXPECT_EQ(E.shape(), (Shape{0, 3}));
  // Fortran order is transposed into row-major.
  expectTensor(readNpy(fixture("f32_fortran_2x3")),
               f32({1, 2, 3, 4, 5, 6}, {2, 3}));
  expectError([] { readNpy(fixture("f32_bigendian")); }, "big-endian");
}

TEST(Npy, WritesByteIdenticalToNumPy) {
  for (const char *Name :
       {"f32_2x3", "f64_scalar", "f16_4", "i64_3", "i32_2x2", "i16_2", "i8_3",
        "u8_3", "bool_2x2", "f32_empty_0x3"}) {
    std::vector<uint8_t> Expected = fileBytes(fixture(Name));
    EXPECT_EQ(npyBytes(readNpy(fixture(Name))), Expected) << Name;
  }
}

TEST(Npy, RoundTripEveryDType) {
  std::string Path = std::string(RIVET_BINARY_DIR) + "/npy_test_roundtrip.npy";
  for (int I = 0; I <= (int)DType::Float64; ++I) {
    DType T = (DType)I;
    for (Shape S : {Shape{}, Shape{5}, Shape{2, 3, 4}, Shape{0, 2}}) {
      Tensor X = randomTensor(S, T, 42 + I);
      writeNpy(Path, X);
      Tensor Y = readNpy(Path);
      EXPECT_EQ(Y.typeString(), X.typeString());
      EXPECT_EQ(npyBytes(Y), npyBytes(X));
      std::vector<uint8_t> B = npyBytes(X);
      EXPECT_EQ((B.size() - X.nbytes()) % 64, 0u); // header is padded
    }
  }
  std::remove(Path.c_str());
}

TEST(Npy, ErrorsNameTheFileAndProblem) {
  expectError([] { readNpy("/nonexistent/x.npy"); },
              "/nonexistent/x.npy: cannot open");
  auto Parse = [](const std::string &S) {
    return readNpyBytes(reinterpret_cast<const uint8_t *>(S.data()), S.size(),
                        "mem.npy");
  };
  auto WithHeader = [](const std::string &H, const std::string &Data = "") {
    std::string S = std::string("\x93NUMPY\x01\x00", 8);
    S += (char)(H.size() & 0xff);
    S += (char)(H.size() >> 8);
    return S + H + Data;
  };
  expectError([&] { Parse("hello"); }, "mem.npy: not a .npy file");
  expectError([&] { Parse(std::string("\x93NUMPY\x04\x00", 8) + "xx"); },
              "unsupported npy format version 4.0");
  expectError(
      [&] {
        Parse(WithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(2,), }\n",
                         "1234"));
      },
      "truncated npy data");
  expectError(
      [&] {
        Parse(WithHeader("{'descr': '<c8', 'fortran_order': False, 'shape': "
                         "(1,), }\n",
                         "12345678"));
      },
      "unsupported npy dtype '<c8'");
  expectError(
      [&] { Parse(WithHeader("{'descr': '<f4', 'shape': (1,), }\n", "1234")); },
      "missing key 'fortran_order'");
  expectError(
      [&] {
        Parse(WithHeader("{'descr': '<f4', 'fortran_order': "
                         "False, 'shape': (1,), 'x': 'y'}"));
      },
      "unexpected key 'x'");
  expectError(
      [&] {
        Parse(WithHeader("{'descr': '<f4', 'fortran_order': "
                         "Maybe, 'shape': (1,)}"));
      },
      "malformed npy header");
  expectError(
      [&] {
        Parse(WithHeader("{'descr': '<f4', 'fortran_order': "
                         "False, 'shape': (-1,)}"));
      },
      "malformed npy header");
  expectError(
      [&] {
        Parse(WithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(99999999999, 99999999999)}"));
      },
      "mem.npy");
  expectError([&] { Parse(WithHeader("{'descr': '<f4'", "")); },
              "malformed npy header");
  expectError(
      [&] {
        Parse(WithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(1,), }\n",
                         "12345"));
      },
      "trailing bytes");
  // Header length beyond the file.
  expectError([&] { Parse(std::string("\x93NUMPY\x01\x00\xff\x00{", 11)); },
              "truncated npy file");
  // Accepted spellings: '<u1', '|i1', '=f4', no trailing comma, extra spaces.
  Tensor T = Parse(
      WithHeader("{ 'shape' : ( 2 , ) ,'descr':'<u1','fortran_order':False}\n",
                 "\x01\x02"));
  EXPECT_EQ(T.toIntVector(), (std::vector<int64_t>{1, 2}));
}

TEST(Npy, TruncationsAndBitFlipsNeverCrash) {
  std::vector<uint8_t> Good = npyBytes(f32({1, 2, 3, 4, 5, 6}, {2, 3}));
  for (size_t N = 0; N < Good.size(); ++N)
    EXPECT_THROW(readNpyBytes(Good.data(), N, "t.npy"), Error) << N;
  for (size_t I = 0; I < Good.size(); ++I)
    for (uint8_t X : {0x01, 0x20, 0x80, 0xff}) {
      std::vector<uint8_t> Bad = Good;
      Bad[I] ^= X;
      try {
        readNpyBytes(Bad.data(), Bad.size(), "t.npy");
      } catch (const Error &E) {
        EXPECT_EQ(std::string(E.what()).rfind("t.npy: ", 0), 0u) << E.what();
      }
    }
}
