//===- FoldScaleAxis.cc - Fold per-channel scales into weights ------------===//
//
// TVM's FoldScaleAxis on the weighted anchors (OpInfo::channelAxes: conv,
// dense, matmul with 2-D weights, gemm), with constant scales:
//  - backward: anchor(x, W[, b]) * s, s constant along the output channel
//    (shape (C, 1, 1), (1, C, 1, 1), a scalar, ...) becomes
//    anchor(x, W * s', b * s) with s' shaped along W's output axis;
//  - bias: conv(x, W[, b]) + t (an anchor with a channel bias), t constant
//    along the output channel, becomes conv(x, W, b + t) (t alone when there
//    was no bias). With the backward rule, SimplifyInference's batch norm
//    (x * scale + shift) folds entirely.
//  - forward: anchor(x * s, W, ...) with s constant along x's input channel
//    (the last axis for dense/matmul, axis 1 for conv with group 1) becomes
//    anchor(x, W * s', ...): the product is linear in x, and conv's zero
//    padding stays zero after the scale. Only where a data channel is one
//    slice of W (not gemm, not a grouped conv).
// A rewritten producer must have no other consumer. The scaled weights are
// multiply(W, constant) expressions for the next FoldConstant to evaluate.
// Fused primitive functions are left alone.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PatternUtil.h"

namespace rivet::ir {
namespace {

using namespace pattern;

/// The channel axes of a weighted anchor's call (OpInfo::channelAxes); its
/// weights' rank must be known. Nullopt for any other call.
std::optional<ChannelAxes> channelAxesOf(const CallNode &Call) {
  const auto *Op = Call.callee->as<OpNode>();
  if (!Op || !Op->info->channelAxes || Call.args.size() < 2)
    return std::nullopt;
  const TensorTypeNode *W = rankedTensorType(Call.args[1]);
  if (!W)
    return std::nullopt;
  return Op->info->channelAxes(Call.attrs, W->shape->size());
}

/// A call of a weighted anchor (whatever its weights).
bool isAnchor(const Expr &E) {
  const auto *C = E->as<CallNode>();
  const auto *Op = C ? C->callee->as<OpNode>() : nullptr;
  return Op && Op->info->channelAxes;
}

class ScaleFolder : public NonPrimitiveMutator {
public:
  explicit ScaleFolder(const Expr &Fn) : D(Fn) {}

  std::unordered_set<const VarNode *> Dead;

  Expr visitCall(const CallNode &N, const Expr &Self) override {
    Expr New = ExprMutator::visitCall(N, Self);
    std::string_view Op = calledOpName(Self);
    Expr Folded;
    if (Op == "multiply")
      Folded = foldBackward(N);
    else if (Op == "add")
      Folded = foldBias(N);
    else if (isAnchor(Self))
      Folded = foldForward(N, New);
    return Folded ? Folded : New;
  }

private:
  /// An anchor reached from a consumer's argument, rewritten so far.
  struct Producer {
    Expr Call;                 // the rewritten anchor call
    const CallNode *Typed;     // an equivalent original call (checked types)
    std::vector<Var> Consumed; // let variables the consumer absorbs
  };

  /// The anchor (op in Ops) that argument Arg of a consumer resolves to,
  /// when the consumer is its only user.
  std::optional<Producer> producerOf(const Expr &Arg) {
    const Expr *P = D.resolveSingleUse(Arg);
    if (!P)
      return std::nullopt;
    Expr NewP = mutate(*P);
    if (!isAnchor(NewP))
      return std::nullopt;
    std::string_view Op = calledOpName(NewP);
    const CallNode *Typed = nullptr;
    if (auto It = TypeSource.find(NewP.get()); It != TypeSource.end())
      Typed = It->second;
    else if (calledOpName(*P) == Op)
      Typed = (*P)->as<CallNode>();
    if (!Typed)
      return std::nullopt;
    Producer R{NewP, Typed, {}};
    for (const Expr *Cur = &Arg; (*Cur)->kind == ExprKind::Var;) {
      R.Consumed.push_back(std::static_pointer_cast<const VarNode>(*Cur));
      const Expr &Next = D.resolve(*Cur);
      if (Next == *Cur)
        break;
      Cur = &Next;
      if ((*Cur)->kind != ExprKind::Var)
        break;
    }
    return R;
  }

  /// The output channel axis and extent of an anchor; false when they are
  /// not known (or a matmul's weight is not a matrix).
  static bool outputChannel(const CallNode &Typed, size_t &Axis, int64_t &L) {
    const auto *Out =
        Typed.checkedType ? Typed.checkedType->as<TensorTypeNode>() : nullptr;
    if (!Out || !Out->hasKnownRank() || Out->shape->empty())
      return false;
    std::optional<ChannelAxes> A = channelAxesOf(Typed);
    std::optional<size_t> At =
        A ? A->channelOf(Out->shape->size()) : std::nullopt;
    if (!At)
      return false;
    Axis = *At;
    L = constExtent(*Out, Axis);
    return L > 0;
  }

  /// Anchor Call with every output channel c scaled by V[c].
  Expr scaleOutput(const Producer &P, const Tensor &V) {
    const auto &C = *P.Call->as<CallNode>();
    std::vector<Expr> Args = C.args;
    size_t WRank = rankedTensorType(P.Typed->args[1])->shape->size();
    size_t WAxis = channelAxesOf(*P.Typed)->weightOutput;
    Args[1] =
        callOp("multiply", {Args[1], constant(alongAxis(V, WRank, WAxis))});
    if (Args.size() > 2) // conv's bias or gemm's c: both scale with the output
      Args[2] = callOp("multiply", {Args[2], constant(V)});
    Expr R = call(C.callee, std::move(Args), C.attrs);
    TypeSource[R.get()] = P.Typed;
    return R;
  }

  void consume(const Producer &P) {
    for (const Var &V : P.Consumed)
      Dead.insert(V.get());
  }

  /// A producer and a per-channel constant: the operands of `p . c`.
  struct ChannelOperands {
    Producer P;
    Tensor Vector; // c as a vector along P's output channel
  };

  /// The operands of a binary call `p . c` (either order) whose constant c
  /// broadcasts along the output channel of the anchor p (one with a channel
  /// bias, when BiasOnly).
  std::optional<ChannelOperands> channelOperands(const CallNode &N,
                                                 bool BiasOnly) {
    if (N.args.size() != 2)
      return std::nullopt;
    for (size_t I = 0; I < 2; ++I) {
      const Tensor *C = D.constantOf(N.args[1 - I]);
      if (!C)
        continue;
      std::optional<Producer> P = producerOf(N.args[I]);
      if (!P)
        continue;
      if (BiasOnly) {
        std::optional<ChannelAxes> A = channelAxesOf(*P->Typed);
        if (!A || !A->channelBias)
          continue;
      }
      size_t Axis = 0;
      int64_t L = 0;
      if (!outputChannel(*P->Typed, Axis, L))
        continue;
      const auto &Out = *P->Typed->checkedType->as<TensorTypeNode>();
      if (C->dtype() != Out.dtype)
        continue;
      std::optional<Tensor> V = channelVector(*C, Out.shape->size(), Axis, L);
      if (!V)
        continue;
      return ChannelOperands{std::move(*P), std::move(*V)};
    }
    return std::nullopt;
  }

  /// anchor(...) * s  ->  anchor with scaled weights.
  Expr foldBackward(const CallNode &N) {
    std::optional<ChannelOperands> O = channelOperands(N, false);
    if (!O)
      return nullptr;
    consume(O->P);
    return scaleOutput(O->P, O->Vector);
  }

  /// conv(x, W[, b]) + t  ->  conv(x, W, b + t), for an anchor with a
  /// channel bias.
  Expr foldBias(const CallNode &N) {
    std::optional<ChannelOperands> O = channelOperands(N, true);
    if (!O)
      return nullptr;
    consume(O->P);
    const auto &C = *O->P.Call->as<CallNode>();
    std::vector<Expr> Args = C.args;
    if (Args.size() > 2)
      Args[2] = callOp("add", {Args[2], constant(O->Vector)});
    else
      Args.push_back(constant(O->Vector));
    Expr R = call(C.callee, std::move(Args), C.attrs);
    TypeSource[R.get()] = O->P.Typed;
    return R;
  }

  /// anchor(x * s, W, ...)  ->  anchor(x, W scaled along its input axis).
  Expr foldForward(const CallNode &N, const Expr &New) {
    std::optional<ChannelAxes> A = channelAxesOf(N);
    if (!A || A->weightInput < 0)
      return nullptr;
    const TensorTypeNode *W = rankedTensorType(N.args[1]);
    const Expr *P = D.resolveSingleUse(N.args[0]);
    if (!P || calledOpName(*P) != "multiply")
      return nullptr;
    Expr NewMul = mutate(*P);
    if (calledOpName(NewMul) != "multiply")
      return nullptr;
    const auto &Mul = *(*P)->as<CallNode>();
    for (size_t I = 0; I < 2; ++I) {
      const Tensor *S = D.constantOf(Mul.args[1 - I]);
      const TensorTypeNode *X = rankedTensorType(Mul.args[I]);
      if (!S || !X || X->shape->empty() || S->dtype() != X->dtype)
        continue;
      std::optional<size_t> Axis = A->channelOf(X->shape->size());
      if (!Axis)
        continue;
      int64_t L = constExtent(*X, *Axis);
      std::optional<Tensor> V = channelVector(*S, X->shape->size(), *Axis, L);
      if (!V)
        continue;
      size_t WAxis = (size_t)A->weightInput;
      std::vector<Expr> Args = New->as<CallNode>()->args;
      Args[0] = NewMul->as<CallNode>()->args[I];
      Args[1] =
          callOp("multiply",
                 {Args[1], constant(alongAxis(*V, W->shape->size(), WAxis))});
      for (const Expr *Cur = &N.args[0]; (*Cur)->kind == ExprKind::Var;) {
        Dead.insert((*Cur)->as<VarNode>());
        const Expr &Next = D.resolve(*Cur);
        if (Next == *Cur || Next->kind != ExprKind::Var)
          break;
        Cur = &Next;
      }
      Expr R = call(New->as<CallNode>()->callee, std::move(Args), N.attrs);
      TypeSource[R.get()] = &N;
      return R;
    }
    return nullptr;
  }

  Dataflow D;
  /// Rewritten anchor calls -> an original call with the same types.
  std::unordered_map<const ExprNode *, const CallNode *> TypeSource;
};

/// Folds constant per-channel scales and shifts around conv, dense, matmul
/// and gemm into their weights and bias (TVM's FoldScaleAxis).
void foldScaleAxis(Module &M, const PassContext &) {
  transformFunctions(M, [](const Expr &Fn) {
    if (isPrimitiveFunction(Fn))
      return Fn;
    ScaleFolder F(Fn);
    Expr R = F.mutate(Fn);
    return dropBindings(R, F.Dead);
  });
}

} // namespace

RIVET_REGISTER_PASS("FoldScaleAxis", 3,
                    "Folds constant per-channel scales and shifts into the "
                    "weights and bias of conv, dense, matmul and gemm.",
                    foldScaleAxis);

} // namespace rivet::ir
