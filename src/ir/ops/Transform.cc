//===- Transform.cc - Shape manipulation operators ------------------------===//
//
// reshape, transpose, concatenate, stack, split, strided_slice, take,
// squeeze, unsqueeze, flatten, expand, tile, pad, depth_to_space,
// space_to_depth, and the *_dyn variants whose shape/axes/pads come from a
// tensor (their extents are '?': the shape function computes them; a
// reshape_dyn's where ResolveShapeValues proved them).
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"
#include "kernels/ReshapeDims.h"
#include "kernels/SliceBounds.h"
#include "kernels/SplitParts.h"

#include <limits>
#include <set>

namespace rivet::ir {
namespace {

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
        failArg(0,
                "reshape: newshape[{}] is 0 (copy the input extent) but the "
                "input {} has rank {}",
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
        failArg(0,
                "reshape: cannot reshape {} into newshape ({}): {} elements do "
                "not divide evenly",
                typeStr(X), fmt::join(New, ", "), InProduct);
      Out[InferAt] = Dim::constant(InProduct / OutProduct);
    }
  } else if (InKnown && OutKnown && InProduct != OutProduct) {
    failArg(0,
            "reshape: cannot reshape {} ({} elements) into newshape ({}) ({} "
            "elements)",
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
    failArg(0,
            "transpose: attribute 'axes' has {} entries but the input {} has "
            "rank {}",
            Axes->size(), typeStr(X), Rank);
  std::set<int64_t> Seen;
  for (int64_t Ax : *Axes) {
    int64_t N = normalizeAxisFor("transpose", Ax, Rank);
    if (!Seen.insert(N).second)
      fail("transpose: attribute 'axes' ({}) is not a permutation: axis {} "
           "repeats",
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
  int64_t Axis = OpAttrs("concatenate", A).getInt("axis");
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
        failArg(I,
                "concatenate: dimension {} differs (only axis {} may differ): "
                "{} and {}",
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
  int64_t Axis = OpAttrs("stack", A).getInt("axis");
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
  int64_t Axis = OpAttrs("split", A).getInt("axis");
  std::optional<int64_t> Sections = optInt(A, "sections");
  std::optional<std::vector<int64_t>> Indices = optInts(A, "indices");
  if (Sections.has_value() == Indices.has_value())
    fail("split: exactly one of the attributes 'sections' and 'indices' must "
         "be given");
  if (Sections && *Sections <= 0)
    fail("split: attribute 'sections' must be positive, got {}", *Sections);
  if (Indices && A.has("uneven"))
    fail("split: attribute 'uneven' applies to 'sections', not 'indices'");
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
  std::optional<std::vector<std::pair<int64_t, int64_t>>> SectionParts;
  if (Sections && D.isConst()) {
    SectionParts = sectionParts(D.value, *Sections,
                                OpAttrs("split", A).getInt("uneven") != 0);
    if (!SectionParts)
      failArg(0, "split: {} sections do not divide dimension {} of {} evenly",
              *Sections, Ax, typeStr(X));
  }
  for (size_t I = 0; I < Parts; ++I) {
    std::vector<Dim> S = *X.shape;
    if (!D.isConst()) {
      S[Ax] = Dim::any();
    } else if (Sections) {
      auto [Begin, End] = (*SectionParts)[I];
      S[Ax] = Dim::constant(End - Begin);
    } else {
      int64_t Begin = I == 0 ? 0 : clampIndex((*Indices)[I - 1], D.value);
      int64_t End =
          I == Parts - 1 ? D.value : clampIndex((*Indices)[I], D.value);
      S[Ax] = Dim::constant(std::max<int64_t>(End - Begin, 0));
    }
    Fields.push_back(makeTensor(S, X.dtype));
  }
  return tupleType(std::move(Fields));
}

// The number of elements ONNX Slice selects from an axis of extent N: the
// reference kernel's own arithmetic (kernels/SliceBounds.h).
int64_t sliceLength(int64_t N, int64_t Begin, int64_t End, int64_t Step) {
  return sliceBounds(N, Begin, End, Step).count;
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
      Out[Ax] =
          Dim::constant(sliceLength(D.value, Begin[I], End[I], Strides[I]));
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

//===----------------------------------------------------------------------===//
// Data-dependent variants and the remaining ONNX shape operators
//===----------------------------------------------------------------------===//

// The length of a 1-D index-list argument (shape, axes, repeats), or nullopt
// when unknown. Checks the dtype and the rank.
std::optional<int64_t> listLength(std::string_view Op, const TensorTypeNode &T,
                                  size_t Arg, const char *What) {
  requireIndex(Op, T, Arg);
  if (!T.shape)
    return std::nullopt;
  if (T.shape->size() > 1)
    failArg(Arg, "{}: '{}' must be 1-D, got {}", Op, What, typeStr(T));
  if (T.shape->empty())
    return 1;
  const Dim &D = (*T.shape)[0];
  return D.isConst() ? std::optional<int64_t>(D.value) : std::nullopt;
}

Type unknownDims(std::optional<int64_t> Rank, DType T) {
  if (!Rank)
    return tensorTypeUnknownRank(T);
  return makeTensor(std::vector<Dim>(*Rank, Dim::any()), T);
}

// reshape_dyn(x, shape): the rank is the length of `shape`; the extents are
// those "dims" records (ResolveShapeValues), '?' without it.
Type reshapeDynRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("reshape_dyn", A);
  checkArity("reshape_dyn", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("reshape_dyn", Args, 0);
  const TensorTypeNode &S = tensorArg("reshape_dyn", Args, 1);
  std::optional<int64_t> Rank = listLength("reshape_dyn", S, 1, "shape");
  if (!A.has("dims"))
    return unknownDims(Rank, X.dtype);
  std::vector<Dim> Dims;
  for (const std::string &E : A.getStrings("dims")) {
    if (E == reshape_dims::kUnknown)
      Dims.push_back(Dim::any());
    else if (std::optional<int64_t> V = reshape_dims::extentOf(E))
      Dims.push_back(Dim::constant(*V));
    else if (reshape_dims::isSymbolName(E))
      Dims.push_back(Dim::symbol(E));
    else
      fail("reshape_dyn: dims entry '{}' is not an extent, a symbol or ?", E);
  }
  if (Rank && *Rank != (int64_t)Dims.size())
    fail("reshape_dyn: dims has {} entries for a shape of {}", Dims.size(),
         *Rank);
  return makeTensor(std::move(Dims), X.dtype);
}

// split_dyn(x, sizes; axis, num_outputs): the split extents are '?'.
Type splitDynRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("split_dyn", A);
  checkArity("split_dyn", Args, 2);
  int64_t Axis = OpAttrs("split_dyn", A).getInt("axis");
  int64_t N = *optInt(A, "num_outputs");
  if (N < 1)
    fail("split_dyn: attribute 'num_outputs' must be positive, got {}", N);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("split_dyn", Args, 0);
  std::optional<int64_t> Len =
      listLength("split_dyn", tensorArg("split_dyn", Args, 1), 1, "split");
  if (Len && *Len != N)
    failArg(1, "split_dyn: {} sizes for {} outputs", *Len, N);
  Type Piece = tensorTypeUnknownRank(X.dtype);
  if (X.shape) {
    std::vector<Dim> S = *X.shape;
    S[normalizeAxisFor("split_dyn", Axis, (int64_t)S.size())] = Dim::any();
    Piece = makeTensor(S, X.dtype);
  }
  return tupleType(std::vector<Type>(N, Piece));
}

// slice_dyn(x, starts, ends[, axes[, steps]]): same rank, sliced extents '?'.
Type sliceDynRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("slice_dyn", A);
  if (Args.size() < 3 || Args.size() > 5)
    fail("slice_dyn: expects 3 to 5 arguments (x, starts, ends, axes?, "
         "steps?), got {}",
         Args.size());
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("slice_dyn", Args, 0);
  static const char *Names[] = {"x", "starts", "ends", "axes", "steps"};
  for (size_t I = 1; I < Args.size(); ++I)
    listLength("slice_dyn", tensorArg("slice_dyn", Args, I), I, Names[I]);
  if (!X.shape)
    return tensorTypeUnknownRank(X.dtype);
  return unknownDims((int64_t)X.shape->size(), X.dtype);
}

// squeeze(x; axes?): without axes, drops every extent known to be 1 (an
// unknown extent makes the rank unknown).
Type squeezeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("squeeze", A);
  checkArity("squeeze", Args, 1);
  std::optional<std::vector<int64_t>> Axes = optInts(A, "axes");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("squeeze", Args, 0);
  if (!X.shape)
    return tensorTypeUnknownRank(X.dtype);
  int64_t Rank = (int64_t)X.shape->size();
  std::vector<bool> Drop(Rank, false);
  if (!Axes) {
    for (int64_t I = 0; I < Rank; ++I) {
      const Dim &D = (*X.shape)[I];
      if (!D.isConst())
        return tensorTypeUnknownRank(X.dtype);
      Drop[I] = D.value == 1;
    }
  } else {
    for (int64_t Ax : *Axes) {
      int64_t N = normalizeAxisFor("squeeze", Ax, Rank);
      if (Drop[N])
        fail("squeeze: axis {} appears more than once", Ax);
      const Dim &D = (*X.shape)[N];
      if (D.isConst() && D.value != 1)
        failArg(0, "squeeze: cannot squeeze axis {} of {}: its extent is not 1",
                Ax, typeStr(X));
      Drop[N] = true;
    }
  }
  std::vector<Dim> Out;
  for (int64_t I = 0; I < Rank; ++I)
    if (!Drop[I])
      Out.push_back((*X.shape)[I]);
  return makeTensor(Out, X.dtype);
}

// squeeze_dyn(x, axes): the rank drops by len(axes).
Type squeezeDynRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("squeeze_dyn", A);
  checkArity("squeeze_dyn", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("squeeze_dyn", Args, 0);
  std::optional<int64_t> N =
      listLength("squeeze_dyn", tensorArg("squeeze_dyn", Args, 1), 1, "axes");
  if (!X.shape || !N)
    return tensorTypeUnknownRank(X.dtype);
  int64_t Rank = (int64_t)X.shape->size() - *N;
  if (Rank < 0)
    failArg(1, "squeeze_dyn: {} axes for {}", *N, typeStr(X));
  return unknownDims(Rank, X.dtype);
}

// unsqueeze(x; axes): axes index the output (rank r + len(axes)).
Type unsqueezeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("unsqueeze", A);
  checkArity("unsqueeze", Args, 1);
  std::vector<int64_t> Axes = *optInts(A, "axes");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("unsqueeze", Args, 0);
  if (!X.shape)
    return tensorTypeUnknownRank(X.dtype);
  int64_t Rank = (int64_t)(X.shape->size() + Axes.size());
  std::vector<bool> New(Rank, false);
  for (int64_t Ax : Axes) {
    int64_t N = normalizeAxisFor("unsqueeze", Ax, Rank);
    if (New[N])
      fail("unsqueeze: axis {} appears more than once", Ax);
    New[N] = true;
  }
  std::vector<Dim> Out;
  size_t Next = 0;
  for (int64_t I = 0; I < Rank; ++I)
    Out.push_back(New[I] ? Dim::constant(1) : (*X.shape)[Next++]);
  return makeTensor(Out, X.dtype);
}

Type unsqueezeDynRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("unsqueeze_dyn", A);
  checkArity("unsqueeze_dyn", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("unsqueeze_dyn", Args, 0);
  std::optional<int64_t> N = listLength(
      "unsqueeze_dyn", tensorArg("unsqueeze_dyn", Args, 1), 1, "axes");
  if (!X.shape || !N)
    return tensorTypeUnknownRank(X.dtype);
  return unknownDims((int64_t)X.shape->size() + *N, X.dtype);
}

// The product of Dims[Begin, End): constant when all are, else '?'.
Dim dimProduct(const std::vector<Dim> &Dims, size_t Begin, size_t End) {
  int64_t P = 1;
  for (size_t I = Begin; I < End; ++I) {
    if (!Dims[I].isConst())
      return End - Begin == 1 ? Dims[I] : Dim::any();
    P *= Dims[I].value;
  }
  return Dim::constant(P);
}

// flatten(x; axis): 2-D (prod(d[:axis]), prod(d[axis:])), axis in [-r, r].
Type flattenRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("flatten", A);
  checkArity("flatten", Args, 1);
  int64_t Axis = OpAttrs("flatten", A).getInt("axis");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("flatten", Args, 0);
  if (!X.shape)
    return makeTensor(std::vector<Dim>{Dim::any(), Dim::any()}, X.dtype);
  int64_t Rank = (int64_t)X.shape->size();
  if (Axis < -Rank || Axis > Rank)
    failArg(0, "flatten: axis {} is out of range [{}, {}] for {}", Axis, -Rank,
            Rank, typeStr(X));
  if (Axis < 0)
    Axis += Rank;
  return makeTensor(std::vector<Dim>{dimProduct(*X.shape, 0, Axis),
                                     dimProduct(*X.shape, Axis, Rank)},
                    X.dtype);
}

// expand(x; shape): bidirectional broadcast of x's shape with `shape`.
Type expandRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("expand", A);
  checkArity("expand", Args, 1);
  std::vector<int64_t> To = *optInts(A, "shape");
  for (int64_t D : To)
    if (D < 0)
      fail("expand: attribute 'shape' has a negative extent {}", D);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("expand", Args, 0);
  std::vector<Dim> ToDims;
  for (int64_t D : To)
    ToDims.push_back(Dim::constant(D));
  TensorTypeNode Target(ToDims, X.dtype);
  std::optional<std::vector<Dim>> Out = broadcastArgs("expand", {&X, &Target});
  return makeTensor(Out, X.dtype);
}

// expand_dyn(x, shape): rank max(rank(x), len(shape)), extents unknown
// except where x's extent is a constant other than 1 (it must survive).
Type expandDynRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("expand_dyn", A);
  checkArity("expand_dyn", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("expand_dyn", Args, 0);
  std::optional<int64_t> N =
      listLength("expand_dyn", tensorArg("expand_dyn", Args, 1), 1, "shape");
  if (!X.shape || !N)
    return tensorTypeUnknownRank(X.dtype);
  int64_t R = std::max<int64_t>((int64_t)X.shape->size(), *N);
  std::vector<Dim> Out(R, Dim::any());
  size_t Lead = R - X.shape->size();
  for (size_t I = 0; I < X.shape->size(); ++I) {
    const Dim &D = (*X.shape)[I];
    if (D.isConst() && D.value != 1)
      Out[Lead + I] = D;
  }
  return makeTensor(Out, X.dtype);
}

// tile(x; repeats): one repeat per dimension.
Type tileRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("tile", A);
  checkArity("tile", Args, 1);
  std::vector<int64_t> Reps = *optInts(A, "repeats");
  for (int64_t R : Reps)
    if (R < 0)
      fail("tile: attribute 'repeats' has a negative entry {}", R);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("tile", Args, 0);
  if (!X.shape)
    return unknownDims((int64_t)Reps.size(), X.dtype);
  if (X.shape->size() != Reps.size())
    failArg(
        0,
        "tile: attribute 'repeats' has {} entries but the input {} has rank {}",
        Reps.size(), typeStr(X), X.shape->size());
  std::vector<Dim> Out;
  for (size_t I = 0; I < Reps.size(); ++I) {
    const Dim &D = (*X.shape)[I];
    if (D.isConst())
      Out.push_back(Dim::constant(D.value * Reps[I]));
    else
      Out.push_back(Reps[I] == 1   ? D
                    : Reps[I] == 0 ? Dim::constant(0)
                                   : Dim::any());
  }
  return makeTensor(Out, X.dtype);
}

Type tileDynRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("tile_dyn", A);
  checkArity("tile_dyn", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("tile_dyn", Args, 0);
  std::optional<int64_t> N =
      listLength("tile_dyn", tensorArg("tile_dyn", Args, 1), 1, "repeats");
  if (X.shape && N && *N != (int64_t)X.shape->size())
    failArg(1, "tile_dyn: {} repeats for {}", *N, typeStr(X));
  if (!X.shape)
    return unknownDims(N, X.dtype);
  return unknownDims((int64_t)X.shape->size(), X.dtype);
}

void checkPadMode(std::string_view Op, const Attrs &A) {
  std::string Mode = OpAttrs(Op, A).getString("mode");
  if (Mode != "constant" && Mode != "reflect" && Mode != "edge" &&
      Mode != "wrap")
    fail("{}: attribute 'mode' must be constant, reflect, edge or wrap, got "
         "'{}'",
         Op, Mode);
}

// pad(x; pads, mode, value, axes?): pads = [begins..., ends...].
Type padRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("pad", A);
  checkArity("pad", Args, 1);
  checkPadMode("pad", A);
  std::vector<int64_t> Pads = *optInts(A, "pads");
  std::optional<std::vector<int64_t>> Axes = optInts(A, "axes");
  if (Pads.size() % 2 != 0)
    fail("pad: attribute 'pads' must have an even length, got {}", Pads.size());
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("pad", Args, 0);
  if (!X.shape)
    return Axes ? tensorTypeUnknownRank(X.dtype)
                : unknownDims((int64_t)Pads.size() / 2, X.dtype);
  int64_t Rank = (int64_t)X.shape->size();
  std::vector<int64_t> Ax;
  if (Axes) {
    std::set<int64_t> Seen;
    for (int64_t I : *Axes) {
      Ax.push_back(normalizeAxisFor("pad", I, Rank));
      if (!Seen.insert(Ax.back()).second)
        fail("pad: axis {} appears more than once", I);
    }
  } else {
    for (int64_t I = 0; I < Rank; ++I)
      Ax.push_back(I);
  }
  size_t N = Ax.size();
  if (Pads.size() != 2 * N)
    failArg(0, "pad: attribute 'pads' has {} entries, expected {} for {}",
            Pads.size(), 2 * N, typeStr(X));
  std::vector<Dim> Out = *X.shape;
  for (size_t I = 0; I < N; ++I) {
    int64_t Delta = Pads[I] + Pads[I + N];
    Dim &D = Out[Ax[I]];
    if (D.isConst()) {
      if (D.value + Delta < 0)
        failArg(0, "pad: pads crop axis {} of {} below zero", Ax[I],
                typeStr(X));
      D = Dim::constant(D.value + Delta);
    } else if (Delta != 0) {
      D = Dim::any();
    }
  }
  return makeTensor(Out, X.dtype);
}

// pad_dyn(x, pads[, value[, axes]]): same rank; padded extents unknown.
Type padDynRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("pad_dyn", A);
  checkPadMode("pad_dyn", A);
  if (Args.size() < 2 || Args.size() > 4)
    fail("pad_dyn: expects 2 to 4 arguments (x, pads, value?, axes?), got {}",
         Args.size());
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("pad_dyn", Args, 0);
  std::optional<int64_t> N =
      listLength("pad_dyn", tensorArg("pad_dyn", Args, 1), 1, "pads");
  if (Args.size() > 2)
    requireSameDType("pad_dyn", X, tensorArg("pad_dyn", Args, 2), 2);
  if (Args.size() > 3)
    listLength("pad_dyn", tensorArg("pad_dyn", Args, 3), 3, "axes");
  if (!X.shape)
    return Args.size() > 3 || !N ? tensorTypeUnknownRank(X.dtype)
                                 : unknownDims(*N / 2, X.dtype);
  return unknownDims((int64_t)X.shape->size(), X.dtype);
}

// depth_to_space / space_to_depth on NCHW.
template <bool ToSpace>
Type spaceRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = ToSpace ? "depth_to_space" : "space_to_depth";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  int64_t B = *optInt(A, "blocksize");
  if (B <= 0)
    fail("{}: attribute 'blocksize' must be positive, got {}", Op, B);
  if (ToSpace) {
    std::string Mode = OpAttrs(Op, A).getString("mode");
    if (Mode != "DCR" && Mode != "CRD")
      fail("{}: attribute 'mode' must be DCR or CRD, got '{}'", Op, Mode);
  }
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (!X.shape)
    return unknownDims(4, X.dtype);
  if (X.shape->size() != 4)
    failArg(0, "{}: the input must have rank 4 (N, C, H, W), got {}", Op,
            typeStr(X));
  std::vector<Dim> Out = *X.shape;
  auto Scale = [&](size_t I, bool Mul, int64_t F) {
    const Dim &D = (*X.shape)[I];
    if (!D.isConst()) {
      Out[I] = Dim::any();
      return;
    }
    if (!Mul && D.value % F != 0)
      failArg(0, "{}: dimension {} of {} is not divisible by {}", Op, I,
              typeStr(X), F);
    Out[I] = Dim::constant(Mul ? D.value * F : D.value / F);
  };
  Scale(1, !ToSpace, B * B);
  Scale(2, ToSpace, B);
  Scale(3, ToSpace, B);
  return makeTensor(Out, X.dtype);
}

/// Info with identityWhenTypeKept set.
OpInfo identityWhenTypeKeptOp(OpInfo Info) {
  Info.identityWhenTypeKept = true;
  return Info;
}

} // namespace

RIVET_REGISTER_OP(viewOp(OpInfo{
    "reshape", "Reshapes to newshape (0 copies an extent, one -1 is inferred).",
    1, reshapeRel, Inj}));
RIVET_REGISTER_OP(OpInfo{"transpose",
                         "Permutes the axes (default: reverses them).", 1,
                         transposeRel, Inj});
RIVET_REGISTER_OP(OpInfo{"concatenate",
                         "Joins tensors of one dtype and rank along an axis.",
                         -1, concatenateRel, Inj});
RIVET_REGISTER_OP(OpInfo{"stack",
                         "Stacks tensors of one shape along a new axis.", -1,
                         stackRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "split",
    "Splits a tensor along an axis into a tuple of tensors: equal "
    "sections (uneven=1: the last ones smaller) or at split points.",
    1, splitRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "strided_slice", "ONNX Slice: begin/end/strides along axes, bounds clamp.",
    1, stridedSliceRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "take", "Gathers entries of x along an axis at the given indices.", 2,
    takeRel, Inj});

RIVET_REGISTER_OP(viewOp(OpInfo{
    "reshape_dyn",
    "Reshapes to the shape held by a 1-D int64 tensor (ONNX "
    "Reshape with a computed shape; 0 copies unless allowzero).",
    2, reshapeDynRel, FusionPattern::Opaque}));
RIVET_REGISTER_OP(OpInfo{
    "split_dyn",
    "ONNX Split with the part sizes held by a 1-D int64 tensor "
    "(they must add up to the extent); a tuple.",
    2, splitDynRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "slice_dyn",
    "ONNX Slice with starts/ends/axes/steps as tensors; the "
    "extents depend on their values.",
    -1, sliceDynRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(viewOp(OpInfo{
    "squeeze",
    "Removes the given axes of extent 1 (default: every axis of "
    "extent 1).",
    1, squeezeRel, Inj}));
RIVET_REGISTER_OP(viewOp(OpInfo{
    "squeeze_dyn", "Removes the axes of extent 1 named by a 1-D int64 tensor.",
    2, squeezeDynRel, FusionPattern::Opaque}));
RIVET_REGISTER_OP(viewOp(OpInfo{
    "unsqueeze",
    "Inserts axes of extent 1; axes index the output (rank "
    "r + len(axes)).",
    1, unsqueezeRel, Inj}));
RIVET_REGISTER_OP(viewOp(OpInfo{
    "unsqueeze_dyn",
    "Inserts axes of extent 1 at the output positions held "
    "by a 1-D int64 tensor.",
    2, unsqueezeDynRel, FusionPattern::Opaque}));
RIVET_REGISTER_OP(viewOp(OpInfo{
    "flatten",
    "Reshapes to 2-D: (prod(d[:axis]), prod(d[axis:])), axis in "
    "[-r, r].",
    1, flattenRel, Inj}));
RIVET_REGISTER_OP(identityWhenTypeKeptOp(OpInfo{
    "expand",
    "Broadcasts x against a shape (ONNX Expand: bidirectional, "
    "the result may be larger than the shape).",
    1, expandRel, FusionPattern::Broadcast}));
RIVET_REGISTER_OP(OpInfo{
    "expand_dyn", "ONNX Expand with the shape held by a 1-D int64 tensor.", 2,
    expandDynRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(identityWhenTypeKeptOp(OpInfo{
    "tile",
    "Repeats x along each axis (ONNX Tile); repeats has one entry "
    "per axis.",
    1, tileRel, Inj}));
RIVET_REGISTER_OP(OpInfo{
    "tile_dyn", "ONNX Tile with the repeats held by a 1-D int64 tensor.", 2,
    tileDynRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "pad",
    "Pads (or crops, for negative pads) each axis: constant, reflect, "
    "edge or wrap mode.",
    1, padRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "pad_dyn",
    "ONNX Pad with pads (and optionally the fill value and axes) "
    "held by tensors.",
    -1, padDynRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "depth_to_space",
    "Moves channel blocks into spatial blocks: (N, C, H, W) "
    "-> (N, C/b^2, H*b, W*b).",
    1, spaceRel<true>, Inj});
RIVET_REGISTER_OP(OpInfo{"space_to_depth",
                         "Moves spatial blocks into channels: (N, C, H, W) -> "
                         "(N, C*b^2, H/b, W/b).",
                         1, spaceRel<false>, Inj});

} // namespace rivet::ir
