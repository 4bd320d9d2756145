//===- ParallelOpCombiner.cc - Merge parallel anchors on one input --------===//
#include "ir/transforms/ParallelOpCombiner.h"

#include "ir/Op.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PatternUtil.h"
#include "kernels/Error.h"

#include <map>
#include <set>

namespace rivet::ir::pattern {
namespace {

/// One binding of a let chain; Orig is null for bindings this pass makes.
struct Link {
  Var V;
  Expr Value;
  const LetNode *Orig;
};

/// An elementwise op that follows a branch: unary, or binary with a
/// constant along the channel axis (Vec) at argument 1 - Pos.
struct Step {
  size_t Link;
  const CallNode *Call;
  size_t Pos;
  std::optional<Tensor> Vec;
};

struct Branch {
  size_t Anchor;          // link index of the anchor call
  int64_t Channels;       // its output channels
  std::vector<Step> Tail; // merged elementwise ops, in order
  ChannelAxes Axes;       // the anchor's (the weights' output axis is merged)
  size_t last() const { return Tail.empty() ? Anchor : Tail.back().Link; }
};

bool isChannelArith(std::string_view Op) {
  return Op == "add" || Op == "subtract" || Op == "multiply" || Op == "divide";
}

class Combiner : public NonPrimitiveMutator {
public:
  Combiner(const Expr &Fn, std::string_view Op, size_t Min)
      : D(Fn), Op(Op), MinBranches(Min) {}

  Expr visitLet(const LetNode &N, const Expr &Self) override {
    std::vector<Link> Links;
    bool Changed = false;
    const LetNode *Cur = &N;
    while (true) {
      Links.push_back({Cur->var, mutate(Cur->value), Cur});
      Changed |= Links.back().Value != Cur->value;
      if (!Cur->body || Cur->body->kind != ExprKind::Let)
        break;
      Cur = Cur->body->as<LetNode>();
    }
    Expr Body = mutate(Cur->body);
    Changed |= Body != Cur->body;
    Changed |= combineChain(Links);
    if (!Changed)
      return Self;
    for (size_t I = Links.size(); I-- > 0;)
      Body = let(Links[I].V, Links[I].Value, Body);
    return Body;
  }

private:
  /// A binding whose value is the original, type-checked expression.
  static const CallNode *typedCall(const Link &L) {
    if (!L.Orig || L.Value != L.Orig->value)
      return nullptr;
    return L.Value->as<CallNode>();
  }

  /// The rank and channel axis (of an anchor with axes A) of a result type,
  /// false when unknown.
  static bool channelAxis(const Expr &E, const ChannelAxes &A, size_t &Rank,
                          size_t &Axis) {
    const TensorTypeNode *T = rankedTensorType(E);
    std::optional<size_t> At = T ? A.channelOf(T->shape->size()) : std::nullopt;
    if (!At)
      return false;
    Rank = T->shape->size();
    Axis = *At;
    return true;
  }

  /// The channel axes of L's call when it is an anchor this pass can merge.
  std::optional<ChannelAxes> candidate(const Link &L) const {
    const CallNode *C = typedCall(L);
    if (!C || calledOpName(L.Value) != Op || C->args.size() < 2)
      return std::nullopt;
    if (D.constantOf(C->args[0]))
      return std::nullopt; // a constant input is FoldConstant's business
    const Tensor *W = D.constantOf(C->args[1]);
    if (!W)
      return std::nullopt;
    std::optional<ChannelAxes> A =
        C->callee->as<OpNode>()->info->channelAxes(C->attrs, (size_t)W->rank());
    // Where a data channel is not one slice of the weights (a grouped conv),
    // concatenated weights would mix the branches' groups.
    if (!A || A->weightInput < 0)
      return std::nullopt;
    if (C->args.size() > 2 && !D.constantOf(C->args[2]))
      return std::nullopt;
    size_t Rank = 0, Axis = 0;
    if (!channelAxis(L.Value, *A, Rank, Axis) ||
        constExtent(*rankedTensorType(L.Value), Axis) !=
            W->dim((int64_t)A->weightOutput))
      return std::nullopt;
    return A;
  }

  /// Anchors A and B (with weights' output axis WeightAxis) can share one
  /// call.
  bool compatible(const CallNode &A, const CallNode &B,
                  size_t WeightAxis) const {
    if (A.args[0] != B.args[0] || !(A.attrs == B.attrs) ||
        A.args.size() != B.args.size())
      return false;
    const Tensor &WA = *D.constantOf(A.args[1]), &WB = *D.constantOf(B.args[1]);
    if (WA.dtype() != WB.dtype() || WA.rank() != WB.rank())
      return false;
    for (int64_t I = 0; I < WA.rank(); ++I)
      if (I != (int64_t)WeightAxis && WA.dim(I) != WB.dim(I))
        return false;
    return rankedTensorType(A.args[0]) && rankedTensorType(B.args[0]);
  }

  /// The elementwise op that is the only consumer of branch Br's result.
  std::optional<Step> nextStep(const std::vector<Link> &Links,
                               const Branch &Br) const {
    const Link &Last = Links[Br.last()];
    if (D.uses(Last.V) != 1)
      return std::nullopt;
    auto It = DirectUse.find(Last.V.get());
    if (It == DirectUse.end())
      return std::nullopt;
    auto [J, Pos] = It->second;
    const CallNode *C = typedCall(Links[J]);
    const TensorTypeNode *In = rankedTensorType(Last.Value);
    if (!C || !In || !rankedTensorType(Links[J].Value))
      return std::nullopt;
    const OpInfo &Info = *C->callee->as<OpNode>()->info;
    if (C->args.size() == 1 && Info.pattern == FusionPattern::Elementwise)
      return Step{J, C, 0, std::nullopt};
    if (C->args.size() != 2 || !isChannelArith(Info.name))
      return std::nullopt;
    const Tensor *S = D.constantOf(C->args[1 - Pos]);
    size_t Rank = 0, Axis = 0;
    if (!S || S->dtype() != In->dtype ||
        !channelAxis(Last.Value, Br.Axes, Rank, Axis))
      return std::nullopt;
    std::optional<Tensor> Vec = channelVector(*S, Rank, Axis, Br.Channels);
    if (!Vec)
      return std::nullopt;
    return Step{J, C, Pos, std::move(Vec)};
  }

  /// Grows every branch by the elementwise ops they all have in common.
  void extend(const std::vector<Link> &Links, std::vector<Branch> &Group) {
    while (true) {
      std::vector<Step> Next;
      for (const Branch &Br : Group) {
        std::optional<Step> S = nextStep(Links, Br);
        if (!S)
          return;
        const Step &F = Next.empty() ? *S : Next.front();
        if (calledOpName(Links[S->Link].Value) !=
                calledOpName(Links[F.Link].Value) ||
            !(S->Call->attrs == F.Call->attrs) || S->Pos != F.Pos ||
            S->Vec.has_value() != F.Vec.has_value())
          return;
        Next.push_back(std::move(*S));
      }
      for (size_t I = 0; I < Group.size(); ++I)
        Group[I].Tail.push_back(std::move(Next[I]));
    }
  }

  /// Merges the groups of one let chain; true when something changed.
  bool combineChain(std::vector<Link> &Links) {
    DirectUse.clear();
    for (size_t J = 0; J < Links.size(); ++J)
      if (const CallNode *C = typedCall(Links[J]))
        if (C->callee->kind == ExprKind::Op)
          for (size_t P = 0; P < C->args.size(); ++P)
            if (C->args[P]->kind == ExprKind::Var)
              DirectUse[C->args[P]->as<VarNode>()] = {J, P};

    std::vector<std::vector<Branch>> Groups;
    for (size_t I = 0; I < Links.size(); ++I) {
      std::optional<ChannelAxes> A = candidate(Links[I]);
      if (!A)
        continue;
      const CallNode &C = *Links[I].Value->as<CallNode>();
      Branch Br{
          I, D.constantOf(C.args[1])->dim((int64_t)A->weightOutput), {}, *A};
      bool Placed = false;
      for (auto &G : Groups)
        if (compatible(*Links[G.front().Anchor].Value->as<CallNode>(), C,
                       A->weightOutput)) {
          G.push_back(Br);
          Placed = true;
          break;
        }
      if (!Placed)
        Groups.push_back({Br});
    }

    std::map<size_t, std::vector<Link>> Inserted; // before link index
    std::set<size_t> Removed;
    for (auto &G : Groups) {
      if (G.size() < MinBranches)
        continue;
      extend(Links, G);
      Inserted[G.front().Anchor] = merge(Links, G);
      for (const Branch &Br : G) {
        Removed.insert(Br.Anchor);
        for (const Step &S : Br.Tail)
          Removed.insert(S.Link);
      }
    }
    if (Inserted.empty())
      return false;
    std::vector<Link> Out;
    for (size_t I = 0; I < Links.size(); ++I) {
      if (auto It = Inserted.find(I); It != Inserted.end())
        for (Link &L : It->second)
          Out.push_back(std::move(L));
      if (!Removed.count(I))
        Out.push_back(std::move(Links[I]));
    }
    Links = std::move(Out);
    return true;
  }

  /// The bindings that replace a group: the merged anchor, the merged tail,
  /// and each branch's result as a slice of it.
  std::vector<Link> merge(const std::vector<Link> &Links,
                          const std::vector<Branch> &G) {
    const CallNode &A0 = *Links[G.front().Anchor].Value->as<CallNode>();
    const ChannelAxes &Axes = G.front().Axes;
    size_t Rank = 0, Axis = 0;
    channelAxis(Links[G.front().Anchor].Value, Axes, Rank, Axis);
    std::vector<Expr> Ws, Bs;
    for (const Branch &Br : G) {
      const CallNode &C = *Links[Br.Anchor].Value->as<CallNode>();
      Ws.push_back(D.resolve(C.args[1]));
      if (C.args.size() > 2)
        Bs.push_back(D.resolve(C.args[2]));
    }
    std::vector<Expr> Args{
        A0.args[0],
        callOp("concatenate", Ws, Attrs{{"axis", (int64_t)Axes.weightOutput}})};
    if (!Bs.empty())
      Args.push_back(callOp("concatenate", Bs, Attrs{{"axis", int64_t(0)}}));
    std::vector<Link> Out;
    Var Merged = var("combined");
    Out.push_back(
        {Merged, call(A0.callee, std::move(Args), A0.attrs), nullptr});
    for (size_t Depth = 0; Depth < G.front().Tail.size(); ++Depth) {
      const Step &S0 = G.front().Tail[Depth];
      std::vector<Expr> StepArgs(S0.Call->args.size());
      StepArgs[S0.Pos] = Merged;
      if (S0.Vec) {
        std::vector<Tensor> Parts;
        for (const Branch &Br : G)
          Parts.push_back(*Br.Tail[Depth].Vec);
        StepArgs[1 - S0.Pos] =
            constant(alongAxis(concatVectors(Parts), Rank, Axis));
      }
      Merged = var("combined");
      Out.push_back({Merged,
                     call(S0.Call->callee, std::move(StepArgs), S0.Call->attrs),
                     nullptr});
    }
    int64_t Offset = 0;
    for (const Branch &Br : G) {
      Attrs Slice{{"begin", std::vector<int64_t>{Offset}},
                  {"end", std::vector<int64_t>{Offset + Br.Channels}},
                  {"axes", std::vector<int64_t>{(int64_t)Axis}}};
      Offset += Br.Channels;
      Out.push_back({Links[Br.last()].V,
                     callOp("strided_slice", {Merged}, std::move(Slice)),
                     nullptr});
    }
    return Out;
  }

  Dataflow D;
  std::string Op;
  size_t MinBranches;
  /// A variable -> the binding of the chain whose op call reads it directly
  /// (link index, argument position).
  std::unordered_map<const VarNode *, std::pair<size_t, size_t>> DirectUse;
};

} // namespace

void combineParallelOps(Module &M, std::string_view Op, size_t MinBranches) {
  RIVET_CHECK(OpRegistry::global().get(Op).channelAxes,
              "combineParallelOps: '{}' is no weighted anchor", Op);
  RIVET_CHECK(MinBranches >= 2, "combineParallelOps: at least 2 branches");
  transformFunctions(M, [&](const Expr &Fn) {
    if (isPrimitiveFunction(Fn))
      return Fn;
    return Combiner(Fn, Op, MinBranches).mutate(Fn);
  });
}

} // namespace rivet::ir::pattern
