//===- Creation.cc - Creation and shape operators -------------------------===//
//
// shape_of, zeros, ones, full and arange. arange is the one operator here
// whose output shape depends on input values.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <cmath>

namespace rivet::kernels {
namespace {

std::vector<TensorMeta> shapeOfShape(const std::vector<Tensor> &In,
                                     const Attrs &) {
  checkArity("shape_of", In, 1);
  return {{{In[0].rank()}, DType::Int64}};
}

void shapeOfKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &) {
  int64_t *P = Out[0].data<int64_t>();
  for (int64_t I = 0; I < In[0].rank(); ++I)
    P[I] = In[0].shape()[I];
}

std::vector<TensorMeta> dimSizeShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  checkArity("dim_size", In, 1);
  withOp("dim_size", [&] { normalizeAxis(A.getInt("axis"), In[0].rank()); });
  return {{{}, DType::Int64}};
}

void dimSizeKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &A) {
  *Out[0].data<int64_t>() =
      In[0].shape()[normalizeAxis(A.getInt("axis"), In[0].rank())];
}

/// The `shape` attribute, validated.
Shape shapeAttr(const char *Op, const Attrs &A) {
  Shape S = attrInts(Op, A, "shape");
  for (int64_t D : S)
    if (D < 0)
      fail("{}: negative extent {} in shape {}", Op, D, shapeToString(S));
  withOp(Op, [&] { return numElements(S); });
  return S;
}

/// Fills Out with Value converted to Out's dtype.
void fillWith(Tensor &Out, double Value) {
  dispatchDType(Out.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E V = convertElement<E>(Value);
    E *P = Out.data<E>();
    std::fill(P, P + Out.numel(), V);
  });
}

template <int Value> struct FillOp;
template <> struct FillOp<0> { static constexpr const char *Name = "zeros"; };
template <> struct FillOp<1> { static constexpr const char *Name = "ones"; };

template <int Value>
std::vector<TensorMeta> fillShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  const char *Op = FillOp<Value>::Name;
  checkArity(Op, In, 0);
  return {{shapeAttr(Op, A), *attrDType(Op, A, "dtype", DType::Float32)}};
}

template <int Value>
void fillKernel(const std::vector<Tensor> &, std::vector<Tensor> &Out,
                const Attrs &) {
  fillWith(Out[0], Value);
}

std::vector<TensorMeta> fullShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  checkArity("full", In, 1);
  if (In[0].rank() != 0)
    fail("full: input 'value' must be a scalar, got {}",
         shapeToString(In[0].shape()));
  return {{shapeAttr("full", A),
           *attrDType("full", A, "dtype", In[0].dtype())}};
}

void fullKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &) {
  // Convert element to element so int64 values keep full precision.
  Tensor V = In[0].cast(Out[0].dtype());
  size_t ESize = dtypeSize(V.dtype());
  char *P = static_cast<char *>(Out[0].rawData());
  for (int64_t I = 0; I < Out[0].numel(); ++I)
    std::memcpy(P + I * ESize, V.rawData(), ESize);
}

//===----------------------------------------------------------------------===//
// arange
//===----------------------------------------------------------------------===//

void checkArangeInputs(const std::vector<Tensor> &In) {
  checkArity("arange", In, 3);
  static const char *Names[] = {"start", "stop", "step"};
  for (int I = 0; I < 3; ++I) {
    if (In[I].rank() != 0)
      fail("arange: input '{}' must be a scalar, got {}", Names[I],
           shapeToString(In[I].shape()));
    checkDType("arange", Names[I], In[I].dtype(), DTypeClass::Numeric);
  }
  checkSameDType("arange", "start", In[0], "stop", In[1]);
  checkSameDType("arange", "start", In[0], "step", In[2]);
}

int64_t arangeLength(const std::vector<Tensor> &In) {
  if (isFloat(In[0].dtype())) {
    double Start = In[0].elementAsDouble(0), Stop = In[1].elementAsDouble(0),
           Step = In[2].elementAsDouble(0);
    if (Step == 0)
      fail("arange: step is 0");
    if (!std::isfinite(Start) || !std::isfinite(Stop) || !std::isfinite(Step))
      fail("arange: start, stop and step must be finite, got {}, {}, {}",
           Start, Stop, Step);
    double N = std::ceil((Stop - Start) / Step);
    if (!(N > 0))
      return 0;
    if (N > 9.0e18)
      fail("arange: {} elements is too many", N);
    return (int64_t)N;
  }
  int64_t Start = In[0].elementAsInt(0), Stop = In[1].elementAsInt(0),
          Step = In[2].elementAsInt(0);
  if (Step == 0)
    fail("arange: step is 0");
  // ceil((Stop - Start) / Step) in 128-bit arithmetic: no overflow.
  __int128 Diff = (__int128)Stop - Start;
  if ((Diff > 0) != (Step > 0) || Diff == 0)
    return 0;
  __int128 AbsDiff = Diff < 0 ? -Diff : Diff;
  __int128 AbsStep = Step < 0 ? -(__int128)Step : (__int128)Step;
  return (int64_t)((AbsDiff + AbsStep - 1) / AbsStep);
}

std::vector<TensorMeta> arangeShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  checkArangeInputs(In);
  DType Out = *attrDType("arange", A, "dtype", In[0].dtype());
  return {{{arangeLength(In)}, Out}};
}

void arangeKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &) {
  int64_t N = Out[0].numel();
  bool Float = isFloat(In[0].dtype());
  double FStart = In[0].elementAsDouble(0), FStep = In[2].elementAsDouble(0);
  int64_t IStart = In[0].elementAsInt(0), IStep = In[2].elementAsInt(0);
  dispatchDType(Out[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E *P = Out[0].data<E>();
    for (int64_t I = 0; I < N; ++I) {
      if (Float)
        P[I] = convertElement<E>(FStart + (double)I * FStep);
      else
        P[I] = convertElement<E>(
            (int64_t)((uint64_t)IStart + (uint64_t)I * (uint64_t)IStep));
    }
  });
}

} // namespace

RIVET_REGISTER_KERNEL("shape_of", shapeOfKernel, shapeOfShape, false);
RIVET_REGISTER_KERNEL("dim_size", dimSizeKernel, dimSizeShape, false);
RIVET_REGISTER_KERNEL("zeros", fillKernel<0>, fillShape<0>, false);
RIVET_REGISTER_KERNEL("ones", fillKernel<1>, fillShape<1>, false);
RIVET_REGISTER_KERNEL("full", fullKernel, fullShape, false);
RIVET_REGISTER_KERNEL("arange", arangeKernel, arangeShape, true);

} // namespace rivet::kernels
