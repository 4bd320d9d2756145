//===- bench_vm_dispatch.cc - The VM's own cost per instruction -----------===//
//
// A benchmark, not a test. Runs a tail-recursive loop of tiny scalar kernels
// (less, add, add) on the VM for N iterations and subtracts the time the
// same kernel calls take when made directly (kernel functions on
// preallocated scalars): what remains, divided by the instructions the VM
// executed, is its dispatch cost per instruction (allocation, register moves,
// frame reuse, kernel-argument marshalling included). Times are the thread's
// CPU time, best of R runs.
//
//   bench_vm_dispatch [--iterations N] [--repeat R] [-O0..-O3]
//                     [--codegen off|jit] [--dump]
//
// With --codegen off (the default) the loop runs the builtin kernels; with
// --codegen jit, generated ones. Either way the kernels' own time is that
// of the same kernels called directly.
//
// --dump prints the loop's bytecode instead of timing it.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"
#include "kernels/Kernel.h"
#include "kernels/NativeKernelAbi.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

using namespace rivet;

static const char *const LoopProgram = R"(
def @loop(%i: Tensor[(), int64], %n: Tensor[(), int64], %acc: Tensor[(), float32]) -> Tensor[(), float32] {
  if (less(%i, %n)) {
    @loop(add(%i, 1i64), %n, add(%acc, 1f32))
  } else {
    %acc
  }
}

def @main(%n: Tensor[(), int64]) -> Tensor[(), float32] {
  @loop(0i64, %n, 0f32)
}
)";

/// CPU seconds of this thread: on a machine whose cores are shared with
/// other work, wall time also counts the time the thread waited for a core.
static double threadSeconds() {
  timespec T;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &T);
  return (double)T.tv_sec + (double)T.tv_nsec * 1e-9;
}

/// CPU seconds for one call of F, the minimum over Repeat calls.
template <typename Fn> static double bestOf(int Repeat, Fn &&F) {
  double Best = 1e30;
  for (int R = 0; R < Repeat; ++R) {
    double T0 = threadSeconds();
    F();
    Best = std::min(Best, threadSeconds() - T0);
  }
  return Best;
}

/// The time of the loop body's kernels called directly, per iteration.
static double kernelSecondsPerIteration(int64_t N, int Repeat) {
  const KernelInfo &Less = KernelRegistry::global().get("less");
  const KernelInfo &Add = KernelRegistry::global().get("add");
  Attrs None;
  std::vector<Tensor> LessIn = {Tensor::scalar<int64_t>(0),
                                Tensor::scalar<int64_t>(N)};
  std::vector<Tensor> LessOut = {Tensor::zeros({}, DType::Bool)};
  std::vector<Tensor> AddIIn = {Tensor::scalar<int64_t>(0),
                                Tensor::scalar<int64_t>(1)};
  std::vector<Tensor> AddIOut = {Tensor::zeros({}, DType::Int64)};
  std::vector<Tensor> AddFIn = {Tensor::scalar<float>(0),
                                Tensor::scalar<float>(1)};
  std::vector<Tensor> AddFOut = {Tensor::zeros({}, DType::Float32)};
  double S = bestOf(Repeat, [&] {
    for (int64_t I = 0; I < N; ++I) {
      Less.kernel(LessIn, LessOut, None);
      Add.kernel(AddIIn, AddIOut, None);
      Add.kernel(AddFIn, AddFOut, None);
    }
  });
  return S / (double)N;
}

/// CPU seconds per iteration of the generated kernels @loop calls, each
/// called directly on scalar buffers (what the VM pays for the kernels
/// themselves when the loop runs generated code).
static double nativeSecondsPerIteration(const vm::Executable &Exe, int64_t N,
                                        int Repeat) {
  std::vector<const vm::NativeKernel *> Called;
  for (const vm::Instruction &I : Exe.functions[Exe.function("loop")].code)
    if (I.op == vm::Opcode::InvokeKernel &&
        Exe.kernels[I.c].kind == vm::KernelEntry::Kind::Native)
      Called.push_back(&Exe.nativeKernels[Exe.kernels[I.c].native]);
  std::vector<std::vector<Tensor>> Buffers;
  std::vector<std::vector<void *>> Pointers;
  for (const vm::NativeKernel *K : Called) {
    Buffers.emplace_back();
    Pointers.emplace_back();
    for (const vm::NativeKernel::Buffer &B : K->buffers) {
      Buffers.back().push_back(Tensor::zeros(B.dims, B.dtype));
      Pointers.back().push_back(Buffers.back().back().rawData());
    }
  }
  const RivetKernelRuntime *RT = &kernelRuntime();
  int64_t Sizes[1] = {0};
  double S = bestOf(Repeat, [&] {
    for (int64_t I = 0; I < N; ++I)
      for (size_t K = 0; K < Called.size(); ++K)
        Called[K]->fn(Pointers[K].data(), Sizes, RT);
  });
  return S / (double)N;
}

int main(int Argc, char **Argv) {
  int64_t N = 1000000;
  int Repeat = 5;
  int Level = 3;
  vm::NativeCode Codegen = vm::NativeCode::Off;
  bool Dump = false;
  for (int I = 1; I < Argc; ++I) {
    if (!std::strcmp(Argv[I], "--dump"))
      Dump = true;
    else if (!std::strcmp(Argv[I], "--iterations") && I + 1 < Argc)
      N = std::atoll(Argv[++I]);
    else if (!std::strcmp(Argv[I], "--repeat") && I + 1 < Argc)
      Repeat = std::max(1, std::atoi(Argv[++I]));
    else if (std::strlen(Argv[I]) == 3 && !std::strncmp(Argv[I], "-O", 2) &&
             Argv[I][2] >= '0' && Argv[I][2] <= '3')
      Level = Argv[I][2] - '0';
    else if (!std::strcmp(Argv[I], "--codegen") && I + 1 < Argc &&
             (!std::strcmp(Argv[I + 1], "off") ||
              !std::strcmp(Argv[I + 1], "jit")))
      Codegen = !std::strcmp(Argv[++I], "jit") ? vm::NativeCode::Jit
                                               : vm::NativeCode::Off;
    else {
      std::fprintf(stderr, "usage: bench_vm_dispatch [--iterations N] "
                           "[--repeat R] [-O0..-O3] [--codegen off|jit] "
                           "[--dump]\n");
      return 2;
    }
  }
  try {
    ir::Module M = ir::parseModule(LoopProgram, "bench_vm_dispatch.rvir");
    ir::inferTypes(M);
    vm::CompileOptions Opts;
    Opts.optLevel = Level;
    Opts.codegen.mode = Codegen;
    std::shared_ptr<vm::Executable> Exe = vm::compile(M, Opts);
    if (Dump) {
      std::printf("%s", Exe->disassemble().c_str());
      return 0;
    }
    vm::VirtualMachine VM(Exe);
    vm::ObjectRef Arg = vm::makeTensor(Tensor::scalar<int64_t>(N));
    // Warm up the pool, then time.
    VM.invoke("main", {vm::makeTensor(Tensor::scalar<int64_t>(1000))});
    uint64_t Before = VM.instructionCount();
    vm::ObjectRef Result;
    double VmSeconds =
        bestOf(Repeat, [&] { Result = VM.invoke("main", {Arg}); });
    double Instructions =
        (double)(VM.instructionCount() - Before) / (double)Repeat;
    float Acc = vm::asTensor(Result, "result").data<float>()[0];
    if (Acc != (float)N && N < (1 << 24))
      fail("wrong result {} (expected {})", Acc, N);
    double KernelPerIter = Codegen == vm::NativeCode::Off
                               ? kernelSecondsPerIteration(N, Repeat)
                               : nativeSecondsPerIteration(*Exe, N, Repeat);
    double VmPerIter = VmSeconds / (double)N;
    double InstrPerIter = Instructions / (double)N;
    double NsPerInstr = (VmPerIter - KernelPerIter) * 1e9 / InstrPerIter;
    std::printf(
        "{\"iterations\": %lld, \"opt_level\": %d, "
        "\"codegen\": \"%s\", "
        "\"instructions_per_iteration\": %.2f, "
        "\"vm_ns_per_iteration\": %.2f, "
        "\"kernel_ns_per_iteration\": %.2f, "
        "\"overhead_ns_per_iteration\": %.2f, "
        "\"ns_per_instruction\": %.2f, "
        "\"peak_bytes_in_use\": %zu}\n",
        (long long)N, Level, Codegen == vm::NativeCode::Off ? "off" : "jit",
        InstrPerIter, VmPerIter * 1e9, KernelPerIter * 1e9,
        (VmPerIter - KernelPerIter) * 1e9, NsPerInstr, VM.peakBytesInUse());
    return 0;
  } catch (const Error &E) {
    std::fprintf(stderr, "error: %s\n", E.what());
    return 1;
  }
}
