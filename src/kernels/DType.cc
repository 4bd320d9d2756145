//===- DType.cc - Element types of tensors --------------------------------===//
#include "kernels/DType.h"
#include "kernels/Error.h"

#include <cstring>

namespace rivet {

void invalidDType(DType T) { fail("invalid dtype code {}", (int)T); }

std::string_view dtypeName(DType T) {
  switch (T) {
  case DType::Bool: return "bool";
  case DType::Int8: return "int8";
  case DType::Int16: return "int16";
  case DType::Int32: return "int32";
  case DType::Int64: return "int64";
  case DType::UInt8: return "uint8";
  case DType::Float16: return "float16";
  case DType::Float32: return "float32";
  case DType::Float64: return "float64";
  case DType::UInt16: return "uint16";
  case DType::UInt32: return "uint32";
  case DType::UInt64: return "uint64";
  case DType::BFloat16: return "bfloat16";
  }
  fail("invalid dtype code {}", (int)T);
}

DType parseDType(std::string_view Name) {
  static const DType All[] = {DType::Bool,    DType::Int8,    DType::Int16,
                              DType::Int32,   DType::Int64,   DType::UInt8,
                              DType::Float16, DType::Float32, DType::Float64,
                              DType::UInt16,  DType::UInt32,  DType::UInt64,
                              DType::BFloat16};
  for (DType T : All)
    if (dtypeName(T) == Name)
      return T;
  fail("unknown dtype '{}' (expected one of bool, int8, int16, int32, int64, "
       "uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64)",
       Name);
}

bool isFloat(DType T) {
  return T == DType::Float16 || T == DType::Float32 || T == DType::Float64 ||
         T == DType::BFloat16;
}

bool isInteger(DType T) {
  return T == DType::Int8 || T == DType::Int16 || T == DType::Int32 ||
         T == DType::Int64 || T == DType::UInt8 || T == DType::UInt16 ||
         T == DType::UInt32 || T == DType::UInt64;
}

bool isSigned(DType T) {
  return T == DType::Int8 || T == DType::Int16 || T == DType::Int32 ||
         T == DType::Int64 || isFloat(T);
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
