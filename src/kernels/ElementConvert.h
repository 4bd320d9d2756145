//===- ElementConvert.h - Element conversions between dtypes ----*- C++ -*-===//
//
// Internal to src/kernels: the one place that defines how a value of one
// element type converts to another (used by cast, element access, npy).
// Conversions are total: float->int truncates toward zero and saturates at
// the target's range (NaN becomes 0) instead of invoking undefined behaviour;
// anything->bool is `!= 0`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/DType.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace rivet {

/// Converts one element; Half and BFloat16 travel through float.
template <typename To, typename From> inline To convertElement(From V) {
  if constexpr (isHalfLike<From>) {
    if constexpr (std::is_same_v<To, From>)
      return V;
    else
      return convertElement<To>(static_cast<float>(V));
  } else if constexpr (isHalfLike<To>) {
    if constexpr (std::is_same_v<From, bool>)
      return To(V ? 1.0f : 0.0f);
    else
      return To(static_cast<float>(V));
  } else if constexpr (std::is_same_v<To, bool>) {
    return V != From(0);
  } else if constexpr (std::is_floating_point_v<From> &&
                       std::is_integral_v<To>) {
    if (std::isnan(V))
      return To(0);
    double T = std::trunc((double)V);
    if (T <= (double)std::numeric_limits<To>::min())
      return std::numeric_limits<To>::min();
    // 2^63 is exactly representable; anything at or above saturates.
    if (T >= (double)std::numeric_limits<To>::max())
      return std::numeric_limits<To>::max();
    return static_cast<To>(T);
  } else {
    return static_cast<To>(V);
  }
}

/// convertBuffer when FromT or ToT is a narrow type (ElementConvert.cc).
void convertNarrowBuffer(const void *Src, DType FromT, void *Dst, DType ToT,
                         int64_t N, bool Saturate, RoundMode R);
/// convertBuffer when FromT or ToT is string: numbers print as the shortest
/// text that reads back to the same value (NumPy's str), bools as True and
/// False; text parses as a number ("inf", "-INF", "NaN" in any case; an
/// error for text that is not one).
void convertStringBuffer(const void *Src, DType FromT, void *Dst, DType ToT,
                         int64_t N, bool Saturate, RoundMode R);

/// Converts N elements from a buffer of dtype FromT into one of dtype ToT.
/// Saturate and R apply to conversions to the narrow float types (ONNX
/// Cast's saturate and round_mode).
inline void convertBuffer(const void *Src, DType FromT, void *Dst, DType ToT,
                          int64_t N, bool Saturate = true,
                          RoundMode R = RoundMode::Up) {
  if (isString(FromT) || isString(ToT))
    return convertStringBuffer(Src, FromT, Dst, ToT, N, Saturate, R);
  if (isNarrow(FromT) || isNarrow(ToT))
    return convertNarrowBuffer(Src, FromT, Dst, ToT, N, Saturate, R);
  dispatchDType(FromT, [&](auto FromTag) {
    using F = decltype(FromTag);
    dispatchDType(ToT, [&](auto ToTag) {
      using T = decltype(ToTag);
      const F *S = static_cast<const F *>(Src);
      T *D = static_cast<T *>(Dst);
      for (int64_t I = 0; I < N; ++I)
        D[I] = convertElement<T>(S[I]);
    });
  });
}

} // namespace rivet
