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
  // Narrow types (ONNX opsets 19-25). Stored one element per byte (the
  // 4- and 2-bit ones unpacked, as ml_dtypes does); no operator computes in
  // them: cast, quantize_linear and dequantize_linear convert, and the
  // operators that only move elements carry them.
  Float8E4M3FN,
  Float8E4M3FNUZ,
  Float8E5M2,
  Float8E5M2FNUZ,
  UInt4,
  Int4,
  Float4E2M1,
  Float8E8M0,
  UInt2,
  Int2,
  // Text: each element is a handle into the process's string table
  // (kernels/StringTable.h), so that operators that only move elements move
  // strings as they move numbers.
  String,
};

/// The highest DType code; codes 0..kLastDType are valid (for readers of
/// serialized dtypes).
inline constexpr DType kLastDType = DType::String;
inline constexpr int kNumDTypes = (int)kLastDType + 1;

/// What kind of values a dtype holds.
enum class DTypeKind : uint8_t {
  Bool,
  Signed,   // two's-complement integers
  Unsigned, // unsigned integers
  Float,    // floats that operators compute in
  Narrow,   // the narrow types: storage only, converted to compute
  String,   // text (handles into the string table)
};

/// Every property of an element type, in one table (DType.cc).
struct DTypeInfo {
  std::string_view name; // canonical lower-case name, e.g. "float8e4m3fn"
  uint8_t size;          // bytes per element in memory
  uint8_t bits;          // bits of a value (4 for int4, 16 for float16)
  DTypeKind kind;
  bool narrowFloat;        // a Narrow type that holds floats
  bool narrowSigned;       // a Narrow type that holds signed values
  std::string_view suffix; // scalar literal suffix in the text format
};

extern const DTypeInfo kDTypeInfo[kNumDTypes];

[[noreturn]] void invalidDType(DType T);
/// The table row of T; an error for a code outside the enum.
inline const DTypeInfo &dtypeInfo(DType T) {
  if ((unsigned)T >= (unsigned)kNumDTypes)
    invalidDType(T);
  return kDTypeInfo[(int)T];
}
/// Bytes per element. Inline: every tensor size computation calls it.
inline size_t dtypeSize(DType T) { return dtypeInfo(T).size; }
/// Canonical lower-case name: "bool", "int8", ..., "uint64", "bfloat16".
inline std::string_view dtypeName(DType T) { return dtypeInfo(T).name; }
/// Inverse of dtypeName; throws rivet::Error for an unknown name.
DType parseDType(std::string_view Name);
/// A float type operators compute in (not the narrow float types).
bool isFloat(DType T);
bool isInteger(DType T); // signed or unsigned, not bool nor narrow
bool isSigned(DType T);
/// One of the narrow storage types (float8, float4, int4, int2, ...).
inline bool isNarrow(DType T) { return dtypeInfo(T).kind == DTypeKind::Narrow; }
/// Text elements (handles into the string table).
inline bool isString(DType T) { return T == DType::String; }
/// The error for a dtype dispatchDType has no C++ type for (a narrow type,
/// string): no kernel computes in it.
[[noreturn]] void narrowDTypeUnsupported(DType T);

/// How a conversion to float8e8m0 (a power of two) rounds: ONNX Cast's
/// round_mode.
enum class RoundMode : uint8_t { Up, Down, Nearest };
/// "up", "down" or "nearest"; an error for anything else.
RoundMode parseRoundMode(std::string_view Name);

/// The value of one element of narrow type T (its byte B) as a float: NaN
/// and infinities as the type defines them.
float narrowToFloat(DType T, uint8_t B);
/// The value of one element as an integer: the narrow integer types exactly;
/// the float types truncated (NaN and infinity give 0).
int64_t narrowToInt(DType T, uint8_t B);
/// The element of narrow type T nearest to V, ties to even (float8e8m0
/// rounds as R says). With Saturate, values beyond the largest finite one
/// become it (ONNX Cast's saturate=1); without, infinity or NaN as the type
/// has them (float4e2m1 has neither and always saturates). The integer
/// types truncate toward zero and keep the low bits, as ml_dtypes does.
uint8_t floatToNarrow(DType T, double V, bool Saturate = true,
                      RoundMode R = RoundMode::Up);
/// V in narrow type T: the integer types keep V's low bits (two's
/// complement, as conversions between integer types do).
uint8_t intToNarrow(DType T, int64_t V);

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
  default: break;
  }
  narrowDTypeUnsupported(T);
}

} // namespace rivet
