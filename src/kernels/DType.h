//===- DType.h - Element types of tensors -----------------------*- C++ -*-===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace rivet {

/// Element type of a tensor. The numbering is part of the .rvx format: only
/// append.
enum class DType : uint8_t {
  Bool = 0,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  Float16,
  Float32,
  Float64,
  UInt16,
  UInt32,
  UInt64,
  BFloat16,
};

/// The highest DType code; codes 0..kLastDType are valid (for readers of
/// serialized dtypes).
inline constexpr DType kLastDType = DType::BFloat16;

[[noreturn]] void invalidDType(DType T);
/// Bytes per element. Inline: every tensor size computation calls it.
inline size_t dtypeSize(DType T) {
  switch (T) {
  case DType::Bool:
  case DType::Int8:
  case DType::UInt8: return 1;
  case DType::Int16:
  case DType::UInt16:
  case DType::Float16:
  case DType::BFloat16: return 2;
  case DType::Int32:
  case DType::UInt32:
  case DType::Float32: return 4;
  case DType::Int64:
  case DType::UInt64:
  case DType::Float64: return 8;
  }
  invalidDType(T);
}
/// Canonical lower-case name: "bool", "int8", ..., "uint64", "bfloat16".
std::string_view dtypeName(DType T);
/// Inverse of dtypeName; throws rivet::Error for an unknown name.
DType parseDType(std::string_view Name);
bool isFloat(DType T);
bool isInteger(DType T); // signed or unsigned, not bool
bool isSigned(DType T);

/// IEEE binary16 stored as its bit pattern; converts through float.
struct Half {
  uint16_t Bits = 0;
  Half() = default;
  explicit Half(float F);
  operator float() const;
};

float halfToFloat(uint16_t Bits);
uint16_t floatToHalf(float F);

/// bfloat16 (the top half of an IEEE binary32) stored as its bit pattern;
/// converts through float, rounding to nearest even. NaNs stay (quiet) NaNs.
struct BFloat16 {
  uint16_t Bits = 0;
  BFloat16() = default;
  explicit BFloat16(float F);
  operator float() const;
};

float bfloat16ToFloat(uint16_t Bits);
uint16_t floatToBFloat16(float F);

/// Whether E is one of the 16-bit float types that compute through float.
template <typename E>
inline constexpr bool isHalfLike =
    std::is_same_v<E, Half> || std::is_same_v<E, BFloat16>;

/// Maps a C++ element type to its DType (bool, int8_t, ..., Half, float,
/// double, uint16_t, uint32_t, uint64_t, BFloat16).
template <typename T> constexpr DType dtypeOf();
template <> constexpr DType dtypeOf<bool>() { return DType::Bool; }
template <> constexpr DType dtypeOf<int8_t>() { return DType::Int8; }
template <> constexpr DType dtypeOf<int16_t>() { return DType::Int16; }
template <> constexpr DType dtypeOf<int32_t>() { return DType::Int32; }
template <> constexpr DType dtypeOf<int64_t>() { return DType::Int64; }
template <> constexpr DType dtypeOf<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtypeOf<Half>() { return DType::Float16; }
template <> constexpr DType dtypeOf<float>() { return DType::Float32; }
template <> constexpr DType dtypeOf<double>() { return DType::Float64; }
template <> constexpr DType dtypeOf<uint16_t>() { return DType::UInt16; }
template <> constexpr DType dtypeOf<uint32_t>() { return DType::UInt32; }
template <> constexpr DType dtypeOf<uint64_t>() { return DType::UInt64; }
template <> constexpr DType dtypeOf<BFloat16>() { return DType::BFloat16; }

/// Calls F with a value-initialized object of the C++ type for T, e.g.
///   dispatchDType(T, [&](auto Tag) { using E = decltype(Tag); ... });
template <typename Fn> decltype(auto) dispatchDType(DType T, Fn &&F) {
  switch (T) {
  case DType::Bool: return F(bool{});
  case DType::Int8: return F(int8_t{});
  case DType::Int16: return F(int16_t{});
  case DType::Int32: return F(int32_t{});
  case DType::Int64: return F(int64_t{});
  case DType::UInt8: return F(uint8_t{});
  case DType::Float16: return F(Half{});
  case DType::Float32: return F(float{});
  case DType::Float64: return F(double{});
  case DType::UInt16: return F(uint16_t{});
  case DType::UInt32: return F(uint32_t{});
  case DType::UInt64: return F(uint64_t{});
  case DType::BFloat16: return F(BFloat16{});
  }
  return F(float{});
}

} // namespace rivet
