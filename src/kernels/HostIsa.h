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
