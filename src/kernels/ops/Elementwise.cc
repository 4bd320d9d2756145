//===- Elementwise.cc - Elementwise and broadcast operators ---------------===//
//
// Each operator is a functor with a Name, the DTypeClass it accepts and a
// static apply() on the compute type (float for float16). The generic
// kernels and shape functions below do the dtype dispatch and broadcasting.
// Integer arithmetic wraps (two's complement) instead of overflowing.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <cmath>

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
      return (T)(A / B); // C++ truncates toward zero
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
RIVET_LOGICAL_OP(LogicalAndOp, "logical_and", A && B)
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
struct LogicalNotOp {
  static constexpr const char *Name = "logical_not";
  static constexpr DTypeClass Class = DTypeClass::Bool;
  template <typename T> static T apply(T X) { return !X; }
};

//===----------------------------------------------------------------------===//
// Generic kernels and shape functions.
//===----------------------------------------------------------------------===//

template <typename Op>
std::vector<TensorMeta> binaryShape(const std::vector<Tensor> &In,
                                    const Attrs &) {
  checkArity(Op::Name, In, 2);
  checkSameDType(Op::Name, "a", In[0], "b", In[1]);
  checkDType(Op::Name, "a", In[0].dtype(), Op::Class);
  return {{opBroadcast(Op::Name, In[0].shape(), In[1].shape()),
           Op::OutBool ? DType::Bool : In[0].dtype()}};
}

template <typename Op>
void binaryKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &) {
  const Tensor &A = In[0], &B = In[1];
  Tensor &R = Out[0];
  std::array<std::vector<int64_t>, 2> S{broadcastStrides(A.shape(), R.shape()),
                                        broadcastStrides(B.shape(), R.shape())};
  dispatchDType(A.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(Op::Class)) {
      using C = ComputeT<E>;
      using O = std::conditional_t<Op::OutBool, bool, E>;
      const E *PA = A.data<E>(), *PB = B.data<E>();
      O *PR = R.data<O>();
      forEachStrided<2>(R.shape(), S,
                        [&](int64_t I, const std::array<int64_t, 2> &Off) {
                          PR[I] = convertElement<O>(
                              Op::apply(C(PA[Off[0]]), C(PB[Off[1]])));
                        });
    } else {
      checkDType(Op::Name, "a", A.dtype(), Op::Class);
    }
  });
}

template <typename Op>
std::vector<TensorMeta> unaryShape(const std::vector<Tensor> &In,
                                   const Attrs &) {
  checkArity(Op::Name, In, 1);
  checkDType(Op::Name, "x", In[0].dtype(), Op::Class);
  return {{In[0].shape(), In[0].dtype()}};
}

template <typename Op>
void unaryKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &) {
  const Tensor &X = In[0];
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(Op::Class)) {
      using C = ComputeT<E>;
      const E *P = X.data<E>();
      E *R = Out[0].data<E>();
      int64_t N = X.numel();
      for (int64_t I = 0; I < N; ++I)
        R[I] = convertElement<E>(Op::apply(C(P[I])));
    } else {
      checkDType(Op::Name, "x", X.dtype(), Op::Class);
    }
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
  std::optional<DType> To = attrDType("cast", A, "dtype", std::nullopt);
  if (!To)
    fail("cast: attribute 'dtype' is missing");
  return {{In[0].shape(), *To}};
}

void castKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &) {
  convertBuffer(In[0].rawData(), In[0].dtype(), Out[0].rawData(),
                Out[0].dtype(), In[0].numel());
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
RIVET_BINARY(PowOp);
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
RIVET_REGISTER_KERNEL("where", whereKernel, whereShape, false);
RIVET_REGISTER_KERNEL("cast", castKernel, castShape, false);

} // namespace rivet::kernels
