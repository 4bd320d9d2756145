//===- SimplifyInference.cc - Inference forms of training operators ------===//
//
// batch_norm in inference mode becomes x * scale + shift with per-channel
// scale = gamma / sqrt(var + eps) and shift = beta - mean * scale, reshaped to
// broadcast over axis 1: with constant statistics FoldConstant folds both and
// FoldScaleAxis can move the scale into a preceding conv. dropout becomes the
// identity with an all-true mask (only what is used of it is kept).
//
//===----------------------------------------------------------------------===//
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"
#include "kernels/AttrSchema.h"

#include <unordered_map>

namespace rivet::ir {
namespace {

class InferenceSimplifier : public BindingMutator {
public:
  Expr visitCall(const CallNode &N, const Expr &Self) override {
    Expr New = BindingMutator::visitCall(N, Self);
    const std::string &Name = calledOpName(New);
    if (Name == "batch_norm")
      if (Expr R = batchNorm(*New->as<CallNode>(), N))
        return R;
    if (Name == "dropout") {
      const auto &C = *New->as<CallNode>();
      // The kernel refuses training with ratio > 0 (it would drop at random)
      // and is the identity otherwise: inference means the identity.
      return tuple(
          {C.args[0], callOp("full_like", {C.args[0]},
                             Attrs{{"value", 1.0}, {"dtype", "bool"}})});
    }
    return New;
  }

  Expr visitTupleGetItem(const TupleGetItemNode &N, const Expr &Self) override {
    Expr T = mutate(N.tuple);
    // A projection of a rewritten dropout picks the field it needs.
    const TupleNode *Tup = T->as<TupleNode>();
    if (!Tup)
      if (const auto *V = T->as<VarNode>()) {
        auto It = Tuples.find(V);
        if (It != Tuples.end())
          Tup = It->second->as<TupleNode>();
      }
    if (Tup && N.index >= 0 && N.index < (int64_t)Tup->fields.size())
      return Tup->fields[N.index];
    return T == N.tuple ? Self : tupleGetItem(T, N.index);
  }

protected:
  Binding visitBinding(const Var &V, const Expr &Value) override {
    if (Value->kind == ExprKind::Tuple)
      Tuples[V.get()] = Value;
    return BindingMutator::visitBinding(V, Value);
  }

private:
  /// The inference form of batch_norm, or null for the training form or
  /// when the types do not say enough (rank and dtype of x).
  static Expr batchNorm(const CallNode &C, const CallNode &Orig) {
    if (OpAttrs("batch_norm", C.attrs).getInt("training") != 0 ||
        C.args.size() != 5)
      return nullptr;
    TensorTypeRef X = tensorTypeOf(Orig.args[0]);
    if (!X || !X->shape || X->shape->size() < 2)
      return nullptr;
    for (size_t I = 1; I < 5; ++I) {
      TensorTypeRef P = tensorTypeOf(Orig.args[I]);
      if (!P || P->dtype != X->dtype)
        return nullptr;
    }
    double Eps = OpAttrs("batch_norm", C.attrs).getFloat("epsilon");
    Expr EpsC = constant(Tensor::scalar<double>(Eps).cast(X->dtype));
    const Expr &Gamma = C.args[1], &Beta = C.args[2], &Mean = C.args[3],
               &Var = C.args[4];
    Expr Scale =
        callOp("divide", {Gamma, callOp("sqrt", {callOp("add", {Var, EpsC})})});
    Expr Shift = callOp("subtract", {Beta, callOp("multiply", {Mean, Scale})});
    // [C] -> [C, 1, ..., 1] so that it broadcasts over axis 1 of [N, C, ...].
    int64_t Trailing = (int64_t)X->shape->size() - 2;
    if (Trailing > 0) {
      std::vector<int64_t> Axes;
      for (int64_t I = 1; I <= Trailing; ++I)
        Axes.push_back(I);
      Scale = callOp("unsqueeze", {Scale}, Attrs{{"axes", Axes}});
      Shift = callOp("unsqueeze", {Shift}, Attrs{{"axes", Axes}});
    }
    return callOp("add", {callOp("multiply", {C.args[0], Scale}), Shift});
  }

  std::unordered_map<const VarNode *, Expr> Tuples;
};

void simplifyInferencePass(Module &M, const PassContext &) {
  transformFunctions(
      M, [](const Expr &F) { return InferenceSimplifier().mutate(F); });
}

} // namespace

/// SimplifyInference: rewrites operators that behave differently in training
/// (batch_norm, dropout) into their inference forms from simpler operators.
RIVET_REGISTER_PASS("SimplifyInference", 0,
                    "Rewrites batch_norm and dropout into their inference "
                    "forms.",
                    simplifyInferencePass);

} // namespace rivet::ir
