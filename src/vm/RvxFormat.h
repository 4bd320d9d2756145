//===- RvxFormat.h - Constants and layout of the .rvx file ------*- C++ -*-===//
//
// The numbers that define the .rvx file (docs/executable-format.md): magic,
// format version, section kinds, alignment and the sanity limits a reader
// enforces; plus the CRC-32C checksum and the CPU-feature query that the
// loader needs. Internal to the runtime (src/vm); not a public header.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rivet::vm::rvx {

/// The first eight bytes of every .rvx file.
inline constexpr char kMagic[8] = {'R', 'I', 'V', 'E', 'T', 'R', 'V', 'X'};
/// The newest format version; this runtime reads kOldestFormatVersion to
/// kFormatVersion (version 1: no native code section; version 2: native
/// kernels without broadcast sizes; version 3: without empty-reduction
/// checks; version 4: without CUDA code; version 5: without List-primitive
/// kernel entries; version 6: without main's result types; version 7:
/// without AllocListTensor) and writes the oldest of 2 to 8 that holds the
/// executable, so files that do not need the newer fields stay readable by
/// older runtimes.
inline constexpr uint32_t kFormatVersion = 8;
/// Native kernels' broadcast sizes, and the header checksum covering the
/// version field, arrived in version 3.
inline constexpr uint32_t kBroadcastSizesVersion = 3;
/// Native kernels' empty-reduction checks arrived in version 4.
inline constexpr uint32_t kEmptyReductionsVersion = 4;
/// The CUDA code section and the "cuda" target arrived in version 5.
inline constexpr uint32_t kCudaCodeVersion = 5;
/// Kernel entries of kind ListPrimitive arrived in version 6.
inline constexpr uint32_t kListPrimitivesVersion = 6;
/// The types of main's results (in the entry section) arrived in version 7.
inline constexpr uint32_t kMainResultsVersion = 7;
/// The AllocListTensor instruction arrived in version 8.
inline constexpr uint32_t kListTensorsVersion = 8;
inline constexpr uint32_t kOldestFormatVersion = 1;
/// Written into the header's producer field.
inline constexpr const char *kProducer = "rivet 0.1.0";
/// The header's target: "cpu", or "cuda" for a file with CUDA code (which
/// needs a GPU to run).
inline constexpr const char *kTargetCpu = "cpu";
inline constexpr const char *kTargetCuda = "cuda";

/// Section offsets and constant data offsets are multiples of this.
inline constexpr uint64_t kAlignment = 64;

/// Size of the fixed part of the header (magic .. file size).
inline constexpr size_t kFixedHeaderSize = 32;
/// Byte offset of the version field; of the header checksum field, and
/// where the bytes it covers start (everything after it up to the end of
/// the section table; from version 3 on preceded by the version field).
inline constexpr size_t kVersionOffset = 8;
inline constexpr size_t kHeaderChecksumOffset = 12;
inline constexpr size_t kHeaderChecksumStart = 16;
/// One section table entry: u32 kind, u32 checksum, u64 offset, u64 size.
inline constexpr size_t kSectionEntrySize = 24;
/// One encoded instruction: u8 opcode, 3 zero bytes, u32 dst a b c d, i64 imm.
inline constexpr size_t kInstructionSize = 32;

/// Section kinds. The numbering is part of the format: only append.
enum class SectionKind : uint32_t {
  Strings = 1,
  Constants = 2,
  Functions = 3,
  Kernels = 4,
  Constructors = 5,
  Entry = 6,
  /// Generated code (version 2): the shared object of the CPU kernels and
  /// the native kernel table. Optional; refused in a version 1 file.
  NativeCode = 7,
  /// GPU code (version 5): cubins and PTX of the CUDA kernels, and which
  /// native kernels run on the GPU. Optional; needs the native code section.
  CudaCode = 8,
};
inline constexpr uint32_t kFirstSectionKind = 1;
/// The last section every file has, and the last kind there is.
inline constexpr uint32_t kLastRequiredSectionKind = 6;
inline constexpr uint32_t kLastSectionKind = 8;

/// "strings", "constants", ...; "kind N" for an unknown kind.
std::string sectionName(uint32_t Kind);

/// Sanity limits: anything larger is refused as corrupt.
inline constexpr uint32_t kMaxRank = 64;
inline constexpr uint32_t kMaxRegisters = 1u << 24;
inline constexpr uint32_t kMaxShortString = 4096; // producer, target, feature
inline constexpr uint32_t kMaxFeatures = 256;
inline constexpr uint32_t kMaxSections = 64;
inline constexpr uint32_t kMaxSymbol = 256;           // native kernel symbols
inline constexpr uint32_t kMaxKernelBuffers = 4096;   // per native kernel
inline constexpr uint32_t kMaxBroadcastOperands = 64; // per broadcast size
inline constexpr uint32_t kMaxEmptyReductions = 4096; // per native kernel
inline constexpr uint32_t kMaxCudaImages = 16;

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, initial value and
/// final xor 0xFFFFFFFF); crc32c("123456789") == 0xE3069283.
uint32_t crc32c(const uint8_t *Data, size_t Size);

/// The header checksum of a version-Version file whose header is the first
/// HeaderSize bytes of Data. Version 3 covers the version field too: two
/// versions a reader parses alike for some files (2 and 3 without
/// broadcast sizes) must not let a damaged version number load.
inline uint32_t headerChecksum(const uint8_t *Data, size_t HeaderSize,
                               uint32_t Version) {
  if (Version < kBroadcastSizesVersion)
    return crc32c(Data + kHeaderChecksumStart,
                  HeaderSize - kHeaderChecksumStart);
  std::vector<uint8_t> Covered(Data + kVersionOffset,
                               Data + kVersionOffset + 4);
  Covered.insert(Covered.end(), Data + kHeaderChecksumStart, Data + HeaderSize);
  return crc32c(Covered.data(), Covered.size());
}

/// Whether the host CPU has Feature (names as GCC's __builtin_cpu_supports:
/// "sse4.2", "avx2", "avx512f", ...). Throws rivet::Error for a name this
/// runtime does not know.
bool hostHasCpuFeature(std::string_view Feature);
/// The features hostHasCpuFeature can check (GCC/LLVM names), which a
/// .rvx may therefore require.
std::vector<std::string> checkableCpuFeatures();
/// The features an x86-64 psABI level ("x86-64-v2" to "x86-64-v4") implies;
/// none for another CPU name (the runtime has no LLVM to ask).
std::vector<std::string> featuresOfCpuLevel(std::string_view Cpu);

} // namespace rivet::vm::rvx
