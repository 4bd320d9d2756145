//===- ElementConvert.cc - Conversions to and from the narrow types -------===//
#include "kernels/ElementConvert.h"
#include "kernels/Error.h"
#include "kernels/StringTable.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <strings.h>
#include <vector>

namespace rivet {

void convertNarrowBuffer(const void *Src, DType FromT, void *Dst, DType ToT,
                         int64_t N, bool Saturate, RoundMode R) {
  const uint8_t *S8 = static_cast<const uint8_t *>(Src);
  uint8_t *D8 = static_cast<uint8_t *>(Dst);
  // Integers travel as integers (so int4 -> int2 keeps the low bits, as
  // conversions between integer types do), everything else as a float.
  if (isNarrow(FromT)) {
    bool FromFloat = dtypeInfo(FromT).narrowFloat;
    if (isNarrow(ToT)) {
      bool ToFloat = dtypeInfo(ToT).narrowFloat;
      for (int64_t I = 0; I < N; ++I)
        D8[I] =
            FromFloat || ToFloat
                ? floatToNarrow(ToT, narrowToFloat(FromT, S8[I]), Saturate, R)
                : intToNarrow(ToT, narrowToInt(FromT, S8[I]));
      return;
    }
    dispatchDType(ToT, [&](auto Tag) {
      using T = decltype(Tag);
      T *D = static_cast<T *>(Dst);
      for (int64_t I = 0; I < N; ++I)
        D[I] = FromFloat ? convertElement<T>(narrowToFloat(FromT, S8[I]))
                         : convertElement<T>(narrowToInt(FromT, S8[I]));
    });
    return;
  }
  bool ToFloat = dtypeInfo(ToT).narrowFloat;
  dispatchDType(FromT, [&](auto Tag) {
    using F = decltype(Tag);
    const F *S = static_cast<const F *>(Src);
    for (int64_t I = 0; I < N; ++I) {
      if constexpr (std::is_integral_v<F> && !std::is_same_v<F, bool>) {
        D8[I] = ToFloat ? floatToNarrow(ToT, (double)S[I], Saturate, R)
                        : intToNarrow(ToT, (int64_t)S[I]);
      } else {
        D8[I] = floatToNarrow(ToT, convertElement<double>(S[I]), Saturate, R);
      }
    }
  });
}

namespace {

/// The text of one number, as NumPy's str() writes it: the shortest digits
/// that read back to the same value of its type.
template <typename E> std::string numberText(E V) {
  if constexpr (std::is_same_v<E, bool>) {
    return V ? "True" : "False";
  } else if constexpr (std::is_floating_point_v<E> || isHalfLike<E>) {
    using F = std::conditional_t<std::is_same_v<E, double>, double, float>;
    F X = (F)V;
    if (std::isnan(X))
      return "nan";
    if (std::isinf(X))
      return X > 0 ? "inf" : "-inf";
    return fmt::format("{}", X);
  } else {
    return fmt::format("{}", V);
  }
}

/// The number text S spells; an error when it spells none.
double parseNumber(std::string_view S) {
  std::string T(S);
  const char *P = T.c_str();
  bool Neg = *P == '-';
  const char *Body = (*P == '-' || *P == '+') ? P + 1 : P;
  if (strcasecmp(Body, "inf") == 0 || strcasecmp(Body, "infinity") == 0)
    return Neg ? -HUGE_VAL : HUGE_VAL;
  if (strcasecmp(Body, "nan") == 0)
    return std::numeric_limits<double>::quiet_NaN();
  char *End = nullptr;
  errno = 0;
  double V = std::strtod(P, &End);
  if (T.empty() || End != P + T.size())
    fail("cast: '{}' is not a number", S);
  return V;
}

} // namespace

void convertStringBuffer(const void *Src, DType FromT, void *Dst, DType ToT,
                         int64_t N, bool Saturate, RoundMode R) {
  if (isString(FromT) && isString(ToT)) {
    std::memcpy(Dst, Src, (size_t)N * sizeof(StringHandle));
    return;
  }
  if (isString(ToT)) {
    StringHandle *D = static_cast<StringHandle *>(Dst);
    if (isNarrow(FromT)) {
      std::vector<float> F((size_t)N);
      convertNarrowBuffer(Src, FromT, F.data(), DType::Float32, N, Saturate, R);
      for (int64_t I = 0; I < N; ++I)
        D[I] = internString(numberText(F[(size_t)I]));
      return;
    }
    dispatchDType(FromT, [&](auto Tag) {
      using F = decltype(Tag);
      const F *S = static_cast<const F *>(Src);
      for (int64_t I = 0; I < N; ++I)
        D[I] = internString(numberText(S[I]));
    });
    return;
  }
  // Text to numbers: through double (exact for every float32 and for
  // integers up to 2^53), then as a double converts.
  const StringHandle *S = static_cast<const StringHandle *>(Src);
  std::vector<double> V((size_t)N);
  for (int64_t I = 0; I < N; ++I) {
    std::string_view Text = stringOf(S[I]);
    if (ToT == DType::Bool && (Text == "True" || Text == "False"))
      V[(size_t)I] = Text == "True";
    else
      V[(size_t)I] = parseNumber(Text);
  }
  convertBuffer(V.data(), DType::Float64, Dst, ToT, N, Saturate, R);
}

} // namespace rivet
