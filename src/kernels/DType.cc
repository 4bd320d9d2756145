//===- DType.cc - Element types of tensors --------------------------------===//
#include "kernels/DType.h"
#include "kernels/Error.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace rivet {

void invalidDType(DType T) { fail("invalid dtype code {}", (int)T); }

// One row per DType, in enum order.
const DTypeInfo kDTypeInfo[kNumDTypes] = {
    // name, size, bits, kind, narrowFloat, narrowSigned, suffix
    {"bool", 1, 8, DTypeKind::Bool, false, false, ""},
    {"int8", 1, 8, DTypeKind::Signed, false, false, "i8"},
    {"int16", 2, 16, DTypeKind::Signed, false, false, "i16"},
    {"int32", 4, 32, DTypeKind::Signed, false, false, "i32"},
    {"int64", 8, 64, DTypeKind::Signed, false, false, ""},
    {"uint8", 1, 8, DTypeKind::Unsigned, false, false, "u8"},
    {"float16", 2, 16, DTypeKind::Float, false, false, "f16"},
    {"float32", 4, 32, DTypeKind::Float, false, false, ""},
    {"float64", 8, 64, DTypeKind::Float, false, false, "f64"},
    {"uint16", 2, 16, DTypeKind::Unsigned, false, false, "u16"},
    {"uint32", 4, 32, DTypeKind::Unsigned, false, false, "u32"},
    {"uint64", 8, 64, DTypeKind::Unsigned, false, false, "u64"},
    {"bfloat16", 2, 16, DTypeKind::Float, false, false, "bf16"},
    {"float8e4m3fn", 1, 8, DTypeKind::Narrow, true, true, "f8e4m3fn"},
    {"float8e4m3fnuz", 1, 8, DTypeKind::Narrow, true, true, "f8e4m3fnuz"},
    {"float8e5m2", 1, 8, DTypeKind::Narrow, true, true, "f8e5m2"},
    {"float8e5m2fnuz", 1, 8, DTypeKind::Narrow, true, true, "f8e5m2fnuz"},
    {"uint4", 1, 4, DTypeKind::Narrow, false, false, "u4"},
    {"int4", 1, 4, DTypeKind::Narrow, false, true, "i4"},
    {"float4e2m1", 1, 4, DTypeKind::Narrow, true, true, "f4e2m1"},
    {"float8e8m0", 1, 8, DTypeKind::Narrow, true, false, "f8e8m0"},
    {"uint2", 1, 2, DTypeKind::Narrow, false, false, "u2"},
    {"int2", 1, 2, DTypeKind::Narrow, false, true, "i2"},
    {"string", 8, 64, DTypeKind::String, false, false, ""},
};

void narrowDTypeUnsupported(DType T) {
  if (isString(T))
    fail("element type string has no arithmetic: this operator does not "
         "take strings");
  if (!isNarrow(T))
    invalidDType(T);
  fail("element type {} is a storage type: no operator computes in it "
       "(cast it to a wider type first)",
       dtypeName(T));
}

DType parseDType(std::string_view Name) {
  for (int I = 0; I < kNumDTypes; ++I)
    if (kDTypeInfo[I].name == Name)
      return (DType)I;
  std::string Known;
  for (int I = 0; I < kNumDTypes; ++I)
    Known += (I ? ", " : "") + std::string(kDTypeInfo[I].name);
  fail("unknown dtype '{}' (expected one of {})", Name, Known);
}

bool isFloat(DType T) { return dtypeInfo(T).kind == DTypeKind::Float; }

bool isInteger(DType T) {
  DTypeKind K = dtypeInfo(T).kind;
  return K == DTypeKind::Signed || K == DTypeKind::Unsigned;
}

bool isSigned(DType T) {
  DTypeKind K = dtypeInfo(T).kind;
  return K == DTypeKind::Signed || K == DTypeKind::Float;
}

//===----------------------------------------------------------------------===//
// Narrow types
//===----------------------------------------------------------------------===//

namespace {

/// A small float format: sign, ExpBits, MantBits, and how it spells the
/// special values.
struct MiniFloat {
  int expBits, mantBits, bias;
  enum Specials {
    IEEE, // all-ones exponent: infinity (mantissa 0) or NaN
    FN,   // no infinity; only the all-ones code is NaN
    FNUZ, // no infinity, no negative zero; NaN is the code of -0
    None, // no infinity, no NaN (float4e2m1)
  } specials;
  uint8_t maxCode; // the largest finite magnitude's code
};

const MiniFloat *miniFloat(DType T) {
  static const MiniFloat E4M3FN{4, 3, 7, MiniFloat::FN, 0x7e};
  static const MiniFloat E4M3FNUZ{4, 3, 8, MiniFloat::FNUZ, 0x7f};
  static const MiniFloat E5M2{5, 2, 15, MiniFloat::IEEE, 0x7b};
  static const MiniFloat E5M2FNUZ{5, 2, 16, MiniFloat::FNUZ, 0x7f};
  static const MiniFloat E2M1{2, 1, 1, MiniFloat::None, 0x7};
  switch (T) {
  case DType::Float8E4M3FN: return &E4M3FN;
  case DType::Float8E4M3FNUZ: return &E4M3FNUZ;
  case DType::Float8E5M2: return &E5M2;
  case DType::Float8E5M2FNUZ: return &E5M2FNUZ;
  case DType::Float4E2M1: return &E2M1;
  default: return nullptr;
  }
}

float miniToFloat(const MiniFloat &F, uint8_t B) {
  int SignShift = F.expBits + F.mantBits;
  B &= (uint8_t)((1u << (SignShift + 1)) - 1);
  bool Neg = (B >> SignShift) & 1;
  int Exp = (B >> F.mantBits) & ((1 << F.expBits) - 1);
  int Mant = B & ((1 << F.mantBits) - 1);
  int ExpAllOnes = (1 << F.expBits) - 1;
  if (F.specials == MiniFloat::FNUZ && B == (1u << SignShift))
    return std::numeric_limits<float>::quiet_NaN();
  if (F.specials == MiniFloat::FN && Exp == ExpAllOnes &&
      Mant == (1 << F.mantBits) - 1)
    return Neg ? -std::numeric_limits<float>::quiet_NaN()
               : std::numeric_limits<float>::quiet_NaN();
  if (F.specials == MiniFloat::IEEE && Exp == ExpAllOnes) {
    if (Mant)
      return Neg ? -std::numeric_limits<float>::quiet_NaN()
                 : std::numeric_limits<float>::quiet_NaN();
    return Neg ? -std::numeric_limits<float>::infinity()
               : std::numeric_limits<float>::infinity();
  }
  double V = Exp == 0 ? std::ldexp((double)Mant, 1 - F.bias - F.mantBits)
                      : std::ldexp((double)((1 << F.mantBits) | Mant),
                                   Exp - F.bias - F.mantBits);
  return (float)(Neg ? -V : V);
}

uint8_t floatToMini(const MiniFloat &F, double V, bool Saturate) {
  int SignShift = F.expBits + F.mantBits;
  uint8_t Sign = std::signbit(V) ? (uint8_t)(1u << SignShift) : 0;
  uint8_t NaNCode = F.specials == MiniFloat::FNUZ ? (uint8_t)(1u << SignShift)
                    : F.specials == MiniFloat::IEEE
                        ? (uint8_t)(Sign | (F.maxCode + 3))
                    : F.specials == MiniFloat::FN ? (uint8_t)(Sign | 0x7f)
                                                  : Sign; // float4: -0 / 0
  if (std::isnan(V))
    return F.specials == MiniFloat::None ? (uint8_t)(1u << SignShift) : NaNCode;
  auto overflow = [&]() -> uint8_t {
    if (Saturate || F.specials == MiniFloat::None)
      return Sign | F.maxCode;
    if (F.specials == MiniFloat::IEEE)
      return Sign | (uint8_t)(F.maxCode + 1); // infinity
    return NaNCode;
  };
  double A = std::fabs(V);
  if (std::isinf(A))
    return overflow();
  // The magnitude in units of the smallest subnormal, rounded to nearest
  // even; normal values keep MantBits + 1 significant bits.
  int MinExp = 1 - F.bias; // exponent of the smallest normal
  uint32_t Code;
  if (A < std::ldexp(1.0, MinExp)) {
    Code = (uint32_t)std::nearbyint(std::ldexp(A, F.mantBits - MinExp));
  } else {
    int E;
    std::frexp(A, &E);
    --E; // A = 1.m * 2^E
    double Q = std::nearbyint(std::ldexp(A, F.mantBits - E));
    if (Q >= std::ldexp(1.0, F.mantBits + 1)) {
      Q /= 2;
      ++E;
    }
    int64_t Biased = (int64_t)E + F.bias;
    if (Biased >= (1 << F.expBits) + 1)
      return overflow();
    Code =
        (uint32_t)((Biased << F.mantBits) | ((int64_t)Q - (1 << F.mantBits)));
  }
  if (Code > F.maxCode)
    return overflow();
  if (Code == 0 && F.specials == MiniFloat::FNUZ)
    return 0; // no negative zero
  return (uint8_t)(Sign | Code);
}

/// float8e8m0: 2^(code - 127), code 255 is NaN. Rounds on the float32
/// bits, as ONNX's reference does.
uint8_t floatToE8M0(double V, bool Saturate, RoundMode R) {
  float F = (float)V;
  uint32_t Bits;
  std::memcpy(&Bits, &F, 4);
  uint32_t Exp = (Bits >> 23) & 0xff;
  if (std::isnan(F))
    return 0xff;
  if (Exp == 0xff) // infinity
    return Saturate ? 0xfe : 0xff;
  uint32_t Frac = Bits & 0x7fffff;
  if (Exp == 0) {
    // Zero and float32's subnormals, all below 2^-126 (code 1); code 0 is
    // 2^-127, a fraction of 0x400000.
    if (R == RoundMode::Up)
      return Frac > 0x400000 ? 1 : 0;
    return R == RoundMode::Nearest && Frac >= 0x600000 ? 1 : 0;
  }
  bool Up = R == RoundMode::Up        ? Frac != 0
            : R == RoundMode::Nearest ? (Frac & 0x400000) != 0
                                      : false;
  if (Up) {
    if (Exp == 0xfe && Saturate)
      return 0xfe;
    ++Exp;
  }
  return (uint8_t)Exp;
}

} // namespace

RoundMode parseRoundMode(std::string_view Name) {
  if (Name == "up")
    return RoundMode::Up;
  if (Name == "down")
    return RoundMode::Down;
  if (Name == "nearest")
    return RoundMode::Nearest;
  fail("unknown round_mode '{}' (expected up, down or nearest)", Name);
}

float narrowToFloat(DType T, uint8_t B) {
  if (const MiniFloat *F = miniFloat(T))
    return miniToFloat(*F, B);
  switch (T) {
  case DType::Float8E8M0:
    return B == 0xff ? std::numeric_limits<float>::quiet_NaN()
                     : std::ldexp(1.0f, (int)B - 127);
  case DType::UInt4:
  case DType::UInt2:
  case DType::Int4:
  case DType::Int2: return (float)narrowToInt(T, B);
  default: narrowDTypeUnsupported(T);
  }
}

int64_t narrowToInt(DType T, uint8_t B) {
  switch (T) {
  case DType::UInt4: return B & 0xf;
  case DType::UInt2: return B & 0x3;
  case DType::Int4: return (int64_t)(int8_t)(uint8_t)(B << 4) >> 4;
  case DType::Int2: return (int64_t)(int8_t)(uint8_t)(B << 6) >> 6;
  default: break;
  }
  float F = narrowToFloat(T, B);
  if (std::isnan(F) || std::isinf(F))
    return 0;
  return (int64_t)F;
}

uint8_t intToNarrow(DType T, int64_t V) {
  switch (T) {
  case DType::UInt4: return (uint8_t)(V & 0xf);
  case DType::UInt2: return (uint8_t)(V & 0x3);
  case DType::Int4: return (uint8_t)((int8_t)(uint8_t)(V << 4) >> 4);
  case DType::Int2: return (uint8_t)((int8_t)(uint8_t)(V << 6) >> 6);
  default: return floatToNarrow(T, (double)V);
  }
}

uint8_t floatToNarrow(DType T, double V, bool Saturate, RoundMode R) {
  if (const MiniFloat *F = miniFloat(T))
    return floatToMini(*F, V, Saturate);
  if (T == DType::Float8E8M0)
    return floatToE8M0(V, Saturate, R);
  if (!isNarrow(T))
    invalidDType(T);
  // The integer types: truncate toward zero and keep the low bits, as a
  // conversion between integer types does (NaN and infinity become 0).
  if (!std::isfinite(V))
    return 0;
  double Tr = std::trunc(V);
  int64_t I = Tr >= 9.2e18    ? INT64_MAX
              : Tr <= -9.2e18 ? INT64_MIN
                              : (int64_t)Tr;
  return intToNarrow(T, I);
}

float halfToFloat(uint16_t H) {
  uint32_t Sign = (uint32_t)(H & 0x8000) << 16;
  uint32_t Exp = (H >> 10) & 0x1f;
  uint32_t Mant = H & 0x3ff;
  uint32_t Bits;
  if (Exp == 0x1f) {
    // Inf or NaN; keep the payload (shifted) so NaNs stay NaNs.
    Bits = Sign | 0x7f800000u | (Mant << 13);
  } else if (Exp != 0) {
    Bits = Sign | ((Exp + 112) << 23) | (Mant << 13);
  } else if (Mant == 0) {
    Bits = Sign;
  } else {
    // Subnormal half: normalize into a float.
    int E = -1;
    do {
      ++E;
      Mant <<= 1;
    } while ((Mant & 0x400) == 0);
    Bits = Sign | ((uint32_t)(112 - E) << 23) | ((Mant & 0x3ff) << 13);
  }
  float F;
  std::memcpy(&F, &Bits, 4);
  return F;
}

uint16_t floatToHalf(float F) {
  uint32_t Bits;
  std::memcpy(&Bits, &F, 4);
  uint16_t Sign = (uint16_t)((Bits >> 16) & 0x8000);
  uint32_t Abs = Bits & 0x7fffffffu;
  if (Abs >= 0x7f800000u) {
    if (Abs == 0x7f800000u)
      return Sign | 0x7c00;
    // NaN: quiet, keep the top payload bits.
    return Sign | 0x7e00 | (uint16_t)((Abs >> 13) & 0x3ff);
  }
  // Values at or above 65520 round to infinity.
  if (Abs >= 0x477ff000u)
    return Sign | 0x7c00;
  if (Abs >= 0x38800000u) {
    // Normal half. Round mantissa to nearest even.
    uint32_t Mant = Abs & 0x7fffff;
    uint32_t Exp = (Abs >> 23) - 112;
    uint32_t H = (Exp << 10) | (Mant >> 13);
    uint32_t Rem = Mant & 0x1fff;
    if (Rem > 0x1000 || (Rem == 0x1000 && (H & 1)))
      ++H; // may carry into the exponent, which is correct
    return Sign | (uint16_t)H;
  }
  if (Abs < 0x33000000u) // below half the smallest subnormal: zero
    return Sign;
  // Subnormal half: value = Mant24 * 2^(E-150); half subnormal unit is 2^-24.
  uint32_t Exp = Abs >> 23;
  uint32_t Mant = (Abs & 0x7fffff) | 0x800000;
  uint32_t Shift = 126 - Exp; // 14..24 for this range
  uint32_t H = Mant >> Shift;
  uint32_t Rem = Mant & ((1u << Shift) - 1);
  uint32_t HalfWay = 1u << (Shift - 1);
  if (Rem > HalfWay || (Rem == HalfWay && (H & 1)))
    ++H;
  return Sign | (uint16_t)H;
}

Half::Half(float F) : Bits(floatToHalf(F)) {}
Half::operator float() const { return halfToFloat(Bits); }

float bfloat16ToFloat(uint16_t B) {
  uint32_t Bits = (uint32_t)B << 16;
  float F;
  std::memcpy(&F, &Bits, 4);
  return F;
}

uint16_t floatToBFloat16(float F) {
  uint32_t Bits;
  std::memcpy(&Bits, &F, 4);
  if ((Bits & 0x7fffffffu) > 0x7f800000u) {
    // NaN: keep sign and top payload bits, set the quiet bit so that a
    // payload living only in the dropped bits cannot turn into infinity.
    return (uint16_t)((Bits >> 16) | 0x0040);
  }
  // Round to nearest even; a carry out of the mantissa bumps the exponent,
  // and the largest finite values round up to infinity, both as IEEE does.
  uint32_t Lsb = (Bits >> 16) & 1;
  return (uint16_t)((Bits + 0x7fffu + Lsb) >> 16);
}

BFloat16::BFloat16(float F) : Bits(floatToBFloat16(F)) {}
BFloat16::operator float() const { return bfloat16ToFloat(Bits); }

} // namespace rivet
