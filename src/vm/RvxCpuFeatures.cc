//===- RvxCpuFeatures.cc - Host CPU features for .rvx loading -------------===//
//
// A .rvx header lists the CPU features its native code needs; the loader
// refuses the file on a CPU that lacks one. Names follow GCC/LLVM
// (__builtin_cpu_supports) so codegen can write what LLVM reports.
//
//===----------------------------------------------------------------------===//
#include "vm/RvxFormat.h"

#include "kernels/Error.h"

namespace rivet::vm::rvx {

bool hostHasCpuFeature(std::string_view Feature) {
#if defined(__x86_64__)
  // __builtin_cpu_supports needs a string literal, hence the table.
#define RIVET_RVX_FEATURE(Name)                                                \
  if (Feature == Name)                                                         \
    return __builtin_cpu_supports(Name);
  RIVET_RVX_FEATURE("sse2")
  RIVET_RVX_FEATURE("sse3")
  RIVET_RVX_FEATURE("ssse3")
  RIVET_RVX_FEATURE("sse4.1")
  RIVET_RVX_FEATURE("sse4.2")
  RIVET_RVX_FEATURE("popcnt")
  RIVET_RVX_FEATURE("avx")
  RIVET_RVX_FEATURE("avx2")
  RIVET_RVX_FEATURE("fma")
  RIVET_RVX_FEATURE("bmi")
  RIVET_RVX_FEATURE("bmi2")
  RIVET_RVX_FEATURE("avx512f")
  RIVET_RVX_FEATURE("avx512bw")
  RIVET_RVX_FEATURE("avx512cd")
  RIVET_RVX_FEATURE("avx512dq")
  RIVET_RVX_FEATURE("avx512vl")
  RIVET_RVX_FEATURE("avx512vnni")
  RIVET_RVX_FEATURE("avx512bf16")
#undef RIVET_RVX_FEATURE
#endif
  fail("unknown CPU feature '{}'", Feature);
}

} // namespace rivet::vm::rvx
