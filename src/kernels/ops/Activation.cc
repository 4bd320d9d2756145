//===- Activation.cc - Activation functions -------------------------------===//
//
// Parameterized elementwise activations (ONNX Elu, Selu, Celu, LeakyRelu,
// HardSigmoid, HardSwish, ThresholdedRelu, Shrink, Softplus, Softsign, Clip)
// and prelu. Each activation is a functor built from the call's Attrs (with
// ONNX's defaults) whose apply() runs on the compute type: float for
// float16, double for the integer dtypes that shrink accepts.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace rivet::kernels {
namespace {

/// Arithmetic type of an activation: float for float16/bfloat16, double for
/// integers, the type itself for float32/float64.
template <typename E>
using ActT =
    std::conditional_t<isHalfLike<E>, float,
                       std::conditional_t<std::is_integral_v<E>, double, E>>;

struct EluOp {
  static constexpr const char *Name = "elu";
  static constexpr DTypeClass Class = DTypeClass::Float;
  double Alpha;
  explicit EluOp(const Attrs &A) : Alpha(attrFloat(Name, A, "alpha")) {}
  template <typename T> T apply(T X) const {
    return X < T(0) ? T(Alpha) * std::expm1(X) : X;
  }
};
struct SeluOp {
  static constexpr const char *Name = "selu";
  static constexpr DTypeClass Class = DTypeClass::Float;
  double Alpha, Gamma;
  explicit SeluOp(const Attrs &A)
      : Alpha(attrFloat(Name, A, "alpha")), Gamma(attrFloat(Name, A, "gamma")) {
  }
  template <typename T> T apply(T X) const {
    return X > T(0) ? T(Gamma) * X : T(Gamma) * T(Alpha) * std::expm1(X);
  }
};
struct CeluOp {
  static constexpr const char *Name = "celu";
  static constexpr DTypeClass Class = DTypeClass::Float;
  double Alpha;
  explicit CeluOp(const Attrs &A) : Alpha(attrFloat(Name, A, "alpha")) {
    if (Alpha == 0)
      fail("celu: attribute 'alpha' must not be 0");
  }
  template <typename T> T apply(T X) const {
    return X > T(0) ? X : T(Alpha) * std::expm1(X / T(Alpha));
  }
};
struct LeakyReluOp {
  static constexpr const char *Name = "leaky_relu";
  static constexpr DTypeClass Class = DTypeClass::Float;
  double Alpha;
  explicit LeakyReluOp(const Attrs &A) : Alpha(attrFloat(Name, A, "alpha")) {}
  template <typename T> T apply(T X) const {
    return X < T(0) ? T(Alpha) * X : X;
  }
};
struct HardSigmoidOp {
  static constexpr const char *Name = "hard_sigmoid";
  static constexpr DTypeClass Class = DTypeClass::Float;
  double Alpha, Beta;
  explicit HardSigmoidOp(const Attrs &A)
      : Alpha(attrFloat(Name, A, "alpha")), Beta(attrFloat(Name, A, "beta")) {}
  template <typename T> T apply(T X) const {
    return std::fmax(T(0), std::fmin(T(1), T(Alpha) * X + T(Beta)));
  }
};
struct HardSwishOp {
  static constexpr const char *Name = "hard_swish";
  static constexpr DTypeClass Class = DTypeClass::Float;
  explicit HardSwishOp(const Attrs &) {}
  template <typename T> T apply(T X) const {
    return X * std::fmax(T(0), std::fmin(T(1), X / T(6) + T(0.5)));
  }
};
struct ThresholdedReluOp {
  static constexpr const char *Name = "thresholded_relu";
  static constexpr DTypeClass Class = DTypeClass::Float;
  double Alpha;
  explicit ThresholdedReluOp(const Attrs &A)
      : Alpha(attrFloat(Name, A, "alpha")) {}
  template <typename T> T apply(T X) const { return X > T(Alpha) ? X : T(0); }
};
struct ShrinkOp {
  static constexpr const char *Name = "shrink";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  double Lambd, Bias;
  explicit ShrinkOp(const Attrs &A)
      : Lambd(attrFloat(Name, A, "lambd")), Bias(attrFloat(Name, A, "bias")) {}
  template <typename T> T apply(T X) const {
    if (X < -T(Lambd))
      return X + T(Bias);
    if (X > T(Lambd))
      return X - T(Bias);
    return T(0);
  }
};
struct SoftplusOp {
  static constexpr const char *Name = "softplus";
  static constexpr DTypeClass Class = DTypeClass::Float;
  explicit SoftplusOp(const Attrs &) {}
  template <typename T> T apply(T X) const {
    // log(1 + e^x) without overflow for large x.
    return X > T(0) ? X + std::log1p(std::exp(-X)) : std::log1p(std::exp(X));
  }
};
struct SoftsignOp {
  static constexpr const char *Name = "softsign";
  static constexpr DTypeClass Class = DTypeClass::Float;
  explicit SoftsignOp(const Attrs &) {}
  template <typename T> T apply(T X) const { return X / (T(1) + std::fabs(X)); }
};

template <typename Op>
std::vector<TensorMeta> activationShape(const std::vector<Tensor> &In,
                                        const Attrs &A) {
  checkArity(Op::Name, In, 1);
  checkDType(Op::Name, "x", In[0].dtype(), Op::Class);
  (void)Op{A}; // validates the attributes
  return {{In[0].shape(), In[0].dtype()}};
}

template <typename Op>
void activationKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &A) {
  const Tensor &X = In[0];
  Op F{A};
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(Op::Class)) {
      using C = ActT<E>;
      const E *P = X.data<E>();
      E *R = Out[0].data<E>();
      int64_t N = X.numel();
      for (int64_t I = 0; I < N; ++I)
        R[I] = convertElement<E>(F.apply(C(P[I])));
    } else {
      checkDType(Op::Name, "x", X.dtype(), Op::Class);
    }
  });
}

//===----------------------------------------------------------------------===//
// clip
//===----------------------------------------------------------------------===//

/// Bounds converted to the element type (saturating), so int64 bounds stay
/// exact when they come from int64 values.
std::vector<TensorMeta> clipShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  checkArity("clip", In, 1);
  checkDType("clip", "x", In[0].dtype(), DTypeClass::Numeric);
  // A bound the call leaves out is no bound; check the kinds of the others.
  for (const char *Bound : {"min", "max"})
    if (A.has(Bound))
      attrFloat("clip", A, Bound);
  return {{In[0].shape(), In[0].dtype()}};
}

void clipKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &A) {
  const Tensor &X = In[0];
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (!std::is_same_v<E, bool>) {
      using C = ComputeT<E>;
      C Lo = A.has("min") ? convertElement<C>(A.getFloat("min"))
                          : std::numeric_limits<C>::lowest();
      C Hi = A.has("max") ? convertElement<C>(A.getFloat("max"))
                          : std::numeric_limits<C>::max();
      const E *P = X.data<E>();
      E *R = Out[0].data<E>();
      int64_t N = X.numel();
      for (int64_t I = 0; I < N; ++I) {
        C V = C(P[I]);
        // NaN stays NaN: neither comparison holds.
        V = V < Lo ? Lo : V;
        V = V > Hi ? Hi : V;
        R[I] = convertElement<E>(V);
      }
    } else {
      checkDType("clip", "x", X.dtype(), DTypeClass::Numeric);
    }
  });
}

//===----------------------------------------------------------------------===//
// prelu
//===----------------------------------------------------------------------===//

/// ONNX PRelu: slope broadcasts (unidirectionally) to x's shape.
std::vector<TensorMeta> preluShape(const std::vector<Tensor> &In,
                                   const Attrs &) {
  checkArity("prelu", In, 2);
  checkSameDType("prelu", "x", In[0], "slope", In[1]);
  checkDType("prelu", "x", In[0].dtype(), DTypeClass::Numeric);
  Shape S = opBroadcast("prelu", In[0].shape(), In[1].shape());
  if (S != In[0].shape())
    fail("prelu: slope of shape {} does not broadcast to x of shape {}",
         shapeToString(In[1].shape()), shapeToString(In[0].shape()));
  return {{S, In[0].dtype()}};
}

void preluKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &) {
  Tensor &R = Out[0];
  std::array<std::vector<int64_t>, 2> S{
      broadcastStrides(In[0].shape(), R.shape()),
      broadcastStrides(In[1].shape(), R.shape())};
  dispatchDType(R.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (!std::is_same_v<E, bool>) {
      using C = ComputeT<E>;
      const E *X = In[0].data<E>(), *Slope = In[1].data<E>();
      E *P = R.data<E>();
      forEachStrided<2>(
          R.shape(), S, [&](int64_t I, const std::array<int64_t, 2> &Off) {
            C V = C(X[Off[0]]);
            P[I] =
                V < C(0) ? convertElement<E>(C(Slope[Off[1]]) * V) : X[Off[0]];
          });
    }
  });
}

//===----------------------------------------------------------------------===//
// dropout (training_mode known only at run time)
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> dropoutShape(const std::vector<Tensor> &In,
                                     const Attrs &) {
  checkArity("dropout", In, 3);
  checkDType("dropout", "ratio", In[1].dtype(), DTypeClass::Float);
  checkDType("dropout", "training_mode", In[2].dtype(), DTypeClass::Bool);
  if (In[1].numel() != 1 || In[2].numel() != 1)
    fail("dropout: 'ratio' and 'training_mode' must be scalars, got shapes "
         "{} and {}",
         shapeToString(In[1].shape()), shapeToString(In[2].shape()));
  return {{In[0].shape(), In[0].dtype()}, {In[0].shape(), DType::Bool}};
}

void dropoutKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &) {
  double Ratio = In[1].elementAsDouble(0);
  bool Training = In[2].data<bool>()[0];
  if (Ratio < 0 || Ratio >= 1)
    fail("dropout: ratio must be in [0, 1), got {}", Ratio);
  // Dropping at random cannot match any reference; refuse it.
  if (Training && Ratio > 0)
    fail("dropout: training mode with ratio {} drops at random, which is "
         "not supported",
         Ratio);
  if (In[0].nbytes())
    std::memcpy(Out[0].rawData(), In[0].rawData(), In[0].nbytes());
  bool *M = Out[1].data<bool>();
  std::fill(M, M + Out[1].numel(), true);
}

} // namespace

#define RIVET_ACTIVATION(Op)                                                   \
  RIVET_REGISTER_KERNEL(Op::Name, activationKernel<Op>, activationShape<Op>,   \
                        false)

RIVET_ACTIVATION(EluOp);
RIVET_ACTIVATION(SeluOp);
RIVET_ACTIVATION(CeluOp);
RIVET_ACTIVATION(LeakyReluOp);
RIVET_ACTIVATION(HardSigmoidOp);
RIVET_ACTIVATION(HardSwishOp);
RIVET_ACTIVATION(ThresholdedReluOp);
RIVET_ACTIVATION(ShrinkOp);
RIVET_ACTIVATION(SoftplusOp);
RIVET_ACTIVATION(SoftsignOp);
RIVET_REGISTER_KERNEL("clip", clipKernel, clipShape, false);
RIVET_REGISTER_KERNEL("prelu", preluKernel, preluShape, false);
RIVET_REGISTER_KERNEL("dropout", dropoutKernel, dropoutShape, false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS("elu",
                     {{"alpha", AttrKind::Float, false, "scale below 0", 1.0}});
RIVET_REGISTER_ATTRS("selu",
                     {{"alpha", AttrKind::Float, false, "scale of e^x - 1",
                       1.67326319217681884765625},
                      {"gamma", AttrKind::Float, false, "scale of the result",
                       1.05070102214813232421875}});
RIVET_REGISTER_ATTRS("celu",
                     {{"alpha", AttrKind::Float, false, "must not be 0", 1.0}});
RIVET_REGISTER_ATTRS("leaky_relu", {{"alpha", AttrKind::Float, false,
                                     "slope below 0", 0.01}});
RIVET_REGISTER_ATTRS("hard_sigmoid",
                     {{"alpha", AttrKind::Float, false, "slope", 0.2},
                      {"beta", AttrKind::Float, false, "offset", 0.5}});
RIVET_REGISTER_ATTRS("thresholded_relu",
                     {{"alpha", AttrKind::Float, false, "the threshold", 1.0}});
RIVET_REGISTER_ATTRS("shrink", {{"lambd", AttrKind::Float, false,
                                 "half the width of the zero band", 0.5},
                                {"bias", AttrKind::Float, false,
                                 "moved toward 0 outside the band", 0.0}});
RIVET_REGISTER_ATTRS("clip", {{"min", AttrKind::Float, false,
                               "lower bound; absent: the dtype's lowest"},
                              {"max", AttrKind::Float, false,
                               "upper bound; absent: the dtype's max"}});

} // namespace rivet::kernels
