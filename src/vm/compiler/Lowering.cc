//===- Lowering.cc - IR functions to lowered bytecode ---------------------===//
//
// Each function body becomes instructions over fresh virtual registers (one
// per value: the code is in A-normal form by construction). Function literals
// are lambda-lifted: the captured free variables become leading parameters;
// a let-bound function called by name is invoked directly with its captures
// (no closure object), so a loop costs one TailInvoke per iteration. Calls in
// tail position (let bodies, if branches, match right-hand sides) become tail
// calls, as in the reference interpreter. Operator calls allocate their
// outputs explicitly and invoke a kernel-table entry.
//
//===----------------------------------------------------------------------===//
#include "vm/compiler/Lowering.h"

#include "ir/Op.h"
#include "ir/Origin.h"
#include "ir/Visitor.h"
#include "kernels/Error.h"
#include "vm/Object.h"
#include "vm/compiler/MemoryPlanner.h"
#include "vm/compiler/NativeKernelBuilder.h"
#include "vm/compiler/PlaceListElements.h"
#include "vm/compiler/RegisterAllocator.h"

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <unordered_set>

namespace rivet::vm::compiler {

using namespace rivet::ir;

//===----------------------------------------------------------------------===//
// Module-wide tables
//===----------------------------------------------------------------------===//

ModuleLowering::ModuleLowering(const Module &Mod, const CompileOptions &O,
                               Executable &E, const NativeKernelBuilder *N)
    : M(Mod), Opts(O), Exe(E), Native(N) {}

const NativeKernel *ModuleLowering::nativeKernel(const Expr &Fn) const {
  return Native ? Native->find(Fn.get()) : nullptr;
}

void ModuleLowering::run() {
  for (const std::string &Adt : M.typeDataNames())
    for (const Constructor &C : M.typeData(Adt).constructors) {
      Ctors[Adt + "." + C->name] = (int32_t)Exe.constructors.size();
      Exe.constructors.push_back({Adt, C->name, (uint32_t)C->inputs.size()});
    }
  for (const std::string &Name : M.functionNames()) {
    uint32_t Idx = (uint32_t)Exe.functions.size();
    Exe.functions.emplace_back();
    Exe.functions.back().name = Name;
    Exe.functionIndex[Name] = Idx;
    Globals[Name] = Idx;
    const Expr &Fn = M.function(Name);
    if (!Fn->as<FunctionNode>())
      fail("vm compiler: global @{} is not a function", Name);
    LoweringJob J;
    J.index = Idx;
    J.name = Name;
    J.fn = Fn;
    Jobs.push_back(std::move(J));
  }
  // Every function is lowered before any is placed: placement follows
  // values across calls.
  std::vector<std::unique_ptr<LoweredFunction>> Lowered;
  std::vector<uint32_t> Index;
  while (!Jobs.empty()) {
    LoweringJob J = std::move(Jobs.front());
    Jobs.pop_front();
    Lowered.push_back(std::make_unique<LoweredFunction>());
    Index.push_back(J.index);
    lowerFunction(*this, J, *Lowered.back());
  }
  if (Opts.codegen.target != Device::CPU) {
    std::vector<LoweredFunction *> Fns;
    for (auto &F : Lowered)
      Fns.push_back(F.get());
    planDevices(Fns, Index, Exe.functionIndex.at("main"),
                [&](uint32_t K) { return placement(K); });
  }
  for (size_t I = 0; I < Lowered.size(); ++I) {
    LoweredFunction &F = *Lowered[I];
    placeListElements(F, Exe.kernels);
    planMemory(F, Opts.planMemory);
    allocateRegisters(F);
    Exe.functions[Index[I]] = assemble(F);
    Lowered[I].reset();
  }
}

/// Where kernel-table entry K runs and what it reads of its inputs.
KernelPlacement ModuleLowering::placement(uint32_t K) const {
  const KernelEntry &E = Exe.kernels.at(K);
  KernelPlacement P;
  switch (E.kind) {
  case KernelEntry::Kind::Native:
    if (const NativeKernel *NK = Native ? Native->findSymbol(E.op) : nullptr)
      P.device = NK->device;
    break;
  case KernelEntry::Kind::Builtin:
    if (const KernelInfo *Info = KernelRegistry::global().find(E.op))
      P.device = Info->device;
    break;
  case KernelEntry::Kind::NativeShapeFunction: P.shapesOnly = true; break;
  case KernelEntry::Kind::ShapeFunction: {
    const KernelInfo *Info = KernelRegistry::global().find(E.op);
    P.shapesOnly = Info && !Info->dataDependentShape;
    break;
  }
  default: break;
  }
  return P;
}

uint32_t ModuleLowering::kernel(KernelEntry::Kind Kind, const std::string &Op,
                                const Attrs &A) {
  size_t H = A.hash() ^ (std::hash<std::string>()(Op) * 31 + (size_t)Kind);
  std::vector<uint32_t> &Bucket = KernelByHash[H];
  for (uint32_t I : Bucket) {
    const KernelEntry &E = Exe.kernels[I];
    if (E.kind == Kind && E.op == Op && E.attrs == A)
      return I;
  }
  uint32_t Idx = (uint32_t)Exe.kernels.size();
  KernelEntry E;
  E.kind = Kind;
  E.op = Op;
  E.attrs = A;
  Exe.kernels.push_back(std::move(E));
  Bucket.push_back(Idx);
  return Idx;
}

const KernelInfo *ModuleLowering::gpuLibraryKernel(const ir::CallNode &C,
                                                   const std::string &Op,
                                                   Attrs &KernelAttrs) const {
  if (Opts.codegen.target == Device::CPU || !Opts.libraryKernels)
    return nullptr;
  const KernelInfo *L =
      KernelRegistry::global().libraryKernel(Op, Opts.codegen.target);
  auto Float32 = [](const Type &T) {
    const auto *TT = T ? T->as<TensorTypeNode>() : nullptr;
    return TT && TT->dtype == DType::Float32;
  };
  if (!L || !Float32(C.checkedType))
    return nullptr;
  for (const ir::Expr &A : C.args)
    if (!Float32(A->checkedType))
      return nullptr;
  if (Opts.allowTf32)
    KernelAttrs.set("allow_tf32", int64_t(1));
  return L;
}

const std::string &ModuleLowering::builtinKernel(const std::string &Op) const {
  if (Opts.libraryKernels)
    if (const KernelInfo *L = KernelRegistry::global().libraryKernel(Op))
      return L->name;
  return Op;
}

uint32_t ModuleLowering::constant(const ConstantNode &C) {
  auto [It, New] = Constants.emplace(&C, (uint32_t)Exe.constants.size());
  if (New)
    Exe.constants.push_back(C.value);
  return It->second;
}

uint32_t ModuleLowering::shapeConstant(const std::vector<int64_t> &Dims) {
  auto [It, New] = ShapeConstants.emplace(Dims, (uint32_t)Exe.constants.size());
  if (New) {
    Tensor T = Tensor::empty({(int64_t)Dims.size()}, DType::Int64);
    std::copy(Dims.begin(), Dims.end(), T.data<int64_t>());
    Exe.constants.push_back(std::move(T));
  }
  return It->second;
}

uint32_t ModuleLowering::string(const std::string &S) {
  auto [It, New] = Strings.emplace(S, (uint32_t)Exe.strings.size());
  if (New)
    Exe.strings.push_back(S);
  return It->second;
}

uint32_t ModuleLowering::global(const std::string &Name,
                                const std::string &Where) const {
  auto It = Globals.find(Name);
  if (It == Globals.end())
    fail("vm compiler: in {}: no global function '@{}' in the module", Where,
         Name);
  return It->second;
}

int32_t ModuleLowering::constructorTag(const std::string &Adt,
                                       const std::string &Name) const {
  auto It = Ctors.find(Adt + "." + Name);
  if (It == Ctors.end())
    fail("vm compiler: constructor {} of type {} is not defined in the module",
         Name, Adt);
  return It->second;
}

int32_t ModuleLowering::constructorTag(const ConstructorNode &C) const {
  return constructorTag(C.adt, C.name);
}

uint32_t ModuleLowering::addJob(LoweringJob Job) {
  uint32_t Idx = (uint32_t)Exe.functions.size();
  std::string Name = Job.name;
  for (int N = 1; Exe.functionIndex.count(Name); ++N)
    Name = fmt::format("{}.{}", Job.name, N);
  Job.name = Name;
  Job.index = Idx;
  Exe.functions.emplace_back();
  Exe.functions.back().name = Name;
  Exe.functionIndex[Name] = Idx;
  Jobs.push_back(std::move(Job));
  return Idx;
}

uint32_t ModuleLowering::constructorFunction(const ConstructorNode &C) {
  std::string Key = C.adt + "." + C.name;
  auto It = CtorFunctions.find(Key);
  if (It != CtorFunctions.end())
    return It->second;
  uint32_t Idx = (uint32_t)Exe.functions.size();
  VMFunction Fn;
  Fn.name = "ctor$" + C.name;
  Fn.numParams = (uint32_t)C.inputs.size();
  Fn.numRegisters = Fn.numParams + 1;
  Instruction Alloc =
      Instruction::allocADT(Fn.numParams, (uint32_t)constructorTag(C));
  Alloc.a = 0; // the parameters, pool[0 .. numParams)
  Alloc.b = Fn.numParams;
  for (uint32_t I = 0; I < Fn.numParams; ++I)
    Fn.pool.push_back(I);
  Fn.code = {Alloc, Instruction::ret(Fn.numParams)};
  Exe.functionIndex[Fn.name] = Idx;
  Exe.functions.push_back(std::move(Fn));
  CtorFunctions[Key] = Idx;
  return Idx;
}

//===----------------------------------------------------------------------===//
// One function body
//===----------------------------------------------------------------------===//

namespace {

/// What a variable stands for: a value in a register, or a function known at
/// compile time (called directly; a closure is made only when it is used as a
/// value).
struct Binding {
  uint32_t reg = kNoVReg;
  bool known = false;
  KnownFunction fn;
};

Type typeOf(const Expr &E) {
  if (E->checkedType)
    return E->checkedType;
  if (auto *V = E->as<VarNode>())
    return V->typeAnnotation;
  return nullptr;
}

/// Static tensors at least this big, and every dynamic one, are killed after
/// their last use.
constexpr uint64_t kKillBytes = 4096;

class FunctionLowering {
public:
  FunctionLowering(ModuleLowering &ML, const LoweringJob &J, LoweredFunction &F)
      : ML(ML), Job(J), F(F), Where("@" + J.name) {}

  void run() {
    const auto *Fn = Job.fn->as<FunctionNode>();
    F.name = Job.name;
    F.numParams = (uint32_t)(Job.captures.size() + Fn->params.size());
    for (const VarNode *C : Job.captures)
      Env[C].reg = newReg(nullptr);
    for (const Var &P : Fn->params)
      Env[P.get()].reg = newReg(typeOf(P));
    for (const auto &[V, K] : Job.knownInside) {
      Binding &B = Env[V];
      B.known = true;
      B.fn = K;
    }
    if (Job.self) {
      Binding &B = Env[Job.self];
      B.known = true;
      B.fn = {Job.index, Job.captures};
    }
    // The arena of the memory planner, sized (or deleted) by planMemory.
    F.arenaVReg = newReg(nullptr);
    emit(Instruction::allocStorage(F.arenaVReg, 0));
    ValueCalls = originValueCalls(Fn->body);
    lower(Fn->body, /*Tail=*/true);
  }

private:
  uint32_t newReg(Type T, bool Killable = false) {
    F.vregType.push_back(std::move(T));
    F.killable.push_back(Killable);
    return (uint32_t)F.vregType.size() - 1;
  }
  PendingInst &emit(const Instruction &I) {
    F.code.emplace_back();
    F.code.back().inst = I;
    return F.code.back();
  }
  /// InvokeKernel of the kernel-table entry (Kind, Op, A) on Regs: NumIn
  /// inputs, then the outputs; Dst for an allocating entry.
  /// Origins: where its values come from (null: a shape function's).
  void emitKernel(KernelEntry::Kind Kind, const std::string &Op, const Attrs &A,
                  uint32_t NumIn, std::vector<uint32_t> Regs, uint32_t Dst = 0,
                  std::shared_ptr<const KernelOrigins> Origins = nullptr) {
    PendingInst &P =
        emit(Instruction::invokeKernel(ML.kernel(Kind, Op, A), NumIn, Dst));
    P.kernelKind = Kind;
    P.regs = std::move(Regs);
    P.origins = std::move(Origins);
  }
  /// The origins of an operator call: what it computes; its value is its
  /// origin's where it is the origin's last call (originValueCalls).
  std::shared_ptr<const KernelOrigins> originsOf(const CallNode &C) const {
    std::vector<std::string> Covers = originsComputedBy(C);
    if (Covers.empty())
      return nullptr;
    auto O = std::make_shared<KernelOrigins>();
    O->covers = std::move(Covers);
    if (ValueCalls.count(&C))
      O->output = C.origin;
    return O;
  }
  /// The origins of a fused group's call: every operator call of its body,
  /// in order; its value is its result's (the body's last call).
  std::shared_ptr<const KernelOrigins> groupOrigins(const CallNode &C) const {
    const auto *Fn = C.callee->as<FunctionNode>();
    if (!Fn)
      return originsOf(C);
    auto O = std::make_shared<KernelOrigins>();
    O->covers = originsIn(Fn->body);
    const Expr *Result = &Fn->body;
    while (const auto *L = (*Result)->as<LetNode>())
      Result = &L->body;
    if (ValueCalls.count(&C))
      O->output = originOf(*Result);
    if (O->covers.empty() && O->output.empty())
      return nullptr;
    return O;
  }
  int32_t newLabel() {
    F.labelPos.push_back(0);
    return (int32_t)F.labelPos.size() - 1;
  }
  void place(int32_t L) { F.labelPos[L] = (uint32_t)F.code.size(); }

  /// R is the value of the expression: returns it, or returns it from the
  /// function when in tail position.
  uint32_t finish(uint32_t R, bool Tail) {
    if (!Tail)
      return R;
    emit(Instruction::ret(R));
    return kNoVReg;
  }
  uint32_t lowerValue(const Expr &E) { return lower(E, false); }

  const Binding &binding(const VarNode *V) {
    auto It = Env.find(V);
    if (It == Env.end())
      fail("vm compiler: in {}: unbound variable %{}", Where, V->nameHint);
    return It->second;
  }

  uint32_t regOf(const VarNode *V) {
    const Binding &B = binding(V);
    if (!B.known)
      return B.reg;
    KnownFunction K = B.fn; // closureOf may grow Env
    return closureOf(K);
  }

  std::vector<uint32_t> captureRegs(const KnownFunction &K) {
    std::vector<uint32_t> Regs;
    for (const VarNode *V : K.captures)
      Regs.push_back(regOf(V));
    return Regs;
  }

  uint32_t closureOf(const KnownFunction &K) {
    std::vector<uint32_t> Regs = captureRegs(K);
    uint32_t R = newReg(nullptr);
    emit(Instruction::allocClosure(R, K.func)).regs = std::move(Regs);
    return R;
  }

  /// Lifts function literal FnExpr (bound to Self when let-bound) to a
  /// function of the executable whose leading parameters are its captures.
  KnownFunction lift(const Expr &FnExpr, const VarNode *Self,
                     const std::string &Hint) {
    LoweringJob J;
    J.fn = FnExpr;
    J.self = Self;
    J.name = Job.name + "$" + Hint;
    std::unordered_set<const VarNode *> Seen;
    std::function<void(const VarNode *)> Visit = [&](const VarNode *V) {
      if (V == Self || !Seen.insert(V).second)
        return;
      const Binding &B = binding(V);
      if (B.known) {
        KnownFunction K = B.fn;
        J.knownInside.emplace_back(V, K);
        for (const VarNode *C : K.captures)
          Visit(C);
      } else {
        J.captures.push_back(V);
      }
    };
    for (const Var &V : freeVars(FnExpr))
      Visit(V.get());
    KnownFunction K;
    K.captures = J.captures;
    K.func = ML.addJob(std::move(J));
    return K;
  }

  uint32_t invoke(uint32_t Func, std::vector<uint32_t> Args, bool Tail,
                  Type T) {
    uint32_t R = Tail ? kNoVReg : newReg(T, isTensorType(T));
    emit(Instruction::invoke(Tail, R, Func)).regs = std::move(Args);
    return R;
  }

  static bool isTensorType(const Type &T) {
    return T && T->kind == TypeKind::Tensor;
  }

  uint32_t lower(const Expr &E, bool Tail) {
    switch (E->kind) {
    case ExprKind::Var: return finish(regOf(E->as<VarNode>()), Tail);
    case ExprKind::GlobalVar: {
      KnownFunction K;
      K.func = ML.global(E->as<GlobalVarNode>()->name, Where);
      return finish(closureOf(K), Tail);
    }
    case ExprKind::Constant: {
      uint32_t R = newReg(typeOf(E));
      emit(Instruction::loadConst(R, ML.constant(*E->as<ConstantNode>())));
      return finish(R, Tail);
    }
    case ExprKind::Op:
      fail("vm compiler: in {}: operator '{}' used as a value; operators can "
           "only be called",
           Where, E->as<OpNode>()->name());
    case ExprKind::Function: {
      KnownFunction K = lift(E, nullptr, "fn");
      return finish(closureOf(K), Tail);
    }
    case ExprKind::Constructor: {
      const auto *C = E->as<ConstructorNode>();
      uint32_t R = newReg(typeOf(E));
      if (C->inputs.empty())
        emit(Instruction::allocADT(R, (uint32_t)ML.constructorTag(*C)));
      else
        emit(Instruction::allocClosure(R, ML.constructorFunction(*C)));
      return finish(R, Tail);
    }
    case ExprKind::Tuple: {
      std::vector<uint32_t> Fields;
      for (const Expr &Fe : E->as<TupleNode>()->fields)
        Fields.push_back(lowerValue(Fe));
      uint32_t R = newReg(typeOf(E));
      emit(Instruction::allocADT(R, (uint32_t)ADTObj::kTupleTag)).regs =
          std::move(Fields);
      return finish(R, Tail);
    }
    case ExprKind::TupleGetItem: {
      const auto *G = E->as<TupleGetItemNode>();
      uint32_t T = lowerValue(G->tuple);
      if (G->index < 0)
        fail("vm compiler: in {}: negative tuple index {}", Where, G->index);
      uint32_t R = newReg(typeOf(E));
      emit(Instruction::getField(R, T, G->index));
      return finish(R, Tail);
    }
    case ExprKind::Let: return lowerLet(E, Tail);
    case ExprKind::If: return lowerIf(*E->as<IfNode>(), typeOf(E), Tail);
    case ExprKind::Match:
      return lowerMatch(*E->as<MatchNode>(), typeOf(E), Tail);
    case ExprKind::Call: return lowerCall(*E->as<CallNode>(), typeOf(E), Tail);
    }
    fail("vm compiler: in {}: unknown expression kind", Where);
  }

  uint32_t lowerLet(const Expr &E, bool Tail) {
    const Expr *Cur = &E;
    while (const auto *L = (*Cur)->as<LetNode>()) {
      if (L->value->kind == ExprKind::Function) {
        KnownFunction K = lift(L->value, L->var.get(), L->var->nameHint);
        Binding B;
        B.known = true;
        B.fn = std::move(K);
        Env[L->var.get()] = std::move(B);
      } else if (const auto *V = L->value->as<VarNode>()) {
        Binding B = binding(V);
        Env[L->var.get()] = std::move(B);
      } else {
        uint32_t R = lowerValue(L->value);
        Env[L->var.get()].reg = R;
      }
      Cur = &L->body;
    }
    return lower(*Cur, Tail);
  }

  uint32_t lowerIf(const IfNode &I, Type T, bool Tail) {
    uint32_t Cond = lowerValue(I.cond);
    uint32_t Zero = newReg(nullptr);
    emit(Instruction::loadConsti(Zero, 0));
    int32_t Then = newLabel();
    // Falls through (to the else branch) when cond == 0.
    emit(Instruction::ifEqual(Cond, Zero)).label = Then;
    if (Tail) {
      lower(I.elseBranch, true);
      place(Then);
      lower(I.thenBranch, true);
      return kNoVReg;
    }
    uint32_t Res = newReg(T, isTensorType(T));
    int32_t End = newLabel();
    uint32_t V = lowerValue(I.elseBranch);
    move(Res, V);
    emit(Instruction::jump()).label = End;
    place(Then);
    V = lowerValue(I.thenBranch);
    move(Res, V);
    place(End);
    return Res;
  }

  void move(uint32_t Dst, uint32_t Src) { emit(Instruction::move(Dst, Src)); }

  uint32_t lowerMatch(const MatchNode &Mt, Type T, bool Tail) {
    uint32_t D = lowerValue(Mt.data);
    uint32_t Res = Tail ? kNoVReg : newReg(T, isTensorType(T));
    int32_t End = Tail ? -1 : newLabel();
    for (const Clause &Cl : Mt.clauses) {
      int32_t Next = newLabel();
      testPattern(*Cl.lhs, D, Next);
      uint32_t V = lower(Cl.rhs, Tail);
      if (!Tail) {
        move(Res, V);
        emit(Instruction::jump()).label = End;
      }
      place(Next);
    }
    emit(Instruction::fatal(
        ML.string(fmt::format("in {}: match: no clause matched", Where))));
    if (!Tail)
      place(End);
    return Res;
  }

  /// Jumps to Fail unless value V matches P; binds P's variables.
  void testPattern(const PatternNode &P, uint32_t V, int32_t Fail) {
    switch (P.kind) {
    case PatternKind::Wildcard: return;
    case PatternKind::Var: Env[P.var.get()].reg = V; return;
    case PatternKind::Constructor: {
      uint32_t Tag = newReg(nullptr);
      emit(Instruction::getTag(Tag, V));
      uint32_t Want = newReg(nullptr);
      emit(Instruction::loadConsti(Want, ML.constructorTag(*P.ctor)));
      emit(Instruction::ifEqual(Tag, Want)).label = Fail;
      break;
    }
    case PatternKind::Tuple: break;
    }
    for (size_t I = 0; I < P.children.size(); ++I) {
      const PatternNode &Ch = *P.children[I];
      if (Ch.kind == PatternKind::Wildcard)
        continue;
      uint32_t Fld =
          newReg(Ch.kind == PatternKind::Var ? typeOf(Ch.var) : nullptr);
      emit(Instruction::getField(Fld, V, (int64_t)I));
      testPattern(Ch, Fld, Fail);
    }
  }

  std::vector<uint32_t> lowerArgs(const std::vector<Expr> &Args) {
    std::vector<uint32_t> R;
    R.reserve(Args.size());
    for (const Expr &A : Args)
      R.push_back(lowerValue(A));
    return R;
  }

  uint32_t lowerCall(const CallNode &C, Type T, bool Tail) {
    const Expr &Callee = C.callee;
    switch (Callee->kind) {
    case ExprKind::Op:
      return lowerOpCall(C, *Callee->as<OpNode>()->info, T, Tail);
    case ExprKind::Constructor: {
      const auto *Ctor = Callee->as<ConstructorNode>();
      if (C.args.size() != Ctor->inputs.size())
        fail("vm compiler: in {}: constructor {} expects {} arguments, got {}",
             Where, Ctor->name, Ctor->inputs.size(), C.args.size());
      std::vector<uint32_t> Fields = lowerArgs(C.args);
      uint32_t R = newReg(T);
      emit(Instruction::allocADT(R, (uint32_t)ML.constructorTag(*Ctor))).regs =
          std::move(Fields);
      return finish(R, Tail);
    }
    case ExprKind::GlobalVar: {
      uint32_t Fn = ML.global(Callee->as<GlobalVarNode>()->name, Where);
      return invoke(Fn, lowerArgs(C.args), Tail, T);
    }
    case ExprKind::Function: {
      if (const NativeKernel *NK = ML.nativeKernel(Callee))
        return lowerNativeCall(C, *NK, T, Tail);
      KnownFunction K = lift(Callee, nullptr, "fn");
      std::vector<uint32_t> Args = captureRegs(K);
      for (uint32_t A : lowerArgs(C.args))
        Args.push_back(A);
      return invoke(K.func, std::move(Args), Tail, T);
    }
    case ExprKind::Var: {
      const Binding &B = binding(Callee->as<VarNode>());
      if (B.known) {
        KnownFunction K = B.fn;
        std::vector<uint32_t> Args = captureRegs(K);
        for (uint32_t A : lowerArgs(C.args))
          Args.push_back(A);
        return invoke(K.func, std::move(Args), Tail, T);
      }
      break;
    }
    default: break;
    }
    uint32_t Clo = lowerValue(Callee);
    std::vector<uint32_t> Args = lowerArgs(C.args);
    uint32_t R = Tail ? kNoVReg : newReg(T, isTensorType(T));
    emit(Instruction::invokeClosure(Tail, R, Clo)).regs = std::move(Args);
    return R;
  }

  /// A tensor of type O for a kernel's output: carved from storage of its
  /// own (the memory planner may move it into the arena) when static, else
  /// fresh storage of the shape in register ShapeReg.
  uint32_t allocOutput(const TensorTypeNode &O, Type OT, uint32_t ShapeReg) {
    if (!O.isStatic()) {
      uint32_t R = newReg(std::move(OT), true);
      emit(Instruction::allocTensorReg(R, kNoStorage, 0, ShapeReg,
                                       (uint32_t)O.dtype));
      return R;
    }
    std::vector<int64_t> Dims;
    for (const Dim &D : *O.shape)
      Dims.push_back(D.value);
    uint64_t Bytes = (uint64_t)numElements(Dims) * dtypeSize(O.dtype);
    uint32_t S = newReg(nullptr);
    emit(Instruction::allocStorage(S, (int64_t)Bytes)).ownStorage = true;
    uint32_t R = newReg(std::move(OT), Bytes >= kKillBytes);
    PendingInst &PT =
        emit(Instruction::allocTensor(R, S, 0, (uint32_t)O.dtype));
    PT.shape = std::move(Dims);
    PT.bytes = Bytes;
    return R;
  }

  /// A fused group compiled to native kernel NK: its output allocated (a
  /// dynamic shape from the kernel's recipe), then one kernel call.
  uint32_t lowerNativeCall(const CallNode &C, const NativeKernel &NK, Type T,
                           bool Tail) {
    const auto *O = T ? T->as<TensorTypeNode>() : nullptr;
    if (!O || !O->hasKnownRank() ||
        O->shape->size() != NK.buffers.back().dims.size())
      fail("vm compiler: in {}: native kernel {} computes a rank-{} tensor, "
           "but the call has type {}",
           Where, NK.symbol, NK.buffers.back().dims.size(),
           T ? typeToString(T) : std::string("?"));
    std::vector<uint32_t> Args = lowerArgs(C.args);
    uint32_t NumIn = (uint32_t)Args.size();
    uint32_t ShapeReg = kNoVReg;
    if (!O->isStatic()) {
      ShapeReg = newReg(nullptr);
      std::vector<uint32_t> Regs = Args;
      Regs.push_back(ShapeReg);
      emitKernel(KernelEntry::Kind::NativeShapeFunction, NK.symbol, Attrs(),
                 NumIn, std::move(Regs));
    }
    uint32_t Out = allocOutput(*O, T, ShapeReg);
    Args.push_back(Out);
    emitKernel(KernelEntry::Kind::Native, NK.symbol, Attrs(), NumIn,
               std::move(Args), 0, groupOrigins(C));
    return finish(Out, Tail);
  }

  uint32_t lowerOpCall(const CallNode &C, const OpInfo &Op, Type T, bool Tail) {
    if (Op.numInputs >= 0 && (size_t)Op.numInputs != C.args.size())
      fail("vm compiler: in {}: operator '{}' expects {} input{}, got {}",
           Where, Op.name, Op.numInputs, Op.numInputs == 1 ? "" : "s",
           C.args.size());
    std::vector<uint32_t> Args = lowerArgs(C.args);
    uint32_t NumIn = (uint32_t)Args.size();

    // The outputs, when their types are concrete enough to allocate them.
    std::vector<const TensorTypeNode *> Outs;
    bool IsTuple = false;
    bool Concrete = T != nullptr;
    if (T && T->kind == TypeKind::Tensor) {
      Outs.push_back(T->as<TensorTypeNode>());
    } else if (const auto *TT = T ? T->as<TupleTypeNode>() : nullptr) {
      IsTuple = true;
      for (const Type &Fld : TT->fields) {
        if (const auto *FT = Fld->as<TensorTypeNode>())
          Outs.push_back(FT);
        else
          Concrete = false;
      }
    } else {
      Concrete = false;
    }
    for (const TensorTypeNode *O : Outs)
      Concrete &= O->hasKnownRank();

    if (Op.listPrimitive) {
      // The VM runs it on its Lists (vm/ListPrimitives.h).
      uint32_t R = newReg(T, isTensorType(T));
      emitKernel(KernelEntry::Kind::ListPrimitive, Op.name, C.attrs, NumIn,
                 std::move(Args), R, originsOf(C));
      return finish(R, Tail);
    }
    if (Op.listResult || Op.listArgument || !Concrete) {
      // The kernel allocates its own result(s) at run time.
      Attrs A = C.attrs;
      if (Op.listResult)
        A.set("list_result", int64_t(1));
      if (Op.listArgument)
        A.set("list_argument", int64_t(1));
      // The runtime cannot tell a 1-field tuple from a tensor by the number
      // of outputs.
      if (IsTuple && !Op.listResult)
        A.set("tuple_result", int64_t(1));
      uint32_t R = newReg(T, isTensorType(T));
      emitKernel(KernelEntry::Kind::AllocatingBuiltin,
                 ML.builtinKernel(Op.name), A, NumIn, std::move(Args), R,
                 originsOf(C));
      return finish(R, Tail);
    }

    if (Op.viewOfFirstArg && !IsTuple && NumIn > 0)
      return lowerView(C, Op, Args, *Outs[0], T, Tail);
    if (const KernelInfo *K =
            KernelRegistry::global().find(ML.builtinKernel(Op.name));
        K && K->viewFn && !IsTuple && NumIn > 0 &&
        ML.options().codegen.target == Device::CPU) {
      // A view of the first argument where the kernel finds one at run
      // time (a contiguous slice), else its copy: the VM makes the result.
      // (On a GPU target the kernel runs on the device instead: allocating
      // kernels run on the host.)
      uint32_t R = newReg(T, true);
      emitKernel(KernelEntry::Kind::AllocatingBuiltin, K->name, C.attrs, NumIn,
                 std::move(Args), R, originsOf(C));
      F.code.back().viewsFirstInput = true;
      return finish(R, Tail);
    }

    bool AnyDynamic = false;
    for (const TensorTypeNode *O : Outs)
      AnyDynamic |= !O->isStatic();
    std::vector<uint32_t> ShapeRegs;
    if (AnyDynamic) {
      for (size_t I = 0; I < Outs.size(); ++I)
        ShapeRegs.push_back(newReg(nullptr));
      callShapeFunction(C, Op, Args, ShapeRegs);
    }
    std::vector<uint32_t> OutRegs;
    for (size_t I = 0; I < Outs.size(); ++I) {
      const TensorTypeNode *O = Outs[I];
      Type OT = IsTuple ? T->as<TupleTypeNode>()->fields[I] : T;
      OutRegs.push_back(
          allocOutput(*O, OT, O->isStatic() ? kNoVReg : ShapeRegs[I]));
    }
    Args.insert(Args.end(), OutRegs.begin(), OutRegs.end());
    Attrs KernelAttrs = C.attrs;
    const KernelInfo *Gpu = ML.gpuLibraryKernel(C, Op.name, KernelAttrs);
    emitKernel(KernelEntry::Kind::Builtin,
               Gpu ? Gpu->name : ML.builtinKernel(Op.name), KernelAttrs, NumIn,
               std::move(Args), 0, originsOf(C));
    if (!IsTuple)
      return finish(OutRegs[0], Tail);
    uint32_t R = newReg(T);
    emit(Instruction::allocADT(R, (uint32_t)ADTObj::kTupleTag)).regs =
        std::move(OutRegs);
    return finish(R, Tail);
  }

  /// The operator's shape function on Args, one shape per register of
  /// ShapeRegs.
  void callShapeFunction(const CallNode &C, const OpInfo &Op,
                         const std::vector<uint32_t> &Args,
                         const std::vector<uint32_t> &ShapeRegs) {
    std::vector<uint32_t> Regs = Args;
    Regs.insert(Regs.end(), ShapeRegs.begin(), ShapeRegs.end());
    emitKernel(KernelEntry::Kind::ShapeFunction, Op.name, C.attrs,
               (uint32_t)Args.size(), std::move(Regs));
  }

  /// A call of an operator whose result is a view of its first argument
  /// (reshape, squeeze, flatten): the result's shape (constant, or from the
  /// operator's shape function), then ReshapeTensor, which shares the
  /// argument's storage instead of copying it.
  uint32_t lowerView(const CallNode &C, const OpInfo &Op,
                     const std::vector<uint32_t> &Args, const TensorTypeNode &O,
                     Type T, bool Tail) {
    uint32_t ShapeReg = newReg(nullptr);
    if (O.isStatic()) {
      std::vector<int64_t> Dims;
      for (const Dim &D : *O.shape)
        Dims.push_back(D.value);
      emit(Instruction::loadConst(ShapeReg, ML.shapeConstant(Dims)));
    } else {
      callShapeFunction(C, Op, Args, {ShapeReg});
    }
    uint32_t R = newReg(std::move(T), true);
    emit(Instruction::reshapeTensor(R, Args[0], ShapeReg));
    return finish(R, Tail);
  }

  ModuleLowering &ML;
  const LoweringJob &Job;
  LoweredFunction &F;
  std::string Where;
  /// The calls of the body whose results are their origins' values.
  std::unordered_set<const CallNode *> ValueCalls;
  std::unordered_map<const VarNode *, Binding> Env;
};

} // namespace

void lowerFunction(ModuleLowering &ML, const LoweringJob &Job,
                   LoweredFunction &F) {
  FunctionLowering(ML, Job, F).run();
}

} // namespace rivet::vm::compiler
