//===- RvxChecksum.cc - CRC-32C of .rvx sections --------------------------===//
//
// Software CRC-32C, slicing by eight (about 1.5 GB/s), with the SSE4.2 crc32
// instruction when the CPU has it (several GB/s): the loader checksums every
// byte of the weights, so this is on the load path of big models.
//
//===----------------------------------------------------------------------===//
#include "vm/RvxFormat.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace rivet::vm::rvx {

namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables makeTables() {
  Tables T{};
  for (uint32_t I = 0; I < 256; ++I) {
    uint32_t C = I;
    for (int K = 0; K < 8; ++K)
      C = (C & 1) ? (C >> 1) ^ kPolynomial : C >> 1;
    T[0][I] = C;
  }
  for (uint32_t I = 0; I < 256; ++I)
    for (int S = 1; S < 8; ++S)
      T[S][I] = (T[S - 1][I] >> 8) ^ T[0][T[S - 1][I] & 0xFF];
  return T;
}

constexpr Tables kTables = makeTables();

uint32_t crcSoftware(uint32_t C, const uint8_t *P, size_t N) {
  while (N >= 8) {
    uint64_t W;
    std::memcpy(&W, P, 8); // the format is little-endian, so is the host
    W ^= C;
    C = kTables[7][W & 0xFF] ^ kTables[6][(W >> 8) & 0xFF] ^
        kTables[5][(W >> 16) & 0xFF] ^ kTables[4][(W >> 24) & 0xFF] ^
        kTables[3][(W >> 32) & 0xFF] ^ kTables[2][(W >> 40) & 0xFF] ^
        kTables[1][(W >> 48) & 0xFF] ^ kTables[0][W >> 56];
    P += 8;
    N -= 8;
  }
  while (N--)
    C = (C >> 8) ^ kTables[0][(C ^ *P++) & 0xFF];
  return C;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t
crcHardware(uint32_t C, const uint8_t *P, size_t N) {
  uint64_t C64 = C;
  while (N >= 8) {
    uint64_t W;
    std::memcpy(&W, P, 8);
    C64 = _mm_crc32_u64(C64, W);
    P += 8;
    N -= 8;
  }
  C = (uint32_t)C64;
  while (N--)
    C = _mm_crc32_u8(C, *P++);
  return C;
}

bool haveSse42() {
  static const bool Have = __builtin_cpu_supports("sse4.2");
  return Have;
}
#endif

} // namespace

uint32_t crc32c(const uint8_t *Data, size_t Size) {
  uint32_t C = 0xFFFFFFFFu;
#if defined(__x86_64__)
  if (haveSse42())
    return ~crcHardware(C, Data, Size);
#endif
  return ~crcSoftware(C, Data, Size);
}

} // namespace rivet::vm::rvx
