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
// Fused primitive functions are left alone.
//
//===----------------------------------------------------------------------===//
#include "ir/transforms/Pass.h"
#include "ir/transforms/PatternUtil.h"

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
    return R ? R : New;
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
    double Alpha = New.attrs.getFloat("alpha", 1.0);
    double Beta = New.attrs.getFloat("beta", 1.0);
    Expr A = New.args[0], B = New.args[1];
    const Attrs Swap{{"axes", std::vector<int64_t>{1, 0}}};
    if (New.attrs.getInt("trans_a", 0) != 0)
      A = callOp("transpose", {A}, Swap);
    Expr Product;
    if (New.attrs.getInt("trans_b", 0) != 0)
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

  Dataflow D;
};

/// Rewrites conv with a bias argument and gemm into an anchor (conv, dense,
/// matmul) followed by elementwise scale and bias ops.
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
                    "by elementwise scale and bias-add ops.",
                    canonicalizeOps);

} // namespace rivet::ir
