//===- DType.h - Element types of tensors -----------------------*- C++ -*-===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

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
};

/// Bytes per element.
size_t dtypeSize(DType T);
/// Canonical lower-case name: "bool", "int8", ..., "float16", "float32".
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

/// Maps a C++ element type to its DType (bool, int8_t, ..., Half, float, double).
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
  }
  return F(float{});
}

} // namespace rivet
