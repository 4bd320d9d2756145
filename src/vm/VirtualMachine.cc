//===- VirtualMachine.cc - The register VM --------------------------------===//
//
// One function runs every frame: a switch over the opcode (the style of Lua's
// lvm.c). Frames live in a vector, not on the native stack, so deep
// recursion is bounded by a clear error, and tail calls reuse their frame.
// All frames' registers are one contiguous vector; a frame is a window
// [Base, Base + numRegisters) of it.
//
//===----------------------------------------------------------------------===//
#include "vm/VirtualMachine.h"

#include "vm/KernelSlot.h"
#include "vm/PackedList.h"
#include "vm/StoragePool.h"
#include "vm/cuda/Gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <utility>

namespace rivet::vm {

/// An active call: the function, where its registers start, the caller's
/// register that receives the result, and (for callers) the return address.
struct VirtualMachine::Frame {
  uint32_t Func;
  RegIndex RetDst;
  size_t Base;
  size_t Pc;
};

/// The objects an AllocStorage or AllocTensor instruction made last, kept to
/// be reused in place when nothing else refers to them any more. Two ways, so
/// that a loop-carried value (i + 1 computed from i) alternates between two
/// objects. An AllocStorage's Holders are the AllocTensor instructions that
/// carve tensors from its storage: their cached tensors refer to the storage
/// too, without keeping it from being reused when they are dead themselves.
struct VirtualMachine::Recycled {
  static constexpr size_t kWays = 2;
  ObjectRef Obj[kWays];
  uint32_t Next = 0;             // the way replaced when none can be reused
  std::vector<uint32_t> Holders; // instruction slots
};

namespace {

constexpr int64_t kSmallIntMin = -128;
constexpr int64_t kSmallIntMax = 1024;
/// Storage of at most this many bytes (and the tensors in it) is recycled
/// per instruction; larger buffers go back to the pool, where the memory
/// planner's sharing decides their reuse.
constexpr size_t kRecycleLimit = 4096;

const ClosureObj &asClosure(const ObjectRef &O) {
  if (O && O->kind == ObjectKind::Closure)
    return *static_cast<const ClosureObj *>(O.get());
  fail("the callee is not a closure");
}

/// Checks that O is a storage buffer (the operand of AllocTensor*).
void checkStorage(const ObjectRef &O) {
  if (!O || O->kind != ObjectKind::Storage)
    fail("expected a storage buffer in the storage register");
}

std::shared_ptr<Storage> asStorage(const ObjectRef &O) {
  checkStorage(O);
  return StorageObj::share(O);
}

/// Bytes of a tensor of shape Sh and dtype T; throws when they overflow.
size_t tensorBytes(const Shape &Sh, DType T) {
  size_t N = (size_t)numElements(Sh);
  if (N > SIZE_MAX / dtypeSize(T))
    fail("tensor of shape {} is too large", shapeToString(Sh));
  return N * dtypeSize(T);
}

/// AllocListTensor's storage: placed after List L's tensors, in a new
/// arena when L is an empty List of Cons cells (appending the tensor gives
/// the packed List that arena); null when L is no List or has no room.
std::shared_ptr<Storage> placeListElement(const ObjectRef &L, size_t Bytes,
                                          size_t Align) {
  if (!L)
    return nullptr;
  if (const auto *P = L->as<ListObj>())
    return P->placeElement(Bytes, Align);
  if (const auto *A = L->as<ADTObj>(); A && A->fields.empty() && A->tag >= 0)
    if (std::shared_ptr<TensorArena> Arena = TensorArena::create())
      return Arena->claim(Bytes, Align);
  return nullptr;
}

/// The single element of a scalar tensor (any dtype).
const Tensor &scalarOf(const ObjectRef &O) {
  const Tensor &T = asTensor(O, "If");
  if (!T.shape().empty() && T.numel() != 1)
    fail("If: the condition must be a scalar tensor, got {}", T.typeString());
  return T;
}

/// The address of T's data, read inline (Tensor::rawData is out of line);
/// rawData reports a tensor without storage.
const void *dataOf(const Tensor &T) {
  if (const std::shared_ptr<Storage> &S = T.storage()) [[likely]]
    return static_cast<const char *>(S->data()) + T.byteOffset();
  return T.rawData();
}

/// Whether the scalar T is nonzero; the usual condition dtypes are read
/// directly (If runs once per loop iteration).
bool scalarTruth(const Tensor &T) {
  switch (T.dtype()) {
  case DType::Bool: return *static_cast<const uint8_t *>(dataOf(T)) != 0;
  case DType::Int64: return *static_cast<const int64_t *>(dataOf(T)) != 0;
  default: return T.elementAsDouble(0) != 0;
  }
}

/// If's comparison: a Bool operand compares by truth (nonzero, as the
/// reference interpreter's `if`), a float operand by value, else as int64.
bool scalarsEqual(const ObjectRef &A, const ObjectRef &B) {
  const Tensor &X = scalarOf(A), &Y = scalarOf(B);
  DType TX = X.dtype(), TY = Y.dtype();
  if (TX == DType::Int64 && TY == DType::Int64)
    return *static_cast<const int64_t *>(dataOf(X)) ==
           *static_cast<const int64_t *>(dataOf(Y));
  if (TX == DType::Bool || TY == DType::Bool)
    return scalarTruth(X) == scalarTruth(Y);
  if (isFloat(TX) || isFloat(TY))
    return X.elementAsDouble(0) == Y.elementAsDouble(0);
  return X.elementAsInt(0) == Y.elementAsInt(0);
}

/// The values of registers Regs[0 .. N) (an ADT's fields, a closure's
/// captures).
std::vector<ObjectRef> gather(const ObjectRef *R, const uint32_t *Regs,
                              uint32_t N) {
  std::vector<ObjectRef> V;
  V.reserve(N);
  for (uint32_t K = 0; K < N; ++K)
    V.push_back(R[Regs[K]]);
  return V;
}

std::string expectedType(const ParamInfo &P) {
  if (!P.typeText.empty())
    return P.typeText;
  if (!P.dims)
    return fmt::format("Tensor[?, {}]", dtypeName(P.dtype));
  std::string S = "(";
  for (size_t I = 0; I < P.dims->size(); ++I) {
    int64_t D = (*P.dims)[I];
    S += (I ? ", " : "") + (D < 0 ? std::string("?") : std::to_string(D));
  }
  if (P.dims->size() == 1)
    S += ",";
  return fmt::format("Tensor[{}), {}]", S, dtypeName(P.dtype));
}

} // namespace

VirtualMachine::VirtualMachine(std::shared_ptr<const Executable> E)
    : Exe(std::move(E)), Pool(std::make_shared<StoragePool>()) {
  if (!Exe)
    fail("VirtualMachine: no executable");
  if (!Exe->resolved) // resolve() verified it
    Exe->verify();
  Kernels.reserve(Exe->kernels.size());
  for (size_t K = 0; K < Exe->kernels.size(); ++K) {
    const KernelEntry &Entry = Exe->kernels[K];
    if (Entry.isNative()) {
      Kernels.push_back(nativeSlot(Entry));
      continue;
    }
    Kernels.push_back(builtinSlot(Entry, K));
  }
  Constants.reserve(Exe->constants.size());
  for (const Tensor &T : Exe->constants) {
    // Kernels never write their inputs, and a constant is only ever an
    // input.
    if (T.storage())
      T.storage()->markImmutable();
    Constants.push_back(makeTensor(T));
  }
  for (size_t I = 0; I < Exe->constructors.size(); ++I) {
    const ConstructorInfo &C = Exe->constructors[I];
    if (C.name == "Cons" && C.arity == 2 && ConsTag < 0)
      ConsTag = (int32_t)I;
    if (C.name == "Nil" && C.arity == 0 && NilTag < 0)
      NilTag = (int32_t)I;
  }
  SmallInts.resize(kSmallIntMax - kSmallIntMin);
  size_t NumInstructions = 0;
  for (const VMFunction &F : Exe->functions) {
    FirstInstruction.push_back(NumInstructions);
    NumInstructions += F.code.size();
  }
  CheckedSignatures.resize(NumInstructions);
  LastShapes.resize(NumInstructions);
  RecycledObjects.resize(NumInstructions);
  linkTensorsToStorage();
  if (Exe->needsGpu())
    bindGpuKernels();
}

/// Records, for each AllocStorage, the AllocTensor instructions that read
/// its register after it in the code (a guess where branches join: it only
/// decides whether recycling succeeds, never whether it is safe).
void VirtualMachine::linkTensorsToStorage() {
  for (size_t Fn = 0; Fn < Exe->functions.size(); ++Fn) {
    const VMFunction &F = Exe->functions[Fn];
    // Per register, the slot of the AllocStorage that wrote it last.
    std::vector<size_t> StorageAt(F.numRegisters, SIZE_MAX);
    for (size_t Pc = 0; Pc < F.code.size(); ++Pc) {
      const Instruction &I = F.code[Pc];
      size_t Slot = FirstInstruction[Fn] + Pc;
      if (I.op == Opcode::AllocStorage && I.dst < StorageAt.size())
        StorageAt[I.dst] = Slot;
      else if (I.op == Opcode::AllocTensor && I.a < StorageAt.size() &&
               StorageAt[I.a] != SIZE_MAX)
        RecycledObjects[StorageAt[I.a]].Holders.push_back((uint32_t)Slot);
    }
  }
}

VirtualMachine::~VirtualMachine() = default;

size_t VirtualMachine::pooledBytes() const { return Pool->heldBytes(); }
size_t VirtualMachine::peakBytesInUse() const { return Pool->peakBytesInUse(); }
void VirtualMachine::resetPeak() { Pool->resetPeak(); }

/// An int64 scalar tensor; small values are shared (objects are immutable).
ObjectRef VirtualMachine::intScalar(int64_t V) {
  if (V >= kSmallIntMin && V < kSmallIntMax) {
    ObjectRef &O = SmallInts[(size_t)(V - kSmallIntMin)];
    if (!O)
      O = makeTensor(Tensor::scalar<int64_t>(V));
    return O;
  }
  return makeTensor(Tensor::scalar<int64_t>(V));
}

ObjectRef VirtualMachine::makeList(std::vector<Tensor> Elems) const {
  std::vector<ObjectRef> Objs;
  Objs.reserve(Elems.size());
  for (Tensor &T : Elems)
    Objs.push_back(makeTensor(std::move(T)));
  return packedList(std::move(Objs));
}

/// A storage object of NBytes on device D: from the pool on the CPU, from
/// the GPU's caching allocator on CUDA.
ObjectRef VirtualMachine::newStorage(size_t NBytes, Device D) {
  if (D != Device::CPU)
    return gpuStorage(NBytes);
  StoragePool::Block B = Pool->acquire(NBytes);
  try {
    return std::make_shared<StorageObj>(B.data, NBytes, B.releaser);
  } catch (...) {
    B.releaser.fn(B.releaser.owner, B.data, B.releaser.capacity);
    throw;
  }
}

/// AllocStorage at instruction Slot: one of the instruction's earlier
/// storage objects of the same size when only its cache (and cached, dead
/// tensors in it) refer to it, else a new one.
ObjectRef VirtualMachine::allocStorage(size_t Slot, size_t NBytes, Device D) {
  if (NBytes > kRecycleLimit)
    return newStorage(NBytes, D);
  Recycled &C = RecycledObjects[Slot];
  // The older way first: a loop-carried value alternates, so the way made
  // last is usually still alive.
  for (size_t K = 0; K < Recycled::kWays; ++K) {
    size_t Way = (C.Next + K) % Recycled::kWays;
    ObjectRef &O = C.Obj[Way];
    if (!O)
      continue;
    const Storage *S = &static_cast<const StorageObj *>(O.get())->storage;
    if (S->size() != NBytes || S->device() != D)
      continue;
    long Refs = 1;
    for (uint32_t Q : C.Holders)
      for (const ObjectRef &T : RecycledObjects[Q].Obj)
        if (T && T.use_count() == 1 &&
            static_cast<const TensorObj *>(T.get())->value.storage().get() == S)
          ++Refs;
    if (O.use_count() == Refs) {
      // Pairs with the release of the last other reference.
      std::atomic_thread_fence(std::memory_order_acquire);
      C.Next = (uint32_t)((Way + 1) % Recycled::kWays);
      return O;
    }
  }
  ObjectRef &O = C.Obj[C.Next];
  C.Next = (C.Next + 1) % Recycled::kWays;
  O = newStorage(NBytes, D);
  return O;
}

/// AllocTensor at instruction Slot: a tensor in the storage object Store.
/// A dead tensor the instruction made before is reused: as it is when it
/// already describes the same place, else rebound.
ObjectRef VirtualMachine::allocTensor(size_t Slot, const ObjectRef &Store,
                                      size_t Offset, const int64_t *Dims,
                                      size_t Rank, DType T) {
  checkStorage(Store);
  const Storage *S = &static_cast<const StorageObj *>(Store.get())->storage;
  auto NewTensor = [&] {
    return Tensor(StorageObj::share(Store), Offset, Shape(Dims, Dims + Rank),
                  T);
  };
  if (S->size() > kRecycleLimit)
    return makeTensor(NewTensor());
  Recycled &C = RecycledObjects[Slot];
  ObjectRef *Dead = nullptr;
  for (ObjectRef &O : C.Obj) {
    if (!O || O.use_count() != 1)
      continue;
    // Compared without taking a reference to the storage (no atomics).
    const Tensor &Old = static_cast<const TensorObj *>(O.get())->value;
    if (Old.storage().get() == S && Old.byteOffset() == Offset &&
        Old.dtype() == T && Old.shape().size() == Rank &&
        std::equal(Dims, Dims + Rank, Old.shape().begin())) {
      std::atomic_thread_fence(std::memory_order_acquire);
      return O;
    }
    Dead = &O;
  }
  if (Dead) {
    std::atomic_thread_fence(std::memory_order_acquire);
    // Only this cache refers to the object: nobody sees it change.
    const_cast<TensorObj *>(static_cast<const TensorObj *>(Dead->get()))
        ->value = NewTensor();
    return *Dead;
  }
  ObjectRef &O = C.Obj[C.Next];
  C.Next = (C.Next + 1) % Recycled::kWays;
  O = makeTensor(NewTensor());
  return O;
}

void VirtualMachine::checkMainArgs(const std::vector<ObjectRef> &Args) const {
  const std::vector<ParamInfo> &Ps = Exe->mainParams;
  for (size_t I = Args.size(); I < Ps.size(); ++I)
    fail("missing input '{}' (expected {})", Ps[I].name, expectedType(Ps[I]));
  if (Args.size() > Ps.size())
    fail("main takes {} input{}, got {}", Ps.size(), Ps.size() == 1 ? "" : "s",
         Args.size());
  for (size_t I = 0; I < Ps.size(); ++I) {
    const ParamInfo &P = Ps[I];
    if (!Args[I])
      fail("missing input '{}' (expected {})", P.name, expectedType(P));
    if (!P.isTensor)
      continue;
    if (Args[I]->kind != ObjectKind::Tensor)
      fail("input '{}': expected {}, got {}", P.name, expectedType(P),
           Args[I]->kind == ObjectKind::ADT ? "a tuple or ADT value"
                                            : "a non-tensor value");
    const Tensor &T = static_cast<const TensorObj *>(Args[I].get())->value;
    bool Ok = T.defined() && T.hasData() && T.dtype() == P.dtype;
    if (Ok && P.dims) {
      Ok = T.rank() == (int64_t)P.dims->size();
      for (size_t D = 0; Ok && D < P.dims->size(); ++D)
        Ok = (*P.dims)[D] < 0 || (*P.dims)[D] == T.shape()[D];
    }
    if (!Ok)
      fail("input '{}': expected {}, got {}", P.name, expectedType(P),
           !T.defined()   ? std::string("an undefined tensor")
           : !T.hasData() ? T.typeString() + " without data"
                          : T.typeString());
  }
}

ObjectRef VirtualMachine::invoke(const std::string &Fn,
                                 std::vector<ObjectRef> Args) {
  uint32_t Idx = Exe->function(Fn);
  const VMFunction &F = Exe->functions[Idx];
  if (Fn == "main" && !Exe->mainParams.empty())
    checkMainArgs(Args);
  if (Args.size() != F.numParams)
    fail("@{} takes {} argument{}, got {}", F.name, F.numParams,
         F.numParams == 1 ? "" : "s", Args.size());
  // Lists come in packed and go out as Cons cells (vm/PackedList.h).
  for (ObjectRef &A : Args)
    A = packedIfList(A, ConsTag, NilTag);
  if (!Exe->needsGpu())
    return withConsCells(run(Idx, std::move(Args)), ConsTag, NilTag);
  // GPU work is recorded, to be launched as CUDA graphs where it repeats
  // (cuda::Gpu::beginRecording); an error leaves what was recorded unrun.
  struct RecordingScope {
    cuda::Gpu *G;
    ~RecordingScope() {
      if (G)
        try {
          G->endRecording();
        } catch (...) {
        }
    }
  } Scope{&cuda::Gpu::get()};
  Scope.G->beginRecording();
  ObjectRef Result = withConsCells(run(Idx, std::move(Args)), ConsTag, NilTag);
  // Callers read results on the host; the copy also waits for the GPU.
  if (ResultsToHost)
    Result = toHost(Result);
  std::exchange(Scope.G, nullptr)->endRecording();
  return Result;
}

/// The interpreter loop. Each case is one instruction of docs/bytecode.md;
/// an error is rethrown naming the function, the instruction and the callers.
ObjectRef VirtualMachine::run(uint32_t Func, std::vector<ObjectRef> Args) {
  const Executable &E = *Exe;
  Frames.clear();
  Regs.clear();
  ArgScratch.clear();

  const VMFunction *F = &E.functions[Func];
  Frames.push_back(Frame{Func, 0, 0, 0});
  Regs.resize(F->numRegisters);
  for (size_t I = 0; I < Args.size(); ++I)
    Regs[I] = std::move(Args[I]);
  PeakDepth = std::max(PeakDepth, Frames.size());
  PeakRegs = std::max(PeakRegs, Regs.size());

  const Instruction *Code = F->code.data();
  size_t Base = 0;
  ObjectRef *R = Regs.data();
  size_t Pc = 0;
  uint64_t Count = 0;

  // Pushes a frame for Callee whose first NCap registers are Captured and
  // the rest the caller's registers ArgRegs.
  auto Enter = [&](uint32_t Callee, const std::vector<ObjectRef> *Captured,
                   const uint32_t *ArgRegs, uint32_t NArgs, RegIndex Dst) {
    if (Frames.size() >= Limits.maxCallDepth)
      fail("{}", callDepthError(Limits.maxCallDepth));
    const VMFunction &G = E.functions[Callee];
    size_t NCap = Captured ? Captured->size() : 0;
    if (NCap + NArgs != G.numParams)
      fail("@{} takes {} arguments, given {}", G.name, G.numParams,
           NCap + NArgs);
    size_t NewBase = Base + F->numRegisters;
    Frames.back().Pc = Pc;
    Regs.resize(NewBase + G.numRegisters);
    ObjectRef *Caller = Regs.data() + Base, *Callee2 = Regs.data() + NewBase;
    for (size_t K = 0; K < NCap; ++K)
      Callee2[K] = (*Captured)[K];
    for (uint32_t K = 0; K < NArgs; ++K)
      Callee2[NCap + K] = Caller[ArgRegs[K]];
    Frames.push_back(Frame{Callee, Dst, NewBase, 0});
    PeakDepth = std::max(PeakDepth, Frames.size());
    PeakRegs = std::max(PeakRegs, Regs.size());
    F = &G;
    Code = G.code.data();
    Base = NewBase;
    R = Callee2;
    Pc = 0;
  };
  // Replaces the current frame by one for Callee (a tail call).
  auto TailEnter = [&](uint32_t Callee, const std::vector<ObjectRef> *Captured,
                       const uint32_t *ArgRegs, uint32_t NArgs) {
    const VMFunction &G = E.functions[Callee];
    size_t NCap = Captured ? Captured->size() : 0;
    if (NCap + NArgs != G.numParams)
      fail("@{} takes {} arguments, given {}", G.name, G.numParams,
           NCap + NArgs);
    // The arguments are set aside first (they may come from any register),
    // in a member buffer of empty references (a local array would be zeroed
    // on every call).
    size_t NAll = NCap + NArgs;
    if (ArgScratch.size() < NAll)
      ArgScratch.resize(NAll);
    ObjectRef *Args = ArgScratch.data();
    for (size_t K = 0; K < NCap; ++K)
      Args[K] = (*Captured)[K];
    // The frame dies: an argument register read for the last time is moved.
    for (uint32_t K = 0; K < NArgs; ++K) {
      ObjectRef &Arg = R[ArgRegs[K]];
      if (std::find(ArgRegs + K + 1, ArgRegs + NArgs, ArgRegs[K]) !=
          ArgRegs + NArgs)
        Args[NCap + K] = Arg;
      else
        Args[NCap + K] = std::move(Arg);
    }
    // The argument registers are assigned below; the others die now.
    size_t N = std::min<size_t>(F->numRegisters, G.numRegisters);
    for (size_t K = NAll; K < N; ++K)
      R[K].reset();
    if (F->numRegisters != G.numRegisters) {
      Regs.resize(Base + G.numRegisters);
      R = Regs.data() + Base;
    }
    for (size_t K = 0; K < NAll; ++K)
      R[K] = std::move(Args[K]); // leaves Args[K] empty
    PeakRegs = std::max(PeakRegs, Regs.size());
    Frames.back().Func = Callee;
    F = &G;
    Code = G.code.data();
    Pc = 0;
  };

  // Where the compiler has computed goto, each instruction ends with its own
  // jump to the next one's case (threaded dispatch: one indirect branch per
  // opcode predicts better than the switch's shared one); elsewhere it goes
  // round the switch. verify() checked every opcode against the table. Each
  // case's locals live in its block, which ends before VM_NEXT: a computed
  // goto must not leave the scope of an object with a destructor.
#if defined(__GNUC__)
  // One label per row of Opcodes.def: complete by construction, and a
  // missing handler is an undefined label.
  static const void *const Dispatch[] = {
#define RIVET_OPCODE(Name, ...) &&Do##Name,
#include "vm/Opcodes.def"
  };
#define VM_CASE(Op)                                                            \
  case Opcode::Op:                                                             \
    Do##Op:
#define VM_NEXT                                                                \
  do {                                                                         \
    IP = &Code[Pc++];                                                          \
    ++Count;                                                                   \
    goto *Dispatch[(size_t)IP->op];                                            \
  } while (false)
#else
#define VM_CASE(Op) case Opcode::Op:
#define VM_NEXT continue
#endif

  try {
    for (;;) {
      const Instruction *IP = &Code[Pc++];
      ++Count;
      switch (IP->op) {
        VM_CASE(Move) { R[IP->dst] = R[IP->a]; }
        VM_NEXT;

        VM_CASE(Ret) {
          ObjectRef V = std::move(R[IP->a]);
          if (!V)
            fail("returns an empty register %{}", IP->a);
          RegIndex Dst = Frames.back().RetDst;
          Frames.pop_back();
          Regs.resize(Base);
          if (Frames.empty()) {
            Executed += Count;
            return V;
          }
          const Frame &Caller = Frames.back();
          F = &E.functions[Caller.Func];
          Code = F->code.data();
          Base = Caller.Base;
          Pc = Caller.Pc;
          R = Regs.data() + Base;
          R[Dst] = std::move(V);
        }
        VM_NEXT;

        VM_CASE(Invoke) {
          Enter(IP->c, nullptr, F->pool.data() + IP->a, IP->b, IP->dst);
        }
        VM_NEXT;

        VM_CASE(TailInvoke) {
          TailEnter(IP->c, nullptr, F->pool.data() + IP->a, IP->b);
        }
        VM_NEXT;

        VM_CASE(InvokeClosure) {
          ObjectRef Clo =
              R[IP->c]; // the callee's frame may outlive the register
          const ClosureObj &C = asClosure(Clo);
          Enter(C.func, &C.captured, F->pool.data() + IP->a, IP->b, IP->dst);
        }
        VM_NEXT;

        VM_CASE(TailInvokeClosure) {
          ObjectRef Clo = R[IP->c];
          const ClosureObj &C = asClosure(Clo);
          TailEnter(C.func, &C.captured, F->pool.data() + IP->a, IP->b);
        }
        VM_NEXT;

        VM_CASE(InvokeKernel) {
          if (Instrumented) [[unlikely]]
            instrumentedKernelCall(*IP, *F, R);
          else
            kernelCall(*IP, *F, R);
        }
        VM_NEXT;

        VM_CASE(AllocStorage) {
          int64_t Size = IP->imm;
          if (IP->d == 1) {
            const Tensor &S = asTensor(R[IP->a], "storage size");
            if (S.numel() != 1)
              fail("the storage size must be a scalar, got {}", S.typeString());
            Size = S.elementAsInt(0);
            if (Size < 0)
              fail("negative storage size {}", Size);
          }
          R[IP->dst] = allocStorage(
              FirstInstruction[(size_t)(F - E.functions.data())] + Pc - 1,
              (size_t)Size, (Device)IP->c);
        }
        VM_NEXT;

        VM_CASE(AllocTensor) {
          const int64_t *Sh = F->shapes.data() + IP->b;
          R[IP->dst] = allocTensor(
              FirstInstruction[(size_t)(F - E.functions.data())] + Pc - 1,
              R[IP->a], (size_t)IP->imm, Sh, IP->d, (DType)IP->c);
        }
        VM_NEXT;

        VM_CASE(AllocTensorReg) {
          Shape Sh = asTensor(R[IP->b], "shape").toIntVector();
          DType T = (DType)IP->c;
          if (IP->a == kNoStorage) {
            size_t Bytes = tensorBytes(Sh, T);
            std::shared_ptr<Storage> S =
                IP->d == 0 ? Pool->allocate(Bytes)
                           : StorageObj::share(gpuStorage(Bytes));
            R[IP->dst] = makeTensor(Tensor(std::move(S), 0, Sh, T));
          } else {
            R[IP->dst] =
                makeTensor(Tensor(asStorage(R[IP->a]), (size_t)IP->imm, Sh, T));
          }
        }
        VM_NEXT;

        VM_CASE(AllocListTensor) {
          Shape Sh = asTensor(R[IP->b], "shape").toIntVector();
          DType T = (DType)IP->c;
          size_t Bytes = tensorBytes(Sh, T);
          std::shared_ptr<Storage> S;
          if (Bytes > 0)
            S = placeListElement(R[IP->a], Bytes, dtypeSize(T));
          if (!S)
            S = Pool->allocate(Bytes);
          R[IP->dst] = makeTensor(Tensor(std::move(S), 0, Sh, T));
        }
        VM_NEXT;

        VM_CASE(AllocADT) {
          R[IP->dst] = std::make_shared<ADTObj>(
              (int32_t)IP->c, gather(R, F->pool.data() + IP->a, IP->b));
        }
        VM_NEXT;

        VM_CASE(AllocClosure) {
          R[IP->dst] = std::make_shared<ClosureObj>(
              IP->c, gather(R, F->pool.data() + IP->a, IP->b));
        }
        VM_NEXT;

        VM_CASE(GetField) {
          const ObjectRef &O = R[IP->a];
          if (O && O->kind == ObjectKind::List) [[unlikely]] {
            ObjectRef Field =
                static_cast<const ListObj *>(O.get())->consField(IP->imm);
            R[IP->dst] = std::move(Field);
          } else {
            const ADTObj &A = asADT(O, "GetField");
            if ((uint64_t)IP->imm >= A.fields.size())
              fail("field {} of a value with {} fields", IP->imm,
                   A.fields.size());
            R[IP->dst] = A.fields[(size_t)IP->imm];
          }
        }
        VM_NEXT;

        VM_CASE(GetTag) {
          const ObjectRef &O = R[IP->a];
          if (O && O->kind == ObjectKind::List) [[unlikely]]
            R[IP->dst] = intScalar(static_cast<const ListObj *>(O.get())->size()
                                       ? ConsTag
                                       : NilTag);
          else
            R[IP->dst] = intScalar(asADT(O, "GetTag").tag);
        }
        VM_NEXT;

        VM_CASE(If) {
          if (!scalarsEqual(R[IP->a], R[IP->b]))
            Pc = Pc - 1 + (size_t)IP->imm;
        }
        VM_NEXT;

        VM_CASE(Goto) { Pc = Pc - 1 + (size_t)IP->imm; }
        VM_NEXT;

        VM_CASE(LoadConst) {
          R[IP->dst] =
              IP->d == 0 ? Constants[IP->c] : constantOn(IP->c, (Device)IP->d);
        }
        VM_NEXT;

        VM_CASE(LoadConsti) { R[IP->dst] = intScalar(IP->imm); }
        VM_NEXT;

        VM_CASE(ShapeOf) {
          R[IP->dst] = shapeTensor(asTensor(R[IP->a], "ShapeOf").shape());
        }
        VM_NEXT;

        VM_CASE(ReshapeTensor) {
          const Tensor &T = asTensor(R[IP->a], "ReshapeTensor");
          Shape Sh = asTensor(R[IP->b], "ReshapeTensor shape").toIntVector();
          R[IP->dst] = makeTensor(T.reshape(Sh));
        }
        VM_NEXT;

        VM_CASE(DeviceCopy) {
          const Tensor &T = asTensor(R[IP->a], "DeviceCopy");
          if (T.device() == (Device)IP->c) // immutable: share it
            R[IP->dst] = R[IP->a];
          else
            R[IP->dst] = makeTensor(toDevice(T, (Device)IP->c));
        }
        VM_NEXT;

        VM_CASE(KillRegister) { R[IP->dst].reset(); }
        VM_NEXT;

        VM_CASE(Fatal) { fail("{}", E.strings[IP->c]); }
      }
    }
#undef VM_CASE
#undef VM_NEXT
  } catch (const std::exception &Err) {
    Executed += Count;
    // Release the frames' values before building the message: when the
    // error is running out of memory, they hold what the message needs.
    Regs.clear();
    ArgScratch.clear();
    for (KernelSlot &K : Kernels) {
      K.Ins.clear();
      K.Outs.clear();
    }
    const Instruction &I = Code[Pc - 1];
    std::string Where = fmt::format("in @{}, instruction {} ({}", F->name,
                                    Pc - 1, opcodeName(I.op));
    if (I.op == Opcode::InvokeKernel)
      Where += " " + Kernels[I.c].Name;
    Where += ")";
    // The callers, innermost first (a few of them).
    size_t Shown = 0;
    for (size_t K = Frames.size(); K-- > 1 && Shown < 4; ++Shown) {
      const Frame &Caller = Frames[K - 1];
      Where += fmt::format(", called from @{} instruction {}",
                           E.functions[Caller.Func].name, Caller.Pc - 1);
    }
    if (Frames.size() > 1 + Shown)
      Where += fmt::format(" ({} more callers)", Frames.size() - 1 - Shown);
    Frames.clear();
    if (dynamic_cast<const std::bad_alloc *>(&Err))
      throw Error(fmt::format("{}: out of memory", Where));
    throw Error(fmt::format("{}: {}", Where, Err.what()));
  }
}

} // namespace rivet::vm
