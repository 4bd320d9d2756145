//===- Reduce.cc - Reductions and softmax ---------------------------------===//
//
// sum/mean/max/min are functors over a common single-pass kernel: the input
// is walked once in row-major order and every element is folded into the
// accumulator of its output position (found through output strides that are
// 0 on reduced axes). Floats accumulate in double, integers in int64.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <cmath>

namespace rivet::kernels {
namespace {

template <typename E>
using RedAccT = std::conditional_t<std::is_integral_v<E>, int64_t, double>;

struct ReducePlan {
  Shape Out;                    // output shape (keepdims applied)
  Shape Kept;                   // output shape with reduced axes kept as 1
  int64_t Count = 1;            // elements folded into each output
};

ReducePlan planReduce(const char *Op, const Tensor &X, const Attrs &A) {
  int64_t R = X.rank();
  std::vector<int64_t> Axes = attrInts(Op, A, "axis", {});
  bool KeepDims = attrFlag(Op, A, "keepdims", false);
  std::vector<bool> Reduced(R, Axes.empty());
  for (int64_t Ax : Axes) {
    int64_t N = opAxis(Op, Ax, R);
    if (Reduced[N])
      fail("{}: axis {} appears twice in {}", Op, N, shapeToString(Axes));
    Reduced[N] = true;
  }
  ReducePlan P;
  for (int64_t D = 0; D < R; ++D) {
    int64_t E = X.shape()[D];
    if (Reduced[D]) {
      P.Count *= E;
      P.Kept.push_back(1);
      if (KeepDims)
        P.Out.push_back(1);
    } else {
      P.Kept.push_back(E);
      P.Out.push_back(E);
    }
  }
  return P;
}

struct SumOp {
  static constexpr const char *Name = "sum";
  static constexpr bool NeedsElements = false;
  template <typename T> static T init() { return T(0); }
  template <typename T> static T combine(T Acc, T X) {
    if constexpr (std::is_integral_v<T>)
      return (T)((uint64_t)Acc + (uint64_t)X);
    else
      return Acc + X;
  }
  template <typename T> static double finalize(T Acc, int64_t) {
    return (double)Acc;
  }
};
struct MeanOp : SumOp {
  static constexpr const char *Name = "mean";
  template <typename T> static double finalize(T Acc, int64_t Count) {
    return (double)Acc / (double)Count;
  }
};
struct MaxOp {
  static constexpr const char *Name = "max";
  static constexpr bool NeedsElements = true;
  template <typename T> static T init() {
    if constexpr (std::is_floating_point_v<T>)
      return -std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::min();
  }
  template <typename T> static T combine(T Acc, T X) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(Acc) || std::isnan(X))
        return std::isnan(Acc) ? Acc : X; // NaN propagates
    return X > Acc ? X : Acc;
  }
  template <typename T> static double finalize(T Acc, int64_t) {
    return (double)Acc;
  }
};
struct MinOp : MaxOp {
  static constexpr const char *Name = "min";
  template <typename T> static T init() {
    if constexpr (std::is_floating_point_v<T>)
      return std::numeric_limits<T>::infinity();
    else
      return std::numeric_limits<T>::max();
  }
  template <typename T> static T combine(T Acc, T X) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(Acc) || std::isnan(X))
        return std::isnan(Acc) ? Acc : X;
    return X < Acc ? X : Acc;
  }
};

template <typename Op>
std::vector<TensorMeta> reduceShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  checkArity(Op::Name, In, 1);
  checkDType(Op::Name, "x", In[0].dtype(), DTypeClass::Numeric);
  ReducePlan P = planReduce(Op::Name, In[0], A);
  if (P.Count == 0 && numElements(P.Out) > 0) {
    if (Op::NeedsElements)
      fail("{}: reduction over zero elements of {}", Op::Name,
           shapeToString(In[0].shape()));
    if (std::string_view(Op::Name) == "mean" && !isFloat(In[0].dtype()))
      fail("mean: integer mean over zero elements of {}",
           shapeToString(In[0].shape()));
  }
  return {{P.Out, In[0].dtype()}};
}

template <typename Op>
void reduceKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  const Tensor &X = In[0];
  ReducePlan P = planReduce(Op::Name, X, A);
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Numeric)) {
      using Acc = RedAccT<E>;
      std::vector<Acc> R((size_t)numElements(P.Kept),
                         Op::template init<Acc>());
      std::vector<int64_t> S = broadcastStrides(P.Kept, X.shape());
      const E *PX = X.data<E>();
      forEachStrided<1>(X.shape(), {S},
                        [&](int64_t I, const std::array<int64_t, 1> &Off) {
                          R[Off[0]] = Op::combine(
                              R[Off[0]], Acc(ComputeT<E>(PX[I])));
                        });
      E *PO = Out[0].data<E>();
      for (size_t I = 0; I < R.size(); ++I)
        PO[I] = convertElement<E>(Op::finalize(R[I], P.Count));
    } else {
      checkDType(Op::Name, "x", X.dtype(), DTypeClass::Numeric);
    }
  });
}

//===----------------------------------------------------------------------===//
// argmax / argmin
//===----------------------------------------------------------------------===//

/// Outer/extent/inner decomposition of an arg-reduction, plus output shape.
struct ArgPlan {
  int64_t Outer = 1, D = 1, Inner = 1;
  Shape Out;
};

ArgPlan planArg(const char *Op, const Tensor &X, const Attrs &A) {
  bool KeepDims = attrFlag(Op, A, "keepdims", false);
  ArgPlan P;
  if (!A.has("axis")) {
    P.D = X.numel();
    if (KeepDims)
      P.Out.assign(X.rank(), 1);
    return P;
  }
  if (X.rank() == 0)
    fail("{}: cannot reduce along an axis of a scalar", Op);
  int64_t Axis = opAxis(Op, attrInt(Op, A, "axis"), X.rank());
  P.Outer = prodRange(X.shape(), 0, Axis);
  P.D = X.shape()[Axis];
  P.Inner = prodRange(X.shape(), Axis + 1, X.shape().size());
  P.Out = X.shape();
  if (KeepDims)
    P.Out[Axis] = 1;
  else
    P.Out.erase(P.Out.begin() + Axis);
  return P;
}

struct ArgMaxOp {
  static constexpr const char *Name = "argmax";
  template <typename T> static bool better(T X, T Best) { return X > Best; }
};
struct ArgMinOp {
  static constexpr const char *Name = "argmin";
  template <typename T> static bool better(T X, T Best) { return X < Best; }
};

template <typename Op>
std::vector<TensorMeta> argShape(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  checkArity(Op::Name, In, 1);
  ArgPlan P = planArg(Op::Name, In[0], A);
  if (P.D == 0 && numElements(P.Out) > 0)
    fail("{}: reduction over zero elements of {}", Op::Name,
         shapeToString(In[0].shape()));
  return {{P.Out, DType::Int64}};
}

template <typename Op>
void argKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  const Tensor &X = In[0];
  ArgPlan P = planArg(Op::Name, X, A);
  if (P.D == 0)
    return;
  int64_t *R = Out[0].data<int64_t>();
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    using C = ComputeT<E>;
    const E *PX = X.data<E>();
    std::vector<C> Best((size_t)P.Inner);
    for (int64_t O = 0; O < P.Outer; ++O) {
      const E *Base = PX + O * P.D * P.Inner;
      int64_t *RO = R + O * P.Inner;
      for (int64_t I = 0; I < P.Inner; ++I) {
        Best[I] = C(Base[I]);
        RO[I] = 0;
      }
      for (int64_t K = 1; K < P.D; ++K)
        for (int64_t I = 0; I < P.Inner; ++I) {
          C V = C(Base[K * P.Inner + I]);
          bool Take;
          if constexpr (std::is_floating_point_v<C>) {
            // The first NaN wins, as in NumPy.
            Take = !std::isnan(Best[I]) &&
                   (std::isnan(V) || Op::better(V, Best[I]));
          } else {
            Take = Op::better(V, C(Best[I]));
          }
          if (Take) {
            Best[I] = V;
            RO[I] = K;
          }
        }
    }
  });
}

//===----------------------------------------------------------------------===//
// softmax
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> softmaxShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  checkArity("softmax", In, 1);
  checkDType("softmax", "x", In[0].dtype(), DTypeClass::Float);
  opAxis("softmax", attrInt("softmax", A, "axis", -1), In[0].rank());
  return {{In[0].shape(), In[0].dtype()}};
}

void softmaxKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &A) {
  const Tensor &X = In[0];
  int64_t Axis = opAxis("softmax", attrInt("softmax", A, "axis", -1), X.rank());
  int64_t Outer = prodRange(X.shape(), 0, Axis), D = X.shape()[Axis];
  int64_t Inner = prodRange(X.shape(), Axis + 1, X.shape().size());
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      const E *PX = X.data<E>();
      E *PR = Out[0].data<E>();
      std::vector<double> Tmp((size_t)D);
      for (int64_t O = 0; O < Outer; ++O)
        for (int64_t I = 0; I < Inner; ++I) {
          int64_t Base = O * D * Inner + I;
          double Max = -INFINITY;
          for (int64_t K = 0; K < D; ++K)
            Max = std::fmax(Max, (double)ComputeT<E>(PX[Base + K * Inner]));
          double Sum = 0;
          for (int64_t K = 0; K < D; ++K) {
            double V = (double)ComputeT<E>(PX[Base + K * Inner]);
            // All -inf: exp(-inf - -inf) is NaN, which is what NumPy gives.
            Tmp[K] = std::exp(V - Max);
            Sum += Tmp[K];
          }
          for (int64_t K = 0; K < D; ++K)
            PR[Base + K * Inner] = convertElement<E>(Tmp[K] / Sum);
        }
    } else {
      checkDType("softmax", "x", X.dtype(), DTypeClass::Float);
    }
  });
}

} // namespace

RIVET_REGISTER_KERNEL("sum", reduceKernel<SumOp>, reduceShape<SumOp>, false);
RIVET_REGISTER_KERNEL("mean", reduceKernel<MeanOp>, reduceShape<MeanOp>,
                      false);
RIVET_REGISTER_KERNEL("max", reduceKernel<MaxOp>, reduceShape<MaxOp>, false);
RIVET_REGISTER_KERNEL("min", reduceKernel<MinOp>, reduceShape<MinOp>, false);
RIVET_REGISTER_KERNEL("argmax", argKernel<ArgMaxOp>, argShape<ArgMaxOp>,
                      false);
RIVET_REGISTER_KERNEL("argmin", argKernel<ArgMinOp>, argShape<ArgMinOp>,
                      false);
RIVET_REGISTER_KERNEL("softmax", softmaxKernel, softmaxShape, false);

} // namespace rivet::kernels
