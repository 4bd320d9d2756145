//===- CanonicalizeOps.cc - Rewrite operators into canonical forms --------===//
//
// The forms later passes and code generation expect, so that an anchor's
// bias and scales are elementwise tails FuseOps puts in the anchor's group:
//  - conv(x, W, b)  ->  add(conv(x, W), reshape(b, [M, 1, ..., 1])): the bias
//    becomes a broadcast add (a constant bias is reshaped here). FoldScaleAxis
//    runs before this pass and folds scales and shifts into the bias form.
//  - gemm(a, b[, c], alpha, beta, trans_a, trans_b) on floats  ->
//    add(multiply(dense(a', b'), alpha), multiply(c, beta)) where a' is a or
//    transpose(a); b' is b (trans_b = 1) or transpose(b) when b is a constant
//    (the next FoldConstant evaluates it), and the product is matmul(a', b)
//    for a computed b without trans_b. A factor of 1 and an absent c leave
//    their multiply and add out.
//  - split(x, axis, sections | indices) with a constant extent along the
//    axis  ->  a tuple of strided_slice(x, begin=[b], end=[e], axes=[axis]),
//    one per piece, and a projection %s.i of a variable bound to it becomes
//    (a copy of) the i-th slice. A split returns a tuple, which pins it as the
//    output of a fused group of its own; each slice is injective and joins the
//    group of its consumers (a Tree-LSTM's gate nonlinearities, say), and an
//    unused one goes in DeadCodeElimination. A non-atomic x is bound first,
//    `let %v = x; (slices of %v)`, and that binding floated out into the
//    enclosing let chain, so that %v is in scope where the projections were.
//    A split the kernel would reject (uneven sections) is left for it to
//    report.
// Fused primitive functions are left alone.
//
//===----------------------------------------------------------------------===//
#include "ir/transforms/Pass.h"
#include "ir/transforms/PatternUtil.h"
#include "kernels/AttrSchema.h"

#include <algorithm>
#include <unordered_set>

namespace rivet::ir {
namespace {

using namespace pattern;

class Canonicalizer : public NonPrimitiveMutator {
public:
  explicit Canonicalizer(const Expr &Fn) : D(Fn) {}

  Expr visitCall(const CallNode &N, const Expr &Self) override {
    Expr New = ExprMutator::visitCall(N, Self);
    std::string_view Op = calledOpName(Self);
    Expr R;
    if (Op == "conv")
      R = splitConvBias(N, *New->as<CallNode>());
    else if (Op == "gemm")
      R = expandGemm(N, *New->as<CallNode>());
    else if (Op == "split")
      R = splitToSlices(Self, N, *New->as<CallNode>());
    return R ? R : New;
  }

  Expr visitTupleGetItem(const TupleGetItemNode &N, const Expr &Self) override {
    // Only through a let-bound variable: its binding is where a floated
    // input binding lands, in scope of every use of the variable.
    if (N.tuple->kind == ExprKind::Var)
      if (const Expr &Orig = D.resolve(N.tuple); asOpCall(Orig, "split"))
        if (const TupleNode *T = slicesOf(mutate(Orig)))
          if (N.index >= 0 && N.index < (int64_t)T->fields.size()) {
            // A node of its own: one shared with the tuple (or another
            // use) would make the expression a DAG.
            const auto &Slice = *T->fields[N.index]->as<CallNode>();
            return call(Slice.callee, Slice.args, Slice.attrs);
          }
    return ExprMutator::visitTupleGetItem(N, Self);
  }

  Expr visitLet(const LetNode &N, const Expr &Self) override {
    Expr R = ExprMutator::visitLet(N, Self);
    return Floated.empty() ? R : floatInputBindings(R);
  }

private:
  /// conv(x, W, b) -> conv(x, W) + b shaped [M, 1, ...].
  Expr splitConvBias(const CallNode &Orig, const CallNode &New) {
    if (New.args.size() != 3)
      return nullptr;
    const TensorTypeNode *W = rankedTensorType(Orig.args[1]);
    if (!W || W->shape->size() < 3)
      return nullptr;
    Shape BiasShape{-1};
    BiasShape.resize(W->shape->size() - 1, 1);
    Expr Bias;
    if (const Tensor *B = D.constantOf(New.args[2])) {
      BiasShape[0] = B->numel();
      Bias = constant(B->reshape(BiasShape));
    } else {
      Bias = callOp("reshape", {New.args[2]}, Attrs{{"newshape", BiasShape}});
    }
    Expr Conv = call(New.callee, {New.args[0], New.args[1]}, New.attrs);
    return callOp("add", {Conv, Bias});
  }

  /// gemm -> dense/matmul with an explicit scale and bias add.
  Expr expandGemm(const CallNode &Orig, const CallNode &New) {
    const auto *Out =
        Orig.checkedType ? Orig.checkedType->as<TensorTypeNode>() : nullptr;
    if (!Out || !isFloat(Out->dtype))
      return nullptr;
    DType T = Out->dtype;
    OpAttrs Gemm("gemm", New.attrs);
    double Alpha = Gemm.getFloat("alpha");
    double Beta = Gemm.getFloat("beta");
    Expr A = New.args[0], B = New.args[1];
    const Attrs Swap{{"axes", std::vector<int64_t>{1, 0}}};
    if (Gemm.getInt("trans_a") != 0)
      A = callOp("transpose", {A}, Swap);
    Expr Product;
    if (Gemm.getInt("trans_b") != 0)
      Product = callOp("dense", {A, B});
    else if (D.constantOf(B))
      Product = callOp("dense", {A, callOp("transpose", {B}, Swap)});
    else
      Product = callOp("matmul", {A, B});
    if (Alpha != 1.0)
      Product = callOp("multiply", {Product, scalarConstant(Alpha, T)});
    if (New.args.size() < 3)
      return Product;
    Expr C = New.args[2];
    if (Beta != 1.0)
      C = callOp("multiply", {C, scalarConstant(Beta, T)});
    return callOp("add", {Product, C});
  }

  /// split -> a tuple of strided_slice calls, when the pieces are static.
  Expr splitToSlices(const Expr &Self, const CallNode &Orig,
                     const CallNode &New) {
    // A split node shared by two bindings would bind its floated input
    // twice.
    if (New.args.size() != 1 || D.uses(Self) > 1)
      return nullptr;
    const TensorTypeNode *X = rankedTensorType(Orig.args[0]);
    if (!X || X->shape->empty())
      return nullptr;
    int64_t Rank = (int64_t)X->shape->size();
    int64_t Axis = OpAttrs("split", New.attrs).getInt("axis");
    if (Axis < -Rank || Axis >= Rank)
      return nullptr;
    if (Axis < 0)
      Axis += Rank;
    int64_t Extent = constExtent(*X, Axis);
    bool HasSections = New.attrs.has("sections");
    if (Extent < 0 || HasSections == New.attrs.has("indices"))
      return nullptr;
    // The pieces as the split kernel computes them (src/kernels/ops/
    // Transform.cc): equal sections, or NumPy array_split's clamped points.
    std::vector<std::pair<int64_t, int64_t>> Pieces;
    if (HasSections) {
      int64_t N = New.attrs.getInt("sections");
      if (N <= 0 || Extent % N != 0)
        return nullptr;
      for (int64_t I = 0; I < N; ++I)
        Pieces.emplace_back(I * (Extent / N), (I + 1) * (Extent / N));
    } else {
      int64_t Prev = 0;
      for (int64_t P : New.attrs.getInts("indices")) {
        int64_t Q = std::clamp<int64_t>(P < 0 ? P + Extent : P, 0, Extent);
        Pieces.emplace_back(Prev, std::max(Prev, Q));
        Prev = Q;
      }
      Pieces.emplace_back(Prev, std::max(Prev, Extent));
    }
    Expr In = New.args[0];
    Var Bound;
    if (In->kind != ExprKind::Var && In->kind != ExprKind::Constant) {
      Bound = var("split_in");
      In = Bound;
    }
    std::vector<Expr> Slices;
    for (auto [B, E] : Pieces)
      Slices.push_back(callOp("strided_slice", {In},
                              Attrs{{"begin", std::vector<int64_t>{B}},
                                    {"end", std::vector<int64_t>{E}},
                                    {"axes", std::vector<int64_t>{Axis}}}));
    Expr T = tuple(std::move(Slices));
    if (!Bound)
      return T;
    Expr L = let(Bound, New.args[0], T);
    Floated.insert(L.get());
    return L;
  }

  /// The slices a rewritten split produced (R is its rewrite), else null.
  const TupleNode *slicesOf(const Expr &R) const {
    if (const auto *L = R->as<LetNode>(); L && Floated.count(L))
      return L->body->as<TupleNode>();
    return R->as<TupleNode>();
  }

  /// The let chain R with `let %s = (let %v = x; T)` (a split's input bound
  /// by splitToSlices) flattened to `let %v = x; let %s = T`.
  Expr floatInputBindings(const Expr &R) {
    std::vector<std::pair<Var, Expr>> Links;
    bool Any = false;
    Expr Cur = R;
    while (const auto *L = Cur->as<LetNode>()) {
      const auto *Inner = L->value->as<LetNode>();
      if (Inner && Floated.count(Inner)) {
        Links.emplace_back(Inner->var, Inner->value);
        Links.emplace_back(L->var, Inner->body);
        Any = true;
      } else {
        Links.emplace_back(L->var, L->value);
      }
      Cur = L->body;
    }
    if (!Any)
      return R;
    for (auto It = Links.rbegin(); It != Links.rend(); ++It)
      Cur = let(It->first, It->second, Cur);
    return Cur;
  }

  Dataflow D;
  /// The input bindings splitToSlices made, to be floated out.
  std::unordered_set<const ExprNode *> Floated;
};

/// Rewrites conv with a bias argument and gemm into an anchor (conv, dense,
/// matmul) followed by elementwise scale and bias ops, and splits into
/// slices.
void canonicalizeOps(Module &M, const PassContext &) {
  transformFunctions(M, [](const Expr &Fn) {
    if (isPrimitiveFunction(Fn))
      return Fn;
    return Canonicalizer(Fn).mutate(Fn);
  });
}

} // namespace

RIVET_REGISTER_PASS("CanonicalizeOps", 3,
                    "Rewrites conv biases and gemm into an anchor op followed "
                    "by elementwise scale and bias-add ops, and a split of "
                    "static pieces into strided slices that fuse.",
                    canonicalizeOps);

} // namespace rivet::ir
