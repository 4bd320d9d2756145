//===- Transform.cc - Shape manipulation operators ------------------------===//
//
// reshape, transpose, concatenate, stack, split, strided_slice, take,
// squeeze, unsqueeze, flatten, expand, tile, pad, depth_to_space and
// space_to_depth, plus the data-dependent *_dyn variants that read a shape,
// axes, starts/ends or repeats from an input tensor. All of them move bytes
// without looking at values (pad's fill value aside), so the kernels work on
// element sizes rather than dtypes.
//
//===----------------------------------------------------------------------===//
#include "kernels/NativeKernelAbi.h"
#include "kernels/ReshapeDims.h"
#include "kernels/SliceBounds.h"
#include "kernels/SplitParts.h"
#include "kernels/Threading.h"
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <optional>
#include <span>

namespace rivet::kernels {
namespace {

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

/// NewShape as a Shape, for messages.
Shape listShape(std::span<const int64_t> List) {
  return Shape(List.begin(), List.end());
}

Shape reshapeTarget(const Shape &In, std::span<const int64_t> NewShape) {
  Shape Out(NewShape.size());
  int64_t Infer = -1, Known = 1;
  for (size_t I = 0; I < NewShape.size(); ++I) {
    int64_t D = NewShape[I];
    if (D == 0) {
      if (I >= In.size())
        fail("reshape: newshape {} copies dimension {} (0) but the input {} "
             "has rank {}",
             shapeToString(listShape(NewShape)), I, shapeToString(In),
             In.size());
      D = In[I];
    } else if (D == -1) {
      if (Infer >= 0)
        fail("reshape: newshape {} has more than one -1",
             shapeToString(listShape(NewShape)));
      Infer = (int64_t)I;
      continue;
    } else if (D < -1) {
      fail("reshape: invalid extent {} in newshape {}", D,
           shapeToString(listShape(NewShape)));
    }
    Out[I] = D;
    Known = D == 0 ? 0 : Known * D;
  }
  int64_t N = numElements(In);
  if (Infer >= 0) {
    if (Known == 0 || N % Known != 0)
      fail("reshape: cannot reshape {} to {}", shapeToString(In),
           shapeToString(listShape(NewShape)));
    Out[Infer] = N / Known;
  }
  if (numElements(Out) != N)
    fail("reshape: cannot reshape {} ({} elements) to {}", shapeToString(In), N,
         shapeToString(Out));
  return Out;
}

std::vector<TensorMeta> reshapeShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  checkArity("reshape", In, 1);
  return {{reshapeTarget(In[0].shape(), attrInts("reshape", A, "newshape")),
           In[0].dtype()}};
}

void copyKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &) {
  if (In[0].nbytes())
    std::memcpy(Out[0].rawData(), In[0].rawData(), In[0].nbytes());
}

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

std::vector<int64_t> transposeAxes(const Tensor &X, const Attrs &A) {
  int64_t R = X.rank();
  std::vector<int64_t> Axes;
  if (!A.has("axes")) {
    for (int64_t I = R - 1; I >= 0; --I)
      Axes.push_back(I);
    return Axes;
  }
  Axes = attrInts("transpose", A, "axes");
  if ((int64_t)Axes.size() != R)
    fail("transpose: axes {} must have one entry per dimension of {}",
         shapeToString(Axes), shapeToString(X.shape()));
  std::vector<bool> Seen(R, false);
  for (auto &Ax : Axes) {
    Ax = opAxis("transpose", Ax, R);
    if (Seen[Ax])
      fail("transpose: axes {} is not a permutation", shapeToString(Axes));
    Seen[Ax] = true;
  }
  return Axes;
}

std::vector<TensorMeta> transposeShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  checkArity("transpose", In, 1);
  std::vector<int64_t> Axes = transposeAxes(In[0], A);
  Shape S;
  for (int64_t Ax : Axes)
    S.push_back(In[0].shape()[Ax]);
  return {{S, In[0].dtype()}};
}

void transposeKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  std::vector<int64_t> Axes = transposeAxes(In[0], A);
  std::vector<int64_t> C = contiguousStrides(In[0].shape()), S;
  for (int64_t Ax : Axes)
    S.push_back(C[Ax]);
  copyStrided(In[0].rawData(), S, 0, Out[0].rawData(), Out[0].shape(),
              dtypeSize(In[0].dtype()));
}

//===----------------------------------------------------------------------===//
// concatenate and stack
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> concatenateShape(const std::vector<Tensor> &In,
                                         const Attrs &A) {
  if (In.empty())
    fail("concatenate: needs at least one input");
  const Tensor &F = In[0];
  if (F.rank() == 0)
    fail("concatenate: inputs must have rank >= 1, got a scalar");
  int64_t Axis =
      opAxis("concatenate", attrInt("concatenate", A, "axis"), F.rank());
  Shape S = F.shape();
  for (size_t I = 1; I < In.size(); ++I) {
    const Tensor &T = In[I];
    if (T.dtype() != F.dtype())
      fail("concatenate: input {} has dtype {}, input 0 has {}", I,
           dtypeName(T.dtype()), dtypeName(F.dtype()));
    bool Ok = T.rank() == F.rank();
    for (int64_t D = 0; Ok && D < F.rank(); ++D)
      Ok = D == Axis || T.shape()[D] == F.shape()[D];
    if (!Ok)
      fail("concatenate: input {} has shape {}, incompatible with input 0 "
           "shape {} along axis {}",
           I, shapeToString(T.shape()), shapeToString(F.shape()), Axis);
    S[Axis] += T.shape()[Axis];
  }
  return {{S, F.dtype()}};
}

/// One contiguous copy of a join.
struct CopyPiece {
  char *dst;
  const char *src;
  int64_t bytes;
};

/// Bytes from which a join's copies run on the pool, in parts of at least
/// half as many bytes each. A concatenation of a long loop's sequence (16
/// MB) took 1.5 ms on one thread, 1.1 on two; below a megabyte the pool's
/// start would be a large part of the copy.
constexpr int64_t kParallelCopyBytes = int64_t(1) << 20;

/// Copies the pieces: on the pool in parts of about equal bytes (pieces
/// may differ widely in size: a loop's sequence grows), else in order.
void copyPieces(const std::vector<CopyPiece> &Pieces) {
  std::vector<int64_t> Ends; // bytes up to the end of each piece
  Ends.reserve(Pieces.size());
  int64_t Total = 0;
  for (const CopyPiece &P : Pieces)
    Ends.push_back(Total += P.bytes);
  int64_t Parts =
      std::min<int64_t>(4 * numThreads(), Total / (kParallelCopyBytes / 2));
  if (Parts < 2) {
    for (const CopyPiece &P : Pieces)
      std::memcpy(P.dst, P.src, (size_t)P.bytes);
    return;
  }
  struct Job {
    const std::vector<CopyPiece> &pieces;
    const std::vector<int64_t> &ends;
    int64_t total, parts;
  } J{Pieces, Ends, Total, Parts};
  kernelRuntime().parallelFor(Parts, 1, &J, [](void *C, int64_t B, int64_t E) {
    const Job &J = *static_cast<const Job *>(C);
    // Bytes [Lo, Hi) of the pieces laid end to end.
    int64_t Lo = J.total * B / J.parts, Hi = J.total * E / J.parts;
    size_t I = (size_t)(std::upper_bound(J.ends.begin(), J.ends.end(), Lo) -
                        J.ends.begin());
    for (; I < J.pieces.size() && Lo < Hi; ++I) {
      const CopyPiece &P = J.pieces[I];
      int64_t Start = J.ends[I] - P.bytes, From = Lo - Start;
      int64_t N = std::min(Hi, J.ends[I]) - Lo;
      std::memcpy(P.dst + From, P.src + From, (size_t)N);
      Lo += N;
    }
  });
}

/// Copies the inputs one after the other along Axis of Out, where input i
/// contributes AxisExtent(i) slices of Inner elements per outer index.
template <typename ExtentFn>
void joinAlong(const std::vector<Tensor> &In, Tensor &Out, int64_t Axis,
               ExtentFn AxisExtent) {
  size_t ESize = dtypeSize(Out.dtype());
  int64_t Outer = prodRange(Out.shape(), 0, Axis);
  int64_t Inner = prodRange(Out.shape(), Axis + 1, Out.shape().size());
  int64_t OutRow = Out.shape()[Axis] * Inner * (int64_t)ESize;
  char *Dst = static_cast<char *>(Out.rawData());
  std::vector<CopyPiece> Pieces;
  int64_t Col = 0;
  for (size_t I = 0; I < In.size(); ++I) {
    int64_t Chunk = AxisExtent(I) * Inner * (int64_t)ESize;
    if (Chunk == 0)
      continue;
    const char *Src = static_cast<const char *>(In[I].rawData());
    for (int64_t O = 0; O < Outer; ++O)
      Pieces.push_back({Dst + O * OutRow + Col, Src + O * Chunk, Chunk});
    Col += Chunk;
  }
  copyPieces(Pieces);
}

void concatenateKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                       const Attrs &A) {
  int64_t Axis =
      opAxis("concatenate", attrInt("concatenate", A, "axis"), In[0].rank());
  joinAlong(In, Out[0], Axis, [&](size_t I) { return In[I].shape()[Axis]; });
}

int64_t stackAxis(const std::vector<Tensor> &In, const Attrs &A) {
  int64_t R = In[0].rank();
  int64_t Axis = attrInt("stack", A, "axis");
  if (Axis < -(R + 1) || Axis > R)
    fail("stack: axis {} is out of range [{}, {}] for inputs of rank {}", Axis,
         -(R + 1), R, R);
  return Axis < 0 ? Axis + R + 1 : Axis;
}

std::vector<TensorMeta> stackShape(const std::vector<Tensor> &In,
                                   const Attrs &A) {
  if (In.empty())
    fail("stack: needs at least one input");
  for (size_t I = 1; I < In.size(); ++I)
    if (In[I].dtype() != In[0].dtype() || In[I].shape() != In[0].shape())
      fail("stack: input {} is {}, input 0 is {}; all must match", I,
           In[I].typeString(), In[0].typeString());
  int64_t Axis = stackAxis(In, A);
  Shape S = In[0].shape();
  S.insert(S.begin() + Axis, (int64_t)In.size());
  return {{S, In[0].dtype()}};
}

void stackKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &A) {
  joinAlong(In, Out[0], stackAxis(In, A), [](size_t) { return int64_t(1); });
}

//===----------------------------------------------------------------------===//
// split
//===----------------------------------------------------------------------===//

/// [begin, end) of each piece along the axis.
std::vector<std::pair<int64_t, int64_t>>
splitRanges(const Tensor &X, const Attrs &A, int64_t &Axis) {
  if (X.rank() == 0)
    fail("split: input must have rank >= 1, got a scalar");
  Axis = opAxis("split", attrInt("split", A, "axis"), X.rank());
  int64_t D = X.shape()[Axis];
  bool HasSections = A.has("sections"), HasIndices = A.has("indices");
  if (HasSections == HasIndices)
    fail("split: exactly one of the attributes 'sections' and 'indices' must "
         "be given");
  std::vector<std::pair<int64_t, int64_t>> R;
  if (HasSections) {
    int64_t N = attrInt("split", A, "sections");
    if (N <= 0)
      fail("split: sections must be positive, got {}", N);
    auto Parts = sectionParts(D, N, attrFlag("split", A, "uneven"));
    if (!Parts)
      fail("split: axis {} of extent {} cannot be split into {} equal "
           "sections",
           Axis, D, N);
    return *Parts;
  }
  // NumPy array_split: points are slice bounds (negative counts from the
  // end, clamped to [0, D]); a piece whose end precedes its start is empty.
  std::vector<int64_t> Points = attrInts("split", A, "indices");
  int64_t Prev = 0;
  auto Clamp = [D](int64_t P) {
    if (P < 0)
      P += D;
    return std::clamp<int64_t>(P, 0, D);
  };
  for (int64_t P : Points) {
    int64_t Q = Clamp(P);
    R.push_back({Prev, std::max(Prev, Q)});
    Prev = Q;
  }
  R.push_back({Prev, std::max(Prev, D)});
  return R;
}

std::vector<TensorMeta> splitShape(const std::vector<Tensor> &In,
                                   const Attrs &A) {
  checkArity("split", In, 1);
  int64_t Axis;
  std::vector<TensorMeta> Out;
  for (auto [B, E] : splitRanges(In[0], A, Axis)) {
    Shape S = In[0].shape();
    S[Axis] = E - B;
    Out.push_back({S, In[0].dtype()});
  }
  return Out;
}

void splitKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &A) {
  const Tensor &X = In[0];
  int64_t Axis;
  auto Ranges = splitRanges(X, A, Axis);
  size_t ESize = dtypeSize(X.dtype());
  int64_t Outer = prodRange(X.shape(), 0, Axis);
  int64_t Inner = prodRange(X.shape(), Axis + 1, X.shape().size());
  int64_t InRow = X.shape()[Axis] * Inner * (int64_t)ESize;
  const char *Src = static_cast<const char *>(X.rawData());
  for (size_t P = 0; P < Ranges.size(); ++P) {
    auto [B, E] = Ranges[P];
    int64_t Chunk = (E - B) * Inner * (int64_t)ESize;
    if (Chunk == 0)
      continue;
    char *Dst = static_cast<char *>(Out[P].rawData());
    for (int64_t O = 0; O < Outer; ++O)
      std::memcpy(Dst + O * Chunk, Src + O * InRow + B * Inner * ESize, Chunk);
  }
}

//===----------------------------------------------------------------------===//
// strided_slice (ONNX Slice semantics)
//===----------------------------------------------------------------------===//

struct SlicePlan {
  Shape Out;
  std::vector<int64_t> Start, Step; // per input dimension
};

/// What a slice takes: begin and end per sliced axis, and the strides and
/// axes when given (else 1 and 0, 1, ...).
struct SliceLists {
  std::span<const int64_t> begin, end;
  std::optional<std::span<const int64_t>> strides, axes;
};

SlicePlan planSlice(const Shape &In, const SliceLists &L) {
  const char *Op = "strided_slice";
  size_t N = L.begin.size();
  if (N != L.end.size())
    fail("strided_slice: 'begin' has {} entries but 'end' has {}", N,
         L.end.size());
  size_t NStrides = L.strides ? L.strides->size() : N;
  size_t NAxes = L.axes ? L.axes->size() : N;
  if (NStrides != N || NAxes != N)
    fail("strided_slice: 'begin', 'end', 'strides' and 'axes' must have the "
         "same length, got {}, {}, {} and {}",
         N, L.end.size(), NStrides, NAxes);
  int64_t R = (int64_t)In.size();
  SlicePlan P;
  P.Out = In;
  P.Start.assign(R, 0);
  P.Step.assign(R, 1);
  std::vector<bool> Seen(R, false);
  for (size_t I = 0; I < N; ++I) {
    int64_t Ax = opAxis(Op, L.axes ? (*L.axes)[I] : (int64_t)I, R);
    if (Seen[Ax])
      fail("strided_slice: axis {} appears twice in 'axes'", Ax);
    Seen[Ax] = true;
    int64_t D = In[Ax], S = L.strides ? (*L.strides)[I] : 1;
    if (S == 0)
      fail("strided_slice: stride 0 on axis {}", Ax);
    SliceBounds SB = sliceBounds(D, L.begin[I], L.end[I], S);
    int64_t Count = SB.count;
    P.Out[Ax] = Count;
    P.Start[Ax] = SB.start;
    // With at most one element the step is never taken; 1 avoids overflow
    // of huge steps in the stride arithmetic.
    P.Step[Ax] = Count <= 1 ? 1 : S;
  }
  return P;
}

SlicePlan planSlice(const Tensor &X, const Attrs &A) {
  const char *Op = "strided_slice";
  std::vector<int64_t> Begin = attrInts(Op, A, "begin");
  std::vector<int64_t> End = attrInts(Op, A, "end");
  std::optional<std::vector<int64_t>> Strides, Axes;
  if (A.has("strides"))
    Strides = attrInts(Op, A, "strides");
  if (A.has("axes"))
    Axes = attrInts(Op, A, "axes");
  SliceLists L{Begin, End, std::nullopt, std::nullopt};
  if (Strides)
    L.strides = *Strides;
  if (Axes)
    L.axes = *Axes;
  return planSlice(X.shape(), L);
}

/// Copies X's elements selected by P into Out.
void copySlice(const Tensor &X, const SlicePlan &P, Tensor &Out) {
  if (Out.numel() == 0)
    return;
  std::vector<int64_t> C = contiguousStrides(X.shape()), S(C.size());
  int64_t Start = 0;
  for (size_t D = 0; D < C.size(); ++D) {
    S[D] = C[D] * P.Step[D];
    Start += C[D] * P.Start[D];
  }
  copyStrided(X.rawData(), S, Start, Out.rawData(), Out.shape(),
              dtypeSize(X.dtype()));
}

/// The slice P of X as a view, when its elements are one contiguous range of
/// X's (every extent above 1 steps through X as a dense tensor of the
/// slice's shape would): a leading-axis range, a row, a single element.
std::optional<TensorView> contiguousSliceView(const Tensor &X,
                                              const SlicePlan &P) {
  if (numElements(P.Out) == 0)
    return std::nullopt;
  std::vector<int64_t> C = contiguousStrides(X.shape());
  int64_t Start = 0, Dense = 1;
  for (size_t D = C.size(); D-- > 0;) {
    if (P.Out[D] > 1 && C[D] * P.Step[D] != Dense)
      return std::nullopt;
    Dense *= P.Out[D];
    Start += C[D] * P.Start[D];
  }
  return TensorView{(size_t)Start * dtypeSize(X.dtype()), P.Out};
}

std::vector<TensorMeta> stridedSliceShape(const std::vector<Tensor> &In,
                                          const Attrs &A) {
  checkArity("strided_slice", In, 1);
  return {{planSlice(In[0], A).Out, In[0].dtype()}};
}

void stridedSliceKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                        const Attrs &A) {
  copySlice(In[0], planSlice(In[0], A), Out[0]);
}

//===----------------------------------------------------------------------===//
// take
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> takeShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  checkArity("take", In, 2);
  checkDType("take", "indices", In[1].dtype(), DTypeClass::Index);
  const Tensor &X = In[0], &Idx = In[1];
  Shape S;
  if (!A.has("axis")) {
    S = Idx.shape();
  } else {
    if (X.rank() == 0)
      fail("take: cannot take along an axis of a scalar");
    int64_t Axis = opAxis("take", attrInt("take", A, "axis"), X.rank());
    S.assign(X.shape().begin(), X.shape().begin() + Axis);
    S.insert(S.end(), Idx.shape().begin(), Idx.shape().end());
    S.insert(S.end(), X.shape().begin() + Axis + 1, X.shape().end());
  }
  return {{S, X.dtype()}};
}

void takeKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &A) {
  const Tensor &X = In[0];
  int64_t Axis = 0, Outer = 1, Inner = 1, D;
  if (A.has("axis")) {
    Axis = opAxis("take", attrInt("take", A, "axis"), X.rank());
    Outer = prodRange(X.shape(), 0, Axis);
    Inner = prodRange(X.shape(), Axis + 1, X.shape().size());
    D = X.shape()[Axis];
  } else {
    D = X.numel();
  }
  std::vector<int64_t> Idx = In[1].toIntVector();
  for (int64_t &I : Idx) {
    int64_t Orig = I;
    if (I < 0)
      I += D;
    if (I < 0 || I >= D)
      fail("take: index {} is out of range for axis {} of extent {}", Orig,
           Axis, D);
  }
  size_t ESize = dtypeSize(X.dtype());
  int64_t Row = Inner * (int64_t)ESize;
  const char *Src = static_cast<const char *>(X.rawData());
  char *Dst = static_cast<char *>(Out[0].rawData());
  int64_t NI = (int64_t)Idx.size();
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t J = 0; J < NI; ++J)
      std::memcpy(Dst + (O * NI + J) * Row, Src + (O * D + Idx[J]) * Row, Row);
}

//===----------------------------------------------------------------------===//
// Inputs that carry integer lists (shapes, axes, repeats, pads)
//===----------------------------------------------------------------------===//

/// The values of a 0-D or 1-D int32/int64 input named Arg of operator Op.
std::vector<int64_t> intListInput(const char *Op, const char *Arg,
                                  const Tensor &T) {
  checkDType(Op, Arg, T.dtype(), DTypeClass::Index);
  if (T.rank() > 1)
    fail("{}: input '{}' must be 1-D, got shape {}", Op, Arg,
         shapeToString(T.shape()));
  if (!T.hasData())
    fail("{}: input '{}' must hold values (the shape depends on them)", Op,
         Arg);
  return T.toIntVector();
}

/// The values of a 1-D int list input, read in place when it is int64 (no
/// copy: slice_dyn runs on every call of a dynamic model), else converted
/// into Buf.
std::span<const int64_t> intListView(const char *Op, const char *Arg,
                                     const Tensor &T,
                                     std::vector<int64_t> &Buf) {
  if (T.dtype() != DType::Int64 || T.rank() > 1 || !T.hasData()) {
    Buf = intListInput(Op, Arg, T);
    return Buf;
  }
  return {T.data<int64_t>(), (size_t)T.numel()};
}

/// Normalizes a list of axes against Rank, rejecting repeats.
std::vector<int64_t> uniqueAxes(const char *Op, std::vector<int64_t> Axes,
                                int64_t Rank) {
  std::vector<bool> Seen(Rank, false);
  for (int64_t &Ax : Axes) {
    Ax = opAxis(Op, Ax, Rank);
    if (Seen[Ax])
      fail("{}: axis {} appears more than once", Op, Ax);
    Seen[Ax] = true;
  }
  return Axes;
}

//===----------------------------------------------------------------------===//
// reshape_dyn
//===----------------------------------------------------------------------===//

/// ONNX Reshape with allowzero = 1: a 0 is a literal zero extent.
Shape reshapeLiteral(const Shape &In, std::span<const int64_t> New) {
  bool HasZero = std::count(New.begin(), New.end(), 0) > 0;
  bool HasInfer = std::count(New.begin(), New.end(), -1) > 0;
  if (HasZero && HasInfer)
    fail("reshape_dyn: shape {} has both 0 and -1, which allowzero=1 forbids",
         shapeToString(listShape(New)));
  if (!HasZero)
    return reshapeTarget(In, New);
  for (int64_t D : New)
    if (D < 0)
      fail("reshape_dyn: invalid extent {} in shape {}", D,
           shapeToString(listShape(New)));
  if (numElements(In) != 0)
    fail("reshape_dyn: cannot reshape {} to {}", shapeToString(In),
         shapeToString(listShape(New)));
  return listShape(New);
}

std::vector<TensorMeta> reshapeDynShape(const std::vector<Tensor> &In,
                                        const Attrs &A) {
  checkArity("reshape_dyn", In, 2);
  std::vector<int64_t> Buf;
  std::span<const int64_t> New =
      intListView("reshape_dyn", "shape", In[1], Buf);
  bool AllowZero = attrFlag("reshape_dyn", A, "allowzero");
  Shape Out = AllowZero ? reshapeLiteral(In[0].shape(), New)
                        : withOp("reshape_dyn", [&] {
                            return reshapeTarget(In[0].shape(), New);
                          });
  // The constant extents the compiler proved hold (a wrong proof would
  // have typed the result wrongly: refuse it rather than run on).
  if (A.has("dims")) {
    const std::vector<std::string> &Dims = A.getStrings("dims");
    for (size_t K = 0; K < Dims.size() && K < Out.size(); ++K) {
      std::optional<int64_t> V = reshape_dims::extentOf(Dims[K]);
      if (V && *V != Out[K])
        fail("reshape_dyn: extent {} of the result is {}, where the "
             "compiler proved {}",
             K, Out[K], *V);
    }
  }
  return {{Out, In[0].dtype()}};
}

//===----------------------------------------------------------------------===//
// slice_dyn (ONNX Slice with tensor starts/ends/axes/steps)
//===----------------------------------------------------------------------===//

/// The slice of In[0] that slice_dyn's other inputs ask for.
SlicePlan planSliceDyn(const std::vector<Tensor> &In) {
  const char *Op = "slice_dyn";
  if (In.size() < 3 || In.size() > 5)
    fail("slice_dyn: expected 3 to 5 inputs, got {}", In.size());
  std::vector<int64_t> Bufs[4];
  SliceLists L;
  L.begin = intListView(Op, "starts", In[1], Bufs[0]);
  L.end = intListView(Op, "ends", In[2], Bufs[1]);
  if (In.size() > 3 && In[3].defined())
    L.axes = intListView(Op, "axes", In[3], Bufs[2]);
  if (In.size() > 4 && In[4].defined())
    L.strides = intListView(Op, "steps", In[4], Bufs[3]);
  return withOp(Op, [&] { return planSlice(In[0].shape(), L); });
}

std::vector<TensorMeta> sliceDynShape(const std::vector<Tensor> &In,
                                      const Attrs &) {
  return {{planSliceDyn(In).Out, In[0].dtype()}};
}

void sliceDynKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                    const Attrs &) {
  copySlice(In[0], planSliceDyn(In), Out[0]);
}

std::optional<TensorView> sliceDynView(const std::vector<Tensor> &In,
                                       const Attrs &) {
  return contiguousSliceView(In[0], planSliceDyn(In));
}

//===----------------------------------------------------------------------===//
// squeeze, unsqueeze, flatten (all views: the kernel is a copy)
//===----------------------------------------------------------------------===//

Shape squeezeTarget(const char *Op, const Shape &In,
                    const std::optional<std::vector<int64_t>> &Axes) {
  int64_t R = (int64_t)In.size();
  std::vector<bool> Drop(R, false);
  if (!Axes) {
    for (int64_t I = 0; I < R; ++I)
      Drop[I] = In[I] == 1;
  } else {
    for (int64_t Ax : uniqueAxes(Op, *Axes, R)) {
      if (In[Ax] != 1)
        fail("{}: cannot squeeze axis {} of extent {} in {}", Op, Ax, In[Ax],
             shapeToString(In));
      Drop[Ax] = true;
    }
  }
  Shape Out;
  for (int64_t I = 0; I < R; ++I)
    if (!Drop[I])
      Out.push_back(In[I]);
  return Out;
}

std::vector<TensorMeta> squeezeShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  checkArity("squeeze", In, 1);
  std::optional<std::vector<int64_t>> Axes;
  if (A.has("axes"))
    Axes = attrInts("squeeze", A, "axes");
  return {{squeezeTarget("squeeze", In[0].shape(), Axes), In[0].dtype()}};
}

std::vector<TensorMeta> squeezeDynShape(const std::vector<Tensor> &In,
                                        const Attrs &) {
  checkArity("squeeze_dyn", In, 2);
  return {{squeezeTarget("squeeze_dyn", In[0].shape(),
                         intListInput("squeeze_dyn", "axes", In[1])),
           In[0].dtype()}};
}

Shape unsqueezeTarget(const char *Op, const Shape &In,
                      const std::vector<int64_t> &Axes) {
  int64_t R = (int64_t)(In.size() + Axes.size());
  std::vector<bool> New(R, false);
  for (int64_t Ax : uniqueAxes(Op, Axes, R))
    New[Ax] = true;
  Shape Out;
  size_t Next = 0;
  for (int64_t I = 0; I < R; ++I)
    Out.push_back(New[I] ? 1 : In[Next++]);
  return Out;
}

std::vector<TensorMeta> unsqueezeShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  checkArity("unsqueeze", In, 1);
  return {{unsqueezeTarget("unsqueeze", In[0].shape(),
                           attrInts("unsqueeze", A, "axes")),
           In[0].dtype()}};
}

std::vector<TensorMeta> unsqueezeDynShape(const std::vector<Tensor> &In,
                                          const Attrs &) {
  checkArity("unsqueeze_dyn", In, 2);
  return {{unsqueezeTarget("unsqueeze_dyn", In[0].shape(),
                           intListInput("unsqueeze_dyn", "axes", In[1])),
           In[0].dtype()}};
}

std::vector<TensorMeta> flattenShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  checkArity("flatten", In, 1);
  const Shape &S = In[0].shape();
  int64_t R = (int64_t)S.size(), Axis = attrInt("flatten", A, "axis");
  if (Axis < -R || Axis > R)
    fail("flatten: axis {} is out of range [{}, {}] for rank {}", Axis, -R, R,
         R);
  if (Axis < 0)
    Axis += R;
  return {
      {{prodRange(S, 0, Axis), prodRange(S, Axis, S.size())}, In[0].dtype()}};
}

//===----------------------------------------------------------------------===//
// expand (bidirectional broadcast to a shape) and tile
//===----------------------------------------------------------------------===//

Shape expandTarget(const char *Op, const Shape &In,
                   const std::vector<int64_t> &To) {
  for (int64_t D : To)
    if (D < 0)
      fail("{}: negative extent {} in shape {}", Op, D, shapeToString(To));
  return opBroadcast(Op, In, To);
}

std::vector<TensorMeta> expandShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  checkArity("expand", In, 1);
  return {
      {expandTarget("expand", In[0].shape(), attrInts("expand", A, "shape")),
       In[0].dtype()}};
}

std::vector<TensorMeta> expandDynShape(const std::vector<Tensor> &In,
                                       const Attrs &) {
  checkArity("expand_dyn", In, 2);
  return {{expandTarget("expand_dyn", In[0].shape(),
                        intListInput("expand_dyn", "shape", In[1])),
           In[0].dtype()}};
}

void broadcastCopyKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &) {
  copyStrided(In[0].rawData(), broadcastStrides(In[0].shape(), Out[0].shape()),
              0, Out[0].rawData(), Out[0].shape(), dtypeSize(In[0].dtype()));
}

Shape tileTarget(const char *Op, const Shape &In,
                 const std::vector<int64_t> &Reps) {
  if (Reps.size() != In.size())
    fail("{}: repeats {} must have one entry per dimension of {}", Op,
         shapeToString(Reps), shapeToString(In));
  Shape Out(In.size());
  for (size_t I = 0; I < In.size(); ++I) {
    if (Reps[I] < 0)
      fail("{}: negative repeat {} in {}", Op, Reps[I], shapeToString(Reps));
    Out[I] = In[I] * Reps[I];
  }
  withOp(Op, [&] { return numElements(Out); });
  return Out;
}

std::vector<TensorMeta> tileShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  checkArity("tile", In, 1);
  return {{tileTarget("tile", In[0].shape(), attrInts("tile", A, "repeats")),
           In[0].dtype()}};
}

std::vector<TensorMeta> tileDynShape(const std::vector<Tensor> &In,
                                     const Attrs &) {
  checkArity("tile_dyn", In, 2);
  return {{tileTarget("tile_dyn", In[0].shape(),
                      intListInput("tile_dyn", "repeats", In[1])),
           In[0].dtype()}};
}

void tileKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &) {
  const Shape &S = In[0].shape();
  if (Out[0].numel() == 0)
    return;
  // View the output as (rep0, d0, rep1, d1, ...) and read x with stride 0 on
  // the repeat axes.
  std::vector<int64_t> C = contiguousStrides(S), Strides;
  Shape View;
  for (size_t I = 0; I < S.size(); ++I) {
    View.push_back(Out[0].shape()[I] / S[I]);
    View.push_back(S[I]);
    Strides.push_back(0);
    Strides.push_back(C[I]);
  }
  copyStrided(In[0].rawData(), Strides, 0, Out[0].rawData(), View,
              dtypeSize(In[0].dtype()));
}

//===----------------------------------------------------------------------===//
// pad (constant, reflect, edge, wrap; negative pads crop)
//===----------------------------------------------------------------------===//

struct PadPlan {
  std::vector<int64_t> Begin; // per dimension
  Shape Out;
  int Mode = 0; // 0 constant, 1 reflect, 2 edge, 3 wrap
};

PadPlan planPad(const char *Op, const Shape &In, std::vector<int64_t> Pads,
                const std::optional<std::vector<int64_t>> &Axes,
                const std::string &Mode) {
  int64_t R = (int64_t)In.size();
  std::vector<int64_t> Ax;
  if (Axes) {
    Ax = uniqueAxes(Op, *Axes, R);
  } else {
    for (int64_t I = 0; I < R; ++I)
      Ax.push_back(I);
  }
  int64_t N = (int64_t)Ax.size();
  if ((int64_t)Pads.size() != 2 * N)
    fail("{}: pads {} must have 2 * {} entries for {}", Op, shapeToString(Pads),
         N, shapeToString(In));
  PadPlan P;
  P.Begin.assign(R, 0);
  P.Out = In;
  if (Mode == "constant")
    P.Mode = 0;
  else if (Mode == "reflect")
    P.Mode = 1;
  else if (Mode == "edge")
    P.Mode = 2;
  else if (Mode == "wrap")
    P.Mode = 3;
  else
    fail("{}: unsupported mode '{}' (expected constant, reflect, edge or "
         "wrap)",
         Op, Mode);
  for (int64_t I = 0; I < N; ++I) {
    int64_t D = Ax[I], B = Pads[I], E = Pads[I + N];
    P.Begin[D] = B;
    P.Out[D] = In[D] + B + E;
    if (P.Out[D] < 0)
      fail("{}: pads {} crop axis {} of extent {} below zero", Op,
           shapeToString(Pads), D, In[D]);
    if (P.Mode != 0 && In[D] == 0 && P.Out[D] > 0)
      fail("{}: mode '{}' cannot pad the empty axis {}", Op, Mode, D);
  }
  withOp(Op, [&] { return numElements(P.Out); });
  return P;
}

/// The source index for output index O along an axis of extent D, or -1 for
/// the fill value.
int64_t padSource(int64_t O, int64_t Begin, int64_t D, int Mode) {
  int64_t I = O - Begin;
  if (I >= 0 && I < D)
    return I;
  if (Mode == 0)
    return -1;
  if (Mode == 2)
    return I < 0 ? 0 : D - 1;
  if (Mode == 3) {
    // The data repeats with period D (a torus).
    I %= D;
    return I < 0 ? I + D : I;
  }
  if (D == 1)
    return 0;
  // Reflect without repeating the edge; the period is 2 * (D - 1).
  int64_t Period = 2 * (D - 1);
  I %= Period;
  if (I < 0)
    I += Period;
  return I < D ? I : Period - I;
}

void padInto(const Tensor &X, Tensor &Out, const PadPlan &P,
             const Tensor &Value) {
  const Shape &S = X.shape();
  size_t R = S.size();
  size_t ESize = dtypeSize(X.dtype());
  std::vector<char> Fill(ESize, 0);
  if (Value.defined())
    std::memcpy(Fill.data(), Value.cast(X.dtype()).rawData(), ESize);
  std::vector<int64_t> C = contiguousStrides(S);
  const char *Src = static_cast<const char *>(X.rawData());
  char *Dst = static_cast<char *>(Out.rawData());
  int64_t Total = Out.numel();
  std::vector<int64_t> Idx(R, 0);
  for (int64_t O = 0; O < Total; ++O) {
    int64_t Off = 0;
    bool Inside = true;
    for (size_t D = 0; D < R && Inside; ++D) {
      int64_t I = padSource(Idx[D], P.Begin[D], S[D], P.Mode);
      if (I < 0)
        Inside = false;
      else
        Off += I * C[D];
    }
    std::memcpy(Dst + O * ESize, Inside ? Src + Off * ESize : Fill.data(),
                ESize);
    for (size_t D = R; D-- > 0;) {
      if (++Idx[D] < P.Out[D])
        break;
      Idx[D] = 0;
    }
  }
}

std::optional<std::vector<int64_t>> optAxesAttr(const char *Op,
                                                const Attrs &A) {
  if (!A.has("axes"))
    return std::nullopt;
  return attrInts(Op, A, "axes");
}

std::vector<TensorMeta> padShape(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  checkArity("pad", In, 1);
  PadPlan P = planPad("pad", In[0].shape(), attrInts("pad", A, "pads"),
                      optAxesAttr("pad", A), attrString("pad", A, "mode"));
  return {{P.Out, In[0].dtype()}};
}

void padKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  PadPlan P = planPad("pad", In[0].shape(), attrInts("pad", A, "pads"),
                      optAxesAttr("pad", A), attrString("pad", A, "mode"));
  double V = attrFloat("pad", A, "value");
  padInto(In[0], Out[0], P, Tensor::scalar<double>(V));
}

PadPlan planPadDyn(const std::vector<Tensor> &In, const Attrs &A) {
  const char *Op = "pad_dyn";
  if (In.size() < 2 || In.size() > 4)
    fail("pad_dyn: expected 2 to 4 inputs, got {}", In.size());
  std::optional<std::vector<int64_t>> Axes;
  if (In.size() > 3 && In[3].defined())
    Axes = intListInput(Op, "axes", In[3]);
  if (In.size() > 2 && In[2].defined() && In[2].numel() != 1)
    fail("pad_dyn: input 'value' must have one element, got shape {}",
         shapeToString(In[2].shape()));
  return planPad(Op, In[0].shape(), intListInput(Op, "pads", In[1]), Axes,
                 attrString(Op, A, "mode"));
}

std::vector<TensorMeta> padDynShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  return {{planPadDyn(In, A).Out, In[0].dtype()}};
}

void padDynKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  Tensor Value;
  if (In.size() > 2 && In[2].defined())
    Value = In[2].reshape({});
  padInto(In[0], Out[0], planPadDyn(In, A), Value);
}

//===----------------------------------------------------------------------===//
// depth_to_space and space_to_depth (a reshape, a transpose, a reshape)
//===----------------------------------------------------------------------===//

struct SpacePlan {
  Shape Out, View;              // the output, and it viewed in 6-D
  std::vector<int64_t> Strides; // strides into the input for View
};

SpacePlan planSpace(const char *Op, const Tensor &X, const Attrs &A,
                    bool ToSpace) {
  if (X.rank() != 4)
    fail("{}: input must have rank 4 (N, C, H, W), got {}", Op,
         shapeToString(X.shape()));
  int64_t B = attrInt(Op, A, "blocksize");
  if (B <= 0)
    fail("{}: blocksize must be positive, got {}", Op, B);
  int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), W = X.dim(3);
  SpacePlan P;
  if (ToSpace) {
    std::string Mode = attrString(Op, A, "mode");
    if (Mode != "DCR" && Mode != "CRD")
      fail("{}: mode must be DCR or CRD, got '{}'", Op, Mode);
    if (C % (B * B) != 0)
      fail("{}: channels {} are not divisible by blocksize^2 = {}", Op, C,
           B * B);
    int64_t C2 = C / (B * B);
    P.Out = {N, C2, H * B, W * B};
    P.View = {N, C2, H, B, W, B};
    // Input strides for (n, c2, h, b1, w, b2).
    int64_t SC = H * W;
    if (Mode == "DCR") // channel = (b1 * B + b2) * C2 + c2
      P.Strides = {C * SC, SC, W, B * C2 * SC, 1, C2 * SC};
    else // channel = c2 * B * B + b1 * B + b2
      P.Strides = {C * SC, B * B * SC, W, B * SC, 1, SC};
    return P;
  }
  if (H % B != 0 || W % B != 0)
    fail("{}: height {} and width {} must be divisible by blocksize {}", Op, H,
         W, B);
  P.Out = {N, C * B * B, H / B, W / B};
  // Output (n, b1, b2, c, h2, w2) reads input (n, c, h2 * B + b1, w2 * B + b2).
  P.View = {N, B, B, C, H / B, W / B};
  P.Strides = {C * H * W, W, 1, H * W, B * W, B};
  return P;
}

template <bool ToSpace>
std::vector<TensorMeta> spaceShape(const std::vector<Tensor> &In,
                                   const Attrs &A) {
  const char *Op = ToSpace ? "depth_to_space" : "space_to_depth";
  checkArity(Op, In, 1);
  return {{planSpace(Op, In[0], A, ToSpace).Out, In[0].dtype()}};
}

template <bool ToSpace>
void spaceKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &A) {
  const char *Op = ToSpace ? "depth_to_space" : "space_to_depth";
  SpacePlan P = planSpace(Op, In[0], A, ToSpace);
  copyStrided(In[0].rawData(), P.Strides, 0, Out[0].rawData(), P.View,
              dtypeSize(In[0].dtype()));
}

//===----------------------------------------------------------------------===//
// split_dyn (ONNX Split with the sizes as a tensor)
//===----------------------------------------------------------------------===//

/// split's attributes for the sizes held by In[1]; the sizes must add up to
/// the extent of the axis.
Attrs splitDynAttrs(const std::vector<Tensor> &In, const Attrs &A) {
  checkArity("split_dyn", In, 2);
  const Tensor &X = In[0];
  if (X.rank() == 0)
    fail("split_dyn: input must have rank >= 1, got a scalar");
  int64_t Axis = opAxis("split_dyn", attrInt("split_dyn", A, "axis"), X.rank());
  std::vector<int64_t> Sizes = intListInput("split_dyn", "split", In[1]);
  int64_t N = attrInt("split_dyn", A, "num_outputs");
  if ((int64_t)Sizes.size() != N)
    fail("split_dyn: 'split' has {} sizes for {} outputs", Sizes.size(), N);
  std::vector<int64_t> Points;
  int64_t Sum = 0;
  for (size_t I = 0; I < Sizes.size(); ++I) {
    if (Sizes[I] < 0)
      fail("split_dyn: negative size {} in {}", Sizes[I], shapeToString(Sizes));
    Sum += Sizes[I];
    if (I + 1 < Sizes.size())
      Points.push_back(Sum);
  }
  if (Sum != X.dim(Axis))
    fail("split_dyn: sizes {} add up to {}, but axis {} has extent {}",
         shapeToString(Sizes), Sum, Axis, X.dim(Axis));
  return Attrs{{"axis", Axis}, {"indices", Points}};
}

std::vector<TensorMeta> splitDynShape(const std::vector<Tensor> &In,
                                      const Attrs &A) {
  return splitShape({In[0]}, splitDynAttrs(In, A));
}

void splitDynKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                    const Attrs &A) {
  splitKernel({In[0]}, Out, splitDynAttrs(In, A));
}

} // namespace

RIVET_REGISTER_KERNEL("reshape", copyKernel, reshapeShape, false);
RIVET_REGISTER_KERNEL("transpose", transposeKernel, transposeShape, false);
RIVET_REGISTER_KERNEL("concatenate", concatenateKernel, concatenateShape,
                      false);
RIVET_REGISTER_KERNEL("stack", stackKernel, stackShape, false);
RIVET_REGISTER_KERNEL("split", splitKernel, splitShape, false);
RIVET_REGISTER_KERNEL("strided_slice", stridedSliceKernel, stridedSliceShape,
                      false);
RIVET_REGISTER_KERNEL("take", takeKernel, takeShape, false);

RIVET_REGISTER_KERNEL_SHAPED_BY("reshape_dyn", copyKernel, reshapeDynShape,
                                1u << 1);
RIVET_REGISTER_KERNEL("split_dyn", splitDynKernel, splitDynShape, true);
RIVET_REGISTER_VIEW_KERNEL("slice_dyn", sliceDynKernel, sliceDynShape, true,
                           sliceDynView);
RIVET_REGISTER_KERNEL("squeeze", copyKernel, squeezeShape, false);
RIVET_REGISTER_KERNEL_SHAPED_BY("squeeze_dyn", copyKernel, squeezeDynShape,
                                1u << 1);
RIVET_REGISTER_KERNEL("unsqueeze", copyKernel, unsqueezeShape, false);
RIVET_REGISTER_KERNEL_SHAPED_BY("unsqueeze_dyn", copyKernel, unsqueezeDynShape,
                                1u << 1);
RIVET_REGISTER_KERNEL("flatten", copyKernel, flattenShape, false);
RIVET_REGISTER_KERNEL("expand", broadcastCopyKernel, expandShape, false);
RIVET_REGISTER_KERNEL_SHAPED_BY("expand_dyn", broadcastCopyKernel,
                                expandDynShape, 1u << 1);
RIVET_REGISTER_KERNEL("tile", tileKernel, tileShape, false);
RIVET_REGISTER_KERNEL("tile_dyn", tileKernel, tileDynShape, true);
RIVET_REGISTER_KERNEL("pad", padKernel, padShape, false);
RIVET_REGISTER_KERNEL("pad_dyn", padDynKernel, padDynShape, true);
RIVET_REGISTER_KERNEL("depth_to_space", spaceKernel<true>, spaceShape<true>,
                      false);
RIVET_REGISTER_KERNEL("space_to_depth", spaceKernel<false>, spaceShape<false>,
                      false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS(
    "cumsum",
    {{"axis", AttrKind::Int, false, "the axis, when not given as an argument"},
     {"exclusive", AttrKind::Int, false, "1 excludes the element itself", 0},
     {"reverse", AttrKind::Int, false, "1 sums from the end", 0}});
RIVET_REGISTER_ATTRS(
    "reshape",
    {{"newshape", AttrKind::Ints, true,
      "the new extents; 0 copies the input's extent, one -1 is inferred"}});
RIVET_REGISTER_ATTRS("transpose",
                     {{"axes", AttrKind::Ints, false,
                       "the permutation; default reverses the axes"}});
RIVET_REGISTER_ATTRS("concatenate", {{"axis", AttrKind::Int, false,
                                      "the axis to join along", 0}});
RIVET_REGISTER_ATTRS("stack",
                     {{"axis", AttrKind::Int, false,
                       "position of the new axis, in [-(r+1), r]", 0}});
RIVET_REGISTER_ATTRS("split",
                     {{"axis", AttrKind::Int, false, "the axis to split", 0},
                      {"sections", AttrKind::Int, false,
                       "number of equal parts (must divide the extent unless "
                       "uneven)"},
                      {"uneven", AttrKind::Int, false,
                       "1: sections of ceil(extent / sections) elements, the "
                       "last ones smaller (ONNX Split-18 num_outputs)",
                       0},
                      {"indices", AttrKind::Ints, false,
                       "split points, NumPy array_split style"}});
RIVET_REGISTER_ATTRS("strided_slice",
                     {{"begin", AttrKind::Ints, true,
                       "start indices (negative count from the end)"},
                      {"end", AttrKind::Ints, true,
                       "end indices, exclusive (negative count from the end)"},
                      {"strides", AttrKind::Ints, false,
                       "steps, non-zero (default 1s)"},
                      {"axes", AttrKind::Ints, false,
                       "the sliced axes (default 0..len(begin)-1)"}});
RIVET_REGISTER_ATTRS("take", {{"axis", AttrKind::Int, false,
                               "the gathered axis; absent flattens x"}});
RIVET_REGISTER_ATTRS("reshape_dyn",
                     {{"allowzero", AttrKind::Int, false,
                       "1: a 0 in shape is a zero extent", 0},
                      {"dims", AttrKind::Strings, false,
                       "the result's extents where the compiler proved them "
                       "(ResolveShapeValues): an integer, a symbol of the "
                       "function, or ?"}});
RIVET_REGISTER_ATTRS("split_dyn",
                     {{"axis", AttrKind::Int, false, "the axis to split", 0},
                      {"num_outputs", AttrKind::Int, true,
                       "the number of parts"}});
RIVET_REGISTER_ATTRS("squeeze", {{"axes", AttrKind::Ints, false,
                                  "axes to remove; each must have extent 1"}});
RIVET_REGISTER_ATTRS("unsqueeze",
                     {{"axes", AttrKind::Ints, true,
                       "positions of the new axes in the output"}});
RIVET_REGISTER_ATTRS("flatten",
                     {{"axis", AttrKind::Int, false, "the split point", 1}});
RIVET_REGISTER_ATTRS("expand", {{"shape", AttrKind::Ints, true,
                                 "the shape to broadcast with"}});
RIVET_REGISTER_ATTRS("tile", {{"repeats", AttrKind::Ints, true,
                               "non-negative repeat count per axis"}});
RIVET_REGISTER_ATTRS(
    "pad",
    {{"pads", AttrKind::Ints, true, "[begin per axis..., end per axis...]"},
     {"mode", AttrKind::String, false, "constant, reflect, edge or wrap",
      "constant"},
     {"value", AttrKind::Float, false, "the constant fill value", 0.0},
     {"axes", AttrKind::Ints, false, "the padded axes (default all)"}});
RIVET_REGISTER_ATTRS("pad_dyn",
                     {{"mode", AttrKind::String, false,
                       "constant, reflect, edge or wrap", "constant"}});
RIVET_REGISTER_ATTRS("depth_to_space",
                     {{"blocksize", AttrKind::Int, true, "the block size b"},
                      {"mode", AttrKind::String, false,
                       "DCR or CRD channel order", "DCR"}});
RIVET_REGISTER_ATTRS("space_to_depth",
                     {{"blocksize", AttrKind::Int, true, "the block size b"}});

} // namespace rivet::kernels
