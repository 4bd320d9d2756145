//===- FuseOps.cc - Operator fusion over post-dominator trees -------------===//
//
// TVM's FuseOps (relay/transforms/fuse_ops.cc) on Rivet's IR. Each scope (a
// function body, an if branch, a match clause: the let chain and the
// expressions in it) gets a dataflow graph whose nodes are its operator
// calls; a let-bound variable is an edge from its operator to every operator
// that uses it. Anything else that uses an operator's result (a tuple, a call
// of a function or closure, an if, a nested function, the scope's result)
// pins that operator as the output of its group, so nothing fuses across
// control flow or non-operator calls. Groups form along the post-dominator
// tree, in TVM's phases:
//   0. an out-elementwise-fusable anchor (conv, dense, matmul, gemm, pool)
//      takes its post-dominator when the path there is elementwise from the
//      anchor and every operator on it is elementwise or broadcast;
//   1. elementwise and broadcast operators join a post-dominator reached
//      through injective operators (into an injective, reduction or anchored
//      group), and injective operators join an injective post-dominator.
//      A reduction never joins its consumers.
// (TVM's third phase fuses injective operators into the fields of tuples
// that feed a concatenation; Rivet's concatenate takes its tensors as
// operands, so phase 1 already covers it.) A group holds at most
// FuseOptions::maxGroupSize operator calls.
//
// Every group, a single operator included, becomes a call of a function
// literal with Primitive=1 at the position of its output:
//   let %y = fn (%p0: T0, %p1: T1, Primitive=1) { let ...; ... }(%a, %b);
// Parameters take the inferred types of their arguments (symbolic dims
// kept). Constants of at most one element stay in the body; larger ones
// (weights) are parameters, as in TVM, so a compiled group does not embed
// them and groups that differ only in weights share one kernel.
//
//===----------------------------------------------------------------------===//
#include "ir/transforms/FuseOps.h"

#include "ir/Op.h"
#include "ir/Origin.h"
#include "ir/Visitor.h"
#include "ir/transforms/DominatorTree.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"
#include "kernels/Error.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace rivet::ir {

namespace {

FusionPattern combine(FusionPattern A, FusionPattern B) {
  return std::max(A, B);
}

/// A call of an operator on tensors that returns tensors: a node of the
/// dataflow graph. List operators stay plain calls.
bool isGraphCall(const Expr &E) {
  const auto *C = E->as<CallNode>();
  const auto *O = C ? C->callee->as<OpNode>() : nullptr;
  if (!O || O->info->listArgument || O->info->listResult || !E->checkedType)
    return false;
  for (const Expr &A : C->args)
    if (!tensorTypeOf(A))
      return false;
  if (E->checkedType->as<TensorTypeNode>())
    return true;
  const auto *Tup = E->checkedType->as<TupleTypeNode>();
  return Tup &&
         std::all_of(Tup->fields.begin(), Tup->fields.end(), [](const Type &T) {
           return T && T->as<TensorTypeNode>();
         });
}

bool isSmallConstant(const Expr &E) {
  const auto *C = E->as<ConstantNode>();
  return C && C->value.numel() <= 1;
}

/// Gives a rebuilt node the type of the node it replaces (fusion keeps every
/// type), so later decisions in this pass can read it.
Expr withTypeOf(Expr New, const Expr &Old) {
  if (New != Old && !New->checkedType)
    New->checkedType = Old->checkedType;
  return New;
}

/// E (a call, tuple or tuple projection) with its operands mapped by F;
/// E itself when none changes or for any other kind.
template <typename MapFn> Expr withOperands(const Expr &E, MapFn &&F) {
  switch (E->kind) {
  case ExprKind::Call: {
    const auto &C = *E->as<CallNode>();
    Expr Callee = F(C.callee);
    std::vector<Expr> Args;
    bool Changed = Callee != C.callee;
    for (const Expr &A : C.args) {
      Args.push_back(F(A));
      Changed |= Args.back() != A;
    }
    if (!Changed)
      return E;
    OriginScope Scope(C);
    Expr R = call(Callee, std::move(Args), C.attrs);
    return C.covers.empty() ? R : withCovers(R, C.covers);
  }
  case ExprKind::Tuple: {
    std::vector<Expr> Fields;
    bool Changed = false;
    for (const Expr &Field : E->as<TupleNode>()->fields) {
      Fields.push_back(F(Field));
      Changed |= Fields.back() != Field;
    }
    return Changed ? tuple(std::move(Fields)) : E;
  }
  case ExprKind::TupleGetItem: {
    const auto &T = *E->as<TupleGetItemNode>();
    Expr Tup = F(T.tuple);
    return Tup != T.tuple ? tupleGetItem(Tup, T.index) : E;
  }
  default: return E;
  }
}

/// One operator call of a scope.
struct DataflowNode {
  Expr call;
  FusionPattern pattern = FusionPattern::Opaque;
  /// The let variable bound to the call, if any.
  Var boundVar;
  /// Consumers in this graph, with the pattern of the edge.
  std::vector<std::pair<size_t, FusionPattern>> outputs;
  /// Used by something that is not an operator call of this scope.
  bool externRef = false;
};

/// A set of nodes being fused: a union-find forest whose roots hold the
/// group's pattern, whether it has an anchor, and its size.
struct Group {
  size_t parent;
  FusionPattern pattern;
  bool anchored;
  size_t size = 1;
};

/// Fuses one scope: its let chain (values already rewritten below the
/// surface) and its final expression.
class ScopeFusion {
public:
  ScopeFusion(const FuseOptions &Opts, std::vector<std::pair<Var, Expr>> Links,
              Expr Body)
      : Opts(Opts), Links(std::move(Links)), Body(std::move(Body)) {}

  Expr run() {
    buildGraph();
    partition();
    return emitScope();
  }

private:
  //===--- The dataflow graph ---------------------------------------------===//

  void buildGraph() {
    for (auto &[V, Value] : Links) {
      std::optional<size_t> N = addExpr(Value);
      if (!N)
        continue;
      DataflowNode &Node = Nodes[*N];
      if (Node.call == Value && !Node.boundVar) {
        Node.boundVar = V;
        NodeOfVar[V.get()] = *N;
      } else {
        Node.externRef = true; // an alias: let %b = %a
      }
    }
    markExtern(Body);
  }

  /// Adds the operator calls of E (on this scope's surface) to the graph;
  /// returns the node E evaluates to, if it is one.
  std::optional<size_t> addExpr(const Expr &E) {
    if (auto It = NodeOfCall.find(E.get()); It != NodeOfCall.end())
      return It->second;
    if (const auto *V = E->as<VarNode>()) {
      auto It = NodeOfVar.find(V);
      return It == NodeOfVar.end() ? std::nullopt
                                   : std::optional<size_t>(It->second);
    }
    if (isGraphCall(E))
      return addCall(E);
    if (!Walked.insert(E.get()).second)
      return std::nullopt;
    switch (E->kind) {
    case ExprKind::Call: {
      const auto &C = *E->as<CallNode>();
      markExtern(C.callee);
      for (const Expr &A : C.args)
        markExtern(A);
      break;
    }
    case ExprKind::Tuple:
      for (const Expr &F : E->as<TupleNode>()->fields)
        markExtern(F);
      break;
    case ExprKind::TupleGetItem:
      markExtern(E->as<TupleGetItemNode>()->tuple);
      break;
    case ExprKind::If: {
      const auto &I = *E->as<IfNode>();
      markExtern(I.cond);
      markFreeVarsExtern(I.thenBranch);
      markFreeVarsExtern(I.elseBranch);
      break;
    }
    case ExprKind::Match: {
      const auto &Mt = *E->as<MatchNode>();
      markExtern(Mt.data);
      for (const Clause &C : Mt.clauses)
        markFreeVarsExtern(C.rhs);
      break;
    }
    case ExprKind::Function:
    case ExprKind::Let: markFreeVarsExtern(E); break;
    default: break;
    }
    return std::nullopt;
  }

  size_t addCall(const Expr &E) {
    const auto &C = *E->as<CallNode>();
    std::vector<std::optional<size_t>> ArgNodes;
    for (const Expr &A : C.args)
      ArgNodes.push_back(addExpr(A));
    size_t Index = Nodes.size();
    DataflowNode Node;
    Node.call = E;
    TensorTypeRef Out = tensorTypeOf(E);
    Node.pattern =
        Out ? C.callee->as<OpNode>()->info->pattern : FusionPattern::Opaque;
    if (Node.pattern == FusionPattern::Tuple)
      Node.pattern = FusionPattern::Opaque;
    Nodes.push_back(std::move(Node));
    for (size_t I = 0; I < C.args.size(); ++I) {
      if (!ArgNodes[I])
        continue;
      // A broadcast whose operand already has the output's shape is
      // elementwise along that edge (what lets conv + bias add fuse).
      FusionPattern Edge = Nodes[Index].pattern;
      if (Edge == FusionPattern::Broadcast &&
          (sameKnownShape(tensorTypeOf(C.args[I]), Out) ||
           broadcastsInto(C.args, I)))
        Edge = FusionPattern::Elementwise;
      Nodes[*ArgNodes[I]].outputs.push_back({Index, Edge});
    }
    NodeOfCall[E.get()] = Index;
    return Index;
  }

  void markExtern(const Expr &E) {
    if (std::optional<size_t> N = addExpr(E))
      Nodes[*N].externRef = true;
  }

  /// A nested scope (function, branch, clause) is a boundary: whatever of
  /// this scope it refers to is an output of its group.
  void markFreeVarsExtern(const Expr &Nested) {
    for (const Var &V : freeVars(Nested))
      if (auto It = NodeOfVar.find(V.get()); It != NodeOfVar.end())
        Nodes[It->second].externRef = true;
  }

  //===--- Partitioning ---------------------------------------------------===//

  size_t find(size_t N) {
    size_t Root = N;
    while (Groups[Root].parent != Root)
      Root = Groups[Root].parent;
    while (Groups[N].parent != Root) {
      size_t Next = Groups[N].parent;
      Groups[N].parent = Root;
      N = Next;
    }
    return Root;
  }

  void merge(size_t Child, size_t Parent) {
    Child = find(Child);
    Parent = find(Parent);
    if (Child == Parent)
      return;
    Groups[Child].parent = Parent;
    Groups[Parent].size += Groups[Child].size;
    if (Groups[Child].anchored) {
      Groups[Parent].anchored = true;
      Groups[Parent].pattern =
          combine(Groups[Child].pattern, Groups[Parent].pattern);
    }
  }

  /// Calls F on every node on a path from Src (excluded) to Sink
  /// (included, not walked past); stops early when F returns false.
  bool forEachOnPaths(size_t Src, size_t Sink,
                      const std::function<bool(size_t)> &F) {
    // A fresh stamp per walk: no O(nodes) clearing for each of the nodes.
    if (SeenStamp.size() != Nodes.size())
      SeenStamp.assign(Nodes.size(), 0);
    uint64_t Stamp = ++WalkCount;
    std::vector<size_t> Stack;
    for (auto &[V, _] : Nodes[Src].outputs)
      Stack.push_back(V);
    while (!Stack.empty()) {
      size_t V = Stack.back();
      Stack.pop_back();
      if (SeenStamp[V] == Stamp)
        continue;
      SeenStamp[V] = Stamp;
      if (!F(V))
        return false;
      if (V == Sink)
        continue;
      for (auto &[W, _] : Nodes[V].outputs)
        Stack.push_back(W);
    }
    return true;
  }

  /// Every group on the paths from Src to Sink satisfies
  /// Cond(pattern, isSink).
  bool checkPath(size_t Src, size_t Sink,
                 const std::function<bool(FusionPattern, bool)> &Cond) {
    return forEachOnPaths(Src, Sink, [&](size_t V) {
      return Cond(Groups[find(V)].pattern, V == Sink);
    });
  }

  /// Merges Src and everything between it and Sink into Sink's group.
  void commitFuse(size_t Src, size_t Sink) {
    merge(Src, Sink);
    forEachOnPaths(Src, Sink, [&](size_t V) {
      merge(V, Sink);
      return true;
    });
  }

  /// The size of Sink's group after fusing the paths from Src into it.
  size_t fusedSize(size_t Src, size_t Sink) {
    size_t Target = find(Sink);
    std::unordered_set<size_t> Counted{Target};
    size_t Size = Groups[Target].size;
    auto Count = [&](size_t V) {
      size_t R = find(V);
      if (Counted.insert(R).second)
        Size += Groups[R].size;
      return true;
    };
    Count(Src);
    forEachOnPaths(Src, Sink, Count);
    return Size;
  }

  void partition() {
    size_t N = Nodes.size();
    std::vector<std::vector<size_t>> Succ(N);
    std::vector<bool> Leaves(N);
    for (size_t I = 0; I < N; ++I) {
      for (auto &[V, _] : Nodes[I].outputs)
        Succ[I].push_back(V);
      Leaves[I] = Nodes[I].externRef;
    }
    PostDom = immediatePostDominators(Succ, Leaves);

    // The pattern of the relation between a node and its post-dominator:
    // the most general edge on any path between them (TVM's LCA walk).
    DomPattern.assign(N, FusionPattern::Opaque);
    for (size_t U = N; U-- > 0;) {
      if (PostDom[U] < 0)
        continue;
      FusionPattern P = FusionPattern::Elementwise;
      for (auto &[V, Edge] : Nodes[U].outputs) {
        P = combine(P, Edge);
        for (int64_t W = (int64_t)V; W >= 0 && W != PostDom[U]; W = PostDom[W])
          P = combine(P, DomPattern[W]);
      }
      DomPattern[U] = P;
    }

    Groups.clear();
    for (size_t I = 0; I < N; ++I)
      Groups.push_back(
          Group{I, Nodes[I].pattern,
                Nodes[I].pattern == FusionPattern::OutElementwiseFusable});
    for (int Phase = 0; Phase < 2; ++Phase)
      for (size_t I = 0; I < N; ++I)
        tryFuse(I, Phase);
  }

  void tryFuse(size_t I, int Phase) {
    using FP = FusionPattern;
    // The node's own group entry: a root carries its group's pattern.
    FP Pattern = Groups[I].pattern;
    if (Pattern == FP::Opaque || PostDom[I] < 0)
      return;
    size_t Parent = (size_t)PostDom[I];
    if (find(I) == find(Parent))
      return;
    if (fusedSize(I, Parent) > Opts.maxGroupSize)
      return;
    if (Pattern == FP::OutElementwiseFusable) {
      // Anchors take their elementwise tails first, before injective
      // operators could claim those tails.
      if (Phase != 0 || DomPattern[I] != FP::Elementwise)
        return;
      if (checkPath(I, Parent, [](FP K, bool) { return K <= FP::Broadcast; }))
        commitFuse(I, Parent);
    } else if (Pattern <= FP::Broadcast) {
      if (!(DomPattern[I] <= FP::Injective || DomPattern[I] == FP::CommReduce))
        return;
      auto Cond = [](FP K, bool IsSink) {
        if (!IsSink)
          return K <= FP::Injective;
        return K <= FP::CommReduce || K == FP::OutElementwiseFusable;
      };
      if (checkPath(I, Parent, Cond))
        commitFuse(I, Parent);
    } else if (Pattern == FP::Injective) {
      if (Phase != 1)
        return;
      if (checkPath(I, Parent, [](FP K, bool) { return K <= FP::Injective; }))
        commitFuse(I, Parent);
    }
    // A reduction does not fuse into its consumers.
  }

  //===--- Rewriting ------------------------------------------------------===//

  Expr emitScope() {
    for (size_t I = 0; I < Nodes.size(); ++I)
      Members[find(I)].push_back(I);
    std::vector<std::pair<Var, Expr>> Out;
    for (auto &[V, Value] : Links) {
      auto It = NodeOfCall.find(Value.get());
      if (It != NodeOfCall.end() && Nodes[It->second].boundVar == V) {
        // A member's binding moves into its group's function.
        if (find(It->second) == It->second)
          Out.push_back({V, groupCall(It->second)});
        continue;
      }
      Out.push_back({V, emit(Value)});
    }
    Expr Result = emit(Body);
    for (size_t I = Out.size(); I-- > 0;)
      Result = let(Out[I].first, Out[I].second, Result);
    return Result;
  }

  /// E with every group output replaced by its group's call.
  Expr emit(const Expr &E) {
    if (auto It = Emitted.find(E.get()); It != Emitted.end())
      return It->second;
    Expr R = E;
    if (auto It = NodeOfCall.find(E.get()); It != NodeOfCall.end()) {
      RIVET_CHECK(find(It->second) == It->second,
                  "FuseOps: an operator inside a group is used outside it");
      R = groupCall(It->second);
    } else {
      switch (E->kind) {
      case ExprKind::Call:
      case ExprKind::Tuple:
      case ExprKind::TupleGetItem:
        R = withOperands(E, [this](const Expr &X) { return emit(X); });
        break;
      case ExprKind::If: {
        const auto &I = *E->as<IfNode>();
        Expr Cond = emit(I.cond);
        if (Cond != I.cond)
          R = ifThenElse(Cond, I.thenBranch, I.elseBranch);
        break;
      }
      case ExprKind::Match: {
        const auto &Mt = *E->as<MatchNode>();
        Expr Data = emit(Mt.data);
        if (Data != Mt.data)
          R = match(Data, Mt.clauses);
        break;
      }
      default: break; // leaves and nested scopes (already fused)
      }
    }
    R = withTypeOf(R, E);
    Emitted[E.get()] = R;
    return R;
  }

  /// The call of the primitive function that computes Root's group.
  Expr groupCall(size_t Root) {
    if (auto It = GroupCalls.find(Root); It != GroupCalls.end())
      return It->second;
    const std::vector<size_t> &InGroup = Members.at(Root);
    RIVET_CHECK(InGroup.back() == Root,
                "FuseOps: a group's output is not its last operator");
    std::vector<Var> Params;
    std::vector<Expr> Args;
    std::unordered_map<const ExprNode *, Var> ParamOf;
    std::unordered_map<size_t, Expr> Ref;
    auto Input = [&](const Expr &A) -> Expr {
      std::optional<size_t> K;
      if (auto It = NodeOfCall.find(A.get()); It != NodeOfCall.end())
        K = It->second;
      else if (const auto *V = A->as<VarNode>())
        if (auto It = NodeOfVar.find(V); It != NodeOfVar.end())
          K = It->second;
      if (K && find(*K) == Root)
        return Ref.at(*K);
      if (isSmallConstant(A))
        return A;
      if (auto It = ParamOf.find(A.get()); It != ParamOf.end())
        return It->second;
      RIVET_CHECK(A->checkedType, "FuseOps: an operand has no inferred type");
      Var P = var("p" + std::to_string(Params.size()), A->checkedType);
      Params.push_back(P);
      Args.push_back(emit(A));
      ParamOf[A.get()] = P;
      return P;
    };
    std::vector<std::pair<Var, Expr>> Bindings;
    Expr Result;
    for (size_t M : InGroup) {
      const DataflowNode &Node = Nodes[M];
      const auto &C = *Node.call->as<CallNode>();
      std::vector<Expr> NewArgs;
      for (const Expr &A : C.args)
        NewArgs.push_back(Input(A));
      OriginScope Scope(C);
      Expr NewCall =
          withTypeOf(call(C.callee, std::move(NewArgs), C.attrs), Node.call);
      if (M == Root) {
        Result = NewCall;
      } else if (Node.boundVar || Node.outputs.size() > 1) {
        // Let-bound in the source, or used twice inside the group.
        Var V = Node.boundVar ? Node.boundVar : var("x");
        Bindings.push_back({V, NewCall});
        Ref[M] = V;
      } else {
        Ref[M] = NewCall;
      }
    }
    for (size_t I = Bindings.size(); I-- > 0;)
      Result = let(Bindings[I].first, Bindings[I].second, Result);
    Attrs FnAttrs;
    FnAttrs.set(kPrimitiveAttr, int64_t(1));
    Expr Fn = function(std::move(Params), Result, nullptr, {}, FnAttrs);
    // The group's call comes from its root (its body keeps every origin).
    OriginScope Scope(originOf(Nodes[Root].call));
    Expr Call = withTypeOf(call(Fn, std::move(Args)), Nodes[Root].call);
    GroupCalls[Root] = Call;
    return Call;
  }

  const FuseOptions &Opts;
  std::vector<std::pair<Var, Expr>> Links;
  Expr Body;

  std::vector<DataflowNode> Nodes;
  std::unordered_map<const ExprNode *, size_t> NodeOfCall;
  std::unordered_map<const VarNode *, size_t> NodeOfVar;
  std::unordered_set<const ExprNode *> Walked;

  std::vector<int64_t> PostDom;
  std::vector<FusionPattern> DomPattern;
  std::vector<Group> Groups;
  std::vector<uint64_t> SeenStamp;
  uint64_t WalkCount = 0;

  std::unordered_map<size_t, std::vector<size_t>> Members;
  std::unordered_map<size_t, Expr> GroupCalls;
  std::unordered_map<const ExprNode *, Expr> Emitted;
};

/// Walks a function's scopes: each scope's nested scopes are fused first
/// (they are boundaries of its graph), then the scope itself.
class FunctionFuser {
public:
  explicit FunctionFuser(const FuseOptions &Opts) : Opts(Opts) {}

  /// Fuses the body of a function (primitive functions stay as they are).
  Expr fuseFunction(const Expr &E) {
    if (isPrimitiveFunction(E))
      return E;
    const auto &F = *E->as<FunctionNode>();
    Expr Body = scope(F.body);
    if (Body == F.body)
      return E;
    return withTypeOf(
        function(F.params, Body, F.retType, F.typeParams, F.attrs), E);
  }

private:
  Expr scope(const Expr &E) {
    std::vector<std::pair<Var, Expr>> Links;
    Expr Cur = E;
    while (const auto *L = Cur->as<LetNode>()) {
      Links.push_back({L->var, surface(L->value)});
      Cur = L->body;
    }
    Expr Body = surface(Cur);
    return withTypeOf(ScopeFusion(Opts, std::move(Links), Body).run(), E);
  }

  /// E with the nested scopes below its surface fused (memoized).
  Expr surface(const Expr &E) {
    if (auto It = Memo.find(E.get()); It != Memo.end())
      return It->second;
    Expr R = E;
    switch (E->kind) {
    case ExprKind::Function: R = fuseFunction(E); break;
    case ExprKind::Let: R = scope(E); break;
    case ExprKind::If: {
      const auto &I = *E->as<IfNode>();
      R = ifThenElse(surface(I.cond), scope(I.thenBranch), scope(I.elseBranch));
      break;
    }
    case ExprKind::Match: {
      const auto &Mt = *E->as<MatchNode>();
      std::vector<Clause> Clauses;
      for (const Clause &C : Mt.clauses)
        Clauses.push_back({C.lhs, scope(C.rhs)});
      R = match(surface(Mt.data), std::move(Clauses));
      break;
    }
    case ExprKind::Call:
    case ExprKind::Tuple:
    case ExprKind::TupleGetItem:
      R = withOperands(E, [this](const Expr &X) { return surface(X); });
      break;
    default: break;
    }
    R = withTypeOf(R, E);
    Memo[E.get()] = R;
    return R;
  }

  const FuseOptions &Opts;
  std::unordered_map<const ExprNode *, Expr> Memo;
};

/// Groups operator calls into Primitive functions by fusion pattern along
/// post-dominator trees (TVM's FuseOps); runs last, on the final graph.
void fuseOpsPass(Module &M, const PassContext &) { fuseOps(M); }

} // namespace

void fuseOps(Module &M, const FuseOptions &Opts) {
  RIVET_CHECK(Opts.maxGroupSize >= 1, "FuseOps: the maximum group size is 0");
  transformFunctions(
      M, [&](const Expr &Fn) { return FunctionFuser(Opts).fuseFunction(Fn); });
}

RIVET_REGISTER_PASS("FuseOps", 1,
                    "Fuses operator chains into Primitive functions along the "
                    "post-dominator tree (TVM's FuseOps).",
                    fuseOpsPass);

} // namespace rivet::ir
