//===- rvx_format_test.cc - The .rvx file: round trip and robustness ------===//
//
// Executables (hand-built ones that use every opcode and kernel kind, and
// compiled tests/programs) are serialized and read back: the disassembly,
// tables and constant bytes must be identical and the VM must give identical
// results. Then every truncation and many byte flips of real files must
// either load identically (a flip in padding) or throw rivet::Error; the
// errors must say what is wrong.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Importer.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Npy.h"
#include "vm/Executable.h"
#include "vm/RvxFormat.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"
#include "vm/cuda/Gpu.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

namespace fs = std::filesystem;
using namespace rivet;
using namespace rivet::vm;

namespace {

const fs::path ProgramsDir = RIVET_SOURCE_DIR "/tests/programs";

Instruction ins(Opcode Op, uint32_t Dst = 0, uint32_t A = 0, uint32_t B = 0,
                uint32_t C = 0, uint32_t D = 0, int64_t Imm = 0) {
  return Instruction{Op, Dst, A, B, C, D, Imm};
}

void addFunction(Executable &E, VMFunction F) {
  E.functionIndex[F.name] = (uint32_t)E.functions.size();
  E.functions.push_back(std::move(F));
}

/// main(x: float32[2, 3]) = ident(relu(x + c0) * c1), with a closure call
/// and a tail call; plus a function `zoo`, never called, that uses every
/// other opcode, and every kind of table entry.
std::shared_ptr<Executable> handBuilt() {
  auto E = std::make_shared<Executable>();
  E->constants.push_back(Tensor::fromVector<float>(
      {0.5f, -1.0f, 2.0f, -3.5f, 0.0f, 1.25f}, {2, 3}));
  E->constants.push_back(Tensor::scalar<float>(3.0f));
  E->constants.push_back(Tensor::fromVector<int64_t>({1, 2, 3}, {3}));
  E->constants.push_back(Tensor::empty({0, 4}, DType::Float64)); // no bytes
  E->constants.push_back(Tensor::fromVector<uint8_t>({7}, {1, 1, 1}));
  E->constants.push_back(Tensor::zeros({5, 7}, DType::Float16));
  E->kernels.push_back({KernelEntry::Kind::Builtin, "add", {}, nullptr});
  E->kernels.push_back({KernelEntry::Kind::Builtin, "relu", {}, nullptr});
  E->kernels.push_back({KernelEntry::Kind::Builtin, "multiply", {}, nullptr});
  E->kernels.push_back({KernelEntry::Kind::ShapeFunction, "transpose",
                        Attrs{{"axes", std::vector<int64_t>{1, 0}}}, nullptr});
  E->kernels.push_back({KernelEntry::Kind::AllocatingBuiltin, "split_to_list",
                        Attrs{{"axis", int64_t(0)},
                              {"keepdims", int64_t(0)},
                              {"note", std::string("x")},
                              {"w", Tensor::fromVector<float>({1, 2}, {2})}},
                        nullptr});
  E->constructors.push_back({"Option", "None", 0});
  E->constructors.push_back({"Option", "Some", 1});
  E->strings.push_back("unreachable: the condition was false");
  E->strings.push_back("");

  // main: r0 = x.
  VMFunction Main;
  Main.name = "main";
  Main.numParams = 1;
  Main.numRegisters = 9;
  Main.shapes = {2, 3};
  Main.pool = {0, 1, 3, /*relu*/ 3, 4, /*mul*/ 4, 2, 5, /*closure*/ 5};
  Main.code = {
      ins(Opcode::LoadConst, 1, 0, 0, 0),
      ins(Opcode::LoadConst, 2, 0, 0, 1),
      ins(Opcode::AllocStorage, 6, 0, 0, 0, 0, 48),
      ins(Opcode::AllocTensor, 3, 6, 0, (uint32_t)DType::Float32, 2, 0),
      ins(Opcode::InvokeKernel, 0, 0, 3, 0, 2), // r3 = add(r0, r1)
      ins(Opcode::AllocTensor, 4, 6, 0, (uint32_t)DType::Float32, 2, 24),
      ins(Opcode::InvokeKernel, 0, 3, 2, 1, 1), // r4 = relu(r3)
      ins(Opcode::KillRegister, 3),
      ins(Opcode::ShapeOf, 7, 4),
      ins(Opcode::AllocTensorReg, 5, kNoStorage, 7, (uint32_t)DType::Float32),
      ins(Opcode::InvokeKernel, 0, 5, 3, 2, 2), // r5 = multiply(r4, r2)
      ins(Opcode::AllocClosure, 8, 0, 0, 1),
      ins(Opcode::TailInvokeClosure, 0, 8, 1, 8),
  };
  addFunction(*E, Main);

  // ident(x) = x, called as a closure with nothing captured.
  VMFunction Ident;
  Ident.name = "ident";
  Ident.numParams = 1;
  Ident.numRegisters = 2;
  Ident.code = {ins(Opcode::Move, 1, 0), ins(Opcode::Ret, 0, 1)};
  addFunction(*E, Ident);

  // zoo(x, y): every remaining opcode.
  VMFunction Zoo;
  Zoo.name = "zoo";
  Zoo.numParams = 2;
  Zoo.numRegisters = 16;
  Zoo.shapes = {4, 1, 2};
  Zoo.pool = {0,
              /*fields*/ 1,
              /*ident arg*/ 2,
              /*shape fn*/ 0,
              10,
              /*alloc*/ 0,
              /*transpose-ish*/ 0,
              1};
  Zoo.code = {
      ins(Opcode::LoadConsti, 2, 0, 0, 0, 0, 1),
      ins(Opcode::LoadConsti, 3, 0, 0, 0, 0, -5),
      ins(Opcode::If, 0, 2, 3, 0, 0, 3),
      ins(Opcode::Goto, 0, 0, 0, 0, 0, 2),
      ins(Opcode::Fatal, 0, 0, 0, 0),
      ins(Opcode::AllocADT, 4, 0, 1, (uint32_t)ADTObj::kTupleTag),
      ins(Opcode::AllocADT, 5, 1, 1, 1),
      ins(Opcode::AllocADT, 6, 0, 0, 0),
      ins(Opcode::GetField, 7, 4, 0, 0, 0, 0),
      ins(Opcode::GetTag, 8, 5),
      ins(Opcode::ReshapeTensor, 9, 0, 2),
      ins(Opcode::DeviceCopy, 11, 9, 0, 0),
      ins(Opcode::InvokeKernel, 0, 3, 2, 3, 1),
      ins(Opcode::InvokeKernel, 12, 5, 1, 4, 1),
      ins(Opcode::AllocStorage, 13, 3, 0, 0, 1),
      ins(Opcode::AllocTensor, 14, 13, 0, (uint32_t)DType::Int8, 3, 8),
      ins(Opcode::Invoke, 15, 2, 1, 1),
      ins(Opcode::InvokeClosure, 15, 2, 1, 15),
      ins(Opcode::LoadConst, 1, 0, 0, 5),
      ins(Opcode::Fatal, 0, 0, 0, 1),
      ins(Opcode::TailInvoke, 0, 6, 2, 2),
  };
  addFunction(*E, Zoo);

  E->mainParams.push_back({"x", true, DType::Float32,
                           std::vector<int64_t>{2, 3},
                           "Tensor[(2, 3), float32]"});
  E->outputNames = {"y"};
  E->resolve();
  return E;
}

/// A second entry point for the parameter table: a dynamic dimension and an
/// unknown rank (not runnable; only its tables matter).
std::shared_ptr<Executable> withParamKinds() {
  auto E = handBuilt();
  E->mainParams = {
      {"tokens", true, DType::Int64, std::vector<int64_t>{-1, 16},
       "Tensor[(?, 16), int64]"},
      {"state", true, DType::BFloat16, std::nullopt, "Tensor[?, bfloat16]"},
      {"", false, DType::Float32, std::nullopt, "(Tensor[(1), float32],)"}};
  E->functions[0].numParams = 3;
  E->outputNames = {"a", "", "c"};
  return E;
}

std::vector<uint8_t> constantBytes(const Tensor &T) {
  const uint8_t *P = static_cast<const uint8_t *>(T.rawData());
  return std::vector<uint8_t>(P, P + T.nbytes());
}

void expectSameExecutable(const Executable &A, const Executable &B) {
  EXPECT_EQ(A.disassemble(), B.disassemble());
  ASSERT_EQ(A.functions.size(), B.functions.size());
  for (size_t I = 0; I < A.functions.size(); ++I) {
    const VMFunction &F = A.functions[I], &G = B.functions[I];
    EXPECT_EQ(F.name, G.name);
    EXPECT_EQ(F.numParams, G.numParams);
    EXPECT_EQ(F.numRegisters, G.numRegisters);
    EXPECT_EQ(F.pool, G.pool);
    EXPECT_EQ(F.shapes, G.shapes);
    ASSERT_EQ(F.code.size(), G.code.size());
    for (size_t K = 0; K < F.code.size(); ++K) {
      const Instruction &X = F.code[K], &Y = G.code[K];
      EXPECT_TRUE(X.op == Y.op && X.dst == Y.dst && X.a == Y.a && X.b == Y.b &&
                  X.c == Y.c && X.d == Y.d && X.imm == Y.imm)
          << F.name << " instruction " << K;
    }
  }
  EXPECT_EQ(A.functionIndex, B.functionIndex);
  ASSERT_EQ(A.constants.size(), B.constants.size());
  for (size_t I = 0; I < A.constants.size(); ++I) {
    EXPECT_EQ(A.constants[I].dtype(), B.constants[I].dtype());
    EXPECT_EQ(A.constants[I].shape(), B.constants[I].shape());
    EXPECT_EQ(constantBytes(A.constants[I]), constantBytes(B.constants[I]))
        << "constant " << I;
  }
  ASSERT_EQ(A.kernels.size(), B.kernels.size());
  for (size_t I = 0; I < A.kernels.size(); ++I) {
    EXPECT_EQ(A.kernels[I].kind, B.kernels[I].kind);
    EXPECT_EQ(A.kernels[I].op, B.kernels[I].op);
    EXPECT_TRUE(A.kernels[I].attrs == B.kernels[I].attrs);
    if (B.kernels[I].isNative()) { // resolved
      EXPECT_NE(B.nativeKernels.at(B.kernels[I].native).fn, nullptr);
    } else if (B.kernels[I].kind == KernelEntry::Kind::ListPrimitive) {
      EXPECT_EQ(B.kernels[I].info, nullptr); // the VM runs it itself
    } else {
      EXPECT_NE(B.kernels[I].info, nullptr);
    }
  }
  ASSERT_EQ(A.nativeKernels.size(), B.nativeKernels.size());
  for (size_t I = 0; I < A.nativeKernels.size(); ++I) {
    const NativeKernel &P = A.nativeKernels[I], &Q = B.nativeKernels[I];
    EXPECT_EQ(P.symbol, Q.symbol);
    ASSERT_EQ(P.buffers.size(), Q.buffers.size());
    for (size_t K = 0; K < P.buffers.size(); ++K) {
      EXPECT_EQ(P.buffers[K].dtype, Q.buffers[K].dtype);
      EXPECT_EQ(P.buffers[K].dims, Q.buffers[K].dims);
    }
    ASSERT_EQ(P.sizeSources.size(), Q.sizeSources.size());
    for (size_t K = 0; K < P.sizeSources.size(); ++K) {
      EXPECT_EQ(P.sizeSources[K].buffer, Q.sizeSources[K].buffer);
      EXPECT_EQ(P.sizeSources[K].axis, Q.sizeSources[K].axis);
    }
    ASSERT_EQ(P.broadcastSizes.size(), Q.broadcastSizes.size());
    for (size_t K = 0; K < P.broadcastSizes.size(); ++K)
      EXPECT_EQ(P.broadcastSizes[K].operands, Q.broadcastSizes[K].operands);
    ASSERT_EQ(P.emptyReductions.size(), Q.emptyReductions.size());
    for (size_t K = 0; K < P.emptyReductions.size(); ++K) {
      EXPECT_EQ(P.emptyReductions[K].op, Q.emptyReductions[K].op);
      EXPECT_EQ(P.emptyReductions[K].reduced, Q.emptyReductions[K].reduced);
      EXPECT_EQ(P.emptyReductions[K].kept, Q.emptyReductions[K].kept);
    }
  }
  ASSERT_EQ(A.nativeCode.has_value(), B.nativeCode.has_value());
  if (A.nativeCode) {
    EXPECT_EQ(A.nativeCode->sharedObject, B.nativeCode->sharedObject);
  }
  ASSERT_EQ(A.constructors.size(), B.constructors.size());
  for (size_t I = 0; I < A.constructors.size(); ++I) {
    EXPECT_EQ(A.constructors[I].adt, B.constructors[I].adt);
    EXPECT_EQ(A.constructors[I].name, B.constructors[I].name);
    EXPECT_EQ(A.constructors[I].arity, B.constructors[I].arity);
  }
  EXPECT_EQ(A.strings, B.strings);
  for (auto Ps : {&Executable::mainParams, &Executable::mainResults}) {
    ASSERT_EQ((A.*Ps).size(), (B.*Ps).size());
    for (size_t I = 0; I < (A.*Ps).size(); ++I) {
      const ParamInfo &P = (A.*Ps)[I], &Q = (B.*Ps)[I];
      EXPECT_EQ(P.name, Q.name);
      EXPECT_EQ(P.isTensor, Q.isTensor);
      EXPECT_EQ(P.dtype, Q.dtype);
      EXPECT_EQ(P.dims, Q.dims);
      EXPECT_EQ(P.typeText, Q.typeText);
    }
  }
  EXPECT_EQ(A.outputNames, B.outputNames);
  EXPECT_EQ(A.serialize(), B.serialize());
}

/// Loads exactly these bytes from a heap buffer of their size, so that
/// AddressSanitizer sees any read past the end.
std::shared_ptr<Executable> loadBytes(const std::vector<uint8_t> &Bytes,
                                      size_t Size, const std::string &What) {
  std::unique_ptr<uint8_t[]> Copy(new uint8_t[std::max<size_t>(Size, 1)]);
  if (Size)
    std::memcpy(Copy.get(), Bytes.data(), Size);
  return Executable::deserialize(Copy.get(), Size, What);
}

std::string errorOf(const std::vector<uint8_t> &Bytes,
                    const std::string &What = "model.rvx") {
  try {
    loadBytes(Bytes, Bytes.size(), What);
  } catch (const Error &E) {
    return E.what();
  }
  return "(loaded)";
}

template <typename T> T readAt(const std::vector<uint8_t> &B, size_t Off) {
  T V;
  std::memcpy(&V, B.data() + Off, sizeof(T));
  return V;
}
template <typename T> void writeAt(std::vector<uint8_t> &B, size_t Off, T V) {
  std::memcpy(B.data() + Off, &V, sizeof(T));
}

/// The section table of a well-formed file, parsed independently of the
/// loader (the layout is in docs/executable-format.md).
struct TableInfo {
  uint32_t headerSize;
  size_t tableStart;
  struct Entry {
    uint32_t kind, checksum;
    uint64_t offset, size;
  };
  std::vector<Entry> sections;
};

TableInfo parseTable(const std::vector<uint8_t> &B) {
  TableInfo T;
  T.headerSize = readAt<uint32_t>(B, 16);
  size_t Pos = 32;
  Pos += 4 + readAt<uint32_t>(B, Pos); // producer
  Pos += 4 + readAt<uint32_t>(B, Pos); // target
  uint32_t NF = readAt<uint32_t>(B, Pos);
  Pos += 4;
  for (uint32_t I = 0; I < NF; ++I)
    Pos += 4 + readAt<uint32_t>(B, Pos);
  uint32_t NS = readAt<uint32_t>(B, Pos);
  Pos += 4;
  T.tableStart = Pos;
  for (uint32_t I = 0; I < NS; ++I, Pos += 24)
    T.sections.push_back(
        {readAt<uint32_t>(B, Pos), readAt<uint32_t>(B, Pos + 4),
         readAt<uint64_t>(B, Pos + 8), readAt<uint64_t>(B, Pos + 16)});
  return T;
}

/// Whether byte Off lies in no section and not in the header: padding.
bool isPadding(const TableInfo &T, size_t Off) {
  if (Off < T.headerSize)
    return false;
  for (const auto &S : T.sections)
    if (Off >= S.offset && Off < S.offset + S.size)
      return false;
  return true;
}

void fixHeaderChecksum(std::vector<uint8_t> &B) {
  uint32_t HS = readAt<uint32_t>(B, 16);
  writeAt<uint32_t>(B, 12,
                    rvx::headerChecksum(B.data(), HS, readAt<uint32_t>(B, 8)));
}

/// Rewrites the header with another target and CPU feature list (the
/// sections stay where they are; the header must still fit before them).
std::vector<uint8_t> withHeader(const std::vector<uint8_t> &B,
                                const std::string &Target,
                                const std::vector<std::string> &Features) {
  TableInfo T = parseTable(B);
  std::vector<uint8_t> H(B.begin(), B.begin() + 32);
  auto Str = [&](const std::string &S) {
    uint32_t N = (uint32_t)S.size();
    H.insert(H.end(), (uint8_t *)&N, (uint8_t *)&N + 4);
    H.insert(H.end(), S.begin(), S.end());
  };
  Str(rvx::kProducer);
  Str(Target);
  uint32_t NF = (uint32_t)Features.size();
  H.insert(H.end(), (uint8_t *)&NF, (uint8_t *)&NF + 4);
  for (const std::string &F : Features)
    Str(F);
  H.insert(H.end(), B.begin() + T.tableStart - 4, B.begin() + T.headerSize);
  uint64_t FirstSection = UINT64_MAX;
  for (const auto &S : T.sections)
    FirstSection = std::min(FirstSection, S.offset);
  EXPECT_LE(H.size(), FirstSection);
  std::vector<uint8_t> R = B;
  std::fill(R.begin(), R.begin() + FirstSection, 0);
  std::copy(H.begin(), H.end(), R.begin());
  writeAt<uint32_t>(R, 16, (uint32_t)H.size());
  fixHeaderChecksum(R);
  return R;
}

std::string tempPath(const std::string &Name) {
  return (fs::temp_directory_path() / (std::to_string(::getpid()) + "_" + Name))
      .string();
}

void writeFile(const std::string &Path, const std::vector<uint8_t> &B,
               size_t Size) {
  std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
  Out.write(reinterpret_cast<const char *>(B.data()), (std::streamsize)Size);
}

std::vector<Tensor> runMain(const std::shared_ptr<Executable> &E,
                            const Tensor &X) {
  VirtualMachine VM(E);
  ObjectRef R = VM.invoke("main", {makeTensor(X)});
  return {asTensor(R, "result")};
}

Tensor sampleInput() {
  return Tensor::fromVector<float>({1, 2, -3, 4, -5, 6}, {2, 3});
}

bool bitwiseEqual(const Tensor &A, const Tensor &B) {
  return A.dtype() == B.dtype() && A.shape() == B.shape() &&
         constantBytes(A) == constantBytes(B);
}

/// Checks truncation at every Step-th offset and flips of single bytes:
/// every load either throws rivet::Error or gives an executable identical
/// to the original (the flip was in padding). Returns the number of flips
/// that loaded.
size_t
corruptAndLoad(const std::shared_ptr<Executable> &Exe, size_t Step,
               size_t RandomFlips, bool FlipEveryByte,
               const std::function<void(std::shared_ptr<Executable>)> &Run) {
  std::vector<uint8_t> Bytes = Exe->serialize();
  TableInfo T = parseTable(Bytes);
  for (size_t L = 0; L < Bytes.size(); L += Step) {
    try {
      loadBytes(Bytes, L, "cut.rvx");
      ADD_FAILURE() << "truncated at " << L << " of " << Bytes.size()
                    << " bytes but it loaded";
    } catch (const Error &E) {
      EXPECT_NE(std::string(E.what()).find("cut.rvx: "), std::string::npos)
          << E.what();
    }
  }
  std::mt19937_64 Rng(20240611);
  std::vector<std::pair<size_t, uint8_t>> Flips;
  for (size_t I = 0; I < RandomFlips; ++I)
    Flips.emplace_back(Rng() % Bytes.size(), (uint8_t)(1 + Rng() % 255));
  if (FlipEveryByte)
    for (size_t Off = 0; Off < Bytes.size(); ++Off)
      Flips.emplace_back(Off, (uint8_t)(1u << (Off % 8)));
  size_t Loaded = 0;
  for (auto [Off, Mask] : Flips) {
    std::vector<uint8_t> B = Bytes;
    B[Off] ^= Mask;
    std::shared_ptr<Executable> Got;
    try {
      Got = loadBytes(B, B.size(), "flip.rvx");
    } catch (const Error &E) {
      EXPECT_NE(std::string(E.what()).find("flip.rvx: "), std::string::npos)
          << E.what();
      continue;
    }
    ++Loaded;
    EXPECT_TRUE(isPadding(T, Off))
        << "byte " << Off << " flipped by " << (int)Mask
        << " outside padding but the file loaded";
    EXPECT_EQ(Got->serialize(), Bytes) << "flip at " << Off;
    if (Run)
      Run(Got);
  }
  return Loaded;
}

//===----------------------------------------------------------------------===//

TEST(RvxFormat, Crc32cKnownValues) {
  const char *S = "123456789";
  EXPECT_EQ(rvx::crc32c(reinterpret_cast<const uint8_t *>(S), 9), 0xE3069283u);
  EXPECT_EQ(rvx::crc32c(nullptr, 0), 0u);
  std::vector<uint8_t> Zeros(32, 0);
  EXPECT_EQ(rvx::crc32c(Zeros.data(), 32), 0x8A9136AAu); // RFC 3720 B.4
}

TEST(RvxFormat, HeaderLayout) {
  std::vector<uint8_t> B = handBuilt()->serialize();
  EXPECT_EQ(std::string(B.begin(), B.begin() + 8), "RIVETRVX");
  // Without broadcast sizes the file is version 2 (readable by version-2
  // runtimes).
  EXPECT_EQ(readAt<uint32_t>(B, 8), 2u);
  EXPECT_EQ(readAt<uint64_t>(B, 24), B.size());
  TableInfo T = parseTable(B);
  EXPECT_EQ(T.sections.size(), 6u); // no native code section
  for (const auto &S : T.sections) {
    EXPECT_EQ(S.offset % 64, 0u) << rvx::sectionName(S.kind);
    EXPECT_GE(S.offset, T.headerSize);
    EXPECT_EQ(S.checksum, rvx::crc32c(B.data() + S.offset, S.size));
    EXPECT_NE(S.kind, (uint32_t)rvx::SectionKind::NativeCode);
  }
}

TEST(RvxFormat, RoundTripHandBuilt) {
  for (auto E : {handBuilt(), withParamKinds()}) {
    std::vector<uint8_t> B = E->serialize();
    auto Got = Executable::deserialize(B.data(), B.size(), "mem.rvx");
    expectSameExecutable(*E, *Got);
  }
}

TEST(RvxFormat, HandBuiltRunsIdenticallyAfterLoad) {
  auto E = handBuilt();
  Tensor X = sampleInput();
  std::vector<Tensor> Want = runMain(E, X);
  // relu(x + c0) * 3
  std::vector<float> Expect = {4.5f, 3.0f, 0.0f, 1.5f, 0.0f, 21.75f};
  ASSERT_EQ(Want[0].toDoubleVector(),
            std::vector<double>(Expect.begin(), Expect.end()));
  std::string Path = tempPath("hand.rvx");
  E->save(Path);
  auto Loaded = Executable::load(Path);
  expectSameExecutable(*E, *Loaded);
  std::vector<Tensor> Got = runMain(Loaded, X);
  EXPECT_TRUE(bitwiseEqual(Got[0], Want[0]));
  std::remove(Path.c_str());
}

TEST(RvxFormat, LoadMapsConstantsWithoutCopy) {
  auto E = handBuilt();
  std::string Path = tempPath("mapped.rvx");
  E->save(Path);
  std::vector<uint8_t> Bytes = E->serialize();
  TableInfo T = parseTable(Bytes);
  uint64_t ConstOff = 0;
  for (const auto &S : T.sections)
    if (S.kind == (uint32_t)rvx::SectionKind::Constants)
      ConstOff = S.offset;
  Tensor Kept;
  {
    auto L = Executable::load(Path);
    // Every constant is 64-byte aligned and they all lie in one mapping at
    // the distances the file gives them (a copy would be scattered).
    const uint8_t *First =
        static_cast<const uint8_t *>(L->constants[0].rawData());
    for (const Tensor &C : L->constants) {
      EXPECT_EQ((uintptr_t)C.rawData() % 64, 0u);
      size_t Delta = static_cast<const uint8_t *>(C.rawData()) - First;
      EXPECT_EQ(std::memcmp(Bytes.data() + ConstOff +
                                readAt<uint64_t>(Bytes, ConstOff + 4 + 8) +
                                Delta,
                            C.rawData(), C.nbytes()),
                0);
    }
    EXPECT_EQ(L->constants[5].storage()->size(), L->constants[5].nbytes());
    Kept = L->constants[0];
  }
  // The executable is gone; the tensor keeps the mapping alive.
  std::remove(Path.c_str());
  EXPECT_EQ(Kept.toDoubleVector(),
            (std::vector<double>{0.5, -1.0, 2.0, -3.5, 0.0, 1.25}));
  // deserialize() of bytes in memory copies instead (the caller owns them).
  auto M = Executable::deserialize(Bytes.data(), Bytes.size(), "mem.rvx");
  const uint8_t *P = static_cast<const uint8_t *>(M->constants[0].rawData());
  EXPECT_TRUE(P < Bytes.data() || P >= Bytes.data() + Bytes.size());
}

TEST(RvxFormat, ErrorsSayWhatIsWrong) {
  auto E = handBuilt();
  const std::vector<uint8_t> Good = E->serialize();
  TableInfo T = parseTable(Good);
  auto SectionOf = [&](rvx::SectionKind K) {
    for (const auto &S : T.sections)
      if (S.kind == (uint32_t)K)
        return S;
    ADD_FAILURE() << "no section";
    return T.sections[0];
  };
  auto Expect = [&](const std::vector<uint8_t> &B, const std::string &Msg) {
    std::string Got = errorOf(B);
    EXPECT_NE(Got.find(Msg), std::string::npos)
        << "expected '" << Msg << "' in: " << Got;
    EXPECT_EQ(Got.rfind("model.rvx: ", 0), 0u) << Got;
  };

  std::vector<uint8_t> B = Good;
  B[3] = 'x';
  Expect(B, "not a .rvx file (bad magic)");
  Expect({},
         "truncated: the header needs at least 32 bytes but the file has 0");
  B = Good;
  writeAt<uint32_t>(B, 8, rvx::kFormatVersion + 1);
  Expect(B, fmt::format("model.rvx: format version {} is not supported (this "
                        "runtime reads 1 to {})",
                        rvx::kFormatVersion + 1, rvx::kFormatVersion));
  B = Good;
  B[40] ^= 1;
  Expect(B, "model.rvx: header checksum mismatch");

  auto Fn = SectionOf(rvx::SectionKind::Functions);
  B = Good;
  B[Fn.offset + Fn.size / 2] ^= 0x10;
  Expect(B, "model.rvx: section 'functions' checksum mismatch");

  auto Co = SectionOf(rvx::SectionKind::Constants);
  B.assign(Good.begin(), Good.begin() + Co.offset + 10);
  Expect(B, fmt::format("model.rvx: truncated: section 'constants' ends at "
                        "byte {} but the file has {}",
                        Co.offset + Co.size, Co.offset + 10));
  B = Good;
  B.push_back(0);
  Expect(B, "1 unexpected bytes after the end of the file");

  Expect(withHeader(Good, "cuda", {}),
         "the file targets 'cuda', which needs format version 5");
  Expect(withHeader(Good, "tpu", {}),
         "the file targets 'tpu' but this runtime runs only 'cpu' and 'cuda'");
  Expect(withHeader(Good, "cpu", {"quantum-tunnelling"}),
         "unknown CPU feature 'quantum-tunnelling'");
#if defined(__x86_64__)
  // Every x86-64 CPU has SSE2: the file loads.
  EXPECT_EQ(errorOf(withHeader(Good, "cpu", {"sse2"})), "(loaded)");
  if (!__builtin_cpu_supports("avx512f"))
    Expect(withHeader(Good, "cpu", {"avx512f"}),
           "needs CPU feature 'avx512f', which this CPU does not have");
#endif

  // A section table entry of an unknown kind / native code in place of a
  // required section.
  for (auto [Kind, Msg] : std::vector<std::pair<uint32_t, std::string>>{
           {99, "unknown section kind 99"},
           {7, "section 'strings' is missing"},
           {2, "section 'constants' appears twice"}}) {
    B = Good;
    writeAt<uint32_t>(B, T.tableStart, Kind); // the first entry: strings
    fixHeaderChecksum(B);
    Expect(B, Msg);
  }
  B = Good;
  writeAt<uint64_t>(B, T.tableStart + 8, T.sections[0].offset + 8);
  fixHeaderChecksum(B);
  Expect(B, "section 'strings' offset");
  Expect(B, "is not a multiple of 64");

  // Sections that overlap: point 'kernels' at the start of 'functions'.
  B = Good;
  for (size_t I = 0; I < T.sections.size(); ++I)
    if (T.sections[I].kind == (uint32_t)rvx::SectionKind::Kernels)
      writeAt<uint64_t>(B, T.tableStart + 24 * I + 8, Fn.offset);
  fixHeaderChecksum(B);
  Expect(B, "overlap");
}

/// Corrupt content with a valid checksum: the loader's own checks.
TEST(RvxFormat, ValidatesIndicesEvenWithGoodChecksums) {
  auto Check = [](const std::function<void(Executable &)> &Break,
                  const std::string &Msg) {
    auto E = handBuilt();
    Break(*E);
    std::vector<uint8_t> B = E->serialize();
    std::string Got = errorOf(B);
    EXPECT_NE(Got.find(Msg), std::string::npos)
        << "expected '" << Msg << "' in: " << Got;
  };
  Check([](Executable &E) { E.functions[0].code[0].dst = 9; },
        "function 'main': instruction 0 (LoadConst): dst register 9 is out "
        "of range (the function has 9 registers)");
  Check([](Executable &E) { E.functions[0].code[0].c = 6; },
        "constant index 6 is out of range (6 constants)");
  Check([](Executable &E) { E.functions[0].code[4].c = 5; },
        "kernel index 5 is out of range (5 kernels)");
  Check([](Executable &E) { E.functions[0].code[4].b = 40; },
        "outside the pool of 9 entries");
  Check([](Executable &E) { E.functions[0].pool[2] = 1000; },
        "register 1000 is out of range");
  Check([](Executable &E) { E.functions[2].code[2].imm = 100; },
        "jump offset 100 leaves the function (21 instructions)");
  Check([](Executable &E) { E.functions[2].code[3].imm = -4; },
        "jump offset -4 leaves the function");
  Check([](Executable &E) { E.functions[2].code[4].c = 2; },
        "string index 2 is out of range (2 strings)");
  Check([](Executable &E) { E.functions[2].code[6].c = 2; },
        "constructor tag 2 is out of range (2 constructors)");
  Check([](Executable &E) { E.functions[2].code[16].c = 3; },
        "function index 3 is out of range (3 functions)");
  Check([](Executable &E) { E.functions[2].code[16].b = 2; },
        "passes 2 arguments to 'ident', which takes 1");
  Check([](Executable &E) { E.functions[2].code[15].c = 24; },
        "invalid dtype code 24");
  Check([](Executable &E) { E.functions[2].code[15].b = 2; },
        "shape [2, 5) is outside the shapes of 3 entries");
  Check([](Executable &E) { E.functions[2].code[15].d = 65; },
        "rank 65 (at most 64)");
  Check([](Executable &E) { E.functions[2].code.resize(19); },
        "the last instruction (LoadConst) can fall off the end");
  Check([](Executable &E) { E.functions[1].code.pop_back(); },
        "the last instruction (Move) can fall off the end");
  Check([](Executable &E) { E.functions[1].numParams = 3; },
        "function 'ident' has 3 parameters but only 2 registers");
  Check([](Executable &E) { E.functions[1].name = "main"; },
        "function 'main' is defined twice");
  Check([](Executable &E) { E.functions[1].code[0].op = (Opcode)kNumOpcodes; },
        fmt::format("invalid opcode {}", kNumOpcodes));
  Check([](Executable &E) { E.kernels[1].op = "no_such_op"; },
        "no kernel for operator 'no_such_op'");
  Check([](Executable &E) { E.kernels[1].kind = (KernelEntry::Kind)6; },
        "kernel 1 has invalid kind 6");
  Check(
      [](Executable &E) {
        E.kernels[1].kind = KernelEntry::Kind::ListPrimitive;
      },
      "no List primitive 'relu'");
  Check([](Executable &E) { E.kernels[1].kind = KernelEntry::Kind::Native; },
        "no native kernel 'relu'");
  Check([](Executable &E) { E.mainParams[0].dtype = (DType)40; },
        "parameter 'x' has invalid dtype code 40");
  Check([](Executable &E) { E.mainParams[0].dims = std::vector<int64_t>{-2}; },
        "parameter 'x' has invalid extent -2");
}

TEST(RvxFormat, TruncatedAndFlippedHandBuilt) {
  auto E = handBuilt();
  Tensor X = sampleInput();
  Tensor Want = runMain(E, X)[0];
  size_t Runs = 0;
  size_t Loaded =
      corruptAndLoad(E, 1, 3000, true, [&](std::shared_ptr<Executable> G) {
        // The flipped file runs and gives bit-identical results.
        EXPECT_TRUE(bitwiseEqual(runMain(G, X)[0], Want));
        ++Runs;
      });
  // Some flips land in the padding between sections and must load.
  EXPECT_GT(Loaded, 0u);
  EXPECT_EQ(Runs, Loaded);
}

TEST(RvxFormat, TruncatedAndFlippedFilesOnDisk) {
  auto E = handBuilt();
  std::vector<uint8_t> Bytes = E->serialize();
  std::string Path = tempPath("corrupt.rvx");
  for (size_t L = 0; L < Bytes.size(); L += 13) {
    writeFile(Path, Bytes, L);
    EXPECT_THROW(Executable::load(Path), Error) << "truncated at " << L;
  }
  std::mt19937 Rng(7);
  TableInfo T = parseTable(Bytes);
  for (int I = 0; I < 200; ++I) {
    std::vector<uint8_t> B = Bytes;
    size_t Off = Rng() % B.size();
    B[Off] ^= (uint8_t)(1 + Rng() % 255);
    writeFile(Path, B, B.size());
    try {
      auto G = Executable::load(Path);
      EXPECT_TRUE(isPadding(T, Off));
      EXPECT_EQ(G->serialize(), Bytes);
    } catch (const Error &Err) {
      EXPECT_EQ(std::string(Err.what()).rfind(Path + ": ", 0), 0u)
          << Err.what();
    }
  }
  std::remove(Path.c_str());
  try {
    Executable::load(Path);
    ADD_FAILURE() << "loaded a missing file";
  } catch (const Error &Err) {
    EXPECT_NE(std::string(Err.what()).find(Path + ": cannot open"),
              std::string::npos)
        << Err.what();
  }
  EXPECT_THROW(Executable::load(fs::temp_directory_path().string()), Error);
}

//===----------------------------------------------------------------------===//
// Compiled programs: every tests/programs program survives the round trip
// and runs identically; the ones with constants are corrupted too.
//===----------------------------------------------------------------------===//

std::string readText(const fs::path &P) {
  std::ifstream In(P);
  std::stringstream SS;
  SS << In.rdbuf();
  return SS.str();
}

std::vector<std::string> programNames() {
  std::vector<std::string> Names;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(ProgramsDir, EC))
    if (E.is_directory() && fs::exists(E.path() / "program.rvir"))
      Names.push_back(E.path().filename().string());
  std::sort(Names.begin(), Names.end());
  return Names;
}

struct CompiledProgram {
  ir::Module module;
  std::shared_ptr<Executable> exe;
  std::vector<ir::Value> args;
};

CompiledProgram compileProgram(const std::string &Name) {
  fs::path Dir = ProgramsDir / Name;
  CompiledProgram P{ir::parseModule(readText(Dir / "program.rvir"),
                                    (Dir / "program.rvir").string()),
                    nullptr,
                    {}};
  ir::inferTypes(P.module);
  P.exe = compile(P.module);
  const auto *Main = P.module.function("main")->as<ir::FunctionNode>();
  for (const ir::Var &V : Main->params)
    P.args.push_back(
        readNpy((Dir / "inputs" / (V->nameHint + ".npy")).string()));
  return P;
}

/// The result of main as a flat list of tensors (tuples and ADTs walked).
void flattenObject(const ObjectRef &O, std::vector<Tensor> &Out) {
  if (const auto *T = O->as<TensorObj>()) {
    Out.push_back(T->value);
  } else if (const auto *A = O->as<ADTObj>()) {
    // Iterate along the last field so long lists do not recurse deeply.
    const ADTObj *Cur = A;
    while (Cur) {
      Out.push_back(Tensor::scalar<int64_t>(Cur->tag));
      const ADTObj *Next = nullptr;
      for (size_t I = 0; I < Cur->fields.size(); ++I) {
        if (I + 1 == Cur->fields.size() && Cur->fields[I]->as<ADTObj>())
          Next = Cur->fields[I]->as<ADTObj>();
        else
          flattenObject(Cur->fields[I], Out);
      }
      Cur = Next;
    }
  } else {
    ADD_FAILURE() << "main returned a closure or storage";
  }
}

std::vector<Tensor> runProgram(const std::shared_ptr<Executable> &Exe,
                               const std::vector<ir::Value> &Args) {
  VirtualMachine VM(Exe);
  std::vector<ObjectRef> Objs;
  for (const ir::Value &A : Args)
    Objs.push_back(toObject(A, *Exe));
  std::vector<Tensor> Out;
  flattenObject(VM.invoke("main", std::move(Objs)), Out);
  return Out;
}

void expectBitwiseSame(const std::vector<Tensor> &A,
                       const std::vector<Tensor> &B, const std::string &What) {
  ASSERT_EQ(A.size(), B.size()) << What;
  for (size_t I = 0; I < A.size(); ++I)
    EXPECT_TRUE(bitwiseEqual(A[I], B[I])) << What << ": output " << I;
}

class RvxProgram : public ::testing::TestWithParam<std::string> {};

TEST_P(RvxProgram, RoundTripRunsIdentically) {
  CompiledProgram P = compileProgram(GetParam());
  std::vector<Tensor> Want = runProgram(P.exe, P.args);
  std::string Path = tempPath(GetParam() + ".rvx");
  P.exe->save(Path);
  auto Loaded = Executable::load(Path);
  std::remove(Path.c_str());
  expectSameExecutable(*P.exe, *Loaded);
  expectBitwiseSame(runProgram(Loaded, P.args), Want, GetParam());
  // Two VMs over the one loaded executable agree too.
  expectBitwiseSame(runProgram(Loaded, P.args), Want, GetParam() + " again");
}

INSTANTIATE_TEST_SUITE_P(Programs, RvxProgram,
                         ::testing::ValuesIn(programNames()),
                         [](const auto &Info) { return Info.param; });

TEST(RvxFormat, TruncatedAndFlippedCompiledPrograms) {
  for (const char *Name : {"rnn_loop", "tree_adt", "map_closure"}) {
    if (!fs::exists(ProgramsDir / Name))
      continue;
    CompiledProgram P = compileProgram(Name);
    std::vector<Tensor> Want = runProgram(P.exe, P.args);
    size_t Size = P.exe->serialize().size();
    size_t Step = Size > 4000 ? 7 : 1;
    corruptAndLoad(P.exe, Step, 1500, Size <= 20000,
                   [&](std::shared_ptr<Executable> G) {
                     expectBitwiseSame(runProgram(G, P.args), Want, Name);
                   });
  }
}

/// An executable with native code (a shared object in section 'native
/// code'): every truncation and flip of it, the shared object's bytes
/// included, is refused or (padding) loads and runs identically.
TEST(RvxFormat, TruncatedAndFlippedNativeCode) {
  ir::Module M = ir::parseModule(R"(
def @main(%x: Tensor[(n, 8), float32], %b: Tensor[(8,), float32])
    -> Tensor[(n, 8), float32] {
  tanh(multiply(exp(%x), %b))
}
)",
                                 "native.rvir");
  ir::inferTypes(M);
  CompileOptions O;
  O.codegen.mode = NativeCode::SharedObject;
  auto Exe = compile(M, O);
  ASSERT_FALSE(Exe->nativeKernels.empty());
  std::vector<uint8_t> Bytes = Exe->serialize();
  TableInfo T = parseTable(Bytes);
  bool HasNative = false;
  for (const auto &S : T.sections)
    HasNative |= S.kind == (uint32_t)rvx::SectionKind::NativeCode;
  ASSERT_TRUE(HasNative);
  std::vector<ir::Value> Args = {
      Tensor::fromVector<float>(
          {0.5f, -1, 2, 0, 1, 3, -2, 0.25f, 1, 1, 1, 1, 0, 0, 0, 0}, {2, 8}),
      Tensor::fromVector<float>({1, 2, 3, 4, -1, -2, -3, 0.5f}, {8})};
  std::vector<Tensor> Want = runProgram(Exe, Args);
  corruptAndLoad(Exe, 3, 3000, false, [&](std::shared_ptr<Executable> G) {
    expectBitwiseSame(runProgram(G, Args), Want, "native code");
  });

  // Flips inside the section with its checksum recomputed reach the
  // section parser, the structural checks and NativeLibrary::validate:
  // each load succeeds or fails with rivet::Error, never a crash (the result
  // is not run: only the checksum protects the machine code).
  size_t Index = 0;
  for (size_t I = 0; I < T.sections.size(); ++I)
    if (T.sections[I].kind == (uint32_t)rvx::SectionKind::NativeCode)
      Index = I;
  const TableInfo::Entry &N = T.sections[Index];
  for (size_t Off = N.offset; Off < N.offset + N.size; Off += 5) {
    std::vector<uint8_t> B = Bytes;
    B[Off] ^= (uint8_t)(1u << (Off % 8));
    writeAt<uint32_t>(B, T.tableStart + 24 * Index + 4,
                      rvx::crc32c(B.data() + N.offset, N.size));
    fixHeaderChecksum(B);
    try {
      loadBytes(B, B.size(), "flip.rvx");
    } catch (const Error &E) {
      EXPECT_EQ(std::string(E.what()).rfind("flip.rvx: ", 0), 0u) << E.what();
    }
  }
}

/// Native kernels with broadcast sizes (an output extent that broadcasts
/// two inputs' unknown extents) need version 3: such a file round-trips and
/// runs identically, is refused when labelled version 2 and when a
/// broadcast size is malformed, and every truncation and flip is refused.
TEST(RvxFormat, BroadcastSizesNeedVersion3) {
  ir::Module M = ir::parseModule(R"(
def @main(%x: Tensor[(?, 8), float32], %m: Tensor[(?, 1), float32])
    -> Tensor[(?, 8), float32] {
  exp(subtract(%x, %m))
}
)",
                                 "broadcast.rvir");
  ir::inferTypes(M);
  CompileOptions O;
  O.codegen.mode = NativeCode::SharedObject;
  auto Exe = compile(M, O);
  ASSERT_EQ(Exe->nativeKernels.size(), 1u);
  ASSERT_EQ(Exe->nativeKernels[0].broadcastSizes.size(), 1u);
  Exe->mainResults.clear(); // no result types: the older version
  std::vector<uint8_t> Bytes = Exe->serialize();
  EXPECT_EQ(readAt<uint32_t>(Bytes, 8), rvx::kBroadcastSizesVersion);
  auto Loaded = loadBytes(Bytes, Bytes.size(), "broadcast.rvx");
  expectSameExecutable(*Exe, *Loaded);
  EXPECT_EQ(Loaded->serialize(), Bytes);
  std::vector<ir::Value> Args = {
      Tensor::fromVector<float>({0.5f, -1, 2, 0, 1, 3, -2, 0.25f}, {1, 8}),
      Tensor::fromVector<float>({1, 2, -1}, {3, 1})};
  std::vector<Tensor> Want = runProgram(Exe, Args);
  ASSERT_EQ(Want.size(), 1u);
  EXPECT_EQ(Want[0].shape(), (Shape{3, 8}));
  expectBitwiseSame(runProgram(Loaded, Args), Want, "loaded");

  // The header checksum covers the version from version 3 on: relabelled,
  // the file is refused (a version-2 file relabelled 3 likewise).
  std::vector<uint8_t> B = Bytes;
  writeAt<uint32_t>(B, 8, 2);
  EXPECT_NE(errorOf(B).find("header checksum mismatch"), std::string::npos)
      << errorOf(B);
  std::vector<uint8_t> Old = handBuilt()->serialize();
  writeAt<uint32_t>(Old, 8, 3);
  EXPECT_NE(errorOf(Old).find("header checksum mismatch"), std::string::npos)
      << errorOf(Old);
  // With the checksum fixed, a version-2 reading does not read the
  // broadcast sizes and refuses the section.
  fixHeaderChecksum(B);
  EXPECT_NE(errorOf(B).find("section 'native code'"), std::string::npos)
      << errorOf(B);

  // Malformed broadcast sizes, with good checksums.
  auto Check = [&](const std::function<void(NativeKernel &)> &Break,
                   const std::string &Msg) {
    auto E = compile(M, O);
    Break(E->nativeKernels[0]);
    std::string Got = errorOf(E->serialize());
    EXPECT_NE(Got.find(Msg), std::string::npos)
        << "expected '" << Msg << "' in: " << Got;
  };
  Check([](NativeKernel &K) { K.broadcastSizes[0].operands.resize(1); },
        "broadcast size of 1 operands (2 to 64)");
  Check([](NativeKernel &K) { K.broadcastSizes[0].operands.resize(65, 4); },
        "broadcast size of 65 operands (2 to 64)");
  Check(
      [](NativeKernel &K) {
        K.broadcastSizes[0].operands[0] =
            NativeKernel::sizeParamDim((uint32_t)K.numSizes() - 1);
      },
      "broadcasts size parameter 2, which is not an earlier one");
  Check([](NativeKernel &K) { K.buffers.back().dims[0] = -9; },
        "buffer 2 uses size parameter 8 of 3");

  corruptAndLoad(Exe, 3, 3000, false, [&](std::shared_ptr<Executable> G) {
    expectBitwiseSame(runProgram(G, Args), Want, "broadcast sizes");
  });
}

/// Kernel entries of kind ListPrimitive need version 6: such a file
/// round-trips and runs identically (its packed Lists come back as Cons
/// cells), and is refused when labelled version 5 or when an entry names no
/// List primitive or gives one the wrong number of operands.
TEST(RvxFormat, ListPrimitivesNeedVersion6) {
  ir::Module M = ir::parseModule(R"(
def @main(%x: Tensor[(2,), float32]) {
  let %l = list_insert(list_insert(list_insert(Nil, %x), %x, 0i64),
                       multiply(%x, %x));
  (list_length(%l), list_at(%l, -1i64), list_erase(%l, 1i64))
}
)",
                                 "lists.rvir");
  ir::inferTypes(M);
  auto Exe = compile(M, CompileOptions());
  Exe->mainResults.clear(); // no result types: the older version
  std::vector<uint8_t> Bytes = Exe->serialize();
  EXPECT_EQ(readAt<uint32_t>(Bytes, 8), rvx::kListPrimitivesVersion);
  auto Loaded = loadBytes(Bytes, Bytes.size(), "lists.rvx");
  expectSameExecutable(*Exe, *Loaded);
  EXPECT_EQ(Loaded->serialize(), Bytes);
  std::vector<ir::Value> Args = {Tensor::fromVector<float>({2, -3}, {2})};
  std::vector<Tensor> Want = runProgram(Exe, Args);
  // (3, x * x, [x, x * x]) flattened with the tags of the tuple and of the
  // List's Cons cells.
  ASSERT_EQ(Want.size(), 8u);
  EXPECT_EQ(Want[1].elementAsInt(0), 3);
  EXPECT_EQ(Want[2].toDoubleVector(), (std::vector<double>{4, 9}));
  EXPECT_EQ(Want[4].toDoubleVector(), (std::vector<double>{2, -3}));
  EXPECT_EQ(Want[6].toDoubleVector(), (std::vector<double>{4, 9}));
  expectBitwiseSame(runProgram(Loaded, Args), Want, "loaded");

  std::vector<uint8_t> B = Bytes;
  writeAt<uint32_t>(B, 8, rvx::kListPrimitivesVersion - 1);
  fixHeaderChecksum(B);
  EXPECT_NE(errorOf(B).find("has invalid kind 5"), std::string::npos)
      << errorOf(B);

  size_t K = 0;
  while (Exe->kernels[K].kind != KernelEntry::Kind::ListPrimitive)
    ++K;
  auto Broken = std::make_shared<Executable>(*Exe);
  Broken->kernels[K].op = "list_reverse";
  EXPECT_NE(errorOf(Broken->serialize())
                .find("no List primitive "
                      "'list_reverse'"),
            std::string::npos)
      << errorOf(Broken->serialize());
  for (const char *Op : {"list_length", "list_at", "list_erase"}) {
    Broken = std::make_shared<Executable>(*Exe);
    for (KernelEntry &E : Broken->kernels)
      if (E.kind == KernelEntry::Kind::ListPrimitive && E.op == "list_insert")
        E.op = Op;
    EXPECT_NE(errorOf(Broken->serialize()).find(std::string(Op) + ": expected"),
              std::string::npos)
        << Op << ": " << errorOf(Broken->serialize());
  }
}

/// AllocListTensor needs version 8: an executable that places what a loop
/// appends round-trips, runs identically after loading and after any
/// corruption it survives, and is refused when labelled version 7.
TEST(RvxFormat, ListTensorsNeedVersion8) {
  ir::Module M = ir::parseModule(R"(
def @main(%x: Tensor[(?, 2), float32], %n: Tensor[(), int64]) {
  let %build = fn (%i: Tensor[(), int64], %acc: List[Tensor[(?, 2), float32]])
      -> List[Tensor[(?, 2), float32]] {
    if (less(%i, %n)) {
      %build(add(%i, 1i64), list_insert(%acc, multiply(%x, cast(%i, dtype="float32"))))
    } else {
      %acc
    }
  };
  concat_list(%build(0i64, Nil), axis=0)
}
)",
                                 "placed.rvir");
  ir::inferTypes(M);
  auto Exe = compile(M, CompileOptions());
  bool Placed = false;
  for (const VMFunction &F : Exe->functions)
    for (const Instruction &I : F.code)
      Placed |= I.op == Opcode::AllocListTensor;
  ASSERT_TRUE(Placed);
  std::vector<uint8_t> Bytes = Exe->serialize();
  EXPECT_EQ(readAt<uint32_t>(Bytes, 8), rvx::kListTensorsVersion);
  auto Loaded = loadBytes(Bytes, Bytes.size(), "placed.rvx");
  expectSameExecutable(*Exe, *Loaded);
  EXPECT_EQ(Loaded->serialize(), Bytes);
  std::vector<ir::Value> Args = {
      Tensor::fromVector<float>({1, -2, 3, 0.5f}, {2, 2}),
      Tensor::scalar<int64_t>(3)};
  std::vector<Tensor> Want = runProgram(Exe, Args);
  ASSERT_EQ(Want.size(), 1u);
  EXPECT_EQ(Want[0].toDoubleVector(),
            (std::vector<double>{0, 0, 0, 0, 1, -2, 3, 0.5, 2, -4, 6, 1}));
  expectBitwiseSame(runProgram(Loaded, Args), Want, "loaded");
  corruptAndLoad(Exe, 7, 1500, false, [&](std::shared_ptr<Executable> G) {
    expectBitwiseSame(runProgram(G, Args), Want, "placed");
  });

  std::vector<uint8_t> B = Bytes;
  writeAt<uint32_t>(B, 8, rvx::kListTensorsVersion - 1);
  fixHeaderChecksum(B);
  EXPECT_NE(errorOf(B).find("uses AllocListTensor, which a version 7 file "
                            "cannot hold"),
            std::string::npos)
      << errorOf(B);
}

/// main's result types (names, partial shapes, dtypes) need version 7:
/// such a file round-trips, and is refused when labelled version 6 (the
/// entry section then has bytes it does not expect).
TEST(RvxFormat, MainResultsNeedVersion7) {
  ir::Module M = ir::parseModule(R"(
def @main(%x: Tensor[(?, 3), float32]) {
  (add(%x, %x), shape_of(%x), (%x,))
}
)",
                                 "results.rvir");
  ir::inferTypes(M);
  auto Exe = compile(M, CompileOptions());
  ASSERT_EQ(Exe->mainResults.size(), 3u);
  const ParamInfo &A = Exe->mainResults[0], &S = Exe->mainResults[1],
                  &T = Exe->mainResults[2];
  EXPECT_EQ(A.name, "output_0");
  EXPECT_TRUE(A.isTensor);
  EXPECT_EQ(A.dtype, DType::Float32);
  EXPECT_EQ(A.dims, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(S.dtype, DType::Int64);
  EXPECT_EQ(S.dims, (std::vector<int64_t>{2}));
  EXPECT_FALSE(T.isTensor);
  EXPECT_EQ(T.typeText, "(Tensor[(?, 3), float32],)");
  std::vector<uint8_t> Bytes = Exe->serialize();
  EXPECT_EQ(readAt<uint32_t>(Bytes, 8), rvx::kMainResultsVersion);
  auto Loaded = loadBytes(Bytes, Bytes.size(), "results.rvx");
  expectSameExecutable(*Exe, *Loaded);
  EXPECT_EQ(Loaded->serialize(), Bytes);

  std::vector<uint8_t> B = Bytes;
  writeAt<uint32_t>(B, 8, rvx::kMainResultsVersion - 1);
  fixHeaderChecksum(B);
  EXPECT_NE(errorOf(B).find("unexpected bytes at the end"), std::string::npos)
      << errorOf(B);
}

/// A generated max over an extent unknown until run time carries the check
/// that the reduction is not empty (version 4): such a file round-trips,
/// refuses an empty reduction as the reference does, is refused when
/// labelled version 3 and when the check names a missing size parameter.
TEST(RvxFormat, EmptyReductionChecksNeedVersion4) {
  ir::Module M = ir::parseModule(R"(
def @main(%x: Tensor[(?, 3), float32]) -> Tensor[(3,), float32] {
  max(exp(%x), axis=[0])
}
)",
                                 "max.rvir");
  ir::inferTypes(M);
  CompileOptions O;
  O.codegen.mode = NativeCode::SharedObject;
  auto Exe = compile(M, O);
  ASSERT_EQ(Exe->nativeKernels.size(), 1u);
  ASSERT_EQ(Exe->nativeKernels[0].emptyReductions.size(), 1u);
  Exe->mainResults.clear(); // no result types: the older version
  std::vector<uint8_t> Bytes = Exe->serialize();
  EXPECT_EQ(readAt<uint32_t>(Bytes, 8), rvx::kEmptyReductionsVersion);
  auto Loaded = loadBytes(Bytes, Bytes.size(), "max.rvx");
  expectSameExecutable(*Exe, *Loaded);
  EXPECT_EQ(Loaded->serialize(), Bytes);
  std::vector<ir::Value> Args = {
      Tensor::fromVector<float>({0.5f, -1, 2, 0, 1, 3}, {2, 3})};
  std::vector<Tensor> Want = runProgram(Exe, Args);
  expectBitwiseSame(runProgram(Loaded, Args), Want, "loaded");
  std::vector<ir::Value> Empty = {Tensor::empty({0, 3}, DType::Float32)};
  for (const auto &E : {Exe, Loaded}) {
    try {
      runProgram(E, Empty);
      ADD_FAILURE() << "max over no elements succeeded";
    } catch (const Error &Err) {
      EXPECT_NE(std::string(Err.what()).find("reduction over zero elements"),
                std::string::npos)
          << Err.what();
    }
  }

  // Relabelled version 3 (checksum fixed), the section is refused.
  std::vector<uint8_t> B = Bytes;
  writeAt<uint32_t>(B, 8, 3);
  fixHeaderChecksum(B);
  EXPECT_NE(errorOf(B).find("section 'native code'"), std::string::npos)
      << errorOf(B);
  auto Broken = compile(M, O);
  Broken->nativeKernels[0].emptyReductions[0].reduced[0] =
      NativeKernel::sizeParamDim(7);
  std::string Got = errorOf(Broken->serialize());
  EXPECT_NE(Got.find("the empty-reduction check of max uses size parameter "
                     "7 of 1"),
            std::string::npos)
      << Got;

  corruptAndLoad(Exe, 3, 3000, false, [&](std::shared_ptr<Executable> G) {
    expectBitwiseSame(runProgram(G, Args), Want, "empty reductions");
  });
}

/// A real ONNX model (a transformer encoder with dynamic sequence length):
/// save, load in place of compile, run two sequence lengths through the one
/// loaded executable; then truncate at every 7th offset and flip bytes.
TEST(RvxFormat, RealModelRoundTripAndCorruption) {
  fs::path Dir = RIVET_SOURCE_DIR "/tests/models/transformer";
  ir::Module M = frontend::importOnnxFile((Dir / "model.onnx").string());
  ir::inferTypes(M);
  auto Exe = compile(M);
  std::string Path = tempPath("transformer.rvx");
  Exe->save(Path);
  auto Loaded = Executable::load(Path);
  std::remove(Path.c_str());
  expectSameExecutable(*Exe, *Loaded);
  std::vector<std::vector<ir::Value>> Inputs;
  for (const char *Set : {"test_data_set_0", "test_data_set_1"})
    Inputs.push_back({readNpy((Dir / Set / "inputs" / "src.npy").string())});
  ASSERT_NE(Inputs[0][0].tensor().shape(), Inputs[1][0].tensor().shape());
  std::vector<std::vector<Tensor>> Want;
  for (const auto &In : Inputs) {
    Want.push_back(runProgram(Exe, In));
    expectBitwiseSame(runProgram(Loaded, In), Want.back(), "transformer");
  }
  corruptAndLoad(Exe, 7, 1500, false, [&](std::shared_ptr<Executable> G) {
    expectBitwiseSame(runProgram(G, Inputs[0]), Want[0], "transformer");
  });
}

} // namespace

/// A CUDA executable (--target cuda; compiling needs only NVRTC): version
/// 5, target "cuda", a CUDA code section naming the GPU kernels. It round
/// trips byte for byte; relabelled version 4 or target "cpu" it is refused;
/// every truncation and flip is refused or loads identically; and on a
/// machine without a GPU making a VM for it fails with a clear error.
TEST(RvxFormat, CudaCodeNeedsVersion5) {
#if !RIVET_HAVE_CUDA
  GTEST_SKIP() << "built without the CUDA toolkit";
#else
  ir::Module M = ir::parseModule(R"(
def @main(%x: Tensor[(n, 64), float32], %b: Tensor[(64,), float32])
    -> Tensor[(n, 64), float32] {
  tanh(multiply(exp(%x), %b))
}
)",
                                 "gpu.rvir");
  ir::inferTypes(M);
  CompileOptions O;
  O.codegen.mode = NativeCode::SharedObject;
  O.codegen.target = Device::CUDA;
  auto Exe = compile(M, O);
  ASSERT_TRUE(Exe->cudaCode);
  ASSERT_EQ(Exe->nativeKernels.size(), 1u);
  EXPECT_EQ(Exe->nativeKernels[0].device, Device::CUDA);
  Exe->mainResults.clear(); // no result types: the older version
  std::vector<uint8_t> Bytes = Exe->serialize();
  EXPECT_EQ(readAt<uint32_t>(Bytes, 8), rvx::kCudaCodeVersion);
  auto Loaded = loadBytes(Bytes, Bytes.size(), "gpu.rvx");
  expectSameExecutable(*Exe, *Loaded);
  ASSERT_TRUE(Loaded->cudaCode);
  EXPECT_EQ(Loaded->cudaCode->images.size(), Exe->cudaCode->images.size());
  EXPECT_EQ(Loaded->nativeKernels[0].device, Device::CUDA);

  std::vector<uint8_t> B = Bytes;
  writeAt<uint32_t>(B, 8, 4);
  fixHeaderChecksum(B);
  EXPECT_NE(errorOf(B).find("the file targets 'cuda', which needs format "
                            "version 5 (this file has version 4)"),
            std::string::npos)
      << errorOf(B);

  std::string Why;
  bool HaveGpu = cuda::available(&Why);
  std::vector<ir::Value> Args = {
      Tensor::fromVector<float>(std::vector<float>(128, 0.5f), {2, 64}),
      Tensor::fromVector<float>(std::vector<float>(64, 2.0f), {64})};
  if (!HaveGpu) {
    try {
      runProgram(Loaded, Args);
      ADD_FAILURE() << "a CUDA executable ran without a GPU";
    } catch (const Error &E) {
      EXPECT_EQ(std::string(E.what()).rfind(
                    "this executable needs a CUDA GPU: " + Why, 0),
                0u)
          << E.what();
    }
  }
  std::vector<Tensor> Want;
  if (HaveGpu)
    Want = runProgram(Exe, Args);
  corruptAndLoad(Exe, 5, 2000, false, [&](std::shared_ptr<Executable> G) {
    if (HaveGpu)
      expectBitwiseSame(runProgram(G, Args), Want, "cuda code");
  });
#endif
}
