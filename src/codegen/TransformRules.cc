//===- TransformRules.cc - Compute rules of injective operators -----------===//
//
// reshape, flatten, squeeze, unsqueeze, transpose, expand, concatenate,
// stack, strided_slice, take, pad and tile (src/ir/ops/Transform.cc): each
// maps an output index to the input index it copies; shape_of gives its
// input's extents. Where an output element chooses among inputs
// (concatenate, pad) every candidate load uses an index clamped into its
// buffer, so the loads that are not selected stay in bounds. strided_slice
// also has a shape rule: the extents its type leaves unknown (after a
// dynamic reshape) are its input's.
//
//===----------------------------------------------------------------------===//

#include "codegen/ComputeRule.h"
#include "kernels/SliceBounds.h"

#include <algorithm>
#include <limits>

namespace rivet::codegen {
namespace {

using Ix = std::vector<LoopExpr>;

/// Clamps I into [0, Extent - 1] (to 0 for an empty extent).
LoopExpr clampIndex(LoopExpr I, LoopExpr Extent) {
  return imax(imin(I, sub(Extent, ic(1))), ic(0));
}

int64_t normAxis(ComputeContext &Ctx, int64_t Axis, size_t Rank) {
  int64_t R = (int64_t)Rank;
  if (Axis < -R || Axis >= R)
    unsupported("{}: axis {} out of range for rank {}", Ctx.opName(), Axis, R);
  return Axis < 0 ? Axis + R : Axis;
}

void requireData(ComputeContext &Ctx) {
  for (size_t I = 0; I < Ctx.numInputs(); ++I)
    requireCodegenDType(Ctx.opName(), Ctx.input(I).dtype);
}

/// Output index -> input index of a reshape. When the two shapes agree
/// apart from extent-1 axes the index maps axis by axis; otherwise through
/// the flat offset.
LoopExpr reshapeRule(ComputeContext &Ctx, const Ix &Out) {
  requireData(Ctx);
  const TensorDesc &In = Ctx.input(0), &O = Ctx.output();
  std::vector<size_t> InAxes, OutAxes;
  for (size_t D = 0; D < In.rank(); ++D)
    if (!isIntConst(In.shape[D], 1))
      InAxes.push_back(D);
  for (size_t D = 0; D < O.rank(); ++D)
    if (!isIntConst(O.shape[D], 1))
      OutAxes.push_back(D);
  bool Same = InAxes.size() == OutAxes.size();
  for (size_t K = 0; Same && K < InAxes.size(); ++K)
    Same = sameExpr(In.shape[InAxes[K]], O.shape[OutAxes[K]]);
  if (Same) {
    Ix InIx(In.rank(), ic(0));
    for (size_t K = 0; K < InAxes.size(); ++K)
      InIx[InAxes[K]] = Out[OutAxes[K]];
    return Ctx.read(0, InIx);
  }
  return Ctx.read(0, unflattenIndex(flattenIndex(Out, O.shape), In.shape));
}

LoopExpr transposeRule(ComputeContext &Ctx, const Ix &Out) {
  requireData(Ctx);
  size_t R = Ctx.input(0).rank();
  std::vector<int64_t> Axes;
  for (size_t D = 0; D < R; ++D)
    Axes.push_back((int64_t)(R - 1 - D));
  Axes = Ctx.attrs().getInts("axes", Axes);
  if (Axes.size() != R)
    unsupported("transpose: {} axes for rank {}", Axes.size(), R);
  Ix InIx(R);
  for (size_t D = 0; D < R; ++D)
    InIx[(size_t)normAxis(Ctx, Axes[D], R)] = Out[D];
  return Ctx.read(0, InIx);
}

LoopExpr expandRule(ComputeContext &Ctx, const Ix &Out) {
  requireData(Ctx);
  return Ctx.read(0, broadcastIndex(Ctx.input(0), Ctx.output(), Out));
}

LoopExpr concatenateRule(ComputeContext &Ctx, const Ix &Out) {
  requireData(Ctx);
  size_t R = Ctx.output().rank();
  size_t Axis = (size_t)normAxis(Ctx, Ctx.opAttrs().getInt("axis"), R);
  // Offsets of the inputs along the axis; skip statically empty inputs.
  std::vector<std::pair<size_t, LoopExpr>> Parts;
  LoopExpr Offset = ic(0);
  for (size_t K = 0; K < Ctx.numInputs(); ++K) {
    const LoopExpr &E = Ctx.input(K).shape[Axis];
    if (!isIntConst(E, 0))
      Parts.push_back({K, Offset});
    Offset = add(Offset, E);
  }
  if (Parts.empty())
    unsupported("concatenate: every input is empty");
  auto ReadPart = [&](size_t P) {
    auto [K, Off] = Parts[P];
    Ix InIx = Out;
    InIx[Axis] = clampIndex(sub(Out[Axis], Off), Ctx.input(K).shape[Axis]);
    return Ctx.read(K, InIx);
  };
  LoopExpr V = ReadPart(Parts.size() - 1);
  for (size_t P = Parts.size() - 1; P-- > 0;)
    V = select(lt(Out[Axis], Parts[P + 1].second), ReadPart(P), V);
  return V;
}

LoopExpr stackRule(ComputeContext &Ctx, const Ix &Out) {
  requireData(Ctx);
  size_t R = Ctx.output().rank();
  size_t Axis = (size_t)normAxis(Ctx, Ctx.opAttrs().getInt("axis"), R);
  Ix InIx = Out;
  InIx.erase(InIx.begin() + (ptrdiff_t)Axis);
  size_t N = Ctx.numInputs();
  LoopExpr V = Ctx.read(N - 1, InIx);
  for (size_t K = N - 1; K-- > 0;)
    V = select(compare(LoopOp::EQ, Out[Axis], ic((int64_t)K)),
               Ctx.read(K, InIx), V);
  return V;
}

LoopExpr stridedSliceRule(ComputeContext &Ctx, const Ix &Out) {
  requireData(Ctx);
  const TensorDesc &In = Ctx.input(0);
  size_t R = In.rank();
  std::vector<int64_t> Begin = Ctx.attrs().getInts("begin");
  std::vector<int64_t> Strides =
      Ctx.attrs().getInts("strides", std::vector<int64_t>(Begin.size(), 1));
  std::vector<int64_t> Axes;
  for (size_t I = 0; I < Begin.size(); ++I)
    Axes.push_back((int64_t)I);
  Axes = Ctx.attrs().getInts("axes", Axes);
  if (Strides.size() != Begin.size() || Axes.size() != Begin.size())
    unsupported("strided_slice: inconsistent attributes");
  Ix InIx = Out;
  for (size_t I = 0; I < Axes.size(); ++I) {
    size_t Ax = (size_t)normAxis(Ctx, Axes[I], R);
    LoopExpr D = In.shape[Ax];
    int64_t S = Strides[I], B = Begin[I];
    if (S == 0)
      unsupported("strided_slice: stride 0");
    // The reference's start: negative counts from the end, then clamps.
    LoopExpr Start = ic(B);
    if (B < 0)
      Start = select(lt(ic(B), sub(ic(0), D)), ic(-1), add(ic(B), D));
    Start = S > 0 ? imax(imin(Start, D), ic(0))
                  : imax(imin(Start, sub(D, ic(1))), ic(0));
    InIx[Ax] = add(Start, mul(Out[Ax], ic(S)));
  }
  return Ctx.read(0, InIx);
}

/// strided_slice's extents inside a group where its type leaves some
/// unknown: an axis not sliced keeps x's extent, a sliced axis of a known
/// extent has sliceBounds' count, and a whole symbolic axis (begin 0, step
/// 1, end "infinity") keeps it. Any other sliced symbolic axis: not derived.
std::vector<LoopExpr> stridedSliceShape(const Attrs &A,
                                        const std::vector<TensorDesc> &In) {
  const TensorDesc &X = In.at(0);
  int64_t R = (int64_t)X.rank();
  std::vector<int64_t> Begin = A.getInts("begin"), End = A.getInts("end");
  std::vector<int64_t> Strides =
      A.getInts("strides", std::vector<int64_t>(Begin.size(), 1));
  std::vector<int64_t> Axes;
  for (size_t I = 0; I < Begin.size(); ++I)
    Axes.push_back((int64_t)I);
  Axes = A.getInts("axes", Axes);
  if (End.size() != Begin.size() || Strides.size() != Begin.size() ||
      Axes.size() != Begin.size())
    return {};
  std::vector<LoopExpr> Out = X.shape;
  for (size_t I = 0; I < Axes.size(); ++I) {
    int64_t Ax = Axes[I] < 0 ? Axes[I] + R : Axes[I];
    if (Ax < 0 || Ax >= R || Strides[I] == 0)
      return {};
    const LoopExpr &D = X.shape[(size_t)Ax];
    if (D->isConst())
      Out[(size_t)Ax] =
          ic(sliceBounds(D->intValue, Begin[I], End[I], Strides[I]).count);
    else if (Begin[I] != 0 || Strides[I] != 1 ||
             End[I] < std::numeric_limits<int32_t>::max())
      return {};
  }
  return Out;
}

/// shape_of(x; start, end): element i is extent start + i of x, read from
/// the kernel's size parameters (x's data is never loaded).
LoopExpr shapeOfRule(ComputeContext &Ctx, const Ix &Out) {
  const TensorDesc &X = Ctx.input(0);
  if (Ctx.output().dtype != DType::Int64 || Out.size() != 1)
    unsupported("shape_of: a rank-{} {} result", Out.size(),
                dtypeName(Ctx.output().dtype));
  int64_t R = (int64_t)X.rank();
  auto Clamp = [R](int64_t I) {
    return std::min(std::max<int64_t>(I < 0 ? I + R : I, 0), R);
  };
  int64_t B = Clamp(Ctx.opAttrs().getInt("start"));
  // An absent end is the rank, which the schema cannot know.
  int64_t E = Clamp(Ctx.attrs().getInt("end", R));
  if (E <= B)
    return ic(0); // an empty result: never evaluated
  LoopExpr V = X.shape[(size_t)(E - 1)];
  for (int64_t D = E - 2; D >= B; --D)
    V = select(compare(LoopOp::EQ, Out[0], ic(D - B)), X.shape[(size_t)D], V);
  return V;
}

LoopExpr takeRule(ComputeContext &Ctx, const Ix &Out) {
  requireData(Ctx);
  const TensorDesc &X = Ctx.input(0), &Idx = Ctx.input(1);
  if (isFloat(Idx.dtype) || Idx.dtype == DType::Bool)
    unsupported("take: indices of dtype {}", dtypeName(Idx.dtype));
  size_t RI = Idx.rank();
  auto IndexAt = [&](const Ix &IdxIx, LoopExpr Extent) {
    LoopExpr I = cast(Ctx.read(1, IdxIx), DType::Int64);
    // An out-of-range index is an error in the reference kernel, which a
    // generated kernel cannot report: only an index known (a constant, and
    // a constant extent) to be in range is generated; indices from data
    // keep the builtin kernel, which checks them.
    if (!I->isConst() || !Extent->isConst())
      unsupported("take: indices from data (range checked at run time)");
    int64_t V = I->intValue, N = Extent->intValue;
    if (V < -N || V >= N)
      unsupported("take: index {} out of range for extent {}", V, N);
    return ic(V < 0 ? V + N : V);
  };
  if (!Ctx.attrs().has("axis")) {
    LoopExpr Flat = IndexAt(Out, numElements(X.shape));
    return Ctx.read(0, unflattenIndex(Flat, X.shape));
  }
  size_t Axis = (size_t)normAxis(Ctx, Ctx.attrs().getInt("axis"), X.rank());
  Ix IdxIx(Out.begin() + (ptrdiff_t)Axis, Out.begin() + (ptrdiff_t)(Axis + RI));
  Ix InIx(Out.begin(), Out.begin() + (ptrdiff_t)Axis);
  InIx.push_back(IndexAt(IdxIx, X.shape[Axis]));
  InIx.insert(InIx.end(), Out.begin() + (ptrdiff_t)(Axis + RI), Out.end());
  return Ctx.read(0, InIx);
}

LoopExpr padRule(ComputeContext &Ctx, const Ix &Out) {
  requireData(Ctx);
  const TensorDesc &In = Ctx.input(0);
  size_t R = In.rank();
  std::vector<int64_t> Pads = Ctx.attrs().getInts("pads");
  std::string Mode = Ctx.opAttrs().getString("mode");
  std::vector<int64_t> Axes;
  for (size_t D = 0; D < R; ++D)
    Axes.push_back((int64_t)D);
  Axes = Ctx.attrs().getInts("axes", Axes);
  if (Pads.size() != 2 * Axes.size())
    unsupported("pad: {} pads for {} axes", Pads.size(), Axes.size());
  if (Mode != "constant" && Mode != "reflect" && Mode != "edge" &&
      Mode != "wrap")
    unsupported("pad: mode '{}'", Mode);
  std::vector<int64_t> Begin(R, 0);
  for (size_t I = 0; I < Axes.size(); ++I)
    Begin[(size_t)normAxis(Ctx, Axes[I], R)] = Pads[I];
  Ix InIx(R);
  LoopExpr Inside = intConst(1, DType::Bool);
  for (size_t D = 0; D < R; ++D) {
    LoopExpr E = In.shape[D];
    LoopExpr I = sub(Out[D], ic(Begin[D]));
    if (Begin[D] == 0 && sameExpr(E, Ctx.output().shape[D])) {
      InIx[D] = I;
      continue;
    }
    if (Mode == "constant") {
      Inside =
          binary(LoopOp::And, Inside,
                 binary(LoopOp::And, compare(LoopOp::GE, I, ic(0)), lt(I, E)));
      InIx[D] = clampIndex(I, E);
    } else if (Mode == "edge") {
      InIx[D] = clampIndex(I, E);
    } else if (Mode == "wrap") {
      // The data repeats with period E.
      LoopExpr Period = imax(E, ic(1));
      LoopExpr M = binary(LoopOp::Rem, I, Period);
      InIx[D] = clampIndex(select(lt(M, ic(0)), add(M, Period), M), E);
    } else {
      // Reflect without repeating the edge; the period is 2 * (E - 1).
      LoopExpr Period = imax(mul(ic(2), sub(E, ic(1))), ic(1));
      LoopExpr M = binary(LoopOp::Rem, I, Period);
      M = select(lt(M, ic(0)), add(M, Period), M);
      M = select(lt(M, E), M, sub(Period, M));
      InIx[D] = clampIndex(M, E);
    }
  }
  LoopExpr V = Ctx.read(0, InIx);
  if (Mode != "constant")
    return V;
  double Fill = Ctx.opAttrs().getFloat("value");
  return select(Inside, V, constOf(Fill, In.dtype));
}

LoopExpr tileRule(ComputeContext &Ctx, const Ix &Out) {
  requireData(Ctx);
  const TensorDesc &In = Ctx.input(0);
  Ix InIx(In.rank());
  for (size_t D = 0; D < In.rank(); ++D)
    InIx[D] = sameExpr(In.shape[D], Ctx.output().shape[D])
                  ? Out[D]
                  : binary(LoopOp::Rem, Out[D], imax(In.shape[D], ic(1)));
  return Ctx.read(0, InIx);
}

} // namespace

RIVET_REGISTER_COMPUTE_RULE("shape_of", shapeOfRule);
RIVET_REGISTER_COMPUTE_RULE("reshape", reshapeRule);
RIVET_REGISTER_COMPUTE_RULE("flatten", reshapeRule);
RIVET_REGISTER_COMPUTE_RULE("squeeze", reshapeRule);
RIVET_REGISTER_COMPUTE_RULE("unsqueeze", reshapeRule);
RIVET_REGISTER_COMPUTE_RULE("transpose", transposeRule);
RIVET_REGISTER_COMPUTE_RULE("expand", expandRule);
RIVET_REGISTER_COMPUTE_RULE("concatenate", concatenateRule);
RIVET_REGISTER_COMPUTE_RULE("stack", stackRule);
RIVET_REGISTER_COMPUTE_RULE("strided_slice", stridedSliceRule);
RIVET_REGISTER_SHAPE_RULE("strided_slice", stridedSliceShape);
RIVET_REGISTER_COMPUTE_RULE("take", takeRule);
RIVET_REGISTER_COMPUTE_RULE("pad", padRule);
RIVET_REGISTER_COMPUTE_RULE("tile", tileRule);

} // namespace rivet::codegen
