//===- Reduce.cc - Reductions, softmax family and cumsum ------------------===//
//
// The reductions (sum, mean, max, min, prod, l1_norm, l2_norm, log_sum,
// log_sum_exp, sum_square) are functors over a common single-pass kernel:
// the input is walked once in row-major order and every element is folded
// into the accumulator of its output position (found through output strides
// that are 0 on reduced axes). Floats accumulate in double, integers in
// int64. dyn_reduce reads its axes from a tensor and forwards to them.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rivet::kernels {
namespace {

/// Accumulator: uint64 for unsigned integers (so that uint64 values above
/// 2^63 compare and wrap correctly), int64 for the others, double for floats.
template <typename E>
using RedAccT = std::conditional_t<
    std::is_unsigned_v<E> && !std::is_same_v<E, bool>, uint64_t,
    std::conditional_t<std::is_integral_v<E>, int64_t, double>>;

struct ReducePlan {
  Shape Out;         // output shape (keepdims applied)
  Shape Kept;        // output shape with reduced axes kept as 1
  int64_t Count = 1; // elements folded into each output
};

ReducePlan planReduce(const char *Op, const Tensor &X, const Attrs &A) {
  int64_t R = X.rank();
  std::vector<int64_t> Axes = attrInts(Op, A, "axis");
  bool KeepDims = attrFlag(Op, A, "keepdims");
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

/// Integer wrap-around arithmetic without signed-overflow UB.
template <typename T> T wrapAdd(T A, T B) {
  if constexpr (std::is_integral_v<T>)
    return (T)((uint64_t)A + (uint64_t)B);
  else
    return A + B;
}
template <typename T> T wrapMul(T A, T B) {
  if constexpr (std::is_integral_v<T>)
    return (T)((uint64_t)A * (uint64_t)B);
  else
    return A * B;
}

// Each functor: Acc<E> (accumulator type), init<E, Acc> (the value of an
// empty reduction of E), step (fold one element), finalize (accumulator and
// element count -> the output value as double or int64), and whether an
// empty reduction is an error unless the call's empty_identity asks for
// init.
struct SumOp {
  static constexpr const char *Name = "sum";
  static constexpr bool NeedsElements = false;
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  template <typename E> using Acc = RedAccT<E>;
  template <typename E, typename T> static T init() { return T(0); }
  template <typename T> static T step(T Acc, T X) { return wrapAdd(Acc, X); }
  template <typename T> static T finalize(T Acc, int64_t) { return Acc; }
};
struct MeanOp : SumOp {
  static constexpr const char *Name = "mean";
  template <typename T> static double finalize(T Acc, int64_t Count) {
    return (double)Acc / (double)Count;
  }
};
struct SumSquareOp : SumOp {
  static constexpr const char *Name = "sum_square";
  template <typename T> static T step(T Acc, T X) {
    return wrapAdd(Acc, wrapMul(X, X));
  }
};
struct L1Op : SumOp {
  static constexpr const char *Name = "l1_norm";
  template <typename T> static T step(T Acc, T X) {
    return wrapAdd(Acc, X < T(0) ? T(0) - X : X);
  }
};
struct L2Op : SumOp {
  static constexpr const char *Name = "l2_norm";
  template <typename E> using Acc = double;
  template <typename T> static T step(T Acc, T X) { return Acc + X * X; }
  static double finalize(double Acc, int64_t) { return std::sqrt(Acc); }
};
struct LogSumOp : SumOp {
  static constexpr const char *Name = "log_sum";
  template <typename E> using Acc = double;
  static double finalize(double Acc, int64_t) { return std::log(Acc); }
};
struct ProdOp : SumOp {
  static constexpr const char *Name = "prod";
  template <typename E, typename T> static T init() { return T(1); }
  template <typename T> static T step(T Acc, T X) { return wrapMul(Acc, X); }
};
/// Running maximum and sum of exp(x - max): one pass, no overflow.
struct LseAcc {
  double Max = -INFINITY;
  double Sum = 0;
  LseAcc() = default;
  explicit LseAcc(double X) : Max(X), Sum(1) {}
};
struct LogSumExpOp : SumOp {
  static constexpr const char *Name = "log_sum_exp";
  template <typename E> using Acc = LseAcc;
  template <typename E, typename T> static T init() { return T(); }
  static LseAcc step(LseAcc A, LseAcc X) {
    double V = X.Max;
    if (std::isnan(V) || std::isnan(A.Max))
      return LseAcc(NAN);
    if (V == -INFINITY)
      return A;
    if (V > A.Max) {
      A.Sum = A.Sum * std::exp(A.Max - V) + 1;
      A.Max = V;
    } else {
      A.Sum += std::exp(V - A.Max);
    }
    return A;
  }
  static double finalize(LseAcc A, int64_t) {
    if (A.Sum == 0)
      return -INFINITY;
    return A.Max + std::log(A.Sum);
  }
};
struct MaxOp {
  static constexpr const char *Name = "max";
  static constexpr bool NeedsElements = true;
  static constexpr DTypeClass Class = DTypeClass::Any;
  template <typename E> using Acc = RedAccT<E>;
  /// -inf, or E's lowest value (false for bool).
  template <typename E, typename T> static T init() {
    if constexpr (std::is_floating_point_v<T>)
      return -std::numeric_limits<T>::infinity();
    else
      return T(std::numeric_limits<E>::lowest());
  }
  template <typename T> static T step(T Acc, T X) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(Acc) || std::isnan(X))
        return std::isnan(Acc) ? Acc : X; // NaN propagates
    return X > Acc ? X : Acc;
  }
  template <typename T> static T finalize(T Acc, int64_t) { return Acc; }
};
struct MinOp : MaxOp {
  static constexpr const char *Name = "min";
  /// +inf, or E's highest value (true for bool).
  template <typename E, typename T> static T init() {
    if constexpr (std::is_floating_point_v<T>)
      return std::numeric_limits<T>::infinity();
    else
      return T(std::numeric_limits<E>::max());
  }
  template <typename T> static T step(T Acc, T X) {
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
  checkDType(Op::Name, "x", In[0].dtype(), Op::Class);
  ReducePlan P = planReduce(Op::Name, In[0], A);
  if (P.Count == 0 && numElements(P.Out) > 0) {
    if (Op::NeedsElements && !attrFlag(Op::Name, A, "empty_identity"))
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
    if constexpr (elemInClass<E>(Op::Class)) {
      using Acc = typename Op::template Acc<E>;
      std::vector<Acc> R((size_t)numElements(P.Kept),
                         Op::template init<E, Acc>());
      std::vector<int64_t> S = broadcastStrides(P.Kept, X.shape());
      const E *PX = X.data<E>();
      forEachStrided<1>(
          X.shape(), {S}, [&](int64_t I, const std::array<int64_t, 1> &Off) {
            R[Off[0]] = Op::step(R[Off[0]], Acc(ComputeT<E>(PX[I])));
          });
      E *PO = Out[0].data<E>();
      for (size_t I = 0; I < R.size(); ++I)
        PO[I] = convertElement<E>(Op::finalize(R[I], P.Count));
    } else {
      checkDType(Op::Name, "x", X.dtype(), Op::Class);
    }
  });
}

//===----------------------------------------------------------------------===//
// dyn_reduce: axes from a tensor
//===----------------------------------------------------------------------===//

/// The static attributes of a dyn_reduce call, or nullopt for the
/// noop_with_empty_axes identity.
std::optional<Attrs> dynReduceAttrs(const std::vector<Tensor> &In,
                                    const Attrs &A, const KernelInfo *&K) {
  const char *Op = "dyn_reduce";
  checkArity(Op, In, 2);
  checkDType(Op, "axes", In[1].dtype(), DTypeClass::Index);
  if (In[1].rank() > 1)
    fail("{}: input 'axes' must be 1-D, got shape {}", Op,
         shapeToString(In[1].shape()));
  std::string R = withOp(Op, [&] { return A.getString("reduction"); });
  K = KernelRegistry::global().find(R);
  static const char *Known[] = {
      "sum",     "mean",    "max",     "min",         "prod",
      "l1_norm", "l2_norm", "log_sum", "log_sum_exp", "sum_square"};
  if (!K || std::find(std::begin(Known), std::end(Known), R) == std::end(Known))
    fail("{}: unknown reduction '{}'", Op, R);
  std::vector<int64_t> Axes = In[1].toIntVector();
  if (Axes.empty() && attrFlag(Op, A, "noop_with_empty_axes"))
    return std::nullopt;
  Attrs S;
  S.set("axis", Axes);
  S.set("keepdims", int64_t(attrFlag(Op, A, "keepdims")));
  if (attrFlag(Op, A, "empty_identity"))
    S.set("empty_identity", int64_t(1));
  return S;
}

std::vector<TensorMeta> dynReduceShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  const KernelInfo *K = nullptr;
  std::optional<Attrs> S = dynReduceAttrs(In, A, K);
  if (!S)
    return {{In[0].shape(), In[0].dtype()}};
  return K->shapeFn({In[0]}, *S);
}

void dynReduceKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  const KernelInfo *K = nullptr;
  std::optional<Attrs> S = dynReduceAttrs(In, A, K);
  if (!S) {
    if (In[0].nbytes() > 0)
      std::memcpy(Out[0].rawData(), In[0].rawData(), In[0].nbytes());
    return;
  }
  std::vector<Tensor> Outs = {Out[0]};
  K->kernel({In[0]}, Outs, *S);
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
  bool KeepDims = attrFlag(Op, A, "keepdims");
  attrFlag(Op, A, "select_last_index");
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
  bool Last = attrFlag(Op::Name, A, "select_last_index");
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
          C B = Best[I];
          bool Take;
          if constexpr (std::is_floating_point_v<C>) {
            // The first NaN wins, as in NumPy (the last with
            // select_last_index).
            if (std::isnan(B))
              Take = Last && std::isnan(V);
            else
              Take = std::isnan(V) || Op::better(V, B) || (Last && V == B);
          } else {
            Take = Op::better(V, B) || (Last && V == B);
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
// softmax, log_softmax, hardmax
//===----------------------------------------------------------------------===//

enum class SoftKind { Softmax, LogSoftmax, Hardmax };

/// Outer/extent/inner of a softmax-like operator. With coerce_2d (ONNX
/// opset < 13) the input is viewed as 2-D [prod(d<axis), prod(d>=axis)].
struct SoftPlan {
  int64_t Outer = 1, D = 1, Inner = 1;
};

SoftPlan planSoft(const char *Op, const Tensor &X, const Attrs &A) {
  bool Coerce = attrFlag(Op, A, "coerce_2d");
  int64_t Axis = attrInt(Op, A, "axis");
  SoftPlan P;
  if (Coerce) {
    // Axis == rank is allowed: the second factor is then 1.
    if (Axis < -X.rank() || Axis > X.rank())
      fail("{}: axis {} is out of range for rank {}", Op, Axis, X.rank());
    if (Axis < 0)
      Axis += X.rank();
    P.Outer = prodRange(X.shape(), 0, Axis);
    P.D = prodRange(X.shape(), Axis, X.shape().size());
    return P;
  }
  Axis = opAxis(Op, Axis, X.rank());
  P.Outer = prodRange(X.shape(), 0, Axis);
  P.D = X.shape()[Axis];
  P.Inner = prodRange(X.shape(), Axis + 1, X.shape().size());
  return P;
}

template <SoftKind Kind> constexpr const char *softName() {
  return Kind == SoftKind::Softmax      ? "softmax"
         : Kind == SoftKind::LogSoftmax ? "log_softmax"
                                        : "hardmax";
}

template <SoftKind Kind>
std::vector<TensorMeta> softShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  constexpr const char *Op = softName<Kind>();
  checkArity(Op, In, 1);
  checkDType(Op, "x", In[0].dtype(), DTypeClass::Float);
  planSoft(Op, In[0], A);
  return {{In[0].shape(), In[0].dtype()}};
}

template <SoftKind Kind>
void softKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &A) {
  constexpr const char *Op = softName<Kind>();
  const Tensor &X = In[0];
  SoftPlan P = planSoft(Op, X, A);
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      const E *PX = X.data<E>();
      E *PR = Out[0].data<E>();
      std::vector<double> Tmp((size_t)P.D);
      for (int64_t O = 0; O < P.Outer; ++O)
        for (int64_t I = 0; I < P.Inner; ++I) {
          int64_t Base = O * P.D * P.Inner + I;
          for (int64_t K = 0; K < P.D; ++K)
            Tmp[K] = (double)ComputeT<E>(PX[Base + K * P.Inner]);
          if constexpr (Kind == SoftKind::Hardmax) {
            // One-hot of the first maximum.
            int64_t Best = 0;
            for (int64_t K = 1; K < P.D; ++K)
              if (Tmp[K] > Tmp[Best])
                Best = K;
            for (int64_t K = 0; K < P.D; ++K)
              PR[Base + K * P.Inner] = convertElement<E>(K == Best ? 1.0 : 0.0);
          } else {
            double Max = -INFINITY;
            for (int64_t K = 0; K < P.D; ++K)
              Max = std::fmax(Max, Tmp[K]);
            double Sum = 0;
            // All -inf: exp(-inf - -inf) is NaN, which is what NumPy gives.
            for (int64_t K = 0; K < P.D; ++K)
              Sum += std::exp(Tmp[K] - Max);
            for (int64_t K = 0; K < P.D; ++K) {
              double R = Kind == SoftKind::Softmax
                             ? std::exp(Tmp[K] - Max) / Sum
                             : Tmp[K] - Max - std::log(Sum);
              PR[Base + K * P.Inner] = convertElement<E>(R);
            }
          }
        }
    } else {
      checkDType(Op, "x", X.dtype(), DTypeClass::Float);
    }
  });
}

//===----------------------------------------------------------------------===//
// cumsum(x[, axis]): the axis is an attribute or a scalar tensor input
//===----------------------------------------------------------------------===//

int64_t cumsumAxis(const std::vector<Tensor> &In, const Attrs &A) {
  if (In.size() != 1 && In.size() != 2)
    fail("cumsum: expected 1 or 2 inputs, got {}", In.size());
  int64_t Axis;
  if (In.size() == 2) {
    checkDType("cumsum", "axis", In[1].dtype(), DTypeClass::Index);
    if (In[1].numel() != 1 || In[1].rank() > 1)
      fail("cumsum: input 'axis' must be a scalar, got shape {}",
           shapeToString(In[1].shape()));
    if (!In[1].hasData())
      return 0; // a meta tensor: the shape does not depend on the axis
    Axis = In[1].elementAsInt(0);
    if (A.has("axis"))
      fail("cumsum: the axis is given both as an input and an attribute");
  } else {
    Axis = attrInt("cumsum", A, "axis");
  }
  return opAxis("cumsum", Axis, std::max<int64_t>(In[0].rank(), 1));
}

std::vector<TensorMeta> cumsumShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  cumsumAxis(In, A);
  checkDType("cumsum", "x", In[0].dtype(), DTypeClass::Numeric);
  attrFlag("cumsum", A, "exclusive");
  attrFlag("cumsum", A, "reverse");
  return {{In[0].shape(), In[0].dtype()}};
}

void cumsumKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  const Tensor &X = In[0];
  int64_t Axis = cumsumAxis(In, A);
  bool Exclusive = attrFlag("cumsum", A, "exclusive");
  bool Reverse = attrFlag("cumsum", A, "reverse");
  // A scalar is treated as a 1-element vector.
  int64_t Outer = X.rank() ? prodRange(X.shape(), 0, Axis) : 1;
  int64_t D = X.rank() ? X.shape()[Axis] : 1;
  int64_t Inner =
      X.rank() ? prodRange(X.shape(), Axis + 1, X.shape().size()) : 1;
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Numeric)) {
      using Acc = RedAccT<E>;
      const E *PX = X.data<E>();
      E *PR = Out[0].data<E>();
      for (int64_t O = 0; O < Outer; ++O)
        for (int64_t I = 0; I < Inner; ++I) {
          Acc S = 0;
          for (int64_t J = 0; J < D; ++J) {
            int64_t K = Reverse ? D - 1 - J : J;
            int64_t Off = (O * D + K) * Inner + I;
            Acc V = Acc(ComputeT<E>(PX[Off]));
            if (!Exclusive)
              S = wrapAdd(S, V);
            PR[Off] = convertElement<E>(S);
            if (Exclusive)
              S = wrapAdd(S, V);
          }
        }
    } else {
      checkDType("cumsum", "x", X.dtype(), DTypeClass::Numeric);
    }
  });
}

} // namespace

RIVET_REGISTER_KERNEL("sum", reduceKernel<SumOp>, reduceShape<SumOp>, false);
RIVET_REGISTER_KERNEL("mean", reduceKernel<MeanOp>, reduceShape<MeanOp>, false);
RIVET_REGISTER_KERNEL("max", reduceKernel<MaxOp>, reduceShape<MaxOp>, false);
RIVET_REGISTER_KERNEL("min", reduceKernel<MinOp>, reduceShape<MinOp>, false);
RIVET_REGISTER_KERNEL("prod", reduceKernel<ProdOp>, reduceShape<ProdOp>, false);
RIVET_REGISTER_KERNEL("l1_norm", reduceKernel<L1Op>, reduceShape<L1Op>, false);
RIVET_REGISTER_KERNEL("l2_norm", reduceKernel<L2Op>, reduceShape<L2Op>, false);
RIVET_REGISTER_KERNEL("log_sum", reduceKernel<LogSumOp>, reduceShape<LogSumOp>,
                      false);
RIVET_REGISTER_KERNEL("log_sum_exp", reduceKernel<LogSumExpOp>,
                      reduceShape<LogSumExpOp>, false);
RIVET_REGISTER_KERNEL("sum_square", reduceKernel<SumSquareOp>,
                      reduceShape<SumSquareOp>, false);
RIVET_REGISTER_KERNEL("dyn_reduce", dynReduceKernel, dynReduceShape, true);
RIVET_REGISTER_KERNEL("argmax", argKernel<ArgMaxOp>, argShape<ArgMaxOp>, false);
RIVET_REGISTER_KERNEL("argmin", argKernel<ArgMinOp>, argShape<ArgMinOp>, false);
RIVET_REGISTER_KERNEL("softmax", softKernel<SoftKind::Softmax>,
                      softShape<SoftKind::Softmax>, false);
RIVET_REGISTER_KERNEL("log_softmax", softKernel<SoftKind::LogSoftmax>,
                      softShape<SoftKind::LogSoftmax>, false);
RIVET_REGISTER_KERNEL("hardmax", softKernel<SoftKind::Hardmax>,
                      softShape<SoftKind::Hardmax>, false);
RIVET_REGISTER_KERNEL("cumsum", cumsumKernel, cumsumShape, false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

namespace {
const AttrSpec KeepDims{"keepdims", AttrKind::Int, false,
                        "1 keeps reduced axes as extent 1", 0};
const std::vector<AttrSpec> ReduceAttrs = {
    {"axis", AttrKind::Ints, false,
     "the reduced axes; absent or empty reduces all", std::vector<int64_t>{}},
    KeepDims};
const AttrSpec EmptyIdentity{
    "empty_identity", AttrKind::Int, false,
    "1: an empty reduction gives the identity (max: -inf or the dtype's "
    "lowest value; min: +inf or its highest); 0: it is an error",
    0};
std::vector<AttrSpec> withEmptyIdentity(std::vector<AttrSpec> S) {
  S.push_back(EmptyIdentity);
  return S;
}
const std::vector<AttrSpec> DynReduceAttrs = {
    {"reduction", AttrKind::String, true,
     "the static reduction: sum, mean, max, min, prod, l1_norm, l2_norm, "
     "log_sum, log_sum_exp or sum_square"},
    KeepDims,
    {"noop_with_empty_axes", AttrKind::Int, false,
     "1: empty axes return the input unchanged; 0: reduce all", 0},
    EmptyIdentity};
const std::vector<AttrSpec> ArgReduceAttrs = {
    {"axis", AttrKind::Int, false,
     "the reduced axis; absent flattens the input"},
    KeepDims,
    {"select_last_index", AttrKind::Int, false,
     "1 picks the last of equal extrema; 0 the first", 0}};
const std::vector<AttrSpec> SoftAttrs = {
    {"axis", AttrKind::Int, false, "the normalized axis", -1},
    {"coerce_2d", AttrKind::Int, false,
     "1 (ONNX opset < 13): normalize over all axes from 'axis' on", 0}};
} // namespace
RIVET_REGISTER_ATTRS("sum", ReduceAttrs);
RIVET_REGISTER_ATTRS("mean", ReduceAttrs);
RIVET_REGISTER_ATTRS("max", withEmptyIdentity(ReduceAttrs));
RIVET_REGISTER_ATTRS("min", withEmptyIdentity(ReduceAttrs));
RIVET_REGISTER_ATTRS("prod", ReduceAttrs);
RIVET_REGISTER_ATTRS("l1_norm", ReduceAttrs);
RIVET_REGISTER_ATTRS("l2_norm", ReduceAttrs);
RIVET_REGISTER_ATTRS("log_sum", ReduceAttrs);
RIVET_REGISTER_ATTRS("log_sum_exp", ReduceAttrs);
RIVET_REGISTER_ATTRS("sum_square", ReduceAttrs);
RIVET_REGISTER_ATTRS("dyn_reduce", DynReduceAttrs);
RIVET_REGISTER_ATTRS("argmax", ArgReduceAttrs);
RIVET_REGISTER_ATTRS("argmin", ArgReduceAttrs);
RIVET_REGISTER_ATTRS("softmax", SoftAttrs);
RIVET_REGISTER_ATTRS("log_softmax", SoftAttrs);
RIVET_REGISTER_ATTRS("hardmax", SoftAttrs);

} // namespace rivet::kernels
