//===- NormRules.cc - Compute rules of normalizations ---------------------===//
//
// rms_norm (src/ir/ops/NN.cc): the sum of squares of each row [axis, rank)
// is a reduction over the normalized axes at the row's leading index, so
// lowering computes it once per row, before the row's loop; the row is then
// x * (1 / sqrt(mean + epsilon)) * scale, with any elementwise tail of the
// group applied to it in the same loop. The sum accumulates in float32
// unless x is float64 or stash_type asks for double (the reference always
// uses double; float32 sums agree to rounding).
//
//===----------------------------------------------------------------------===//

#include "codegen/ComputeRule.h"

namespace rivet::codegen {
namespace {

using Ix = std::vector<LoopExpr>;

LoopExpr rmsNormRule(ComputeContext &Ctx, const Ix &Out) {
  const TensorDesc &X = Ctx.input(0), &S = Ctx.input(1);
  for (DType T : {X.dtype, S.dtype})
    if (!isFloat(T) || !isCodegenDType(T))
      unsupported("rms_norm: dtype {} has no generated code", dtypeName(T));
  OpAttrs A = Ctx.opAttrs();
  int64_t R = (int64_t)X.rank(), Axis = A.getInt("axis");
  if (Axis < -R || Axis >= R)
    unsupported("rms_norm: axis {} for rank {}", Axis, R);
  size_t First = (size_t)(Axis < 0 ? Axis + R : Axis);
  DType Acc = X.dtype == DType::Float64 || A.getInt("stash_type") == 11
                  ? DType::Float64
                  : DType::Float32;
  Ix Extents(X.shape.begin() + (ptrdiff_t)First, X.shape.end());
  LoopExpr Sq = Ctx.reduce(ReduceCombiner::Sum, constOf(0, Acc), Extents,
                           [&](const Ix &Vars) {
                             Ix I(Out.begin(), Out.begin() + (ptrdiff_t)First);
                             I.insert(I.end(), Vars.begin(), Vars.end());
                             LoopExpr V = cast(Ctx.read(0, I), Acc);
                             return binary(LoopOp::Mul, V, V);
                           });
  LoopExpr Mean = binary(LoopOp::Div, Sq, cast(numElements(Extents), Acc));
  LoopExpr Inv =
      binary(LoopOp::Div, constOf(1, Acc),
             unary(LoopOp::Sqrt, binary(LoopOp::Add, Mean,
                                        constOf(A.getFloat("epsilon"), Acc))));
  LoopExpr Scale = cast(Ctx.read(1, broadcastIndex(S, Ctx.output(), Out)), Acc);
  LoopExpr Y =
      binary(LoopOp::Mul, binary(LoopOp::Mul, cast(Ctx.read(0, Out), Acc), Inv),
             Scale);
  return cast(Y, Ctx.output().dtype);
}

} // namespace

RIVET_REGISTER_COMPUTE_RULE("rms_norm", rmsNormRule);

} // namespace rivet::codegen
