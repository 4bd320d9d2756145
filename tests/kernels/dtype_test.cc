//===- dtype_test.cc - DType names, sizes and half conversion -------------===//
#include "kernels/DType.h"
#include "kernels/Error.h"
#include "kernels/Shape.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace rivet;

TEST(DType, SizesAndNames) {
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_EQ(dtypeSize(DType::Int16), 2u);
  EXPECT_EQ(dtypeSize(DType::Float16), 2u);
  EXPECT_EQ(dtypeSize(DType::Int32), 4u);
  EXPECT_EQ(dtypeSize(DType::Float64), 8u);
  for (int I = 0; I <= (int)DType::Float64; ++I) {
    DType T = (DType)I;
    EXPECT_EQ(parseDType(dtypeName(T)), T);
  }
  EXPECT_EQ(dtypeName(DType::UInt8), "uint8");
  EXPECT_THROW(parseDType("float128"), Error);
  EXPECT_THROW(parseDType(""), Error);
}

TEST(DType, Classes) {
  EXPECT_TRUE(isFloat(DType::Float16));
  EXPECT_FALSE(isFloat(DType::Int32));
  EXPECT_TRUE(isInteger(DType::UInt8));
  EXPECT_FALSE(isInteger(DType::Bool));
  EXPECT_FALSE(isSigned(DType::UInt8));
  EXPECT_TRUE(isSigned(DType::Int8));
}

TEST(Half, KnownBitPatterns) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(6.103515625e-05f), 0x0400);       // smallest normal
  EXPECT_EQ(floatToHalf(5.960464477539063e-08f), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xfc00);
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(halfToFloat(0x0001), 5.960464477539063e-08f);
  EXPECT_EQ(halfToFloat(0x03ff), 6.097555160522461e-05f);
  EXPECT_TRUE(std::isinf(halfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
}

TEST(Half, RoundingToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);
  // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even).
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);
  // Slightly above halfway rounds up.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  // Overflow: 65519 rounds to 65504, 65520 to infinity.
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  // Subnormal halfway: 2^-25 rounds to 0 (even), 3*2^-25 to 2 * 2^-24.
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002);
  // Largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(floatToHalf(6.1e-05f), 0x03ff);
  EXPECT_EQ(floatToHalf(0x1p-14f - 0x1p-26f), 0x0400);
}

TEST(Half, RoundTripsEveryHalf) {
  for (uint32_t B = 0; B < 0x10000; ++B) {
    float F = halfToFloat((uint16_t)B);
    if (std::isnan(F)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(F))));
      continue;
    }
    ASSERT_EQ(floatToHalf(F), B) << "bits " << B;
  }
}

TEST(Shape, Basics) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({2, 0}), 0);
  EXPECT_THROW(numElements({-1, 2}), Error);
  EXPECT_THROW(numElements({1ll << 40, 1ll << 40}), Error);
  EXPECT_EQ(shapeToString({}), "()");
  EXPECT_EQ(shapeToString({4}), "(4,)");
  EXPECT_EQ(shapeToString({2, 3}), "(2, 3)");
  EXPECT_EQ(contiguousStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(broadcastShapes({2, 1, 3}, {4, 1}), (Shape{2, 4, 3}));
  EXPECT_EQ(broadcastShapes({}, {3}), (Shape{3}));
  EXPECT_EQ(broadcastShapes({0, 1}, {1, 5}), (Shape{0, 5}));
  try {
    broadcastShapes({2, 3}, {4});
    FAIL();
  } catch (const Error &E) {
    EXPECT_STREQ(E.what(), "cannot broadcast (2, 3) and (4,)");
  }
  EXPECT_EQ(normalizeAxis(-1, 3), 2);
  EXPECT_EQ(normalizeAxis(0, 1), 0);
  EXPECT_THROW(normalizeAxis(3, 3), Error);
  EXPECT_THROW(normalizeAxis(-4, 3), Error);
}
