//===- Search.cc - topk and unique ----------------------------------------===//
//
// topk sorts index lists of each slice along the axis (ties: lower index
// first); dyn_topk reads k from a tensor. unique compares whole slices along
// the axis (or single elements without one) and returns the unique values,
// first-occurrence indices, inverse indices and counts, all data-dependent.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

namespace rivet::kernels {
namespace {

//===----------------------------------------------------------------------===//
// topk
//===----------------------------------------------------------------------===//

struct TopKPlan {
  int64_t Outer = 1, D = 1, Inner = 1, K = 0;
  Shape Out;
};

TopKPlan planTopK(const char *Op, const Tensor &X, int64_t K, const Attrs &A) {
  if (X.rank() == 0)
    fail("{}: input 'x' must have rank >= 1, got a scalar", Op);
  int64_t Axis = opAxis(Op, attrInt(Op, A, "axis"), X.rank());
  attrFlag(Op, A, "largest");
  attrFlag(Op, A, "sorted");
  TopKPlan P;
  P.D = X.shape()[Axis];
  if (K < 0 || K > P.D)
    fail("{}: k = {} is out of range for an axis of extent {}", Op, K, P.D);
  P.K = K;
  P.Outer = prodRange(X.shape(), 0, Axis);
  P.Inner = prodRange(X.shape(), Axis + 1, X.shape().size());
  P.Out = X.shape();
  P.Out[Axis] = K;
  return P;
}

int64_t dynK(const std::vector<Tensor> &In) {
  checkArity("dyn_topk", In, 2);
  checkDType("dyn_topk", "k", In[1].dtype(), DTypeClass::Index);
  if (In[1].numel() != 1 || In[1].rank() > 1)
    fail("dyn_topk: input 'k' must hold one value, got shape {}",
         shapeToString(In[1].shape()));
  return In[1].elementAsInt(0);
}

void topkCompute(const char *Op, const Tensor &X, const TopKPlan &P,
                 const Attrs &A, std::vector<Tensor> &Out) {
  bool Largest = attrFlag(Op, A, "largest");
  int64_t *PI = Out[1].data<int64_t>();
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    using C = ComputeT<E>;
    const E *PX = X.data<E>();
    E *PV = Out[0].data<E>();
    std::vector<int64_t> Idx((size_t)P.D);
    std::vector<C> Val((size_t)P.D);
    // NaN counts as larger than every number (NumPy's sort order).
    auto Less = [](C L, C R) {
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(L))
          return false;
        if (std::isnan(R))
          return true;
      }
      return L < R;
    };
    for (int64_t O = 0; O < P.Outer; ++O)
      for (int64_t I = 0; I < P.Inner; ++I) {
        int64_t Base = O * P.D * P.Inner + I;
        for (int64_t J = 0; J < P.D; ++J)
          Val[J] = C(PX[Base + J * P.Inner]);
        std::iota(Idx.begin(), Idx.end(), 0);
        std::partial_sort(
            Idx.begin(), Idx.begin() + P.K, Idx.end(),
            [&](int64_t L, int64_t R) {
              if (Largest ? Less(Val[R], Val[L]) : Less(Val[L], Val[R]))
                return true;
              if (Largest ? Less(Val[L], Val[R]) : Less(Val[R], Val[L]))
                return false;
              return L < R;
            });
        int64_t OBase = O * P.K * P.Inner + I;
        for (int64_t J = 0; J < P.K; ++J) {
          PV[OBase + J * P.Inner] = PX[Base + Idx[J] * P.Inner];
          PI[OBase + J * P.Inner] = Idx[J];
        }
      }
  });
}

std::vector<TensorMeta> topkShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  checkArity("topk", In, 1);
  checkDType("topk", "x", In[0].dtype(), DTypeClass::Numeric);
  TopKPlan P = planTopK("topk", In[0], attrInt("topk", A, "k"), A);
  return {{P.Out, In[0].dtype()}, {P.Out, DType::Int64}};
}

void topkKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &A) {
  TopKPlan P = planTopK("topk", In[0], attrInt("topk", A, "k"), A);
  topkCompute("topk", In[0], P, A, Out);
}

std::vector<TensorMeta> dynTopkShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  int64_t K = dynK(In);
  checkDType("dyn_topk", "x", In[0].dtype(), DTypeClass::Numeric);
  TopKPlan P = planTopK("dyn_topk", In[0], K, A);
  return {{P.Out, In[0].dtype()}, {P.Out, DType::Int64}};
}

void dynTopkKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &A) {
  TopKPlan P = planTopK("dyn_topk", In[0], dynK(In), A);
  topkCompute("dyn_topk", In[0], P, A, Out);
}

//===----------------------------------------------------------------------===//
// unique
//===----------------------------------------------------------------------===//

/// The input seen as N slices along the axis (N single elements without
/// one): element (o, i) of slice j is at ((o * N + j) * Inner + i).
struct UniqueResult {
  std::vector<int64_t> First;   // first-occurrence slice of each unique
  std::vector<int64_t> Inverse; // unique position of each slice
  std::vector<int64_t> Counts;
  int64_t Outer = 1, N = 0, Inner = 1;
  int64_t Axis = -1;
};

UniqueResult computeUnique(const Tensor &X, const Attrs &A) {
  const char *Op = "unique";
  bool Sorted = attrFlag(Op, A, "sorted");
  UniqueResult R;
  if (A.has("axis")) {
    if (X.rank() == 0)
      fail("{}: cannot take unique slices of a scalar", Op);
    R.Axis = opAxis(Op, attrInt(Op, A, "axis"), X.rank());
    R.Outer = prodRange(X.shape(), 0, R.Axis);
    R.N = X.shape()[R.Axis];
    R.Inner = prodRange(X.shape(), R.Axis + 1, X.shape().size());
  } else {
    R.N = X.numel();
  }
  int64_t N = R.N, Outer = R.Outer, Inner = R.Inner;
  // Three-way comparison of slices J and K; NaN sorts last, NaN == NaN.
  std::function<int(int64_t, int64_t)> Cmp;
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    using C = ComputeT<E>;
    const E *PX = X.data<E>();
    Cmp = [PX, N, Outer, Inner](int64_t J, int64_t K) {
      for (int64_t O = 0; O < Outer; ++O)
        for (int64_t I = 0; I < Inner; ++I) {
          C L = C(PX[(O * N + J) * Inner + I]);
          C Rv = C(PX[(O * N + K) * Inner + I]);
          if constexpr (std::is_floating_point_v<C>) {
            bool LN = std::isnan(L), RN = std::isnan(Rv);
            if (LN || RN) {
              if (LN && RN)
                continue;
              return LN ? 1 : -1;
            }
          }
          if (L < Rv)
            return -1;
          if (Rv < L)
            return 1;
        }
      return 0;
    };
  });
  // Stable sort of slice indices: equal slices stay in order of occurrence.
  std::vector<int64_t> Order((size_t)N);
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(),
                   [&](int64_t L, int64_t Rr) { return Cmp(L, Rr) < 0; });
  // Groups of equal slices, in sorted order.
  std::vector<int64_t> GroupOf((size_t)N);
  std::vector<int64_t> GroupFirst, GroupCount;
  for (int64_t P = 0; P < N; ++P) {
    if (P == 0 || Cmp(Order[P - 1], Order[P]) != 0) {
      GroupFirst.push_back(Order[P]);
      GroupCount.push_back(0);
    }
    GroupOf[Order[P]] = (int64_t)GroupFirst.size() - 1;
    GroupCount.back()++;
  }
  size_t G = GroupFirst.size();
  // Output position of each group: sorted order, or by first occurrence.
  std::vector<int64_t> Pos(G);
  std::iota(Pos.begin(), Pos.end(), 0);
  if (!Sorted) {
    std::vector<int64_t> ByFirst(G);
    std::iota(ByFirst.begin(), ByFirst.end(), 0);
    std::sort(ByFirst.begin(), ByFirst.end(), [&](int64_t L, int64_t Rr) {
      return GroupFirst[L] < GroupFirst[Rr];
    });
    for (size_t I = 0; I < G; ++I)
      Pos[ByFirst[I]] = (int64_t)I;
  }
  R.First.assign(G, 0);
  R.Counts.assign(G, 0);
  for (size_t Gi = 0; Gi < G; ++Gi) {
    R.First[Pos[Gi]] = GroupFirst[Gi];
    R.Counts[Pos[Gi]] = GroupCount[Gi];
  }
  R.Inverse.resize((size_t)N);
  for (int64_t J = 0; J < N; ++J)
    R.Inverse[J] = Pos[GroupOf[J]];
  return R;
}

std::vector<TensorMeta> uniqueShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  checkArity("unique", In, 1);
  UniqueResult R = computeUnique(In[0], A);
  int64_t U = (int64_t)R.First.size();
  Shape Y = {U};
  if (R.Axis >= 0) {
    Y = In[0].shape();
    Y[R.Axis] = U;
  }
  return {{Y, In[0].dtype()},
          {{U}, DType::Int64},
          {{R.N}, DType::Int64},
          {{U}, DType::Int64}};
}

void uniqueKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  const Tensor &X = In[0];
  UniqueResult R = computeUnique(X, A);
  int64_t U = (int64_t)R.First.size();
  size_t ES = dtypeSize(X.dtype());
  const char *PX = static_cast<const char *>(X.rawData());
  char *PY = static_cast<char *>(Out[0].rawData());
  for (int64_t O = 0; O < R.Outer; ++O)
    for (int64_t J = 0; J < U; ++J)
      if (R.Inner > 0)
        std::memcpy(PY + ((O * U + J) * R.Inner) * ES,
                    PX + ((O * R.N + R.First[J]) * R.Inner) * ES,
                    (size_t)R.Inner * ES);
  std::copy(R.First.begin(), R.First.end(), Out[1].data<int64_t>());
  std::copy(R.Inverse.begin(), R.Inverse.end(), Out[2].data<int64_t>());
  std::copy(R.Counts.begin(), R.Counts.end(), Out[3].data<int64_t>());
}

} // namespace

RIVET_REGISTER_KERNEL("topk", topkKernel, topkShape, false);
RIVET_REGISTER_KERNEL("dyn_topk", dynTopkKernel, dynTopkShape, true);
RIVET_REGISTER_KERNEL("unique", uniqueKernel, uniqueShape, true);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

namespace {
const AttrSpec TopKAxis{"axis", AttrKind::Int, false, "the axis", -1};
const AttrSpec TopKLargest{"largest", AttrKind::Int, false,
                           "1: largest values; 0: smallest", 1};
const AttrSpec TopKSorted{"sorted", AttrKind::Int, false,
                          "accepted for ONNX; results are always sorted", 1};
} // namespace
RIVET_REGISTER_ATTRS("topk",
                     {{"k", AttrKind::Int, true, "how many values to keep"},
                      TopKAxis,
                      TopKLargest,
                      TopKSorted});
RIVET_REGISTER_ATTRS("dyn_topk", {TopKAxis, TopKLargest, TopKSorted});
RIVET_REGISTER_ATTRS("unique",
                     {{"sorted", AttrKind::Int, false,
                       "1: ascending; 0: first-occurrence order", 1},
                      {"axis", AttrKind::Int, false,
                       "compare slices along this axis; absent: flatten"}});

} // namespace rivet::kernels
