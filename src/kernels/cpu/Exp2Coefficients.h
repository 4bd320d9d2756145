//===- Exp2Coefficients.h - 2^f on [0, 1) as a polynomial -------*- C++ -*-===//
//
// The vector exponentials of our AVX-512 kernels (the recurrent kernels'
// sigmoid, attention's softmax) split x into floor(x), applied by
// vscalefps, and f = x - floor(x) in [0, 1), which vreduceps gives in one
// instruction, and take 2^f from this polynomial.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace rivet::kernels {

/// 2^f for f in [0, 1), degree 6, lowest degree first: a weighted
/// least-squares fit near the minimax one, within 1.9e-9 relative (in
/// double; about 1 ulp in float, by Horner's rule with FMAs).
inline constexpr float kExp2Coefficients[7] = {1.0f,
                                               6.931470037e-01f,
                                               2.402298301e-01f,
                                               5.548334122e-02f,
                                               9.678840637e-03f,
                                               1.243968843e-03f,
                                               2.170225343e-04f};

} // namespace rivet::kernels
