//===- AnchorRules.cc - Compute rules of the anchor operators -------------===//
//
// dense, matmul (NumPy: 1-D promotion, broadcast batch axes), conv (N-d over
// x[N, C, D...] and w[M, C/group, k...]: strides, pads, dilations, auto_pad,
// groups incl. depthwise, optional bias) and the pools max_pool, avg_pool,
// lp_pool, global_avg_pool and global_max_pool (src/ir/ops/Linalg.cc, NN.cc).
// This is the generated path of the anchors when oneDNN is off. Each output
// element is a reduction over the contraction axes into a scalar local
// (floats accumulate in their own dtype, integer matmuls in wrapping int64 as
// the reference), so an anchor with an elementwise tail is one loop nest and
// the tail is computed on the accumulated value. A window position inside the
// padding is masked with a select over a clamped, always in-bounds load.
//
//===----------------------------------------------------------------------===//

#include "codegen/ComputeRule.h"
#include "kernels/AttrSchema.h"
#include "kernels/WindowGeometry.h"

#include <cmath>
#include <limits>

namespace rivet::codegen {
namespace {

using Ix = std::vector<LoopExpr>;

/// A && B where a null condition is true.
LoopExpr both(LoopExpr A, LoopExpr B) {
  if (!A)
    return B;
  if (!B)
    return A;
  return binary(LoopOp::And, A, B);
}

Ix slice(const Ix &V, size_t Begin, size_t End) {
  return Ix(V.begin() + (ptrdiff_t)Begin, V.begin() + (ptrdiff_t)End);
}

void requireFloat(const std::string &Op, DType T) {
  requireCodegenDType(Op, T);
  if (!isFloat(T))
    unsupported("{}: dtype {} has no generated code", Op, dtypeName(T));
}

/// Refuses a group whose two extents (a matmul's contraction, say) are not
/// known to agree: the loop nest reads both operands up to one of them, so an
/// input whose extent differs would be read past its end. Extents that are
/// the same size parameter are checked by the VM on every call.
void requireSameExtent(const std::string &Op, const char *What,
                       const LoopExpr &X, const LoopExpr &Y) {
  if (!sameExpr(X, Y))
    unsupported("{}: the {} extents are not known to agree", Op, What);
}

/// The extent of a broadcast axis given the extents of two operands (either
/// may be absent).
LoopExpr broadcastPair(const LoopExpr &X, const LoopExpr &Y) {
  if (!X || isIntConst(X, 1))
    return Y ? Y : X;
  if (!Y || isIntConst(Y, 1) || sameExpr(X, Y) ||
      (X->isConst() && Y->isConst()))
    return X;
  if (X->isConst())
    return X;
  if (Y->isConst())
    return Y;
  return select(compare(LoopOp::EQ, X, ic(1)), Y, X);
}

//===----------------------------------------------------------------------===//
// dense(x[..., K], w[N, K]) -> [..., N]
//===----------------------------------------------------------------------===//

LoopExpr denseRule(ComputeContext &Ctx, const Ix &Out) {
  const TensorDesc &X = Ctx.input(0), &W = Ctx.input(1);
  requireFloat("dense", X.dtype);
  if (X.rank() < 1 || W.rank() != 2)
    unsupported("dense: operands of rank {} and {}", X.rank(), W.rank());
  requireSameExtent("dense", "contraction", X.shape.back(), W.shape[1]);
  Ix Row = slice(Out, 0, Out.size() - 1);
  return Ctx.reduce(
      ReduceCombiner::Sum, constOf(0, X.dtype), {X.shape.back()},
      [&](const Ix &V) {
        Ix XI = Row;
        XI.push_back(V[0]);
        return mul(Ctx.read(0, XI), Ctx.read(1, {Out.back(), V[0]}));
      });
}

std::vector<LoopExpr> denseShape(const Attrs &,
                                 const std::vector<TensorDesc> &In) {
  if (In.size() != 2 || In[0].rank() < 1 || In[1].rank() != 2)
    unsupported("dense: unexpected operands");
  Ix S = slice(In[0].shape, 0, In[0].rank() - 1);
  S.push_back(In[1].shape[0]);
  return S;
}

//===----------------------------------------------------------------------===//
// matmul(a, b): NumPy semantics
//===----------------------------------------------------------------------===//

/// The batch extents of a matmul operand (none for a 1-D one).
TensorDesc batchOf(const TensorDesc &T) {
  if (T.rank() < 2)
    return {T.dtype, {}};
  return {T.dtype, slice(T.shape, 0, T.rank() - 2)};
}

void checkMatmulOperands(const TensorDesc &A, const TensorDesc &B) {
  requireCodegenDType("matmul", A.dtype);
  if (A.dtype == DType::Bool)
    unsupported("matmul: dtype bool has no generated code");
  if (A.rank() < 1 || B.rank() < 1)
    unsupported("matmul: operands of rank {} and {}", A.rank(), B.rank());
}

LoopExpr matmulRule(ComputeContext &Ctx, const Ix &Out) {
  const TensorDesc &A = Ctx.input(0), &B = Ctx.input(1);
  checkMatmulOperands(A, B);
  bool VecA = A.rank() == 1, VecB = B.rank() == 1;
  requireSameExtent("matmul", "contraction", A.shape.back(),
                    B.shape[B.rank() - (VecB ? 1 : 2)]);
  size_t NB = Out.size() - (VecA ? 0 : 1) - (VecB ? 0 : 1);
  TensorDesc Batch{A.dtype, slice(Ctx.output().shape, 0, NB)};
  Ix OutBatch = slice(Out, 0, NB);
  Ix AB = broadcastIndex(batchOf(A), Batch, OutBatch);
  Ix BB = broadcastIndex(batchOf(B), Batch, OutBatch);
  // Integers accumulate in wrapping int64, floats in their own dtype.
  DType Acc = isFloat(A.dtype) ? A.dtype : DType::Int64;
  LoopExpr R = Ctx.reduce(
      ReduceCombiner::Sum, constOf(0, Acc), {A.shape.back()}, [&](const Ix &V) {
        Ix AI = AB, BI = BB;
        if (!VecA)
          AI.push_back(Out[NB]);
        AI.push_back(V[0]);
        BI.push_back(V[0]);
        if (!VecB)
          BI.push_back(Out.back());
        return mul(cast(Ctx.read(0, AI), Acc), cast(Ctx.read(1, BI), Acc));
      });
  return cast(R, A.dtype);
}

std::vector<LoopExpr> matmulShape(const Attrs &,
                                  const std::vector<TensorDesc> &In) {
  if (In.size() != 2)
    unsupported("matmul: {} operands", In.size());
  checkMatmulOperands(In[0], In[1]);
  TensorDesc BA = batchOf(In[0]), BB = batchOf(In[1]);
  size_t R = std::max(BA.rank(), BB.rank());
  Ix S;
  for (size_t D = 0; D < R; ++D) {
    auto At = [&](const TensorDesc &T) -> LoopExpr {
      return D + T.rank() >= R ? T.shape[D + T.rank() - R] : nullptr;
    };
    S.push_back(broadcastPair(At(BA), At(BB)));
  }
  if (In[0].rank() > 1)
    S.push_back(In[0].shape[In[0].rank() - 2]);
  if (In[1].rank() > 1)
    S.push_back(In[1].shape.back());
  return S;
}

//===----------------------------------------------------------------------===//
// Sliding windows over x[N, C, D1..Dn] (conv and the pools), with the
// arithmetic of the reference kernel (src/kernels/ops/NN.cc makeWindow).
//===----------------------------------------------------------------------===//

/// Symbolic integers for windowAxis (src/kernels/WindowGeometry.h).
struct LoopArith {
  using Int = LoopExpr;
  static LoopExpr c(int64_t V) { return ic(V); }
  // The shorthands of LoopIR.h.
  static constexpr auto add = &codegen::add, sub = &codegen::sub,
                        mul = &codegen::mul, div = &codegen::div,
                        max = &codegen::imax;
  static LoopExpr selectLT(LoopExpr A, LoopExpr B, LoopExpr Then,
                           LoopExpr Else) {
    return select(lt(A, B), Then, Else);
  }
};

struct Window {
  size_t rank = 0;
  Ix in, kernel;
  std::vector<int64_t> strides, dilations;
  Ix padBegin, padEnd, out;
  bool ceil = false;
  // Without pads (and without ceil_mode's partial windows) every window lies
  // inside the input: no mask, so the contraction stays a plain load.
  bool needsLowMask(size_t D) const { return !isIntConst(padBegin[D], 0); }
  bool needsHighMask(size_t D) const {
    return ceil || !isIntConst(padEnd[D], 0);
  }
  bool masked() const {
    for (size_t D = 0; D < rank; ++D)
      if (needsLowMask(D) || needsHighMask(D))
        return true;
    return false;
  }
};

std::vector<int64_t> spatialInts(const std::string &Op, const Attrs &A,
                                 const std::string &Name, size_t Len,
                                 int64_t Default, int64_t Min) {
  try {
    return windowInts(Op, A, Name, Len, Default, Min);
  } catch (const Error &E) {
    unsupported("{}", E.what());
  }
}

Window planWindow(const std::string &Op, const Attrs &A, const TensorDesc &X,
                  Ix Kernel, bool AllowCeil) {
  if (X.rank() < 3)
    unsupported("{}: input of rank {} (expected [N, C, D1, ...])", Op,
                X.rank());
  Window W;
  W.rank = X.rank() - 2;
  if (Kernel.size() != W.rank)
    unsupported("{}: {} kernel extents for {} spatial axes", Op, Kernel.size(),
                W.rank);
  W.in = slice(X.shape, 2, X.rank());
  W.kernel = std::move(Kernel);
  W.strides = spatialInts(Op, A, "strides", W.rank, 1, 1);
  W.dilations = spatialInts(Op, A, "dilations", W.rank, 1, 1);
  std::vector<int64_t> Pads = spatialInts(Op, A, "pads", 2 * W.rank, 0, 0);
  OpAttrs Schema(Op, A);
  std::optional<AutoPad> Mode = parseAutoPad(Schema.getString("auto_pad"));
  if (!Mode)
    unsupported("{}: auto_pad '{}'", Op, Schema.getString("auto_pad"));
  W.ceil = AllowCeil && Schema.getInt("ceil_mode") != 0;
  for (size_t D = 0; D < W.rank; ++D) {
    WindowAxis<LoopArith> G = windowAxis<LoopArith>(
        W.in[D], W.kernel[D], W.strides[D], W.dilations[D], Pads[D],
        Pads[D + W.rank], *Mode, W.ceil);
    W.padBegin.push_back(G.padBegin);
    W.padEnd.push_back(G.padEnd);
    W.out.push_back(G.out);
  }
  return W;
}

/// The output extent along spatial axis D.
LoopExpr outExtent(const Window &W, size_t D) { return W.out[D]; }

/// One window position at one output position.
struct Tap {
  Ix coords;       // input coordinates, clamped into the input
  LoopExpr inside; // all coordinates inside the input; null when always
  LoopExpr inPad;  // all inside the padded input; null when always
};

/// The window position Pos (kernel indices) of the output position OutSp
/// (spatial output indices).
Tap windowTap(const Window &W, const Ix &OutSp, const Ix &Pos) {
  Tap T;
  for (size_t D = 0; D < W.rank; ++D) {
    LoopExpr I = sub(
        add(mul(OutSp[D], ic(W.strides[D])), mul(Pos[D], ic(W.dilations[D]))),
        W.padBegin[D]);
    LoopExpr Inside;
    if (W.needsLowMask(D))
      Inside = compare(LoopOp::GE, I, ic(0));
    if (W.needsHighMask(D))
      Inside = both(Inside, compare(LoopOp::LT, I, W.in[D]));
    T.coords.push_back(Inside ? select(Inside, I, ic(0)) : I);
    T.inside = both(T.inside, Inside);
    // Window positions never start before the left pad.
    if (W.ceil)
      T.inPad =
          both(T.inPad, compare(LoopOp::LT, I, add(W.in[D], W.padEnd[D])));
  }
  return T;
}

/// Pools' kernel extents (attribute kernel_shape).
Ix poolKernel(const std::string &Op, const Attrs &A) {
  Ix K;
  for (int64_t E : A.getInts("kernel_shape")) {
    if (E < 1)
      unsupported("{}: kernel extent {}", Op, E);
    K.push_back(ic(E));
  }
  return K;
}

/// [N, C or M, out...] of a windowed operator.
Ix windowShape(const TensorDesc &X, LoopExpr Channels, const Window &W) {
  Ix S{X.shape[0], std::move(Channels)};
  for (size_t D = 0; D < W.rank; ++D)
    S.push_back(outExtent(W, D));
  return S;
}

//===----------------------------------------------------------------------===//
// conv(x[N, C, D...], w[M, C/group, k...][, b[M]])
//===----------------------------------------------------------------------===//

Window convWindow(const Attrs &A, const TensorDesc &X, const TensorDesc &Wt) {
  requireFloat("conv", X.dtype);
  if (Wt.rank() != X.rank())
    unsupported("conv: weight of rank {} for input of rank {}", Wt.rank(),
                X.rank());
  if (OpAttrs("conv", A).getInt("group") < 1)
    unsupported("conv: group {}", OpAttrs("conv", A).getInt("group"));
  return planWindow("conv", A, X, slice(Wt.shape, 2, Wt.rank()), false);
}

LoopExpr convRule(ComputeContext &Ctx, const Ix &Out) {
  const TensorDesc &X = Ctx.input(0), &Wt = Ctx.input(1);
  Window W = convWindow(Ctx.attrs(), X, Wt);
  int64_t Group = OpAttrs("conv", Ctx.attrs()).getInt("group");
  LoopExpr CG = Wt.shape[1]; // input channels per group
  requireSameExtent("conv", "input channel", X.shape[1], mul(CG, ic(Group)));
  if (Ctx.numInputs() == 3)
    requireSameExtent("conv", "output channel", Ctx.input(2).shape[0],
                      Wt.shape[0]);
  // The first input channel of output channel Out[1]'s group.
  LoopExpr Chan0 =
      Group == 1 ? ic(0) : mul(div(Out[1], div(Wt.shape[0], ic(Group))), CG);
  Ix Extents{CG};
  Extents.insert(Extents.end(), W.kernel.begin(), W.kernel.end());
  Ix OutSp = slice(Out, 2, Out.size());
  DType T = X.dtype;
  LoopExpr R =
      Ctx.reduce(ReduceCombiner::Sum, constOf(0, T), Extents, [&](const Ix &V) {
        Ix Pos = slice(V, 1, V.size());
        Tap P = windowTap(W, OutSp, Pos);
        Ix XI{Out[0], add(Chan0, V[0])}, WI{Out[1], V[0]};
        XI.insert(XI.end(), P.coords.begin(), P.coords.end());
        WI.insert(WI.end(), Pos.begin(), Pos.end());
        LoopExpr Prod = mul(Ctx.read(0, XI), Ctx.read(1, WI));
        return P.inside ? select(P.inside, Prod, constOf(0, T)) : Prod;
      });
  if (Ctx.numInputs() == 3)
    R = add(R, Ctx.read(2, {Out[1]}));
  return R;
}

std::vector<LoopExpr> convShape(const Attrs &A,
                                const std::vector<TensorDesc> &In) {
  if (In.size() < 2)
    unsupported("conv: {} operands", In.size());
  return windowShape(In[0], In[1].shape[0], convWindow(A, In[0], In[1]));
}

//===----------------------------------------------------------------------===//
// max_pool, avg_pool, lp_pool
//===----------------------------------------------------------------------===//

enum class Pool { Max, Avg, Lp };

const char *poolName(Pool P) {
  return P == Pool::Max ? "max_pool" : P == Pool::Avg ? "avg_pool" : "lp_pool";
}

template <Pool P> Window poolWindow(const Attrs &A, const TensorDesc &X) {
  std::string Op = poolName(P);
  if (P == Pool::Max) {
    requireCodegenDType(Op, X.dtype);
    if (!isFloat(X.dtype) && X.dtype != DType::Int8 && X.dtype != DType::UInt8)
      unsupported("max_pool: dtype {}", dtypeName(X.dtype));
    if (OpAttrs(Op, A).getInt("with_indices") != 0)
      unsupported("max_pool: with_indices (a second result)");
  } else {
    requireFloat(Op, X.dtype);
  }
  return planWindow(Op, A, X, poolKernel(Op, A), true);
}

template <Pool P> LoopExpr poolRule(ComputeContext &Ctx, const Ix &Out) {
  const TensorDesc &X = Ctx.input(0);
  const Attrs &A = Ctx.attrs();
  Window W = poolWindow<P>(A, X);
  DType T = X.dtype;
  Ix OutSp = slice(Out, 2, Out.size());
  // The value at window position Pos, or Pad when it lies in the padding.
  auto At = [&](const Ix &Pos, LoopExpr Pad,
                const std::function<LoopExpr(LoopExpr)> &F) {
    Tap Tp = windowTap(W, OutSp, Pos);
    Ix XI{Out[0], Out[1]};
    XI.insert(XI.end(), Tp.coords.begin(), Tp.coords.end());
    LoopExpr V = F(Ctx.read(0, XI));
    return Tp.inside ? select(Tp.inside, V, Pad) : V;
  };
  auto Id = [](LoopExpr V) { return V; };
  if (P == Pool::Max)
    return Ctx.reduce(ReduceCombiner::Max, lowest(T), W.kernel,
                      [&](const Ix &V) { return At(V, lowest(T), Id); });
  if (P == Pool::Lp) {
    int64_t Pw = OpAttrs("lp_pool", A).getInt("p");
    if (Pw < 1)
      unsupported("lp_pool: p {}", Pw);
    LoopExpr E = floatConst((double)Pw, T);
    LoopExpr S = Ctx.reduce(
        ReduceCombiner::Sum, constOf(0, T), W.kernel, [&](const Ix &V) {
          return At(V, constOf(0, T), [&](LoopExpr X) {
            return binary(LoopOp::Pow, unary(LoopOp::Abs, X), E);
          });
        });
    return binary(LoopOp::Pow, S, floatConst(1.0 / (double)Pw, T));
  }
  LoopExpr Sum =
      Ctx.reduce(ReduceCombiner::Sum, constOf(0, T), W.kernel,
                 [&](const Ix &V) { return At(V, constOf(0, T), Id); });
  // The divisor: window positions inside the input, or inside the padded
  // input with count_include_pad.
  bool IncludePad = OpAttrs("avg_pool", A).getInt("count_include_pad") != 0;
  LoopExpr Count;
  // Windows reach past the padded input only under ceil_mode.
  if (!(IncludePad ? W.ceil : W.masked())) {
    Count = cast(numElements(W.kernel), T);
  } else {
    Count = Ctx.reduce(ReduceCombiner::Sum, constOf(0, T), W.kernel,
                       [&](const Ix &V) {
                         Tap Tp = windowTap(W, OutSp, V);
                         return select(IncludePad ? Tp.inPad : Tp.inside,
                                       constOf(1, T), constOf(0, T));
                       });
  }
  return binary(LoopOp::Div, Sum, Count);
}

template <Pool P>
std::vector<LoopExpr> poolShape(const Attrs &A,
                                const std::vector<TensorDesc> &In) {
  if (In.size() != 1)
    unsupported("{}: {} operands", poolName(P), In.size());
  return windowShape(In[0], In[0].shape[1], poolWindow<P>(A, In[0]));
}

//===----------------------------------------------------------------------===//
// global_avg_pool, global_max_pool: over all spatial axes, kept as 1s.
//===----------------------------------------------------------------------===//

template <bool IsMax>
LoopExpr globalPoolRule(ComputeContext &Ctx, const Ix &Out) {
  const TensorDesc &X = Ctx.input(0);
  requireFloat(Ctx.opName(), X.dtype);
  if (X.rank() < 3)
    unsupported("{}: input of rank {}", Ctx.opName(), X.rank());
  Ix Spatial = slice(X.shape, 2, X.rank());
  DType T = X.dtype;
  auto Body = [&](const Ix &V) {
    Ix XI{Out[0], Out[1]};
    XI.insert(XI.end(), V.begin(), V.end());
    return Ctx.read(0, XI);
  };
  if (IsMax)
    return Ctx.reduce(ReduceCombiner::Max, lowest(T), Spatial, Body);
  LoopExpr S = Ctx.reduce(ReduceCombiner::Sum, constOf(0, T), Spatial, Body);
  return binary(LoopOp::Div, S, cast(numElements(Spatial), T));
}

std::vector<LoopExpr> globalPoolShape(const Attrs &,
                                      const std::vector<TensorDesc> &In) {
  if (In.size() != 1 || In[0].rank() < 3)
    unsupported("global pool: unexpected operands");
  Ix S{In[0].shape[0], In[0].shape[1]};
  S.resize(In[0].rank(), ic(1));
  return S;
}

} // namespace

RIVET_REGISTER_COMPUTE_RULE("dense", denseRule);
RIVET_REGISTER_SHAPE_RULE("dense", denseShape);
RIVET_REGISTER_COMPUTE_RULE("matmul", matmulRule);
RIVET_REGISTER_SHAPE_RULE("matmul", matmulShape);
RIVET_REGISTER_COMPUTE_RULE("conv", convRule);
RIVET_REGISTER_SHAPE_RULE("conv", convShape);
RIVET_REGISTER_COMPUTE_RULE("max_pool", poolRule<Pool::Max>);
RIVET_REGISTER_SHAPE_RULE("max_pool", poolShape<Pool::Max>);
RIVET_REGISTER_COMPUTE_RULE("avg_pool", poolRule<Pool::Avg>);
RIVET_REGISTER_SHAPE_RULE("avg_pool", poolShape<Pool::Avg>);
RIVET_REGISTER_COMPUTE_RULE("lp_pool", poolRule<Pool::Lp>);
RIVET_REGISTER_SHAPE_RULE("lp_pool", poolShape<Pool::Lp>);
RIVET_REGISTER_COMPUTE_RULE("global_avg_pool", globalPoolRule<false>);
RIVET_REGISTER_SHAPE_RULE("global_avg_pool", globalPoolShape);
RIVET_REGISTER_COMPUTE_RULE("global_max_pool", globalPoolRule<true>);
RIVET_REGISTER_SHAPE_RULE("global_max_pool", globalPoolShape);

} // namespace rivet::codegen
