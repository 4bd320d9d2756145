//===- Creation.cc - Creation and shape operators -------------------------===//
//
// shape_of, size, dim_size, zeros, ones, full, arange, constant_of_shape,
// eye_like and trilu. arange and constant_of_shape are the operators here
// whose output shapes depend on input values.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>

namespace rivet::kernels {
namespace {

/// ONNX Shape's [start, end) window of the dimensions, clamped to the rank.
std::pair<int64_t, int64_t> shapeWindow(const Tensor &X, const Attrs &A) {
  int64_t R = X.rank();
  auto Clamp = [R](int64_t I) {
    if (I < 0)
      I += R;
    return std::clamp<int64_t>(I, 0, R);
  };
  int64_t Start = Clamp(attrInt("shape_of", A, "start"));
  // An absent end is the rank, which the schema cannot know.
  int64_t End = A.has("end") ? Clamp(attrInt("shape_of", A, "end")) : R;
  return {Start, std::max(Start, End)};
}

std::vector<TensorMeta> shapeOfShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  checkArity("shape_of", In, 1);
  auto [Start, End] = shapeWindow(In[0], A);
  return {{{End - Start}, DType::Int64}};
}

void shapeOfKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &A) {
  auto [Start, End] = shapeWindow(In[0], A);
  int64_t *P = Out[0].data<int64_t>();
  for (int64_t I = Start; I < End; ++I)
    P[I - Start] = In[0].shape()[I];
}

std::vector<TensorMeta> sizeShape(const std::vector<Tensor> &In,
                                  const Attrs &) {
  checkArity("size", In, 1);
  return {{{}, DType::Int64}};
}

void sizeKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &) {
  *Out[0].data<int64_t>() = In[0].numel();
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
  return {{shapeAttr(Op, A), *attrDType(Op, A, "dtype")}};
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
  return {
      {shapeAttr("full", A), *attrDType("full", A, "dtype", In[0].dtype())}};
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
      fail("arange: start, stop and step must be finite, got {}, {}, {}", Start,
           Stop, Step);
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

//===----------------------------------------------------------------------===//
// constant_of_shape, eye_like, trilu
//===----------------------------------------------------------------------===//

/// The one-element fill value of constant_of_shape (default float32 0).
Tensor constantValue(const Attrs &A) {
  if (!A.has("value"))
    return Tensor::scalar<float>(0.0f);
  const Tensor &V = withOp("constant_of_shape", [&]() -> const Tensor & {
    return A.getTensor("value");
  });
  if (V.numel() != 1)
    fail("constant_of_shape: attribute 'value' must have one element, got "
         "shape {}",
         shapeToString(V.shape()));
  return V;
}

std::vector<TensorMeta> constantOfShapeShape(const std::vector<Tensor> &In,
                                             const Attrs &A) {
  checkArity("constant_of_shape", In, 1);
  const Tensor &S = In[0];
  checkDType("constant_of_shape", "shape", S.dtype(), DTypeClass::Index);
  if (S.rank() != 1)
    fail("constant_of_shape: input 'shape' must be 1-D, got shape {}",
         shapeToString(S.shape()));
  Shape Out = S.toIntVector();
  for (int64_t D : Out)
    if (D < 0)
      fail("constant_of_shape: negative extent {} in shape {}", D,
           shapeToString(Out));
  withOp("constant_of_shape", [&] { return numElements(Out); });
  return {{Out, constantValue(A).dtype()}};
}

void constantOfShapeKernel(const std::vector<Tensor> &,
                           std::vector<Tensor> &Out, const Attrs &A) {
  Tensor V = constantValue(A);
  size_t ESize = dtypeSize(V.dtype());
  char *P = static_cast<char *>(Out[0].rawData());
  for (int64_t I = 0; I < Out[0].numel(); ++I)
    std::memcpy(P + I * ESize, V.rawData(), ESize);
}

std::vector<TensorMeta> eyeLikeShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  checkArity("eye_like", In, 1);
  if (In[0].rank() != 2)
    fail("eye_like: input must be 2-D, got shape {}",
         shapeToString(In[0].shape()));
  attrInt("eye_like", A, "k");
  return {{In[0].shape(), *attrDType("eye_like", A, "dtype", In[0].dtype())}};
}

void eyeLikeKernel(const std::vector<Tensor> &, std::vector<Tensor> &Out,
                   const Attrs &A) {
  int64_t K = attrInt("eye_like", A, "k");
  int64_t Rows = Out[0].shape()[0], Cols = Out[0].shape()[1];
  fillWith(Out[0], 0.0);
  dispatchDType(Out[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E One = convertElement<E>(1.0);
    E *P = Out[0].data<E>();
    for (int64_t I = 0; I < Rows; ++I) {
      int64_t J = I + K;
      if (J >= 0 && J < Cols)
        P[I * Cols + J] = One;
    }
  });
}

std::vector<TensorMeta> triluShape(const std::vector<Tensor> &In,
                                   const Attrs &A) {
  if (In.empty() || In.size() > 2)
    fail("trilu: expected 1 or 2 inputs, got {}", In.size());
  if (In[0].rank() < 2)
    fail("trilu: input must have rank >= 2, got shape {}",
         shapeToString(In[0].shape()));
  if (In.size() == 2 && In[1].defined()) {
    checkDType("trilu", "k", In[1].dtype(), DTypeClass::Index);
    if (In[1].numel() != 1)
      fail("trilu: input 'k' must have one element, got shape {}",
           shapeToString(In[1].shape()));
  }
  attrFlag("trilu", A, "upper");
  return {{In[0].shape(), In[0].dtype()}};
}

void triluKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &A) {
  bool Upper = attrFlag("trilu", A, "upper");
  int64_t K = In.size() == 2 && In[1].defined() ? In[1].elementAsInt(0) : 0;
  const Shape &S = In[0].shape();
  int64_t Rows = S[S.size() - 2], Cols = S[S.size() - 1];
  int64_t Mats = prodRange(S, 0, S.size() - 2);
  size_t ESize = dtypeSize(In[0].dtype());
  const char *Src = static_cast<const char *>(In[0].rawData());
  char *Dst = static_cast<char *>(Out[0].rawData());
  for (int64_t M = 0; M < Mats; ++M)
    for (int64_t I = 0; I < Rows; ++I)
      for (int64_t J = 0; J < Cols; ++J) {
        // Upper keeps j - i >= k; lower keeps j - i <= k.
        bool Keep = Upper ? J - I >= K : J - I <= K;
        size_t Off = (size_t)((M * Rows + I) * Cols + J) * ESize;
        if (Keep)
          std::memcpy(Dst + Off, Src + Off, ESize);
        else
          std::memset(Dst + Off, 0, ESize);
      }
}

} // namespace

RIVET_REGISTER_KERNEL("shape_of", shapeOfKernel, shapeOfShape, false);
RIVET_REGISTER_KERNEL("dim_size", dimSizeKernel, dimSizeShape, false);
RIVET_REGISTER_KERNEL("zeros", fillKernel<0>, fillShape<0>, false);
RIVET_REGISTER_KERNEL("ones", fillKernel<1>, fillShape<1>, false);
RIVET_REGISTER_KERNEL("full", fullKernel, fullShape, false);
RIVET_REGISTER_KERNEL("arange", arangeKernel, arangeShape, true);

RIVET_REGISTER_KERNEL("size", sizeKernel, sizeShape, false);
RIVET_REGISTER_KERNEL("constant_of_shape", constantOfShapeKernel,
                      constantOfShapeShape, true);
RIVET_REGISTER_KERNEL("eye_like", eyeLikeKernel, eyeLikeShape, false);
RIVET_REGISTER_KERNEL("trilu", triluKernel, triluShape, false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS("shape_of",
                     {{"start", AttrKind::Int, false,
                       "first dim (negative counts from the end)", 0},
                      {"end", AttrKind::Int, false,
                       "one past the last dim (default the rank)"}});
RIVET_REGISTER_ATTRS("dim_size", {{"axis", AttrKind::Int, true,
                                   "the axis (negative counts from the end)"}});
RIVET_REGISTER_ATTRS("zeros", {{"shape", AttrKind::Ints, true, "the extents"},
                               {"dtype", AttrKind::String, false, "the dtype",
                                "float32"}});
RIVET_REGISTER_ATTRS("ones", {{"shape", AttrKind::Ints, true, "the extents"},
                              {"dtype", AttrKind::String, false, "the dtype",
                               "float32"}});
RIVET_REGISTER_ATTRS("full", {{"shape", AttrKind::Ints, true, "the extents"},
                              {"dtype", AttrKind::String, false,
                               "the dtype (default the value's dtype)"}});
RIVET_REGISTER_ATTRS("arange", {{"dtype", AttrKind::String, false,
                                 "the dtype (default the inputs' dtype)"}});
RIVET_REGISTER_ATTRS("constant_of_shape",
                     {{"value", AttrKind::Tensor, false,
                       "one-element fill value (default float32 0)"}});
RIVET_REGISTER_ATTRS("eye_like", {{"k", AttrKind::Int, false,
                                   "the diagonal (positive is above)", 0},
                                  {"dtype", AttrKind::String, false,
                                   "the dtype (default x's)"}});
RIVET_REGISTER_ATTRS("trilu", {{"upper", AttrKind::Int, false,
                                "1: upper triangle; 0: lower", 1}});

} // namespace rivet::kernels
