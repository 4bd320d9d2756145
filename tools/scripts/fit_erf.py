#!/usr/bin/python3
"""Fits the polynomials of the inline float32 erf (emitErfF32, EmitLLVM.cc).

    /usr/bin/python3 tools/scripts/fit_erf.py

erf(x) = x p(x^2) below |x| = 1 and 1 - e^(-x^2) q(1/x) above (x clamped
to 4, where erf rounds to 1 in float32): p of degree 5 fitted to erf(x) / x
on [0, 1], q of degree 9 to erfc(x) e^(x^2) on [1, 4], each for the least
maximum relative error (Lawson's iteration of weighted least squares on
Chebyshev nodes, in float64). Prints the coefficients rounded to float32,
the fits' errors, and the largest error in ulp of the whole function
evaluated in float32 with fused multiply-adds (exp correctly rounded here;
the generated code's exp adds up to 2 ulp of e^(-x^2), below 0.4 ulp of
the result) against math.erf over 4.5 million floats in [0, 4.5].
Higher degrees of q lose more to float32 rounding of their coefficients
than they gain (degree 11: 3 ulp, 12: 2 ulp near the boundary).
"""
import math

import numpy as np

F32 = np.float32


def chebyshev_nodes(lo, hi, n):
    k = np.arange(n)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)


def minimax_fit(t, y, degree, iterations=60):
    """Coefficients (lowest first) of the polynomial in t closest to y in
    maximum relative error."""
    a = np.vander(t, degree + 1, increasing=True)
    weight = np.ones_like(t)
    for _ in range(iterations):
        c, *_ = np.linalg.lstsq(a * (weight / y)[:, None], y * weight / y, rcond=None)
        err = np.abs((a @ c - y) / y)
        weight *= np.sqrt(err / err.max()) + 1e-3
        weight /= weight.mean()
    return c, np.abs((a @ c - y) / y).max()


def fused(a, b, c):
    """a * b + c rounded once to float32 (the float64 product is exact)."""
    return F32(np.float64(a) * np.float64(b) + np.float64(c))


def horner(coefficients, t):
    r = np.full_like(t, F32(coefficients[-1]))
    for c in reversed(coefficients[:-1]):
        r = fused(r, t, F32(c))
    return r


def main():
    erf = np.vectorize(math.erf)
    erfc = np.vectorize(math.erfc)
    x = chebyshev_nodes(1e-4, 1.0, 4000)
    p, p_err = minimax_fit(x * x, erf(x) / x, 5)
    x = chebyshev_nodes(1.0, 4.0, 4000)
    q, q_err = minimax_fit(1 / x, erfc(x) * np.exp(x * x), 9)
    p, q = p.astype(F32), q.astype(F32)
    print("p (x^2, degree 5), max relative error %.2g:" % p_err)
    print("  " + ", ".join(repr(float(c)) for c in p))
    print("q (1/x, degree 9), max relative error %.2g:" % q_err)
    print("  " + ", ".join(repr(float(c)) for c in q))

    xs = np.unique(np.concatenate([np.linspace(0, 4.5, 3_000_001).astype(F32),
                                   (np.arange(1, 2**20) * F32(2**-20)).astype(F32),
                                   np.logspace(-30, 0, 200_000).astype(F32)]))
    want = np.array([math.erf(float(v)) for v in xs]).astype(F32)
    small = (xs * horner(p, (xs * xs).astype(F32))).astype(F32)
    clamped = np.minimum(xs, F32(4))
    e = np.exp(-np.float64((clamped * clamped).astype(F32))).astype(F32)
    large = fused(-e, horner(q, (F32(1) / np.maximum(clamped, F32(1))).astype(F32)), F32(1))
    got = np.where(xs < F32(1), small, large)
    ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    print("largest error over %d floats in [0, 4.5]: %d ulp (at %r)" % (len(xs), ulps.max(), float(xs[ulps.argmax()])))


if __name__ == "__main__":
    main()
