//===- DenseGemv.cc - A dense with one row: a matrix-vector product -------===//
#include "kernels/cpu/DenseGemv.h"

#include <cstring>

namespace rivet {

namespace {

/// Sixteen floats: one AVX-512 register, two AVX2 ones, four SSE ones; at
/// float alignment and may_alias, so that dereferencing one is an unaligned
/// load from a float array. (No function takes or returns one: outside the
/// target-specific clones that would change the calling convention.)
typedef float Lanes __attribute__((vector_size(64), aligned(4), may_alias));

inline const Lanes &lanesAt(const float *P) {
  return *reinterpret_cast<const Lanes *>(P);
}

/// The sum of 16 floats, pairwise.
inline float sum16(float *L) {
  for (int Width = 8; Width > 0; Width /= 2)
    for (int I = 0; I < Width; ++I)
      L[I] += L[I + Width];
  return L[0];
}

/// The sum of V's lanes.
#define RIVET_SUM_LANES(V, Into)                                               \
  do {                                                                         \
    float L_[16];                                                              \
    std::memcpy(L_, &(V), sizeof(L_));                                         \
    (Into) = sum16(L_);                                                        \
  } while (0)

} // namespace

// Rows four at a time share each load of x; the next four rows are
// prefetched while these stream (the hardware prefetcher stops at pages):
// 0.28 -> 0.21 ms for 5 MB of weights in L3.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3",
                             "default"))) void
denseGemvRows(const float *X, const float *W, const float *Bias, int64_t K,
              int64_t N0, int64_t N1, float *Out) {
  int64_t KV = K - K % 16;
  int64_t N = N0;
  for (; N + 4 <= N1; N += 4) {
    const float *W0 = W + N * K, *W1 = W0 + K, *W2 = W1 + K, *W3 = W2 + K;
    const float *Next = W0 + 4 * K;
    bool Prefetch = N + 8 <= N1;
    Lanes A0 = {}, A1 = {}, A2 = {}, A3 = {};
    for (int64_t I = 0; I < KV; I += 16) {
      if (Prefetch) {
        __builtin_prefetch(Next + I);
        __builtin_prefetch(Next + K + I);
        __builtin_prefetch(Next + 2 * K + I);
        __builtin_prefetch(Next + 3 * K + I);
      }
      Lanes XV = lanesAt(X + I);
      A0 += lanesAt(W0 + I) * XV;
      A1 += lanesAt(W1 + I) * XV;
      A2 += lanesAt(W2 + I) * XV;
      A3 += lanesAt(W3 + I) * XV;
    }
    float S[4];
    RIVET_SUM_LANES(A0, S[0]);
    RIVET_SUM_LANES(A1, S[1]);
    RIVET_SUM_LANES(A2, S[2]);
    RIVET_SUM_LANES(A3, S[3]);
    for (int64_t I = KV; I < K; ++I) {
      S[0] += W0[I] * X[I];
      S[1] += W1[I] * X[I];
      S[2] += W2[I] * X[I];
      S[3] += W3[I] * X[I];
    }
    for (int R = 0; R < 4; ++R)
      Out[N + R] = Bias ? S[R] + Bias[N + R] : S[R];
  }
  for (; N < N1; ++N) {
    const float *WN = W + N * K;
    Lanes A = {};
    for (int64_t I = 0; I < KV; I += 16)
      A += lanesAt(WN + I) * lanesAt(X + I);
    float S;
    RIVET_SUM_LANES(A, S);
    for (int64_t I = KV; I < K; ++I)
      S += WN[I] * X[I];
    Out[N] = Bias ? S + Bias[N] : S;
  }
}

} // namespace rivet
