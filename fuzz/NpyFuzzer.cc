//===- NpyFuzzer.cc - libFuzzer target for the .npy reader ----------------===//
//
// Reads arbitrary bytes as a .npy file (numbers, bools, NumPy unicode
// strings, C or Fortran order). Malformed input must fail with rivet::Error
// and nothing else; a file that reads must write and read back to the same
// tensor (bit for bit: NaN payloads included, strings as text).
//
//===----------------------------------------------------------------------===//
#include "kernels/Error.h"
#include "kernels/Npy.h"
#include "kernels/StringTable.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace rivet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  Tensor T;
  try {
    T = readNpyBytes(Data, Size, "fuzz.npy");
  } catch (const Error &) {
    return 0;
  }
  std::vector<uint8_t> Bytes;
  try {
    Bytes = npyBytes(T);
  } catch (const Error &) {
    return 0; // a dtype .npy cannot hold is refused, not crashed on
  }
  Tensor Back = readNpyBytes(Bytes.data(), Bytes.size(), "again.npy");
  bool Same = Back.dtype() == T.dtype() && Back.shape() == T.shape();
  if (Same && isString(T.dtype()))
    Same = stringValues(Back) == stringValues(T);
  else if (Same && T.nbytes())
    Same = std::memcmp(Back.rawData(), T.rawData(), T.nbytes()) == 0;
  if (!Same) {
    std::fprintf(stderr, "NpyFuzzer: %s does not read back the same\n",
                 T.typeString().c_str());
    std::abort();
  }
  return 0;
}
