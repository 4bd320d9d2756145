//===- vm_runtime_test.cc - The VM on hand-built executables --------------===//
//
// Every opcode and kernel-table kind, tail calls in constant memory, the call
// depth limit, the storage pool, input validation, the disassembler, the
// verifier and two VMs sharing one executable on two threads.
//
//===----------------------------------------------------------------------===//
#include "vm/StoragePool.h"
#include "vm/VirtualMachine.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

using namespace rivet;
using namespace rivet::vm;

namespace {

/// Builds one VMFunction instruction by instruction.
struct FnBuilder {
  VMFunction F;
  FnBuilder(std::string Name, uint32_t Params, uint32_t Regs) {
    F.name = std::move(Name);
    F.numParams = Params;
    F.numRegisters = Regs;
  }
  uint32_t list(std::vector<uint32_t> Regs) {
    uint32_t At = (uint32_t)F.pool.size();
    F.pool.insert(F.pool.end(), Regs.begin(), Regs.end());
    return At;
  }
  uint32_t shape(std::vector<int64_t> S) {
    uint32_t At = (uint32_t)F.shapes.size();
    F.shapes.insert(F.shapes.end(), S.begin(), S.end());
    return At;
  }
  void emit(Opcode Op, uint32_t Dst = 0, uint32_t A = 0, uint32_t B = 0,
            uint32_t C = 0, uint32_t D = 0, int64_t Imm = 0) {
    F.code.push_back(Instruction{Op, Dst, A, B, C, D, Imm});
  }
  void move(uint32_t Dst, uint32_t Src) { emit(Opcode::Move, Dst, Src); }
  void ret(uint32_t R) { emit(Opcode::Ret, 0, R); }
  void loadi(uint32_t Dst, int64_t V) {
    emit(Opcode::LoadConsti, Dst, 0, 0, 0, 0, V);
  }
  void invoke(uint32_t Dst, uint32_t Fn, std::vector<uint32_t> Args) {
    uint32_t N = (uint32_t)Args.size();
    emit(Opcode::Invoke, Dst, list(std::move(Args)), N, Fn);
  }
  void tailInvoke(uint32_t Fn, std::vector<uint32_t> Args) {
    uint32_t N = (uint32_t)Args.size();
    emit(Opcode::TailInvoke, 0, list(std::move(Args)), N, Fn);
  }
  void kernel(uint32_t K, std::vector<uint32_t> Ins, std::vector<uint32_t> Outs,
              uint32_t Dst = 0) {
    uint32_t D = (uint32_t)Ins.size();
    Ins.insert(Ins.end(), Outs.begin(), Outs.end());
    uint32_t B = (uint32_t)Ins.size();
    emit(Opcode::InvokeKernel, Dst, list(std::move(Ins)), B, K, D);
  }
  /// dst = a fresh tensor of static shape S in storage of its own.
  void allocStatic(uint32_t StorageReg, uint32_t Dst, std::vector<int64_t> S,
                   DType T) {
    size_t Bytes = (size_t)numElements(S) * dtypeSize(T);
    emit(Opcode::AllocStorage, StorageReg, 0, 0, 0, 0, (int64_t)Bytes);
    uint32_t D = (uint32_t)S.size();
    emit(Opcode::AllocTensor, Dst, StorageReg, shape(std::move(S)), (uint32_t)T,
         D, 0);
  }
};

struct ExeBuilder {
  std::shared_ptr<Executable> Exe = std::make_shared<Executable>();
  uint32_t add(FnBuilder B) {
    uint32_t I = (uint32_t)Exe->functions.size();
    Exe->functionIndex[B.F.name] = I;
    Exe->functions.push_back(std::move(B.F));
    return I;
  }
  uint32_t kernel(KernelEntry::Kind K, std::string Op, Attrs A = {}) {
    KernelEntry E;
    E.kind = K;
    E.op = std::move(Op);
    E.attrs = std::move(A);
    Exe->kernels.push_back(std::move(E));
    return (uint32_t)Exe->kernels.size() - 1;
  }
  uint32_t constant(Tensor T) {
    Exe->constants.push_back(std::move(T));
    return (uint32_t)Exe->constants.size() - 1;
  }
  std::shared_ptr<Executable> done() {
    Exe->resolve();
    return Exe;
  }
};

ObjectRef f32(std::vector<float> V, Shape S) {
  return makeTensor(Tensor::fromVector<float>(V, S));
}
ObjectRef i64(int64_t V) { return makeTensor(Tensor::scalar<int64_t>(V)); }

const Tensor &T(const ObjectRef &O) { return asTensor(O, "result"); }

std::string errorOf(const std::function<void()> &Fn) {
  try {
    Fn();
  } catch (const Error &E) {
    return E.what();
  }
  return "<no error>";
}

/// loop(i, n, acc): if i == n then acc else loop(i + 1, n, acc + 2), with
/// int64 scalars in fresh storage each iteration; main(n) = loop(0, n, 0).
std::shared_ptr<Executable> counterLoop() {
  ExeBuilder EB;
  uint32_t Add = EB.kernel(KernelEntry::Kind::Builtin, "add");
  FnBuilder Main("main", 1, 3);
  Main.loadi(1, 0);
  Main.invoke(2, 1, {1, 0, 1});
  Main.ret(2);
  EB.add(std::move(Main));
  // registers: 0 i, 1 n, 2 acc, 3 one, 4 two, 5 storage, 6 i', 7 storage,
  // 8 acc'
  FnBuilder Loop("loop", 3, 9);
  Loop.emit(Opcode::If, 0, 0, 1, 0, 0, 2); // i == n: next, else +2
  Loop.ret(2);
  Loop.loadi(3, 1);
  Loop.loadi(4, 2);
  Loop.allocStatic(5, 6, {}, DType::Int64);
  Loop.kernel(Add, {0, 3}, {6});
  Loop.allocStatic(7, 8, {}, DType::Int64);
  Loop.kernel(Add, {2, 4}, {8});
  Loop.tailInvoke(1, {6, 1, 8});
  EB.add(std::move(Loop));
  return EB.done();
}

} // namespace

TEST(VMRuntime, MoveRetLoadConstAndBuiltinKernel) {
  ExeBuilder EB;
  uint32_t Add = EB.kernel(KernelEntry::Kind::Builtin, "add");
  uint32_t C = EB.constant(Tensor::fromVector<float>({10, 20, 30}, {3}));
  FnBuilder Main("main", 1, 6);
  Main.emit(Opcode::LoadConst, 1, 0, 0, C);
  Main.allocStatic(2, 3, {3}, DType::Float32);
  Main.kernel(Add, {0, 1}, {3});
  Main.move(4, 3);
  Main.ret(4);
  EB.add(std::move(Main));
  VirtualMachine VM(EB.done());
  ObjectRef R = VM.invoke("main", {f32({1, 2, 3}, {3})});
  EXPECT_EQ(T(R).toDoubleVector(), (std::vector<double>{11, 22, 33}));
  EXPECT_GT(VM.instructionCount(), 0u);
}

// Profiling times each InvokeKernel instruction by its position, counts
// every call (a kernel in a loop too) and stops when turned off.
TEST(VMRuntime, ProfilingTimesEachKernelInstruction) {
  ExeBuilder EB;
  uint32_t Add = EB.kernel(KernelEntry::Kind::Builtin, "add");
  uint32_t Mul = EB.kernel(KernelEntry::Kind::Builtin, "multiply");
  FnBuilder Main("main", 1, 6);
  Main.allocStatic(1, 2, {3}, DType::Float32);
  Main.kernel(Add, {0, 0}, {2});
  Main.allocStatic(3, 4, {3}, DType::Float32);
  Main.kernel(Mul, {2, 0}, {4});
  Main.ret(4);
  EB.add(std::move(Main));
  VirtualMachine VM(EB.done());
  ObjectRef X = f32({1, 2, 3}, {3});
  std::string XType = T(X).typeString();
  VM.invoke("main", {X});
  EXPECT_TRUE(VM.kernelTimes().empty()); // off by default
  VM.setProfiling(true);
  for (int I = 0; I < 3; ++I)
    EXPECT_EQ(T(VM.invoke("main", {X})).toDoubleVector(),
              (std::vector<double>{2, 8, 18}));
  std::vector<VirtualMachine::KernelTime> Times = VM.kernelTimes();
  ASSERT_EQ(Times.size(), 2u);
  EXPECT_EQ(Times[0].kernel, "add");
  EXPECT_EQ(Times[1].kernel, "multiply");
  EXPECT_LT(Times[0].pc, Times[1].pc);
  EXPECT_EQ(Times[0].function, 0u);
  EXPECT_EQ(Times[0].inputs, XType + " " + XType);
  for (const VirtualMachine::KernelTime &K : Times) {
    EXPECT_EQ(K.calls, 3u) << K.kernel;
    EXPECT_GT(K.seconds, 0) << K.kernel;
  }
  VM.setProfiling(false);
  VM.invoke("main", {X});
  EXPECT_TRUE(VM.kernelTimes().empty());
}

TEST(VMRuntime, ShapeFunctionAndDynamicAllocation) {
  // main(x, y) = add(x, y) with the output shape computed at run time, once
  // in fresh storage (AllocTensorReg kNoStorage), once in an AllocStorage.
  ExeBuilder EB;
  uint32_t Shp = EB.kernel(KernelEntry::Kind::ShapeFunction, "add");
  uint32_t Add = EB.kernel(KernelEntry::Kind::Builtin, "add");
  FnBuilder Main("main", 2, 9);
  Main.kernel(Shp, {0, 1}, {2});
  Main.emit(Opcode::AllocTensorReg, 3, kNoStorage, 2, (uint32_t)DType::Float32);
  Main.kernel(Add, {0, 1}, {3});
  Main.emit(Opcode::AllocStorage, 4, 0, 0, 0, 0, 64 + 4 * 6);
  Main.emit(Opcode::AllocTensorReg, 5, 4, 2, (uint32_t)DType::Float32, 0, 64);
  Main.kernel(Add, {3, 1}, {5});
  Main.emit(Opcode::ShapeOf, 6, 5);
  Main.emit(Opcode::AllocADT, 7, Main.list({3, 5, 6, 2}), 4,
            (uint32_t)ADTObj::kTupleTag);
  Main.ret(7);
  EB.add(std::move(Main));
  VirtualMachine VM(EB.done());
  ObjectRef R =
      VM.invoke("main", {f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({1, 1, 1}, {3})});
  const auto *Tup = R->as<ADTObj>();
  ASSERT_NE(Tup, nullptr);
  EXPECT_EQ(Tup->tag, ADTObj::kTupleTag);
  ASSERT_EQ(Tup->fields.size(), 4u);
  EXPECT_EQ(T(Tup->fields[0]).toDoubleVector(),
            (std::vector<double>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(T(Tup->fields[1]).toDoubleVector(),
            (std::vector<double>{3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(T(Tup->fields[1]).byteOffset(), 64u);
  EXPECT_EQ(T(Tup->fields[2]).toIntVector(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(T(Tup->fields[2]).dtype(), DType::Int64);
  EXPECT_EQ(T(Tup->fields[3]).toIntVector(), (std::vector<int64_t>{2, 3}));
}

TEST(VMRuntime, ListKernelsAllocatingBuiltinAndListArgument) {
  // l = split_to_list(x) (a List of rows); n = concat_list(l) via its shape
  // function and a preallocated output; t = split(x, sections 2) as a tuple.
  ExeBuilder EB;
  EB.Exe->constructors = {{"List", "Cons", 2}, {"List", "Nil", 0}};
  uint32_t Split =
      EB.kernel(KernelEntry::Kind::AllocatingBuiltin, "split_to_list",
                Attrs{{"axis", int64_t(0)},
                      {"keepdims", int64_t(0)},
                      {"list_result", int64_t(1)}});
  Attrs CA{{"axis", int64_t(0)}, {"list_argument", int64_t(1)}};
  uint32_t CatShape =
      EB.kernel(KernelEntry::Kind::ShapeFunction, "concat_list", CA);
  uint32_t Cat = EB.kernel(KernelEntry::Kind::Builtin, "concat_list", CA);
  uint32_t Split2 =
      EB.kernel(KernelEntry::Kind::AllocatingBuiltin, "split",
                Attrs{{"axis", int64_t(0)}, {"sections", int64_t(2)}});
  FnBuilder Main("main", 1, 7);
  Main.kernel(Split, {0}, {}, 1);
  Main.kernel(CatShape, {1}, {2});
  Main.emit(Opcode::AllocTensorReg, 3, kNoStorage, 2, (uint32_t)DType::Float32);
  Main.kernel(Cat, {1}, {3});
  Main.kernel(Split2, {0}, {}, 4);
  Main.emit(Opcode::AllocADT, 5, Main.list({1, 3, 4}), 3,
            (uint32_t)ADTObj::kTupleTag);
  Main.ret(5);
  EB.add(std::move(Main));
  VirtualMachine VM(EB.done());
  ObjectRef R = VM.invoke("main", {f32({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2})});
  const auto &Fields = R->as<ADTObj>()->fields;
  // The List: Cons(row0, Cons(row1, ... Nil)).
  ObjectRef L = Fields[0];
  for (int Row = 0; Row < 4; ++Row) {
    const auto *Cell = L->as<ADTObj>();
    ASSERT_NE(Cell, nullptr);
    ASSERT_EQ(Cell->tag, 0);
    EXPECT_EQ(T(Cell->fields[0]).shape(), (Shape{2}));
    EXPECT_EQ(T(Cell->fields[0]).elementAsDouble(0), 1 + 2 * Row);
    L = Cell->fields[1];
  }
  EXPECT_EQ(L->as<ADTObj>()->tag, 1);
  EXPECT_EQ(T(Fields[1]).shape(), (Shape{8}));
  EXPECT_EQ(T(Fields[1]).toDoubleVector(),
            (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  const auto *Tup = Fields[2]->as<ADTObj>();
  ASSERT_NE(Tup, nullptr);
  EXPECT_EQ(Tup->tag, ADTObj::kTupleTag);
  ASSERT_EQ(Tup->fields.size(), 2u);
  EXPECT_EQ(T(Tup->fields[1]).toDoubleVector(),
            (std::vector<double>{5, 6, 7, 8}));
}

TEST(VMRuntime, ADTsGetTagGetFieldIfGoto) {
  // main(x): l = Cons(x, Nil); if tag(l) == 0 then l.0 else x (via Goto).
  ExeBuilder EB;
  EB.Exe->constructors = {{"List", "Cons", 2}, {"List", "Nil", 0}};
  FnBuilder Main("main", 1, 6);
  Main.emit(Opcode::AllocADT, 1, 0, 0, 1);                 // 0: Nil
  Main.emit(Opcode::AllocADT, 2, Main.list({0, 1}), 2, 0); // 1: Cons(x, Nil)
  Main.emit(Opcode::GetTag, 3, 2);                         // 2
  Main.loadi(4, 0);                                        // 3
  Main.emit(Opcode::If, 0, 3, 4, 0, 0, 3);                 // 4: else -> 7
  Main.emit(Opcode::GetField, 5, 2, 0, 0, 0, 0);           // 5
  Main.emit(Opcode::Goto, 0, 0, 0, 0, 0, 2);               // 6: -> 8
  Main.loadi(5, 99);                                       // 7
  Main.emit(Opcode::AllocADT, 0, Main.list({5, 3, 1}), 3,  // 8
            (uint32_t)ADTObj::kTupleTag);
  Main.ret(0);
  EB.add(std::move(Main));
  VirtualMachine VM(EB.done());
  ObjectRef R = VM.invoke("main", {f32({7}, {1})});
  const auto &F = R->as<ADTObj>()->fields;
  EXPECT_EQ(T(F[0]).elementAsDouble(0), 7);
  EXPECT_EQ(T(F[1]).dtype(), DType::Int64);
  EXPECT_EQ(T(F[1]).rank(), 0);
  EXPECT_EQ(T(F[1]).elementAsInt(0), 0);
  EXPECT_EQ(F[2]->as<ADTObj>()->tag, 1);
}

TEST(VMRuntime, IfComparesScalarsOfAnyDtype) {
  // main(c) = if c == 0 then 1 else 2 (the compiler's encoding of `if c`).
  ExeBuilder EB;
  FnBuilder Main("main", 1, 3);
  Main.loadi(1, 0);
  Main.emit(Opcode::If, 0, 0, 1, 0, 0, 3);
  Main.loadi(2, 1);
  Main.ret(2);
  Main.loadi(2, 2);
  Main.ret(2);
  EB.add(std::move(Main));
  VirtualMachine VM(EB.done());
  auto Run = [&](Tensor C) {
    return T(VM.invoke("main", {makeTensor(C)})).elementAsInt(0);
  };
  EXPECT_EQ(Run(Tensor::scalar<bool>(false)), 1);
  EXPECT_EQ(Run(Tensor::scalar<bool>(true)), 2);
  EXPECT_EQ(Run(Tensor::scalar<int32_t>(0)), 1);
  EXPECT_EQ(Run(Tensor::scalar<int64_t>(-3)), 2);
  EXPECT_EQ(Run(Tensor::scalar<float>(0.5f)), 2); // nonzero, as the interpreter
  EXPECT_EQ(Run(Tensor::scalar<double>(0.0)), 1);
  EXPECT_EQ(Run(Tensor::fromVector<bool>({true}, {1})), 2);
  EXPECT_NE(errorOf([&] {
              Run(Tensor::fromVector<float>({1, 2}, {2}));
            }).find("must be a scalar"),
            std::string::npos);
}

TEST(VMRuntime, ClosuresPassCapturedValuesFirst) {
  // adder(y, x) = x - y; main(a, b): c = closure(adder, [a]);
  // r1 = c(b) = b - a; tail: apply(c, r1) = c(r1) by TailInvokeClosure.
  ExeBuilder EB;
  uint32_t Sub = EB.kernel(KernelEntry::Kind::Builtin, "subtract");
  FnBuilder Main("main", 2, 4);
  Main.emit(Opcode::AllocClosure, 2, Main.list({0}), 1, 1);
  Main.emit(Opcode::InvokeClosure, 3, Main.list({1}), 1, 2);
  Main.tailInvoke(2, {2, 3});
  EB.add(std::move(Main));
  FnBuilder Adder("adder", 2, 4);
  Adder.allocStatic(2, 3, {}, DType::Float32);
  Adder.kernel(Sub, {1, 0}, {3});
  Adder.ret(3);
  EB.add(std::move(Adder));
  FnBuilder Apply("apply", 2, 2);
  Apply.emit(Opcode::TailInvokeClosure, 0, Apply.list({1}), 1, 0);
  EB.add(std::move(Apply));
  VirtualMachine VM(EB.done());
  ObjectRef R = VM.invoke("main", {makeTensor(Tensor::scalar<float>(2)),
                                   makeTensor(Tensor::scalar<float>(10))});
  EXPECT_EQ(T(R).elementAsDouble(0), 6); // (10 - 2) - 2
  EXPECT_EQ(VM.peakCallDepth(), 2u);
}

TEST(VMRuntime, ReshapeDeviceCopyKillRegisterFatal) {
  ExeBuilder EB;
  EB.Exe->strings = {"no clause matched"};
  FnBuilder Main("main", 2, 6);
  Main.emit(Opcode::ReshapeTensor, 2, 0, 1);
  Main.emit(Opcode::DeviceCopy, 3, 2, 0, 0);
  Main.ret(3);
  EB.add(std::move(Main));
  FnBuilder Kill("kill", 1, 2);
  Kill.move(1, 0);
  Kill.emit(Opcode::KillRegister, 1);
  Kill.ret(1);
  EB.add(std::move(Kill));
  FnBuilder Fat("fatal", 0, 1);
  Fat.emit(Opcode::Fatal, 0, 0, 0, 0);
  EB.add(std::move(Fat));
  VirtualMachine VM(EB.done());
  ObjectRef R =
      VM.invoke("main", {f32({1, 2, 3, 4, 5, 6}, {2, 3}),
                         makeTensor(Tensor::fromVector<int64_t>({3, 2}, {2}))});
  EXPECT_EQ(T(R).shape(), (Shape{3, 2}));
  EXPECT_EQ(T(R).toDoubleVector(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  std::string E = errorOf([&] { VM.invoke("kill", {f32({1}, {1})}); });
  EXPECT_NE(E.find("empty register"), std::string::npos) << E;
  E = errorOf([&] { VM.invoke("fatal", {}); });
  EXPECT_EQ(E, "in @fatal, instruction 0 (Fatal): no clause matched");
  // The VM is usable after errors.
  R = VM.invoke("main", {f32({1, 2}, {2}),
                         makeTensor(Tensor::fromVector<int64_t>({1, 2}, {2}))});
  EXPECT_EQ(T(R).shape(), (Shape{1, 2}));
}

/// A device operand other than the CPU (DeviceCopy, AllocStorage, LoadConst)
/// needs the executable's GPU code: the verifier refuses it otherwise.
TEST(VMRuntime, GpuDevicesNeedGpuCode) {
  for (Opcode Op : {Opcode::DeviceCopy, Opcode::AllocStorage}) {
    ExeBuilder EB;
    FnBuilder Dev("main", 1, 2);
    if (Op == Opcode::DeviceCopy)
      Dev.emit(Opcode::DeviceCopy, 1, 0, 0, 1);
    else
      Dev.emit(Opcode::AllocStorage, 1, 0, 0, 1, 0, 64);
    Dev.ret(0);
    EB.add(std::move(Dev));
    std::string E = errorOf([&] { EB.done(); });
    EXPECT_NE(E.find("instruction 0 (" + std::string(opcodeName(Op)) + ")"),
              std::string::npos)
        << E;
    EXPECT_NE(E.find("device 1 (cuda) in an executable without GPU code"),
              std::string::npos)
        << E;
  }
}

TEST(VMRuntime, KernelErrorsNameFunctionInstructionAndCallers) {
  ExeBuilder EB;
  uint32_t Add = EB.kernel(KernelEntry::Kind::Builtin, "add");
  FnBuilder Main("main", 2, 3);
  Main.invoke(2, 1, {0, 1});
  Main.ret(2);
  EB.add(std::move(Main));
  FnBuilder Inner("inner", 2, 4);
  Inner.allocStatic(2, 3, {2}, DType::Float32);
  Inner.kernel(Add, {0, 1}, {3});
  Inner.ret(3);
  EB.add(std::move(Inner));
  VirtualMachine VM(EB.done());
  std::string E = errorOf([&] {
    VM.invoke("main", {f32({1, 2}, {2}),
                       makeTensor(Tensor::fromVector<int64_t>({1, 2}, {2}))});
  });
  EXPECT_NE(E.find("in @inner, instruction 2 (InvokeKernel add), called from "
                   "@main instruction 0: "),
            std::string::npos)
      << E;
  E = errorOf([&] { VM.invoke("main", {f32({1}, {1})}); });
  EXPECT_NE(E.find("@main takes 2 arguments, got 1"), std::string::npos) << E;
  E = errorOf([&] { VM.invoke("nope", {}); });
  EXPECT_NE(E.find("no function '@nope'"), std::string::npos) << E;
}

TEST(VMRuntime, MillionIterationTailLoopRunsInConstantMemory) {
  VirtualMachine VM(counterLoop());
  auto Start = std::chrono::steady_clock::now();
  ObjectRef R = VM.invoke("main", {i64(1000000)});
  double Secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  EXPECT_EQ(T(R).elementAsInt(0), 2000000);
  EXPECT_EQ(VM.peakCallDepth(), 2u); // main + loop, never more
  EXPECT_EQ(VM.peakRegisterCount(), 3u + 9u);
  // Two int64 scalars live per iteration, a few more while the next are
  // made: the pool holds a handful of blocks, not a million.
  EXPECT_LE(VM.storagePool().systemAllocations(), 8u);
  EXPECT_LE(VM.peakBytesInUse(), 8u * 64u);
  std::printf("1,000,000 iterations: %.1f ms, %.1f ns per iteration, "
              "%.1f ns per instruction (kernels included)\n",
              Secs * 1e3, Secs * 1e9 / 1e6,
              Secs * 1e9 / (double)VM.instructionCount());
}

TEST(VMRuntime, RecycledTensorsNeverChangeWhileReferenced) {
  // loop(i, n, l): if i == n then l else loop(i + 1, n, Cons(i + 1, l)):
  // every iteration's i + 1 comes from the same AllocStorage/AllocTensor
  // pair, and the list keeps all of them alive, so none may be reused.
  ExeBuilder EB;
  EB.Exe->constructors = {{"List", "Cons", 2}, {"List", "Nil", 0}};
  uint32_t Add = EB.kernel(KernelEntry::Kind::Builtin, "add");
  FnBuilder Main("main", 1, 4);
  Main.loadi(1, 0);
  Main.emit(Opcode::AllocADT, 2, 0, 0, 1); // Nil
  Main.invoke(3, 1, {1, 0, 2});
  Main.ret(3);
  EB.add(std::move(Main));
  // registers: 0 i, 1 n, 2 l, 3 one, 4 storage, 5 i', 6 l'
  FnBuilder Loop("loop", 3, 7);
  Loop.emit(Opcode::If, 0, 0, 1, 0, 0, 2); // i == n: next, else +2
  Loop.ret(2);
  Loop.loadi(3, 1);
  Loop.allocStatic(4, 5, {}, DType::Int64);
  Loop.kernel(Add, {0, 3}, {5});
  Loop.emit(Opcode::AllocADT, 6, Loop.list({5, 2}), 2, 0); // Cons(i', l)
  Loop.tailInvoke(1, {5, 1, 6});
  EB.add(std::move(Loop));
  VirtualMachine VM(EB.done());
  auto Elements = [](const ObjectRef &L) {
    std::vector<int64_t> V;
    for (const ADTObj *A = L->as<ADTObj>(); A->fields.size() == 2;
         A = A->fields[1]->as<ADTObj>())
      V.push_back(T(A->fields[0]).elementAsInt(0));
    return V;
  };
  ObjectRef First = VM.invoke("main", {i64(50)});
  std::vector<int64_t> Expected;
  for (int64_t K = 50; K >= 1; --K)
    Expected.push_back(K);
  EXPECT_EQ(Elements(First), Expected);
  // A second run reuses what the first left behind, but not what its result
  // (still held here) refers to.
  ObjectRef Second = VM.invoke("main", {i64(3)});
  EXPECT_EQ(Elements(Second), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(Elements(First), Expected);
}

TEST(VMRuntime, DeepNonTailRecursionIsAnErrorNotACrash) {
  // down(x) = down(x) + nothing: a call that is not in tail position.
  ExeBuilder EB;
  FnBuilder Down("down", 1, 2);
  Down.invoke(1, 0, {0});
  Down.ret(1);
  EB.add(std::move(Down));
  auto Exe = EB.done();
  VirtualMachine VM(Exe);
  std::string E = errorOf([&] { VM.invoke("down", {i64(1)}); });
  EXPECT_NE(E.find("call stack overflow: more than 100000 nested calls"),
            std::string::npos)
      << E;
  EXPECT_NE(E.find("in @down, instruction 0 (Invoke)"), std::string::npos);
  EXPECT_NE(E.find("more callers"), std::string::npos);
  EXPECT_EQ(VM.peakCallDepth(), ExecutionLimits::kDefaultMaxCallDepth);
  // A configured limit; and recursion within it works.
  VM.setLimits(ExecutionLimits{.maxCallDepth = 10});
  E = errorOf([&] { VM.invoke("down", {i64(1)}); });
  EXPECT_NE(E.find("more than 10 nested"), std::string::npos) << E;
}

TEST(VMRuntime, StoragePoolIsReusedAcrossRuns) {
  auto Exe = counterLoop();
  VirtualMachine VM(Exe);
  EXPECT_EQ(T(VM.invoke("main", {i64(100)})).elementAsInt(0), 200);
  size_t Allocs = VM.storagePool().systemAllocations();
  size_t Held = VM.pooledBytes();
  EXPECT_GT(Allocs, 0u);
  EXPECT_GT(Held, 0u);
  EXPECT_GT(VM.peakBytesInUse(), 0u);
  for (int Run = 0; Run < 3; ++Run)
    EXPECT_EQ(T(VM.invoke("main", {i64(1000)})).elementAsInt(0), 2000);
  EXPECT_EQ(VM.storagePool().systemAllocations(), Allocs);
  EXPECT_EQ(VM.pooledBytes(), Held);
  // A result that outlives its VM keeps the pool alive.
  ObjectRef Kept;
  {
    VirtualMachine Short(Exe);
    Kept = Short.invoke("main", {i64(5)});
  }
  EXPECT_EQ(T(Kept).elementAsInt(0), 10);
}

TEST(VMRuntime, StoragePoolBestFitAndAccounting) {
  auto P = std::make_shared<StoragePool>();
  {
    auto A = P->allocate(1000); // 1024
    auto B = P->allocate(100);  // 128
    EXPECT_EQ(P->bytesInUse(), 1024u + 128u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(A->data()) % 64, 0u);
    EXPECT_EQ(A->size(), 1000u);
  }
  EXPECT_EQ(P->bytesInUse(), 0u);
  EXPECT_EQ(P->heldBytes(), 1024u + 128u);
  EXPECT_EQ(P->peakBytesInUse(), 1024u + 128u);
  {
    auto C = P->allocate(600); // reuses the 1024 block (best fit)
    auto D = P->allocate(64);  // reuses the 128 block
    auto E = P->allocate(10);  // 64: no block within 2x, a new one
    EXPECT_EQ(P->systemAllocations(), 3u);
    EXPECT_EQ(P->bytesInUse(), 1024u + 128u + 64u);
  }
  P->resetPeak();
  EXPECT_EQ(P->peakBytesInUse(), 0u);
  P->trim();
  EXPECT_EQ(P->heldBytes(), 0u);
}

TEST(VMRuntime, MainInputsAreValidatedByName) {
  ExeBuilder EB;
  FnBuilder Main("main", 2, 2);
  Main.ret(0);
  EB.add(std::move(Main));
  ParamInfo X{"x", true, DType::Float32, std::vector<int64_t>{-1, 3},
              "Tensor[(n, 3), float32]"};
  ParamInfo Y{"y", true, DType::Int64, std::vector<int64_t>{}, ""};
  EB.Exe->mainParams = {X, Y};
  VirtualMachine VM(EB.done());
  ObjectRef Good = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_NO_THROW(VM.invoke("main", {Good, i64(1)}));
  EXPECT_EQ(
      errorOf([&] {
        VM.invoke("main", {f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}), i64(1)});
      }),
      "input 'x': expected Tensor[(n, 3), float32], got "
      "Tensor[(2, 4), float32]");
  EXPECT_EQ(errorOf([&] {
              VM.invoke("main", {f32({1, 2, 3}, {3}), i64(1)});
            }),
            "input 'x': expected Tensor[(n, 3), float32], got "
            "Tensor[(3,), float32]");
  EXPECT_EQ(errorOf([&] {
              VM.invoke("main", {Good, f32({1}, {})});
            }),
            "input 'y': expected Tensor[(), int64], got Tensor[(), float32]");
  EXPECT_EQ(errorOf([&] { VM.invoke("main", {Good}); }),
            "missing input 'y' (expected Tensor[(), int64])");
  EXPECT_EQ(errorOf([&] {
              VM.invoke("main", {Good, i64(1), i64(2)});
            }),
            "main takes 2 inputs, got 3");
}

TEST(VMRuntime, TwoVMsOnTwoThreadsShareOneExecutable) {
  std::shared_ptr<const Executable> Exe = counterLoop();
  int64_t Results[2] = {0, 0};
  uint64_t Counts[2] = {0, 0};
  auto Work = [&](int K) {
    VirtualMachine VM(Exe);
    for (int Rep = 0; Rep < 5; ++Rep)
      Results[K] += T(VM.invoke("main", {i64(20000 + Rep)})).elementAsInt(0);
    Counts[K] = VM.instructionCount();
  };
  std::thread A(Work, 0), B(Work, 1);
  A.join();
  B.join();
  int64_t Expected = 0;
  for (int Rep = 0; Rep < 5; ++Rep)
    Expected += 2 * (20000 + Rep);
  EXPECT_EQ(Results[0], Expected);
  EXPECT_EQ(Results[1], Expected);
  EXPECT_EQ(Counts[0], Counts[1]);
}

TEST(VMRuntime, DisassemblyIsReadable) {
  ExeBuilder EB;
  EB.Exe->constructors = {{"List", "Cons", 2}, {"List", "Nil", 0}};
  uint32_t Add =
      EB.kernel(KernelEntry::Kind::Builtin, "add", Attrs{{"x", int64_t(1)}});
  uint32_t Shp = EB.kernel(KernelEntry::Kind::ShapeFunction, "add");
  FnBuilder Main("main", 2, 9);
  Main.allocStatic(2, 3, {2, 3}, DType::Float32); // 0, 1
  Main.kernel(Add, {0, 1}, {3});                  // 2
  Main.kernel(Shp, {0, 1}, {4});                  // 3
  Main.emit(Opcode::If, 0, 3, 4, 0, 0, 2);        // 4
  Main.emit(Opcode::AllocADT, 5, 0, 0, 1);        // 5
  Main.tailInvoke(0, {0, 4});                     // 6
  EB.add(std::move(Main));
  std::string D = EB.done()->disassemble();
  EXPECT_NE(D.find("func @main(params: 2, registers: 9)\n"), std::string::npos)
      << D;
  EXPECT_NE(D.find("  0: AllocStorage %2 = 24 bytes\n"), std::string::npos)
      << D;
  EXPECT_NE(D.find("  1: AllocTensor %3 = storage %2 + 0, (2, 3), float32\n"),
            std::string::npos)
      << D;
  EXPECT_NE(D.find("  2: InvokeKernel add{x=1}(%0, %1) -> (%3)\n"),
            std::string::npos)
      << D;
  EXPECT_NE(D.find("  3: InvokeKernel add.shape_fn(%0, %1) -> (%4)\n"),
            std::string::npos)
      << D;
  EXPECT_NE(D.find("  4: If %3 == %4 else +2 (-> 6)\n"), std::string::npos)
      << D;
  EXPECT_NE(D.find("  5: AllocADT %5 = Nil()\n"), std::string::npos) << D;
  EXPECT_NE(D.find("  6: TailInvoke @main(%0, %4)\n"), std::string::npos) << D;
}

TEST(VMRuntime, VerifierRejectsMalformedBytecode) {
  auto Bad = [](auto Mutate) {
    ExeBuilder EB;
    FnBuilder Main("main", 1, 2);
    Main.move(1, 0);
    Main.ret(1);
    Mutate(Main);
    EB.add(std::move(Main));
    return errorOf([&] { EB.done(); });
  };
  EXPECT_EQ(Bad([](FnBuilder &) {}), "<no error>");
  EXPECT_NE(Bad([](FnBuilder &B) { B.F.code[0].a = 7; })
                .find("function 'main': instruction 0 (Move): a register 7 "
                      "is out of range (the function has 2 registers)"),
            std::string::npos);
  EXPECT_NE(Bad([](FnBuilder &B) {
              B.F.code.pop_back();
            }).find("can fall off the end"),
            std::string::npos);
  EXPECT_NE(Bad([](FnBuilder &B) {
              B.F.code.insert(B.F.code.begin(),
                              Instruction{Opcode::Goto, 0, 0, 0, 0, 0, 9});
            }).find("jump offset 9 leaves the function"),
            std::string::npos);
  EXPECT_NE(Bad([](FnBuilder &B) {
              B.invoke(0, 3, {0});
            }).find("function index 3 is out of range"),
            std::string::npos);
  EXPECT_NE(Bad([](FnBuilder &B) {
              B.F.code[0].op = (Opcode)200;
            }).find("invalid opcode 200"),
            std::string::npos);
  EXPECT_NE(Bad([](FnBuilder &B) {
              B.kernel(0, {0}, {1});
            }).find("kernel index 0 is out of range"),
            std::string::npos);
  ExeBuilder EB;
  EB.kernel(KernelEntry::Kind::Builtin, "no_such_op");
  FnBuilder Main("main", 0, 1);
  Main.loadi(0, 1);
  Main.ret(0);
  EB.add(std::move(Main));
  EXPECT_NE(errorOf([&] { EB.done(); })
                .find("no kernel for operator "
                      "'no_such_op'"),
            std::string::npos);
}

TEST(VMRuntime, LongListsAreReleasedWithoutRecursion) {
  ObjectRef L = std::make_shared<ADTObj>(1, std::vector<ObjectRef>{});
  ObjectRef Elem = i64(1);
  for (int I = 0; I < 1000000; ++I)
    L = std::make_shared<ADTObj>(0, std::vector<ObjectRef>{Elem, L});
  L.reset(); // would overflow the native stack if released recursively
  SUCCEED();
}

TEST(VMRuntime, BuiltinOutputShapesAreCheckedAgainstTheShapeFunction) {
  // A .rvx made by hand (valid checksums, valid indices) whose preallocated
  // outputs disagree with the kernel's inputs: the kernel would write past
  // its output. Each case must be a clear rivet::Error, never a crash.
  auto Run = [](std::vector<int64_t> OutShape, DType OutType,
                std::vector<int64_t> InShape) {
    ExeBuilder EB;
    uint32_t Add = EB.kernel(KernelEntry::Kind::Builtin, "add");
    FnBuilder Main("main", 2, 4);
    Main.allocStatic(2, 3, OutShape, OutType);
    Main.kernel(Add, {0, 1}, {3});
    Main.ret(3);
    EB.add(std::move(Main));
    std::vector<uint8_t> Bytes = EB.done()->serialize();
    auto Loaded =
        Executable::deserialize(Bytes.data(), Bytes.size(), "hand-made.rvx");
    VirtualMachine VM(Loaded);
    std::vector<float> Ones((size_t)numElements(InShape), 1.0f);
    return errorOf([&] {
      for (int Call = 0; Call < 2; ++Call) // the second call hits the cache
        VM.invoke("main", {f32(Ones, InShape), f32(Ones, InShape)});
    });
  };
  EXPECT_EQ(Run({4, 4}, DType::Float32, {4, 4}), "<no error>");
  std::string TooSmall = Run({}, DType::Float32, {64});
  EXPECT_NE(TooSmall.find("in @main, instruction 2 (InvokeKernel add)"),
            std::string::npos)
      << TooSmall;
  EXPECT_NE(TooSmall.find("output 0 is Tensor[(), float32], but the kernel "
                          "computes Tensor[(64,), float32] from its inputs"),
            std::string::npos)
      << TooSmall;
  std::string WrongType = Run({3}, DType::Int32, {3});
  EXPECT_NE(WrongType.find("output 0 is Tensor[(3,), int32], but the kernel "
                           "computes Tensor[(3,), float32]"),
            std::string::npos)
      << WrongType;
  // Same element count, other shape: still refused.
  EXPECT_NE(Run({2, 2}, DType::Float32, {4}).find("output 0 is"),
            std::string::npos);
}

TEST(VMRuntime, OutputShapeCheckFollowsChangingInputShapes) {
  // One instruction, inputs of a new shape on each call: a shape that fits
  // is accepted after a bad one, and a bad one after a good one is refused.
  ExeBuilder EB;
  uint32_t Add = EB.kernel(KernelEntry::Kind::Builtin, "add");
  FnBuilder Main("main", 2, 4);
  Main.allocStatic(2, 3, {3}, DType::Float32);
  Main.kernel(Add, {0, 1}, {3});
  Main.ret(3);
  EB.add(std::move(Main));
  VirtualMachine VM(EB.done());
  auto Call = [&](Shape S) {
    std::vector<float> V((size_t)numElements(S), 2.0f);
    return errorOf([&] { VM.invoke("main", {f32(V, S), f32(V, S)}); });
  };
  EXPECT_EQ(Call({3}), "<no error>");
  EXPECT_NE(Call({5}).find("output 0 is"), std::string::npos);
  EXPECT_NE(Call({1}).find("output 0 is"), std::string::npos);
  EXPECT_EQ(Call({3}), "<no error>");
  EXPECT_NE(Call({3, 1}).find("output 0 is"), std::string::npos);
}

/// main(a, b) = the shape Op's shape function gives for a and b.
std::shared_ptr<Executable> shapeFunctionOf(const char *Op) {
  ExeBuilder EB;
  uint32_t Shp = EB.kernel(KernelEntry::Kind::ShapeFunction, Op);
  FnBuilder Main("main", 2, 3);
  Main.kernel(Shp, {0, 1}, {2});
  Main.ret(2);
  EB.add(std::move(Main));
  return EB.done();
}

TEST(VMRuntime, ShapeFunctionResultsFollowTheirInputs) {
  // One shape-function instruction on inputs of changing shapes: the VM
  // reuses a result only for the same input shapes and dtypes; a bad shape
  // is refused, also right after a good one of the same rank.
  VirtualMachine VM(shapeFunctionOf("add"));
  auto Call = [&](Shape A, Shape B) {
    std::vector<float> VA((size_t)numElements(A)), VB((size_t)numElements(B));
    std::string Shape;
    std::string Err = errorOf([&] {
      Shape = fmt::format(
          "{}", T(VM.invoke("main", {f32(VA, A), f32(VB, B)})).toIntVector());
    });
    return Err == "<no error>" ? Shape : Err;
  };
  EXPECT_EQ(Call({2, 3}, {3}), "[2, 3]");
  EXPECT_EQ(Call({2, 3}, {3}), "[2, 3]");
  EXPECT_EQ(Call({4, 3}, {1}), "[4, 3]");
  EXPECT_EQ(Call({2, 3}, {3}), "[2, 3]");
  EXPECT_NE(Call({2, 3}, {4}).find("broadcast"), std::string::npos);
  EXPECT_EQ(Call({2, 3}, {3}), "[2, 3]");
  EXPECT_EQ(Call({5, 1}, {5, 7}), "[5, 7]");
  EXPECT_NE(Call({5, 2}, {5, 7}).find("broadcast"), std::string::npos);
}

TEST(VMRuntime, DataDependentShapeFunctionsFollowTheValuesTheyRead) {
  // reshape_dyn's shape comes from its second input's values (the VM keys
  // its result on them): the same input shapes with other values give
  // another shape, and the same values the same one again.
  VirtualMachine VM(shapeFunctionOf("reshape_dyn"));
  auto Call = [&](std::vector<int64_t> NewShape) {
    ObjectRef X = f32(std::vector<float>(12), {3, 4});
    ObjectRef S = makeTensor(
        Tensor::fromVector<int64_t>(NewShape, {(int64_t)NewShape.size()}));
    return T(VM.invoke("main", {X, S})).toIntVector();
  };
  EXPECT_EQ(Call({2, 6}), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(Call({6, 2}), (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(Call({6, 2}), (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(Call({12, -1}), (std::vector<int64_t>{12, 1}));
  EXPECT_EQ(Call({2, 6}), (std::vector<int64_t>{2, 6}));
  // A target of more than 16 extents is not kept as a key: still right.
  std::vector<int64_t> Long(20, 1);
  Long[0] = 12;
  EXPECT_EQ(Call(Long), Long);
  Long[0] = 3, Long[1] = 4;
  EXPECT_EQ(Call(Long), Long);
  // A shape function that may read any input's values runs every time:
  // nonzero's extent is the count of nonzero elements.
  VirtualMachine NZ([] {
    ExeBuilder EB;
    uint32_t Shp = EB.kernel(KernelEntry::Kind::ShapeFunction, "nonzero");
    FnBuilder Main("main", 1, 2);
    Main.kernel(Shp, {0}, {1});
    Main.ret(1);
    EB.add(std::move(Main));
    return EB.done();
  }());
  auto Count = [&](std::vector<float> V) {
    return T(NZ.invoke("main", {f32(V, {4})})).toIntVector();
  };
  EXPECT_EQ(Count({1, 0, 2, 0}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Count({1, 3, 2, 0}), (std::vector<int64_t>{1, 3}));
}

TEST(VMRuntime, OneFieldTupleResultOfAnAllocatingKernelStaysATuple) {
  // split into one section, marked as returning a tuple: a 1-field tuple,
  // not the bare tensor (a kernel without the marker returns the tensor).
  auto Run = [](bool Tuple) {
    ExeBuilder EB;
    Attrs A{{"axis", int64_t(0)}, {"sections", int64_t(1)}};
    if (Tuple)
      A.set("tuple_result", int64_t(1));
    uint32_t Split =
        EB.kernel(KernelEntry::Kind::AllocatingBuiltin, "split", A);
    FnBuilder Main("main", 1, 2);
    Main.kernel(Split, {0}, {}, 1);
    Main.ret(1);
    EB.add(std::move(Main));
    VirtualMachine VM(EB.done());
    return VM.invoke("main", {f32({1, 2, 3, 4}, {4})});
  };
  ObjectRef R = Run(true);
  const auto *Tup = R->as<ADTObj>();
  ASSERT_NE(Tup, nullptr);
  EXPECT_EQ(Tup->tag, ADTObj::kTupleTag);
  ASSERT_EQ(Tup->fields.size(), 1u);
  EXPECT_EQ(T(Tup->fields[0]).toDoubleVector(),
            (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(T(Run(false)).shape(), (Shape{4}));
}
