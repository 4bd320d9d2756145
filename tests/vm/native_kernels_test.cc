//===- native_kernels_test.cc - Generated kernels run by the VM -----------===//
//
// Fused groups compiled to native kernels (JIT and shared object) must give
// the interpreter's results, through the executable and after a .rvx round
// trip; a dynamic program runs at several sizes through one executable; a
// group codegen refuses stays on builtin kernels; a JIT executable cannot be
// saved; code for another CPU compiles and saves but does not run here;
// output extents that broadcast inputs' unknown extents are computed and
// checked by the VM.
//
//===----------------------------------------------------------------------===//
#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/DnnlConfig.h"
#include "kernels/Random.h"
#include "vm/RvxFormat.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

using namespace rivet;

namespace {

/// An elementwise chain with a broadcast bias: one fused group.
const char *ChainText = R"(
def @main(%x: Tensor[(N, 64), float32], %y: Tensor[(N, 64), float32],
          %b: Tensor[(64,), float32]) -> Tensor[(N, 64), float32] {
  let %a = add(%x, %y);
  let %e = exp(%a);
  let %m = multiply(%e, %b);
  tanh(subtract(%m, %x))
}
)";

/// A reduction group, then an elementwise group over its result.
const char *ReduceText = R"(
def @main(%x: Tensor[(N, 32), float32]) -> Tensor[(N,), float32] {
  let %s = sum(exp(%x), axis=[1]);
  sqrt(add(%s, 1f32))
}
)";

ir::Module parse(const std::string &Text, int64_t StaticN) {
  std::string T = Text;
  std::string N = StaticN > 0 ? std::to_string(StaticN) : std::string("n");
  for (size_t P; (P = T.find("N,")) != std::string::npos;)
    T.replace(P, 1, N);
  ir::Module M = ir::parseModule(T, "test.rvir");
  ir::inferTypes(M);
  return M;
}

/// Seeded random inputs for @main of M, with N for its symbolic extent.
std::vector<ir::Value> inputs(const ir::Module &M, int64_t N, uint64_t Seed) {
  std::vector<ir::Value> Args;
  for (const ir::Var &P : M.function("main")->as<ir::FunctionNode>()->params) {
    const auto *TT = P->typeAnnotation->as<ir::TensorTypeNode>();
    Shape S;
    for (const ir::Dim &D : *TT->shape)
      S.push_back(D.isConst() ? D.value : N);
    Args.push_back(randomTensor(S, TT->dtype, Seed++));
  }
  return Args;
}

size_t countKernels(const vm::Executable &E, vm::KernelEntry::Kind K) {
  size_t N = 0;
  for (const vm::KernelEntry &Entry : E.kernels)
    N += Entry.kind == K;
  return N;
}

/// How many InvokeKernel instructions of @main use entries of kind K.
size_t mainKernelCalls(const vm::Executable &E, vm::KernelEntry::Kind K) {
  size_t N = 0;
  for (const vm::Instruction &I : E.functions[E.function("main")].code)
    N += I.op == vm::Opcode::InvokeKernel && E.kernels[I.c].kind == K;
  return N;
}

/// Runs @main of Exe on Args twice on one fresh VM and compares each result
/// with the interpreter's; What names the case in failures.
void expectAgreesOnArgs(const ir::Module &M,
                        const std::shared_ptr<vm::Executable> &Exe,
                        const std::vector<ir::Value> &Args,
                        const std::string &What) {
  Tensor Want = ir::Interpreter(M).call("main", Args).tensor();
  vm::VirtualMachine VM(Exe);
  for (int Run = 0; Run < 2; ++Run) {
    std::vector<vm::ObjectRef> Objs;
    for (const ir::Value &A : Args)
      Objs.push_back(vm::toObject(A, *Exe));
    Tensor Got =
        vm::toValue(VM.invoke("main", std::move(Objs)), *Exe, M).tensor();
    EXPECT_EQ(Got.shape(), Want.shape()) << What;
    EXPECT_TRUE(allClose(Got, Want, 1e-5, 1e-6))
        << What << ", run " << Run << ": got " << Got.typeString()
        << ", expected " << Want.typeString();
  }
}

/// Runs @main on a fresh VM of Exe and compares with the interpreter.
void expectAgrees(const ir::Module &M,
                  const std::shared_ptr<vm::Executable> &Exe, int64_t N,
                  const std::string &What) {
  expectAgreesOnArgs(M, Exe, inputs(M, N, 7 + (uint64_t)N),
                     What + " (N=" + std::to_string(N) + ")");
}

/// How many instructions of @main have opcode Op.
size_t mainOps(const vm::Executable &E, vm::Opcode Op) {
  size_t N = 0;
  for (const vm::Instruction &I : E.functions[E.function("main")].code)
    N += I.op == Op;
  return N;
}

vm::CompileOptions options(vm::NativeCode Mode) {
  vm::CompileOptions O;
  O.codegen.mode = Mode;
  return O;
}

std::shared_ptr<vm::Executable> roundTrip(const vm::Executable &E) {
  std::vector<uint8_t> Bytes = E.serialize();
  return vm::Executable::deserialize(Bytes.data(), Bytes.size(), "test.rvx");
}

class NativeModes : public ::testing::TestWithParam<vm::NativeCode> {};

TEST_P(NativeModes, StaticChainAgreesWithInterpreter) {
  ir::Module M = parse(ChainText, 5);
  auto Exe = vm::compile(M, options(GetParam()));
  EXPECT_GE(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Native), 1u);
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Builtin), 0u);
  EXPECT_NE(Exe->disassemble().find("native rivet_k"), std::string::npos);
  expectAgrees(M, Exe, 5, "static chain");
}

TEST_P(NativeModes, DynamicChainRunsAtSeveralSizesThroughOneExecutable) {
  ir::Module M = parse(ChainText, 0);
  auto Exe = vm::compile(M, options(GetParam()));
  EXPECT_GE(countKernels(*Exe, vm::KernelEntry::Kind::Native), 1u);
  // The output shape comes from the kernel's recipe, not a builtin.
  EXPECT_GE(countKernels(*Exe, vm::KernelEntry::Kind::NativeShapeFunction), 1u);
  for (int64_t N : {1, 7, 33})
    expectAgrees(M, Exe, N, "dynamic chain");
}

TEST_P(NativeModes, ReductionGroupsAgreeWithInterpreter) {
  for (int64_t StaticN : {0, 6}) {
    ir::Module M = parse(ReduceText, StaticN);
    auto Exe = vm::compile(M, options(GetParam()));
    EXPECT_GE(countKernels(*Exe, vm::KernelEntry::Kind::Native), 1u);
    for (int64_t N : {6})
      expectAgrees(M, Exe, N, "reduction");
    if (StaticN == 0)
      expectAgrees(M, Exe, 3, "reduction");
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, NativeModes,
                         ::testing::Values(vm::NativeCode::Jit,
                                           vm::NativeCode::SharedObject),
                         [](const auto &Info) {
                           return Info.param == vm::NativeCode::Jit
                                      ? std::string("Jit")
                                      : std::string("SharedObject");
                         });

TEST(NativeKernels, SharedObjectSurvivesSerialization) {
  ir::Module M = parse(ChainText, 0);
  auto Exe = vm::compile(M, options(vm::NativeCode::SharedObject));
  ASSERT_TRUE(Exe->nativeCode.has_value());
  auto Loaded = roundTrip(*Exe);
  EXPECT_EQ(Loaded->nativeKernels.size(), Exe->nativeKernels.size());
  EXPECT_EQ(Loaded->disassemble(), Exe->disassemble());
  for (int64_t N : {2, 9})
    expectAgrees(M, Loaded, N, "loaded .rvx");
  // Saving the loaded executable gives the same bytes.
  EXPECT_EQ(Loaded->serialize(), Exe->serialize());
}

TEST(NativeKernels, OffModeHasNoNativeKernels) {
  // (The prelude's functions have fused groups too: none may be native.)
  ir::Module M = parse(ChainText, 0);
  auto Exe = vm::compile(M, options(vm::NativeCode::Off));
  EXPECT_EQ(countKernels(*Exe, vm::KernelEntry::Kind::Native), 0u);
  EXPECT_TRUE(Exe->nativeKernels.empty());
  expectAgrees(M, Exe, 4, "codegen off");
}

TEST(NativeKernels, RefusedGroupsStayBuiltinAndAgree) {
  // float16 has no generated code; a concatenation's output extent (n + m)
  // is not an input's extent, so no recipe allocates it.
  for (const char *Text : {R"(
def @main(%x: Tensor[(2, 3), float16], %y: Tensor[(2, 3), float16])
    -> Tensor[(2, 3), float16] {
  exp(add(%x, %y))
}
)",
                           R"(
def @main(%x: Tensor[(N, 4), float32], %y: Tensor[(N, 4), float32])
    -> Tensor[(?, 4), float32] {
  exp(concatenate(exp(%x), tanh(%y), axis=0))
}
)"}) {
    ir::Module M = parse(Text, 0);
    auto Exe = vm::compile(M, options(vm::NativeCode::SharedObject));
    EXPECT_FALSE(Exe->nativeRefusals.empty());
    EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Native), 0u);
    EXPECT_GE(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Builtin), 2u);
    expectAgrees(M, Exe, 3, "refused group");
    expectAgrees(M, roundTrip(*Exe), 5, "refused group, loaded");
  }
}

/// A matmul whose tail oneDNN's post-ops cannot express (subtract, exp),
/// big enough per row (64 x 64) to be worth a oneDNN call.
const char *AnchorText = R"(
def @main(%x: Tensor[(N, 64), float32], %w: Tensor[(64, 64), float32],
          %b: Tensor[(64,), float32]) -> Tensor[(N, 64), float32] {
  exp(subtract(add(matmul(%x, %w), %b), %b))
}
)";

/// An RNN step: a few rows of a small dense with its tail.
const char *SmallAnchorText = R"(
def @main(%x: Tensor[(N, 4), float32], %w: Tensor[(8, 4), float32],
          %b: Tensor[(8,), float32], %h: Tensor[(N, 8), float32])
          -> Tensor[(N, 8), float32] {
  tanh(add(add(dense(%x, %w), %b), %h))
}
)";

/// A decoder step's projection: a few rows of a small dense plus its bias,
/// a tail oneDNN could run as a post-op.
const char *SmallBiasedDenseText = R"(
def @main(%x: Tensor[(N, 32), float32], %w: Tensor[(50, 32), float32],
          %b: Tensor[(50,), float32]) -> Tensor[(N, 50), float32] {
  add(dense(%x, %w), %b)
}
)";

/// M compiled to a shared object with oneDNN on, whatever the environment
/// says.
std::shared_ptr<vm::Executable> compileWithDnnl(const ir::Module &M) {
  bool Saved = dnnlEnabled();
  setDnnlEnabled(true);
  auto Exe = vm::compile(M, options(vm::NativeCode::SharedObject));
  setDnnlEnabled(Saved);
  return Exe;
}

TEST(NativeKernels, AnchorKeepsLibraryKernelWithGeneratedEpilogue) {
  ir::Module M = parse(AnchorText, 0);
  auto Exe = compileWithDnnl(M);
  // The matmul on the builtin (oneDNN) kernel, the rest one native kernel.
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Builtin), 1u);
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Native), 1u);
  for (int64_t N : {1, 6})
    expectAgrees(M, roundTrip(*Exe), N, "anchor + epilogue");
}

TEST(NativeKernels, AnchorGroupIsGeneratedWithoutOneDnn) {
  DnnlDisabledScope NoDnnl;
  ir::Module M = parse(AnchorText, 0);
  auto Exe = vm::compile(M, options(vm::NativeCode::SharedObject));
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Builtin), 0u);
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Native), 1u);
  for (int64_t N : {2, 5})
    expectAgrees(M, Exe, N, "generated anchor");
}

TEST(NativeKernels, SmallAnchorGroupIsGeneratedWhole) {
  // A oneDNN call (or a builtin dense with a generated epilogue) would cost
  // more than the whole group as one loop nest.
  ir::Module M = parse(SmallAnchorText, 0);
  auto Exe = compileWithDnnl(M);
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Builtin), 0u);
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Native), 1u);
  for (int64_t N : {1, 2, 5})
    expectAgrees(M, roundTrip(*Exe), N, "small anchor group");
}

TEST(NativeKernels, SmallAnchorWithALibraryTailIsGeneratedWhole) {
  // oneDNN could take the dense and its bias in one call (dnnl.dense_fused),
  // at 20 times the cost of the generated group for two rows.
  ir::Module M = parse(SmallBiasedDenseText, 0);
  auto Exe = compileWithDnnl(M);
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Builtin), 0u);
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Native), 1u);
  for (int64_t N : {1, 2, 5})
    expectAgrees(M, roundTrip(*Exe), N, "small dense + bias");
}

TEST(NativeKernels, JitExecutableCannotBeSaved) {
  ir::Module M = parse(ChainText, 3);
  auto Exe = vm::compile(M, options(vm::NativeCode::Jit));
  ASSERT_FALSE(Exe->nativeKernels.empty());
  try {
    Exe->serialize();
    ADD_FAILURE() << "a JIT executable was saved";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("shared-object"), std::string::npos)
        << E.what();
  }
}

TEST(NativeKernels, ForeignCpuCompilesAndSavesButDoesNotRunHere) {
  ir::Module M = parse(ChainText, 4);
  vm::CompileOptions O = options(vm::NativeCode::SharedObject);
  O.codegen.cpu = "x86-64"; // the baseline: not the host's CPU name
  auto Exe = vm::compile(M, O);
  ASSERT_FALSE(Exe->nativeKernels.empty());
  EXPECT_FALSE(Exe->nativeUnavailable.empty());
  try {
    vm::VirtualMachine VM(Exe);
    ADD_FAILURE() << "code for another CPU was run";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("x86-64"), std::string::npos)
        << E.what();
  }
  // Baseline x86-64 code needs no feature: this CPU can load and run it.
  expectAgrees(M, roundTrip(*Exe), 4, "baseline code");

  // Code needing a feature this CPU lacks is refused when loaded.
  if (!vm::rvx::hostHasCpuFeature("avx512f")) {
    O.codegen.features = "+avx512f";
    auto Wide = vm::compile(M, O);
    std::vector<uint8_t> Bytes = Wide->serialize();
    try {
      vm::Executable::deserialize(Bytes.data(), Bytes.size(), "wide.rvx");
      ADD_FAILURE() << "avx512f code was loaded on a CPU without it";
    } catch (const Error &E) {
      EXPECT_NE(std::string(E.what()).find("avx512f"), std::string::npos)
          << E.what();
    }
  }
}

TEST(NativeKernels, InputsInconsistentWithTheKernelAreRefused) {
  ir::Module M = parse(ChainText, 0);
  auto Exe = vm::compile(M, options(vm::NativeCode::SharedObject));
  vm::VirtualMachine VM(Exe);
  // %x and %y share the extent n: different extents must not reach the
  // kernel (it would read past the shorter one).
  std::vector<vm::ObjectRef> Objs = {
      vm::makeTensor(randomTensor({4, 64}, DType::Float32, 1)),
      vm::makeTensor(randomTensor({2, 64}, DType::Float32, 2)),
      vm::makeTensor(randomTensor({64}, DType::Float32, 3))};
  EXPECT_THROW(VM.invoke("main", std::move(Objs)), Error);
}

TEST(NativeKernels, OutputOverlappingAnInputIsRefused) {
  ir::Module M = parse(ChainText, 4);
  auto Exe = vm::compile(M, options(vm::NativeCode::Jit));
  // Make main's native call write into its first input.
  vm::VMFunction &Main = Exe->functions[Exe->function("main")];
  bool Changed = false;
  for (const vm::Instruction &I : Main.code)
    if (I.op == vm::Opcode::InvokeKernel &&
        Exe->kernels[I.c].kind == vm::KernelEntry::Kind::Native) {
      Main.pool[I.a + I.d] = Main.pool[I.a];
      Changed = true;
    }
  ASSERT_TRUE(Changed);
  Exe->verify();
  vm::VirtualMachine VM(Exe);
  std::vector<vm::ObjectRef> Objs;
  for (const ir::Value &A : inputs(M, 4, 1))
    Objs.push_back(vm::toObject(A, *Exe));
  try {
    VM.invoke("main", std::move(Objs));
    ADD_FAILURE() << "the kernel ran with its output over an input";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("overlaps input 0"), std::string::npos)
        << E.what();
  }
}

/// A layer norm's tail: the output's leading extents are broadcasts of two
/// inputs' unknown extents, computed and checked by the VM at every call.
const char *BroadcastText = R"(
def @main(%x: Tensor[(?, ?, 16), float32], %m: Tensor[(?, ?, 1), float32],
          %g: Tensor[(16,), float32]) -> Tensor[(?, ?, 16), float32] {
  multiply(tanh(subtract(%x, %m)), %g)
}
)";

/// A broadcast hidden inside the group: the output (a reduction) does not
/// show it, but the kernel's reads still assume it.
const char *HiddenBroadcastText = R"(
def @main(%x: Tensor[(?,), float32], %y: Tensor[(?,), float32])
    -> Tensor[(), float32] {
  sum(exp(add(%x, %y)), axis=[0])
}
)";

ir::Module parseTyped(const char *Text) {
  ir::Module M = ir::parseModule(Text, "test.rvir");
  ir::inferTypes(M);
  return M;
}

/// Runs @main of Exe on random inputs of Shapes (twice on one VM) and
/// compares with the interpreter.
void expectAgreesOn(const ir::Module &M,
                    const std::shared_ptr<vm::Executable> &Exe,
                    const std::vector<Shape> &Shapes, const std::string &What) {
  std::vector<ir::Value> Args;
  for (size_t I = 0; I < Shapes.size(); ++I)
    Args.push_back(randomTensor(Shapes[I], DType::Float32, 11 + I));
  expectAgreesOnArgs(M, Exe, Args,
                     What + " (inputs " + shapeToString(Shapes[0]) + ", " +
                         shapeToString(Shapes[1]) + ")");
}

/// Runs @main on one VM of Exe for each shape list in turn (its registers
/// and recycled shape tensors carried from one call to the next) and
/// compares with the interpreter.
void expectOneVmAgrees(const ir::Module &M,
                       const std::shared_ptr<vm::Executable> &Exe,
                       const std::vector<std::vector<Shape>> &Calls) {
  vm::VirtualMachine VM(Exe);
  ir::Interpreter Interp(M);
  uint64_t Seed = 40;
  for (const std::vector<Shape> &Shapes : Calls) {
    std::vector<ir::Value> Args;
    for (const Shape &S : Shapes)
      Args.push_back(randomTensor(S, DType::Float32, Seed++));
    Tensor Want = Interp.call("main", Args).tensor();
    std::vector<vm::ObjectRef> Objs;
    for (const ir::Value &A : Args)
      Objs.push_back(vm::toObject(A, *Exe));
    Tensor Got =
        vm::toValue(VM.invoke("main", std::move(Objs)), *Exe, M).tensor();
    EXPECT_EQ(Got.shape(), Want.shape()) << shapeToString(Shapes[0]);
    EXPECT_TRUE(allClose(Got, Want, 1e-5, 1e-6)) << shapeToString(Shapes[0]);
  }
}

/// The message of running @main of Exe on zero tensors of Shapes.
std::string errorOn(const std::shared_ptr<vm::Executable> &Exe,
                    const std::vector<Shape> &Shapes) {
  vm::VirtualMachine VM(Exe);
  std::vector<vm::ObjectRef> Objs;
  for (const Shape &S : Shapes)
    Objs.push_back(vm::makeTensor(randomTensor(S, DType::Float32, 5)));
  try {
    VM.invoke("main", std::move(Objs));
  } catch (const Error &E) {
    return E.what();
  }
  return "(ran)";
}

TEST_P(NativeModes, BroadcastExtentsRunAtSeveralShapesThroughOneExecutable) {
  ir::Module M = parseTyped(BroadcastText);
  auto Exe = vm::compile(M, options(GetParam()));
  EXPECT_TRUE(Exe->nativeRefusals.empty())
      << fmt::format("{}", fmt::join(Exe->nativeRefusals, "; "));
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Native), 1u);
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Builtin), 0u);
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::NativeShapeFunction),
            1u);
  std::string Text = Exe->disassemble();
  EXPECT_NE(Text.find("= broadcast(s"), std::string::npos) << Text;
  std::vector<std::shared_ptr<vm::Executable>> Exes = {Exe};
  if (GetParam() == vm::NativeCode::SharedObject) {
    Exes.push_back(roundTrip(*Exe));
    EXPECT_EQ(Exes.back()->disassemble(), Text);
  }
  for (const auto &E : Exes) {
    // Same extents; x broadcast along both axes; m broadcast along axis 1.
    expectAgreesOn(M, E, {{5, 2, 16}, {5, 2, 1}, {16}}, "equal extents");
    expectAgreesOn(M, E, {{1, 1, 16}, {4, 3, 1}, {16}}, "x broadcast");
    expectAgreesOn(M, E, {{7, 3, 16}, {7, 1, 1}, {16}}, "m broadcast");
    expectOneVmAgrees(M, E,
                      {{{5, 2, 16}, {5, 2, 1}, {16}},
                       {{1, 1, 16}, {4, 3, 1}, {16}},
                       {{2, 3, 16}, {1, 1, 1}, {16}},
                       {{5, 2, 16}, {5, 2, 1}, {16}}});
    std::string Err = errorOn(E, {{3, 2, 16}, {4, 2, 1}, {16}});
    EXPECT_NE(Err.find("do not broadcast: extent 3 (input 0 axis 0) and "
                       "extent 4 (input 1 axis 0) differ"),
              std::string::npos)
        << Err;
  }
}

TEST_P(NativeModes, BroadcastInsideTheGroupIsChecked) {
  ir::Module M = parseTyped(HiddenBroadcastText);
  auto Exe = vm::compile(M, options(GetParam()));
  ASSERT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Native), 1u);
  EXPECT_NE(Exe->disassemble().find("= broadcast(s"), std::string::npos);
  expectAgreesOn(M, Exe, {{6}, {6}}, "equal");
  expectAgreesOn(M, Exe, {{6}, {1}}, "y broadcast");
  expectAgreesOn(M, Exe, {{1}, {9}}, "x broadcast");
  // x longer than y: without the check the kernel would read past y.
  std::string Err = errorOn(Exe, {{8}, {3}});
  EXPECT_NE(Err.find("do not broadcast"), std::string::npos) << Err;
}

/// Slices of a tensor whose leading extents the types leave unknown (a
/// product after a dynamic reshape): the sliced axis is known, the others
/// are the input's, so each group is generated; and a partial slice of an
/// unknown axis, whose extent no input has, stays builtin.
const char *UnknownSliceText = R"(
def @main(%x: Tensor[(?, ?, 12), float32]) {
  let %a = exp(strided_slice(%x, axes=[-1], begin=[4], end=[12], strides=[2]));
  let %b = strided_slice(%x, axes=[0, 2], begin=[0, -3],
                         end=[9223372036854775807, 100]);
  let %c = strided_slice(%x, axes=[1], begin=[1], end=[3]);
  (%a, %b, %c)
}
)";

TEST_P(NativeModes, SlicesOfUnknownExtentsAreGenerated) {
  ir::Module M = parseTyped(UnknownSliceText);
  auto Exe = vm::compile(M, options(GetParam()));
  ASSERT_EQ(Exe->nativeRefusals.size(), 1u)
      << fmt::format("{}", fmt::join(Exe->nativeRefusals, "; "));
  EXPECT_NE(Exe->nativeRefusals[0].find("group of strided_slice"),
            std::string::npos)
      << Exe->nativeRefusals[0];
  EXPECT_EQ(mainKernelCalls(*Exe, vm::KernelEntry::Kind::Native), 2u);
  for (Shape S : {Shape{5, 4, 12}, Shape{1, 1, 12}, Shape{3, 7, 12}}) {
    std::vector<ir::Value> Args = {randomTensor(S, DType::Float32, 3)};
    std::vector<ir::Value> Want =
        ir::Interpreter(M).call("main", Args).fields();
    vm::VirtualMachine VM(Exe);
    std::vector<ir::Value> Got =
        vm::toValue(VM.invoke("main", {vm::toObject(Args[0], *Exe)}), *Exe, M)
            .fields();
    ASSERT_EQ(Got.size(), Want.size());
    for (size_t I = 0; I < Got.size(); ++I) {
      EXPECT_EQ(Got[I].tensor().shape(), Want[I].tensor().shape())
          << shapeToString(S) << " output " << I;
      EXPECT_TRUE(allClose(Got[I].tensor(), Want[I].tensor(), 1e-6, 1e-6))
          << shapeToString(S) << " output " << I;
    }
  }
}

} // namespace

// A group that only reshapes its parameter is a view (ReshapeTensor), not a
// generated copy; one that also computes stays a native kernel.
TEST_P(NativeModes, ReshapeOnlyGroupsAreViews) {
  ir::Module View = parse(R"(
def @main(%x: Tensor[(N, 1, 64), float32]) -> Tensor[(N, 64), float32] {
  reshape(squeeze(%x, axes=[1]), newshape=[0, 64])
}
)",
                          0);
  auto Exe = vm::compile(View, options(GetParam()));
  EXPECT_EQ(countKernels(*Exe, vm::KernelEntry::Kind::Native), 0u);
  EXPECT_EQ(mainOps(*Exe, vm::Opcode::ReshapeTensor), 1u);
  for (int64_t N : {1, 7, 33})
    expectAgrees(View, Exe, N, "reshape-only group");

  ir::Module Compute = parse(R"(
def @main(%x: Tensor[(N, 1, 64), float32]) -> Tensor[(N, 64), float32] {
  exp(squeeze(%x, axes=[1]))
}
)",
                             0);
  Exe = vm::compile(Compute, options(GetParam()));
  EXPECT_GE(countKernels(*Exe, vm::KernelEntry::Kind::Native), 1u);
  EXPECT_EQ(mainOps(*Exe, vm::Opcode::ReshapeTensor), 0u);
  expectAgrees(Compute, Exe, 7, "reshape and exp");
}
