//===- NativeLibrary.cc - Generated kernels loaded from memory ------------===//
//
// Validation reads the file as the dynamic loader will see it once mapped:
// every address (a virtual address of the object) is translated through the
// PT_LOAD segment that contains it. The rules are those of glibc's loader,
// narrowed to what ld.lld writes for a kernel library (see validate()).
//
//===----------------------------------------------------------------------===//
#include "vm/NativeLibrary.h"

#include "kernels/Error.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <set>
#include <string_view>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace rivet::vm {

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the kernel-library loader reads little-endian ELF only");

/// Limits beyond which an object is refused as corrupt.
constexpr uint64_t kMaxLoadedBytes = 1ull << 32;
constexpr uint64_t kMaxSegmentAlign = 1ull << 21;
constexpr uint16_t kMaxProgramHeaders = 64;
constexpr uint64_t kMaxHashChainSteps = 1ull << 24;

/// Whether [Off, Off + Size) lies inside [0, Limit), without overflow.
bool fits(uint64_t Off, uint64_t Size, uint64_t Limit) {
  return Off <= Limit && Size <= Limit - Off;
}

/// The relocation types a position-independent kernel library uses.
struct RelocationTypes {
  uint32_t none, abs64, globDat, jumpSlot, relative;
};

RelocationTypes hostRelocationTypes() {
#if defined(__x86_64__)
  return {R_X86_64_NONE, R_X86_64_64, R_X86_64_GLOB_DAT, R_X86_64_JUMP_SLOT,
          R_X86_64_RELATIVE};
#elif defined(__aarch64__)
  return {R_AARCH64_NONE, R_AARCH64_ABS64, R_AARCH64_GLOB_DAT,
          R_AARCH64_JUMP_SLOT, R_AARCH64_RELATIVE};
#else
#error "NativeLibrary: unsupported host architecture"
#endif
}

/// Checks one shared object; see NativeLibrary::validate for the rules.
class ElfValidator {
public:
  ElfValidator(std::span<const uint8_t> Bytes, const std::string &What)
      : B(Bytes), What(What) {}

  void run() {
    checkHeader();
    checkProgramHeaders();
    readDynamicSection();
    checkStrings();
    checkHashAndSymbols();
    checkVersions();
    checkRelocations();
  }

private:
  std::span<const uint8_t> B;
  const std::string &What;
  Elf64_Ehdr Header{};
  std::vector<Elf64_Phdr> Loads; // PT_LOAD, in ascending address order
  Elf64_Phdr Dynamic{};
  std::vector<Elf64_Dyn> DynEntries;
  // Values of the dynamic tags (at most one each but DT_NEEDED).
  std::vector<uint64_t> Needed;
  uint64_t Tag[64] = {}; // DT_NULL .. DT_ENCODING-1 by number
  bool Has[64] = {};
  uint64_t GnuHash = 0, VerSym = 0, VerNeed = 0, VerNeedNum = 0, RelaCount = 0,
           Flags1 = 0;
  bool HasGnuHash = false, HasVerSym = false, HasVerNeed = false,
       HasVerNeedNum = false, HasRelaCount = false;
  uint64_t SymbolCount = 0;
  /// [address, size) of everything the loader reads; relocations must not
  /// write there (the loader reads the dynamic section again after
  /// relocating, for instance).
  std::set<std::pair<uint64_t, uint64_t>> LoaderReads;
  uint16_t MaxVersionIndex = 1;

  template <typename... Args>
  [[noreturn]] void refuse(fmt::format_string<Args...> Fmt, Args &&...A) {
    fail("{}: not a loadable kernel library: {}", What,
         fmt::format(Fmt, std::forward<Args>(A)...));
  }

  template <typename T> T readFile(uint64_t Off) const {
    T V;
    std::memcpy(&V, B.data() + Off, sizeof(T));
    return V;
  }

  /// The PT_LOAD whose memory holds [Addr, Addr + Size), or null.
  const Elf64_Phdr *loadOf(uint64_t Addr, uint64_t Size) const {
    for (const Elf64_Phdr &L : Loads)
      if (Addr >= L.p_vaddr && fits(Addr - L.p_vaddr, Size, L.p_memsz))
        return &L;
    return nullptr;
  }

  /// The file offset of [Addr, Addr + Size), which must be file-backed
  /// readable loaded memory (the loader reads it); refuses otherwise.
  uint64_t fileOffset(uint64_t Addr, uint64_t Size, const char *Name) {
    for (const Elf64_Phdr &L : Loads)
      if (Addr >= L.p_vaddr && fits(Addr - L.p_vaddr, Size, L.p_filesz) &&
          (L.p_flags & PF_R)) {
        LoaderReads.insert({Addr, Size});
        return L.p_offset + (Addr - L.p_vaddr);
      }
    refuse("the {} at address {:#x} ({} bytes) is not inside a loaded "
           "readable segment's file data",
           Name, Addr, Size);
  }

  template <typename T> T readMem(uint64_t Addr, const char *Name) {
    return readFile<T>(fileOffset(Addr, sizeof(T), Name));
  }

  /// The NUL-terminated string at Off of the dynamic string table.
  std::string_view string(uint64_t Off, const char *Name) {
    uint64_t StrTab = fileOffset(Tag[DT_STRTAB], Tag[DT_STRSZ], "string table");
    if (Off >= Tag[DT_STRSZ])
      refuse("the {} name offset {} is outside the string table ({} bytes)",
             Name, Off, Tag[DT_STRSZ]);
    const char *S = reinterpret_cast<const char *>(B.data() + StrTab + Off);
    const void *End = std::memchr(S, 0, Tag[DT_STRSZ] - Off);
    if (!End)
      refuse("the {} name at offset {} is not terminated", Name, Off);
    return std::string_view(S, static_cast<const char *>(End) - S);
  }

  void checkHeader() {
    if (B.size() < sizeof(Elf64_Ehdr))
      refuse("{} bytes is shorter than an ELF header", B.size());
    Header = readFile<Elf64_Ehdr>(0);
    const unsigned char *Id = Header.e_ident;
    if (std::memcmp(Id, ELFMAG, SELFMAG) != 0)
      refuse("no ELF magic");
    if (Id[EI_CLASS] != ELFCLASS64)
      refuse("not a 64-bit ELF file (class {})", Id[EI_CLASS]);
    if (Id[EI_DATA] != ELFDATA2LSB)
      refuse("not little endian (data encoding {})", Id[EI_DATA]);
    if (Id[EI_VERSION] != EV_CURRENT || Header.e_version != EV_CURRENT)
      refuse("unknown ELF version");
    if (Id[EI_OSABI] != ELFOSABI_SYSV && Id[EI_OSABI] != ELFOSABI_GNU)
      refuse("unsupported OS ABI {}", Id[EI_OSABI]);
    for (int I = EI_ABIVERSION; I < EI_NIDENT; ++I)
      if (Id[I] != 0)
        refuse("non-zero ELF identification byte {}", I);
    if (Header.e_type != ET_DYN)
      refuse("not a shared object (ELF type {})", Header.e_type);
    if (Header.e_machine != NativeLibrary::hostElfMachine())
      refuse("code for ELF machine {}, but this host is machine {}",
             Header.e_machine, NativeLibrary::hostElfMachine());
    if (Header.e_ehsize != sizeof(Elf64_Ehdr) ||
        Header.e_phentsize != sizeof(Elf64_Phdr))
      refuse("unexpected ELF header or program header size");
    if (Header.e_phnum == 0 || Header.e_phnum > kMaxProgramHeaders)
      refuse("{} program headers (1 to {} expected)", Header.e_phnum,
             kMaxProgramHeaders);
    if (Header.e_phoff % 8 != 0 ||
        !fits(Header.e_phoff, uint64_t(Header.e_phnum) * sizeof(Elf64_Phdr),
              B.size()))
      refuse("the program headers lie outside the {} bytes (truncated?)",
             B.size());
    // The loader never reads section headers; checking that they are in
    // the file catches truncation of a file whose segments survived.
    if (Header.e_shoff != 0 || Header.e_shnum != 0) {
      if (Header.e_shnum == 0 || Header.e_shentsize != sizeof(Elf64_Shdr) ||
          !fits(Header.e_shoff, uint64_t(Header.e_shnum) * sizeof(Elf64_Shdr),
                B.size()))
        refuse("the section headers lie outside the {} bytes (truncated?)",
               B.size());
    }
  }

  void checkProgramHeaders() {
    std::vector<Elf64_Phdr> Others;
    int NumDynamic = 0, NumRelro = 0;
    for (uint16_t I = 0; I < Header.e_phnum; ++I) {
      auto P = readFile<Elf64_Phdr>(Header.e_phoff + I * sizeof(Elf64_Phdr));
      switch (P.p_type) {
      case PT_NULL: break;
      case PT_LOAD: {
        if (!fits(P.p_offset, P.p_filesz, B.size()))
          refuse("segment {} lies outside the {} bytes (truncated?)", I,
                 B.size());
        if (P.p_filesz > P.p_memsz || P.p_memsz > kMaxLoadedBytes ||
            P.p_vaddr > kMaxLoadedBytes)
          refuse("segment {} has inconsistent sizes", I);
        if (P.p_align > kMaxSegmentAlign ||
            (P.p_align & (P.p_align - 1)) != 0 ||
            (P.p_align > 1 && P.p_offset % P.p_align != P.p_vaddr % P.p_align))
          refuse("segment {} is misaligned", I);
        if (!Loads.empty() &&
            P.p_vaddr < Loads.back().p_vaddr + Loads.back().p_memsz)
          refuse("segment {} overlaps or precedes the previous one", I);
        Loads.push_back(P);
        break;
      }
      case PT_DYNAMIC:
        ++NumDynamic;
        Dynamic = P;
        Others.push_back(P);
        break;
      case PT_GNU_RELRO:
        ++NumRelro;
        Others.push_back(P);
        break;
      case PT_GNU_STACK:
        if (P.p_flags & PF_X)
          refuse("it asks for an executable stack");
        break;
      case PT_PHDR:
      case PT_NOTE:
      case PT_GNU_EH_FRAME: Others.push_back(P); break;
      default:
        refuse("unexpected program header type {:#x} (segment {})", P.p_type,
               I);
      }
    }
    if (Loads.empty())
      refuse("no loadable segment");
    if (Loads.back().p_vaddr + Loads.back().p_memsz - Loads.front().p_vaddr >
        kMaxLoadedBytes)
      refuse("the loadable segments span more than {} bytes", kMaxLoadedBytes);
    if (NumDynamic != 1 || NumRelro > 1)
      refuse("{} dynamic segments and {} RELRO segments (1 and at most 1 "
             "expected)",
             NumDynamic, NumRelro);
    for (const Elf64_Phdr &P : Others) {
      if (P.p_type == PT_GNU_RELRO) {
        checkRelro(P);
        continue;
      }
      const Elf64_Phdr *L = loadOf(P.p_vaddr, P.p_memsz);
      if (!L)
        refuse("segment of type {:#x} at {:#x} is outside loaded memory",
               P.p_type, P.p_vaddr);
      // The loader writes to the dynamic section when its segment says it
      // is writable.
      if (P.p_type == PT_DYNAMIC && (P.p_flags & PF_W) && !(L->p_flags & PF_W))
        refuse("segment of type {:#x} is in a read-only segment", P.p_type);
    }
  }

  /// The loader makes the whole pages of [start, end) of RELRO read-only
  /// (start rounded down, end rounded down: ld.lld pads RELRO's size to the
  /// page end, past its segment); they must be pages of one writable
  /// segment, not someone else's memory.
  void checkRelro(const Elf64_Phdr &P) {
    uint64_t Page = uint64_t(::sysconf(_SC_PAGESIZE));
    if (!fits(P.p_vaddr, P.p_memsz, kMaxLoadedBytes))
      refuse("RELRO segment at {:#x} is outside loaded memory", P.p_vaddr);
    uint64_t Start = P.p_vaddr & ~(Page - 1);
    uint64_t End = (P.p_vaddr + P.p_memsz) & ~(Page - 1);
    if (Start == End)
      return;
    for (const Elf64_Phdr &L : Loads) {
      uint64_t LStart = L.p_vaddr & ~(Page - 1);
      uint64_t LEnd = (L.p_vaddr + L.p_memsz + Page - 1) & ~(Page - 1);
      if (Start >= LStart && End <= LEnd) {
        if (!(L.p_flags & PF_W))
          refuse("RELRO segment is in a read-only segment");
        return;
      }
    }
    refuse("RELRO segment at {:#x} ({} bytes) is outside loaded memory",
           P.p_vaddr, P.p_memsz);
  }

  void readDynamicSection() {
    if (Dynamic.p_filesz % sizeof(Elf64_Dyn) != 0 ||
        Dynamic.p_memsz != Dynamic.p_filesz)
      refuse("malformed dynamic segment");
    uint64_t Off =
        fileOffset(Dynamic.p_vaddr, Dynamic.p_memsz, "dynamic section");
    bool Terminated = false;
    std::set<int64_t> Seen;
    for (uint64_t I = 0; I < Dynamic.p_memsz / sizeof(Elf64_Dyn); ++I) {
      auto D = readFile<Elf64_Dyn>(Off + I * sizeof(Elf64_Dyn));
      if (D.d_tag == DT_NULL) {
        Terminated = true;
        break;
      }
      if (D.d_tag != DT_NEEDED && !Seen.insert(D.d_tag).second)
        refuse("dynamic tag {:#x} appears twice", D.d_tag);
      uint64_t V = D.d_un.d_val;
      switch (D.d_tag) {
      case DT_NEEDED: Needed.push_back(V); break;
      case DT_PLTRELSZ:
      case DT_PLTGOT:
      case DT_STRTAB:
      case DT_SYMTAB:
      case DT_RELA:
      case DT_RELASZ:
      case DT_RELAENT:
      case DT_STRSZ:
      case DT_SYMENT:
      case DT_SONAME:
      case DT_PLTREL:
      case DT_JMPREL:
      case DT_BIND_NOW:
      case DT_FLAGS:
        Has[D.d_tag] = true;
        Tag[D.d_tag] = V;
        break;
      case DT_GNU_HASH:
        HasGnuHash = true;
        GnuHash = V;
        break;
      case DT_VERSYM:
        HasVerSym = true;
        VerSym = V;
        break;
      case DT_VERNEED:
        HasVerNeed = true;
        VerNeed = V;
        break;
      case DT_VERNEEDNUM:
        HasVerNeedNum = true;
        VerNeedNum = V;
        break;
      case DT_RELACOUNT:
        HasRelaCount = true;
        RelaCount = V;
        break;
      case DT_FLAGS_1: Flags1 = V; break;
      default:
        // Initializers, finalizers, RPATH, TLS, DT_HASH, DT_REL, DT_RELR,
        // version definitions, ...: nothing a kernel library has.
        refuse("unexpected dynamic tag {:#x}", D.d_tag);
      }
    }
    if (!Terminated)
      refuse("the dynamic section has no DT_NULL terminator");
    if (!Has[DT_STRTAB] || !Has[DT_STRSZ] || !Has[DT_SYMTAB] || !HasGnuHash)
      refuse("the dynamic section lacks a string table, symbol table or GNU "
             "hash table");
    if (Has[DT_SYMENT] && Tag[DT_SYMENT] != sizeof(Elf64_Sym))
      refuse("symbol entry size {}", Tag[DT_SYMENT]);
    if (Has[DT_RELAENT] && Tag[DT_RELAENT] != sizeof(Elf64_Rela))
      refuse("relocation entry size {}", Tag[DT_RELAENT]);
    if (Has[DT_PLTREL] && Tag[DT_PLTREL] != DT_RELA)
      refuse("PLT relocations of kind {}", Tag[DT_PLTREL]);
    if (Has[DT_RELA] != Has[DT_RELASZ] || Has[DT_JMPREL] != Has[DT_PLTRELSZ] ||
        (Has[DT_JMPREL] && !Has[DT_PLTREL]))
      refuse("relocation tables without their sizes");
    if (Has[DT_FLAGS] && (Tag[DT_FLAGS] & (DF_TEXTREL | DF_STATIC_TLS)))
      refuse("text relocations or static TLS (flags {:#x})", Tag[DT_FLAGS]);
    if (Flags1 & DF_1_PIE)
      refuse("a position-independent executable, not a shared object");
    if (HasVerSym != HasVerNeed || HasVerNeed != HasVerNeedNum)
      refuse("incomplete symbol versioning tags");
    if (Has[DT_PLTGOT]) {
      const Elf64_Phdr *L = loadOf(Tag[DT_PLTGOT], 3 * sizeof(uint64_t));
      if (!L || !(L->p_flags & PF_W))
        refuse("the GOT at {:#x} is not in writable loaded memory",
               Tag[DT_PLTGOT]);
    }
  }

  void checkStrings() {
    fileOffset(Tag[DT_STRTAB], Tag[DT_STRSZ], "string table");
    if (Has[DT_SONAME])
      string(Tag[DT_SONAME], "soname");
    // Only the C and math libraries: loading another library would run
    // its initializers.
    for (uint64_t N : Needed) {
      std::string_view Name = string(N, "needed library");
      if (Name != "libc.so.6" && Name != "libm.so.6" && Name != "libmvec.so.1")
        refuse("it needs library '{}' (only libc.so.6, libm.so.6 and "
               "libmvec.so.1 are allowed)",
               Name);
    }
  }

  void checkHashAndSymbols() {
    if (GnuHash % 8 != 0)
      refuse("misaligned GNU hash table");
    auto NBuckets = readMem<uint32_t>(GnuHash, "GNU hash table");
    auto SymOffset = readMem<uint32_t>(GnuHash + 4, "GNU hash table");
    auto BloomSize = readMem<uint32_t>(GnuHash + 8, "GNU hash table");
    auto BloomShift = readMem<uint32_t>(GnuHash + 12, "GNU hash table");
    if (NBuckets == 0 || BloomSize == 0 || (BloomSize & (BloomSize - 1)) ||
        BloomShift >= 64)
      refuse("malformed GNU hash table header");
    uint64_t Buckets = GnuHash + 16 + uint64_t(BloomSize) * 8;
    uint64_t Chains = Buckets + uint64_t(NBuckets) * 4;
    fileOffset(GnuHash, Chains - GnuHash, "GNU hash table");
    SymbolCount = SymOffset;
    uint64_t Steps = 0;
    for (uint32_t I = 0; I < NBuckets; ++I) {
      uint32_t Sym = readMem<uint32_t>(Buckets + 4 * I, "GNU hash bucket");
      if (Sym == 0)
        continue;
      if (Sym < SymOffset)
        refuse("GNU hash bucket {} names symbol {} below the hashed ones", I,
               Sym);
      for (;; ++Sym) {
        if (++Steps > kMaxHashChainSteps)
          refuse("GNU hash chains are too long");
        uint32_t H = readMem<uint32_t>(Chains + 4 * uint64_t(Sym - SymOffset),
                                       "GNU hash chain");
        if (H & 1)
          break;
      }
      SymbolCount = std::max<uint64_t>(SymbolCount, uint64_t(Sym) + 1);
    }
    uint64_t SymTab = fileOffset(
        Tag[DT_SYMTAB], SymbolCount * sizeof(Elf64_Sym), "symbol table");
    for (uint64_t I = 1; I < SymbolCount; ++I) {
      auto S = readFile<Elf64_Sym>(SymTab + I * sizeof(Elf64_Sym));
      string(S.st_name, "symbol");
      unsigned Type = ELF64_ST_TYPE(S.st_info);
      if (Type == STT_GNU_IFUNC || Type == STT_TLS)
        refuse("symbol {} is an IFUNC or TLS symbol", I);
      if (S.st_shndx != SHN_UNDEF && S.st_shndx != SHN_ABS &&
          !loadOf(S.st_value, S.st_size))
        refuse("symbol {} at {:#x} is outside loaded memory", I, S.st_value);
    }
  }

  void checkVersions() {
    if (!HasVerNeed)
      return;
    std::set<std::string_view> NeededNames;
    for (uint64_t N : Needed)
      NeededNames.insert(string(N, "needed library"));
    // The loader follows vn_next and vna_next until they are zero, whatever
    // the counts say; walk the same way and require the counts to agree.
    uint64_t Entry = VerNeed, NumEntries = 0;
    for (;;) {
      auto V = readMem<Elf64_Verneed>(Entry, "version need");
      if (++NumEntries > VerNeedNum)
        refuse("more version needs than DT_VERNEEDNUM ({})", VerNeedNum);
      if (V.vn_version != 1)
        refuse("version need {} has version {}", NumEntries, V.vn_version);
      // The loader asserts that each versioned library is a needed one.
      if (!NeededNames.count(string(V.vn_file, "versioned library")))
        refuse("version need {} names a library that is not needed",
               NumEntries);
      uint64_t Aux = Entry + V.vn_aux;
      for (uint16_t J = 0;; ++J) {
        if (J >= V.vn_cnt)
          refuse("version need {} has more entries than its count", NumEntries);
        auto A = readMem<Elf64_Vernaux>(Aux, "version need entry");
        string(A.vna_name, "version");
        MaxVersionIndex =
            std::max<uint16_t>(MaxVersionIndex, A.vna_other & 0x7fff);
        if (A.vna_next == 0) {
          if (J + 1 != V.vn_cnt)
            refuse("version need {} has fewer entries than its count",
                   NumEntries);
          break;
        }
        Aux += A.vna_next;
      }
      if (V.vn_next == 0)
        break;
      Entry += V.vn_next;
    }
    if (NumEntries != VerNeedNum)
      refuse("{} version needs, DT_VERNEEDNUM says {}", NumEntries, VerNeedNum);
    uint64_t Off = fileOffset(VerSym, SymbolCount * sizeof(uint16_t),
                              "version index table");
    for (uint64_t I = 0; I < SymbolCount; ++I)
      if ((readFile<uint16_t>(Off + 2 * I) & 0x7fff) > MaxVersionIndex)
        refuse("symbol {} has an undefined version index", I);
  }

  void checkRelocationTable(uint64_t Addr, uint64_t Size, bool Plt) {
    if (Size % sizeof(Elf64_Rela) != 0)
      refuse("relocation table size {} is not a multiple of {}", Size,
             sizeof(Elf64_Rela));
    uint64_t Off = fileOffset(Addr, Size, "relocation table");
    RelocationTypes T = hostRelocationTypes();
    for (uint64_t I = 0; I < Size / sizeof(Elf64_Rela); ++I) {
      auto R = readFile<Elf64_Rela>(Off + I * sizeof(Elf64_Rela));
      uint32_t Type = ELF64_R_TYPE(R.r_info);
      uint64_t Sym = ELF64_R_SYM(R.r_info);
      // The loader indexes the symbol and version tables with every
      // entry's symbol, even of a no-op relocation.
      if (Sym >= SymbolCount)
        refuse("relocation {} names symbol {} of {}", I, Sym, SymbolCount);
      if (Type == T.none)
        continue;
      // The loader treats the first DT_RELACOUNT entries as relative.
      bool MustBeRelative = !Plt && I < RelaCount;
      bool Known = Plt ? Type == T.jumpSlot
                       : (Type == T.relative || Type == T.abs64 ||
                          Type == T.globDat || Type == T.jumpSlot);
      if (!Known || (MustBeRelative && Type != T.relative))
        refuse("relocation {} has unexpected type {}", I, Type);
      if (Type != T.relative && Sym == 0)
        refuse("relocation {} names symbol {} of {}", I, Sym, SymbolCount);
      const Elf64_Phdr *L = loadOf(R.r_offset, sizeof(uint64_t));
      if (!L || !(L->p_flags & PF_W))
        refuse("relocation {} writes to {:#x}, outside writable memory", I,
               R.r_offset);
      for (const auto &[Addr, Size] : LoaderReads)
        if (R.r_offset < Addr + Size && Addr < R.r_offset + sizeof(uint64_t))
          refuse("relocation {} writes to {:#x}, into data the loader reads", I,
                 R.r_offset);
    }
  }

  void checkRelocations() {
    if (HasRelaCount &&
        (!Has[DT_RELASZ] || RelaCount > Tag[DT_RELASZ] / sizeof(Elf64_Rela)))
      refuse("more relative relocations than relocations");
    if (Has[DT_RELA])
      checkRelocationTable(Tag[DT_RELA], Tag[DT_RELASZ], false);
    if (Has[DT_JMPREL])
      checkRelocationTable(Tag[DT_JMPREL], Tag[DT_PLTRELSZ], true);
  }
};

std::string dlErrorMessage() {
  const char *E = ::dlerror();
  return E ? E : "unknown error";
}

} // namespace

uint16_t NativeLibrary::hostElfMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
#error "NativeLibrary: unsupported host architecture"
#endif
}

void NativeLibrary::validate(std::span<const uint8_t> SharedObject,
                             const std::string &What) {
  ElfValidator(SharedObject, What).run();
}

std::shared_ptr<NativeLibrary>
NativeLibrary::load(std::span<const uint8_t> SharedObject,
                    const std::string &What) {
  validate(SharedObject, What);
  std::shared_ptr<NativeLibrary> L(new NativeLibrary(What));
  std::string Path;
  L->Fd = ::memfd_create("rivet-kernels", MFD_CLOEXEC);
  if (L->Fd >= 0) {
    Path = "/proc/self/fd/" + std::to_string(L->Fd);
  } else {
    const char *Base = std::getenv("TMPDIR");
    std::string Templ =
        std::string(Base && *Base ? Base : "/tmp") + "/rivet-kernels-XXXXXX.so";
    L->Fd = ::mkstemps(Templ.data(), 3);
    if (L->Fd < 0)
      fail("{}: cannot create a memory file or a temporary file for native "
           "code: {}",
           What, std::strerror(errno));
    L->TempPath = Path = Templ;
  }
  const uint8_t *Data = SharedObject.data();
  for (size_t Left = SharedObject.size(); Left > 0;) {
    ssize_t N = ::write(L->Fd, Data, Left);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      fail("{}: cannot write native code to '{}': {}", What, Path,
           std::strerror(errno));
    Data += N;
    Left -= size_t(N);
  }
  L->Handle = ::dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!L->Handle)
    fail("{}: cannot load native code: {}", What, dlErrorMessage());
  return L;
}

void *NativeLibrary::symbol(const std::string &Name) const {
  ::dlerror();
  void *Address = ::dlsym(Handle, Name.c_str());
  // dlsym also searches the library's dependencies (libm); a kernel must be
  // defined by this library itself.
  Dl_info Info;
  link_map *Map = nullptr;
  if (Address && ::dladdr(Address, &Info) &&
      ::dlinfo(Handle, RTLD_DI_LINKMAP, &Map) == 0 && Map && Info.dli_fname &&
      std::strcmp(Info.dli_fname, Map->l_name) == 0)
    return Address;
  fail("{}: native code defines no kernel '{}'", What, Name);
}

NativeLibrary::~NativeLibrary() {
  if (Handle)
    ::dlclose(Handle);
  if (Fd >= 0)
    ::close(Fd);
  if (!TempPath.empty())
    ::unlink(TempPath.c_str());
}

} // namespace rivet::vm
