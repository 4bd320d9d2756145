//===- FoldScaleAxis.cc - Fold per-channel scales into weights ------------===//
//
// TVM's FoldScaleAxis on the anchors conv, dense, matmul (2-D weight) and
// gemm, with constant scales:
//  - backward: anchor(x, W[, b]) * s, s constant along the output channel
//    (shape (C, 1, 1), (1, C, 1, 1), a scalar, ...) becomes
//    anchor(x, W * s', b * s) with s' shaped along W's output axis;
//  - bias: conv(x, W[, b]) + t, t constant along the output channel, becomes
//    conv(x, W, b + t) (t alone when there was no bias). With the backward
//    rule, SimplifyInference's batch norm (x * scale + shift) folds entirely.
//  - forward: anchor(x * s, W, ...) with s constant along x's input channel
//    (the last axis for dense/matmul, axis 1 for conv with group 1) becomes
//    anchor(x, W * s', ...): the product is linear in x, and conv's zero
//    padding stays zero after the scale.
// A rewritten producer must have no other consumer. The scaled weights are
// multiply(W, constant) expressions for the next FoldConstant to evaluate.
// Fused primitive functions are left alone.
//
//===----------------------------------------------------------------------===//
#include "ir/transforms/Pass.h"
#include "ir/transforms/PatternUtil.h"

namespace rivet::ir {
namespace {

using namespace pattern;

bool isAnchorOp(std::string_view Op) {
  return Op == "conv" || Op == "dense" || Op == "matmul" || Op == "gemm";
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
    else if (isAnchorOp(Op))
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
    std::string_view Op = calledOpName(NewP);
    if (!isAnchorOp(Op))
      return std::nullopt;
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
    const std::string &Op = Typed.callee->as<OpNode>()->name();
    const TensorTypeNode *W = rankedTensorType(Typed.args[1]);
    if (!W || (Op == "matmul" && W->shape->size() != 2))
      return false;
    Axis = Op == "conv" ? 1 : Out->shape->size() - 1;
    L = constExtent(*Out, Axis);
    return L > 0;
  }

  /// Anchor Call with every output channel c scaled by V[c].
  Expr scaleOutput(const Producer &P, const Tensor &V) {
    const auto &C = *P.Call->as<CallNode>();
    std::string_view Op = calledOpName(P.Call);
    std::vector<Expr> Args = C.args;
    size_t WRank = rankedTensorType(P.Typed->args[1])->shape->size();
    size_t WAxis = 0;
    if (Op == "matmul" || (Op == "gemm" && C.attrs.getInt("trans_b", 0) == 0))
      WAxis = 1;
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
  /// broadcasts along the output channel of the anchor p (of operator
  /// OnlyOp, when given).
  std::optional<ChannelOperands> channelOperands(const CallNode &N,
                                                 std::string_view OnlyOp) {
    if (N.args.size() != 2)
      return std::nullopt;
    for (size_t I = 0; I < 2; ++I) {
      const Tensor *C = D.constantOf(N.args[1 - I]);
      if (!C)
        continue;
      std::optional<Producer> P = producerOf(N.args[I]);
      if (!P || (!OnlyOp.empty() && calledOpName(P->Call) != OnlyOp))
        continue;
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
    std::optional<ChannelOperands> O = channelOperands(N, "");
    if (!O)
      return nullptr;
    consume(O->P);
    return scaleOutput(O->P, O->Vector);
  }

  /// conv(x, W[, b]) + t  ->  conv(x, W, b + t).
  Expr foldBias(const CallNode &N) {
    std::optional<ChannelOperands> O = channelOperands(N, "conv");
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
    std::string_view Op = calledOpName(New);
    if (Op == "gemm" || Op.empty() || N.args.size() < 2)
      return nullptr;
    if (Op == "conv" && N.attrs.getInt("group", 1) != 1)
      return nullptr;
    const TensorTypeNode *W = rankedTensorType(N.args[1]);
    if (!W || (Op != "conv" && W->shape->size() != 2))
      return nullptr;
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
      size_t Axis = Op == "conv" ? 1 : X->shape->size() - 1;
      int64_t L = constExtent(*X, Axis);
      std::optional<Tensor> V = channelVector(*S, X->shape->size(), Axis, L);
      if (!V)
        continue;
      size_t WAxis = Op == "matmul" ? 0 : 1;
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
