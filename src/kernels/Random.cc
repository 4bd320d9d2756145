//===- Random.cc - Deterministic random tensors ---------------------------===//
#include "kernels/Random.h"
#include "kernels/ElementConvert.h"
#include "kernels/StringTable.h"

namespace rivet {

namespace {
/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, well mixed.
struct SplitMix64 {
  uint64_t State;
  uint64_t next() {
    uint64_t Z = (State += 0x9e3779b97f4a7c15ULL);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebULL;
    return Z ^ (Z >> 31);
  }
};
} // namespace

Tensor randomTensor(const Shape &Sh, DType T, uint64_t Seed) {
  Tensor R = Tensor::empty(Sh, T);
  SplitMix64 Rng{Seed};
  int64_t N = R.numel();
  if (isString(T)) {
    // Short lowercase words (0 to 8 letters): text a model can take.
    for (int64_t I = 0; I < N; ++I) {
      uint64_t X = Rng.next();
      std::string W((size_t)(X % 9), 'a');
      for (char &C : W) {
        X = X / 9 + Rng.next();
        C = (char)('a' + X % 26);
      }
      setStringElement(R, I, W);
    }
    return R;
  }
  if (isNarrow(T)) {
    // Narrow floats: [-1, 1) rounded to the type, so [-1, 1] (float8e8m0
    // holds only powers of two: (0, 1)); narrow integers: any value.
    uint8_t *P = static_cast<uint8_t *>(R.rawData());
    for (int64_t I = 0; I < N; ++I) {
      uint64_t X = Rng.next();
      double U = (double)(X >> 11) * 0x1.0p-53;
      if (!dtypeInfo(T).narrowFloat)
        P[I] = intToNarrow(T, (int64_t)(X >> 32));
      else if (T == DType::Float8E8M0)
        P[I] = floatToNarrow(T, U, true, RoundMode::Down);
      else
        P[I] = floatToNarrow(T, U * 2.0 - 1.0, true);
    }
    return R;
  }
  dispatchDType(T, [&](auto Tag) {
    using E = decltype(Tag);
    E *P = static_cast<E *>(R.rawData());
    for (int64_t I = 0; I < N; ++I) {
      uint64_t X = Rng.next();
      if constexpr (std::is_same_v<E, bool>) {
        P[I] = (X >> 63) != 0;
      } else if constexpr (std::is_integral_v<E>) {
        P[I] = (E)((X >> 32) % 10);
      } else {
        // 53 random bits -> [0, 1) -> [-1, 1). 16-bit floats/float32 round to
        // nearest, which may produce exactly 1.0 only for values within
        // half an ulp of 1; clamp to keep the interval half-open.
        double U = (double)(X >> 11) * 0x1.0p-53 * 2.0 - 1.0;
        E V = convertElement<E>(U);
        if (convertElement<double>(V) >= 1.0)
          V = convertElement<E>(std::is_same_v<E, BFloat16>
                                    ? 0.99609375      // largest bfloat16 < 1
                                    : 0.99951171875); // largest half < 1
        P[I] = V;
      }
    }
  });
  return R;
}

} // namespace rivet
