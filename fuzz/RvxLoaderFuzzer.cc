//===- RvxLoaderFuzzer.cc - libFuzzer target for the .rvx loader ----------===//
//
// Feeds arbitrary bytes to Executable::deserialize twice: as they are, and
// with the header and section checksums recomputed, so that mutations get
// past the CRCs into the section parsers and the bytecode checks. Malformed
// input must fail with rivet::Error and nothing else; input that loads must
// serialize, load again and serialize to the same bytes.
//
//===----------------------------------------------------------------------===//
#include "kernels/Error.h"
#include "vm/Executable.h"
#include "vm/RvxFormat.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace rivet;
using namespace rivet::vm;

namespace {

[[noreturn]] void bug(const char *What, const std::string &Detail) {
  std::fprintf(stderr, "RvxLoaderFuzzer: %s: %s\n", What, Detail.c_str());
  std::abort();
}

template <typename T>
bool readAt(const std::vector<uint8_t> &B, size_t Off, T &V) {
  if (Off > B.size() || B.size() - Off < sizeof(T))
    return false;
  std::memcpy(&V, B.data() + Off, sizeof(T));
  return true;
}

/// Rewrites the section checksums and then the header checksum of B where
/// the layout allows (docs/executable-format.md); leaves anything it cannot
/// parse alone.
void repairChecksums(std::vector<uint8_t> &B) {
  uint32_t HeaderSize;
  if (!readAt(B, 16, HeaderSize) || HeaderSize < 16 || HeaderSize > B.size())
    return;
  size_t Pos = 32;
  uint32_t Len;
  for (int I = 0; I < 2; ++I) { // producer, target
    if (!readAt(B, Pos, Len) || Len > B.size())
      return;
    Pos += 4 + (size_t)Len;
  }
  uint32_t NumFeatures;
  if (!readAt(B, Pos, NumFeatures) || NumFeatures > 1024)
    return;
  Pos += 4;
  for (uint32_t I = 0; I < NumFeatures; ++I) {
    if (!readAt(B, Pos, Len) || Len > B.size())
      return;
    Pos += 4 + (size_t)Len;
  }
  uint32_t NumSections;
  if (!readAt(B, Pos, NumSections) || NumSections > 64)
    return;
  Pos += 4;
  for (uint32_t I = 0; I < NumSections; ++I, Pos += rvx::kSectionEntrySize) {
    uint64_t Offset, Size;
    if (!readAt(B, Pos + 8, Offset) || !readAt(B, Pos + 16, Size))
      return;
    if (Offset > B.size() || Size > B.size() - Offset)
      continue;
    uint32_t Crc = rvx::crc32c(B.data() + Offset, Size);
    if (Pos + 8 <= B.size())
      std::memcpy(B.data() + Pos + 4, &Crc, 4);
  }
  uint32_t Version = 0;
  readAt(B, rvx::kVersionOffset, Version);
  uint32_t Crc = rvx::headerChecksum(B.data(), HeaderSize, Version);
  std::memcpy(B.data() + 12, &Crc, 4);
}

void loadOne(const uint8_t *Data, size_t Size) {
  std::shared_ptr<Executable> Exe;
  try {
    Exe = Executable::deserialize(Data, Size, "fuzz.rvx");
  } catch (const Error &) {
    return; // refused, reported properly
  }
  // Anything other than rivet::Error escapes and is reported by libFuzzer.
  std::vector<uint8_t> Bytes;
  std::shared_ptr<Executable> Again;
  try {
    (void)Exe->disassemble();
    Bytes = Exe->serialize();
    Again = Executable::deserialize(Bytes.data(), Bytes.size(), "again.rvx");
  } catch (const Error &E) {
    bug("a loaded executable does not save and load again", E.what());
  }
  if (Again->serialize() != Bytes)
    bug("save(load(save(x))) differs from save(x)", "");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  loadOne(Data, Size);
  std::vector<uint8_t> Repaired(Data, Data + Size);
  repairChecksums(Repaired);
  if (Size && std::memcmp(Repaired.data(), Data, Size)) {
    // An exactly sized heap copy, so that ASan catches reads past the end.
    std::unique_ptr<uint8_t[]> Copy(new uint8_t[Size]);
    std::memcpy(Copy.get(), Repaired.data(), Size);
    loadOne(Copy.get(), Size);
  }
  return 0;
}
