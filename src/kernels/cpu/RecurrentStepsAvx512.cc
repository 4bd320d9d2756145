//===- RecurrentStepsAvx512.cc - RecurrentSteps.inc for AVX-512 -----------===//
#include "kernels/cpu/RecurrentSteps.h"

// The rcp14 intrinsics of RecurrentSteps.inc (declared for every target).
#include <immintrin.h>

#if defined(__GNUC__) // and clang
// Vector arguments of always-inlined helpers: no call passes one.
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#if defined(__x86_64__)
#if defined(__clang__)
#pragma clang attribute push(                                                  \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"))),    \
    apply_to = function)
#else
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")
#endif
#endif

#define RIVET_RECURRENT_ENTRY runDirectionAvx512
// 16-float vectors: a step's GEMM and gates at twice the AVX2 width.
#define RIVET_WIDEST_LANES 16
#include "kernels/cpu/RecurrentSteps.inc"

#if defined(__x86_64__) && defined(__clang__)
#pragma clang attribute pop
#endif
