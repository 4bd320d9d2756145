//===- Interpreter.cc - The reference interpreter of the IR ---------------===//
//
// run() is a loop over the expression in tail position: let bodies, if
// branches, match right-hand sides and calls of functions continue the loop
// (a call replaces the current frame) instead of recursing. Only
// sub-expressions whose value is needed to go on (let values, conditions,
// arguments, scrutinees) recurse.
//
// Environments: each call has a frame mapping the VarNodes bound in it to
// values; a closure carries the values of its free variables only. A
// let-bound recursive function is bound to itself when it is called, not
// captured, so closures form no reference cycles and closures created in a
// loop are freed with their iteration.
//
//===----------------------------------------------------------------------===//
#include "ir/Interpreter.h"

#include "ir/ListPrimitives.h"
#include "ir/Op.h"
#include "kernels/Error.h"
#include "kernels/Kernel.h"

#include <fmt/format.h>
#include <pthread.h>

#include <unordered_set>

namespace rivet::ir {

struct Interpreter::Frame {
  std::unordered_map<const VarNode *, Value> locals;
  Value callee;               // the closure being run, keeps it alive
  const std::string *where;   // "@f" or a closure's name, for messages
  const Expr *body = nullptr; // the function body to run
};

static const std::string TopLevelName = "<expression>";

Interpreter::Interpreter(const Module &Mod) : M(Mod) {
  for (const std::string &Name : M.functionNames()) {
    Global G;
    G.fn = M.function(Name);
    G.where = "@" + Name;
    G.closure = Value::closure(G.fn, {}, nullptr, G.where);
    Globals.emplace(Name, std::move(G));
  }
}

Interpreter::~Interpreter() = default;

void Interpreter::initStackBounds() {
  StackLow = nullptr;
  pthread_attr_t Attr;
  if (pthread_getattr_np(pthread_self(), &Attr) != 0)
    return;
  void *Addr = nullptr;
  size_t Size = 0;
  if (pthread_attr_getstack(&Attr, &Addr, &Size) == 0 && Size > StackReserve)
    StackLow = static_cast<const char *>(Addr);
  pthread_attr_destroy(&Attr);
}

void Interpreter::checkStack(const Frame &F) {
  if (!StackLow)
    return;
  auto Here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (Here < reinterpret_cast<uintptr_t>(StackLow) + StackReserve)
    fail("in {}: recursion too deep: the native stack is exhausted (only "
         "calls in tail position run in constant stack)",
         *F.where);
}

Value Interpreter::call(const std::string &Fn, std::vector<Value> Args) {
  initStackBounds();
  std::unique_ptr<Frame> F =
      enterGlobal(global(Fn, TopLevelName), std::move(Args), TopLevelName);
  CallDepth = 1; // as the VM counts @main's frame
  return run(F->body, F.get(), /*InFrame=*/true);
}

Value Interpreter::eval(const Expr &E) {
  RIVET_CHECK(E, "eval of a null expression");
  initStackBounds();
  Frame Top;
  Top.where = &TopLevelName;
  CallDepth = 0;
  return run(&E, &Top);
}

Value Interpreter::apply(const Value &Fn, std::vector<Value> Args) {
  initStackBounds();
  if (Fn.isConstructorFn()) {
    if (Args.size() != Fn.ctor()->inputs.size())
      fail("constructor {} expects {} arguments, got {}", Fn.ctor()->name,
           Fn.ctor()->inputs.size(), Args.size());
    return Value::adt(Fn.ctor(), std::move(Args));
  }
  std::unique_ptr<Frame> F = enterClosure(Fn, std::move(Args), TopLevelName);
  CallDepth = 1;
  return run(F->body, F.get(), /*InFrame=*/true);
}

const Interpreter::Global &Interpreter::global(const std::string &Name,
                                               const std::string &Where) {
  auto It = Globals.find(Name);
  if (It == Globals.end())
    fail("in {}: no global function '@{}' in the module", Where, Name);
  return It->second;
}

static void bindParams(std::unordered_map<const VarNode *, Value> &Locals,
                       const FunctionNode &Fn, std::vector<Value> &Args,
                       const std::string &Callee, const std::string &Where) {
  if (Args.size() != Fn.params.size())
    fail("in {}: call to {}: expected {} argument{}, got {}", Where, Callee,
         Fn.params.size(), Fn.params.size() == 1 ? "" : "s", Args.size());
  Locals.reserve(Fn.params.size() + 4);
  for (size_t I = 0; I < Args.size(); ++I)
    Locals[Fn.params[I].get()] = std::move(Args[I]);
}

std::unique_ptr<Interpreter::Frame>
Interpreter::enterGlobal(const Global &G, std::vector<Value> Args,
                         const std::string &Where) {
  const auto *Fn = G.fn->as<FunctionNode>();
  auto F = std::make_unique<Frame>();
  F->where = &G.where;
  bindParams(F->locals, *Fn, Args, G.where, Where);
  F->body = &Fn->body;
  return F;
}

std::unique_ptr<Interpreter::Frame>
Interpreter::enterClosure(const Value &Callee, std::vector<Value> Args,
                          const std::string &Where) {
  if (!Callee.isClosure())
    fail("in {}: cannot call {}: it is not a function", Where,
         valueToString(Callee));
  const ValueNode &N = Callee.node();
  const FunctionNode *Fn = N.function();
  auto F = std::make_unique<Frame>();
  F->where = &N.name;
  F->callee = Callee;
  bindParams(F->locals, *Fn, Args, N.name, Where);
  if (N.selfVar)
    F->locals.emplace(N.selfVar.get(), Callee);
  F->body = &Fn->body;
  return F;
}

static const Value &lookup(const std::unordered_map<const VarNode *, Value> &L,
                           const Value &Callee, const VarNode *V,
                           const std::string &Where) {
  auto It = L.find(V);
  if (It != L.end())
    return It->second;
  if (Callee.isClosure())
    for (const auto &[K, Val] : Callee.node().captured)
      if (K == V)
        return Val;
  fail("in {}: unbound variable %{}", Where, V->nameHint);
}

// Free variables of a function: variables referenced in its body that are
// not bound inside it. Iterative, so deeply nested bodies are fine.
const std::vector<const VarNode *> &Interpreter::freeVars(const Expr &FnExpr) {
  const auto *Fn = FnExpr->as<FunctionNode>();
  auto It = FreeVarCache.find(Fn);
  if (It != FreeVarCache.end())
    return It->second.second;

  std::unordered_set<const VarNode *> Bound;
  std::vector<const VarNode *> Referenced;
  std::unordered_set<const ExprNode *> Visited;
  std::vector<const ExprNode *> Work;
  std::vector<const PatternNode *> Pats;
  for (const Var &P : Fn->params)
    Bound.insert(P.get());
  Work.push_back(Fn->body.get());
  auto Push = [&](const Expr &E) {
    if (E)
      Work.push_back(E.get());
  };
  while (!Work.empty()) {
    const ExprNode *E = Work.back();
    Work.pop_back();
    if (!Visited.insert(E).second)
      continue;
    switch (E->kind) {
    case ExprKind::Var:
      Referenced.push_back(static_cast<const VarNode *>(E));
      break;
    case ExprKind::GlobalVar:
    case ExprKind::Constant:
    case ExprKind::Op:
    case ExprKind::Constructor: break;
    case ExprKind::Call: {
      auto *C = E->as<CallNode>();
      Push(C->callee);
      for (const Expr &A : C->args)
        Push(A);
      break;
    }
    case ExprKind::Function: {
      auto *F = E->as<FunctionNode>();
      for (const Var &P : F->params)
        Bound.insert(P.get());
      Push(F->body);
      break;
    }
    case ExprKind::Let: {
      auto *L = E->as<LetNode>();
      Bound.insert(L->var.get());
      Push(L->value);
      Push(L->body);
      break;
    }
    case ExprKind::If: {
      auto *I = E->as<IfNode>();
      Push(I->cond);
      Push(I->thenBranch);
      Push(I->elseBranch);
      break;
    }
    case ExprKind::Tuple:
      for (const Expr &F : E->as<TupleNode>()->fields)
        Push(F);
      break;
    case ExprKind::TupleGetItem: Push(E->as<TupleGetItemNode>()->tuple); break;
    case ExprKind::Match: {
      auto *Mt = E->as<MatchNode>();
      Push(Mt->data);
      for (const Clause &Cl : Mt->clauses) {
        Push(Cl.rhs);
        Pats.push_back(Cl.lhs.get());
        while (!Pats.empty()) {
          const PatternNode *P = Pats.back();
          Pats.pop_back();
          if (!P)
            continue;
          if (P->kind == PatternKind::Var && P->var)
            Bound.insert(P->var.get());
          for (const Pattern &Ch : P->children)
            Pats.push_back(Ch.get());
        }
      }
      break;
    }
    }
  }
  std::vector<const VarNode *> Free;
  std::unordered_set<const VarNode *> Seen;
  for (const VarNode *V : Referenced)
    if (!Bound.count(V) && Seen.insert(V).second)
      Free.push_back(V);
  auto &Entry = FreeVarCache[Fn];
  Entry.first = FnExpr; // keeps the key alive
  Entry.second = std::move(Free);
  return Entry.second;
}

Value Interpreter::makeClosure(const Expr &FnExpr, const Frame &F,
                               const Var &SelfVar) {
  std::vector<std::pair<const VarNode *, Value>> Captured;
  for (const VarNode *V : freeVars(FnExpr)) {
    if (SelfVar && V == SelfVar.get())
      continue;
    auto It = F.locals.find(V);
    if (It != F.locals.end()) {
      Captured.emplace_back(V, It->second);
      continue;
    }
    if (F.callee.isClosure())
      for (const auto &[K, Val] : F.callee.node().captured)
        if (K == V) {
          Captured.emplace_back(V, Val);
          break;
        }
    // Not found: bound nowhere visible; a use will report it.
  }
  std::string Name = SelfVar
                         ? fmt::format("%{} in {}", SelfVar->nameHint, *F.where)
                         : fmt::format("fn in {}", *F.where);
  return Value::closure(FnExpr, std::move(Captured), SelfVar, std::move(Name));
}

bool Interpreter::matchPattern(const PatternNode &P, const Value &V, Frame &F) {
  switch (P.kind) {
  case PatternKind::Wildcard: return true;
  case PatternKind::Var: F.locals[P.var.get()] = V; return true;
  case PatternKind::Constructor: {
    if (!V.isADT())
      return false;
    const Constructor &C = V.ctor();
    if (C != P.ctor && (C->tag != P.ctor->tag || C->adt != P.ctor->adt))
      return false;
    if (V.fields().size() != P.children.size())
      fail("in {}: match: pattern {} has {} fields, the value has {}", *F.where,
           P.ctor->name, P.children.size(), V.fields().size());
    for (size_t I = 0; I < P.children.size(); ++I)
      if (!matchPattern(*P.children[I], V.fields()[I], F))
        return false;
    return true;
  }
  case PatternKind::Tuple: {
    if (!V.isTuple() || V.fields().size() != P.children.size())
      return false;
    for (size_t I = 0; I < P.children.size(); ++I)
      if (!matchPattern(*P.children[I], V.fields()[I], F))
        return false;
    return true;
  }
  }
  return false;
}

// Whether an operator's result is a tuple: from the checked type when type
// inference ran, else from the operator's type relation on the actual
// argument types, else from the number of outputs.
static bool resultIsTuple(const CallNode &C, const OpInfo &Op,
                          const std::vector<Tensor> &Ins, size_t NumOutputs) {
  if (C.checkedType && C.checkedType->kind != TypeKind::Incomplete)
    return C.checkedType->kind == TypeKind::Tuple;
  if (Op.relation) {
    std::vector<Type> ArgTypes;
    for (const Tensor &T : Ins) {
      std::vector<Dim> Dims;
      for (int64_t D : T.shape())
        Dims.push_back(Dim::constant(D));
      ArgTypes.push_back(tensorType(std::move(Dims), T.dtype()));
    }
    try {
      if (Type R = Op.relation(ArgTypes, C.attrs))
        return R->kind == TypeKind::Tuple;
    } catch (const Error &) {
      // The kernel accepted what the relation rejects; fall through.
    }
  }
  return NumOutputs != 1;
}

Value Interpreter::callOperator(const CallNode &C, const OpInfo &Op,
                                std::vector<Value> Args, const Frame &F) {
  if (Op.numInputs >= 0 && (size_t)Op.numInputs != Args.size())
    fail("in {}: operator '{}' expects {} input{}, got {}", *F.where, Op.name,
         Op.numInputs, Op.numInputs == 1 ? "" : "s", Args.size());
  if (Op.listPrimitive) {
    try {
      return applyListPrimitive(Op, Args, M);
    } catch (const Error &Err) {
      fail("in {}: operator '{}' failed: {}", *F.where, Op.name, Err.what());
    }
  }
  std::vector<Tensor> Ins;
  Ins.reserve(Args.size());
  if (Op.listArgument) {
    // The elements of the List (Cons cells) are the kernel's inputs.
    const Value *L = Args.empty() ? nullptr : &Args[0];
    while (L && L->isADT() && L->fields().size() == 2) {
      Ins.push_back(L->fields()[0].tensor("list element"));
      L = &L->fields()[1];
    }
    if (!L || !L->isADT() || !L->fields().empty())
      fail("in {}: operator '{}' expects a list of tensors", *F.where, Op.name);
  } else {
    for (size_t I = 0; I < Args.size(); ++I) {
      if (!Args[I].isTensor())
        fail("in {}: operator '{}': argument {} is {}, expected a tensor",
             *F.where, Op.name, I + 1, valueToString(Args[I]));
      Ins.push_back(Args[I].tensor());
    }
  }
  const KernelInfo *K;
  auto It = KernelCache.find(&Op);
  if (It != KernelCache.end()) {
    K = It->second;
  } else {
    K = KernelRegistry::global().find(Op.name);
    if (!K)
      fail("in {}: no kernel for operator '{}'", *F.where, Op.name);
    KernelCache.emplace(&Op, K);
  }
  std::vector<Tensor> Outs;
  try {
    Outs = invokeKernel(*K, Ins, C.attrs);
  } catch (const Error &Err) {
    fail("in {}: operator '{}' failed: {}", *F.where, Op.name, Err.what());
  }
  if (Op.listResult) {
    if (!M.findConstructor("Nil") || !M.findConstructor("Cons"))
      fail("in {}: operator '{}' returns a List, but the module has no prelude",
           *F.where, Op.name);
    Value L = Value::adt(M.findConstructor("Nil"), {});
    for (auto It = Outs.rbegin(); It != Outs.rend(); ++It)
      L = Value::adt(M.findConstructor("Cons"), {Value(std::move(*It)), L});
    return L;
  }
  // Whether the result is a tuple depends on the operator and its attributes
  // only, so it is decided once per call site.
  bool IsTuple;
  auto TI = TupleCache.find(&C);
  if (TI != TupleCache.end() && TI->second.first == &Op) {
    IsTuple = TI->second.second;
  } else {
    IsTuple = resultIsTuple(C, Op, Ins, Outs.size());
    TupleCache[&C] = {&Op, IsTuple};
  }
  if (IsTuple) {
    std::vector<Value> Fields(Outs.begin(), Outs.end());
    return Value::tuple(std::move(Fields));
  }
  if (Outs.size() != 1)
    fail("in {}: operator '{}' produced {} outputs, expected 1", *F.where,
         Op.name, Outs.size());
  return Value(std::move(Outs[0]));
}

Value Interpreter::run(const Expr *E, Frame *F, bool InFrame) {
  std::unique_ptr<Frame> Own; // the frame of a function entered by a tail call
  checkStack(*F);
  // The frame this evaluation pushed by its first call, popped on any exit.
  struct FrameCount {
    size_t &Depth;
    bool Pushed = false;
    ~FrameCount() {
      if (Pushed)
        --Depth;
    }
  } Count{CallDepth};
  for (;;) {
    const ExprNode *N = E->get();
    switch (N->kind) {
    case ExprKind::Var:
      return lookup(F->locals, F->callee, static_cast<const VarNode *>(N),
                    *F->where);
    case ExprKind::GlobalVar:
      return global(N->as<GlobalVarNode>()->name, *F->where).closure;
    case ExprKind::Constant: return Value(N->as<ConstantNode>()->value);
    case ExprKind::Op:
      fail("in {}: operator '{}' used as a value; operators can only be called",
           *F->where, N->as<OpNode>()->name());
    case ExprKind::Function: return makeClosure(*E, *F, nullptr);
    case ExprKind::Constructor: {
      auto C = std::static_pointer_cast<const ConstructorNode>(*E);
      if (C->inputs.empty())
        return Value::adt(C, {});
      return Value::constructorFn(C);
    }
    case ExprKind::Tuple: {
      std::vector<Value> Fields;
      for (const Expr &Fe : N->as<TupleNode>()->fields)
        Fields.push_back(run(&Fe, F));
      return Value::tuple(std::move(Fields));
    }
    case ExprKind::TupleGetItem: {
      auto *G = N->as<TupleGetItemNode>();
      Value T = run(&G->tuple, F);
      if (!T.isTuple())
        fail("in {}: .{} of {}, which is not a tuple", *F->where, G->index,
             valueToString(T));
      if (G->index < 0 || (size_t)G->index >= T.fields().size())
        fail("in {}: tuple index {} out of range for a tuple of {} fields",
             *F->where, G->index, T.fields().size());
      return T.fields()[G->index];
    }
    case ExprKind::Let: {
      auto *L = N->as<LetNode>();
      Value V = L->value->kind == ExprKind::Function
                    ? makeClosure(L->value, *F, L->var)
                    : run(&L->value, F);
      F->locals[L->var.get()] = std::move(V);
      E = &L->body;
      continue;
    }
    case ExprKind::If: {
      auto *I = N->as<IfNode>();
      Value C = run(&I->cond, F);
      if (!C.isTensor())
        fail("in {}: if: the condition is {}, expected a scalar tensor",
             *F->where, valueToString(C));
      const Tensor &T = C.tensor();
      if (T.numel() != 1)
        fail("in {}: if: the condition must be a scalar tensor, got {}",
             *F->where, T.typeString());
      E = T.elementAsDouble(0) != 0 ? &I->thenBranch : &I->elseBranch;
      continue;
    }
    case ExprKind::Match: {
      auto *Mt = N->as<MatchNode>();
      Value D = run(&Mt->data, F);
      const Expr *Next = nullptr;
      for (const Clause &Cl : Mt->clauses)
        if (matchPattern(*Cl.lhs, D, *F)) {
          Next = &Cl.rhs;
          break;
        }
      if (!Next)
        fail("in {}: match: no clause matched value {}", *F->where,
             valueToString(D));
      E = Next;
      continue;
    }
    case ExprKind::Call: {
      auto *C = N->as<CallNode>();
      const ExprNode *Callee = C->callee.get();
      if (Callee->kind == ExprKind::Constructor) {
        auto Ctor = std::static_pointer_cast<const ConstructorNode>(C->callee);
        if (C->args.size() != Ctor->inputs.size())
          fail("in {}: constructor {} expects {} arguments, got {}", *F->where,
               Ctor->name, Ctor->inputs.size(), C->args.size());
        std::vector<Value> Fields;
        for (const Expr &A : C->args)
          Fields.push_back(run(&A, F));
        return Value::adt(std::move(Ctor), std::move(Fields));
      }
      std::vector<Value> Args;
      Args.reserve(C->args.size());
      if (Callee->kind == ExprKind::Op) {
        for (const Expr &A : C->args)
          Args.push_back(run(&A, F));
        Value R =
            callOperator(*C, *Callee->as<OpNode>()->info, std::move(Args), *F);
        if (Observer) [[unlikely]]
          Observer(*C, R);
        return R;
      }
      std::unique_ptr<Frame> Next;
      if (Callee->kind == ExprKind::GlobalVar) {
        const Global &G = global(Callee->as<GlobalVarNode>()->name, *F->where);
        for (const Expr &A : C->args)
          Args.push_back(run(&A, F));
        Next = enterGlobal(G, std::move(Args), *F->where);
      } else {
        Value Fn = run(&C->callee, F);
        for (const Expr &A : C->args)
          Args.push_back(run(&A, F));
        if (Fn.isConstructorFn()) {
          if (Args.size() != Fn.ctor()->inputs.size())
            fail("in {}: constructor {} expects {} arguments, got {}",
                 *F->where, Fn.ctor()->name, Fn.ctor()->inputs.size(),
                 Args.size());
          return Value::adt(Fn.ctor(), std::move(Args));
        }
        Next = enterClosure(Fn, std::move(Args), *F->where);
      }
      // A tail call: the callee's frame replaces ours; nothing of the old
      // frame is needed any more. Outside a function's body (an argument,
      // say) the call is nested: a new frame, as in the VM.
      if (!InFrame) {
        if (CallDepth >= Limits.maxCallDepth)
          fail("in {}: {}", *F->where, callDepthError(Limits.maxCallDepth));
        ++CallDepth;
        Count.Pushed = InFrame = true;
      }
      Own = std::move(Next);
      F = Own.get();
      E = F->body;
      continue;
    }
    }
    fail("in {}: unknown expression kind", *F->where);
  }
}

} // namespace rivet::ir
