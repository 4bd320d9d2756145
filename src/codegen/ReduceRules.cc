//===- ReduceRules.cc - Compute rules of reductions -----------------------===//
//
// sum, mean, max, min, prod, l1_norm, l2_norm, log_sum, log_sum_exp and
// sum_square over axes with keepdims (src/ir/ops/Reduce.cc), and softmax /
// log_softmax as reductions feeding an elementwise expression. Each
// reduction accumulates into a scalar local (ComputeContext::reduce); floats
// accumulate in their own dtype (the reference uses double, so results agree
// to rounding), integers wrap as in the reference.
//
//===----------------------------------------------------------------------===//

#include "codegen/ComputeRule.h"

#include <cmath>
#include <limits>

namespace rivet::codegen {
namespace {

using Ix = std::vector<LoopExpr>;

/// Which input axes a reduction folds and how its output index maps back.
struct ReducePlan {
  std::vector<bool> reduced;
  bool keepDims = false;
  std::vector<LoopExpr> extents; // of the reduced axes, in order
  LoopExpr count;                // elements per output
};

ReducePlan planReduce(ComputeContext &Ctx) {
  const TensorDesc &In = Ctx.input(0);
  int64_t R = (int64_t)In.rank();
  OpAttrs OA = Ctx.opAttrs();
  std::vector<int64_t> Axes = OA.getInts("axis");
  ReducePlan P;
  P.keepDims = OA.getInt("keepdims") != 0;
  P.reduced.assign((size_t)R, Axes.empty());
  for (int64_t A : Axes) {
    if (A < -R || A >= R)
      unsupported("{}: axis {} out of range", Ctx.opName(), A);
    P.reduced[(size_t)(A < 0 ? A + R : A)] = true;
  }
  P.count = intConst(1);
  for (size_t D = 0; D < (size_t)R; ++D)
    if (P.reduced[D]) {
      P.extents.push_back(In.shape[D]);
      P.count = binary(LoopOp::Mul, P.count, In.shape[D]);
    }
  return P;
}

/// The input index of output index Out with the reduced axes at Vars.
Ix inputIndex(const ReducePlan &P, const Ix &Out, const Ix &Vars) {
  Ix In;
  size_t O = 0, V = 0;
  for (size_t D = 0; D < P.reduced.size(); ++D) {
    if (P.reduced[D]) {
      In.push_back(Vars[V++]);
      if (P.keepDims)
        ++O;
    } else {
      In.push_back(Out[O++]);
    }
  }
  return In;
}

LoopExpr highest(DType T) {
  if (isFloat(T))
    return floatConst(INFINITY, T);
  switch (T) {
  case DType::Bool: return intConst(1, T);
  case DType::Int8: return intConst(127, T);
  case DType::Int16: return intConst(32767, T);
  case DType::Int32: return intConst(std::numeric_limits<int32_t>::max(), T);
  case DType::Int64: return intConst(std::numeric_limits<int64_t>::max(), T);
  case DType::UInt8: return intConst(255, T);
  case DType::UInt16: return intConst(65535, T);
  case DType::UInt32: return intConst(4294967295LL, T);
  default: return intConst(-1, T); // uint64 max, as a bit pattern
  }
}

enum class Fold { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, SumSquare };

template <Fold F> LoopExpr reduceRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.input(0).dtype;
  requireCodegenDType(Ctx.opName(), T);
  bool FloatOnly = F == Fold::L2 || F == Fold::LogSum;
  if ((FloatOnly && !isFloat(T)) ||
      (T == DType::Bool && F != Fold::Max && F != Fold::Min))
    unsupported("{}: dtype {} has no generated code", Ctx.opName(),
                dtypeName(T));
  ReducePlan P = planReduce(Ctx);
  // Max and min have no value over no elements (unless the call asks for
  // their identity, Init below), nor has an integer mean: the reference
  // reports an error, and so must the kernel's caller.
  bool Extremum = F == Fold::Max || F == Fold::Min;
  if ((Extremum && Ctx.opAttrs().getInt("empty_identity") == 0) ||
      (F == Fold::Mean && !isFloat(T)))
    requireNonEmptyReduction(Ctx.opName(), P.extents, Ctx.output().shape);
  // Accumulate as the reference does: integer means in int64, float32 in
  // float64, so that a sum whose float32 partial sums would overflow (or
  // drop small terms) gives the reference's value.
  bool Wide = T == DType::Float32 && F != Fold::Max && F != Fold::Min;
  DType Acc = Wide                               ? DType::Float64
              : (F == Fold::Mean && !isFloat(T)) ? DType::Int64
                                                 : T;
  ReduceCombiner C = F == Fold::Max    ? ReduceCombiner::Max
                     : F == Fold::Min  ? ReduceCombiner::Min
                     : F == Fold::Prod ? ReduceCombiner::Prod
                                       : ReduceCombiner::Sum;
  LoopExpr Init = F == Fold::Max    ? lowest(T)
                  : F == Fold::Min  ? highest(T)
                  : F == Fold::Prod ? constOf(1, Acc)
                                    : constOf(0, Acc);
  LoopExpr R = Ctx.reduce(C, Init, P.extents, [&](const Ix &Vars) {
    LoopExpr X = cast(Ctx.read(0, inputIndex(P, Out, Vars)), Acc);
    switch (F) {
    case Fold::L1:
      return isSigned(T) || isFloat(T)
                 ? select(compare(LoopOp::LT, X, constOf(0, Acc)),
                          unary(LoopOp::Neg, X), X)
                 : X;
    case Fold::L2:
    case Fold::SumSquare: return binary(LoopOp::Mul, X, X);
    default: return X;
    }
  });
  switch (F) {
  case Fold::Mean:
    if (isFloat(Acc))
      return cast(binary(LoopOp::Div, R, cast(P.count, Acc)), T);
    return convertLikeKernels(binary(LoopOp::Div, cast(R, DType::Float64),
                                     cast(P.count, DType::Float64)),
                              T);
  case Fold::L2: return cast(unary(LoopOp::Sqrt, R), T);
  case Fold::LogSum: return cast(unary(LoopOp::Log, R), T);
  default: return cast(R, T);
  }
}

/// exp(X - M) where M is the maximum over X's row: as exp(-|X - M|), the
/// same value for every input (X - M is never positive, or NaN), in a form
/// the LLVM emitter recognizes as a non-positive argument (no upper clamp,
/// one fixed scaling by 2^n), a fifth cheaper.
LoopExpr expBelowMax(LoopExpr X, LoopExpr M) {
  return unary(
      LoopOp::Exp,
      unary(LoopOp::Neg, unary(LoopOp::Abs, binary(LoopOp::Sub, X, M))));
}

LoopExpr logSumExpRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.input(0).dtype;
  if (!isFloat(T) || !isCodegenDType(T))
    unsupported("log_sum_exp: dtype {} has no generated code", dtypeName(T));
  ReducePlan P = planReduce(Ctx);
  LoopExpr M = Ctx.reduce(
      ReduceCombiner::Max, lowest(T), P.extents,
      [&](const Ix &Vars) { return Ctx.read(0, inputIndex(P, Out, Vars)); });
  LoopExpr S = Ctx.reduce(
      ReduceCombiner::Sum, constOf(0, T), P.extents, [&](const Ix &Vars) {
        return expBelowMax(Ctx.read(0, inputIndex(P, Out, Vars)), M);
      });
  // All -inf (or nothing) gives -inf rather than NaN from -inf - -inf.
  return select(compare(LoopOp::EQ, M, lowest(T)), M,
                binary(LoopOp::Add, M, unary(LoopOp::Log, S)));
}

/// softmax (LogSoftmax = false) or log_softmax along one axis.
template <bool LogSoftmax>
LoopExpr softmaxRule(ComputeContext &Ctx, const Ix &Out) {
  DType T = Ctx.input(0).dtype;
  if (!isFloat(T) || !isCodegenDType(T))
    unsupported("{}: dtype {} has no generated code", Ctx.opName(),
                dtypeName(T));
  if (Ctx.opAttrs().getInt("coerce_2d"))
    unsupported("{}: coerce_2d", Ctx.opName());
  int64_t R = (int64_t)Ctx.input(0).rank();
  int64_t Axis = Ctx.opAttrs().getInt("axis");
  if (R == 0 || Axis < -R || Axis >= R)
    unsupported("{}: axis {} for rank {}", Ctx.opName(), Axis, R);
  size_t A = (size_t)(Axis < 0 ? Axis + R : Axis);
  LoopExpr Extent = Ctx.input(0).shape[A];
  auto At = [&](LoopExpr V) {
    Ix I = Out;
    I[A] = V;
    return Ctx.read(0, I);
  };
  LoopExpr M = Ctx.reduce(ReduceCombiner::Max, lowest(T), {Extent},
                          [&](const Ix &Vars) { return At(Vars[0]); });
  // As the group's result, softmax stores each e = exp(x - M) from inside
  // the sum and divides the stored row: one exp per element, not two.
  bool StoreExp = !LogSoftmax && Ctx.canStoreResult(A);
  LoopExpr S = Ctx.reduce(ReduceCombiner::Sum, constOf(0, T), {Extent},
                          [&](const Ix &Vars) {
                            LoopExpr E = expBelowMax(At(Vars[0]), M);
                            if (!StoreExp)
                              return E;
                            Ix I = Out;
                            I[A] = Vars[0];
                            Ctx.storeResult(I, E);
                            return Ctx.readResult(I);
                          });
  // Multiplied by 1 / S (hoisted out of the row's loop): a vector division
  // per 8 elements cost a fifth of the kernel, and the float32 result is
  // within 1.5 ulp of e / S (the reference computes in double anyway).
  LoopExpr InvS = binary(LoopOp::Div, constOf(1, T), S);
  if (StoreExp)
    return binary(LoopOp::Mul, Ctx.readResult(Out), InvS);
  if (LogSoftmax)
    return binary(LoopOp::Sub, binary(LoopOp::Sub, Ctx.read(0, Out), M),
                  unary(LoopOp::Log, S));
  return binary(LoopOp::Mul, expBelowMax(Ctx.read(0, Out), M), InvS);
}

} // namespace

RIVET_REGISTER_COMPUTE_RULE("sum", reduceRule<Fold::Sum>);
RIVET_REGISTER_COMPUTE_RULE("mean", reduceRule<Fold::Mean>);
RIVET_REGISTER_COMPUTE_RULE("max", reduceRule<Fold::Max>);
RIVET_REGISTER_COMPUTE_RULE("min", reduceRule<Fold::Min>);
RIVET_REGISTER_COMPUTE_RULE("prod", reduceRule<Fold::Prod>);
RIVET_REGISTER_COMPUTE_RULE("l1_norm", reduceRule<Fold::L1>);
RIVET_REGISTER_COMPUTE_RULE("l2_norm", reduceRule<Fold::L2>);
RIVET_REGISTER_COMPUTE_RULE("log_sum", reduceRule<Fold::LogSum>);
RIVET_REGISTER_COMPUTE_RULE("sum_square", reduceRule<Fold::SumSquare>);
RIVET_REGISTER_COMPUTE_RULE("log_sum_exp", logSumExpRule);
RIVET_REGISTER_COMPUTE_RULE("softmax", softmaxRule<false>);
RIVET_REGISTER_COMPUTE_RULE("log_softmax", softmaxRule<true>);

} // namespace rivet::codegen
