//===- cuda_target_test.cc - Compiling for the GPU ------------------------===//
//
// --target cuda on a machine without a GPU: fused groups become GPU kernels
// (compiled by NVRTC), placement keeps small scalar work and shape
// computations on the host, and DeviceCopy appears only where a value may
// cross devices (parameters, a GPU-made loop condition); constants reach
// the GPU as LoadConst on cuda. Where a GPU is present the programs also
// run and must agree with the reference interpreter.
//
//===----------------------------------------------------------------------===//
#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"
#include "kernels/Random.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"
#include "vm/cuda/Gpu.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rivet;
using namespace rivet::vm;

namespace {

#if RIVET_HAVE_CUDA

std::shared_ptr<Executable> compileForGpu(const ir::Module &M) {
  CompileOptions O;
  O.codegen.mode = NativeCode::SharedObject;
  O.codegen.target = Device::CUDA;
  return compile(M, O);
}

ir::Module parse(const std::string &Text) {
  ir::Module M = ir::parseModule(Text, "gpu.rvir");
  ir::inferTypes(M);
  return M;
}

size_t count(const Executable &E, const std::string &Fn, Opcode Op) {
  size_t N = 0;
  for (const Instruction &I : E.functions.at(E.function(Fn)).code)
    N += I.op == Op;
  return N;
}

/// The disassembly lines of function Fn that contain Text.
size_t linesWith(const Executable &E, const std::string &Fn,
                 const std::string &Text) {
  std::string D = E.disassemble();
  size_t Start = D.find("@" + Fn + "(");
  if (Start == std::string::npos)
    Start = D.find("@" + Fn);
  size_t End = D.find("\n\n", Start);
  std::string Body =
      D.substr(Start, End == std::string::npos ? End : End - Start);
  size_t N = 0;
  for (size_t P = Body.find(Text); P != std::string::npos;
       P = Body.find(Text, P + 1))
    ++N;
  return N;
}

/// Where a GPU is present: the executable agrees with the interpreter.
void expectAgreesOnGpu(const ir::Module &M,
                       const std::shared_ptr<Executable> &Exe,
                       const std::vector<ir::Value> &Args) {
  if (!cuda::available())
    return;
  ir::Interpreter Interp(M);
  Tensor Want = Interp.call("main", Args).tensor();
  VirtualMachine VM(Exe);
  std::vector<ObjectRef> Objs;
  for (const ir::Value &A : Args)
    Objs.push_back(toObject(A, *Exe));
  Tensor Got = toValue(VM.invoke("main", std::move(Objs)), *Exe, M).tensor();
  EXPECT_TRUE(allClose(Got, Want, 1e-5, 1e-6));
}

TEST(CudaTarget, KernelsOnTheGpuCopiesAtParameters) {
  ir::Module M = parse(R"(
def @main(%x: Tensor[(n, 64), float32], %b: Tensor[(64,), float32])
    -> Tensor[(n, 1), float32] {
  let %y = tanh(multiply(exp(%x), %b));
  sum(%y, axis=[1], keepdims=1)
}
)");
  auto Exe = compileForGpu(M);
  ASSERT_TRUE(Exe->cudaCode);
  ASSERT_GE(Exe->cudaCode->images.size(), 3u); // sm_80, sm_90, PTX
  for (const NativeKernel &K : Exe->nativeKernels)
    EXPECT_EQ(K.device, Device::CUDA) << K.symbol;
  // The two parameters go to the GPU once each; the intermediate stays
  // there, and the result comes back to the host in VirtualMachine::invoke.
  EXPECT_EQ(count(*Exe, "main", Opcode::DeviceCopy), 2u) << Exe->disassemble();
  EXPECT_EQ(linesWith(*Exe, "main", "to cuda"), 2u) << Exe->disassemble();
  EXPECT_GE(linesWith(*Exe, "main", " on cuda"), 2u) << Exe->disassemble();
  expectAgreesOnGpu(M, Exe,
                    {randomTensor({3, 64}, DType::Float32, 1),
                     randomTensor({64}, DType::Float32, 2)});
}

TEST(CudaTarget, LoopCounterOnHostCarriedTensorOnGpu) {
  ir::Module M = parse(R"(
def @loop(%i: Tensor[(), int64], %n: Tensor[(), int64],
          %x: Tensor[(?, 256), float32]) -> Tensor[(?, 256), float32] {
  if (less(%i, %n)) {
    @loop(add(%i, 1i64), %n, tanh(add(%x, 0.5f32)))
  } else {
    %x
  }
}

def @main(%n: Tensor[(), int64], %x: Tensor[(?, 256), float32])
    -> Tensor[(?, 256), float32] {
  @loop(0i64, %n, %x)
}
)");
  auto Exe = compileForGpu(M);
  size_t OnGpu = 0;
  for (const NativeKernel &K : Exe->nativeKernels)
    OnGpu += K.device == Device::CUDA;
  EXPECT_EQ(OnGpu, 1u) << Exe->disassemble(); // tanh(x + 0.5)
  // In the loop: the carried tensor is copied to the GPU (a no-op after
  // the first iteration, where it is there already: it comes from the host
  // on the first call and from the GPU on the others); the counter, the
  // bound and the condition are known to be on the host (main passes host
  // values, the loop host-made ones), so nothing copies them.
  EXPECT_EQ(count(*Exe, "loop", Opcode::DeviceCopy), 1u) << Exe->disassemble();
  EXPECT_EQ(linesWith(*Exe, "loop", "to cuda"), 1u) << Exe->disassemble();
  expectAgreesOnGpu(
      M, Exe,
      {Tensor::scalar<int64_t>(5), randomTensor({2, 256}, DType::Float32, 3)});
}

TEST(CudaTarget, CallResultsKeepTheirDevice) {
  ir::Module M = parse(R"(
def @f(%x: Tensor[(?, 64), float32]) -> Tensor[(?, 64), float32] {
  exp(%x)
}

def @main(%x: Tensor[(?, 64), float32]) -> Tensor[(?, 64), float32] {
  let %y = @f(%x);
  tanh(add(%y, %x))
}
)");
  auto Exe = compileForGpu(M);
  // @f's result is made on the GPU, so main reads it there without a copy;
  // main's parameter (from the host) is copied once in each function.
  EXPECT_EQ(count(*Exe, "main", Opcode::DeviceCopy), 1u) << Exe->disassemble();
  EXPECT_EQ(count(*Exe, "f", Opcode::DeviceCopy), 1u) << Exe->disassemble();
  expectAgreesOnGpu(M, Exe, {randomTensor({3, 64}, DType::Float32, 6)});
}

TEST(CudaTarget, GpuConditionCostsOneSmallCopy) {
  ir::Module M = parse(R"(
def @main(%x: Tensor[(?, 128), float32]) -> Tensor[(?, 128), float32] {
  let %v = sum(exp(%x), axis=[0]);
  if (greater(max(%v), 10f32)) {
    tanh(%x)
  } else {
    exp(%x)
  }
}
)");
  auto Exe = compileForGpu(M);
  // The column sums run on the GPU (their input is large and dynamic); the
  // maximum of the 128 sums, a reduction to one value, and the branch run
  // on the host: one small copy to the CPU.
  EXPECT_EQ(linesWith(*Exe, "main", "to cpu"), 1u) << Exe->disassemble();
  expectAgreesOnGpu(M, Exe, {randomTensor({4, 128}, DType::Float32, 4)});
}

TEST(CudaTarget, ConstantsLoadOnTheGpu) {
  ir::Module M2 = parse(R"(
def @main(%x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
  multiply(exp(%x), const[(4,), float32]([1, 2, 3, 4]))
}
)");
  auto Exe = compileForGpu(M2);
  std::string D = Exe->disassemble();
  EXPECT_NE(D.find("LoadConst"), std::string::npos) << D;
  EXPECT_EQ(count(*Exe, "main", Opcode::DeviceCopy), 1u) << D; // only %x
  EXPECT_NE(D.find("on cuda"), std::string::npos) << D;
  expectAgreesOnGpu(M2, Exe, {randomTensor({3, 4}, DType::Float32, 5)});
}

/// Every program of tests/programs compiles for the GPU, with every kernel
/// the GPU can run placed there (closures, constructors as functions, lists
/// and mutual recursion all go through placement).
TEST(CudaTarget, EveryProgramCompiles) {
  namespace fs = std::filesystem;
  size_t N = 0;
  for (const auto &E : fs::directory_iterator(fs::path(RIVET_SOURCE_DIR) /
                                              "tests" / "programs")) {
    fs::path P = E.path() / "program.rvir";
    if (!fs::exists(P))
      continue;
    std::ifstream In(P);
    std::stringstream Text;
    Text << In.rdbuf();
    ir::Module M = ir::parseModule(Text.str(), P.string());
    ir::inferTypes(M);
    CompileOptions O;
    O.codegen.target = Device::CUDA;
    O.codegen.smallKernelsOnGpu = true;
    EXPECT_NO_THROW(compile(M, O)) << P;
    ++N;
  }
  EXPECT_GE(N, 19u);
}

/// The kernel-table entries of E named Name.
const KernelEntry *kernelNamed(const Executable &E, const std::string &Name) {
  for (const KernelEntry &K : E.kernels)
    if (K.op == Name)
      return &K;
  return nullptr;
}

/// A float32 dense with a bias and relu: cuBLAS computes the product on the
/// GPU, a generated epilogue the rest; the operands reach the library call
/// on the GPU. Without library kernels the group is generated whole; with
/// --allow-tf32 the call says so.
TEST(CudaTarget, DenseGoesToCublasWithAGeneratedEpilogue) {
  ir::Module M = parse(R"(
def @main(%x: Tensor[(n, 256), float32], %w: Tensor[(128, 256), float32],
          %b: Tensor[(128,), float32]) -> Tensor[(n, 128), float32] {
  relu(add(dense(%x, %w), %b))
}
)");
  auto Exe = compileForGpu(M);
  std::string D = Exe->disassemble();
  EXPECT_EQ(linesWith(*Exe, "main", "cuda.dense on cuda("), 1u) << D;
  const KernelEntry *K = kernelNamed(*Exe, "cuda.dense");
  ASSERT_TRUE(K) << D;
  EXPECT_FALSE(K->attrs.has("allow_tf32"));
  // The epilogue (add, relu) is one generated kernel on the GPU.
  ASSERT_EQ(Exe->nativeKernels.size(), 1u) << D;
  EXPECT_EQ(Exe->nativeKernels[0].device, Device::CUDA);
  EXPECT_EQ(count(*Exe, "main", Opcode::DeviceCopy), 3u) << D; // x, w, b
  expectAgreesOnGpu(M, Exe,
                    {randomTensor({5, 256}, DType::Float32, 1),
                     randomTensor({128, 256}, DType::Float32, 2),
                     randomTensor({128}, DType::Float32, 3)});

  CompileOptions O;
  O.codegen.mode = NativeCode::SharedObject;
  O.codegen.target = Device::CUDA;
  O.allowTf32 = true;
  auto Tf32 = compile(M, O);
  const KernelEntry *KT = kernelNamed(*Tf32, "cuda.dense");
  ASSERT_TRUE(KT) << Tf32->disassemble();
  EXPECT_EQ(KT->attrs.getInt("allow_tf32", 0), 1);

  O.allowTf32 = false;
  O.libraryKernels = false;
  auto Generated = compile(M, O);
  EXPECT_FALSE(kernelNamed(*Generated, "cuda.dense"))
      << Generated->disassemble();
  EXPECT_EQ(linesWith(*Generated, "main", " on cuda("), 1u)
      << Generated->disassemble(); // one kernel for the whole group
}

/// conv + bias + relu: cuDNN for the convolution; a batched matmul whose
/// weight is shared by the batch: one strided cuBLAS call. Small static
/// products stay generated (a library call's fixed cost would dominate).
TEST(CudaTarget, ConvAndMatmulGoToTheLibraries) {
  ir::Module M = parse(R"(
def @main(%x: Tensor[(n, 8, 16, 16), float32], %w: Tensor[(16, 8, 3, 3), float32],
          %b: Tensor[(16, 1, 1), float32], %m: Tensor[(16, 16), float32],
          %s: Tensor[(2, 4), float32], %t: Tensor[(4, 2), float32])
    -> (Tensor[(n, 16, 16, 16), float32], Tensor[(2, 2), float32]) {
  let %c = relu(add(conv(%x, %w, pads=[1, 1, 1, 1]), %b));
  (matmul(%c, %m), matmul(%s, %t))
}
)");
  auto Exe = compileForGpu(M);
  std::string D = Exe->disassemble();
  EXPECT_EQ(linesWith(*Exe, "main", "cuda.conv on cuda{"), 1u) << D;
  EXPECT_EQ(linesWith(*Exe, "main", "cuda.matmul on cuda("), 1u) << D;
  if (!cuda::available())
    return;
  ir::Interpreter Interp(M);
  std::vector<ir::Value> Args = {
      randomTensor({2, 8, 16, 16}, DType::Float32, 1),
      randomTensor({16, 8, 3, 3}, DType::Float32, 2),
      randomTensor({16, 1, 1}, DType::Float32, 3),
      randomTensor({16, 16}, DType::Float32, 4),
      randomTensor({2, 4}, DType::Float32, 5),
      randomTensor({4, 2}, DType::Float32, 6)};
  ir::Value Want = Interp.call("main", Args);
  VirtualMachine VM(Exe);
  std::vector<ObjectRef> Objs;
  for (const ir::Value &A : Args)
    Objs.push_back(toObject(A, *Exe));
  ir::Value Got = toValue(VM.invoke("main", std::move(Objs)), *Exe, M);
  for (size_t I = 0; I < 2; ++I)
    EXPECT_TRUE(allClose(Got.fields()[I].tensor(), Want.fields()[I].tensor(),
                         1e-4, 1e-5))
        << I;
}

/// An executable whose only GPU work is a library call has a CUDA code
/// section without images: it survives the file round trip, and without a
/// GPU the VM refuses it as any CUDA executable.
TEST(CudaTarget, LibraryOnlyExecutableRoundTrips) {
  ir::Module M = parse(R"(
def @main(%a: Tensor[(n, 64, 64), float32], %b: Tensor[(n, 64, 64), float32])
    -> Tensor[(n, 64, 64), float32] {
  matmul(%a, %b)
}
)");
  auto Exe = compileForGpu(M);
  ASSERT_TRUE(Exe->cudaCode) << Exe->disassemble();
  EXPECT_TRUE(Exe->cudaCode->images.empty());
  EXPECT_TRUE(Exe->nativeKernels.empty());
  std::vector<uint8_t> Bytes = Exe->serialize();
  auto Back = Executable::deserialize(Bytes.data(), Bytes.size(), "test");
  ASSERT_TRUE(Back->cudaCode);
  EXPECT_EQ(Back->disassemble(), Exe->disassemble());
  expectAgreesOnGpu(M, Back,
                    {randomTensor({3, 64, 64}, DType::Float32, 1),
                     randomTensor({3, 64, 64}, DType::Float32, 2)});
  std::string Why;
  if (cuda::available(&Why))
    return;
  EXPECT_THROW(VirtualMachine VM(Back), Error);
}

TEST(CudaTarget, WithoutAGpuTheVmSaysSo) {
  std::string Why;
  if (cuda::available(&Why))
    GTEST_SKIP() << "this machine has a GPU";
  EXPECT_FALSE(Why.empty());
  ir::Module M = parse(R"(
def @main(%x: Tensor[(n, 64), float32]) -> Tensor[(n, 64), float32] {
  tanh(exp(%x))
}
)");
  auto Exe = compileForGpu(M);
  try {
    VirtualMachine VM(Exe);
    ADD_FAILURE() << "a VM was made for a CUDA executable without a GPU";
  } catch (const Error &E) {
    EXPECT_EQ(std::string(E.what()),
              "this executable needs a CUDA GPU: " + Why);
  }
}

#else

TEST(CudaTarget, NeedsTheToolkit) {
  GTEST_SKIP() << "built without the CUDA toolkit";
}

#endif

} // namespace
