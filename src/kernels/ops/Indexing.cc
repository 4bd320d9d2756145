//===- Indexing.cc - Gather, scatter and index-producing operators --------===//
//
// gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot(_dyn),
// compress, nonzero and reverse_sequence. Indices are read as int64 and
// checked (negative ones count from the end); an out-of-range index is a
// rivet::Error, never an out-of-bounds access. compress, nonzero and
// one_hot_dyn have data-dependent output shapes.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>

namespace rivet::kernels {
namespace {

/// Normalizes index I into [0, D) or throws naming the operator.
int64_t checkIndex(const char *Op, int64_t I, int64_t D, int64_t Axis) {
  int64_t J = I < 0 ? I + D : I;
  if (J < 0 || J >= D)
    fail("{}: index {} is out of range for axis {} of extent {}", Op, I, Axis,
         D);
  return J;
}

/// Multi-index of flat offset O in shape S.
void unravel(int64_t O, const Shape &S, std::vector<int64_t> &Idx) {
  for (size_t D = S.size(); D-- > 0;) {
    Idx[D] = S[D] == 0 ? 0 : O % S[D];
    O = S[D] == 0 ? 0 : O / S[D];
  }
}

//===----------------------------------------------------------------------===//
// gather_elements
//===----------------------------------------------------------------------===//

int64_t elementsAxis(const char *Op, const Tensor &Data, const Tensor &Idx,
                     const Attrs &A) {
  checkDType(Op, "indices", Idx.dtype(), DTypeClass::Index);
  if (Data.rank() == 0)
    fail("{}: data must have rank >= 1, got a scalar", Op);
  if (Idx.rank() != Data.rank())
    fail("{}: indices {} must have the rank of data {}", Op,
         shapeToString(Idx.shape()), shapeToString(Data.shape()));
  return opAxis(Op, attrInt(Op, A, "axis"), Data.rank());
}

std::vector<TensorMeta> gatherElementsShape(const std::vector<Tensor> &In,
                                            const Attrs &A) {
  checkArity("gather_elements", In, 2);
  int64_t Axis = elementsAxis("gather_elements", In[0], In[1], A);
  for (int64_t D = 0; D < In[0].rank(); ++D)
    if (D != Axis && In[1].dim(D) > In[0].dim(D))
      fail("gather_elements: indices {} exceed data {} on axis {}",
           shapeToString(In[1].shape()), shapeToString(In[0].shape()), D);
  return {{In[1].shape(), In[0].dtype()}};
}

void gatherElementsKernel(const std::vector<Tensor> &In,
                          std::vector<Tensor> &Out, const Attrs &A) {
  const Tensor &X = In[0];
  int64_t Axis = elementsAxis("gather_elements", X, In[1], A);
  std::vector<int64_t> Idx = In[1].toIntVector();
  std::vector<int64_t> C = contiguousStrides(X.shape());
  std::vector<int64_t> Pos(X.rank());
  size_t ESize = dtypeSize(X.dtype());
  const char *Src = static_cast<const char *>(X.rawData());
  char *Dst = static_cast<char *>(Out[0].rawData());
  for (int64_t O = 0; O < (int64_t)Idx.size(); ++O) {
    unravel(O, In[1].shape(), Pos);
    Pos[Axis] = checkIndex("gather_elements", Idx[O], X.dim(Axis), Axis);
    int64_t Off = 0;
    for (int64_t D = 0; D < X.rank(); ++D)
      Off += Pos[D] * C[D];
    std::memcpy(Dst + O * ESize, Src + Off * ESize, ESize);
  }
}

//===----------------------------------------------------------------------===//
// gather_nd
//===----------------------------------------------------------------------===//

struct NdPlan {
  int64_t Batch = 0, Depth = 0; // batch dims, index tuple length
  int64_t NumBatches = 1, PerBatch = 1, Slice = 1;
  Shape Out;
};

NdPlan planNd(const char *Op, const Shape &Data, const Tensor &Idx,
              int64_t Batch) {
  checkDType(Op, "indices", Idx.dtype(), DTypeClass::Index);
  int64_t R = (int64_t)Data.size(), Q = Idx.rank();
  if (Q < 1)
    fail("{}: indices must have rank >= 1, got a scalar", Op);
  if (Batch < 0 || Batch >= std::min(R, Q))
    fail("{}: batch_dims {} must be in [0, min(rank(data), rank(indices)))", Op,
         Batch);
  NdPlan P;
  P.Batch = Batch;
  P.Depth = Idx.shape().back();
  if (P.Depth < 1 || P.Depth > R - Batch)
    fail("{}: the last dimension of indices {} must be in [1, {}] for data {}",
         Op, shapeToString(Idx.shape()), R - Batch, shapeToString(Data));
  for (int64_t D = 0; D < Batch; ++D)
    if (Idx.shape()[D] != Data[D])
      fail("{}: batch dimension {} differs: data {} and indices {}", Op, D,
           shapeToString(Data), shapeToString(Idx.shape()));
  P.NumBatches = prodRange(Data, 0, Batch);
  P.PerBatch = prodRange(Idx.shape(), Batch, Q - 1);
  P.Slice = prodRange(Data, Batch + P.Depth, R);
  P.Out.assign(Idx.shape().begin(), Idx.shape().end() - 1);
  P.Out.insert(P.Out.end(), Data.begin() + Batch + P.Depth, Data.end());
  return P;
}

/// Calls Fn(batch-major tuple number, element offset of the data slice).
template <typename F>
void forEachNdTuple(const char *Op, const Shape &Data, const Tensor &Idx,
                    const NdPlan &P, F &&Fn) {
  std::vector<int64_t> I = Idx.toIntVector();
  std::vector<int64_t> C = contiguousStrides(Data);
  for (int64_t B = 0; B < P.NumBatches; ++B)
    for (int64_t T = 0; T < P.PerBatch; ++T) {
      int64_t N = B * P.PerBatch + T;
      int64_t Off = B * (P.Batch ? C[P.Batch - 1] : 0);
      for (int64_t K = 0; K < P.Depth; ++K) {
        int64_t Ax = P.Batch + K;
        Off += checkIndex(Op, I[N * P.Depth + K], Data[Ax], Ax) * C[Ax];
      }
      Fn(N, Off);
    }
}

std::vector<TensorMeta> gatherNdShape(const std::vector<Tensor> &In,
                                      const Attrs &A) {
  checkArity("gather_nd", In, 2);
  NdPlan P = planNd("gather_nd", In[0].shape(), In[1],
                    attrInt("gather_nd", A, "batch_dims"));
  return {{P.Out, In[0].dtype()}};
}

void gatherNdKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                    const Attrs &A) {
  NdPlan P = planNd("gather_nd", In[0].shape(), In[1],
                    attrInt("gather_nd", A, "batch_dims"));
  size_t Row = (size_t)P.Slice * dtypeSize(In[0].dtype());
  const char *Src = static_cast<const char *>(In[0].rawData());
  char *Dst = static_cast<char *>(Out[0].rawData());
  size_t ESize = dtypeSize(In[0].dtype());
  forEachNdTuple("gather_nd", In[0].shape(), In[1], P,
                 [&](int64_t N, int64_t Off) {
                   std::memcpy(Dst + N * Row, Src + Off * ESize, Row);
                 });
}

//===----------------------------------------------------------------------===//
// scatter_elements and scatter_nd
//===----------------------------------------------------------------------===//

enum class Reduction { None, Add, Mul, Max, Min };

Reduction reductionAttr(const char *Op, const Attrs &A) {
  std::string R = attrString(Op, A, "reduction");
  if (R == "none")
    return Reduction::None;
  if (R == "add")
    return Reduction::Add;
  if (R == "mul")
    return Reduction::Mul;
  if (R == "max")
    return Reduction::Max;
  if (R == "min")
    return Reduction::Min;
  fail("{}: unsupported reduction '{}' (expected none, add, mul, max or min)",
       Op, R);
}

/// Dst = Dst (op) Src for one element, computing in ComputeT.
template <typename E> void combine(E &Dst, const E &Src, Reduction R) {
  using C = ComputeT<E>;
  C A = static_cast<C>(Dst), B = static_cast<C>(Src);
  switch (R) {
  case Reduction::None: Dst = Src; return;
  case Reduction::Add: Dst = static_cast<E>(static_cast<C>(A + B)); return;
  case Reduction::Mul: Dst = static_cast<E>(static_cast<C>(A * B)); return;
  case Reduction::Max: Dst = static_cast<E>(std::max(A, B)); return;
  case Reduction::Min: Dst = static_cast<E>(std::min(A, B)); return;
  }
}

std::vector<TensorMeta> scatterElementsShape(const std::vector<Tensor> &In,
                                             const Attrs &A) {
  checkArity("scatter_elements", In, 3);
  elementsAxis("scatter_elements", In[0], In[1], A);
  checkSameDType("scatter_elements", "data", In[0], "updates", In[2]);
  if (In[1].shape() != In[2].shape())
    fail("scatter_elements: indices {} and updates {} must have one shape",
         shapeToString(In[1].shape()), shapeToString(In[2].shape()));
  for (int64_t D = 0; D < In[0].rank(); ++D)
    if (In[1].dim(D) > In[0].dim(D) && In[0].rank() > 0)
      fail("scatter_elements: indices {} exceed data {} on axis {}",
           shapeToString(In[1].shape()), shapeToString(In[0].shape()), D);
  reductionAttr("scatter_elements", A);
  return {{In[0].shape(), In[0].dtype()}};
}

void scatterElementsKernel(const std::vector<Tensor> &In,
                           std::vector<Tensor> &Out, const Attrs &A) {
  const Tensor &X = In[0];
  int64_t Axis = elementsAxis("scatter_elements", X, In[1], A);
  Reduction R = reductionAttr("scatter_elements", A);
  if (X.nbytes())
    std::memcpy(Out[0].rawData(), X.rawData(), X.nbytes());
  std::vector<int64_t> Idx = In[1].toIntVector();
  std::vector<int64_t> C = contiguousStrides(X.shape());
  std::vector<int64_t> Pos(X.rank());
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E *D = Out[0].data<E>();
    const E *U = In[2].data<E>();
    for (int64_t O = 0; O < (int64_t)Idx.size(); ++O) {
      unravel(O, In[1].shape(), Pos);
      Pos[Axis] = checkIndex("scatter_elements", Idx[O], X.dim(Axis), Axis);
      int64_t Off = 0;
      for (int64_t K = 0; K < X.rank(); ++K)
        Off += Pos[K] * C[K];
      combine(D[Off], U[O], R);
    }
  });
}

std::vector<TensorMeta> scatterNdShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  checkArity("scatter_nd", In, 3);
  checkSameDType("scatter_nd", "data", In[0], "updates", In[2]);
  NdPlan P = planNd("scatter_nd", In[0].shape(), In[1], 0);
  if (In[2].shape() != P.Out)
    fail("scatter_nd: updates must have shape {}, got {}", shapeToString(P.Out),
         shapeToString(In[2].shape()));
  reductionAttr("scatter_nd", A);
  return {{In[0].shape(), In[0].dtype()}};
}

void scatterNdKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  const Tensor &X = In[0];
  NdPlan P = planNd("scatter_nd", X.shape(), In[1], 0);
  Reduction R = reductionAttr("scatter_nd", A);
  if (X.nbytes())
    std::memcpy(Out[0].rawData(), X.rawData(), X.nbytes());
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E *D = Out[0].data<E>();
    const E *U = In[2].data<E>();
    forEachNdTuple("scatter_nd", X.shape(), In[1], P,
                   [&](int64_t N, int64_t Off) {
                     for (int64_t K = 0; K < P.Slice; ++K)
                       combine(D[Off + K], U[N * P.Slice + K], R);
                   });
  });
}

//===----------------------------------------------------------------------===//
// one_hot (depth as attribute) and one_hot_dyn (depth as input)
//===----------------------------------------------------------------------===//

Shape oneHotShapeFor(const char *Op, const Tensor &Idx, const Tensor &Values,
                     int64_t Depth, const Attrs &A) {
  checkDType(Op, "indices", Idx.dtype(), DTypeClass::Numeric);
  if (Values.numel() != 2 || Values.rank() > 1)
    fail("{}: values must be a 1-D tensor [off, on], got shape {}", Op,
         shapeToString(Values.shape()));
  if (Depth < 1)
    fail("{}: depth must be positive, got {}", Op, Depth);
  int64_t R = Idx.rank() + 1, Axis = attrInt(Op, A, "axis");
  Axis = opAxis(Op, Axis, R);
  Shape Out = Idx.shape();
  Out.insert(Out.begin() + Axis, Depth);
  withOp(Op, [&] { return numElements(Out); });
  return Out;
}

void oneHotInto(const char *Op, const Tensor &Idx, const Tensor &Values,
                Tensor &Out, int64_t Depth, const Attrs &A) {
  int64_t R = Idx.rank() + 1;
  int64_t Axis = opAxis(Op, attrInt(Op, A, "axis"), R);
  int64_t Outer = prodRange(Idx.shape(), 0, Axis);
  int64_t Inner = prodRange(Idx.shape(), Axis, Idx.shape().size());
  std::vector<double> I = Idx.toDoubleVector();
  size_t ESize = dtypeSize(Values.dtype());
  const char *V = static_cast<const char *>(Values.rawData());
  char *Dst = static_cast<char *>(Out.rawData());
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t D = 0; D < Depth; ++D)
      for (int64_t J = 0; J < Inner; ++J) {
        // ONNX casts indices to integers; -depth..-1 count from the end.
        double F = std::trunc(I[O * Inner + J]);
        int64_t K = std::fabs(F) < 1e15 ? (int64_t)F : Depth; // "off"
        if (K < 0)
          K += Depth;
        std::memcpy(Dst + ((O * Depth + D) * Inner + J) * ESize,
                    V + (K == D ? ESize : 0), ESize);
      }
}

std::vector<TensorMeta> oneHotShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  checkArity("one_hot", In, 2);
  return {{oneHotShapeFor("one_hot", In[0], In[1],
                          attrInt("one_hot", A, "depth"), A),
           In[1].dtype()}};
}

void oneHotKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  oneHotInto("one_hot", In[0], In[1], Out[0], attrInt("one_hot", A, "depth"),
             A);
}

int64_t depthInput(const Tensor &T) {
  checkDType("one_hot_dyn", "depth", T.dtype(), DTypeClass::Numeric);
  if (T.numel() != 1)
    fail("one_hot_dyn: depth must have one element, got shape {}",
         shapeToString(T.shape()));
  double D = T.elementAsDouble(0);
  if (!std::isfinite(D) || D > 1e15)
    fail("one_hot_dyn: invalid depth {}", D);
  return (int64_t)std::trunc(D);
}

std::vector<TensorMeta> oneHotDynShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  checkArity("one_hot_dyn", In, 3);
  return {{oneHotShapeFor("one_hot_dyn", In[0], In[2], depthInput(In[1]), A),
           In[2].dtype()}};
}

void oneHotDynKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  oneHotInto("one_hot_dyn", In[0], In[2], Out[0], depthInput(In[1]), A);
}

//===----------------------------------------------------------------------===//
// compress and nonzero
//===----------------------------------------------------------------------===//

/// The selected positions along the compressed axis (or the flat input).
std::vector<int64_t> compressPositions(const Tensor &X, const Tensor &Cond,
                                       int64_t Extent) {
  if (Cond.rank() != 1)
    fail("compress: condition must be 1-D, got shape {}",
         shapeToString(Cond.shape()));
  if (!Cond.hasData())
    fail("compress: input 'condition' must hold values");
  std::vector<int64_t> Pos;
  for (int64_t I = 0; I < Cond.numel(); ++I) {
    if (Cond.elementAsDouble(I) == 0)
      continue;
    if (I >= Extent)
      fail("compress: condition selects position {} but the axis has extent "
           "{}",
           I, Extent);
    Pos.push_back(I);
  }
  (void)X;
  return Pos;
}

struct CompressPlan {
  int64_t Axis = -1; // -1: flattened
  std::vector<int64_t> Pos;
  Shape Out;
};

CompressPlan planCompress(const std::vector<Tensor> &In, const Attrs &A) {
  checkArity("compress", In, 2);
  const Tensor &X = In[0];
  CompressPlan P;
  if (A.has("axis")) {
    if (X.rank() == 0)
      fail("compress: cannot compress a scalar along an axis");
    P.Axis = opAxis("compress", attrInt("compress", A, "axis"), X.rank());
    P.Pos = compressPositions(X, In[1], X.dim(P.Axis));
    P.Out = X.shape();
    P.Out[P.Axis] = (int64_t)P.Pos.size();
  } else {
    P.Pos = compressPositions(X, In[1], X.numel());
    P.Out = {(int64_t)P.Pos.size()};
  }
  return P;
}

std::vector<TensorMeta> compressShape(const std::vector<Tensor> &In,
                                      const Attrs &A) {
  return {{planCompress(In, A).Out, In[0].dtype()}};
}

void compressKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                    const Attrs &A) {
  CompressPlan P = planCompress(In, A);
  const Tensor &X = In[0];
  int64_t Outer = 1, Inner = 1, D = X.numel();
  if (P.Axis >= 0) {
    Outer = prodRange(X.shape(), 0, P.Axis);
    Inner = prodRange(X.shape(), P.Axis + 1, X.shape().size());
    D = X.dim(P.Axis);
  }
  size_t Row = (size_t)Inner * dtypeSize(X.dtype());
  const char *Src = static_cast<const char *>(X.rawData());
  char *Dst = static_cast<char *>(Out[0].rawData());
  int64_t N = (int64_t)P.Pos.size();
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t J = 0; J < N; ++J)
      std::memcpy(Dst + (O * N + J) * Row, Src + (O * D + P.Pos[J]) * Row, Row);
}

std::vector<TensorMeta> nonzeroShape(const std::vector<Tensor> &In,
                                     const Attrs &) {
  checkArity("nonzero", In, 1);
  if (!In[0].hasData())
    fail("nonzero: the input must hold values");
  int64_t N = 0;
  for (double V : In[0].toDoubleVector())
    N += V != 0;
  return {{{In[0].rank(), N}, DType::Int64}};
}

void nonzeroKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &) {
  const Tensor &X = In[0];
  std::vector<double> V = X.toDoubleVector();
  int64_t N = Out[0].shape()[1], R = X.rank(), K = 0;
  int64_t *P = Out[0].data<int64_t>();
  std::vector<int64_t> Pos(R);
  for (int64_t O = 0; O < (int64_t)V.size(); ++O) {
    if (V[O] == 0)
      continue;
    unravel(O, X.shape(), Pos);
    for (int64_t D = 0; D < R; ++D)
      P[D * N + K] = Pos[D];
    ++K;
  }
}

//===----------------------------------------------------------------------===//
// reverse_sequence
//===----------------------------------------------------------------------===//

std::pair<int64_t, int64_t> sequenceAxes(const std::vector<Tensor> &In,
                                         const Attrs &A) {
  const char *Op = "reverse_sequence";
  checkArity(Op, In, 2);
  const Tensor &X = In[0];
  if (X.rank() < 2)
    fail("{}: input must have rank >= 2, got shape {}", Op,
         shapeToString(X.shape()));
  int64_t B = opAxis(Op, attrInt(Op, A, "batch_axis"), X.rank());
  int64_t T = opAxis(Op, attrInt(Op, A, "time_axis"), X.rank());
  if (B == T)
    fail("{}: batch_axis and time_axis must differ, both are {}", Op, B);
  checkDType(Op, "sequence_lens", In[1].dtype(), DTypeClass::Index);
  if (In[1].rank() != 1 || In[1].dim(0) != X.dim(B))
    fail("{}: sequence_lens {} must be 1-D with one entry per batch ({})", Op,
         shapeToString(In[1].shape()), X.dim(B));
  return {B, T};
}

std::vector<TensorMeta> reverseSequenceShape(const std::vector<Tensor> &In,
                                             const Attrs &A) {
  sequenceAxes(In, A);
  return {{In[0].shape(), In[0].dtype()}};
}

void reverseSequenceKernel(const std::vector<Tensor> &In,
                           std::vector<Tensor> &Out, const Attrs &A) {
  auto [BAx, TAx] = sequenceAxes(In, A);
  const Tensor &X = In[0];
  std::vector<int64_t> Lens = In[1].toIntVector();
  int64_t TLen = X.dim(TAx);
  for (int64_t L : Lens)
    if (L < 0 || L > TLen)
      fail("reverse_sequence: sequence length {} is out of range [0, {}]", L,
           TLen);
  std::vector<int64_t> C = contiguousStrides(X.shape()), Pos(X.rank());
  size_t ESize = dtypeSize(X.dtype());
  const char *Src = static_cast<const char *>(X.rawData());
  char *Dst = static_cast<char *>(Out[0].rawData());
  for (int64_t O = 0; O < X.numel(); ++O) {
    unravel(O, X.shape(), Pos);
    int64_t L = Lens[Pos[BAx]], T = Pos[TAx];
    int64_t From = O + ((T < L ? L - 1 - T : T) - T) * C[TAx];
    std::memcpy(Dst + O * ESize, Src + From * ESize, ESize);
  }
}

} // namespace

RIVET_REGISTER_KERNEL("gather_elements", gatherElementsKernel,
                      gatherElementsShape, false);
RIVET_REGISTER_KERNEL("gather_nd", gatherNdKernel, gatherNdShape, false);
RIVET_REGISTER_KERNEL("scatter_elements", scatterElementsKernel,
                      scatterElementsShape, false);
RIVET_REGISTER_KERNEL("scatter_nd", scatterNdKernel, scatterNdShape, false);
RIVET_REGISTER_KERNEL("one_hot", oneHotKernel, oneHotShape, false);
RIVET_REGISTER_KERNEL("one_hot_dyn", oneHotDynKernel, oneHotDynShape, true);
RIVET_REGISTER_KERNEL("compress", compressKernel, compressShape, true);
RIVET_REGISTER_KERNEL("nonzero", nonzeroKernel, nonzeroShape, true);
RIVET_REGISTER_KERNEL("reverse_sequence", reverseSequenceKernel,
                      reverseSequenceShape, false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS("gather_elements",
                     {{"axis", AttrKind::Int, false, "the gathered axis", 0}});
RIVET_REGISTER_ATTRS("gather_nd",
                     {{"batch_dims", AttrKind::Int, false,
                       "leading batch axes shared by data and indices", 0}});
RIVET_REGISTER_ATTRS("scatter_elements",
                     {{"axis", AttrKind::Int, false, "the scattered axis", 0},
                      {"reduction", AttrKind::String, false,
                       "none, add, mul, max or min", "none"}});
RIVET_REGISTER_ATTRS("scatter_nd", {{"reduction", AttrKind::String, false,
                                     "none, add, mul, max or min", "none"}});
RIVET_REGISTER_ATTRS("one_hot",
                     {{"depth", AttrKind::Int, true, "extent of the new axis"},
                      {"axis", AttrKind::Int, false, "position of the new axis",
                       -1}});
RIVET_REGISTER_ATTRS("one_hot_dyn", {{"axis", AttrKind::Int, false,
                                      "position of the new axis", -1}});
RIVET_REGISTER_ATTRS("compress", {{"axis", AttrKind::Int, false,
                                   "the axis; absent flattens the input"}});
RIVET_REGISTER_ATTRS("reverse_sequence",
                     {{"batch_axis", AttrKind::Int, false, "the batch axis", 1},
                      {"time_axis", AttrKind::Int, false, "the time axis", 0}});

} // namespace rivet::kernels
