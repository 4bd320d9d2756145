//===- KernelUtil.h - Helpers shared by the reference kernels ---*- C++ -*-===//
//
// Internal to src/kernels/ops: dtype classes and checks, operator-prefixed
// attribute access, broadcast iteration with precomputed strides, and strided
// copies. Adding an operator to a family is one functor plus one
// registration; the loops live here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/AttrSchema.h"
#include "kernels/Attrs.h"
#include "kernels/ElementConvert.h"
#include "kernels/Kernel.h"

#include <array>
#include <cstring>
#include <optional>
#include <type_traits>

namespace rivet::kernels {

/// Which dtypes an operator accepts.
enum class DTypeClass { Any, Numeric, Float, Bool, Index };

inline bool dtypeInClass(DType T, DTypeClass C) {
  switch (C) {
  case DTypeClass::Any: return true;
  case DTypeClass::Numeric: return T != DType::Bool;
  case DTypeClass::Float: return isFloat(T);
  case DTypeClass::Bool: return T == DType::Bool;
  case DTypeClass::Index: return T == DType::Int32 || T == DType::Int64;
  }
  return false;
}

/// Compile-time version of dtypeInClass for the C++ element type E.
template <typename E> constexpr bool elemInClass(DTypeClass C) {
  constexpr DType T = dtypeOf<E>();
  switch (C) {
  case DTypeClass::Any: return true;
  case DTypeClass::Numeric: return T != DType::Bool;
  case DTypeClass::Float:
    return T == DType::Float16 || T == DType::Float32 || T == DType::Float64 ||
           T == DType::BFloat16;
  case DTypeClass::Bool: return T == DType::Bool;
  case DTypeClass::Index: return T == DType::Int32 || T == DType::Int64;
  }
  return false;
}

inline const char *className(DTypeClass C) {
  switch (C) {
  case DTypeClass::Any: return "any dtype";
  case DTypeClass::Numeric: return "a numeric dtype";
  case DTypeClass::Float: return "a float dtype";
  case DTypeClass::Bool: return "bool";
  case DTypeClass::Index: return "int32 or int64";
  }
  return "?";
}

/// Throws "Op: input 'Arg' must have CLASS, got DTYPE".
inline void checkDType(const char *Op, const char *Arg, DType T, DTypeClass C) {
  if (!dtypeInClass(T, C))
    fail("{}: input '{}' must have {}, got {}", Op, Arg, className(C),
         dtypeName(T));
}

/// Throws unless T is a quantized operand (uint8 or int8).
inline void checkQuant8(const char *Op, const char *Arg, const Tensor &T) {
  if (T.dtype() != DType::UInt8 && T.dtype() != DType::Int8)
    fail("{}: input '{}' must be uint8 or int8, got {}", Op, Arg,
         dtypeName(T.dtype()));
}

/// Throws unless exactly N inputs are given.
inline void checkArity(const char *Op, const std::vector<Tensor> &In,
                       size_t N) {
  if (In.size() != N)
    fail("{}: expected {} input{}, got {}", Op, N, N == 1 ? "" : "s",
         In.size());
}

/// Throws unless A and B have the same dtype.
inline void checkSameDType(const char *Op, const char *NA, const Tensor &A,
                           const char *NB, const Tensor &B) {
  if (A.dtype() != B.dtype())
    fail("{}: inputs '{}' and '{}' must have the same dtype, got {} and {}", Op,
         NA, NB, dtypeName(A.dtype()), dtypeName(B.dtype()));
}

/// Runs F and prefixes any rivet::Error message with "Op: ".
template <typename F> decltype(auto) withOp(const char *Op, F &&Fn) {
  try {
    return Fn();
  } catch (const Error &E) {
    throw Error(fmt::format("{}: {}", Op, E.what()));
  }
}

/// The kind of an attribute, for the schemas at the end of each family.
using AttrKind = AttrSpec::Kind;

/// Attribute getters whose errors name the operator. Op is the operator's
/// registered name: an attribute the call leaves out has its schema default.
inline int64_t attrInt(const char *Op, const Attrs &A, const std::string &N) {
  return withOp(Op, [&] { return OpAttrs(Op, A).getInt(N); });
}
inline double attrFloat(const char *Op, const Attrs &A, const std::string &N) {
  return withOp(Op, [&] { return OpAttrs(Op, A).getFloat(N); });
}
inline std::string attrString(const char *Op, const Attrs &A,
                              const std::string &N) {
  return withOp(Op, [&] { return OpAttrs(Op, A).getString(N); });
}
inline std::vector<int64_t> attrInts(const char *Op, const Attrs &A,
                                     const std::string &N) {
  return withOp(Op, [&] { return OpAttrs(Op, A).getInts(N); });
}
/// A dtype attribute whose default is not the schema's but the input's
/// (full, arange, eye_like, full_like: the dtype of x or of the value).
inline std::optional<DType> attrDType(const char *Op, const Attrs &A,
                                      const std::string &N,
                                      std::optional<DType> Default) {
  if (!A.has(N))
    return Default;
  return withOp(Op, [&] { return parseDType(A.getString(N)); });
}
/// A dtype attribute (a string naming a dtype); none when the call leaves
/// it out and the schema has no default.
inline std::optional<DType> attrDType(const char *Op, const Attrs &A,
                                      const std::string &N) {
  OpAttrs OA(Op, A);
  if (!OA.has(N))
    return std::nullopt;
  return withOp(Op, [&] { return parseDType(OA.getString(N)); });
}
/// A 0/1 flag attribute.
inline bool attrFlag(const char *Op, const Attrs &A, const std::string &N) {
  int64_t V = attrInt(Op, A, N);
  if (V != 0 && V != 1)
    fail("{}: attribute '{}' must be 0 or 1, got {}", Op, N, V);
  return V == 1;
}

/// conv's attribute schema (the window and group), also conv2d_nchwc's.
std::vector<AttrSpec> convWindowAttrs();

/// Normalizes an axis, naming the operator in the error.
inline int64_t opAxis(const char *Op, int64_t Axis, int64_t Rank) {
  if (Axis < -Rank || Axis >= Rank)
    fail("{}: axis {} is out of range for rank {}", Op, Axis, Rank);
  return Axis < 0 ? Axis + Rank : Axis;
}

/// NumPy broadcast naming the operator: "add: cannot broadcast (2, 3) and
/// (4,)".
inline Shape opBroadcast(const char *Op, const Shape &A, const Shape &B) {
  return withOp(Op, [&] { return broadcastShapes(A, B); });
}

/// The type arithmetic happens in: float for float16 and bfloat16, the type
/// itself otherwise.
template <typename E>
using ComputeT = std::conditional_t<isHalfLike<E>, float, E>;

/// Strides (in elements) for reading a tensor of shape In while iterating
/// over the broadcast shape Out: 0 on broadcast dimensions.
inline std::vector<int64_t> broadcastStrides(const Shape &In,
                                             const Shape &Out) {
  std::vector<int64_t> C = contiguousStrides(In);
  std::vector<int64_t> S(Out.size(), 0);
  size_t Lead = Out.size() - In.size();
  for (size_t I = 0; I < In.size(); ++I)
    S[Lead + I] = In[I] == 1 ? 0 : C[I];
  return S;
}

/// Calls Fn(OutIndex, Offsets) for every element of Out in row-major order,
/// where Offsets[k] = sum_d idx_d * Strides[k][d] (+ Start[k]). The inner
/// dimension is a tight loop; only the outer odometer does bookkeeping.
template <size_t N, typename F>
void forEachStrided(const Shape &Out,
                    const std::array<std::vector<int64_t>, N> &Strides, F &&Fn,
                    std::array<int64_t, N> Start = {}) {
  int64_t Total = numElements(Out);
  if (Total == 0)
    return;
  size_t R = Out.size();
  if (R == 0) {
    Fn(int64_t(0), Start);
    return;
  }
  int64_t Inner = Out[R - 1];
  std::array<int64_t, N> InnerStride;
  for (size_t K = 0; K < N; ++K)
    InnerStride[K] = Strides[K][R - 1];
  std::vector<int64_t> Idx(R - 1, 0);
  std::array<int64_t, N> Base = Start;
  for (int64_t O = 0; O < Total; O += Inner) {
    std::array<int64_t, N> Off = Base;
    for (int64_t J = 0; J < Inner; ++J) {
      Fn(O + J, Off);
      for (size_t K = 0; K < N; ++K)
        Off[K] += InnerStride[K];
    }
    for (size_t D = R - 1; D-- > 0;) {
      if (++Idx[D] < Out[D]) {
        for (size_t K = 0; K < N; ++K)
          Base[K] += Strides[K][D];
        break;
      }
      for (size_t K = 0; K < N; ++K)
        Base[K] -= Strides[K][D] * (Out[D] - 1);
      Idx[D] = 0;
    }
  }
}

/// Copies elements of size ESize from Src (read with SrcStrides starting at
/// element SrcStart) into the dense row-major Dst of shape Out.
inline void copyStrided(const void *Src, const std::vector<int64_t> &SrcStrides,
                        int64_t SrcStart, void *Dst, const Shape &Out,
                        size_t ESize) {
  // An axis whose source rows follow each other merges with the next (the
  // destination is dense): a slice of whole rows (x[:i] of a [n, 8]) is one
  // memcpy, not one per row of 8.
  size_t Merge = Out.size();
  while (Merge >= 2 &&
         SrcStrides[Merge - 2] == SrcStrides[Merge - 1] * Out[Merge - 1])
    --Merge;
  if (Merge < Out.size()) {
    Shape Merged(Out.begin(), Out.begin() + (std::ptrdiff_t)Merge);
    std::vector<int64_t> Strides(SrcStrides.begin(),
                                 SrcStrides.begin() + (std::ptrdiff_t)Merge);
    for (size_t I = Merge; I < Out.size(); ++I)
      Merged.back() *= Out[I];
    Strides.back() = SrcStrides.back();
    return copyStrided(Src, Strides, SrcStart, Dst, Merged, ESize);
  }
  if (!Out.empty() && SrcStrides.back() == 1 && Out.back() > 1) {
    // Unit-stride rows (slices, most transposes of leading axes): one
    // memcpy per row instead of a loop of element copies. The rows are the
    // elements of Out without its last axis (the odometer then moves once
    // per line of rows, not once per row).
    Shape Rows(Out.begin(), Out.end() - 1);
    std::vector<int64_t> RowStrides(SrcStrides.begin(), SrcStrides.end() - 1);
    size_t RowBytes = (size_t)Out.back() * ESize;
    const char *S = static_cast<const char *>(Src);
    char *D = static_cast<char *>(Dst);
    // Short rows of a size known here are a few vector moves, not a call
    // (an attention head's 16 floats: 1,024 calls were 4 us of a
    // transpose of 64 KB).
    auto CopyRows = [&](auto Size) {
      const size_t Bytes = Size;
      forEachStrided<1>(Rows, {RowStrides},
                        [&](int64_t Row, const std::array<int64_t, 1> &Off) {
                          std::memcpy(D + (size_t)Row * Bytes,
                                      S + (size_t)Off[0] * ESize, Bytes);
                        },
                        {SrcStart});
    };
    switch (RowBytes) {
    case 16: CopyRows(std::integral_constant<size_t, 16>()); break;
    case 32: CopyRows(std::integral_constant<size_t, 32>()); break;
    case 64: CopyRows(std::integral_constant<size_t, 64>()); break;
    case 128: CopyRows(std::integral_constant<size_t, 128>()); break;
    default: CopyRows(RowBytes); break;
    }
    return;
  }
  auto Run = [&](auto Tag) {
    using W = decltype(Tag);
    const W *S = static_cast<const W *>(Src);
    W *D = static_cast<W *>(Dst);
    forEachStrided<1>(
        Out, {SrcStrides},
        [&](int64_t O, const std::array<int64_t, 1> &Off) { D[O] = S[Off[0]]; },
        {SrcStart});
  };
  switch (ESize) {
  case 1: Run(uint8_t{}); break;
  case 2: Run(uint16_t{}); break;
  case 4: Run(uint32_t{}); break;
  case 8: Run(uint64_t{}); break;
  default: fail("copyStrided: unsupported element size {}", ESize);
  }
}

/// Product of Sh[Begin, End).
inline int64_t prodRange(const Shape &Sh, size_t Begin, size_t End) {
  int64_t P = 1;
  for (size_t I = Begin; I < End; ++I)
    P *= Sh[I];
  return P;
}

} // namespace rivet::kernels
