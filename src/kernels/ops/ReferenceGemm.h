//===- ReferenceGemm.h - The reference kernels' matrix product --*- C++ -*-===//
//
// C = A @ B for the reference kernels of conv, dense, matmul and gemm (and
// the integer ones), in plain C++ with no library: the interpreter is the
// oracle the VM's oneDNN kernels are tested against, so it must not share
// them. C[i, j] is the sum of A(i, l) * B(l, j) for l = 0, 1, ..., K - 1 in
// that order, accumulated in Acc (integers wrap). The blocking only decides
// which sums advance when, never the order of a sum, so the result is the
// naive triple loop's (up to the compiler contracting a * b + c).
//
// Blocked for cache, so that the interpreter stays usable (resnet18: ~13
// times the VM's time with the former unblocked loop, ~8 with this): A is
// copied into panels of MR rows and B into panels of NR columns, l-major
// and zero-padded; an MR x NR tile of C is kept in registers while l runs
// over a block of KC, whose B block (KC x NC) stays in L2 across the row
// panels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace rivet::kernels {

/// The packed panels of referenceGemm, and a buffer for its caller (conv's
/// im2col matrix).
template <typename Acc> struct GemmScratch {
  std::vector<Acc> A, B, Caller;

  /// This thread's, kept across kernel calls: fresh buffers cost a page
  /// fault per page (a tenth of resnet18's time on the interpreter). A
  /// kernel that uses it calls no other kernel before it is done.
  static GemmScratch &forThread() {
    thread_local GemmScratch S;
    return S;
  }
  /// Frees the buffers when they hold more than 64 MiB (one huge product
  /// would keep its memory for the thread's life otherwise).
  void trim() {
    if ((A.capacity() + B.capacity() + Caller.capacity()) * sizeof(Acc) >
        (size_t(64) << 20))
      *this = GemmScratch();
  }
};

namespace gemm_detail {

// 4 x 8 floats are 8 SSE registers: the tile fits the baseline x86-64's 16
// with room for the operands.
constexpr int64_t MR = 4, NR = 8, KC = 256, NC = 256;

template <typename Acc> inline Acc mulAdd(Acc C, Acc A, Acc B) {
  if constexpr (std::is_integral_v<Acc>)
    return (Acc)((uint64_t)C + (uint64_t)A * (uint64_t)B); // wraps
  else
    return C + A * B;
}

/// C[0..Rows) x [0..Cols) (row stride LdC) = (First ? 0 : C) + the A panel
/// (KN x MR) @ the B panel (KN x NR).
template <typename Acc>
void gemmTile(const Acc *__restrict A, const Acc *__restrict B, int64_t KN,
              Acc *__restrict C, int64_t LdC, int64_t Rows, int64_t Cols,
              bool First) {
  Acc T[MR][NR];
  for (int64_t I = 0; I < MR; ++I)
    for (int64_t J = 0; J < NR; ++J)
      T[I][J] = First || I >= Rows || J >= Cols ? Acc(0) : C[I * LdC + J];
  for (int64_t L = 0; L < KN; ++L) {
    const Acc *AL = A + L * MR, *BL = B + L * NR;
    // Unrolled whole, so that T lives in registers (GCC's -O2 keeps it in
    // memory otherwise, at half the speed).
#pragma GCC unroll 4
    for (int64_t I = 0; I < MR; ++I)
#pragma GCC unroll 8
      for (int64_t J = 0; J < NR; ++J)
        T[I][J] = mulAdd(T[I][J], AL[I], BL[J]);
  }
  for (int64_t I = 0; I < Rows; ++I)
    for (int64_t J = 0; J < Cols; ++J)
      C[I * LdC + J] = T[I][J];
}

} // namespace gemm_detail

/// C[i, j] (row stride LdC) = sum over l of FA(i, l) * FB(l, j), i < M,
/// j < N, l < K; FA and FB return Acc.
template <typename Acc, typename FA, typename FB>
void referenceGemm(int64_t M, int64_t N, int64_t K, FA &&A, FB &&B, Acc *C,
                   int64_t LdC, GemmScratch<Acc> &S) {
  using namespace gemm_detail;
  if (M <= 0 || N <= 0)
    return;
  if (K <= 0) {
    for (int64_t I = 0; I < M; ++I)
      std::fill(C + I * LdC, C + I * LdC + N, Acc(0));
    return;
  }
  int64_t MP = (M + MR - 1) / MR, NP = (N + NR - 1) / NR;
  S.A.resize((size_t)(MP * MR * K));
  S.B.resize((size_t)(NP * NR * K));
  // Panel P of A holds rows P * MR + r as PA[(P * K + l) * MR + r]; of B,
  // columns P * NR + c as PB[(P * K + l) * NR + c].
  Acc *PA = S.A.data(), *PB = S.B.data();
  // Whole panels take no bounds check per element (their copies vectorize).
  for (int64_t P = 0; P < MP; ++P) {
    int64_t I0 = P * MR, Rows = std::min(MR, M - I0);
    for (int64_t L = 0; L < K; ++L) {
      Acc *D = PA + (P * K + L) * MR;
      if (Rows == MR) {
        for (int64_t R = 0; R < MR; ++R)
          D[R] = A(I0 + R, L);
      } else {
        for (int64_t R = 0; R < MR; ++R)
          D[R] = R < Rows ? A(I0 + R, L) : Acc(0);
      }
    }
  }
  // B is read a few of its rows at a time, each row in order: a panel at a
  // time (a column of 32-byte pieces) missed the cache on every piece.
  constexpr int64_t LB = 8;
  for (int64_t L0 = 0; L0 < K; L0 += LB)
    for (int64_t P = 0; P < NP; ++P) {
      int64_t J0 = P * NR, Cols = std::min(NR, N - J0);
      for (int64_t L = L0; L < std::min(K, L0 + LB); ++L) {
        Acc *D = PB + (P * K + L) * NR;
        if (Cols == NR) {
          for (int64_t R = 0; R < NR; ++R)
            D[R] = B(L, J0 + R);
        } else {
          for (int64_t R = 0; R < NR; ++R)
            D[R] = R < Cols ? B(L, J0 + R) : Acc(0);
        }
      }
    }
  for (int64_t K0 = 0; K0 < K; K0 += KC) {
    int64_t KN = std::min(KC, K - K0);
    for (int64_t J0 = 0; J0 < N; J0 += NC)
      for (int64_t I = 0; I < M; I += MR)
        for (int64_t J = J0; J < std::min(N, J0 + NC); J += NR)
          gemmTile<Acc>(PA + (I / MR * K + K0) * MR,
                        PB + (J / NR * K + K0) * NR, KN, C + I * LdC + J, LdC,
                        std::min(MR, M - I), std::min(NR, N - J), K0 == 0);
  }
}

} // namespace rivet::kernels
