//===- FuseAttention.cc - softmax(q k^T) v as one attention call ----------===//
//
// matmul(softmax(matmul(q, kt), axis=-1), v) over 3-D [n, s, d] or 4-D
// [b, h, s, d] operands (kt: [.., d, t], v: [.., t, dv]) becomes one call of
// the attention operator (scale 1, or q's division or multiplication by a
// constant, as exporters scale), whose kernel walks the keys in blocks with
// an online softmax
// instead of writing the [.., s, t] scores and reading them twice. Exporters
// write attention this way (torch's MultiheadAttention in ONNX opsets
// below 23: bmm, softmax, bmm over [batch * heads, s, d]). 3-D operands get
// a heads axis of 1 (views). A product or softmax that something else also
// reads stays, computed for that reader.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"

#include <optional>
#include <string>

namespace rivet::ir {
namespace {

/// Rewrites each matmul(softmax(matmul(q, kt)), v) it meets.
class AttentionFuser : public DefinitionMutator {
  /// The value of a constant with one element, else nothing.
  static std::optional<double> scalarConstant(const Expr &E) {
    const auto *C = E->as<ConstantNode>();
    if (!C || C->value.numel() != 1 || !isFloat(C->value.dtype()))
      return std::nullopt;
    return C->value.elementAsDouble(0);
  }

  /// A float tensor of rank 3 or 4 with the given rank.
  static bool isOperand(const Expr &E, size_t Rank) {
    TensorTypeRef T = tensorTypeOf(E);
    return T && T->shape && T->shape->size() == Rank && isFloat(T->dtype);
  }

  /// The transposed operand of transpose(x, Axes), else null.
  Expr transposed(const Expr &E, const std::vector<int64_t> &Axes) const {
    const CallNode *T = producer(E, "transpose");
    return T && T->attrs.has("axes") && T->attrs.getInts("axes") == Axes &&
                   isOperand(T->args[0], 3)
               ? T->args[0]
               : nullptr;
  }

  /// torch's MultiheadAttention (sequence first) transposes the heads of
  /// q, k and v from [s, n, d] to [n, s, d] (k to [n, d, s]) for the
  /// products, and the result back: attention reads and writes them in
  /// place (seq_first, one head per batch row), and SimplifyExpr cancels
  /// the transpose back against the consumer's. The transposes were 8% of
  /// a small encoder's run.
  Expr sequenceFirst(const Expr &Q, const Expr &Kt, const Expr &V,
                     double Scale) const {
    Expr Xq = transposed(Q, {1, 0, 2}), Xk = transposed(Kt, {1, 2, 0}),
         Xv = transposed(V, {1, 0, 2});
    if (!Xq || !Xk || !Xv)
      return nullptr;
    Expr Y = callOp("attention", {Xq, Xk, Xv},
                    Attrs{{"scale", Scale},
                          {"q_num_heads", int64_t(1)},
                          {"kv_num_heads", int64_t(1)},
                          {"seq_first", int64_t(1)}});
    return callOp("transpose", {Y},
                  Attrs{{"axes", std::vector<int64_t>{1, 0, 2}}});
  }

public:
  Expr visitCall(const CallNode &N, const Expr &Self) override {
    Expr New = DefinitionMutator::visitCall(N, Self);
    const auto *Out = New->as<CallNode>();
    const auto *OutOp = Out ? Out->callee->as<OpNode>() : nullptr;
    if (!OutOp || OutOp->name() != "matmul" || Out->args.size() != 2)
      return New;
    const CallNode *Soft = producer(Out->args[0], "softmax");
    if (!Soft || Soft->args.size() != 1)
      return New;
    const CallNode *Scores = producer(Soft->args[0], "matmul");
    if (!Scores || Scores->args.size() != 2)
      return New;
    const Expr &Q = Scores->args[0], &Kt = Scores->args[1], &V = Out->args[1];
    TensorTypeRef QT = tensorTypeOf(Q);
    if (!QT || !QT->shape)
      return New;
    size_t Rank = QT->shape->size();
    if ((Rank != 3 && Rank != 4) || !isOperand(Q, Rank) ||
        !isOperand(Kt, Rank) || !isOperand(V, Rank))
      return New;
    // The softmax runs over the keys: the last axis.
    int64_t Axis = Soft->attrs.getInt("axis", -1);
    if (Axis != -1 && Axis != (int64_t)Rank - 1)
      return New;
    TensorTypeRef KT = tensorTypeOf(Kt), VT = tensorTypeOf(V);
    if (KT->dtype != QT->dtype || VT->dtype != QT->dtype)
      return New;
    // The same batch (and heads) extents: matmul would broadcast a 1 where
    // attention pairs each q with its own keys.
    for (size_t I = 0; I + 2 < Rank; ++I)
      if (!((*QT->shape)[I] == (*KT->shape)[I]) ||
          !((*QT->shape)[I] == (*VT->shape)[I]))
        return New;
    // k^T [.., d, t] back to k [.., t, d]; SimplifyExpr merges the
    // transposes.
    std::vector<int64_t> Swap;
    for (size_t I = 0; I < Rank; ++I)
      Swap.push_back((int64_t)I);
    std::swap(Swap[Rank - 1], Swap[Rank - 2]);
    Expr K = callOp("transpose", {Kt}, Attrs{{"axes", Swap}});
    auto Heads = [&](Expr E) {
      return Rank == 4 ? E
                       : callOp("unsqueeze", {std::move(E)},
                                Attrs{{"axes", std::vector<int64_t>{1}}});
    };
    // q / c or q * c (a scalar constant) becomes the call's scale.
    Expr Qs = Q;
    double Scale = 1.0;
    for (const char *Op : {"divide", "multiply"})
      if (const CallNode *S = producer(Q, Op))
        if (std::optional<double> C = scalarConstant(S->args[1]);
            C && *C != 0 && isOperand(S->args[0], Rank)) {
          Qs = S->args[0];
          Scale = std::string(Op) == "divide" ? 1.0 / *C : *C;
        }
    if (Rank == 3)
      if (Expr Y = sequenceFirst(Qs, Kt, V, Scale))
        return Y;
    Expr Y = callOp("attention", {Heads(Qs), Heads(K), Heads(V)},
                    Attrs{{"scale", Scale}});
    if (Rank == 4)
      return Y;
    return callOp("squeeze", {Y}, Attrs{{"axes", std::vector<int64_t>{1}}});
  }
};

void fuseAttentionPass(Module &M, const PassContext &) {
  transformFunctions(M,
                     [](const Expr &F) { return AttentionFuser().mutate(F); });
}

} // namespace

/// FuseAttention: matmul(softmax(matmul(q, k^T)), v) becomes one attention
/// call (a blocked kernel with an online softmax).
RIVET_REGISTER_PASS("FuseAttention", 2,
                    "Turns matmul(softmax(matmul(q, k^T)), v) into one "
                    "attention call.",
                    fuseAttentionPass);

} // namespace rivet::ir
