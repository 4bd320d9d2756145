// Ahead-of-time native kernels end to end: two fused groups emitted into one
// object, linked by ld.lld into a shared object, loaded from memory by the
// runtime's NativeLibrary (no LLVM) and called through symbol(); compared
// with the reference interpreter. Objects for another machine link but are
// refused at load; truncated and bit-flipped bytes are refused or load
// cleanly, never crash.

#include "codegen/CodegenTestUtil.h"
#include "codegen/SharedObject.h"
#include "kernels/Threading.h"
#include "vm/NativeLibrary.h"

#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <limits>
#include <random>
#include <span>

using namespace rivet;
using namespace rivet::test;

namespace {

struct Case {
  std::vector<std::string> types;
  std::string body;
  std::string name;
};

// Kernel A calls tanhf and expf (the math library); kernel B is a float64
// reduction feeding an elementwise tail.
const Case kTanhExp = {{"Tensor[(n, m), float32]", "Tensor[(m), float32]"},
                       "let %a = add(%p0, %p1);\n"
                       "let %t = tanh(%a);\n"
                       "exp(%t)",
                       "so_add_tanh_exp"};
const Case kSoftmax = {{"Tensor[(n, 5), float64]"},
                       "let %s = softmax(%p0, axis=1);\n"
                       "multiply(%s, 3.0f64)",
                       "so_softmax_scale"};

struct Lowered {
  ir::Module module;
  codegen::LoweredKernel kernel;
};

Lowered lower(const Case &C) {
  ir::Module M = ir::parseModule(primitiveModuleText(C.types, C.body), C.name);
  ir::inferTypes(M);
  codegen::LoweredKernel L = lowerOrFail(M, C.name);
  return {std::move(M), std::move(L)};
}

/// Runs Fn (the kernel of L) and compares with the interpreter.
void expectMatchesInterpreter(const Lowered &L, RivetKernelFn Fn,
                              const SizeMap &Sizes, uint64_t Seed) {
  expectRunMatchesInterpreter(L.module, L.kernel, Fn, Sizes, Seed);
}

/// The shared object with both kernels, linked once for the test binary.
const std::vector<uint8_t> &hostLibrary() {
  static const std::vector<uint8_t> Bytes = [] {
    Lowered A = lower(kTanhExp), B = lower(kSoftmax);
    return codegen::linkSharedObject(
        codegen::emitObject({A.kernel.kernel, B.kernel.kernel}));
  }();
  return Bytes;
}

/// The dynamic symbol names and needed libraries of a shared object that
/// NativeLibrary::validate accepted (so every offset below is in range).
struct DynamicInfo {
  std::vector<std::string> needed, undefined, defined;
};

DynamicInfo dynamicInfo(const std::vector<uint8_t> &So) {
  auto At = [&](uint64_t Off, auto *V) {
    std::memcpy(V, So.data() + Off, sizeof(*V));
  };
  Elf64_Ehdr H;
  At(0, &H);
  // Addresses to file offsets through the PT_LOAD segments.
  std::vector<Elf64_Phdr> Loads;
  Elf64_Phdr Dyn{};
  for (int I = 0; I < H.e_phnum; ++I) {
    Elf64_Phdr P;
    At(H.e_phoff + I * sizeof(P), &P);
    if (P.p_type == PT_LOAD)
      Loads.push_back(P);
    if (P.p_type == PT_DYNAMIC)
      Dyn = P;
  }
  auto Off = [&](uint64_t Addr) {
    for (const Elf64_Phdr &L : Loads)
      if (Addr >= L.p_vaddr && Addr < L.p_vaddr + L.p_filesz)
        return L.p_offset + (Addr - L.p_vaddr);
    ADD_FAILURE() << "address not in the file";
    return uint64_t(0);
  };
  uint64_t StrTab = 0, SymTab = 0, Hash = 0;
  std::vector<uint64_t> Needed;
  for (uint64_t A = Dyn.p_vaddr;; A += sizeof(Elf64_Dyn)) {
    Elf64_Dyn D;
    At(Off(A), &D);
    if (D.d_tag == DT_NULL)
      break;
    if (D.d_tag == DT_STRTAB)
      StrTab = Off(D.d_un.d_ptr);
    if (D.d_tag == DT_SYMTAB)
      SymTab = Off(D.d_un.d_ptr);
    if (D.d_tag == DT_GNU_HASH)
      Hash = Off(D.d_un.d_ptr);
    if (D.d_tag == DT_NEEDED)
      Needed.push_back(D.d_un.d_val);
  }
  auto Str = [&](uint64_t O) {
    return std::string(reinterpret_cast<const char *>(So.data() + StrTab + O));
  };
  DynamicInfo Info;
  for (uint64_t N : Needed)
    Info.needed.push_back(Str(N));
  // Symbols are the GNU hash table's symoffset plus the hashed ones; the
  // undefined ones come first (below symoffset).
  uint32_t NBuckets, SymOffset, BloomSize;
  At(Hash, &NBuckets);
  At(Hash + 4, &SymOffset);
  At(Hash + 8, &BloomSize);
  uint64_t Chains = Hash + 16 + 8ull * BloomSize + 4ull * NBuckets;
  uint32_t Count = SymOffset;
  for (uint32_t I = 0; I < NBuckets; ++I) {
    uint32_t S;
    At(Hash + 16 + 8ull * BloomSize + 4ull * I, &S);
    if (!S)
      continue;
    for (uint32_t C = 0;; ++S) {
      At(Chains + 4ull * (S - SymOffset), &C);
      if (C & 1)
        break;
    }
    Count = std::max(Count, S + 1);
  }
  for (uint32_t I = 1; I < Count; ++I) {
    Elf64_Sym S;
    At(SymTab + I * sizeof(S), &S);
    (S.st_shndx == SHN_UNDEF ? Info.undefined : Info.defined)
        .push_back(Str(S.st_name));
  }
  return Info;
}

bool contains(const std::vector<std::string> &V, const std::string &S) {
  return std::find(V.begin(), V.end(), S) != V.end();
}

TEST(SharedObject, TwoKernelsLinkLoadAndMatchTheInterpreter) {
  const std::vector<uint8_t> &So = hostLibrary();
  ASSERT_GT(So.size(), sizeof(Elf64_Ehdr));
  EXPECT_NO_THROW(vm::NativeLibrary::validate(So, "kernels.so"));
  std::shared_ptr<vm::NativeLibrary> Lib =
      vm::NativeLibrary::load(So, "kernels.so");
  Lowered A = lower(kTanhExp), B = lower(kSoftmax);
  auto FnA =
      reinterpret_cast<RivetKernelFn>(Lib->symbol(kTanhExp.name));
  auto FnB =
      reinterpret_cast<RivetKernelFn>(Lib->symbol(kSoftmax.name));
  ASSERT_NE(FnA, FnB);
  uint64_t Seed = 100;
  for (const SizeMap &S : std::vector<SizeMap>{{{"n", 1}, {"m", 1}},
                                               {{"n", 7}, {"m", 33}},
                                               {{"n", 64}, {"m", 5}}}) {
    expectMatchesInterpreter(A, FnA, S, Seed);
    expectMatchesInterpreter(B, FnB, S, Seed + 10);
    Seed += 20;
  }
}

// exp scales by 2^n with vscalefps on AVX-512 and with two portable
// multiplies elsewhere; both round once, so the host's code and code for
// x86-64-v3 (which the host runs too) agree bit for bit, subnormal and
// overflowing results included.
TEST(SharedObject, ExpAgreesBitForBitWithAndWithoutVscalef) {
  if (!codegen::targetHasFeature(codegen::hostTarget(), "avx512f"))
    GTEST_SKIP() << "the host has no AVX-512";
  const Case Exp = {{"Tensor[(n), float32]"}, "exp(%p0)", "so_exp_scale"};
  Lowered L = lower(Exp);
  codegen::TargetOptions Portable = codegen::hostTarget();
  Portable.cpu = "x86-64-v3";
  Portable.features = "";
  std::vector<std::shared_ptr<vm::NativeLibrary>> Libs;
  for (const codegen::TargetOptions &T : {codegen::hostTarget(), Portable})
    Libs.push_back(vm::NativeLibrary::load(
        codegen::linkSharedObject(codegen::emitObject({L.kernel.kernel}, T)),
        "exp.so"));
  std::vector<float> X = {-103.2f,
                          88.73f,
                          -104.0f,
                          88.72f,
                          -87.3f,
                          -0.0f,
                          0.0f,
                          1e-8f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  for (float V = -104.0f; V < -86.0f; V += 0.37f) // subnormal results
    X.push_back(V);
  for (float V = -110.0f; V < 95.0f; V += 0.00731f)
    X.push_back(V);
  // Every length up to 70 too: the remainders run the helper's portable
  // scalar code and its narrower vector variants.
  std::vector<int64_t> Sizes;
  for (int64_t N = 1; N <= 70; ++N)
    Sizes.push_back(N);
  Sizes.push_back((int64_t)X.size());
  for (int64_t Size : Sizes) {
    std::vector<std::vector<float>> Y(2, std::vector<float>((size_t)Size));
    for (size_t I = 0; I < 2; ++I) {
      void *Buffers[] = {X.data(), Y[I].data()};
      reinterpret_cast<RivetKernelFn>(Libs[I]->symbol(Exp.name))(
          Buffers, &Size, testRuntime());
    }
    for (size_t I = 0; I < (size_t)Size; ++I)
      ASSERT_EQ(std::memcmp(&Y[0][I], &Y[1][I], sizeof(float)), 0)
          << "exp(" << X[I] << ") of " << Size << ": " << Y[0][I] << " vs "
          << Y[1][I];
  }
}

TEST(SharedObject, ExportsTheKernelsAndNeedsOnlyTheMathLibrary) {
  DynamicInfo Info = dynamicInfo(hostLibrary());
  EXPECT_TRUE(contains(Info.defined, kTanhExp.name));
  EXPECT_TRUE(contains(Info.defined, kSoftmax.name));
  // Whatever the generated code calls must come from libm or libc: the
  // library records libm.so.6 exactly when it calls into it.
  bool CallsMath = false;
  for (const std::string &U : Info.undefined) {
    bool Math = U == "expf" || U == "tanhf" || U == "exp" || U == "tanh";
    bool LibC = U == "memset" || U == "memcpy" || U == "memmove";
    EXPECT_TRUE(Math || LibC) << "unexpected undefined symbol " << U;
    CallsMath |= Math;
  }
  EXPECT_EQ(contains(Info.needed, "libm.so.6"), CallsMath);
  for (const std::string &N : Info.needed)
    EXPECT_TRUE(N == "libm.so.6" || N == "libc.so.6") << N;
}

TEST(SharedObject, ParallelKernelsRunAtOneTwoAndFourThreads) {
  // Both kernels have symbolic extents, so their outer loops are parallel:
  // the library reaches the thread pool through the runtime table passed to
  // each call, never by symbol (the test above checks its symbols).
  Lowered A = lower(kTanhExp), B = lower(kSoftmax);
  for (const Lowered *L : {&A, &B})
    EXPECT_NE(codegen::printLoopKernel(L->kernel.kernel).find(" parallel {"),
              std::string::npos)
        << codegen::printLoopKernel(L->kernel.kernel);
  auto Lib = vm::NativeLibrary::load(hostLibrary(), "kernels.so");
  auto FnA =
      reinterpret_cast<RivetKernelFn>(Lib->symbol(kTanhExp.name));
  auto FnB =
      reinterpret_cast<RivetKernelFn>(Lib->symbol(kSoftmax.name));
  uint64_t Seed = 300;
  for (int T : {1, 2, 4}) {
    SCOPED_TRACE(fmt::format("{} thread(s)", T));
    setNumThreads(T);
    for (const SizeMap &S : std::vector<SizeMap>{{{"n", 3000}, {"m", 67}},
                                                 {{"n", 2}, {"m", 40000}}}) {
      expectMatchesInterpreter(A, FnA, S, Seed);
      expectMatchesInterpreter(B, FnB, S, Seed + 10);
      Seed += 20;
    }
  }
  setNumThreads(0);
}

TEST(SharedObject, TwoLoadsOfTheSameBytesAreIndependent) {
  auto L1 = vm::NativeLibrary::load(hostLibrary(), "first");
  auto L2 = vm::NativeLibrary::load(hostLibrary(), "second");
  // Distinct mappings: the loader must not hand back the first library.
  EXPECT_NE(L1->symbol(kTanhExp.name), L2->symbol(kTanhExp.name));
  void *Kept = L2->symbol(kSoftmax.name);
  L1.reset();
  EXPECT_EQ(L2->symbol(kSoftmax.name), Kept);
}

TEST(SharedObject, MissingSymbolsAreErrorsNamingThem) {
  auto Lib = vm::NativeLibrary::load(hostLibrary(), "model.rvx: native code");
  try {
    Lib->symbol("no_such_kernel");
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("no_such_kernel"), std::string::npos)
        << E.what();
    EXPECT_NE(std::string(E.what()).find("model.rvx"), std::string::npos);
  }
  // A symbol of a dependency (libm) is not a kernel of this library.
  EXPECT_THROW(Lib->symbol("expf"), Error);
}

TEST(SharedObject, ForeignMachineLinksButIsRefusedAtLoad) {
  Lowered A = lower(kTanhExp);
  codegen::TargetOptions T;
  T.triple = vm::NativeLibrary::hostElfMachine() == EM_AARCH64
                 ? "x86_64-unknown-linux-gnu"
                 : "aarch64-unknown-linux-gnu";
  T.cpu = "generic";
  std::vector<uint8_t> So =
      codegen::linkSharedObject(codegen::emitObject({A.kernel.kernel}, T));
  ASSERT_GT(So.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr H;
  std::memcpy(&H, So.data(), sizeof(H));
  EXPECT_EQ(H.e_type, ET_DYN);
  EXPECT_NE(H.e_machine, vm::NativeLibrary::hostElfMachine());
  try {
    vm::NativeLibrary::load(So, "foreign.so");
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("machine"), std::string::npos)
        << E.what();
  }
}

TEST(SharedObject, LinkerFailuresAreErrors) {
  // Not ELF at all.
  EXPECT_THROW(codegen::linkSharedObject({1, 2, 3}), Error);
  // ELF magic followed by garbage: the linker's own diagnostic comes back.
  std::vector<uint8_t> Junk(256, 0x5a);
  std::memcpy(Junk.data(), ELFMAG, SELFMAG);
  try {
    codegen::linkSharedObject(Junk);
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("ld.lld"), std::string::npos)
        << E.what();
  }
}

TEST(SharedObject, AMissingLinkerIsNamed) {
  const char *Old = std::getenv("RIVET_LD_LLD");
  std::string Saved = Old ? Old : "";
  ::setenv("RIVET_LD_LLD", "/nonexistent/ld.lld", 1);
  try {
    codegen::findLinker();
    ADD_FAILURE() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("/nonexistent/ld.lld"),
              std::string::npos)
        << E.what();
  }
  if (Old)
    ::setenv("RIVET_LD_LLD", Saved.c_str(), 1);
  else
    ::unsetenv("RIVET_LD_LLD");
  EXPECT_NE(codegen::findLinker().find("ld.lld"), std::string::npos);
}

TEST(SharedObject, EveryTruncationIsRefused) {
  const std::vector<uint8_t> &So = hostLibrary();
  for (size_t N = 0; N < So.size(); ++N)
    EXPECT_THROW(vm::NativeLibrary::validate(std::span(So.data(), N), "cut"),
                 Error)
        << "a prefix of " << N << " of " << So.size() << " bytes";
}

/// Flips Mask into each byte of [Begin, End) in turn and loads the result:
/// it must be refused with rivet::Error or load (and unload) cleanly.
/// Returns how many were refused.
size_t flipAndLoad(const std::vector<uint8_t> &So, size_t Begin, size_t End,
                   uint8_t Mask) {
  size_t Refused = 0;
  std::vector<uint8_t> Bad = So;
  for (size_t I = Begin; I < End && I < So.size(); ++I) {
    Bad[I] ^= Mask;
    try {
      vm::NativeLibrary::load(Bad, "flipped");
    } catch (const Error &) {
      ++Refused;
    }
    Bad[I] = So[I];
  }
  return Refused;
}

TEST(SharedObject, FlippedHeaderBitsAreRefusedOrLoadCleanly) {
  const std::vector<uint8_t> &So = hostLibrary();
  Elf64_Ehdr H;
  std::memcpy(&H, So.data(), sizeof(H));
  size_t PhEnd = H.e_phoff + H.e_phnum * sizeof(Elf64_Phdr);
  size_t Refused = 0, Tried = 0;
  for (int Bit = 0; Bit < 8; ++Bit) {
    // The ELF header and the program headers, every bit.
    Refused += flipAndLoad(So, 0, sizeof(H), uint8_t(1u << Bit));
    Refused += flipAndLoad(So, H.e_phoff, PhEnd, uint8_t(1u << Bit));
    Tried += sizeof(H) + (PhEnd - H.e_phoff);
  }
  // Most header bits matter (magic, class, machine, offsets, sizes).
  EXPECT_GT(Refused, Tried / 4) << Refused << " of " << Tried;
}

TEST(SharedObject, EverySingleBitFlipIsRefusedOrLoadsCleanly) {
  // Loading runs no code of the library, so this holds for code bytes too.
  const std::vector<uint8_t> &So = hostLibrary();
  for (int Bit = 0; Bit < 8; ++Bit)
    flipAndLoad(So, 0, So.size(), uint8_t(1u << Bit));
}

TEST(SharedObject, RandomCorruptionOfLoaderDataIsRefusedOrLoadsCleanly) {
  // Several random bytes at once, mostly in what the loader reads (the
  // first, read-only segment with symbols, hash table, strings, versions
  // and relocations; the dynamic section), one anywhere in the file.
  const std::vector<uint8_t> &So = hostLibrary();
  Elf64_Ehdr H;
  std::memcpy(&H, So.data(), sizeof(H));
  Elf64_Phdr First{}, Dyn{};
  for (int I = 0; I < H.e_phnum; ++I) {
    Elf64_Phdr P;
    std::memcpy(&P, So.data() + H.e_phoff + I * sizeof(P), sizeof(P));
    if (P.p_type == PT_LOAD && First.p_type != PT_LOAD)
      First = P;
    if (P.p_type == PT_DYNAMIC)
      Dyn = P;
  }
  ASSERT_EQ(First.p_type, uint32_t(PT_LOAD));
  ASSERT_EQ(Dyn.p_type, uint32_t(PT_DYNAMIC));
  std::mt19937_64 Rng(42);
  size_t Refused = 0, Tries = 3000;
  for (size_t T = 0; T < Tries; ++T) {
    std::vector<uint8_t> Bad = So;
    Bad[Rng() % So.size()] = uint8_t(Rng());
    for (int K = int(Rng() % 8); K > 0; --K) {
      bool InDynamic = Rng() % 2;
      size_t Begin = InDynamic ? Dyn.p_offset : First.p_offset;
      size_t Size = InDynamic ? Dyn.p_filesz : First.p_filesz;
      Bad[Begin + Rng() % Size] = uint8_t(Rng());
    }
    try {
      vm::NativeLibrary::load(Bad, "corrupt");
    } catch (const Error &) {
      ++Refused;
    }
  }
  EXPECT_GT(Refused, 0u);
}

} // namespace
