//===- Transform.cc - Shape manipulation operators ------------------------===//
//
// reshape, transpose, concatenate, stack, split, strided_slice and take.
// All of them move bytes without looking at values, so the kernels work on
// element sizes rather than dtypes.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>

namespace rivet::kernels {
namespace {

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

Shape reshapeTarget(const Shape &In, const std::vector<int64_t> &NewShape) {
  Shape Out(NewShape.size());
  int64_t Infer = -1, Known = 1;
  for (size_t I = 0; I < NewShape.size(); ++I) {
    int64_t D = NewShape[I];
    if (D == 0) {
      if (I >= In.size())
        fail("reshape: newshape {} copies dimension {} (0) but the input {} "
             "has rank {}",
             shapeToString(NewShape), I, shapeToString(In), In.size());
      D = In[I];
    } else if (D == -1) {
      if (Infer >= 0)
        fail("reshape: newshape {} has more than one -1",
             shapeToString(NewShape));
      Infer = (int64_t)I;
      continue;
    } else if (D < -1) {
      fail("reshape: invalid extent {} in newshape {}", D,
           shapeToString(NewShape));
    }
    Out[I] = D;
    Known = D == 0 ? 0 : Known * D;
  }
  int64_t N = numElements(In);
  if (Infer >= 0) {
    if (Known == 0 || N % Known != 0)
      fail("reshape: cannot reshape {} to {}", shapeToString(In),
           shapeToString(NewShape));
    Out[Infer] = N / Known;
  }
  if (numElements(Out) != N)
    fail("reshape: cannot reshape {} ({} elements) to {}", shapeToString(In),
         N, shapeToString(Out));
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
  int64_t Axis = opAxis("concatenate", attrInt("concatenate", A, "axis", 0),
                        F.rank());
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
  int64_t Col = 0;
  for (size_t I = 0; I < In.size(); ++I) {
    int64_t Chunk = AxisExtent(I) * Inner * (int64_t)ESize;
    if (Chunk == 0)
      continue;
    const char *Src = static_cast<const char *>(In[I].rawData());
    for (int64_t O = 0; O < Outer; ++O)
      std::memcpy(Dst + O * OutRow + Col, Src + O * Chunk, Chunk);
    Col += Chunk;
  }
}

void concatenateKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                       const Attrs &A) {
  int64_t Axis = opAxis("concatenate", attrInt("concatenate", A, "axis", 0),
                        In[0].rank());
  joinAlong(In, Out[0], Axis, [&](size_t I) { return In[I].shape()[Axis]; });
}

int64_t stackAxis(const std::vector<Tensor> &In, const Attrs &A) {
  int64_t R = In[0].rank();
  int64_t Axis = attrInt("stack", A, "axis", 0);
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
std::vector<std::pair<int64_t, int64_t>> splitRanges(const Tensor &X,
                                                     const Attrs &A,
                                                     int64_t &Axis) {
  if (X.rank() == 0)
    fail("split: input must have rank >= 1, got a scalar");
  Axis = opAxis("split", attrInt("split", A, "axis", 0), X.rank());
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
    if (D % N != 0)
      fail("split: axis {} of extent {} cannot be split into {} equal "
           "sections",
           Axis, D, N);
    for (int64_t I = 0; I < N; ++I)
      R.push_back({I * (D / N), (I + 1) * (D / N)});
    return R;
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

SlicePlan planSlice(const Tensor &X, const Attrs &A) {
  const char *Op = "strided_slice";
  std::vector<int64_t> Begin = attrInts(Op, A, "begin");
  std::vector<int64_t> End = attrInts(Op, A, "end");
  if (Begin.size() != End.size())
    fail("strided_slice: 'begin' has {} entries but 'end' has {}",
         Begin.size(), End.size());
  std::vector<int64_t> Strides =
      attrInts(Op, A, "strides", std::vector<int64_t>(Begin.size(), 1));
  std::vector<int64_t> Axes;
  for (size_t I = 0; I < Begin.size(); ++I)
    Axes.push_back((int64_t)I);
  Axes = attrInts(Op, A, "axes", Axes);
  if (Strides.size() != Begin.size() || Axes.size() != Begin.size())
    fail("strided_slice: 'begin', 'end', 'strides' and 'axes' must have the "
         "same length, got {}, {}, {} and {}",
         Begin.size(), End.size(), Strides.size(), Axes.size());
  int64_t R = X.rank();
  SlicePlan P;
  P.Out = X.shape();
  P.Start.assign(R, 0);
  P.Step.assign(R, 1);
  std::vector<bool> Seen(R, false);
  for (size_t I = 0; I < Axes.size(); ++I) {
    int64_t Ax = opAxis(Op, Axes[I], R);
    if (Seen[Ax])
      fail("strided_slice: axis {} appears twice in 'axes'", Ax);
    Seen[Ax] = true;
    int64_t D = X.shape()[Ax], S = Strides[I];
    if (S == 0)
      fail("strided_slice: stride 0 on axis {}", Ax);
    int64_t B = Begin[I], E = End[I];
    if (B < 0)
      B = B < -D ? -1 : B + D; // stays negative when far below: clamps below
    if (E < 0)
      E = E < -D ? -1 : E + D;
    int64_t Count = 0;
    if (D == 0) {
      B = 0;
    } else if (S > 0) {
      B = std::clamp<int64_t>(B, 0, D);
      E = std::clamp<int64_t>(E, 0, D);
      // Unsigned arithmetic: a huge stride must not overflow the rounding.
      if (E > B)
        Count = (int64_t)(((uint64_t)(E - B) + (uint64_t)S - 1) / (uint64_t)S);
    } else {
      B = std::clamp<int64_t>(B, 0, D - 1);
      E = std::clamp<int64_t>(E, -1, D - 1);
      uint64_t NS = 0 - (uint64_t)S; // |S|, also for INT64_MIN
      if (B > E)
        Count = (int64_t)(((uint64_t)(B - E) + NS - 1) / NS);
    }
    P.Out[Ax] = Count;
    P.Start[Ax] = B;
    // With at most one element the step is never taken; 1 avoids overflow
    // of huge steps in the stride arithmetic.
    P.Step[Ax] = Count <= 1 ? 1 : S;
  }
  return P;
}

std::vector<TensorMeta> stridedSliceShape(const std::vector<Tensor> &In,
                                          const Attrs &A) {
  checkArity("strided_slice", In, 1);
  return {{planSlice(In[0], A).Out, In[0].dtype()}};
}

void stridedSliceKernel(const std::vector<Tensor> &In,
                        std::vector<Tensor> &Out, const Attrs &A) {
  const Tensor &X = In[0];
  SlicePlan P = planSlice(X, A);
  if (Out[0].numel() == 0)
    return;
  std::vector<int64_t> C = contiguousStrides(X.shape()), S(C.size());
  int64_t Start = 0;
  for (size_t D = 0; D < C.size(); ++D) {
    S[D] = C[D] * P.Step[D];
    Start += C[D] * P.Start[D];
  }
  copyStrided(X.rawData(), S, Start, Out[0].rawData(), Out[0].shape(),
              dtypeSize(X.dtype()));
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
      std::memcpy(Dst + (O * NI + J) * Row, Src + (O * D + Idx[J]) * Row,
                  Row);
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

} // namespace rivet::kernels
