//===- KernelCall.cc - InvokeKernel: operands in, kernel run, results out -===//
//
// How the VM calls a kernel, kept apart from the interpreter loop as Lua
// keeps ldo.c apart from lvm.c: binding kernel-table entries to slots,
// gathering operands, checking preallocated outputs against shape functions
// and generated kernels' signatures, allocating results, and profiling.
//
//===----------------------------------------------------------------------===//
#include "vm/KernelSlot.h"
#include "vm/PackedList.h"
#include "vm/StoragePool.h"
#include "vm/TensorArena.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace rivet::vm {

namespace {

/// Markers the compiler adds to kernel entries for the runtime; the kernels
/// never see them.
bool isMarkerAttr(const std::string &Name) {
  return Name.compare(0, 5, "list_") == 0 || Name == "tuple_result";
}

/// Whether the tensors' dtypes, ranks and extents are those recorded in Sig
/// (as recordSignature writes them).
bool matchesSignature(const std::vector<int64_t> &Sig,
                      const std::vector<Tensor> &Ins,
                      const std::vector<Tensor> &Outs) {
  const int64_t *P = Sig.data(), *End = P + Sig.size();
  auto Matches = [&](const Tensor &T) {
    const Shape &S = T.shape();
    size_t Rank = S.size();
    if (!T.defined() || (size_t)(End - P) < 2 + Rank ||
        P[0] != (int64_t)T.dtype() || P[1] != (int64_t)Rank)
      return false;
    // A loop, not std::equal: its memcmp call cost more than the few
    // extents it compares.
    for (size_t A = 0; A < Rank; ++A)
      if (S[A] != P[2 + A])
        return false;
    P += 2 + Rank;
    return true;
  };
  for (const Tensor &T : Ins)
    if (!Matches(T))
      return false;
  for (const Tensor &T : Outs)
    if (!Matches(T))
      return false;
  return P == End;
}

/// Appends to Sig the values of the inputs in Mask (bit I: input I), each
/// as its element count then its elements; false when one is not a small
/// integer tensor on the host (then no signature can stand for it).
bool appendInputValues(std::vector<int64_t> &Sig,
                       const std::vector<Tensor> &Ins, uint32_t Mask) {
  constexpr int64_t kMaxValues = 16;
  for (size_t I = 0; I < Ins.size() && I < 32; ++I) {
    if (!(Mask >> I & 1))
      continue;
    const Tensor &T = Ins[I];
    if (!T.hasData() || T.device() != Device::CPU || !isInteger(T.dtype()) ||
        T.numel() > kMaxValues)
      return false;
    Sig.push_back(T.numel());
    for (int64_t E = 0; E < T.numel(); ++E)
      Sig.push_back(T.elementAsInt(E));
  }
  return true;
}

void recordSignature(std::vector<int64_t> &Sig, const std::vector<Tensor> &Ins,
                     const std::vector<Tensor> &Outs) {
  Sig.clear();
  for (const std::vector<Tensor> *Ts : {&Ins, &Outs})
    for (const Tensor &T : *Ts) {
      Sig.push_back((int64_t)T.dtype());
      Sig.push_back(T.rank());
      Sig.insert(Sig.end(), T.shape().begin(), T.shape().end());
    }
}

} // namespace

/// The slot of a registered kernel's entry (index K, for messages); the
/// compiler's marker attributes become flags.
VirtualMachine::KernelSlot VirtualMachine::builtinSlot(const KernelEntry &Entry,
                                                       size_t K) const {
  KernelSlot S;
  S.Kind = Entry.kind;
  S.Name = Entry.op;
  if (Entry.kind == KernelEntry::Kind::ListPrimitive) {
    S.ListFn = findListPrimitive(Entry.op);
    if (!S.ListFn)
      fail("executable: kernel table entry {}: no List primitive '{}' in "
           "this runtime",
           K, Entry.op);
    return S;
  }
  S.Info = Entry.info ? Entry.info : KernelRegistry::global().find(Entry.op);
  if (!S.Info)
    fail("executable: kernel table entry {}: no kernel for operator '{}' in "
         "this runtime",
         K, Entry.op);
  for (const auto &KV : Entry.attrs.items()) {
    if (!isMarkerAttr(KV.first))
      S.KernelAttrs.set(KV.first, KV.second);
    else if (KV.first == "list_argument")
      S.ListArgument = Entry.attrs.getInt("list_argument") != 0;
    else if (KV.first == "list_result")
      S.ListResult = Entry.attrs.getInt("list_result") != 0;
    else if (KV.first == "tuple_result")
      S.TupleResult = Entry.attrs.getInt("tuple_result") != 0;
  }
  return S;
}

/// The slot of a native kernel-table entry: its kernel must be bound (the
/// executable resolved, for this machine).
VirtualMachine::KernelSlot
VirtualMachine::nativeSlot(const KernelEntry &Entry) const {
  if (Entry.native >= Exe->nativeKernels.size() ||
      Exe->nativeKernels[Entry.native].symbol != Entry.op)
    fail("executable: native kernel '{}' is not resolved", Entry.op);
  const NativeKernel &NK = Exe->nativeKernels[Entry.native];
  if (!NK.fn)
    fail("executable: native kernel '{}' cannot run here: {}", NK.symbol,
         Exe->nativeUnavailable.empty() ? std::string("its code is not loaded")
                                        : Exe->nativeUnavailable);
  KernelSlot S;
  S.Kind = Entry.kind;
  S.Info = nullptr;
  S.Name = "native " + NK.symbol;
  S.Native = &NK;
  S.Buffers.resize(NK.buffers.size());
  S.Sizes.resize(std::max<size_t>(NK.numSizes(), 1));
  return S;
}

/// Checks that the preallocated outputs of a builtin kernel have the shapes
/// and dtypes its shape function computes from the inputs: the kernels trust
/// them, and an executable (a hand-made .rvx) may not. A call with the
/// signature of the last checked call of the same instruction is not
/// checked again.
void VirtualMachine::checkKernelOutputs(KernelSlot &K,
                                        std::vector<int64_t> &Checked) {
  bool DataDependent = K.Info->dataDependentShape;
  if (!DataDependent && matchesSignature(Checked, K.Ins, K.Outs))
    return;
  Checked.clear();
  std::vector<TensorMeta> Metas = K.Info->shapeFn(K.Ins, K.KernelAttrs);
  if (Metas.size() != K.Outs.size())
    fail("the kernel computes {} output{}, given {} output registers",
         Metas.size(), Metas.size() == 1 ? "" : "s", K.Outs.size());
  for (size_t O = 0; O < Metas.size(); ++O) {
    const Tensor &T = K.Outs[O];
    if (!T.defined() || T.dtype() != Metas[O].dtype ||
        T.shape() != Metas[O].shape)
      fail("output {} is {}, but the kernel computes Tensor[{}, {}] from its "
           "inputs",
           O, T.typeString(), shapeToString(Metas[O].shape),
           dtypeName(Metas[O].dtype));
  }
  if (!DataDependent)
    recordSignature(Checked, K.Ins, K.Outs);
}

/// Sets the size parameters of native kernel K from its input tensors after
/// checking their dtypes and ranks (so that every source axis exists), then
/// its broadcast sizes, refusing extents that do not broadcast.
void VirtualMachine::nativeSizes(KernelSlot &K) {
  const NativeKernel &NK = *K.Native;
  for (size_t B = 0; B < K.InPtrs.size(); ++B) {
    const Tensor &T = *K.InPtrs[B];
    const NativeKernel::Buffer &Want = NK.buffers[B];
    if (T.dtype() != Want.dtype || (size_t)T.rank() != Want.dims.size())
      fail("input {} is {}, but the kernel takes a rank-{} {} tensor", B,
           T.typeString(), Want.dims.size(), dtypeName(Want.dtype));
  }
  size_t NumSourced = NK.sizeSources.size();
  for (size_t P = 0; P < NumSourced; ++P) {
    const NativeKernel::SizeSource &S = NK.sizeSources[P];
    K.Sizes[P] = K.InPtrs[S.buffer]->shape()[S.axis];
  }
  for (size_t I = 0; I < NK.broadcastSizes.size(); ++I) {
    const std::vector<int64_t> &Ops = NK.broadcastSizes[I].operands;
    int64_t V = 1;
    size_t From = 0;
    for (size_t J = 0; J < Ops.size(); ++J) {
      int64_t X = NativeKernel::extent(Ops[J], K.Sizes.data());
      if (X == 1 || X == V)
        continue;
      if (V != 1) {
        // Where an operand's extent comes from, for the message.
        auto Origin = [&](int64_t D) {
          int64_t Ext = NativeKernel::extent(D, K.Sizes.data());
          if (D >= 0)
            return fmt::format("the constant extent {}", Ext);
          size_t Q = (size_t)(-(D + 1));
          if (Q < NumSourced)
            return fmt::format("extent {} (input {} axis {})", Ext,
                               NK.sizeSources[Q].buffer,
                               NK.sizeSources[Q].axis);
          return fmt::format("extent {} (broadcast size s{})", Ext, Q);
        };
        fail("inputs do not broadcast: {} and {} differ and neither is 1",
             Origin(Ops[From]), Origin(Ops[J]));
      }
      V = X;
      From = J;
    }
    K.Sizes[NumSourced + I] = V;
  }
}

/// Whether T's extents are the ones buffer B of NK has for sizes Sizes.
bool VirtualMachine::nativeExtentsMatch(const NativeKernel::Buffer &B,
                                        const Tensor &T, const int64_t *Sizes) {
  const Shape &S = T.shape();
  if (S.size() != B.dims.size())
    return false;
  for (size_t A = 0; A < S.size(); ++A) {
    int64_t D = B.dims[A];
    if (S[A] != NativeKernel::extent(D, Sizes))
      return false;
  }
  return true;
}

/// InvokeKernel of a generated kernel: every buffer is checked against the
/// kernel's signature (dtypes, ranks, and extents consistent with the size
/// parameters: the kernel indexes without checks), the output must not
/// overlap an input, then the kernel runs.
void VirtualMachine::nativeCall(KernelSlot &K, const Tensor &Out) {
  const NativeKernel &NK = *K.Native;
  nativeSizes(K);
  const int64_t *Sizes = K.Sizes.data();
  for (const NativeKernel::EmptyReduction &R : NK.emptyReductions) {
    auto Ext = [&](int64_t D) { return NativeKernel::extent(D, Sizes); };
    if (std::any_of(R.reduced.begin(), R.reduced.end(),
                    [&](int64_t D) { return Ext(D) == 0; }) &&
        std::all_of(R.kept.begin(), R.kept.end(),
                    [&](int64_t D) { return Ext(D) > 0; }))
      fail("{}: reduction over zero elements", R.op);
  }
  const NativeKernel::Buffer &OB = NK.buffers.back();
  if (!Out.defined() || Out.dtype() != OB.dtype ||
      !nativeExtentsMatch(OB, Out, Sizes))
    fail("output is {}, but the kernel computes {} from its inputs",
         Out.defined() ? Out.typeString() : std::string("undefined"),
         shapeToString(nativeOutputShape(NK, Sizes)));
  if (Out.device() != NK.device)
    fail("the output is on {}, but the kernel runs on {}",
         deviceName(Out.device()), deviceName(NK.device));
  const char *OutBegin = static_cast<const char *>(Out.rawData());
  size_t OutBytes = Out.nbytes();
  const char *OutEnd = OutBegin + OutBytes;
  size_t NumIns = K.InPtrs.size();
  for (size_t B = 0; B < NumIns; ++B) {
    const Tensor &T = *K.InPtrs[B];
    if (!nativeExtentsMatch(NK.buffers[B], T, Sizes))
      fail("input {} is {}, inconsistent with the kernel's other inputs", B,
           T.typeString());
    if (T.device() != NK.device)
      fail("input {} is on {}, but the kernel runs on {}", B,
           deviceName(T.device()), deviceName(NK.device));
    const char *In = static_cast<const char *>(T.rawData());
    size_t N = T.nbytes();
    if (N && OutBytes && In < OutEnd && OutBegin < In + N)
      fail("the output overlaps input {}", B);
    K.Buffers[B] = const_cast<char *>(In);
  }
  K.Buffers[NumIns] = const_cast<char *>(OutBegin);
  if (K.GpuFn)
    gpuLaunch(K, Out);
  else
    NK.fn(K.Buffers.data(), Sizes, &kernelRuntime());
}

/// The output shape native kernel NK computes for size parameters Sizes.
Shape VirtualMachine::nativeOutputShape(const NativeKernel &NK,
                                        const int64_t *Sizes) {
  Shape S;
  for (int64_t D : NK.buffers.back().dims)
    S.push_back(NativeKernel::extent(D, Sizes));
  return S;
}

void VirtualMachine::setProfiling(bool On) {
  Profiling = On;
  Instrumented = Profiling || Tracing || Observer;
  Profile.clear();
  if (On) // one entry per instruction, like the other per-instruction tables
    Profile.resize(CheckedSignatures.size());
}

std::vector<VirtualMachine::KernelTime> VirtualMachine::kernelTimes() const {
  std::vector<KernelTime> Out;
  for (const KernelTime &T : Profile)
    if (T.calls)
      Out.push_back(T);
  return Out;
}

void VirtualMachine::setTracing(size_t MaxCalls) {
  Tracing = MaxCalls > 0;
  Instrumented = Profiling || Tracing || Observer;
  TraceLimit = MaxCalls;
  Traced.clear();
  TraceSignatures.clear();
  TraceSignatureIndex.clear();
  TraceDropped = 0;
  // Reserved up front (bounded by the limit, at most 64 MB here) so that
  // growing the record does not show in the calls' times.
  if (Tracing)
    Traced.reserve(std::min<size_t>(MaxCalls, (64 << 20) / sizeof(TracedCall)));
}

const std::string &VirtualMachine::kernelName(uint32_t K) const {
  return Kernels.at(K).Name;
}

/// Appends the call that just ran to Traced, its operand types interned in
/// TraceSignatures (one map lookup per call: strings are made only for a
/// signature not seen before).
void VirtualMachine::traceCall(const Instruction &I, const VMFunction &F,
                               ObjectRef *R, int64_t StartNs,
                               int64_t DurationNs) {
  if (Traced.size() >= TraceLimit) {
    ++TraceDropped;
    return;
  }
  const KernelEntry &Entry = Exe->kernels[I.c];
  const uint32_t *Ops = F.pool.data() + I.a;
  thread_local std::vector<const ObjectRef *> Operands;
  Operands.clear();
  for (uint32_t K = 0; K < I.d && K < I.b; ++K)
    Operands.push_back(&R[Ops[K]]);
  size_t NumIns = Operands.size();
  if (KernelEntry::returnsResult(Entry.kind))
    Operands.push_back(&R[I.dst]);
  else
    for (uint32_t K = I.d; K < I.b; ++K)
      Operands.push_back(&R[Ops[K]]);
  thread_local std::vector<int64_t> Key;
  Key.assign({(int64_t)NumIns});
  for (const ObjectRef *O : Operands) {
    const TensorObj *T = *O ? (*O)->as<TensorObj>() : nullptr;
    if (!T || !T->value.defined()) {
      Key.push_back(*O ? -2 - (int64_t)(*O)->kind : -1);
      continue;
    }
    const Shape &S = T->value.shape();
    Key.push_back((int64_t)T->value.dtype());
    Key.push_back((int64_t)S.size());
    Key.insert(Key.end(), S.begin(), S.end());
  }
  auto [It, New] =
      TraceSignatureIndex.try_emplace(Key, (uint32_t)TraceSignatures.size());
  if (New) {
    CallSignature Sig;
    for (size_t K = 0; K < Operands.size(); ++K) {
      const ObjectRef &O = *Operands[K];
      std::string Text;
      const TensorObj *T = O ? O->as<TensorObj>() : nullptr;
      if (T && T->value.defined()) {
        Text = T->value.typeString();
        if (K >= NumIns)
          Sig.outputBytes += T->value.nbytes();
      } else if (!O) {
        Text = "none";
      } else {
        switch (O->kind) {
        case ObjectKind::ADT: Text = "adt"; break;
        case ObjectKind::Closure: Text = "closure"; break;
        case ObjectKind::List: Text = "list"; break;
        default: Text = "object"; break;
        }
      }
      (K < NumIns ? Sig.inputs : Sig.outputs).push_back(std::move(Text));
    }
    TraceSignatures.push_back(std::move(Sig));
  }
  TracedCall C;
  C.function = (uint32_t)(&F - Exe->functions.data());
  C.pc = (uint32_t)(&I - F.code.data());
  C.signature = It->second;
  C.startNs = StartNs;
  C.durationNs = DurationNs;
  C.bytesInUse = Pool->bytesInUse();
  Traced.push_back(C);
}

/// kernelCall timed: into Profile while profiling (the first call
/// describes the kernel and the shapes of its tensor inputs), as a
/// TracedCall while tracing.
void VirtualMachine::profiledKernelCall(const Instruction &I,
                                        const VMFunction &F, ObjectRef *R) {
  size_t Fn = (size_t)(&F - Exe->functions.data());
  size_t Pc = (size_t)(&I - F.code.data());
  KernelTime *T = Profiling ? &Profile[FirstInstruction[Fn] + Pc] : nullptr;
  if (T && T->calls == 0) {
    T->function = (uint32_t)Fn;
    T->pc = (uint32_t)Pc;
    T->kernel = Kernels[I.c].Name;
    const uint32_t *Ops = F.pool.data() + I.a;
    for (uint32_t K = 0; K < I.d; ++K)
      if (const TensorObj *In =
              R[Ops[K]] ? R[Ops[K]]->as<TensorObj>() : nullptr)
        T->inputs += (T->inputs.empty() ? "" : " ") + In->value.typeString();
  }
  auto Start = std::chrono::steady_clock::now();
  kernelCall(I, F, R);
  auto End = std::chrono::steady_clock::now();
  if (T) {
    T->seconds += std::chrono::duration<double>(End - Start).count();
    ++T->calls;
  }
  if (Tracing)
    traceCall(I, F, R,
              std::chrono::duration_cast<std::chrono::nanoseconds>(
                  Start.time_since_epoch())
                  .count(),
              std::chrono::duration_cast<std::chrono::nanoseconds>(End - Start)
                  .count());
}

void VirtualMachine::setKernelObserver(KernelObserver O) {
  Observer = std::move(O);
  Instrumented = Profiling || Tracing || Observer;
}

void VirtualMachine::instrumentedKernelCall(const Instruction &I,
                                            const VMFunction &F, ObjectRef *R) {
  if (Profiling || Tracing)
    profiledKernelCall(I, F, R);
  else
    kernelCall(I, F, R);
  if (!Observer)
    return;
  const KernelEntry &Entry = Exe->kernels[I.c];
  if (Entry.kind == KernelEntry::Kind::ShapeFunction ||
      Entry.kind == KernelEntry::Kind::NativeShapeFunction)
    return;
  const uint32_t *Ops = F.pool.data() + I.a;
  thread_local std::vector<const ObjectRef *> Ins;
  thread_local std::vector<ObjectRef *> Outs;
  Ins.clear();
  Outs.clear();
  for (uint32_t K = 0; K < I.d && K < I.b; ++K)
    Ins.push_back(&R[Ops[K]]);
  if (KernelEntry::returnsResult(Entry.kind))
    Outs.push_back(&R[I.dst]);
  else
    for (uint32_t K = I.d; K < I.b; ++K)
      Outs.push_back(&R[Ops[K]]);
  KernelEvent Ev;
  Ev.function = (uint32_t)(&F - Exe->functions.data());
  Ev.pc = (uint32_t)(&I - F.code.data());
  Ev.inputs = Ins.data(), Ev.numInputs = Ins.size();
  Ev.outputs = Outs.data(), Ev.numOutputs = Outs.size();
  Observer(Ev);
}

/// InvokeKernel: gathers the inputs (a List's elements for list_argument
/// entries) into the slot's buffer, then runs the entry according to its
/// kind. The buffers keep their shapes between calls but let go of storage.
void VirtualMachine::kernelCall(const Instruction &I, const VMFunction &F,
                                ObjectRef *R) {
  KernelSlot &K = Kernels[I.c];
  const uint32_t *Ops = F.pool.data() + I.a;
  // A shape function's result is read only by the AllocTensorReg after
  // it: by the entry's next call, the tensor it made last is usually held by
  // nobody but the slot (and maybe the destination register), and is then
  // rewritten in place, so a dynamic call allocates nothing for its shape.
  auto SetShape = [&K](size_t Out, ObjectRef &Dst, size_t Rank, auto ExtentOf) {
    if (K.ShapeResults.size() <= Out)
      K.ShapeResults.resize(Out + 1);
    ObjectRef &Last = K.ShapeResults[Out];
    long Holders = 1 + (Dst.get() == Last.get());
    const TensorObj *Old =
        Last && Last.use_count() == Holders ? Last->as<TensorObj>() : nullptr;
    if (Old && Old->value.hasData() && Old->value.dtype() == DType::Int64 &&
        Old->value.shape().size() == 1 &&
        Old->value.shape()[0] == (int64_t)Rank &&
        Old->value.storage().use_count() == 1) {
      std::atomic_thread_fence(std::memory_order_acquire);
      int64_t *P = Old->value.data<int64_t>();
      for (size_t A = 0; A < Rank; ++A)
        P[A] = ExtentOf(A);
      Dst = Last;
      return;
    }
    Shape S(Rank);
    for (size_t A = 0; A < Rank; ++A)
      S[A] = ExtentOf(A);
    Dst = shapeTensor(S);
    Last = Dst;
  };
  if (K.Native) {
    // verify() checked the arity: the inputs, then one output register.
    K.InPtrs.resize(I.d);
    for (uint32_t K2 = 0; K2 < I.d; ++K2)
      K.InPtrs[K2] = &asTensor(R[Ops[K2]], "kernel input");
    if (K.Kind == KernelEntry::Kind::Native) {
      nativeCall(K, asTensor(R[Ops[I.d]], "kernel output"));
      return;
    }
    nativeSizes(K);
    for (size_t B = 0; B < K.InPtrs.size(); ++B)
      if (!nativeExtentsMatch(K.Native->buffers[B], *K.InPtrs[B],
                              K.Sizes.data()))
        fail("input {} is {}, inconsistent with the kernel's other inputs", B,
             K.InPtrs[B]->typeString());
    const std::vector<int64_t> &Dims = K.Native->buffers.back().dims;
    SetShape(0, R[Ops[I.d]], Dims.size(), [&](size_t A) {
      return NativeKernel::extent(Dims[A], K.Sizes.data());
    });
    return;
  }
  if (K.ListFn) {
    R[I.dst] = K.ListFn(ListPrimitiveArgs{R, Ops, I.d});
    return;
  }
  std::vector<Tensor> &Ins = K.Ins;
  if (K.ListArgument) {
    if (I.d != 1)
      fail("a list-argument kernel takes one input register, given {}", I.d);
    Ins.clear();
    forEachListElement(R[Ops[0]], "list argument", [&](const ObjectRef &O) {
      // The elements of a List may be anywhere (placement cannot see
      // inside it): they come to the host, where builtin kernels run.
      const Tensor &E = asTensor(O, "list element");
      Ins.push_back(E.device() == Device::CPU ? E : toDevice(E, Device::CPU));
    });
  } else {
    if (Ins.size() != I.d)
      Ins.resize(I.d);
    for (uint32_t K2 = 0; K2 < I.d; ++K2)
      Ins[K2] = asTensor(R[Ops[K2]], "kernel input");
  }
  uint32_t NumOuts = I.b - I.d;
  // Builtin kernels read their operands on their device (the host, or the
  // GPU for a library kernel there); a shape function only their shapes,
  // unless its result depends on their data.
  Device On =
      K.Kind == KernelEntry::Kind::ShapeFunction ? Device::CPU : K.Info->device;
  if (K.Kind != KernelEntry::Kind::ShapeFunction || K.Info->dataDependentShape)
    for (size_t K2 = 0; K2 < Ins.size(); ++K2)
      if (Ins[K2].device() != On)
        fail("input {} is on {}, but the kernel runs on {}", K2,
             deviceName(Ins[K2].device()), deviceName(On));
  switch (K.Kind) {
  case KernelEntry::Kind::Builtin: {
    std::vector<Tensor> &Outs = K.Outs;
    if (Outs.size() != NumOuts)
      Outs.resize(NumOuts);
    for (uint32_t K2 = 0; K2 < NumOuts; ++K2) {
      Outs[K2] = asTensor(R[Ops[I.d + K2]], "kernel output");
      if (Outs[K2].device() != On)
        fail("output {} is on {}, but the kernel runs on {}", K2,
             deviceName(Outs[K2].device()), deviceName(On));
    }
    size_t Fn = (size_t)(&F - Exe->functions.data());
    size_t Pc = (size_t)(&I - F.code.data());
    checkKernelOutputs(K, CheckedSignatures[FirstInstruction[Fn] + Pc]);
    K.Info->kernel(Ins, Outs, K.KernelAttrs);
    for (Tensor &T : Outs)
      T.releaseStorage();
    break;
  }
  case KernelEntry::Kind::ShapeFunction: {
    // A shape function is a function of its inputs' dtypes and shapes, and
    // of the values of the inputs it reads (dataDependentShape): the same
    // as last time, the same result. The key is the inputs' signature, then
    // the values of the inputs in shapeValueInputs.
    static const std::vector<Tensor> NoOutputs;
    size_t At = FirstInstruction[(size_t)(&F - Exe->functions.data())] +
                (size_t)(&I - F.code.data());
    std::vector<int64_t> &Sig = CheckedSignatures[At];
    std::vector<Shape> &Shapes = LastShapes[At];
    const uint32_t ValueInputs = K.Info->shapeValueInputs;
    bool Keyed = !K.Info->dataDependentShape || ValueInputs != 0;
    if (Keyed) {
      recordSignature(ShapeKey, Ins, NoOutputs);
      Keyed = appendInputValues(ShapeKey, Ins, ValueInputs);
    }
    if (!Keyed || Shapes.size() != NumOuts || ShapeKey != Sig) {
      std::vector<TensorMeta> Metas = K.Info->shapeFn(Ins, K.KernelAttrs);
      if (Metas.size() != NumOuts)
        fail("the shape function gives {} output shapes for {} registers",
             Metas.size(), NumOuts);
      Shapes.clear();
      for (TensorMeta &M : Metas)
        Shapes.push_back(std::move(M.shape));
      if (Keyed)
        Sig = ShapeKey;
      else
        Sig.clear();
    }
    for (uint32_t K2 = 0; K2 < NumOuts; ++K2) {
      const Shape &S = Shapes[K2];
      SetShape(K2, R[Ops[I.d + K2]], S.size(), [&](size_t A) { return S[A]; });
    }
    break;
  }
  case KernelEntry::Kind::Native:
  case KernelEntry::Kind::NativeShapeFunction:
  case KernelEntry::Kind::ListPrimitive: break; // handled above
  case KernelEntry::Kind::AllocatingBuiltin: {
    for (size_t K2 = 0; K2 < Ins.size(); ++K2)
      if (!Ins[K2].hasData())
        fail("input {} has no data", K2);
    // A result that is one contiguous range of the first input shares its
    // memory (the compiler kept that input alive as long as the result).
    if (K.Info->viewFn && !K.ListResult && !K.TupleResult)
      if (std::optional<TensorView> V = K.Info->viewFn(Ins, K.KernelAttrs)) {
        R[I.dst] = makeTensor(Tensor(Ins[0].storage(),
                                     Ins[0].byteOffset() + V->byteOffset,
                                     std::move(V->shape), Ins[0].dtype()));
        break;
      }
    std::vector<TensorMeta> Metas = K.Info->shapeFn(Ins, K.KernelAttrs);
    // A join of tensors that lie one after another in an arena (what a
    // loop appended to a List, AllocListTensor) views them.
    if (K.Info->joinFn && Metas.size() == 1 && !K.ListResult &&
        !K.TupleResult && K.Info->joinFn(Ins, K.KernelAttrs))
      if (std::shared_ptr<Storage> S = TensorArena::adjacent(Ins);
          S && S->size() == (size_t)numElements(Metas[0].shape) *
                                dtypeSize(Metas[0].dtype)) {
        R[I.dst] = makeTensor(
            Tensor(std::move(S), 0, std::move(Metas[0].shape), Metas[0].dtype));
        break;
      }
    std::vector<Tensor> Outs;
    Outs.reserve(Metas.size());
    for (const TensorMeta &M : Metas)
      Outs.emplace_back(
          Pool->allocate((size_t)numElements(M.shape) * dtypeSize(M.dtype)), 0,
          M.shape, M.dtype);
    K.Info->kernel(Ins, Outs, K.KernelAttrs);
    if (K.ListResult) {
      R[I.dst] = makeList(std::move(Outs));
    } else if (Outs.size() == 1 && !K.TupleResult) {
      R[I.dst] = makeTensor(std::move(Outs[0]));
    } else {
      std::vector<ObjectRef> Fields;
      Fields.reserve(Outs.size());
      for (Tensor &T : Outs)
        Fields.push_back(makeTensor(std::move(T)));
      R[I.dst] = std::make_shared<ADTObj>(ADTObj::kTupleTag, std::move(Fields));
    }
    break;
  }
  }
  for (Tensor &T : Ins)
    T.releaseStorage();
}

} // namespace rivet::vm
