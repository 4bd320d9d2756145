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

namespace {

struct CheckableFeature {
  const char *name;
  bool (*onHost)();
};

// __builtin_cpu_supports needs a string literal, hence one function each.
#if defined(__x86_64__)
#define RIVET_RVX_FEATURE(Name)                                                \
  {Name, [] { return (bool)__builtin_cpu_supports(Name); }},
#else
#define RIVET_RVX_FEATURE(Name)
#endif
const CheckableFeature Features[] = {
    RIVET_RVX_FEATURE("sse2") RIVET_RVX_FEATURE("sse3") RIVET_RVX_FEATURE(
        "ssse3") RIVET_RVX_FEATURE("sse4.1") RIVET_RVX_FEATURE("sse4.2")
        RIVET_RVX_FEATURE("popcnt") RIVET_RVX_FEATURE("avx") RIVET_RVX_FEATURE(
            "avx2") RIVET_RVX_FEATURE("fma") RIVET_RVX_FEATURE("bmi")
            RIVET_RVX_FEATURE("bmi2") RIVET_RVX_FEATURE("avx512f")
                RIVET_RVX_FEATURE("avx512bw") RIVET_RVX_FEATURE("avx512cd")
                    RIVET_RVX_FEATURE("avx512dq") RIVET_RVX_FEATURE("avx512vl")
                        RIVET_RVX_FEATURE("avx512vnni")
                            RIVET_RVX_FEATURE("avx512bf16"){nullptr, nullptr}};
#undef RIVET_RVX_FEATURE

} // namespace

std::vector<std::string> checkableCpuFeatures() {
  std::vector<std::string> Names;
  for (const CheckableFeature *F = Features; F->name; ++F)
    Names.push_back(F->name);
  return Names;
}

std::vector<std::string> featuresOfCpuLevel(std::string_view Cpu) {
  // The x86-64 psABI's micro-architecture levels, cumulative.
  static const char *const V2[] = {"sse3", "ssse3", "sse4.1", "sse4.2",
                                   "popcnt"};
  static const char *const V3[] = {"avx", "avx2", "fma", "bmi", "bmi2"};
  static const char *const V4[] = {"avx512f", "avx512bw", "avx512cd",
                                   "avx512dq", "avx512vl"};
  int Level = Cpu == "x86-64-v2"   ? 2
              : Cpu == "x86-64-v3" ? 3
              : Cpu == "x86-64-v4" ? 4
                                   : 0;
  std::vector<std::string> R;
  if (Level >= 2)
    R.insert(R.end(), std::begin(V2), std::end(V2));
  if (Level >= 3)
    R.insert(R.end(), std::begin(V3), std::end(V3));
  if (Level >= 4)
    R.insert(R.end(), std::begin(V4), std::end(V4));
  return R;
}

bool hostHasCpuFeature(std::string_view Feature) {
  for (const CheckableFeature *F = Features; F->name; ++F)
    if (Feature == F->name)
      return F->onHost();
  fail("unknown CPU feature '{}'", Feature);
}

} // namespace rivet::vm::rvx
