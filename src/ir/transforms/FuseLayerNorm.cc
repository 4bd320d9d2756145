//===- FuseLayerNorm.cc - a decomposed layer norm as one layer_norm call --===//
//
// Exporters before ONNX's LayerNormalization (opset 17), torch's among them,
// write nn.LayerNorm over the last axis as its arithmetic:
//
//   d = x - mean(x, axis=[-1], keepdims=1)
//   y = d / sqrt(mean(pow(d, 2), axis=[-1], keepdims=1) + eps) * w + b
//
// with w and b constant vectors along that axis. FuseOps makes four kernels
// of it (a reduction cannot lead a group), each pass over the rows reading
// what the last one wrote; the pattern becomes one layer_norm call (whose
// kernel normalizes a row in one pass over it). The intermediate values must
// have no other reader; DeadCodeElimination drops their bindings.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"
#include "ir/transforms/PatternUtil.h"

namespace rivet::ir {
namespace {

using pattern::asOpCall;

/// Whether attributes A reduce over the last axis of a rank-Rank tensor and
/// keep it (axis=[-1] or [Rank - 1], keepdims=1).
bool lastAxisKept(const Attrs &A, int64_t Rank) {
  if (A.items().size() != 2 || A.getInt("keepdims", 0) != 1)
    return false;
  std::vector<int64_t> Axes = A.getInts("axis", {});
  return Axes.size() == 1 && (Axes[0] == -1 || Axes[0] == Rank - 1);
}

class LayerNormFuser : public pattern::NonPrimitiveMutator {
public:
  explicit LayerNormFuser(const Expr &Fn) : Flow(Fn) {}
  int Fused = 0;

  Expr visitCall(const CallNode &N, const Expr &Self) override {
    Expr New = ExprMutator::visitCall(N, Self);
    if (Expr Norm = match(New))
      return Norm;
    return New;
  }

private:
  pattern::Dataflow Flow;

  /// The single-use value E names, as a call of Op; else null.
  const CallNode *only(const Expr &E, std::string_view Op) const {
    const Expr *R = Flow.resolveSingleUse(E);
    return R ? asOpCall(*R, Op) : nullptr;
  }

  /// The constant [C] vector E names (C the normalized extent), else null.
  const Tensor *vectorOf(const Expr &E, int64_t C) const {
    const Tensor *T = Flow.constantOf(E);
    return T && T->dtype() == DType::Float32 && T->shape() == Shape{C}
               ? T
               : nullptr;
  }

  /// One of a commutative call's operands as Op (the other in Other).
  const CallNode *operandAs(const CallNode &C, std::string_view Op,
                            Expr &Other) const {
    for (size_t I = 0; I < 2; ++I)
      if (const CallNode *A = only(C.args[I], Op)) {
        Other = C.args[1 - I];
        return A;
      }
    return nullptr;
  }

  Expr match(const Expr &E) {
    const CallNode *Add = asOpCall(E, "add");
    const TensorTypeNode *T = Add ? pattern::rankedTensorType(E) : nullptr;
    if (!T || T->shape->empty() || T->dtype != DType::Float32)
      return nullptr;
    const int64_t Rank = (int64_t)T->shape->size();
    const int64_t C = pattern::constExtent(*T, T->shape->size() - 1);
    Expr B, W, Eps;
    const CallNode *Mul = C > 0 ? operandAs(*Add, "multiply", B) : nullptr;
    const CallNode *Div = Mul ? operandAs(*Mul, "divide", W) : nullptr;
    if (!Div || !vectorOf(B, C) || !vectorOf(W, C))
      return nullptr;
    // divide(d, sqrt(mean(pow(d, 2)) + eps)): d read by the pow as well.
    const CallNode *Sqrt = only(Div->args[1], "sqrt");
    const CallNode *Plus = Sqrt ? only(Sqrt->args[0], "add") : nullptr;
    const CallNode *Var = Plus ? operandAs(*Plus, "mean", Eps) : nullptr;
    const Tensor *EpsT = Var ? Flow.constantOf(Eps) : nullptr;
    if (!EpsT || EpsT->numel() != 1 || !isFloat(EpsT->dtype()) ||
        !lastAxisKept(Var->attrs, Rank))
      return nullptr;
    const CallNode *Pow = only(Var->args[0], "pow");
    const Tensor *Two = Pow ? Flow.constantOf(Pow->args[1]) : nullptr;
    if (!Two || Two->numel() != 1 || Two->elementAsDouble(0) != 2.0)
      return nullptr;
    // d: the same subtract for both, read by these two only.
    const Expr &D = Flow.resolve(Div->args[0]);
    const Expr &Named = Div->args[0]->as<VarNode>() ? Div->args[0] : D;
    if (D.get() != Flow.resolve(Pow->args[0]).get() || Flow.uses(Named) != 2)
      return nullptr;
    const CallNode *Sub = asOpCall(D, "subtract");
    const CallNode *Mean = Sub ? only(Sub->args[1], "mean") : nullptr;
    if (!Mean || !lastAxisKept(Mean->attrs, Rank) ||
        Flow.resolve(Mean->args[0]).get() != Flow.resolve(Sub->args[0]).get())
      return nullptr;
    const Expr &X = Sub->args[0];
    const TensorTypeNode *XT = pattern::rankedTensorType(X);
    if (!XT || XT->dtype != DType::Float32 ||
        XT->shape->size() != T->shape->size())
      return nullptr;
    Attrs A;
    A.set("axis", int64_t(-1));
    A.set("epsilon", EpsT->elementAsDouble(0));
    ++Fused;
    return callOp("layer_norm", {X, W, B}, A);
  }
};

void fuseLayerNormPass(Module &M, const PassContext &) {
  transformFunctions(M,
                     [](const Expr &F) { return LayerNormFuser(F).mutate(F); });
}

} // namespace

/// FuseLayerNorm: the arithmetic of a layer norm over the last axis, as
/// exporters before opset 17 write it, becomes one layer_norm call.
RIVET_REGISTER_PASS("FuseLayerNorm", 2,
                    "Turns a layer norm written as its arithmetic into one "
                    "layer_norm call.",
                    fuseLayerNormPass);

} // namespace rivet::ir
