//===- HostIsa.h - The instruction set of our per-ISA kernels --*- C++ -*-===//
//
// Kernels compiled once per instruction set (RecurrentSteps, SmallGemm,
// DenseGemv, the attention tasks) pick their compilation by hostIsa().
//
//===----------------------------------------------------------------------===//
#pragma once

namespace rivet::cpu {

/// The instruction sets our per-ISA kernel compilations target: AVX-512
/// means F, BW, DQ and VL; AVX2 comes with FMA.
enum class CpuIsa { Base, Avx2, Avx512 };

/// The best of them this CPU runs, at most $RIVET_MAX_CPU_ISA ("avx2" or
/// "base"): an AVX-512 host then times and tests the other compilations
/// as an AVX2-only machine runs them.
CpuIsa hostIsa();

} // namespace rivet::cpu

// RIVET_BEGIN_TARGET_AVX2 / RIVET_BEGIN_TARGET_AVX512 ... RIVET_END_TARGET
// bracket code compiled for one instruction set inside a file compiled for
// the baseline (a kernel's loops included once per set, each in a namespace
// of its own). AVX2 comes with FMA; AVX-512 means F, BW, DQ and VL.
// (_Pragma takes one string literal: these lines stay unbroken.)
// clang-format off
#if defined(__clang__)
#define RIVET_BEGIN_TARGET_AVX2 _Pragma("clang attribute push(__attribute__((target(\"avx2,fma\"))), apply_to = function)")
#define RIVET_BEGIN_TARGET_AVX512 _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx512bw,avx512dq,avx512vl,avx2,fma\"))), apply_to = function)")
#define RIVET_END_TARGET _Pragma("clang attribute pop")
#else
#define RIVET_BEGIN_TARGET_AVX2 _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma\")")
#define RIVET_BEGIN_TARGET_AVX512 _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512bw,avx512dq,avx512vl,avx2,fma\")")
#define RIVET_END_TARGET _Pragma("GCC pop_options")
#endif
// clang-format on
