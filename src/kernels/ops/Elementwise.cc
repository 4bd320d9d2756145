//===- Elementwise.cc - Elementwise and broadcast operators ---------------===//
//
// Each operator is a functor with a Name, the DTypeClass it accepts and a
// static apply() on the compute type (float for float16). The generic
// kernels and shape functions below do the dtype dispatch and broadcasting.
// A functor with attributes (mod's fmod, isinf's flags) is constructed from
// the call's Attrs. Integer arithmetic wraps (two's complement) instead of
// overflowing.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rivet::kernels {
namespace {

//===----------------------------------------------------------------------===//
// Integer helpers: wrapping arithmetic without undefined behaviour.
//===----------------------------------------------------------------------===//

template <typename T> T wrapAdd(T A, T B) {
  if constexpr (std::is_integral_v<T>)
    return (T)((uint64_t)A + (uint64_t)B);
  else
    return A + B;
}
template <typename T> T wrapSub(T A, T B) {
  if constexpr (std::is_integral_v<T>)
    return (T)((uint64_t)A - (uint64_t)B);
  else
    return A - B;
}
template <typename T> T wrapMul(T A, T B) {
  if constexpr (std::is_integral_v<T>)
    return (T)((uint64_t)A * (uint64_t)B);
  else
    return A * B;
}
template <typename T> T wrapNeg(T A) {
  if constexpr (std::is_integral_v<T>)
    return (T)(0 - (uint64_t)A);
  else
    return -A;
}

//===----------------------------------------------------------------------===//
// Binary functors.
//===----------------------------------------------------------------------===//

struct AddOp {
  static constexpr const char *Name = "add";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  static constexpr bool OutBool = false;
  template <typename T> static T apply(T A, T B) { return wrapAdd(A, B); }
};
struct SubtractOp {
  static constexpr const char *Name = "subtract";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  static constexpr bool OutBool = false;
  template <typename T> static T apply(T A, T B) { return wrapSub(A, B); }
};
struct MultiplyOp {
  static constexpr const char *Name = "multiply";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  static constexpr bool OutBool = false;
  template <typename T> static T apply(T A, T B) { return wrapMul(A, B); }
};
struct DivideOp {
  static constexpr const char *Name = "divide";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  static constexpr bool OutBool = false;
  template <typename T> static T apply(T A, T B) {
    if constexpr (std::is_integral_v<T>) {
      if (B == 0)
        fail("divide: integer division by zero");
      if constexpr (std::is_signed_v<T>)
        if (B == -1)
          return wrapNeg(A); // INT_MIN / -1 wraps
      return (T)(A / B);     // C++ truncates toward zero
    } else {
      return A / B;
    }
  }
};
struct PowOp {
  static constexpr const char *Name = "pow";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  static constexpr bool OutBool = false;
  template <typename T> static T apply(T A, T B) {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_signed_v<T>) {
        // A negative exponent gives 1/A^|B| truncated toward zero.
        if (B < 0)
          return A == 1 ? T(1) : A == -1 ? (B % 2 ? T(-1) : T(1)) : T(0);
      }
      T R = 1, Base = A;
      for (uint64_t E = (uint64_t)B; E; E >>= 1) {
        if (E & 1)
          R = wrapMul(R, Base);
        Base = wrapMul(Base, Base);
      }
      return R;
    } else {
      return std::pow(A, B);
    }
  }
};
struct MaximumOp {
  static constexpr const char *Name = "maximum";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  static constexpr bool OutBool = false;
  template <typename T> static T apply(T A, T B) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(A) || std::isnan(B))
        return std::isnan(A) ? A : B; // NaN propagates, as in NumPy
    return A < B ? B : A;
  }
};
struct MinimumOp {
  static constexpr const char *Name = "minimum";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  static constexpr bool OutBool = false;
  template <typename T> static T apply(T A, T B) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(A) || std::isnan(B))
        return std::isnan(A) ? A : B;
    return B < A ? B : A;
  }
};

struct ModOp {
  static constexpr const char *Name = "mod";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  static constexpr bool OutBool = false;
  bool Fmod = false; // true: the sign of the dividend (C fmod)
  ModOp() = default;
  explicit ModOp(const Attrs &A) : Fmod(attrFlag(Name, A, "fmod")) {}
  template <typename T> T apply(T A, T B) const {
    if constexpr (std::is_integral_v<T>) {
      if (B == 0)
        fail("mod: integer modulo by zero");
      if constexpr (std::is_signed_v<T>) {
        if (B == -1)
          return T(0); // INT_MIN % -1 would overflow
        T R = (T)(A % B);
        // Python/NumPy mod takes the sign of the divisor.
        if (!Fmod && R != 0 && ((R < 0) != (B < 0)))
          R = (T)(R + B);
        return R;
      } else {
        return (T)(A % B);
      }
    } else {
      T R = std::fmod(A, B);
      if (!Fmod && R != 0 && ((R < 0) != (B < 0)))
        R += B;
      return R;
    }
  }
};
/// Shifts by B bits; a shift by the bit width or more gives 0 (or -1 for a
/// negative signed value shifted right), never undefined behaviour.
struct LeftShiftOp {
  static constexpr const char *Name = "left_shift";
  static constexpr bool IntegerOnly = true;
  static constexpr bool OutBool = false;
  template <typename T> static T apply(T A, T B) {
    using U = std::make_unsigned_t<T>;
    if constexpr (std::is_signed_v<T>)
      if (B < 0)
        return T(0);
    if ((uint64_t)B >= sizeof(T) * 8)
      return T(0);
    return (T)(U)((U)A << B);
  }
};
struct RightShiftOp {
  static constexpr const char *Name = "right_shift";
  static constexpr bool IntegerOnly = true;
  static constexpr bool OutBool = false;
  template <typename T> static T apply(T A, T B) {
    if constexpr (std::is_signed_v<T>) {
      if (B < 0)
        return T(0);
      if ((uint64_t)B >= sizeof(T) * 8)
        return A < 0 ? T(-1) : T(0);
    } else {
      if ((uint64_t)B >= sizeof(T) * 8)
        return T(0);
    }
    return (T)(A >> B);
  }
};

/// Bitwise operators on integers; on signed ones they act on the two's
/// complement bits.
#define RIVET_BITWISE_OP(Struct, OpName, Expr)                                 \
  struct Struct {                                                              \
    static constexpr const char *Name = OpName;                                \
    static constexpr bool IntegerOnly = true;                                  \
    static constexpr bool OutBool = false;                                     \
    template <typename T> static T apply(T A, T B) { return (T)(Expr); }       \
  };
RIVET_BITWISE_OP(BitwiseAndOp, "bitwise_and", A &B)
RIVET_BITWISE_OP(BitwiseOrOp, "bitwise_or", A | B)
RIVET_BITWISE_OP(BitwiseXorOp, "bitwise_xor", A ^ B)
#undef RIVET_BITWISE_OP

#define RIVET_COMPARE_OP(Struct, OpName, Expr)                                 \
  struct Struct {                                                              \
    static constexpr const char *Name = OpName;                                \
    static constexpr DTypeClass Class = DTypeClass::Any;                       \
    static constexpr bool OutBool = true;                                      \
    template <typename T> static bool apply(T A, T B) { return Expr; }         \
  };
RIVET_COMPARE_OP(EqualOp, "equal", A == B)
RIVET_COMPARE_OP(NotEqualOp, "not_equal", A != B)
RIVET_COMPARE_OP(LessOp, "less", A < B)
RIVET_COMPARE_OP(LessEqualOp, "less_equal", A <= B)
RIVET_COMPARE_OP(GreaterOp, "greater", A > B)
RIVET_COMPARE_OP(GreaterEqualOp, "greater_equal", A >= B)
#undef RIVET_COMPARE_OP

#define RIVET_LOGICAL_OP(Struct, OpName, Expr)                                 \
  struct Struct {                                                              \
    static constexpr const char *Name = OpName;                                \
    static constexpr DTypeClass Class = DTypeClass::Bool;                      \
    static constexpr bool OutBool = true;                                      \
    template <typename T> static bool apply(T A, T B) { return Expr; }         \
  };
RIVET_LOGICAL_OP(LogicalAndOp, "logical_and", A &&B)
RIVET_LOGICAL_OP(LogicalOrOp, "logical_or", A || B)
RIVET_LOGICAL_OP(LogicalXorOp, "logical_xor", A != B)
#undef RIVET_LOGICAL_OP

//===----------------------------------------------------------------------===//
// Unary functors.
//===----------------------------------------------------------------------===//

struct NegativeOp {
  static constexpr const char *Name = "negative";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  template <typename T> static T apply(T X) { return wrapNeg(X); }
};
struct AbsOp {
  static constexpr const char *Name = "abs";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  template <typename T> static T apply(T X) {
    if constexpr (std::is_floating_point_v<T>)
      return std::fabs(X);
    else if constexpr (std::is_unsigned_v<T>)
      return X;
    else
      return X < 0 ? wrapNeg(X) : X;
  }
};
struct ReluOp {
  static constexpr const char *Name = "relu";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  template <typename T> static T apply(T X) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(X))
        return X;
    return X > T(0) ? X : T(0);
  }
};
struct ExpOp {
  static constexpr const char *Name = "exp";
  static constexpr DTypeClass Class = DTypeClass::Float;
  template <typename T> static T apply(T X) { return std::exp(X); }
};
struct LogOp {
  static constexpr const char *Name = "log";
  static constexpr DTypeClass Class = DTypeClass::Float;
  template <typename T> static T apply(T X) { return std::log(X); }
};
struct TanhOp {
  static constexpr const char *Name = "tanh";
  static constexpr DTypeClass Class = DTypeClass::Float;
  template <typename T> static T apply(T X) { return std::tanh(X); }
};
struct SigmoidOp {
  static constexpr const char *Name = "sigmoid";
  static constexpr DTypeClass Class = DTypeClass::Float;
  template <typename T> static T apply(T X) {
    // Stable on both tails: never evaluates exp of a large positive number.
    if (X >= T(0))
      return T(1) / (T(1) + std::exp(-X));
    T E = std::exp(X);
    return E / (T(1) + E);
  }
};
struct SqrtOp {
  static constexpr const char *Name = "sqrt";
  static constexpr DTypeClass Class = DTypeClass::Float;
  template <typename T> static T apply(T X) { return std::sqrt(X); }
};
struct BitwiseNotOp {
  static constexpr const char *Name = "bitwise_not";
  static constexpr bool IntegerOnly = true;
  template <typename T> static T apply(T X) { return (T)~X; }
};
struct LogicalNotOp {
  static constexpr const char *Name = "logical_not";
  static constexpr DTypeClass Class = DTypeClass::Bool;
  template <typename T> static T apply(T X) { return !X; }
};

#define RIVET_FLOAT_UNARY(Struct, OpName, Expr)                                \
  struct Struct {                                                              \
    static constexpr const char *Name = OpName;                                \
    static constexpr DTypeClass Class = DTypeClass::Float;                     \
    template <typename T> static T apply(T X) { return Expr; }                 \
  };
RIVET_FLOAT_UNARY(CeilOp, "ceil", std::ceil(X))
RIVET_FLOAT_UNARY(FloorOp, "floor", std::floor(X))
// nearbyint in the default rounding mode rounds half to even, as ONNX Round.
RIVET_FLOAT_UNARY(RoundOp, "round", std::nearbyint(X))
RIVET_FLOAT_UNARY(ReciprocalOp, "reciprocal", T(1) / X)
RIVET_FLOAT_UNARY(ErfOp, "erf", std::erf(X))
RIVET_FLOAT_UNARY(SinOp, "sin", std::sin(X))
RIVET_FLOAT_UNARY(CosOp, "cos", std::cos(X))
RIVET_FLOAT_UNARY(TanOp, "tan", std::tan(X))
RIVET_FLOAT_UNARY(AsinOp, "asin", std::asin(X))
RIVET_FLOAT_UNARY(AcosOp, "acos", std::acos(X))
RIVET_FLOAT_UNARY(AtanOp, "atan", std::atan(X))
RIVET_FLOAT_UNARY(SinhOp, "sinh", std::sinh(X))
RIVET_FLOAT_UNARY(CoshOp, "cosh", std::cosh(X))
RIVET_FLOAT_UNARY(AsinhOp, "asinh", std::asinh(X))
RIVET_FLOAT_UNARY(AcoshOp, "acosh", std::acosh(X))
RIVET_FLOAT_UNARY(AtanhOp, "atanh", std::atanh(X))
#undef RIVET_FLOAT_UNARY

struct SignOp {
  static constexpr const char *Name = "sign";
  static constexpr DTypeClass Class = DTypeClass::Numeric;
  template <typename T> static T apply(T X) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(X))
        return X;
      return X > T(0) ? T(1) : X < T(0) ? T(-1) : T(0);
    } else if constexpr (std::is_signed_v<T>) {
      return X > 0 ? T(1) : X < 0 ? T(-1) : T(0);
    } else {
      return X != 0 ? T(1) : T(0);
    }
  }
};
struct IsNaNOp {
  static constexpr const char *Name = "isnan";
  static constexpr DTypeClass Class = DTypeClass::Float;
  static constexpr bool OutBool = true;
  template <typename T> static bool apply(T X) { return std::isnan(X); }
};
struct IsInfOp {
  static constexpr const char *Name = "isinf";
  static constexpr DTypeClass Class = DTypeClass::Float;
  static constexpr bool OutBool = true;
  bool Negative = true, Positive = true;
  IsInfOp() = default;
  explicit IsInfOp(const Attrs &A)
      : Negative(attrFlag(Name, A, "detect_negative")),
        Positive(attrFlag(Name, A, "detect_positive")) {}
  template <typename T> bool apply(T X) const {
    return std::isinf(X) && (X < T(0) ? Negative : Positive);
  }
};

//===----------------------------------------------------------------------===//
// Generic kernels and shape functions.
//===----------------------------------------------------------------------===//

/// The functor of one call: built from the attributes when it takes any.
template <typename Op> Op makeFunctor(const Attrs &A) {
  if constexpr (std::is_constructible_v<Op, const Attrs &>)
    return Op(A);
  else
    return Op{};
}

/// Whether Op computes on element type E (IntegerOnly: integers, not bool).
template <typename Op, typename E> constexpr bool opAccepts() {
  if constexpr (requires { Op::IntegerOnly; })
    return std::is_integral_v<E> && !std::is_same_v<E, bool>;
  else
    return elemInClass<E>(Op::Class);
}

template <typename Op> void checkOpDType(const char *Arg, DType T) {
  if constexpr (requires { Op::IntegerOnly; }) {
    if (!isInteger(T))
      fail("{}: input '{}' must have an integer dtype, got {}", Op::Name, Arg,
           dtypeName(T));
  } else {
    checkDType(Op::Name, Arg, T, Op::Class);
  }
}

template <typename Op> constexpr bool outBool() {
  if constexpr (requires { Op::OutBool; })
    return Op::OutBool;
  else
    return false;
}

template <typename Op>
std::vector<TensorMeta> binaryShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  checkArity(Op::Name, In, 2);
  checkSameDType(Op::Name, "a", In[0], "b", In[1]);
  checkOpDType<Op>("a", In[0].dtype());
  makeFunctor<Op>(A); // validates the attributes
  return {{opBroadcast(Op::Name, In[0].shape(), In[1].shape()),
           outBool<Op>() ? DType::Bool : In[0].dtype()}};
}

template <typename Op>
void binaryKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &Attr) {
  if constexpr (std::is_same_v<Op, EqualOp> || std::is_same_v<Op, NotEqualOp>)
    if (isString(In[0].dtype())) {
      // Interned strings are equal exactly when their handles are.
      auto handles = [](const Tensor &T) {
        return Tensor(T.storage(), T.byteOffset(), T.shape(), DType::UInt64);
      };
      std::vector<Tensor> Handles{handles(In[0]), handles(In[1])};
      return binaryKernel<Op>(Handles, Out, Attr);
    }
  const Tensor &A = In[0], &B = In[1];
  Tensor &R = Out[0];
  Op F = makeFunctor<Op>(Attr);
  // Without broadcasting, or against a single element, one flat loop does
  // (scalars in a loop body, same-shape operands): no strides to set up.
  int64_t N = R.numel(), NA = A.numel(), NB = B.numel();
  bool Flat = (NA == N || NA == 1) && (NB == N || NB == 1);
  std::array<std::vector<int64_t>, 2> S;
  if (!Flat)
    S = {broadcastStrides(A.shape(), R.shape()),
         broadcastStrides(B.shape(), R.shape())};
  dispatchDType(A.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (opAccepts<Op, E>()) {
      using C = ComputeT<E>;
      using O = std::conditional_t<outBool<Op>(), bool, E>;
      const E *PA = A.data<E>(), *PB = B.data<E>();
      O *PR = R.data<O>();
      if (Flat) {
        int64_t SA = NA == 1 ? 0 : 1, SB = NB == 1 ? 0 : 1;
        for (int64_t I = 0; I < N; ++I)
          PR[I] = convertElement<O>(F.apply(C(PA[I * SA]), C(PB[I * SB])));
        return;
      }
      forEachStrided<2>(
          R.shape(), S, [&](int64_t I, const std::array<int64_t, 2> &Off) {
            PR[I] = convertElement<O>(F.apply(C(PA[Off[0]]), C(PB[Off[1]])));
          });
    } else {
      checkOpDType<Op>("a", A.dtype());
    }
  });
}

template <typename Op>
std::vector<TensorMeta> unaryShape(const std::vector<Tensor> &In,
                                   const Attrs &A) {
  checkArity(Op::Name, In, 1);
  checkOpDType<Op>("x", In[0].dtype());
  makeFunctor<Op>(A);
  return {{In[0].shape(), outBool<Op>() ? DType::Bool : In[0].dtype()}};
}

template <typename Op>
void unaryKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &A) {
  const Tensor &X = In[0];
  Op F = makeFunctor<Op>(A);
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (opAccepts<Op, E>()) {
      using C = ComputeT<E>;
      using O = std::conditional_t<outBool<Op>(), bool, E>;
      const E *P = X.data<E>();
      O *R = Out[0].data<O>();
      int64_t N = X.numel();
      for (int64_t I = 0; I < N; ++I)
        R[I] = convertElement<O>(F.apply(C(P[I])));
    } else {
      checkOpDType<Op>("x", X.dtype());
    }
  });
}

//===----------------------------------------------------------------------===//
// pow with an exponent of another dtype (ONNX Pow since opset 12).
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> powShape(const std::vector<Tensor> &In, const Attrs &) {
  checkArity("pow", In, 2);
  checkDType("pow", "a", In[0].dtype(), DTypeClass::Numeric);
  checkDType("pow", "b", In[1].dtype(), DTypeClass::Numeric);
  return {{opBroadcast("pow", In[0].shape(), In[1].shape()), In[0].dtype()}};
}

void powKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  if (In[0].dtype() == In[1].dtype())
    return binaryKernel<PowOp>(In, Out, A);
  Tensor &R = Out[0];
  std::array<std::vector<int64_t>, 2> S{
      broadcastStrides(In[0].shape(), R.shape()),
      broadcastStrides(In[1].shape(), R.shape())};
  dispatchDType(In[0].dtype(), [&](auto BaseTag) {
    using E = decltype(BaseTag);
    dispatchDType(In[1].dtype(), [&](auto ExpTag) {
      using F = decltype(ExpTag);
      if constexpr (!std::is_same_v<E, bool> && !std::is_same_v<F, bool>) {
        const E *PA = In[0].data<E>();
        const F *PB = In[1].data<F>();
        E *PR = R.data<E>();
        constexpr bool BothInt = std::is_integral_v<E> && std::is_integral_v<F>;
        forEachStrided<2>(
            R.shape(), S, [&](int64_t I, const std::array<int64_t, 2> &Off) {
              if constexpr (BothInt && std::is_unsigned_v<F>) {
                // Wrapping arithmetic modulo 2^64 truncates to E
                // consistently; an unsigned exponent is never negative.
                PR[I] = (E)PowOp::apply<uint64_t>((uint64_t)PA[Off[0]],
                                                  (uint64_t)PB[Off[1]]);
              } else if constexpr (BothInt) {
                // Wrapping int64 arithmetic truncates to E consistently.
                PR[I] = (E)PowOp::apply<int64_t>((int64_t)PA[Off[0]],
                                                 (int64_t)PB[Off[1]]);
              } else {
                // NumPy: power in float64, then cast to the base's dtype.
                PR[I] = convertElement<E>(
                    std::pow(convertElement<double>(PA[Off[0]]),
                             convertElement<double>(PB[Off[1]])));
              }
            });
      }
    });
  });
}

//===----------------------------------------------------------------------===//
// where and cast.
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> whereShape(const std::vector<Tensor> &In,
                                   const Attrs &) {
  checkArity("where", In, 3);
  checkDType("where", "cond", In[0].dtype(), DTypeClass::Bool);
  checkSameDType("where", "x", In[1], "y", In[2]);
  Shape S = opBroadcast("where", In[0].shape(), In[1].shape());
  S = opBroadcast("where", S, In[2].shape());
  return {{S, In[1].dtype()}};
}

void whereKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &) {
  Tensor &R = Out[0];
  std::array<std::vector<int64_t>, 3> S{
      broadcastStrides(In[0].shape(), R.shape()),
      broadcastStrides(In[1].shape(), R.shape()),
      broadcastStrides(In[2].shape(), R.shape())};
  const bool *C = In[0].data<bool>();
  dispatchDType(R.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    const E *X = In[1].data<E>(), *Y = In[2].data<E>();
    E *P = R.data<E>();
    forEachStrided<3>(R.shape(), S,
                      [&](int64_t I, const std::array<int64_t, 3> &Off) {
                        P[I] = C[Off[0]] ? X[Off[1]] : Y[Off[2]];
                      });
  });
}

std::vector<TensorMeta> castShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  checkArity("cast", In, 1);
  std::optional<DType> To = attrDType("cast", A, "dtype");
  if (!To)
    fail("cast: attribute 'dtype' is missing");
  return {{In[0].shape(), *To}};
}

void castKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &A) {
  OpAttrs Own("cast", A); // cast_like has the same attributes
  bool Saturate = Own.getInt("saturate") != 0;
  RoundMode R = parseRoundMode(Own.getString("round_mode"));
  convertBuffer(In[0].rawData(), In[0].dtype(), Out[0].rawData(),
                Out[0].dtype(), In[0].numel(), Saturate, R);
}

std::vector<TensorMeta> castLikeShape(const std::vector<Tensor> &In,
                                      const Attrs &) {
  checkArity("cast_like", In, 2);
  return {{In[0].shape(), In[1].dtype()}};
}

//===----------------------------------------------------------------------===//
// legacy_broadcast and full_like.
//===----------------------------------------------------------------------===//

/// ONNX opset <= 6 broadcasting: b's dims align with a's starting at `axis`;
/// the result is b reshaped to a's rank with 1s around.
std::vector<TensorMeta> legacyBroadcastShape(const std::vector<Tensor> &In,
                                             const Attrs &A) {
  checkArity("legacy_broadcast", In, 2);
  int64_t RankA = In[1].rank(), RankB = In[0].rank();
  int64_t Axis = attrInt("legacy_broadcast", A, "axis");
  if (Axis < 0)
    Axis += RankA;
  if (Axis < 0 || Axis + RankB > RankA)
    fail("legacy_broadcast: axis {} does not fit b of shape {} into a of "
         "shape {}",
         attrInt("legacy_broadcast", A, "axis"), shapeToString(In[0].shape()),
         shapeToString(In[1].shape()));
  Shape Out((size_t)RankA, 1);
  for (int64_t I = 0; I < RankB; ++I)
    Out[(size_t)(Axis + I)] = In[0].shape()[(size_t)I];
  return {{Out, In[0].dtype()}};
}

void legacyBroadcastKernel(const std::vector<Tensor> &In,
                           std::vector<Tensor> &Out, const Attrs &) {
  if (In[0].nbytes())
    std::memcpy(Out[0].rawData(), In[0].rawData(), In[0].nbytes());
}

std::vector<TensorMeta> fullLikeShape(const std::vector<Tensor> &In,
                                      const Attrs &A) {
  checkArity("full_like", In, 1);
  withOp("full_like", [&] { return A.getFloat("value"); });
  return {{In[0].shape(), *attrDType("full_like", A, "dtype", In[0].dtype())}};
}

void fullLikeKernel(const std::vector<Tensor> &, std::vector<Tensor> &Out,
                    const Attrs &A) {
  double V = A.getFloat("value");
  dispatchDType(Out[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E Fill = convertElement<E>(V);
    E *P = Out[0].data<E>();
    std::fill(P, P + Out[0].numel(), Fill);
  });
}

} // namespace

#define RIVET_BINARY(Op)                                                       \
  RIVET_REGISTER_KERNEL(Op::Name, binaryKernel<Op>, binaryShape<Op>, false)
#define RIVET_UNARY(Op)                                                        \
  RIVET_REGISTER_KERNEL(Op::Name, unaryKernel<Op>, unaryShape<Op>, false)

RIVET_BINARY(AddOp);
RIVET_BINARY(SubtractOp);
RIVET_BINARY(MultiplyOp);
RIVET_BINARY(DivideOp);
RIVET_BINARY(ModOp);
RIVET_BINARY(LeftShiftOp);
RIVET_BINARY(RightShiftOp);
RIVET_BINARY(BitwiseAndOp);
RIVET_BINARY(BitwiseOrOp);
RIVET_BINARY(BitwiseXorOp);
RIVET_BINARY(MaximumOp);
RIVET_BINARY(MinimumOp);
RIVET_BINARY(EqualOp);
RIVET_BINARY(NotEqualOp);
RIVET_BINARY(LessOp);
RIVET_BINARY(LessEqualOp);
RIVET_BINARY(GreaterOp);
RIVET_BINARY(GreaterEqualOp);
RIVET_BINARY(LogicalAndOp);
RIVET_BINARY(LogicalOrOp);
RIVET_BINARY(LogicalXorOp);
RIVET_UNARY(NegativeOp);
RIVET_UNARY(AbsOp);
RIVET_UNARY(ReluOp);
RIVET_UNARY(ExpOp);
RIVET_UNARY(LogOp);
RIVET_UNARY(TanhOp);
RIVET_UNARY(SigmoidOp);
RIVET_UNARY(SqrtOp);
RIVET_UNARY(LogicalNotOp);
RIVET_UNARY(BitwiseNotOp);
RIVET_UNARY(CeilOp);
RIVET_UNARY(FloorOp);
RIVET_UNARY(RoundOp);
RIVET_UNARY(ReciprocalOp);
RIVET_UNARY(ErfOp);
RIVET_UNARY(SinOp);
RIVET_UNARY(CosOp);
RIVET_UNARY(TanOp);
RIVET_UNARY(AsinOp);
RIVET_UNARY(AcosOp);
RIVET_UNARY(AtanOp);
RIVET_UNARY(SinhOp);
RIVET_UNARY(CoshOp);
RIVET_UNARY(AsinhOp);
RIVET_UNARY(AcoshOp);
RIVET_UNARY(AtanhOp);
RIVET_UNARY(SignOp);
RIVET_UNARY(IsNaNOp);
RIVET_UNARY(IsInfOp);
RIVET_REGISTER_KERNEL("pow", powKernel, powShape, false);
RIVET_REGISTER_KERNEL("where", whereKernel, whereShape, false);
RIVET_REGISTER_KERNEL("cast", castKernel, castShape, false);
RIVET_REGISTER_KERNEL("cast_like", castKernel, castLikeShape, false);
RIVET_REGISTER_KERNEL("legacy_broadcast", legacyBroadcastKernel,
                      legacyBroadcastShape, false);
RIVET_REGISTER_KERNEL("full_like", fullLikeKernel, fullLikeShape, false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS("mod", {{"fmod", AttrKind::Int, false,
                              "1: C fmod (sign of the dividend)", 0}});
RIVET_REGISTER_ATTRS(
    "isinf", {{"detect_negative", AttrKind::Int, false, "0/1: count -inf", 1},
              {"detect_positive", AttrKind::Int, false, "0/1: count +inf", 1}});
// saturate and round_mode matter only for the narrow float types (ONNX Cast
// 19 and 24); cast and cast_like share them.
#define RIVET_NARROW_CAST_ATTRS                                                \
  {"saturate", AttrKind::Int, false,                                           \
   "1: values beyond a float8 type's range become its largest; 0: infinity "   \
   "or NaN",                                                                   \
   1},                                                                         \
  {                                                                            \
    "round_mode", AttrKind::String, false,                                     \
        "rounding to float8e8m0: up, down or nearest", "up"                    \
  }
RIVET_REGISTER_ATTRS("cast", {{"dtype", AttrKind::String, true,
                               "the target dtype, e.g. \"float32\""},
                              RIVET_NARROW_CAST_ATTRS});
RIVET_REGISTER_ATTRS("cast_like", {RIVET_NARROW_CAST_ATTRS});
RIVET_REGISTER_ATTRS(
    "legacy_broadcast",
    {{"axis", AttrKind::Int, true,
      "where b's first dim aligns in a; negative counts from a's end"}});
RIVET_REGISTER_ATTRS("full_like", {{"value", AttrKind::Float, true,
                                    "the fill value, converted to dtype"},
                                   {"dtype", AttrKind::String, false,
                                    "the result dtype; default x's"}});

} // namespace rivet::kernels
