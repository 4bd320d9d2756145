//===- dtype_ext_test.cc - uint16/32/64 and bfloat16 end to end -----------===//
#include "KernelTestUtil.h"

#include "kernels/Attrs.h"
#include "kernels/ElementConvert.h"
#include "kernels/Npy.h"
#include "kernels/Random.h"

#include <dlpack/dlpack.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace rivet;
using namespace rivet::test;

namespace {

uint32_t floatBits(float F) {
  uint32_t B;
  std::memcpy(&B, &F, 4);
  return B;
}
float bitsFloat(uint32_t B) {
  float F;
  std::memcpy(&F, &B, 4);
  return F;
}

/// Reference float -> bfloat16: the nearest bfloat16 by exhaustive
/// comparison of the two neighbours (ties to the even bit pattern).
uint16_t nearestBFloat16(float F) {
  uint32_t B = floatBits(F);
  uint16_t Lo = (uint16_t)(B >> 16), Hi = (uint16_t)(Lo + 1);
  double X = F, DLo = std::fabs(X - (double)bfloat16ToFloat(Lo));
  double DHi = std::fabs(X - (double)bfloat16ToFloat(Hi));
  if (std::isinf(bfloat16ToFloat(Hi)) && !std::isinf(F)) {
    // Past the largest finite bfloat16, IEEE rounding goes to infinity at
    // half an ulp beyond it: that is exactly a tie with the even inf.
    double Max = bfloat16ToFloat(0x7f7f), Ulp = 0x1p120;
    return std::fabs(X) >= Max + Ulp / 2 ? Hi : Lo;
  }
  if (DLo < DHi)
    return Lo;
  if (DHi < DLo)
    return Hi;
  return (Lo & 1) ? Hi : Lo;
}

Tensor u16(std::vector<uint16_t> V, Shape S) { return tensor(V, S); }
Tensor u32(std::vector<uint32_t> V, Shape S) { return tensor(V, S); }
Tensor u64(std::vector<uint64_t> V, Shape S) { return tensor(V, S); }

template <typename E> std::vector<E> values(const Tensor &T) {
  return std::vector<E>(T.data<E>(), T.data<E>() + T.numel());
}

} // namespace

//===----------------------------------------------------------------------===//
// DType basics
//===----------------------------------------------------------------------===//

TEST(DTypeExt, CodesAreAppendedAfterFloat64) {
  // The numbering is part of the .rvx format.
  EXPECT_EQ((int)DType::Float64, 8);
  EXPECT_EQ((int)DType::UInt16, 9);
  EXPECT_EQ((int)DType::UInt32, 10);
  EXPECT_EQ((int)DType::UInt64, 11);
  EXPECT_EQ((int)DType::BFloat16, 12);
  EXPECT_EQ((int)DType::Float8E4M3FN, 13);
  EXPECT_EQ((int)DType::Int2, 22);
  EXPECT_EQ((int)DType::String, 23);
  EXPECT_EQ(kLastDType, DType::String);
}

TEST(DTypeExt, NamesSizesClasses) {
  EXPECT_EQ(dtypeName(DType::UInt16), "uint16");
  EXPECT_EQ(dtypeName(DType::UInt32), "uint32");
  EXPECT_EQ(dtypeName(DType::UInt64), "uint64");
  EXPECT_EQ(dtypeName(DType::BFloat16), "bfloat16");
  for (int I = 0; I <= (int)kLastDType; ++I)
    EXPECT_EQ(parseDType(dtypeName((DType)I)), (DType)I);
  EXPECT_EQ(dtypeSize(DType::UInt16), 2u);
  EXPECT_EQ(dtypeSize(DType::UInt32), 4u);
  EXPECT_EQ(dtypeSize(DType::UInt64), 8u);
  EXPECT_EQ(dtypeSize(DType::BFloat16), 2u);
  for (DType T : {DType::UInt16, DType::UInt32, DType::UInt64}) {
    EXPECT_TRUE(isInteger(T));
    EXPECT_FALSE(isSigned(T));
    EXPECT_FALSE(isFloat(T));
  }
  EXPECT_TRUE(isFloat(DType::BFloat16));
  EXPECT_TRUE(isSigned(DType::BFloat16));
  EXPECT_FALSE(isInteger(DType::BFloat16));
  EXPECT_EQ(dtypeOf<uint16_t>(), DType::UInt16);
  EXPECT_EQ(dtypeOf<uint32_t>(), DType::UInt32);
  EXPECT_EQ(dtypeOf<uint64_t>(), DType::UInt64);
  EXPECT_EQ(dtypeOf<BFloat16>(), DType::BFloat16);
  EXPECT_THROW(parseDType("bf16"), Error);
}

TEST(DTypeExt, DispatchGivesTheElementType) {
  for (int I = 0; I <= (int)kLastDType; ++I) {
    DType T = (DType)I;
    if (isNarrow(T) || isString(T)) // no C++ type: narrow_dtype_test.cc
      continue;
    dispatchDType(T, [&](auto Tag) {
      using E = decltype(Tag);
      EXPECT_EQ(dtypeOf<E>(), T);
      EXPECT_EQ(sizeof(E), dtypeSize(T));
    });
  }
}

//===----------------------------------------------------------------------===//
// bfloat16 conversions
//===----------------------------------------------------------------------===//

TEST(BFloat16, KnownBitPatterns) {
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(-2.0f), 0xc000);
  EXPECT_EQ(floatToBFloat16(0.0f), 0x0000);
  EXPECT_EQ(floatToBFloat16(-0.0f), 0x8000);
  EXPECT_EQ(floatToBFloat16(INFINITY), 0x7f80);
  EXPECT_EQ(floatToBFloat16(-INFINITY), 0xff80);
  EXPECT_EQ(floatToBFloat16(3.0e38f), 0x7f62);
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bfloat16ToFloat(0x3ef5), 0.478515625f);
  EXPECT_EQ(bfloat16ToFloat(0x7f7f), 0x1.fep127f); // largest finite
  EXPECT_EQ(bfloat16ToFloat(0x0001), 0x1p-133f);   // smallest subnormal
  EXPECT_TRUE(std::isinf(bfloat16ToFloat(0x7f80)));
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(0x7fc0)));
}

TEST(BFloat16, RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7 (odd): down.
  EXPECT_EQ(floatToBFloat16(1.0f + 0x1p-8f), 0x3f80);
  // 1 + 3*2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): up.
  EXPECT_EQ(floatToBFloat16(1.0f + 3 * 0x1p-8f), 0x3f82);
  // Just above the halfway point rounds up; just below rounds down.
  EXPECT_EQ(floatToBFloat16(bitsFloat(0x3f808001)), 0x3f81);
  EXPECT_EQ(floatToBFloat16(bitsFloat(0x3f807fff)), 0x3f80);
  // The values of ONNX's test_cast_FLOAT_to_BFLOAT16 that differ from
  // truncation (ONNX 1.12's reference truncates).
  EXPECT_EQ(floatToBFloat16(0.48033667f), 0x3ef6);
  EXPECT_EQ(floatToBFloat16(0.49968487f), 0x3f00); // carries into exponent
  EXPECT_EQ(floatToBFloat16(0.81910545f), 0x3f52);
  // Mantissa overflow into the exponent, and the largest finite values
  // rounding up to infinity.
  EXPECT_EQ(floatToBFloat16(bitsFloat(0x3fffffff)), 0x4000);
  EXPECT_EQ(floatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBFloat16(bitsFloat(0x7f7f7fff)), 0x7f7f);
  EXPECT_EQ(floatToBFloat16(bitsFloat(0x7f7f8000)), 0x7f80);
  // Subnormals round like normals (bfloat16 shares float's exponent).
  EXPECT_EQ(floatToBFloat16(bitsFloat(0x00018000)), 0x0002);
  EXPECT_EQ(floatToBFloat16(bitsFloat(0x00008000)), 0x0000);
  EXPECT_EQ(floatToBFloat16(bitsFloat(0x80008001)), 0x8001);
}

TEST(BFloat16, ManyValuesMatchTheNearestNeighbour) {
  // A deterministic sweep over bit patterns of every exponent.
  uint32_t B = 0x12345678u;
  for (int I = 0; I < 200000; ++I) {
    B = B * 1664525u + 1013904223u;
    float F = bitsFloat(B);
    if (std::isnan(F))
      continue;
    ASSERT_EQ(floatToBFloat16(F), nearestBFloat16(F))
        << std::hex << "bits 0x" << B;
  }
  // Every bfloat16 value converts to float and back exactly.
  for (uint32_t H = 0; H <= 0xffff; ++H) {
    float F = bfloat16ToFloat((uint16_t)H);
    if (std::isnan(F))
      continue;
    ASSERT_EQ(floatToBFloat16(F), H) << std::hex << H;
  }
}

TEST(BFloat16, NaNStaysNaN) {
  EXPECT_TRUE(std::isnan((float)BFloat16(NAN)));
  EXPECT_TRUE(std::isnan((float)BFloat16(-NAN)));
  // A payload only in the low 16 bits must not become infinity.
  EXPECT_TRUE(
      std::isnan(bfloat16ToFloat(floatToBFloat16(bitsFloat(0x7f800001)))));
  EXPECT_TRUE(
      std::isnan(bfloat16ToFloat(floatToBFloat16(bitsFloat(0xff800001)))));
  EXPECT_EQ(floatToBFloat16(bitsFloat(0xffc00000)) & 0x8000, 0x8000);
}

TEST(BFloat16, ConvertElementThroughFloat) {
  EXPECT_EQ(convertElement<BFloat16>(true).Bits, 0x3f80);
  EXPECT_EQ(convertElement<BFloat16>(int64_t(-3)).Bits, 0xc040);
  EXPECT_EQ(convertElement<BFloat16>(uint64_t(257)).Bits, 0x4380); // 256
  EXPECT_EQ(convertElement<int32_t>(BFloat16(-2.75f)), -2);
  EXPECT_EQ(convertElement<uint8_t>(BFloat16(300.0f)), 255);
  EXPECT_EQ(convertElement<bool>(BFloat16(0.0f)), false);
  EXPECT_EQ(convertElement<Half>(BFloat16(1.5f)).Bits, 0x3e00);
  EXPECT_EQ(convertElement<BFloat16>(Half(1.5f)).Bits, 0x3fc0);
  EXPECT_EQ(convertElement<double>(BFloat16(0.1f)), 0.10009765625);
}

//===----------------------------------------------------------------------===//
// Unsigned conversions
//===----------------------------------------------------------------------===//

TEST(UnsignedConvert, WrapsFromIntegersSaturatesFromFloats) {
  EXPECT_EQ(convertElement<uint16_t>(int64_t(-1)), 65535);
  EXPECT_EQ(convertElement<uint32_t>(int64_t(-1)), 0xffffffffu);
  EXPECT_EQ(convertElement<uint64_t>(int64_t(-1)), ~uint64_t(0));
  EXPECT_EQ(convertElement<int64_t>(~uint64_t(0)), -1);
  EXPECT_EQ(convertElement<uint16_t>(uint64_t(65537)), 1);
  EXPECT_EQ(convertElement<uint16_t>(-5.0f), 0);
  EXPECT_EQ(convertElement<uint32_t>(1e20), 0xffffffffu);
  EXPECT_EQ(convertElement<uint64_t>(1e30), ~uint64_t(0));
  EXPECT_EQ(convertElement<uint64_t>(0x1p63), uint64_t(1) << 63);
  EXPECT_EQ(convertElement<uint32_t>(3.9), 3u);
  EXPECT_EQ(convertElement<uint64_t>((double)NAN), 0u);
  EXPECT_EQ(convertElement<double>(~uint64_t(0)), 0x1p64);
  EXPECT_EQ(convertElement<bool>(uint64_t(1) << 63), true);
}

TEST(UnsignedConvert, CastKernelAcrossAllDTypes) {
  Tensor X = u64({0, 1, 200, 70000, (uint64_t(1) << 40) + 3}, {5});
  Tensor Y = X.cast(DType::UInt16);
  EXPECT_EQ(values<uint16_t>(Y),
            (std::vector<uint16_t>{0, 1, 200, 70000 - 65536, 3}));
  Tensor Z = run("cast", {X}, Attrs{{"dtype", std::string("uint32")}});
  EXPECT_EQ(values<uint32_t>(Z), (std::vector<uint32_t>{0, 1, 200, 70000, 3}));
  Tensor F = run("cast", {Z}, Attrs{{"dtype", std::string("bfloat16")}});
  EXPECT_EQ(F.dtype(), DType::BFloat16);
  EXPECT_EQ(F.toDoubleVector(), (std::vector<double>{0, 1, 200, 70144, 3}));
  // Every computing dtype casts to and from every other one (the narrow
  // types and strings: narrow_dtype_test.cc, string_ops_test.cc).
  auto computing = [](int T) {
    return !isNarrow((DType)T) && !isString((DType)T);
  };
  for (int A = 0; A <= (int)kLastDType; ++A)
    for (int B = 0; B <= (int)kLastDType; ++B) {
      if (!computing(A) || !computing(B))
        continue;
      Tensor T = Tensor::fromVector<int32_t>({0, 1, 5}, {3}).cast((DType)A);
      Tensor U = T.cast((DType)B);
      EXPECT_EQ(U.dtype(), (DType)B);
      bool ViaBool = (DType)A == DType::Bool || (DType)B == DType::Bool;
      EXPECT_EQ(U.elementAsInt(2), ViaBool ? 1 : 5);
    }
}

//===----------------------------------------------------------------------===//
// Kernels on the new dtypes (the ONNX backend tests' semantics)
//===----------------------------------------------------------------------===//

TEST(UnsignedKernels, ArithmeticWraps) {
  EXPECT_EQ(
      values<uint16_t>(run("add", {u16({65535, 1}, {2}), u16({2, 2}, {2})})),
      (std::vector<uint16_t>{1, 3}));
  EXPECT_EQ(
      values<uint32_t>(run("subtract", {u32({0, 5}, {2}), u32({1, 3}, {2})})),
      (std::vector<uint32_t>{0xffffffffu, 2}));
  EXPECT_EQ(values<uint64_t>(run("multiply", {u64({uint64_t(1) << 63, 3}, {2}),
                                              u64({2, 5}, {2})})),
            (std::vector<uint64_t>{0, 15}));
  EXPECT_EQ(values<uint64_t>(
                run("divide", {u64({~uint64_t(0), 7}, {2}), u64({2, 2}, {2})})),
            (std::vector<uint64_t>{~uint64_t(0) / 2, 3}));
  EXPECT_EQ(values<uint32_t>(run("negative", {u32({1, 0}, {2})})),
            (std::vector<uint32_t>{0xffffffffu, 0}));
  expectError(
      [] {
        run("divide", {u16({1}, {1}), u16({0}, {1})});
      },
      "division by zero");
}

TEST(UnsignedKernels, ModMaxMin) {
  // test_mod_uint*: x = [4, 7, 5], y = [2, 3, 8] -> [0, 1, 5].
  EXPECT_EQ(
      values<uint32_t>(run("mod", {u32({4, 7, 5}, {3}), u32({2, 3, 8}, {3})})),
      (std::vector<uint32_t>{0, 1, 5}));
  EXPECT_EQ(values<uint64_t>(run("mod", {u64({~uint64_t(0)}, {1}),
                                         u64({uint64_t(1) << 63}, {1})})),
            (std::vector<uint64_t>{(uint64_t(1) << 63) - 1}));
  expectError(
      [] {
        run("mod", {u64({1}, {1}), u64({0}, {1})});
      },
      "modulo by zero");
  // Above 2^63 still compares as unsigned.
  uint64_t Big = (uint64_t(1) << 63) + 5;
  EXPECT_EQ(
      values<uint64_t>(run("maximum", {u64({Big, 1}, {2}), u64({3, 2}, {2})})),
      (std::vector<uint64_t>{Big, 2}));
  EXPECT_EQ(
      values<uint64_t>(run("minimum", {u64({Big, 1}, {2}), u64({3, 2}, {2})})),
      (std::vector<uint64_t>{3, 1}));
  EXPECT_EQ(
      values<uint16_t>(run("maximum", {u16({60000, 1}, {2}), u16({2}, {1})})),
      (std::vector<uint16_t>{60000, 2}));
}

TEST(UnsignedKernels, BitShifts) {
  // test_bitshift_*: x = [16, 4, 1], y = [1, 2, 3].
  EXPECT_EQ(values<uint16_t>(run("right_shift",
                                 {u16({16, 4, 1}, {3}), u16({1, 2, 3}, {3})})),
            (std::vector<uint16_t>{8, 1, 0}));
  EXPECT_EQ(values<uint32_t>(
                run("left_shift", {u32({16, 4, 1}, {3}), u32({1, 2, 3}, {3})})),
            (std::vector<uint32_t>{32, 16, 8}));
  EXPECT_EQ(values<uint64_t>(run(
                "left_shift", {u64({1, 1, 3}, {3}), u64({63, 64, 1000}, {3})})),
            (std::vector<uint64_t>{uint64_t(1) << 63, 0, 0}));
  EXPECT_EQ(
      values<uint16_t>(run("left_shift", {u16({0x8001}, {1}), u16({1}, {1})})),
      (std::vector<uint16_t>{2}));
  expectError(
      [] {
        run("left_shift", {tensor<BFloat16>({BFloat16(1.0f)}, {1}),
                           tensor<BFloat16>({BFloat16(1.0f)}, {1})});
      },
      "integer dtype");
}

TEST(UnsignedKernels, PowWithUnsignedExponent) {
  // test_pow_types_float32_uint32/64: [1, 2, 3] ^ [4, 5, 6].
  Tensor X = f32({1, 2, 3}, {3});
  expectTensor(run("pow", {X, u32({4, 5, 6}, {3})}), f32({1, 32, 729}, {3}));
  expectTensor(run("pow", {X, u64({4, 5, 6}, {3})}), f32({1, 32, 729}, {3}));
  // Integer base, unsigned exponent beyond int64: wraps modulo 2^64.
  Tensor R = run("pow", {i64({2, 3, -1}, {3}),
                         u64({64, 2, (uint64_t(1) << 63) + 1}, {3})});
  EXPECT_EQ(values<int64_t>(R), (std::vector<int64_t>{0, 9, -1}));
  EXPECT_EQ(
      values<uint16_t>(run("pow", {u16({3, 256}, {2}), u16({3, 2}, {2})})),
      (std::vector<uint16_t>{27, 0}));
}

TEST(UnsignedKernels, ReductionsAndComparisons) {
  uint64_t Big = (uint64_t(1) << 63) + 7;
  Tensor X = u64({1, Big, 3}, {3});
  EXPECT_EQ(values<uint64_t>(run("max", {X}, Attrs{{"keepdims", int64_t(0)}})),
            (std::vector<uint64_t>{Big}));
  EXPECT_EQ(values<uint64_t>(run("min", {X}, Attrs{{"keepdims", int64_t(0)}})),
            (std::vector<uint64_t>{1}));
  EXPECT_EQ(values<uint64_t>(run("sum", {X}, Attrs{{"keepdims", int64_t(0)}})),
            (std::vector<uint64_t>{Big + 4}));
  Tensor L = run("less", {X, u64({2, 2, 2}, {3})});
  EXPECT_EQ(values<bool>(L), (std::vector<bool>{true, false, false}));
}

TEST(BFloat16Kernels, ComputeThroughFloat) {
  auto bf = [](std::vector<float> V, Shape S) {
    std::vector<BFloat16> B;
    for (float F : V)
      B.push_back(BFloat16(F));
    return tensor(B, S);
  };
  Tensor R = run("add", {bf({1.0f, 0.5f}, {2}), bf({0x1p-8f, 0.25f}, {2})});
  EXPECT_EQ(R.dtype(), DType::BFloat16);
  // 1 + 2^-8 ties back down to 1 in bfloat16.
  EXPECT_EQ(R.toDoubleVector(), (std::vector<double>{1.0, 0.75}));
  Tensor E = run("exp", {bf({0.0f, 1.0f}, {2})});
  EXPECT_EQ(E.toDoubleVector(), (std::vector<double>{1.0, 2.71875}));
  Tensor M = run("maximum", {bf({NAN, 1.0f}, {2}), bf({1.0f, 2.0f}, {2})});
  EXPECT_TRUE(std::isnan(M.elementAsDouble(0)));
  EXPECT_EQ(M.elementAsDouble(1), 2.0);
}

//===----------------------------------------------------------------------===//
// npy, DLPack, attributes, random
//===----------------------------------------------------------------------===//

TEST(DTypeExtNpy, UnsignedRoundTrip) {
  uint64_t Big = ~uint64_t(0) - 1;
  for (const Tensor &T :
       {u16({0, 65535, 7}, {3}), u32({0, 0xfffffffeu}, {2, 1}),
        u64({Big, 1, 2, 3}, {2, 2})}) {
    std::vector<uint8_t> B = npyBytes(T);
    std::string Header(B.begin(), B.begin() + std::min<size_t>(B.size(), 128));
    std::string Descr = T.dtype() == DType::UInt16   ? "'<u2'"
                        : T.dtype() == DType::UInt32 ? "'<u4'"
                                                     : "'<u8'";
    EXPECT_NE(Header.find(Descr), std::string::npos) << Header;
    Tensor U = readNpyBytes(B.data(), B.size(), "test");
    EXPECT_EQ(U.typeString(), T.typeString());
    EXPECT_EQ(std::memcmp(U.rawData(), T.rawData(), T.nbytes()), 0);
  }
}

TEST(DTypeExtNpy, BFloat16IsAClearError) {
  Tensor T = Tensor::zeros({2}, DType::BFloat16);
  expectError([&] { npyBytes(T); }, "bfloat16");
  // A file declaring a bfloat16-like raw type is refused too.
  std::vector<uint8_t> B = npyBytes(u16({1, 2}, {2}));
  std::string S(B.begin(), B.end());
  S.replace(S.find("<u2"), 3, "<V2");
  expectError([&] { readNpyBytes((const uint8_t *)S.data(), S.size(), "f"); },
              "unsupported npy dtype");
}

TEST(DTypeExtDLPack, CodesAndRoundTrip) {
  struct Case {
    DType T;
    uint8_t Code, Bits;
  };
  for (Case C :
       {Case{DType::UInt8, kDLUInt, 8}, Case{DType::UInt16, kDLUInt, 16},
        Case{DType::UInt32, kDLUInt, 32}, Case{DType::UInt64, kDLUInt, 64},
        Case{DType::BFloat16, kDLBfloat, 16},
        Case{DType::Float16, kDLFloat, 16}, Case{DType::Int16, kDLInt, 16}}) {
    Tensor T = Tensor::fromVector<int32_t>({1, 2, 3}, {3}).cast(C.T);
    DLManagedTensor *M = T.toDLPack();
    EXPECT_EQ(M->dl_tensor.dtype.code, C.Code) << dtypeName(C.T);
    EXPECT_EQ(M->dl_tensor.dtype.bits, C.Bits) << dtypeName(C.T);
    Tensor U = Tensor::fromDLPack(M);
    EXPECT_EQ(U.typeString(), T.typeString());
    EXPECT_EQ(U.toDoubleVector(), (std::vector<double>{1, 2, 3}));
  }
}

TEST(DTypeExtAttrs, TensorAttributesSerializeNewDTypes) {
  Attrs A;
  A.set("u", u64({~uint64_t(0), 5}, {2}));
  A.set("b", Tensor::fromVector<int32_t>({1, -2}, {2}).cast(DType::BFloat16));
  std::vector<uint8_t> Bytes;
  A.serialize(Bytes);
  size_t Pos = 0;
  Attrs B = Attrs::deserialize(Bytes.data(), Bytes.size(), Pos);
  EXPECT_EQ(Pos, Bytes.size());
  EXPECT_TRUE(A == B);
  EXPECT_EQ(values<uint64_t>(B.getTensor("u")),
            (std::vector<uint64_t>{~uint64_t(0), 5}));
  EXPECT_EQ(B.getTensor("b").toDoubleVector(), (std::vector<double>{1, -2}));
}

TEST(DTypeExtRandom, InRangeForEveryNewDType) {
  for (DType T :
       {DType::UInt16, DType::UInt32, DType::UInt64, DType::BFloat16}) {
    Tensor R = randomTensor({1000}, T, 42);
    for (double V : R.toDoubleVector()) {
      if (T == DType::BFloat16) {
        EXPECT_GE(V, -1.0);
        EXPECT_LT(V, 1.0);
      } else {
        EXPECT_GE(V, 0.0);
        EXPECT_LT(V, 10.0);
      }
    }
  }
}
