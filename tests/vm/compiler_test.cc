//===- compiler_test.cc - The bytecode compiler's output ------------------===//
//
// Structure of the emitted code: kernel-table entries and their kinds,
// explicit allocation (static from the arena, dynamic after a shape
// function), tail calls and direct calls of lifted loops (no closure per
// iteration), match lowering, memory planning and register reuse, main's
// signature. Every program under tests/programs must compile.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "kernels/Error.h"
#include "vm/Executable.h"
#include "vm/Object.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using namespace rivet;
using namespace rivet::vm;

namespace {

/// Compiles with fused groups on builtin kernels: these tests check how
/// operator calls are lowered (native kernels: native_kernels_test.cc).
std::shared_ptr<Executable> compileText(const std::string &Text,
                                        CompileOptions Opts = {}) {
  ir::Module M = ir::parseModule(Text);
  Opts.codegen.mode = NativeCode::Off;
  return compile(M, Opts);
}

const VMFunction &fn(const Executable &E, const std::string &Name) {
  return E.functions.at(E.function(Name));
}

size_t count(const VMFunction &F, Opcode Op) {
  size_t N = 0;
  for (const Instruction &I : F.code)
    N += I.op == Op;
  return N;
}

size_t countAll(const Executable &E, Opcode Op) {
  size_t N = 0;
  for (const VMFunction &F : E.functions)
    N += count(F, Op);
  return N;
}

const KernelEntry *findKernel(const Executable &E, const std::string &Op,
                              KernelEntry::Kind Kind) {
  for (const KernelEntry &K : E.kernels)
    if (K.op == Op && K.kind == Kind)
      return &K;
  return nullptr;
}

/// Every register operand is below numRegisters and every jump lands inside
/// the function.
void checkWellFormed(const Executable &E) {
  for (const VMFunction &F : E.functions) {
    ASSERT_GE(F.numRegisters, F.numParams) << F.name;
    for (size_t Pc = 0; Pc < F.code.size(); ++Pc) {
      const Instruction &I = F.code[Pc];
      if (I.op == Opcode::If || I.op == Opcode::Goto) {
        int64_t T = (int64_t)Pc + I.imm;
        EXPECT_GT(I.imm, 0) << F.name << " pc " << Pc << ": backward jump";
        EXPECT_LE(T, (int64_t)F.code.size()) << F.name << " pc " << Pc;
      }
      switch (I.op) {
      case Opcode::Invoke:
      case Opcode::TailInvoke:
      case Opcode::InvokeClosure:
      case Opcode::TailInvokeClosure:
      case Opcode::InvokeKernel:
      case Opcode::AllocADT:
      case Opcode::AllocClosure:
        ASSERT_LE((size_t)I.a + I.b, F.pool.size()) << F.name << " pc " << Pc;
        for (uint32_t K = I.a; K < I.a + I.b; ++K)
          EXPECT_LT(F.pool[K], F.numRegisters) << F.name << " pc " << Pc;
        break;
      case Opcode::AllocTensor:
        EXPECT_LE((size_t)I.b + I.d, F.shapes.size()) << F.name;
        EXPECT_LT(I.a, F.numRegisters) << F.name;
        break;
      default: break;
      }
      if (I.op != Opcode::Ret && I.op != Opcode::TailInvoke &&
          I.op != Opcode::TailInvokeClosure && I.op != Opcode::If &&
          I.op != Opcode::Goto && I.op != Opcode::Fatal &&
          !(I.op == Opcode::InvokeKernel &&
            E.kernels[I.c].kind != KernelEntry::Kind::AllocatingBuiltin)) {
        EXPECT_LT(I.dst, F.numRegisters) << F.name << " pc " << Pc;
      }
    }
  }
}

TEST(Compiler, StaticOpsUseBuiltinsAndTheArena) {
  auto E = compileText(R"(
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  add(multiply(%x, %x), %x)
}
)");
  checkWellFormed(*E);
  EXPECT_NE(findKernel(*E, "multiply", KernelEntry::Kind::Builtin), nullptr);
  EXPECT_NE(findKernel(*E, "add", KernelEntry::Kind::Builtin), nullptr);
  const VMFunction &Main = fn(*E, "main");
  EXPECT_EQ(count(Main, Opcode::InvokeKernel), 2u);
  EXPECT_EQ(count(Main, Opcode::AllocTensor), 2u);
  // The product lives in the arena; the returned sum has storage of its own.
  EXPECT_EQ(count(Main, Opcode::AllocStorage), 2u);
  EXPECT_EQ(count(Main, Opcode::Ret), 1u);
  EXPECT_EQ(Main.numParams, 1u);
  ASSERT_EQ(E->mainParams.size(), 1u);
  EXPECT_EQ(E->mainParams[0].name, "x");
  EXPECT_EQ(E->mainParams[0].dtype, DType::Float32);
  EXPECT_EQ(*E->mainParams[0].dims, (std::vector<int64_t>{2, 3}));
}

TEST(Compiler, DynamicShapesCallTheShapeFunction) {
  auto E = compileText(R"(
def @main(%x: Tensor[(n, 3), float32]) -> Tensor[(n, 3), float32] {
  exp(%x)
}
)");
  checkWellFormed(*E);
  EXPECT_NE(findKernel(*E, "exp", KernelEntry::Kind::ShapeFunction), nullptr);
  EXPECT_NE(findKernel(*E, "exp", KernelEntry::Kind::Builtin), nullptr);
  const VMFunction &Main = fn(*E, "main");
  ASSERT_EQ(count(Main, Opcode::AllocTensorReg), 1u);
  for (const Instruction &I : Main.code)
    if (I.op == Opcode::AllocTensorReg) {
      EXPECT_EQ(I.a, kNoStorage);
      EXPECT_EQ(I.c, (uint32_t)DType::Float32);
    }
  EXPECT_EQ(count(Main, Opcode::AllocStorage), 0u);
  EXPECT_EQ(*E->mainParams[0].dims, (std::vector<int64_t>{-1, 3}));
}

// Compiled for one input shape (CompileOptions::inputShapes), a program
// with a symbolic extent has no shape functions and plans its tensors in
// the arena; the VM takes that shape only. Bad shapes are errors that name
// the input.
TEST(Compiler, InputShapesSpecializeMain) {
  const char *Text = R"(
def @main(%x: Tensor[(n, 3), float32], %y: Tensor[(?, 3), float32]) {
  let %a = exp(%x);
  add(%a, %y)
}
)";
  CompileOptions Opts;
  Opts.inputShapes = {{"x", {4, 3}}, {"y", {4, 3}}};
  auto E = compileText(Text, Opts);
  checkWellFormed(*E);
  for (const KernelEntry &K : E->kernels)
    EXPECT_NE(K.kind, KernelEntry::Kind::ShapeFunction) << K.op;
  EXPECT_EQ(countAll(*E, Opcode::AllocTensorReg), 0u);
  EXPECT_EQ(*E->mainParams[0].dims, (std::vector<int64_t>{4, 3}));
  VirtualMachine VM(E);
  Tensor X = Tensor::fromVector<float>(std::vector<float>(12, 0.f), {4, 3});
  ObjectRef R = VM.invoke("main", {makeTensor(X), makeTensor(X)});
  EXPECT_EQ(asTensor(R, "result").toDoubleVector(),
            std::vector<double>(12, 1.0));
  Tensor Y = Tensor::fromVector<float>(std::vector<float>(6, 0.f), {2, 3});
  EXPECT_THROW(VM.invoke("main", {makeTensor(Y), makeTensor(Y)}), Error);
  // Only one input given a shape: the other stays dynamic.
  Opts.inputShapes = {{"x", {4, 3}}};
  auto Half = compileText(Text, Opts);
  EXPECT_EQ(*Half->mainParams[0].dims, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(*Half->mainParams[1].dims, (std::vector<int64_t>{-1, 3}));

  auto Fails = [&](std::map<std::string, std::vector<int64_t>> Shapes,
                   const std::string &Message) {
    CompileOptions O;
    O.inputShapes = std::move(Shapes);
    try {
      compileText(Text, O);
      ADD_FAILURE() << "expected an error containing: " << Message;
    } catch (const Error &Err) {
      EXPECT_NE(std::string(Err.what()).find(Message), std::string::npos)
          << Err.what();
    }
  };
  Fails({{"z", {4, 3}}}, "@main has no such input (its inputs: x, y)");
  Fails({{"x", {4, 3, 1}}}, "has rank 3, the input is declared");
  Fails({{"x", {4, 2}}}, "gives extent 2 to axis 1");
}

TEST(Compiler, IdenticalKernelEntriesAreShared) {
  auto E = compileText(R"(
def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  let %a = add(%x, %x);
  let %b = add(%a, %x);
  let %c = sum(%b, axis=[0], keepdims=1);
  add(%b, %c)
}
)");
  checkWellFormed(*E);
  size_t Adds = 0;
  for (const KernelEntry &K : E->kernels)
    Adds += K.op == "add" && K.kind == KernelEntry::Kind::Builtin;
  EXPECT_EQ(Adds, 1u);
  const KernelEntry *S = findKernel(*E, "sum", KernelEntry::Kind::Builtin);
  ASSERT_NE(S, nullptr);
  EXPECT_EQ(S->attrs.getInts("axis"), (std::vector<int64_t>{0}));
}

// An operator with a library kernel (lstm: cpu.lstm) calls it, at every opt
// level, unless the options turn library kernels off.
TEST(Compiler, LibraryKernelsReplaceReferenceKernels) {
  const std::string Text = R"(
def @main(%x: Tensor[(5, 2, 4), float32], %w: Tensor[(1, 32, 4), float32],
          %r: Tensor[(1, 32, 8), float32]) {
  let %none = zeros(shape=[0], dtype="float32");
  let %lens = zeros(shape=[0], dtype="int32");
  let %y = lstm(%x, %w, %r, %none, %lens, %none, %none, %none, hidden_size=8);
  %y.1
}
)";
  for (int Level : {0, 3}) {
    CompileOptions O;
    O.optLevel = Level;
    auto E = compileText(Text, O);
    EXPECT_NE(findKernel(*E, "cpu.lstm", KernelEntry::Kind::Builtin), nullptr)
        << "-O" << Level;
    EXPECT_EQ(findKernel(*E, "lstm", KernelEntry::Kind::Builtin), nullptr);
    O.libraryKernels = false;
    E = compileText(Text, O);
    EXPECT_EQ(findKernel(*E, "cpu.lstm", KernelEntry::Kind::Builtin), nullptr);
    EXPECT_NE(findKernel(*E, "lstm", KernelEntry::Kind::Builtin), nullptr)
        << "-O" << Level;
  }
}

// conv, dense, matmul and gemm run on oneDNN in the VM only through kernels
// of their own (dnnl.*: their reference kernels are the interpreter's
// independent oracle): at -O0 the library kernels, at every level never the
// reference kernels, unless the options turn library kernels off.
TEST(Compiler, AnchorsRunOnTheirOneDNNLibraryKernels) {
  const std::string Text = R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %a: Tensor[(4, 6), float32]) {
  let %w = ones(shape=[4, 3, 3, 3], dtype="float32");
  let %c = conv(%x, %w, pads=[1, 1, 1, 1]);
  let %wd = ones(shape=[5, 6], dtype="float32");
  let %b = ones(shape=[6, 5], dtype="float32");
  let %d = dense(%a, %wd);
  let %m = matmul(%a, %b);
  let %g = gemm(%a, %wd, trans_b=1);
  (%c, %d, %m, %g)
}
)";
  const std::vector<std::string> Ops = {"conv", "dense", "matmul", "gemm"};
  for (int Level : {0, 1, 2, 3}) {
    CompileOptions O;
    O.optLevel = Level;
    auto E = compileText(Text, O);
    for (const std::string &Op : Ops) {
      EXPECT_EQ(findKernel(*E, Op, KernelEntry::Kind::Builtin), nullptr)
          << Op << " at -O" << Level;
      if (Level == 0) {
        EXPECT_NE(findKernel(*E, "dnnl." + Op, KernelEntry::Kind::Builtin),
                  nullptr)
            << Op;
      }
    }
  }
  CompileOptions Off;
  Off.optLevel = 0;
  Off.libraryKernels = false;
  auto E = compileText(Text, Off);
  for (const std::string &Op : Ops) {
    EXPECT_NE(findKernel(*E, Op, KernelEntry::Kind::Builtin), nullptr) << Op;
    EXPECT_EQ(findKernel(*E, "dnnl." + Op, KernelEntry::Kind::Builtin), nullptr)
        << Op;
  }
}
// A --cpu/--mattr target picks oneDNN's channel block for that CPU, not the
// host's: 16 with AVX-512, 8 with AVX2 only.
TEST(Compiler, ConvLayoutsFollowTheTargetCpu) {
  const char *Conv = R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32]) -> Tensor[(1, 32, 8, 8), float32] {
  let %w = ones(shape=[32, 16, 3, 3], dtype="float32");
  let %c = conv(%x, %w, pads=[1, 1, 1, 1]);
  let %r = relu(%c);
  %r
}
)";
  auto DataLayouts = [&](const std::string &Cpu, const std::string &Mattr) {
    CompileOptions O;
    O.codegen.cpu = Cpu;
    O.codegen.features = Mattr;
    std::set<std::string> Layouts;
    std::shared_ptr<Executable> E = compileText(Conv, O);
    for (const KernelEntry &K : E->kernels)
      if (K.attrs.has("data_layout"))
        Layouts.insert(K.attrs.getString("data_layout"));
    return Layouts;
  };
  using Set = std::set<std::string>;
  EXPECT_EQ(DataLayouts("skylake-avx512", ""), Set{"NCHW16c"});
  EXPECT_EQ(DataLayouts("x86-64-v3", ""), Set{"NCHW8c"});
  EXPECT_EQ(DataLayouts("skylake-avx512", "-avx512f"), Set{"NCHW8c"});
}

TEST(Compiler, LoopIsADirectTailCallWithoutClosures) {
  auto E = compileText(R"(
def @main(%x: Tensor[(2), float32], %n: Tensor[(), int64]) -> Tensor[(2), float32] {
  let %loop = fn (%i: Tensor[(), int64], %acc: Tensor[(2), float32]) -> Tensor[(2), float32] {
    if (less(%i, %n)) {
      %loop(add(%i, 1i64), add(%acc, %x))
    } else {
      %acc
    }
  };
  %loop(0i64, %x)
}
)");
  checkWellFormed(*E);
  const VMFunction &Main = fn(*E, "main");
  EXPECT_EQ(count(Main, Opcode::AllocClosure), 0u);
  ASSERT_EQ(count(Main, Opcode::TailInvoke), 1u);
  uint32_t Loop = 0;
  for (const Instruction &I : Main.code)
    if (I.op == Opcode::TailInvoke)
      Loop = I.c;
  const VMFunction &L = E->functions.at(Loop);
  // Captured %n and %x come first, then %i and %acc.
  EXPECT_EQ(L.numParams, 4u);
  ASSERT_EQ(count(L, Opcode::TailInvoke), 1u);
  for (const Instruction &I : L.code)
    if (I.op == Opcode::TailInvoke) {
      EXPECT_EQ(I.c, Loop);
      EXPECT_EQ(I.b, 4u);
    }
  EXPECT_EQ(count(L, Opcode::If), 1u);
  EXPECT_EQ(count(L, Opcode::AllocClosure), 0u);
  EXPECT_EQ(count(L, Opcode::InvokeClosure), 0u);
}

TEST(Compiler, ClosuresCaptureFreeVariables) {
  auto E = compileText(R"(
def @main(%x: Tensor[(3), float32], %l: List[Tensor[(3), float32]]) -> List[Tensor[(3), float32]] {
  @map(fn (%e: Tensor[(3), float32]) { add(%e, %x) }, %l)
}
)");
  checkWellFormed(*E);
  const VMFunction &Main = fn(*E, "main");
  ASSERT_EQ(count(Main, Opcode::AllocClosure), 1u);
  EXPECT_EQ(count(Main, Opcode::TailInvoke), 1u);
  for (const Instruction &I : Main.code)
    if (I.op == Opcode::AllocClosure) {
      EXPECT_EQ(I.b, 1u); // %x
      EXPECT_EQ(E->functions.at(I.c).numParams, 2u);
    }
  EXPECT_GT(countAll(*E, Opcode::TailInvokeClosure) +
                countAll(*E, Opcode::InvokeClosure),
            0u);
  EXPECT_FALSE(E->mainParams[1].isTensor);
}

TEST(Compiler, MatchTestsTagsAndFailsClearly) {
  auto E = compileText(R"(
def @main(%o: Option[Tensor[(), int64]], %d: Tensor[(), int64]) -> Tensor[(), int64] {
  match (%o) {
    Some(%v) => %v,
  }
}
)");
  checkWellFormed(*E);
  const VMFunction &Main = fn(*E, "main");
  EXPECT_EQ(count(Main, Opcode::GetTag), 1u);
  EXPECT_EQ(count(Main, Opcode::GetField), 1u);
  ASSERT_EQ(count(Main, Opcode::Fatal), 1u);
  for (const Instruction &I : Main.code)
    if (I.op == Opcode::Fatal) {
      EXPECT_NE(E->strings.at(I.c).find("no clause matched"),
                std::string::npos);
    }
  for (const Instruction &I : Main.code)
    if (I.op == Opcode::LoadConsti && I.imm != 0) {
      EXPECT_EQ(E->constructors.at(I.imm).name, "Some");
    }
  EXPECT_GE(E->constructorTag("Some"), 0);
  EXPECT_GE(E->constructorTag("Cons"), 0);
}

TEST(Compiler, ListResultOpsAllocateAtRunTime) {
  auto E = compileText(R"(
def @main(%x: Tensor[(6), float32]) -> Tensor[(?), float32] {
  concat_list(split_to_list(%x, axis=0), axis=0)
}
)");
  checkWellFormed(*E);
  const KernelEntry *S =
      findKernel(*E, "split_to_list", KernelEntry::Kind::AllocatingBuiltin);
  ASSERT_NE(S, nullptr);
  EXPECT_EQ(S->attrs.getInt("list_result"), 1);
  const KernelEntry *C =
      findKernel(*E, "concat_list", KernelEntry::Kind::AllocatingBuiltin);
  ASSERT_NE(C, nullptr);
  EXPECT_EQ(C->attrs.getInt("list_argument"), 1);
}

// A chain of static intermediates: planned, they share a few slots of one
// arena; unplanned, each has its own storage.
TEST(Compiler, MemoryPlannerSharesStorage) {
  std::string Text = R"(
def @main(%x: Tensor[(64, 64), float32]) -> Tensor[(64, 64), float32] {
  let %a1 = exp(%x);
  let %a2 = exp(%a1);
  let %a3 = exp(%a2);
  let %a4 = exp(%a3);
  let %a5 = exp(%a4);
  let %a6 = exp(%a5);
  exp(%a6)
}
)";
  auto Planned = compileText(Text);
  CompileOptions Off;
  Off.planMemory = false;
  auto Unplanned = compileText(Text, Off);
  checkWellFormed(*Planned);
  checkWellFormed(*Unplanned);
  const VMFunction &P = fn(*Planned, "main");
  const VMFunction &U = fn(*Unplanned, "main");
  EXPECT_EQ(count(U, Opcode::AllocStorage), 7u);
  // The arena plus the returned tensor's own storage.
  ASSERT_EQ(count(P, Opcode::AllocStorage), 2u);
  const int64_t Bytes = 64 * 64 * 4;
  int64_t Arena = 0;
  for (const Instruction &I : P.code)
    if (I.op == Opcode::AllocStorage)
      Arena = std::max(Arena, I.imm);
  // Six intermediates, at most two live at once.
  EXPECT_EQ(Arena, 2 * Bytes);
  std::set<int64_t> Offsets;
  for (const Instruction &I : P.code)
    if (I.op == Opcode::AllocTensor)
      Offsets.insert(I.imm);
  EXPECT_EQ(Offsets.size(), 2u);
  // Registers are reused: far fewer than one per value.
  EXPECT_LE(P.numRegisters, 6u);
}

TEST(Compiler, DynamicValuesAreKilledAfterTheirLastUse) {
  auto E = compileText(R"(
def @main(%x: Tensor[(n), float32]) -> Tensor[(n), float32] {
  let %a = exp(%x);
  let %b = exp(%a);
  exp(%b)
}
)");
  checkWellFormed(*E);
  EXPECT_GE(count(fn(*E, "main"), Opcode::KillRegister), 2u);
}

TEST(Compiler, TailPositionsBecomeTailCalls) {
  auto E = compileText(R"(
def @f(%x: Tensor[(), int64]) -> Tensor[(), int64] { %x }
def @main(%c: Tensor[(), bool], %x: Tensor[(), int64]) -> Tensor[(), int64] {
  let %y = @f(%x);
  if (%c) { @f(%y) } else { add(@f(%y), 1i64) }
}
)");
  checkWellFormed(*E);
  const VMFunction &Main = fn(*E, "main");
  EXPECT_EQ(count(Main, Opcode::TailInvoke), 1u);
  EXPECT_EQ(count(Main, Opcode::Invoke), 2u);
  EXPECT_EQ(count(Main, Opcode::If), 1u);
}

TEST(Compiler, ErrorsNameTheConstruct) {
  try {
    compileText(R"(
def @f(%x: Tensor[(), int64]) -> Tensor[(), int64] { %x }
)");
    FAIL() << "a module without @main compiled";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("@main"), std::string::npos);
  }
}

TEST(Compiler, DisassemblyNamesKernels) {
  auto E = compileText(R"(
def @main(%x: Tensor[(n), float32]) -> Tensor[(n), float32] { exp(%x) }
)");
  std::string D = E->disassemble();
  EXPECT_NE(D.find("exp"), std::string::npos) << D;
  EXPECT_NE(D.find("InvokeKernel"), std::string::npos) << D;
  EXPECT_NE(D.find("AllocTensorReg"), std::string::npos) << D;
}

TEST(Compiler, EveryTestProgramCompiles) {
  fs::path Dir = RIVET_SOURCE_DIR "/tests/programs";
  size_t N = 0;
  for (const auto &Ent : fs::directory_iterator(Dir)) {
    fs::path P = Ent.path() / "program.rvir";
    if (!fs::exists(P))
      continue;
    std::ifstream In(P);
    std::stringstream SS;
    SS << In.rdbuf();
    SCOPED_TRACE(P.string());
    ir::Module M = ir::parseModule(SS.str(), P.string());
    std::shared_ptr<Executable> E;
    ASSERT_NO_THROW(E = compile(M));
    checkWellFormed(*E);
    ++N;
  }
  EXPECT_GE(N, 15u);
}

} // namespace

TEST(Compiler, OneFieldTupleResultOfARunTimeAllocatedOpIsMarked) {
  // An unknown-rank input: split allocates its result at run time. Its type
  // is a 1-tuple, which the runtime cannot tell from a tensor by itself.
  auto E = compileText(R"(
def @main(%x: Tensor[?, float32]) -> (Tensor[?, float32],) {
  split(%x, axis=0, sections=1)
}
)");
  checkWellFormed(*E);
  const KernelEntry *S =
      findKernel(*E, "split", KernelEntry::Kind::AllocatingBuiltin);
  ASSERT_NE(S, nullptr);
  EXPECT_EQ(S->attrs.getInt("tuple_result"), 1);
  VirtualMachine VM(E);
  ObjectRef R = VM.invoke(
      "main", {makeTensor(Tensor::fromVector<float>({1, 2, 3}, {3}))});
  const auto *Tup = R->as<ADTObj>();
  ASSERT_NE(Tup, nullptr);
  EXPECT_EQ(Tup->tag, ADTObj::kTupleTag);
  ASSERT_EQ(Tup->fields.size(), 1u);
  EXPECT_EQ(asTensor(Tup->fields[0], "field").toDoubleVector(),
            (std::vector<double>{1, 2, 3}));
}

// reshape, squeeze, flatten and their *_dyn forms are views: a constant or
// computed shape, then ReshapeTensor on the argument's storage; no copy.
// The arena must keep the viewed storage until the view's last use: the
// product's slot would otherwise be free for `b` while `v` still reads it.
TEST(Compiler, ReshapesAreViewsOfTheirArgument) {
  CompileOptions O0;
  O0.optLevel = 0;
  auto E = compileText(R"(
def @main(%x: Tensor[(2, 6), float32], %s: Tensor[(3,), int64])
    -> (Tensor[(3, 4), float32], Tensor[?, float32], Tensor[(12,), float32]) {
  let %a = multiply(%x, %x);
  let %v = reshape(%a, newshape=[3, 4]);
  let %b = add(%x, %x);
  let %w = reshape_dyn(%b, %s);
  let %f = flatten(squeeze(unsqueeze(%x, axes=[0]), axes=[0]), axis=0);
  (add(%v, reshape(%b, newshape=[3, 4])), %w, reshape(%f, newshape=[12]))
}
)",
                       O0);
  checkWellFormed(*E);
  for (const char *Op : {"reshape", "reshape_dyn", "squeeze", "flatten"})
    EXPECT_EQ(findKernel(*E, Op, KernelEntry::Kind::Builtin), nullptr) << Op;
  EXPECT_NE(findKernel(*E, "reshape_dyn", KernelEntry::Kind::ShapeFunction),
            nullptr);
  EXPECT_GE(count(fn(*E, "main"), Opcode::ReshapeTensor), 5u);

  std::vector<float> X(12);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = (float)I - 5;
  VirtualMachine VM(E);
  ObjectRef R = VM.invoke(
      "main", {makeTensor(Tensor::fromVector<float>(X, {2, 6})),
               makeTensor(Tensor::fromVector<int64_t>({2, 0, -1}, {3}))});
  const auto *Tup = R->as<ADTObj>();
  ASSERT_NE(Tup, nullptr);
  ASSERT_EQ(Tup->fields.size(), 3u);
  const Tensor &Sum = asTensor(Tup->fields[0], "sum");
  const Tensor &W = asTensor(Tup->fields[1], "w");
  const Tensor &F = asTensor(Tup->fields[2], "f");
  EXPECT_EQ(Sum.shape(), (Shape{3, 4}));
  EXPECT_EQ(W.shape(), (Shape{2, 6, 1}));
  for (size_t I = 0; I < X.size(); ++I) {
    EXPECT_EQ(Sum.elementAsDouble((int64_t)I), X[I] * X[I] + 2 * X[I]) << I;
    EXPECT_EQ(W.elementAsDouble((int64_t)I), 2 * X[I]) << I;
    EXPECT_EQ(F.elementAsDouble((int64_t)I), X[I]) << I;
  }
  // A shape that does not fit is the shape function's error, not a view.
  EXPECT_THROW(
      VM.invoke("main",
                {makeTensor(Tensor::fromVector<float>(X, {2, 6})),
                 makeTensor(Tensor::fromVector<int64_t>({5, 0, -1}, {3}))}),
      Error);
}
