//===- narrow_dtype_test.cc - float8, float4, int4, int2 element types ----===//
#include "KernelTestUtil.h"

#include "kernels/ElementConvert.h"
#include "kernels/Random.h"

#include <cmath>
#include <limits>

using namespace rivet;
using namespace rivet::test;

namespace {

const DType kNarrowFloats[] = {DType::Float8E4M3FN, DType::Float8E4M3FNUZ,
                               DType::Float8E5M2,   DType::Float8E5M2FNUZ,
                               DType::Float4E2M1,   DType::Float8E8M0};
const DType kNarrowInts[] = {DType::UInt4, DType::Int4, DType::UInt2,
                             DType::Int2};
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(NarrowDType, Table) {
  for (DType T : kNarrowFloats) {
    EXPECT_TRUE(isNarrow(T));
    EXPECT_FALSE(isFloat(T)) << dtypeName(T);
    EXPECT_FALSE(isInteger(T));
    EXPECT_EQ(dtypeSize(T), 1u);
    EXPECT_EQ(parseDType(dtypeName(T)), T);
  }
  for (DType T : kNarrowInts)
    EXPECT_TRUE(isNarrow(T) && !dtypeInfo(T).narrowFloat);
  EXPECT_EQ(dtypeInfo(DType::Int4).bits, 4);
  EXPECT_EQ(dtypeInfo(DType::UInt2).bits, 2);
  EXPECT_FALSE(isNarrow(DType::BFloat16));
}

TEST(NarrowDType, EveryCodeRoundTrips) {
  for (DType T : kNarrowFloats) {
    int Codes = dtypeInfo(T).bits == 4 ? 16 : 256;
    for (int B = 0; B < Codes; ++B) {
      float V = narrowToFloat(T, (uint8_t)B);
      if (std::isnan(V))
        continue;
      EXPECT_EQ(floatToNarrow(T, V, /*Saturate=*/false, RoundMode::Nearest),
                (uint8_t)B)
          << dtypeName(T) << " code " << B << " value " << V;
    }
  }
  for (DType T : kNarrowInts)
    for (int B = 0; B < (1 << dtypeInfo(T).bits); ++B) {
      uint8_t Stored = intToNarrow(T, narrowToInt(T, (uint8_t)B));
      EXPECT_EQ(narrowToInt(T, Stored), narrowToInt(T, (uint8_t)B));
    }
}

TEST(NarrowDType, Float8SpecialValuesFollowOnnxCast) {
  // Largest finite values.
  EXPECT_EQ(narrowToFloat(DType::Float8E4M3FN, 0x7e), 448.0f);
  EXPECT_EQ(narrowToFloat(DType::Float8E4M3FNUZ, 0x7f), 240.0f);
  EXPECT_EQ(narrowToFloat(DType::Float8E5M2, 0x7b), 57344.0f);
  EXPECT_EQ(narrowToFloat(DType::Float8E5M2FNUZ, 0x7f), 57344.0f);
  // Saturation (the default) and its absence.
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FN, 1e6), 0x7e);
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FN, -kInf), 0xfe);
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FN, 1e6, false), 0x7f); // NaN
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FN, 464, false), 0x7e); // tie
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FN, 465, false), 0x7f);
  EXPECT_EQ(floatToNarrow(DType::Float8E5M2, kInf, false), 0x7c); // inf
  EXPECT_EQ(floatToNarrow(DType::Float8E5M2, -1e6, false), 0xfc);
  EXPECT_EQ(floatToNarrow(DType::Float8E5M2, kInf), 0x7b);
  EXPECT_EQ(floatToNarrow(DType::Float8E5M2FNUZ, kInf, false), 0x80);
  // NaN, and FNUZ's lack of a negative zero.
  EXPECT_TRUE(std::isnan(narrowToFloat(DType::Float8E4M3FNUZ, 0x80)));
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FNUZ, kNaN), 0x80);
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FNUZ, -0.0), 0x00);
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FN, -0.0), 0x80);
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FN, kNaN), 0x7f);
  // Subnormals and rounding to nearest even.
  EXPECT_EQ(narrowToFloat(DType::Float8E4M3FN, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FN, std::ldexp(1.0, -10)), 0x00);
  EXPECT_EQ(floatToNarrow(DType::Float8E4M3FN, 0.46875 + 0.015625), 0x30);
}

TEST(NarrowDType, Float4AndE8M0) {
  // float4e2m1: 0, 0.5, 1, 1.5, 2, 3, 4, 6; always saturates.
  EXPECT_EQ(narrowToFloat(DType::Float4E2M1, 0x7), 6.0f);
  EXPECT_EQ(floatToNarrow(DType::Float4E2M1, 0.25), 0x0); // tie to even
  EXPECT_EQ(floatToNarrow(DType::Float4E2M1, 0.75), 0x2); // tie: 1.0
  EXPECT_EQ(floatToNarrow(DType::Float4E2M1, -3.5), 0xe); // tie: -4
  EXPECT_EQ(floatToNarrow(DType::Float4E2M1, 1e6, false), 0x7);
  EXPECT_EQ(floatToNarrow(DType::Float4E2M1, kNaN), 0x8);
  // float8e8m0: powers of two, rounded as round_mode says.
  EXPECT_EQ(narrowToFloat(DType::Float8E8M0, 127), 1.0f);
  EXPECT_TRUE(std::isnan(narrowToFloat(DType::Float8E8M0, 255)));
  EXPECT_EQ(floatToNarrow(DType::Float8E8M0, 0.124), 0x7c);
  EXPECT_EQ(floatToNarrow(DType::Float8E8M0, 1.1), 0x80);
  EXPECT_EQ(floatToNarrow(DType::Float8E8M0, 1.9, true, RoundMode::Down), 0x7f);
  EXPECT_EQ(floatToNarrow(DType::Float8E8M0, 1.4, true, RoundMode::Nearest),
            0x7f);
  EXPECT_EQ(floatToNarrow(DType::Float8E8M0, 1.5, true, RoundMode::Nearest),
            0x80);
  EXPECT_EQ(floatToNarrow(DType::Float8E8M0, 3e38, true), 0xfe);
  EXPECT_EQ(floatToNarrow(DType::Float8E8M0, 3e38, false), 0xff);
  EXPECT_EQ(floatToNarrow(DType::Float8E8M0, kNaN), 0xff);
}

TEST(NarrowDType, IntegersWrapAsIntegerConversionsDo) {
  EXPECT_EQ(narrowToInt(DType::Int4, floatToNarrow(DType::Int4, 8.0)), -8);
  EXPECT_EQ(narrowToInt(DType::Int4, floatToNarrow(DType::Int4, -9.0)), 7);
  EXPECT_EQ(narrowToInt(DType::Int4, floatToNarrow(DType::Int4, 2.7)), 2);
  EXPECT_EQ(narrowToInt(DType::Int4, floatToNarrow(DType::Int4, kNaN)), 0);
  EXPECT_EQ(narrowToInt(DType::UInt4, intToNarrow(DType::UInt4, -3)), 13);
  EXPECT_EQ(narrowToInt(DType::UInt2, intToNarrow(DType::UInt2, -3)), 1);
  EXPECT_EQ(narrowToInt(DType::Int2, intToNarrow(DType::Int2, 2)), -2);
}

TEST(NarrowDType, CastKernelConvertsThroughTheNarrowTypes) {
  Tensor X = f32({-9.0f, 2.5f, 7.9f, 300.0f}, {4});
  Tensor I4 = X.cast(DType::Int4);
  EXPECT_EQ(I4.toIntVector(), (std::vector<int64_t>{7, 2, 7, -4}));
  EXPECT_EQ(I4.cast(DType::Int8).toIntVector(),
            (std::vector<int64_t>{7, 2, 7, -4}));
  Tensor F8 = X.cast(DType::Float8E4M3FN);
  EXPECT_EQ(F8.toDoubleVector(), (std::vector<double>{-9, 2.5, 8, 288}));
  EXPECT_EQ(F8.cast(DType::Float16).toDoubleVector(), F8.toDoubleVector());
  // float8 -> int4 goes through the value.
  EXPECT_EQ(F8.cast(DType::Int4).toIntVector(),
            (std::vector<int64_t>{7, 2, -8, 0}));
  Tensor Out = Tensor::empty({4}, DType::Float8E5M2);
  convertBuffer(X.rawData(), DType::Float32, Out.rawData(), DType::Float8E5M2,
                4, /*Saturate=*/false);
  EXPECT_EQ(Out.toDoubleVector(), (std::vector<double>{-8, 2.5, 8, 320}));
}

TEST(NarrowDType, NoOperatorComputesInThem) {
  Tensor X = Tensor::empty({2}, DType::Float8E4M3FN);
  try {
    dispatchDType(X.dtype(), [](auto) {});
    FAIL() << "dispatch accepted a narrow type";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("float8e4m3fn is a storage type"),
              std::string::npos)
        << E.what();
  }
}

TEST(NarrowDType, RandomValuesAreInRange) {
  for (DType T : kNarrowFloats) {
    Tensor R = randomTensor({200}, T, 7);
    for (double V : R.toDoubleVector()) {
      EXPECT_GE(V, -1.0) << dtypeName(T);
      EXPECT_LE(V, 1.0) << dtypeName(T);
    }
  }
}

} // namespace
