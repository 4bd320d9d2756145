//===- PlanDevices.cc - Put each value on a device ------------------------===//
#include "vm/compiler/PlanDevices.h"

#include "kernels/Error.h"

#include <map>
#include <optional>

namespace rivet::vm::compiler {

namespace {

/// What is known of a register's device: nothing written yet, one device,
/// or not known at compile time.
struct Where {
  enum Kind : uint8_t { Unset, Known, Unknown } kind = Unset;
  Device device = Device::CPU;
  static Where on(Device D) { return {Known, D}; }
  static Where unknown() { return {Unknown, Device::CPU}; }
  bool operator==(const Where &O) const {
    return kind == O.kind && (kind != Known || device == O.device);
  }
  /// Where a register written in two places is.
  Where join(Where O) const {
    if (kind == Unset)
      return O;
    if (O.kind == Unset || *this == O)
      return *this;
    return unknown();
  }
};

constexpr size_t kNoIndex = SIZE_MAX;
constexpr size_t kManyDefs = SIZE_MAX - 1;

/// What the module's calls say of a function's values, by function index.
struct Signature {
  std::vector<Where> params;
  Where result;
};
using Signatures = std::vector<Signature>;

/// Joins W into Into; whether that changed it.
bool joinInto(Where &Into, Where W) {
  Where J = Into.join(W);
  bool Changed = !(J == Into);
  Into = J;
  return Changed;
}

/// The placement of one function.
class Planner {
public:
  Planner(LoweredFunction &F, uint32_t Index,
          const std::function<KernelPlacement(uint32_t)> &KernelAt)
      : F(F), Index(Index), KernelAt(KernelAt) {
    findDefinitions();
    allocateGpuOutputs();
  }

  /// Infers every register's device given what Sigs says of parameters
  /// and call results, then adds what this function's calls and returns
  /// say to Sigs. Whether Sigs changed.
  bool infer(Signatures &Sigs) {
    inferDevices(Sigs);
    bool Changed = false;
    for (const PendingInst &P : F.code) {
      if (P.deleted)
        continue;
      const Instruction &I = P.inst;
      if (I.op == Opcode::Invoke || I.op == Opcode::TailInvoke) {
        Signature &Callee = Sigs.at(I.c);
        for (size_t A = 0; A < P.regs.size() && A < Callee.params.size(); ++A)
          Changed |= joinInto(Callee.params[A], at(P.regs[A]));
        if (I.op == Opcode::TailInvoke)
          Changed |= joinInto(Sigs[Index].result, Callee.result);
      } else if (I.op == Opcode::TailInvokeClosure) {
        Changed |= joinInto(Sigs[Index].result, Where::unknown());
      } else if (I.op == Opcode::Ret) {
        Changed |= joinInto(Sigs[Index].result, at(I.a));
      }
    }
    return Changed;
  }

private:
  LoweredFunction &F;
  uint32_t Index;
  const std::function<KernelPlacement(uint32_t)> &KernelAt;
  std::vector<size_t> DefAt; // the one instruction writing a register
  std::vector<Where> Dev;
  const Signatures *Sigs = nullptr;

  static bool writesOutputs(const PendingInst &P) {
    return P.kernelKind != KernelEntry::Kind::Builtin &&
           P.kernelKind != KernelEntry::Kind::Native;
  }

  void findDefinitions() {
    DefAt.assign(F.vregType.size(), kNoIndex);
    std::vector<uint32_t> Defs;
    for (size_t I = 0; I < F.code.size(); ++I) {
      Defs.clear();
      instDefs(F.code[I], Defs);
      for (uint32_t V : Defs)
        DefAt[V] = DefAt[V] == kNoIndex ? I : kManyDefs;
    }
  }

  const PendingInst *onlyDef(uint32_t V) const {
    return V < DefAt.size() && DefAt[V] < kManyDefs ? &F.code[DefAt[V]]
                                                    : nullptr;
  }

  /// A GPU kernel writes into tensors lowering allocated for it: carve them
  /// from GPU storage.
  void allocateGpuOutputs() {
    for (PendingInst &P : F.code) {
      if (P.deleted || P.inst.op != Opcode::InvokeKernel || writesOutputs(P) ||
          KernelAt(P.inst.c).device == Device::CPU)
        continue;
      Device D = KernelAt(P.inst.c).device;
      for (size_t O = P.inst.d; O < P.regs.size(); ++O) {
        PendingInst *A = const_cast<PendingInst *>(onlyDef(P.regs[O]));
        PendingInst *S = nullptr;
        if (A && A->inst.op == Opcode::AllocTensor)
          S = const_cast<PendingInst *>(onlyDef(A->inst.a));
        if (S && S->inst.op == Opcode::AllocStorage && S->ownStorage)
          S->inst.c = (uint32_t)D;
        else if (A && A->inst.op == Opcode::AllocTensorReg &&
                 A->inst.a == kNoStorage)
          A->inst.d = (uint32_t)D;
        else
          fail("vm compiler: in {}: output {} of kernel {} is not allocated "
               "for it, so it cannot be placed on {}",
               F.name, O - P.inst.d, P.inst.c, deviceName(D));
      }
    }
  }

  /// Where instruction P leaves the register it writes.
  Where defined(const PendingInst &P) const {
    const Instruction &I = P.inst;
    switch (I.op) {
    case Opcode::AllocStorage: return Where::on((Device)I.c);
    case Opcode::AllocTensor: return at(I.a);
    case Opcode::AllocTensorReg:
      return I.a == kNoStorage ? Where::on((Device)I.d) : at(I.a);
    case Opcode::DeviceCopy: return Where::on((Device)I.c);
    case Opcode::LoadConst: return Where::on((Device)I.d);
    case Opcode::Move:
    case Opcode::ReshapeTensor: return at(I.a);
    case Opcode::ShapeOf:
    case Opcode::LoadConsti:
    case Opcode::GetTag: return Where::on(Device::CPU);
    case Opcode::InvokeKernel: // shape functions and allocating kernels
      return Where::on(Device::CPU);
    case Opcode::Invoke: return (*Sigs)[I.c].result;
    default: return Where::unknown(); // closure calls, fields
    }
  }

  Where at(uint32_t V) const {
    return V < Dev.size() ? Dev[V] : Where::unknown();
  }

  void inferDevices(const Signatures &S) {
    Sigs = &S;
    Dev.assign(F.vregType.size(), Where());
    const std::vector<Where> &Params = S[Index].params;
    // A parameter no call has reached yet stays unset (a self-recursive
    // call passes it on without saying anything); one never reached is
    // copied where it is read, as an unknown one.
    for (uint32_t P = 0; P < F.numParams && P < Dev.size(); ++P)
      Dev[P] = P < Params.size() ? Params[P] : Where::unknown();
    std::vector<uint32_t> Defs;
    for (bool Changed = true; Changed;) {
      Changed = false;
      for (const PendingInst &P : F.code) {
        if (P.deleted)
          continue;
        Defs.clear();
        instDefs(P, Defs);
        for (uint32_t V : Defs) {
          Where W = Dev[V].join(defined(P));
          Changed |= !(W == Dev[V]);
          Dev[V] = W;
        }
      }
    }
  }

  /// The register operands of P that must be on a device, with it.
  void requirements(PendingInst &P,
                    std::vector<std::pair<uint32_t *, Device>> &Out) {
    Instruction &I = P.inst;
    switch (I.op) {
    case Opcode::InvokeKernel: {
      KernelPlacement K = KernelAt(I.c);
      if (K.shapesOnly)
        return;
      size_t N = writesOutputs(P) ? std::min<size_t>(I.d, P.regs.size())
                                  : P.regs.size();
      for (size_t R = 0; R < N; ++R)
        Out.push_back({&P.regs[R], K.device});
      return;
    }
    case Opcode::If:
      Out.push_back({&I.a, Device::CPU});
      Out.push_back({&I.b, Device::CPU});
      return;
    case Opcode::AllocTensorReg:
    case Opcode::ReshapeTensor: Out.push_back({&I.b, Device::CPU}); return;
    case Opcode::AllocStorage:
      if (I.d == 1)
        Out.push_back({&I.a, Device::CPU});
      return;
    default: return;
    }
  }

  uint32_t newRegLike(uint32_t V) {
    uint32_t R = (uint32_t)F.vregType.size();
    F.vregType.push_back(F.vregType[V]);
    F.killable.push_back(F.killable[V]);
    Dev.push_back(Where());
    return R;
  }

public:
  /// Puts a DeviceCopy before each operand that may be on another device
  /// than its reader needs (infer() ran last with the final signatures).
  void insertCopies() {
    std::vector<bool> IsTarget(F.code.size() + 1, false);
    for (uint32_t Pos : F.labelPos)
      if (Pos < IsTarget.size())
        IsTarget[Pos] = true;
    // The constants registers were loaded from, read before F.code is
    // moved from below.
    std::vector<std::optional<Instruction>> LoadedConstant(F.vregType.size());
    for (uint32_t V = 0; V < LoadedConstant.size(); ++V)
      if (const PendingInst *Def = onlyDef(V);
          Def && !Def->deleted && Def->inst.op == Opcode::LoadConst)
        LoadedConstant[V] = Def->inst;
    std::vector<uint32_t> NewIndex(F.code.size() + 1);
    std::vector<PendingInst> Code;
    Code.reserve(F.code.size());
    // Copies made since the last jump target: (register, device) -> copy.
    std::map<std::pair<uint32_t, Device>, uint32_t> Copies;
    std::vector<std::pair<uint32_t *, Device>> Need;
    std::vector<uint32_t> Defs;
    for (size_t I = 0; I < F.code.size(); ++I) {
      NewIndex[I] = (uint32_t)Code.size();
      if (IsTarget[I])
        Copies.clear();
      PendingInst P = std::move(F.code[I]);
      Need.clear();
      if (!P.deleted)
        requirements(P, Need);
      for (auto &[Reg, D] : Need) {
        uint32_t V = *Reg;
        // A List a kernel reads (list_argument) is no tensor to copy: the
        // VM brings its elements to the kernel's device.
        const ir::Type &T = V < F.vregType.size() ? F.vregType[V] : nullptr;
        if (T && T->kind != ir::TypeKind::Tensor)
          continue;
        Where W = at(V);
        if (W.kind == Where::Known && W.device == D)
          continue;
        auto [It, New] = Copies.emplace(std::make_pair(V, D), 0);
        if (New) {
          It->second = newRegLike(V);
          PendingInst C;
          if (V < LoadedConstant.size() && LoadedConstant[V]) {
            C.inst = *LoadedConstant[V];
            C.inst.dst = It->second;
            C.inst.d = (uint32_t)D;
          } else {
            C.inst = Instruction::deviceCopy(It->second, V, (uint32_t)D);
          }
          Dev[It->second] = Where::on(D);
          Code.push_back(std::move(C));
        }
        *Reg = It->second;
      }
      Defs.clear();
      instDefs(P, Defs);
      for (uint32_t V : Defs)
        for (Device D : {Device::CPU, Device::CUDA})
          Copies.erase({V, D});
      Code.push_back(std::move(P));
    }
    NewIndex[F.code.size()] = (uint32_t)Code.size();
    for (uint32_t &Pos : F.labelPos)
      Pos = NewIndex[std::min<size_t>(Pos, F.code.size())];
    F.code = std::move(Code);
  }
};

} // namespace

void planDevices(const std::vector<LoweredFunction *> &Fns,
                 const std::vector<uint32_t> &Index, uint32_t Main,
                 const std::function<KernelPlacement(uint32_t)> &KernelAt) {
  // Some functions are made without lowering (a constructor used as a
  // function value): they appear only as callees.
  uint32_t NumFunctions = Main + 1;
  for (uint32_t I : Index)
    NumFunctions = std::max(NumFunctions, I + 1);
  for (LoweredFunction *F : Fns)
    for (const PendingInst &P : F->code)
      if (P.inst.op == Opcode::Invoke || P.inst.op == Opcode::TailInvoke ||
          P.inst.op == Opcode::AllocClosure)
        NumFunctions = std::max(NumFunctions, P.inst.c + 1);
  Signatures Sigs(NumFunctions);
  std::vector<Planner> Planners;
  for (size_t I = 0; I < Fns.size(); ++I) {
    Sigs[Index[I]].params.resize(Fns[I]->numParams);
    Planners.emplace_back(*Fns[I], Index[I], KernelAt);
  }
  // Main's arguments come from the host; a closure's from anywhere.
  for (Where &P : Sigs[Main].params)
    P = Where::on(Device::CPU);
  for (LoweredFunction *F : Fns)
    for (const PendingInst &P : F->code)
      if (!P.deleted && P.inst.op == Opcode::AllocClosure)
        for (Where &W : Sigs.at(P.inst.c).params)
          W = Where::unknown();
  // The lattice is finite and joins only climb it: this ends.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (Planner &P : Planners)
      Changed |= P.infer(Sigs);
  }
  for (Planner &P : Planners) {
    P.infer(Sigs); // the final devices
    P.insertCopies();
  }
}

} // namespace rivet::vm::compiler
