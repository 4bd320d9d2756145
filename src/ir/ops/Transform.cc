//===- Transform.cc - Shape manipulation operators ------------------------===//
#include "ir/ops/RelationUtil.h"

#include <limits>
#include <set>

namespace rivet::ir {
namespace {

Type makeTensor(const std::optional<std::vector<Dim>> &Shape, DType T) {
  return std::make_shared<TensorTypeNode>(Shape, T);
}

// reshape(x, newshape): 0 copies the input extent at that position, one -1
// is inferred (known only when every other extent is a constant).
Type reshapeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("reshape", A);
  checkArity("reshape", Args, 1);
  std::vector<int64_t> New = *optInts(A, "newshape");
  int InferAt = -1;
  for (size_t I = 0; I < New.size(); ++I) {
    if (New[I] == -1) {
      if (InferAt >= 0)
        fail("reshape: attribute 'newshape' has more than one -1: {}",
             fmt::join(New, ", "));
      InferAt = (int)I;
    } else if (New[I] < -1) {
      fail("reshape: attribute 'newshape' has an invalid extent {}", New[I]);
    }
  }
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("reshape", Args, 0);
  std::vector<Dim> Out(New.size());
  bool OutKnown = true; // all output extents except the -1 are constants
  int64_t OutProduct = 1;
  for (size_t I = 0; I < New.size(); ++I) {
    if ((int)I == InferAt)
      continue;
    if (New[I] == 0) {
      if (!X.shape) {
        Out[I] = Dim::any();
      } else if (I >= X.shape->size()) {
        failArg(0, "reshape: newshape[{}] is 0 (copy the input extent) but the input {} has rank {}",
                I, typeStr(X), X.shape->size());
      } else {
        Out[I] = (*X.shape)[I];
      }
    } else {
      Out[I] = Dim::constant(New[I]);
    }
    if (Out[I].isConst())
      OutProduct *= Out[I].value;
    else
      OutKnown = false;
  }
  bool InKnown = X.isStatic();
  int64_t InProduct = 1;
  if (InKnown)
    for (const Dim &D : *X.shape)
      InProduct *= D.value;
  if (InferAt >= 0) {
    Out[InferAt] = Dim::any();
    if (InKnown && OutKnown) {
      if (OutProduct == 0 || InProduct % OutProduct != 0)
        failArg(0, "reshape: cannot reshape {} into newshape ({}): {} elements do not divide evenly",
                typeStr(X), fmt::join(New, ", "), InProduct);
      Out[InferAt] = Dim::constant(InProduct / OutProduct);
    }
  } else if (InKnown && OutKnown && InProduct != OutProduct) {
    failArg(0, "reshape: cannot reshape {} ({} elements) into newshape ({}) ({} elements)",
            typeStr(X), InProduct, fmt::join(New, ", "), OutProduct);
  }
  return makeTensor(Out, X.dtype);
}

Type transposeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("transpose", A);
  checkArity("transpose", Args, 1);
  std::optional<std::vector<int64_t>> Axes = optInts(A, "axes");
  if (Axes && Axes->empty())
    Axes.reset(); // "[]" means the default, like ONNX's absent perm
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("transpose", Args, 0);
  if (!X.shape) {
    if (!Axes)
      return tensorTypeUnknownRank(X.dtype);
    // The rank is len(axes); the extents are unknown.
    return makeTensor(std::vector<Dim>(Axes->size(), Dim::any()), X.dtype);
  }
  int64_t Rank = (int64_t)X.shape->size();
  std::vector<Dim> Out;
  if (!Axes) {
    Out.assign(X.shape->rbegin(), X.shape->rend());
    return makeTensor(Out, X.dtype);
  }
  if ((int64_t)Axes->size() != Rank)
    failArg(0, "transpose: attribute 'axes' has {} entries but the input {} has rank {}",
            Axes->size(), typeStr(X), Rank);
  std::set<int64_t> Seen;
  for (int64_t Ax : *Axes) {
    int64_t N = normalizeAxisFor("transpose", Ax, Rank);
    if (!Seen.insert(N).second)
      fail("transpose: attribute 'axes' ({}) is not a permutation: axis {} repeats",
           fmt::join(*Axes, ", "), Ax);
    Out.push_back((*X.shape)[N]);
  }
  return makeTensor(Out, X.dtype);
}

// Shared by concatenate and stack: at least one tensor, one dtype, one rank.
// Returns the common rank, or -1 when no argument has a known rank.
int64_t commonRank(std::string_view Op, const std::vector<Type> &Args) {
  if (Args.empty())
    fail("{}: expects at least one tensor", Op);
  const TensorTypeNode &First = tensorArg(Op, Args, 0);
  int64_t Rank = -1;
  size_t RankFrom = 0;
  for (size_t I = 0; I < Args.size(); ++I) {
    const TensorTypeNode &T = tensorArg(Op, Args, I);
    requireSameDType(Op, First, T, I);
    if (!T.shape)
      continue;
    if (Rank < 0) {
      Rank = (int64_t)T.shape->size();
      RankFrom = I;
    } else if ((int64_t)T.shape->size() != Rank) {
      failArg(I, "{}: ranks differ: {} and {}", Op,
              typeStr(tensorArg(Op, Args, RankFrom)), typeStr(T));
    }
  }
  return Rank;
}

Type concatenateRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("concatenate", A);
  int64_t Axis = optInt(A, "axis").value_or(0);
  if (anyUndecided(Args))
    return nullptr;
  int64_t Rank = commonRank("concatenate", Args);
  DType DT = tensorArg("concatenate", Args, 0).dtype;
  if (Rank < 0)
    return tensorTypeUnknownRank(DT);
  if (Rank == 0)
    fail("concatenate: cannot concatenate rank-0 tensors");
  int64_t Ax = normalizeAxisFor("concatenate", Axis, Rank);
  std::vector<Dim> Out(Rank, Dim::any());
  bool Started = false;
  int64_t Total = 0;
  bool TotalKnown = true;
  size_t FirstKnown = 0;
  for (size_t I = 0; I < Args.size(); ++I) {
    const TensorTypeNode &T = tensorArg("concatenate", Args, I);
    if (!T.shape) {
      TotalKnown = false;
      continue;
    }
    for (int64_t K = 0; K < Rank; ++K) {
      const Dim &D = (*T.shape)[K];
      if (K == Ax) {
        if (D.isConst())
          Total += D.value;
        else
          TotalKnown = false;
        continue;
      }
      if (!Started) {
        Out[K] = D;
        continue;
      }
      std::optional<Dim> M = mergeEqualDim(Out[K], D);
      if (!M)
        failArg(I, "concatenate: dimension {} differs (only axis {} may differ): {} and {}",
                K, Ax, typeStr(tensorArg("concatenate", Args, FirstKnown)),
                typeStr(T));
      Out[K] = *M;
    }
    if (!Started)
      FirstKnown = I;
    Started = true;
  }
  Out[Ax] = TotalKnown ? Dim::constant(Total) : Dim::any();
  if (Args.size() == 1)
    Out[Ax] = (*tensorArg("concatenate", Args, 0).shape)[Ax];
  return makeTensor(Out, DT);
}

Type stackRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("stack", A);
  int64_t Axis = optInt(A, "axis").value_or(0);
  if (anyUndecided(Args))
    return nullptr;
  int64_t Rank = commonRank("stack", Args);
  DType DT = tensorArg("stack", Args, 0).dtype;
  if (Rank < 0)
    return tensorTypeUnknownRank(DT);
  int64_t Ax = normalizeAxisFor("stack", Axis, Rank + 1);
  std::vector<Dim> Shape;
  bool Started = false;
  size_t FirstKnown = 0;
  for (size_t I = 0; I < Args.size(); ++I) {
    const TensorTypeNode &T = tensorArg("stack", Args, I);
    if (!T.shape)
      continue;
    if (!Started) {
      Shape = *T.shape;
      Started = true;
      FirstKnown = I;
      continue;
    }
    for (int64_t K = 0; K < Rank; ++K) {
      std::optional<Dim> M = mergeEqualDim(Shape[K], (*T.shape)[K]);
      if (!M)
        failArg(I, "stack: shapes differ: {} and {}",
                typeStr(tensorArg("stack", Args, FirstKnown)), typeStr(T));
      Shape[K] = *M;
    }
  }
  Shape.insert(Shape.begin() + Ax, Dim::constant((int64_t)Args.size()));
  return makeTensor(Shape, DT);
}

// Python slice clamping as NumPy's array_split uses it.
int64_t clampIndex(int64_t I, int64_t N) {
  if (I < 0)
    I += N;
  return std::min(std::max<int64_t>(I, 0), N);
}

Type splitRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("split", A);
  checkArity("split", Args, 1);
  int64_t Axis = optInt(A, "axis").value_or(0);
  std::optional<int64_t> Sections = optInt(A, "sections");
  std::optional<std::vector<int64_t>> Indices = optInts(A, "indices");
  if (Sections.has_value() == Indices.has_value())
    fail("split: exactly one of the attributes 'sections' and 'indices' must be given");
  if (Sections && *Sections <= 0)
    fail("split: attribute 'sections' must be positive, got {}", *Sections);
  size_t Parts = Sections ? (size_t)*Sections : Indices->size() + 1;
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("split", Args, 0);
  std::vector<Type> Fields;
  if (!X.shape) {
    for (size_t I = 0; I < Parts; ++I)
      Fields.push_back(tensorTypeUnknownRank(X.dtype));
    return tupleType(std::move(Fields));
  }
  int64_t Ax = normalizeAxisFor("split", Axis, (int64_t)X.shape->size());
  const Dim &D = (*X.shape)[Ax];
  for (size_t I = 0; I < Parts; ++I) {
    std::vector<Dim> S = *X.shape;
    if (!D.isConst()) {
      S[Ax] = Dim::any();
    } else if (Sections) {
      if (D.value % *Sections != 0)
        failArg(0, "split: {} sections do not divide dimension {} of {} evenly",
                *Sections, Ax, typeStr(X));
      S[Ax] = Dim::constant(D.value / *Sections);
    } else {
      int64_t Begin = I == 0 ? 0 : clampIndex((*Indices)[I - 1], D.value);
      int64_t End = I == Parts - 1 ? D.value : clampIndex((*Indices)[I], D.value);
      S[Ax] = Dim::constant(std::max<int64_t>(End - Begin, 0));
    }
    Fields.push_back(makeTensor(S, X.dtype));
  }
  return tupleType(std::move(Fields));
}

// The number of elements ONNX Slice selects from an axis of extent N.
int64_t sliceLength(int64_t N, int64_t Begin, int64_t End, int64_t Step) {
  auto Adjust = [N](int64_t I) {
    // Avoid overflow on the INT64 extremes that mean "to the end".
    if (I < 0)
      return I < std::numeric_limits<int64_t>::min() + N ? I : I + N;
    return I;
  };
  Begin = Adjust(Begin);
  End = Adjust(End);
  if (Step > 0) {
    Begin = std::min(std::max<int64_t>(Begin, 0), N);
    End = std::min(std::max<int64_t>(End, 0), N);
    return End <= Begin ? 0 : (End - Begin + Step - 1) / Step;
  }
  Begin = std::min(std::max<int64_t>(Begin, 0), N - 1);
  End = std::min(std::max<int64_t>(End, -1), N - 1);
  return Begin <= End ? 0 : (Begin - End + (-Step) - 1) / (-Step);
}

Type stridedSliceRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("strided_slice", A);
  checkArity("strided_slice", Args, 1);
  std::vector<int64_t> Begin = *optInts(A, "begin");
  std::vector<int64_t> End = *optInts(A, "end");
  std::vector<int64_t> Strides =
      optInts(A, "strides").value_or(std::vector<int64_t>(Begin.size(), 1));
  std::vector<int64_t> Axes;
  if (auto Given = optInts(A, "axes")) {
    Axes = *Given;
  } else {
    for (size_t I = 0; I < Begin.size(); ++I)
      Axes.push_back((int64_t)I);
  }
  if (End.size() != Begin.size() || Strides.size() != Begin.size() ||
      Axes.size() != Begin.size())
    fail("strided_slice: attributes 'begin', 'end', 'strides' and 'axes' must "
         "have the same length, got {}, {}, {} and {}",
         Begin.size(), End.size(), Strides.size(), Axes.size());
  for (int64_t S : Strides)
    if (S == 0)
      fail("strided_slice: a stride of 0 is not allowed");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("strided_slice", Args, 0);
  if (!X.shape)
    return tensorTypeUnknownRank(X.dtype);
  int64_t Rank = (int64_t)X.shape->size();
  std::vector<Dim> Out = *X.shape;
  std::set<int64_t> Seen;
  for (size_t I = 0; I < Begin.size(); ++I) {
    int64_t Ax = normalizeAxisFor("strided_slice", Axes[I], Rank);
    if (!Seen.insert(Ax).second)
      fail("strided_slice: axis {} is sliced twice", Axes[I]);
    const Dim &D = (*X.shape)[Ax];
    if (D.isConst()) {
      Out[Ax] = Dim::constant(sliceLength(D.value, Begin[I], End[I], Strides[I]));
    } else if (Begin[I] == 0 && Strides[I] == 1 &&
               End[I] >= std::numeric_limits<int32_t>::max()) {
      Out[Ax] = D; // the whole axis (begin 0, end "infinity")
    } else {
      Out[Ax] = Dim::any();
    }
  }
  return makeTensor(Out, X.dtype);
}

Type takeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("take", A);
  checkArity("take", Args, 2);
  std::optional<int64_t> Axis = optInt(A, "axis");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("take", Args, 0);
  const TensorTypeNode &Idx = tensorArg("take", Args, 1);
  requireIndex("take", Idx, 1);
  if (!Axis) // x is flattened: the result has the shape of the indices
    return makeTensor(Idx.shape, X.dtype);
  if (!X.shape || !Idx.shape) {
    if (X.shape)
      normalizeAxisFor("take", *Axis, (int64_t)X.shape->size());
    return tensorTypeUnknownRank(X.dtype);
  }
  int64_t Ax = normalizeAxisFor("take", *Axis, (int64_t)X.shape->size());
  std::vector<Dim> Out(X.shape->begin(), X.shape->begin() + Ax);
  Out.insert(Out.end(), Idx.shape->begin(), Idx.shape->end());
  Out.insert(Out.end(), X.shape->begin() + Ax + 1, X.shape->end());
  return makeTensor(Out, X.dtype);
}

constexpr auto Inj = FusionPattern::Injective;
using K = AttrSpec::Kind;

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "reshape", "Reshapes to newshape (0 copies an extent, one -1 is inferred).", 1,
    {AttrSpec{"newshape", K::Ints, true,
              "the new extents; 0 copies the input's extent, one -1 is inferred"}},
    reshapeRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "transpose", "Permutes the axes (default: reverses them).", 1,
    {AttrSpec{"axes", K::Ints, false, "the permutation; default reverses the axes"}},
    transposeRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "concatenate", "Joins tensors of one dtype and rank along an axis.", -1,
    {AttrSpec{"axis", K::Int, false, "the axis to join along (default 0)"}},
    concatenateRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "stack", "Stacks tensors of one shape along a new axis.", -1,
    {AttrSpec{"axis", K::Int, false, "position of the new axis, in [-(r+1), r] (default 0)"}},
    stackRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "split", "Splits a tensor along an axis into a tuple of tensors.", 1,
    {AttrSpec{"axis", K::Int, false, "the axis to split (default 0)"},
     AttrSpec{"sections", K::Int, false, "number of equal parts (must divide the extent)"},
     AttrSpec{"indices", K::Ints, false, "split points, NumPy array_split style"}},
    splitRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "strided_slice", "ONNX Slice: begin/end/strides along axes, bounds clamp.", 1,
    {AttrSpec{"begin", K::Ints, true, "start indices (negative count from the end)"},
     AttrSpec{"end", K::Ints, true, "end indices, exclusive (negative count from the end)"},
     AttrSpec{"strides", K::Ints, false, "steps, non-zero (default 1s)"},
     AttrSpec{"axes", K::Ints, false, "the sliced axes (default 0..len(begin)-1)"}},
    stridedSliceRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "take", "Gathers entries of x along an axis at the given indices.", 2,
    {AttrSpec{"axis", K::Int, false, "the gathered axis; absent flattens x"}},
    takeRel, Inj});

} // namespace rivet::ir
