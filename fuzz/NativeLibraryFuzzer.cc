//===- NativeLibraryFuzzer.cc - libFuzzer target for native code checks ---===//
//
// Feeds arbitrary bytes to NativeLibrary::validate, the checks a shared
// object of generated kernels passes before dlopen sees it. Malformed input
// must fail with rivet::Error and nothing else. (load itself is not fuzzed:
// it runs the system loader on whatever passes validation.)
//
//===----------------------------------------------------------------------===//
#include "kernels/Error.h"
#include "vm/NativeLibrary.h"

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  try {
    rivet::vm::NativeLibrary::validate(std::span<const uint8_t>(Data, Size),
                                       "fuzz input");
  } catch (const rivet::Error &) {
  }
  return 0;
}
