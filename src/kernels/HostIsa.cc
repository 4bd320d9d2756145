//===- HostIsa.cc - The instruction set of our per-ISA kernels ------------===//
#include "kernels/HostIsa.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace rivet::cpu {

namespace {
CpuIsa detectedIsa() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    return CpuIsa::Base;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return CpuIsa::Avx512;
  return CpuIsa::Avx2;
#else
  return CpuIsa::Base;
#endif
}
} // namespace

CpuIsa hostIsa() {
  static const CpuIsa Isa = [] {
    const char *Cap = std::getenv("RIVET_MAX_CPU_ISA");
    std::string_view C = Cap ? Cap : "";
    CpuIsa Max = C == "avx2"   ? CpuIsa::Avx2
                 : C == "base" ? CpuIsa::Base
                               : CpuIsa::Avx512;
    return std::min(detectedIsa(), Max);
  }();
  return Isa;
}

} // namespace rivet::cpu
