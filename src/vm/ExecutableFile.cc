//===- ExecutableFile.cc - The .rvx file: save and load
//---------------------===//
//
// Writes an Executable as one self-contained .rvx file and reads it back,
// validating every byte before use (docs/executable-format.md). load()
// memory-maps the file; constants are tensors over the mapping, not copies.
//
//===----------------------------------------------------------------------===//
#include "kernels/OutputFiles.h"
#include "kernels/RegularFile.h"
#include "kernels/StringTable.h"
#include "vm/Executable.h"

#include "vm/NativeLibrary.h"
#include "vm/Object.h"
#include "vm/RvxBytes.h"
#include "vm/RvxFormat.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rivet::vm {

using namespace rvx;

std::string rvx::sectionName(uint32_t Kind) {
  switch ((SectionKind)Kind) {
  case SectionKind::Strings: return "strings";
  case SectionKind::Constants: return "constants";
  case SectionKind::Functions: return "functions";
  case SectionKind::Kernels: return "kernels";
  case SectionKind::Constructors: return "constructors";
  case SectionKind::Entry: return "entry";
  case SectionKind::NativeCode: return "native code";
  case SectionKind::CudaCode: return "CUDA code";
  }
  return "kind " + std::to_string(Kind);
}

namespace {

uint64_t alignUp(uint64_t V, uint64_t A) { return (V + A - 1) / A * A; }

//===----------------------------------------------------------------------===//
// Writing. Each section is encoded on its own, then the header and section
// table are written and the sections placed at 64-byte aligned offsets.
//===----------------------------------------------------------------------===//

/// Strings: u32 count, then each string.
std::vector<uint8_t> encodeStrings(const Executable &E) {
  std::vector<uint8_t> Out;
  ByteWriter W(Out);
  W.pod<uint32_t>((uint32_t)E.strings.size());
  for (const std::string &S : E.strings)
    W.str(S);
  return Out;
}

/// Constants: u32 count, one descriptor per constant (u8 dtype, 3 zero
/// bytes, u32 rank, u64 data offset, u64 byte size, i64 dims[rank]), then
/// the data of each at a 64-byte aligned offset from the section start.
std::vector<uint8_t> encodeConstants(const Executable &E) {
  std::vector<uint8_t> Out;
  ByteWriter W(Out);
  W.pod<uint32_t>((uint32_t)E.constants.size());
  size_t DescEnd = 4;
  for (const Tensor &T : E.constants) {
    if (!T.defined() || !T.hasData())
      fail("cannot save constant without data");
    DescEnd += 24 + 8 * T.shape().size();
  }
  // String constants are saved as their text (StringTable.h), everything
  // else as its bytes.
  std::vector<std::vector<uint8_t>> Text(E.constants.size());
  auto dataSize = [&](size_t I) {
    return isString(E.constants[I].dtype()) ? Text[I].size()
                                            : E.constants[I].nbytes();
  };
  std::vector<uint64_t> Offsets;
  uint64_t Off = alignUp(DescEnd, kAlignment);
  for (size_t I = 0; I < E.constants.size(); ++I) {
    if (isString(E.constants[I].dtype()))
      Text[I] = encodeStrings(E.constants[I]);
    Offsets.push_back(Off);
    Off = alignUp(Off + dataSize(I), kAlignment);
  }
  for (size_t I = 0; I < E.constants.size(); ++I) {
    const Tensor &T = E.constants[I];
    W.pod<uint8_t>((uint8_t)T.dtype());
    W.pod<uint8_t>(0);
    W.pod<uint16_t>(0);
    W.pod<uint32_t>((uint32_t)T.rank());
    W.pod<uint64_t>(Offsets[I]);
    W.pod<uint64_t>(dataSize(I));
    for (int64_t D : T.shape())
      W.pod<int64_t>(D);
  }
  for (size_t I = 0; I < E.constants.size(); ++I) {
    const Tensor &T = E.constants[I];
    W.padTo(kAlignment);
    if (isString(T.dtype()))
      W.bytes(Text[I].data(), Text[I].size());
    else if (T.nbytes())
      W.bytes(T.rawData(), T.nbytes());
  }
  return Out;
}

/// Functions: u32 count; each: name, u32 params, u32 registers, u32
/// instruction count, u32 pool size, u32 shapes size, the instructions (32
/// bytes each), the pool (u32 each), the shapes (i64 each).
std::vector<uint8_t> encodeFunctions(const Executable &E) {
  std::vector<uint8_t> Out;
  ByteWriter W(Out);
  W.pod<uint32_t>((uint32_t)E.functions.size());
  for (const VMFunction &F : E.functions) {
    W.str(F.name);
    W.pod<uint32_t>(F.numParams);
    W.pod<uint32_t>(F.numRegisters);
    W.pod<uint32_t>((uint32_t)F.code.size());
    W.pod<uint32_t>((uint32_t)F.pool.size());
    W.pod<uint32_t>((uint32_t)F.shapes.size());
    for (const Instruction &I : F.code) {
      W.pod<uint8_t>((uint8_t)I.op);
      W.pod<uint8_t>(0);
      W.pod<uint16_t>(0);
      W.pod<uint32_t>(I.dst);
      W.pod<uint32_t>(I.a);
      W.pod<uint32_t>(I.b);
      W.pod<uint32_t>(I.c);
      W.pod<uint32_t>(I.d);
      W.pod<int64_t>(I.imm);
    }
    for (uint32_t P : F.pool)
      W.pod<uint32_t>(P);
    for (int64_t S : F.shapes)
      W.pod<int64_t>(S);
  }
  return Out;
}

/// Kernels: u32 count; each: u8 kind, op name, u32 attribute bytes, the
/// attributes as Attrs::serialize writes them.
std::vector<uint8_t> encodeKernels(const Executable &E) {
  std::vector<uint8_t> Out;
  ByteWriter W(Out);
  W.pod<uint32_t>((uint32_t)E.kernels.size());
  for (const KernelEntry &K : E.kernels) {
    W.pod<uint8_t>((uint8_t)K.kind);
    W.str(K.op);
    std::vector<uint8_t> A;
    K.attrs.serialize(A);
    W.pod<uint32_t>((uint32_t)A.size());
    W.bytes(A.data(), A.size());
  }
  return Out;
}

/// Constructors: u32 count; each: ADT name, constructor name, u32 arity.
std::vector<uint8_t> encodeConstructors(const Executable &E) {
  std::vector<uint8_t> Out;
  ByteWriter W(Out);
  W.pod<uint32_t>((uint32_t)E.constructors.size());
  for (const ConstructorInfo &C : E.constructors) {
    W.str(C.adt);
    W.str(C.name);
    W.pod<uint32_t>(C.arity);
  }
  return Out;
}

/// A parameter or result of main: name, u8 isTensor, u8 dtype, u8 hasDims,
/// u32 rank, i64 dims[rank], type text.
void writeParams(ByteWriter &W, const std::vector<ParamInfo> &Ps) {
  W.pod<uint32_t>((uint32_t)Ps.size());
  for (const ParamInfo &P : Ps) {
    W.str(P.name);
    W.pod<uint8_t>(P.isTensor ? 1 : 0);
    W.pod<uint8_t>((uint8_t)P.dtype);
    W.pod<uint8_t>(P.dims ? 1 : 0);
    W.pod<uint32_t>(P.dims ? (uint32_t)P.dims->size() : 0);
    if (P.dims)
      for (int64_t D : *P.dims)
        W.pod<int64_t>(D);
    W.str(P.typeText);
  }
}

/// Entry: u32 param count and the params; u32 output-name count and the
/// names; in version 7, u32 result count and the results (as params).
std::vector<uint8_t> encodeEntry(const Executable &E, uint32_t Version) {
  std::vector<uint8_t> Out;
  ByteWriter W(Out);
  writeParams(W, E.mainParams);
  W.pod<uint32_t>((uint32_t)E.outputNames.size());
  for (const std::string &N : E.outputNames)
    W.str(N);
  if (Version >= kMainResultsVersion)
    writeParams(W, E.mainResults);
  return Out;
}

/// The oldest format version that holds E's native kernels and its kernel
/// table.
uint32_t formatVersionFor(const Executable &E) {
  uint32_t V = E.cudaCode ? kCudaCodeVersion : 2;
  for (const NativeKernel &K : E.nativeKernels) {
    if (!K.emptyReductions.empty())
      V = std::max(V, kEmptyReductionsVersion);
    if (!K.broadcastSizes.empty())
      V = std::max(V, kBroadcastSizesVersion);
  }
  for (const KernelEntry &K : E.kernels)
    if (K.kind == KernelEntry::Kind::ListPrimitive)
      V = std::max(V, kListPrimitivesVersion);
  if (!E.mainResults.empty())
    V = std::max(V, kMainResultsVersion);
  for (const VMFunction &F : E.functions)
    for (const Instruction &I : F.code)
      if (I.op == Opcode::AllocListTensor)
        V = std::max(V, kListTensorsVersion);
  return V;
}

void writeExtents(ByteWriter &W, const std::vector<int64_t> &Dims) {
  W.pod<uint32_t>((uint32_t)Dims.size());
  for (int64_t D : Dims)
    W.pod<int64_t>(D);
}

/// Native code: u32 ELF machine, triple, cpu, features; u32 kernel count;
/// each kernel: symbol, u32 buffer count, each buffer (u8 dtype, 3 zero
/// bytes, u32 rank, i64 dims[rank]), u32 size-parameter count, each (u32
/// buffer, u32 axis), in version 3 u32 broadcast-size count, each (u32
/// operand count, i64 operands), in version 4 u32 empty-reduction count,
/// each (op, u32 count, i64 reduced extents, u32 count, i64 kept
/// extents); then u64 offset and u64 size of the shared
/// object, zero padding, and the shared object at that 64-byte aligned
/// offset from the section start, ending the section.
std::vector<uint8_t> encodeNativeCode(const Executable &E, uint32_t Version) {
  const NativeCodeInfo &N = *E.nativeCode;
  std::vector<uint8_t> Out;
  ByteWriter W(Out);
  W.pod<uint32_t>(N.elfMachine);
  W.str(N.triple);
  W.str(N.cpu);
  W.str(N.features);
  W.pod<uint32_t>((uint32_t)E.nativeKernels.size());
  for (const NativeKernel &K : E.nativeKernels) {
    W.str(K.symbol);
    W.pod<uint32_t>((uint32_t)K.buffers.size());
    for (const NativeKernel::Buffer &B : K.buffers) {
      W.pod<uint8_t>((uint8_t)B.dtype);
      W.pod<uint8_t>(0);
      W.pod<uint16_t>(0);
      W.pod<uint32_t>((uint32_t)B.dims.size());
      for (int64_t D : B.dims)
        W.pod<int64_t>(D);
    }
    W.pod<uint32_t>((uint32_t)K.sizeSources.size());
    for (const NativeKernel::SizeSource &S : K.sizeSources) {
      W.pod<uint32_t>(S.buffer);
      W.pod<uint32_t>(S.axis);
    }
    if (Version < kBroadcastSizesVersion)
      continue;
    W.pod<uint32_t>((uint32_t)K.broadcastSizes.size());
    for (const NativeKernel::BroadcastSize &B : K.broadcastSizes)
      writeExtents(W, B.operands);
    if (Version < kEmptyReductionsVersion)
      continue;
    W.pod<uint32_t>((uint32_t)K.emptyReductions.size());
    for (const NativeKernel::EmptyReduction &R : K.emptyReductions) {
      W.str(R.op);
      writeExtents(W, R.reduced);
      writeExtents(W, R.kept);
    }
  }
  uint64_t Offset = alignUp(Out.size() + 16, kAlignment);
  W.pod<uint64_t>(Offset);
  W.pod<uint64_t>(N.sharedObject.size());
  W.padTo(kAlignment);
  W.bytes(N.sharedObject.data(), N.sharedObject.size());
  return Out;
}

/// CUDA code: u32 image count, each (arch, u8 ptx, 3 zero bytes, u64 size,
/// bytes); u32 count of native kernels on the GPU, each u32 index into the
/// native kernel table, increasing.
std::vector<uint8_t> encodeCudaCode(const Executable &E) {
  std::vector<uint8_t> Out;
  ByteWriter W(Out);
  W.pod<uint32_t>((uint32_t)E.cudaCode->images.size());
  for (const CudaCodeInfo::Image &I : E.cudaCode->images) {
    W.str(I.arch);
    W.pod<uint8_t>(I.ptx ? 1 : 0);
    W.pod<uint8_t>(0);
    W.pod<uint16_t>(0);
    W.pod<uint64_t>(I.bytes.size());
    W.bytes(I.bytes.data(), I.bytes.size());
  }
  std::vector<uint32_t> OnGpu;
  for (size_t K = 0; K < E.nativeKernels.size(); ++K)
    if (E.nativeKernels[K].device == Device::CUDA)
      OnGpu.push_back((uint32_t)K);
  W.pod<uint32_t>((uint32_t)OnGpu.size());
  for (uint32_t K : OnGpu)
    W.pod<uint32_t>(K);
  return Out;
}

//===----------------------------------------------------------------------===//
// Reading.
//===----------------------------------------------------------------------===//

struct SectionEntry {
  uint32_t kind;
  uint32_t checksum;
  uint64_t offset;
  uint64_t size;
};

/// Reads the sections of one file; everything it returns has been checked.
class Loader {
public:
  Loader(const uint8_t *Data, size_t Size, std::string What,
         std::shared_ptr<const void> Mapping)
      : Data(Data), Size(Size), What(std::move(What)),
        Mapping(std::move(Mapping)) {}

  std::shared_ptr<Executable> load();

private:
  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> Fmt, Args &&...A) const {
    throw Error(What + ": " + fmt::format(Fmt, std::forward<Args>(A)...));
  }

  void readHeader();
  ByteReader section(SectionKind K) const;
  void readStrings();
  void readConstants();
  void readFunctions();
  void readKernels();
  void readConstructors();
  void readEntry();
  void readParams(ByteReader &R, std::vector<ParamInfo> &Ps, const char *What);
  void readNativeCode();
  void readCudaCode();

  const uint8_t *Data;
  size_t Size;
  std::string What;
  std::shared_ptr<const void> Mapping;
  std::map<uint32_t, SectionEntry> Sections;
  uint32_t Version = 0;
  bool CudaTarget = false;           // the header's target is "cuda"
  std::vector<std::string> Features; // of the header
  std::shared_ptr<Executable> Exe = std::make_shared<Executable>();
};

void Loader::readHeader() {
  if (Size >= sizeof(kMagic) && std::memcmp(Data, kMagic, sizeof(kMagic)))
    error("not a .rvx file (bad magic)");
  if (Size < kFixedHeaderSize)
    error("truncated: the header needs at least {} bytes but the file has {}",
          kFixedHeaderSize, Size);
  ByteReader H(Data, Size, What + ": header");
  H.bytes(sizeof(kMagic), "magic");
  Version = H.pod<uint32_t>("format version");
  if (Version < kOldestFormatVersion || Version > kFormatVersion)
    error("format version {} is not supported (this runtime reads {} to {})",
          Version, kOldestFormatVersion, kFormatVersion);
  uint32_t Checksum = H.pod<uint32_t>("header checksum");
  uint32_t HeaderSize = H.pod<uint32_t>("header size");
  if (HeaderSize < kFixedHeaderSize + 16)
    error("header size {} is too small", HeaderSize);
  if (HeaderSize > Size)
    error("truncated: the header ends at byte {} but the file has {}",
          HeaderSize, Size);
  if (headerChecksum(Data, HeaderSize, Version) != Checksum)
    error("header checksum mismatch");
  // Everything below is covered by the header checksum; the checks guard
  // against a file that was written wrong, not against bit flips.
  H = ByteReader(Data, HeaderSize, What + ": header");
  H.bytes(20, "magic, version, checksum and header size");
  uint32_t Flags = H.pod<uint32_t>("flags");
  if (Flags)
    error("unknown header flags {:#x}", Flags);
  uint64_t FileSize = H.pod<uint64_t>("file size");
  std::string Producer = H.str("producer", kMaxShortString);
  std::string Target = H.str("target", kMaxShortString);
  CudaTarget = Target == kTargetCuda && Version >= kCudaCodeVersion;
  if (Target == kTargetCuda && !CudaTarget)
    error("the file targets 'cuda', which needs format version {} (this file "
          "has version {})",
          kCudaCodeVersion, Version);
  if (Target != kTargetCpu && !CudaTarget)
    error("the file targets '{}' but this runtime runs only '{}' and '{}'",
          Target, kTargetCpu, kTargetCuda);
  uint32_t NumFeatures = H.count(4, "CPU feature count");
  if (NumFeatures > kMaxFeatures)
    error("{} CPU features listed (at most {})", NumFeatures, kMaxFeatures);
  for (uint32_t I = 0; I < NumFeatures; ++I) {
    std::string F = H.str("CPU feature", kMaxShortString);
    bool Have;
    try {
      Have = hostHasCpuFeature(F);
    } catch (const Error &E) {
      error("the code needs {}, which this runtime cannot check (produced by "
            "'{}')",
            E.what(), Producer);
    }
    if (!Have)
      error("the code needs CPU feature '{}', which this CPU does not have", F);
    Features.push_back(std::move(F));
  }
  uint32_t NumSections = H.count(kSectionEntrySize, "section count");
  if (NumSections > kMaxSections)
    error("{} sections (at most {})", NumSections, kMaxSections);
  std::vector<SectionEntry> Table;
  for (uint32_t I = 0; I < NumSections; ++I) {
    SectionEntry S;
    S.kind = H.pod<uint32_t>("section kind");
    S.checksum = H.pod<uint32_t>("section checksum");
    S.offset = H.pod<uint64_t>("section offset");
    S.size = H.pod<uint64_t>("section size");
    std::string Name = sectionName(S.kind);
    if (S.kind < kFirstSectionKind || S.kind > kLastSectionKind)
      error("unknown section {}", Name);
    if (S.kind == (uint32_t)SectionKind::CudaCode && Version < kCudaCodeVersion)
      error("section 'CUDA code' in a version {} file (CUDA code needs "
            "version {})",
            Version, kCudaCodeVersion);
    if (S.kind == (uint32_t)SectionKind::NativeCode && Version < 2)
      error("section 'native code' in a version {} file (native code needs "
            "version 2)",
            Version);
    if (Sections.count(S.kind))
      error("section '{}' appears twice", Name);
    if (S.offset % kAlignment)
      error("section '{}' offset {} is not a multiple of {}", Name, S.offset,
            kAlignment);
    if (S.offset < HeaderSize)
      error("section '{}' at byte {} overlaps the header (which ends at {})",
            Name, S.offset, HeaderSize);
    if (S.size > UINT64_MAX - S.offset)
      error("section '{}' size {} overflows", Name, S.size);
    uint64_t End = S.offset + S.size;
    if (End > Size)
      error("truncated: section '{}' ends at byte {} but the file has {}", Name,
            End, Size);
    if (End > FileSize)
      error("section '{}' ends at byte {}, past the file size {} recorded in "
            "the header",
            Name, End, FileSize);
    Sections[S.kind] = S;
    Table.push_back(S);
  }
  if (H.remaining())
    error("{} unexpected bytes at the end of the header", H.remaining());
  if (FileSize > Size)
    error("truncated: the header records {} bytes but the file has {}",
          FileSize, Size);
  if (FileSize < Size)
    error("{} unexpected bytes after the end of the file (byte {})",
          Size - FileSize, FileSize);
  std::sort(Table.begin(), Table.end(),
            [](const SectionEntry &A, const SectionEntry &B) {
              return A.offset < B.offset ||
                     (A.offset == B.offset && A.size < B.size);
            });
  for (size_t I = 1; I < Table.size(); ++I)
    if (Table[I - 1].offset + Table[I - 1].size > Table[I].offset)
      error("sections '{}' and '{}' overlap", sectionName(Table[I - 1].kind),
            sectionName(Table[I].kind));
  // Every kind but the native code is required.
  for (uint32_t K = kFirstSectionKind; K <= kLastRequiredSectionKind; ++K)
    if (!Sections.count(K))
      error("section '{}' is missing", sectionName(K));
  for (const auto &[K, S] : Sections)
    if (crc32c(Data + S.offset, S.size) != S.checksum)
      error("section '{}' checksum mismatch", sectionName(K));
}

ByteReader Loader::section(SectionKind K) const {
  const SectionEntry &S = Sections.at((uint32_t)K);
  return ByteReader(Data + S.offset, S.size,
                    What + ": section '" + sectionName((uint32_t)K) + "'");
}

void Loader::readStrings() {
  ByteReader R = section(SectionKind::Strings);
  uint32_t N = R.count(4, "string count");
  Exe->strings.reserve(N);
  for (uint32_t I = 0; I < N; ++I)
    Exe->strings.push_back(R.str("string"));
  if (R.remaining())
    R.error("{} unexpected bytes at the end", R.remaining());
}

void Loader::readConstants() {
  ByteReader R = section(SectionKind::Constants);
  uint32_t N = R.count(24, "constant count");
  struct Desc {
    DType dtype;
    Shape shape;
    uint64_t offset, nbytes;
  };
  std::vector<Desc> Descs(N);
  for (uint32_t I = 0; I < N; ++I) {
    Desc &D = Descs[I];
    uint8_t Code = R.pod<uint8_t>("constant dtype");
    if (Code > (uint8_t)kLastDType)
      R.error("constant {} has invalid dtype code {}", I, Code);
    D.dtype = (DType)Code;
    if (R.pod<uint8_t>("constant padding") ||
        R.pod<uint16_t>("constant padding"))
      R.error("constant {} has nonzero reserved bytes", I);
    uint32_t Rank = R.pod<uint32_t>("constant rank");
    if (Rank > kMaxRank)
      R.error("constant {} has rank {} (at most {})", I, Rank, kMaxRank);
    D.offset = R.pod<uint64_t>("constant data offset");
    D.nbytes = R.pod<uint64_t>("constant byte size");
    D.shape.resize(Rank);
    for (int64_t &X : D.shape) {
      X = R.pod<int64_t>("constant dims");
      if (X < 0)
        R.error("constant {} has negative extent {}", I, X);
    }
    int64_t NumEl;
    try {
      NumEl = numElements(D.shape);
    } catch (const Error &) {
      R.error("constant {} has too many elements: shape {}", I,
              shapeToString(D.shape));
    }
    if ((uint64_t)NumEl > UINT64_MAX / 8 ||
        (!isString(D.dtype) &&
         (uint64_t)NumEl * dtypeSize(D.dtype) != D.nbytes))
      R.error("constant {} of shape {} and dtype {} has {} bytes of data", I,
              shapeToString(D.shape), dtypeName(D.dtype), D.nbytes);
  }
  uint64_t DataStart = R.pos();
  uint64_t SectionSize = R.remaining() + R.pos();
  for (uint32_t I = 0; I < N; ++I) {
    const Desc &D = Descs[I];
    if (D.offset % kAlignment)
      R.error("constant {} data offset {} is not a multiple of {}", I, D.offset,
              kAlignment);
    if (D.offset < DataStart)
      R.error("constant {} data at byte {} overlaps earlier data (which ends "
              "at {})",
              I, D.offset, DataStart);
    if (D.offset > SectionSize || D.nbytes > SectionSize - D.offset)
      R.error("truncated: constant {} data ends at byte {} but the section "
              "has {}",
              I, D.offset + D.nbytes, SectionSize);
    DataStart = D.offset + D.nbytes;
  }
  const uint8_t *Base = R.data();
  Exe->constants.reserve(N);
  for (const Desc &D : Descs) {
    const uint8_t *P = Base + D.offset;
    if (isString(D.dtype)) {
      Tensor T = Tensor::empty(D.shape, D.dtype);
      decodeStrings(
          T, P, D.nbytes,
          fmt::format("{}: constant {}", What, Exe->constants.size()));
      Exe->constants.push_back(std::move(T));
    } else if (Mapping) {
      // The tensor keeps the whole mapping alive; no copy.
      std::shared_ptr<const void> Keep = Mapping;
      auto S = Storage::wrap(const_cast<uint8_t *>(P), D.nbytes,
                             [Keep]() mutable { Keep.reset(); });
      Exe->constants.emplace_back(std::move(S), 0, D.shape, D.dtype);
    } else {
      Tensor T = Tensor::empty(D.shape, D.dtype);
      if (D.nbytes)
        std::memcpy(T.rawData(), P, D.nbytes);
      Exe->constants.push_back(std::move(T));
    }
  }
}

void Loader::readConstructors() {
  ByteReader R = section(SectionKind::Constructors);
  uint32_t N = R.count(12, "constructor count");
  Exe->constructors.resize(N);
  for (ConstructorInfo &C : Exe->constructors) {
    C.adt = R.str("ADT name");
    C.name = R.str("constructor name");
    C.arity = R.pod<uint32_t>("constructor arity");
    if (C.arity > kMaxRegisters)
      R.error("constructor '{}' has arity {}", C.name, C.arity);
  }
  if (R.remaining())
    R.error("{} unexpected bytes at the end", R.remaining());
}

void Loader::readKernels() {
  ByteReader R = section(SectionKind::Kernels);
  uint32_t N = R.count(9, "kernel count");
  Exe->kernels.resize(N);
  for (uint32_t I = 0; I < N; ++I) {
    KernelEntry &K = Exe->kernels[I];
    uint8_t Kind = R.pod<uint8_t>("kernel kind");
    if (Kind > (uint8_t)KernelEntry::kLastKind ||
        (Version < 2 && Kind > (uint8_t)KernelEntry::Kind::AllocatingBuiltin) ||
        (Version < kListPrimitivesVersion &&
         Kind == (uint8_t)KernelEntry::Kind::ListPrimitive))
      R.error("kernel {} has invalid kind {}", I, Kind);
    K.kind = (KernelEntry::Kind)Kind;
    K.op = R.str("kernel operator name");
    if (K.op.empty())
      R.error("kernel {} has an empty operator name", I);
    uint32_t AttrSize = R.pod<uint32_t>("kernel attribute size");
    const uint8_t *A = R.bytes(AttrSize, "kernel attributes");
    size_t Pos = 0;
    try {
      K.attrs = Attrs::deserialize(A, AttrSize, Pos);
    } catch (const Error &E) {
      R.error("kernel {} ('{}'): {}", I, K.op, E.what());
    }
    if (Pos != AttrSize)
      R.error("kernel {} ('{}'): {} unexpected bytes after the attributes", I,
              K.op, AttrSize - Pos);
  }
  if (R.remaining())
    R.error("{} unexpected bytes at the end", R.remaining());
}

void Loader::readFunctions() {
  ByteReader R = section(SectionKind::Functions);
  uint32_t N = R.count(24, "function count");
  Exe->functions.resize(N);
  for (uint32_t I = 0; I < N; ++I) {
    VMFunction &F = Exe->functions[I];
    F.name = R.str("function name");
    F.numParams = R.pod<uint32_t>("parameter count");
    F.numRegisters = R.pod<uint32_t>("register count"); // verified later
    uint32_t NumCode = R.pod<uint32_t>("instruction count");
    uint32_t NumPool = R.pod<uint32_t>("pool size");
    uint32_t NumShapes = R.pod<uint32_t>("shapes size");
    uint64_t Need = (uint64_t)NumCode * kInstructionSize +
                    (uint64_t)NumPool * 4 + (uint64_t)NumShapes * 8;
    if (Need > R.remaining())
      R.error("truncated: function '{}' needs {} bytes of code but only {} "
              "are left",
              F.name, Need, R.remaining());
    F.code.resize(NumCode);
    for (Instruction &Ins : F.code) {
      uint8_t Op = R.pod<uint8_t>("opcode"); // the verifier checks it
      if (R.pod<uint8_t>("instruction padding") ||
          R.pod<uint16_t>("instruction padding"))
        R.error("function '{}' has an instruction with nonzero reserved bytes",
                F.name);
      Ins.op = (Opcode)Op;
      if (Version < kListTensorsVersion && Ins.op == Opcode::AllocListTensor)
        R.error("function '{}' uses AllocListTensor, which a version {} "
                "file cannot hold",
                F.name, Version);
      Ins.dst = R.pod<uint32_t>("dst");
      Ins.a = R.pod<uint32_t>("operand a");
      Ins.b = R.pod<uint32_t>("operand b");
      Ins.c = R.pod<uint32_t>("operand c");
      Ins.d = R.pod<uint32_t>("operand d");
      Ins.imm = R.pod<int64_t>("imm");
    }
    F.pool.resize(NumPool);
    for (uint32_t &P : F.pool)
      P = R.pod<uint32_t>("pool");
    F.shapes.resize(NumShapes);
    for (int64_t &S : F.shapes)
      S = R.pod<int64_t>("shapes");
  }
  if (R.remaining())
    R.error("{} unexpected bytes at the end", R.remaining());
  for (uint32_t I = 0; I < N; ++I) {
    const VMFunction &F = Exe->functions[I];
    if (!Exe->functionIndex.emplace(F.name, I).second)
      R.error("function '{}' is defined twice", F.name);
  }
}

void Loader::readEntry() {
  ByteReader R = section(SectionKind::Entry);
  readParams(R, Exe->mainParams, "parameter");
  uint32_t NumOutputs = R.count(4, "output name count");
  for (uint32_t I = 0; I < NumOutputs; ++I)
    Exe->outputNames.push_back(R.str("output name"));
  if (Version >= kMainResultsVersion)
    readParams(R, Exe->mainResults, "result");
  if (R.remaining())
    R.error("{} unexpected bytes at the end", R.remaining());
}

/// Params (see writeParams); What ("parameter", "result") names them in
/// errors.
void Loader::readParams(ByteReader &R, std::vector<ParamInfo> &Ps,
                        const char *What) {
  auto Field = [&](const char *F) { return fmt::format("{} {}", What, F); };
  Ps.resize(R.count(15, Field("count").c_str()));
  for (ParamInfo &P : Ps) {
    P.name = R.str(Field("name").c_str());
    uint8_t IsTensor = R.pod<uint8_t>(Field("kind").c_str());
    uint8_t Code = R.pod<uint8_t>(Field("dtype").c_str());
    uint8_t HasDims = R.pod<uint8_t>(Field("rank flag").c_str());
    uint32_t Rank = R.pod<uint32_t>(Field("rank").c_str());
    if (IsTensor > 1 || HasDims > 1)
      R.error("{} '{}' has invalid flags", What, P.name);
    if (Code > (uint8_t)kLastDType)
      R.error("{} '{}' has invalid dtype code {}", What, P.name, Code);
    if (Rank > kMaxRank || (!HasDims && Rank))
      R.error("{} '{}' has invalid rank {}", What, P.name, Rank);
    P.isTensor = IsTensor;
    P.dtype = (DType)Code;
    if (HasDims) {
      P.dims.emplace(Rank);
      for (int64_t &D : *P.dims) {
        D = R.pod<int64_t>(Field("dims").c_str());
        if (D < -1)
          R.error("{} '{}' has invalid extent {}", What, P.name, D);
      }
    }
    P.typeText = R.str(Field("type").c_str());
  }
}

/// The native code section (see encodeNativeCode); the shared object is
/// copied (the dynamic loader reads it from a memory file anyway) and
/// validated by NativeLibrary when resolve() loads it.
void Loader::readNativeCode() {
  if (!Sections.count((uint32_t)SectionKind::NativeCode))
    return;
  ByteReader R = section(SectionKind::NativeCode);
  NativeCodeInfo N;
  N.elfMachine = R.pod<uint32_t>("ELF machine");
  N.triple = R.str("target triple", kMaxShortString);
  N.cpu = R.str("target cpu", kMaxShortString);
  N.features = R.str("target features", kMaxShortString);
  N.requiredFeatures = Features;
  // Files written before the header listed what a CPU level implies (and
  // any file for one) are refused here rather than by SIGILL.
  if (N.elfMachine == NativeLibrary::hostElfMachine()) {
    std::vector<std::string> Missing;
    for (const std::string &F : featuresOfCpuLevel(N.cpu))
      if (!hostHasCpuFeature(F))
        Missing.push_back(F);
    if (!Missing.empty())
      R.error("the code was generated for cpu '{}', which needs CPU "
              "feature{} '{}' that this CPU does not have; compile the model "
              "for this machine",
              N.cpu, Missing.size() == 1 ? "" : "s",
              fmt::format("{}", fmt::join(Missing, "', '")));
  }
  uint32_t NumKernels = R.count(12, "native kernel count");
  Exe->nativeKernels.resize(NumKernels);
  for (uint32_t I = 0; I < NumKernels; ++I) {
    NativeKernel &K = Exe->nativeKernels[I];
    K.symbol = R.str("native kernel symbol", kMaxSymbol);
    uint32_t NumBuffers = R.count(8, "native kernel buffer count");
    if (NumBuffers == 0 || NumBuffers > kMaxKernelBuffers)
      R.error("native kernel {} ('{}') has {} buffers (1 to {})", I, K.symbol,
              NumBuffers, kMaxKernelBuffers);
    K.buffers.resize(NumBuffers);
    for (NativeKernel::Buffer &B : K.buffers) {
      uint8_t Code = R.pod<uint8_t>("buffer dtype");
      if (Code > (uint8_t)kLastDType)
        R.error("native kernel {} ('{}') has a buffer of invalid dtype code "
                "{}",
                I, K.symbol, Code);
      if (R.pod<uint8_t>("buffer padding") || R.pod<uint16_t>("buffer padding"))
        R.error("native kernel {} ('{}') has nonzero reserved bytes", I,
                K.symbol);
      B.dtype = (DType)Code;
      uint32_t Rank = R.pod<uint32_t>("buffer rank");
      if (Rank > kMaxRank)
        R.error("native kernel {} ('{}') has a buffer of rank {} (at most {})",
                I, K.symbol, Rank, kMaxRank);
      B.dims.resize(Rank);
      for (int64_t &D : B.dims)
        D = R.pod<int64_t>("buffer extent");
    }
    uint32_t NumSizes = R.count(8, "size parameter count");
    K.sizeSources.resize(NumSizes);
    for (NativeKernel::SizeSource &S : K.sizeSources) {
      S.buffer = R.pod<uint32_t>("size parameter buffer");
      S.axis = R.pod<uint32_t>("size parameter axis");
    }
    if (Version < kBroadcastSizesVersion)
      continue;
    uint32_t NumBroadcasts = R.count(4, "broadcast size count");
    K.broadcastSizes.resize(NumBroadcasts);
    for (NativeKernel::BroadcastSize &B : K.broadcastSizes) {
      uint32_t NumOps = R.count(8, "broadcast operand count");
      if (NumOps < 2 || NumOps > kMaxBroadcastOperands)
        R.error("native kernel {} ('{}') has a broadcast size of {} "
                "operands (2 to {})",
                I, K.symbol, NumOps, kMaxBroadcastOperands);
      B.operands.resize(NumOps);
      for (int64_t &D : B.operands)
        D = R.pod<int64_t>("broadcast operand");
    }
    if (Version < kEmptyReductionsVersion)
      continue;
    uint32_t NumChecks = R.count(12, "empty-reduction count");
    if (NumChecks > kMaxEmptyReductions)
      R.error("native kernel {} ('{}') has {} empty-reduction checks (at "
              "most {})",
              I, K.symbol, NumChecks, kMaxEmptyReductions);
    K.emptyReductions.resize(NumChecks);
    for (NativeKernel::EmptyReduction &E : K.emptyReductions) {
      E.op = R.str("empty-reduction operator", kMaxSymbol);
      for (std::vector<int64_t> *Dims : {&E.reduced, &E.kept}) {
        uint32_t Rank = R.count(8, "empty-reduction rank");
        if (Rank > kMaxRank)
          R.error("native kernel {} ('{}') has an empty-reduction check of "
                  "rank {} (at most {})",
                  I, K.symbol, Rank, kMaxRank);
        Dims->resize(Rank);
        for (int64_t &D : *Dims)
          D = R.pod<int64_t>("empty-reduction extent");
      }
    }
  }
  uint64_t Offset = R.pod<uint64_t>("shared object offset");
  uint64_t SoSize = R.pod<uint64_t>("shared object size");
  uint64_t SectionSize = R.pos() + R.remaining();
  if (Offset % kAlignment || Offset < R.pos() || Offset > SectionSize ||
      SoSize != SectionSize - Offset)
    R.error("the shared object at offset {} of {} bytes does not end the "
            "section of {} bytes at an aligned offset",
            Offset, SoSize, SectionSize);
  const uint8_t *Pad = R.bytes(Offset - R.pos(), "padding");
  const uint8_t *So = R.bytes(SoSize, "shared object");
  if (std::any_of(Pad, So, [](uint8_t B) { return B != 0; }))
    R.error("nonzero padding before the shared object");
  N.sharedObject.assign(So, So + SoSize);
  Exe->nativeCode = std::move(N);
}

/// The CUDA code section (see encodeCudaCode). The images are checked when
/// a VM loads them on a GPU; here only their framing.
void Loader::readCudaCode() {
  bool Present = Sections.count((uint32_t)SectionKind::CudaCode);
  if (Present && !CudaTarget)
    error("a CUDA code section in a file whose target is not 'cuda'");
  if (!Present && CudaTarget)
    error("the file targets 'cuda' but has no CUDA code section");
  if (!Present)
    return;
  ByteReader R = section(SectionKind::CudaCode);
  CudaCodeInfo C;
  // No images: the GPU runs only library kernels (cuBLAS, cuDNN).
  uint32_t NumImages = R.count(16, "CUDA image count");
  if (NumImages > kMaxCudaImages)
    R.error("{} CUDA images (0 to {})", NumImages, kMaxCudaImages);
  for (uint32_t I = 0; I < NumImages; ++I) {
    CudaCodeInfo::Image Img;
    Img.arch = R.str("CUDA image architecture", kMaxShortString);
    uint8_t Ptx = R.pod<uint8_t>("CUDA image kind");
    if (Ptx > 1 || R.pod<uint8_t>("CUDA image padding") ||
        R.pod<uint16_t>("CUDA image padding"))
      R.error("CUDA image {} has an invalid kind or nonzero reserved bytes", I);
    Img.ptx = Ptx == 1;
    std::string_view Prefix = Img.ptx ? "compute_" : "sm_";
    if (Img.arch.size() <= Prefix.size() ||
        Img.arch.compare(0, Prefix.size(), Prefix) ||
        !std::all_of(Img.arch.begin() + (long)Prefix.size(), Img.arch.end(),
                     [](char Ch) { return Ch >= '0' && Ch <= '9'; }))
      R.error("CUDA image {} has architecture '{}' (expected {}NN)", I,
              Img.arch, Prefix);
    uint64_t N = R.pod<uint64_t>("CUDA image size");
    if (N > R.remaining())
      R.error("truncated: CUDA image {} of {} bytes, {} left", I, N,
              R.remaining());
    const uint8_t *P = R.bytes((size_t)N, "CUDA image");
    if (N == 0 || (Img.ptx && P[N - 1] != 0))
      R.error("CUDA image {} is empty or PTX without its final NUL byte", I);
    Img.bytes.assign(P, P + N);
    C.images.push_back(std::move(Img));
  }
  uint32_t NumOnGpu = R.count(4, "CUDA kernel count");
  if (NumOnGpu && C.images.empty())
    R.error("{} native kernels run on the GPU, but there are no CUDA images",
            NumOnGpu);
  int64_t Last = -1;
  for (uint32_t I = 0; I < NumOnGpu; ++I) {
    uint32_t K = R.pod<uint32_t>("CUDA kernel index");
    if (K >= Exe->nativeKernels.size() || (int64_t)K <= Last)
      R.error("CUDA kernel index {} is out of range ({} native kernels) or "
              "not increasing",
              K, Exe->nativeKernels.size());
    Exe->nativeKernels[K].device = Device::CUDA;
    Last = K;
  }
  if (R.remaining())
    R.error("{} unexpected bytes at the end", R.remaining());
  Exe->cudaCode = std::move(C);
}

std::shared_ptr<Executable> Loader::load() {
  readHeader();
  readStrings();
  readConstants();
  readConstructors();
  readKernels();
  readFunctions();
  readEntry();
  readNativeCode();
  readCudaCode();
  try {
    Exe->resolve();
  } catch (const Error &E) {
    error("{}", E.what());
  }
  return Exe;
}

/// A read-only private mapping of a whole file.
struct FileMapping {
  void *Addr = nullptr;
  size_t Size = 0;
  ~FileMapping() {
    if (Addr)
      munmap(Addr, Size);
  }
};

} // namespace

std::vector<uint8_t> Executable::serialize() const {
  if (!nativeKernels.empty() && (nativeJit || !nativeCode))
    fail("cannot save an executable whose native kernels were compiled in "
         "process (JIT); compile it with the shared-object code mode "
         "(CodegenOptions::mode = NativeCode::SharedObject) to save it");
  // The oldest version that holds this executable (readers of version 2
  // keep reading files without broadcast sizes).
  uint32_t Version = formatVersionFor(*this);
  std::vector<std::pair<SectionKind, std::vector<uint8_t>>> Body;
  Body.emplace_back(SectionKind::Strings, encodeStrings(*this));
  Body.emplace_back(SectionKind::Constants, encodeConstants(*this));
  Body.emplace_back(SectionKind::Functions, encodeFunctions(*this));
  Body.emplace_back(SectionKind::Kernels, encodeKernels(*this));
  Body.emplace_back(SectionKind::Constructors, encodeConstructors(*this));
  Body.emplace_back(SectionKind::Entry, encodeEntry(*this, Version));
  if (nativeCode && !nativeKernels.empty())
    Body.emplace_back(SectionKind::NativeCode,
                      encodeNativeCode(*this, Version));
  if (cudaCode) {
    if (!cudaCode->images.empty() && (!nativeCode || nativeKernels.empty()))
      fail("cannot save CUDA code without the native kernels' CPU code");
    Body.emplace_back(SectionKind::CudaCode, encodeCudaCode(*this));
  }

  std::vector<uint8_t> Out;
  ByteWriter W(Out);
  W.bytes(kMagic, sizeof(kMagic));
  W.pod<uint32_t>(Version);
  W.pod<uint32_t>(0); // header checksum, patched below
  W.pod<uint32_t>(0); // header size, patched below
  W.pod<uint32_t>(0); // flags
  W.pod<uint64_t>(0); // file size, patched below
  W.str(kProducer);
  W.str(cudaCode ? kTargetCuda : kTargetCpu);
  // The CPU features the native code needs (none without native code).
  const std::vector<std::string> NoFeatures;
  const std::vector<std::string> &Features =
      nativeCode && !nativeKernels.empty() ? nativeCode->requiredFeatures
                                           : NoFeatures;
  W.pod<uint32_t>((uint32_t)Features.size());
  for (const std::string &F : Features)
    W.str(F);
  W.pod<uint32_t>((uint32_t)Body.size());
  size_t HeaderSize = Out.size() + Body.size() * kSectionEntrySize;
  uint64_t Off = alignUp(HeaderSize, kAlignment);
  std::vector<uint64_t> Offsets;
  for (const auto &[Kind, Bytes] : Body) {
    Offsets.push_back(Off);
    W.pod<uint32_t>((uint32_t)Kind);
    W.pod<uint32_t>(crc32c(Bytes.data(), Bytes.size()));
    W.pod<uint64_t>(Off);
    W.pod<uint64_t>(Bytes.size());
    Off = alignUp(Off + Bytes.size(), kAlignment);
  }
  uint64_t FileSize = Offsets.back() + Body.back().second.size();
  uint32_t HS = (uint32_t)HeaderSize;
  std::memcpy(Out.data() + 16, &HS, 4);
  std::memcpy(Out.data() + 24, &FileSize, 8);
  uint32_t Checksum = headerChecksum(Out.data(), HeaderSize, Version);
  std::memcpy(Out.data() + kHeaderChecksumOffset, &Checksum, 4);
  Out.reserve(FileSize);
  for (size_t I = 0; I < Body.size(); ++I) {
    Out.resize(Offsets[I], 0);
    W.bytes(Body[I].second.data(), Body[I].second.size());
  }
  return Out;
}

void Executable::save(const std::string &Path) const {
  std::vector<uint8_t> Bytes = serialize();
  // A temporary file renamed over Path: a process that has the old file
  // mapped keeps seeing the old bytes, and a failed write leaves it intact.
  OutputFiles Out;
  Out.add(Path, Bytes.data(), Bytes.size());
  Out.commit();
}

std::shared_ptr<Executable> Executable::deserialize(const uint8_t *Data,
                                                    size_t Size,
                                                    const std::string &What) {
  return Loader(Data, Size, What, nullptr).load();
}

std::shared_ptr<Executable> Executable::load(const std::string &Path) {
  RegularFile File(Path);
  size_t Size = (size_t)File.size();
  if (Size == 0)
    fail("{}: truncated: the file is empty", Path);
  void *Addr = ::mmap(nullptr, Size, PROT_READ, MAP_PRIVATE, File.fd(), 0);
  int Err = errno;
  if (Addr == MAP_FAILED)
    fail("{}: cannot map: {}", Path, std::strerror(Err));
  auto Mapping = std::make_shared<FileMapping>();
  Mapping->Addr = Addr;
  Mapping->Size = Size;
  return Loader(static_cast<const uint8_t *>(Addr), Size, Path,
                std::shared_ptr<const void>(Mapping, Addr))
      .load();
}

} // namespace rivet::vm
