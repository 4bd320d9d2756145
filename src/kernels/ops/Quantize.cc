//===- Quantize.cc - Linear quantization kernels --------------------------===//
//
// quantize_linear / dequantize_linear with per-tensor, per-axis or blocked
// scale and zero point, to and from the 8-, 16-, 4- and 2-bit integer types
// and the narrow float types; dynamic_quantize_linear (uint8, scale from the
// data range). Integers round half to even and saturate, as ONNX specifies.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rivet::kernels {
namespace {

/// Where the parameters (scale, zero point) of element I come from: one per
/// tensor, one per index along an axis, or one per block of BlockSize
/// indices along an axis (the scale then has x's rank).
struct QuantAxis {
  enum { PerTensor, PerAxis, Blocked } Mode = PerTensor;
  int64_t Inner = 1;     // elements after the axis
  int64_t Extent = 1;    // x's extent along the axis
  int64_t Blocks = 1;    // the scale's extent along the axis
  int64_t BlockSize = 1; // 1 when per axis
  int64_t at(int64_t I) const {
    if (Mode == PerTensor)
      return 0;
    int64_t A = (I / Inner) % Extent;
    if (Mode == PerAxis)
      return A;
    int64_t Outer = I / (Inner * Extent);
    return (Outer * Blocks + A / BlockSize) * Inner + I % Inner;
  }
};

/// Validates scale (and zero point) against x and says how they apply.
QuantAxis quantAxis(const char *Op, const std::vector<Tensor> &In,
                    const Attrs &A) {
  if (In.size() != 2 && In.size() != 3)
    fail("{}: expected 2 or 3 inputs (x, scale[, zero_point]), got {}", Op,
         In.size());
  const Tensor &X = In[0], &S = In[1];
  OpAttrs Own(Op, A);
  int64_t BlockSize = Own.getInt("block_size");
  QuantAxis Q;
  bool Scalar = S.rank() == 0 || (S.rank() == 1 && S.numel() == 1);
  if (!Scalar) {
    int64_t Axis = opAxis(Op, Own.getInt("axis"), X.rank());
    Q.Extent = X.shape()[(size_t)Axis];
    Q.Inner = prodRange(X.shape(), (size_t)Axis + 1, X.shape().size());
    if (BlockSize <= 0) {
      if (S.rank() != 1)
        fail("{}: 'scale' {} needs block_size > 0 for blocked quantization "
             "(else it must be a scalar or 1-D)",
             Op, shapeToString(S.shape()));
      if (Q.Extent != S.numel())
        fail("{}: 'scale' has {} elements but axis {} of x {} has extent {}",
             Op, S.numel(), Axis, shapeToString(X.shape()), Q.Extent);
      Q.Mode = QuantAxis::PerAxis;
      Q.Blocks = Q.Extent;
    } else {
      bool Fits = S.rank() == X.rank();
      for (int64_t D = 0; Fits && D < X.rank(); ++D)
        Fits = D == Axis
                   ? S.shape()[(size_t)D] ==
                         (X.shape()[(size_t)D] + BlockSize - 1) / BlockSize
                   : S.shape()[(size_t)D] == X.shape()[(size_t)D];
      if (!Fits)
        fail("{}: 'scale' {} does not block x {} along axis {} in blocks of "
             "{}",
             Op, shapeToString(S.shape()), shapeToString(X.shape()), Axis,
             BlockSize);
      Q.Mode = QuantAxis::Blocked;
      Q.Blocks = S.shape()[(size_t)Axis];
      Q.BlockSize = BlockSize;
    }
  }
  // A per-tensor zero point may be [] or [1] whichever the scale is.
  if (In.size() == 3 && In[2].shape() != S.shape() &&
      !(Scalar && In[2].numel() == 1 && In[2].rank() <= 1))
    fail("{}: 'zero_point' {} must have the shape of 'scale' {}", Op,
         shapeToString(In[2].shape()), shapeToString(S.shape()));
  return Q;
}

/// The integer types quantize_linear saturates to, with their ranges.
bool quantizedIntRange(DType T, int64_t &Lo, int64_t &Hi) {
  switch (T) {
  case DType::UInt8: Lo = 0, Hi = 255; return true;
  case DType::Int8: Lo = -128, Hi = 127; return true;
  case DType::UInt16: Lo = 0, Hi = 65535; return true;
  case DType::Int16: Lo = -32768, Hi = 32767; return true;
  case DType::UInt4: Lo = 0, Hi = 15; return true;
  case DType::Int4: Lo = -8, Hi = 7; return true;
  case DType::UInt2: Lo = 0, Hi = 3; return true;
  case DType::Int2: Lo = -2, Hi = 1; return true;
  default: return false;
  }
}

bool isQuantizedType(DType T) {
  int64_t Lo, Hi;
  return quantizedIntRange(T, Lo, Hi) || dtypeInfo(T).narrowFloat;
}

/// quantize_linear's result type: output_dtype, else the zero point's, else
/// uint8.
DType quantizedType(const char *Op, const std::vector<Tensor> &In,
                    const Attrs &A) {
  std::optional<DType> Out = attrDType(Op, A, "output_dtype");
  if (In.size() == 3) {
    if (Out && *Out != In[2].dtype())
      fail("{}: output_dtype {} differs from the zero point's dtype {}", Op,
           dtypeName(*Out), dtypeName(In[2].dtype()));
    Out = In[2].dtype();
  }
  DType T = Out.value_or(DType::UInt8);
  if (!isQuantizedType(T) || T == DType::Float8E8M0)
    fail("{}: cannot quantize to {} (expected uint8, int8, uint16, int16, "
         "a 4- or 2-bit integer, float8 or float4e2m1)",
         Op, dtypeName(T));
  return T;
}

/// Round half to even (the default FP rounding mode), saturate to Q.
template <typename Q> Q quantizeValue(double V, int64_t Zp) {
  if (std::isnan(V))
    return Q(Zp);
  double R = std::nearbyint(V) + (double)Zp;
  R = std::min<double>(std::max<double>(R, std::numeric_limits<Q>::min()),
                       std::numeric_limits<Q>::max());
  return (Q)R;
}

std::vector<TensorMeta> quantizeShape(const std::vector<Tensor> &In,
                                      const Attrs &A) {
  const char *Op = "quantize_linear";
  quantAxis(Op, In, A);
  DType X = In[0].dtype();
  if (!isFloat(X) && X != DType::Int32)
    fail("{}: input 'x' must be a float dtype or int32, got {}", Op,
         dtypeName(X));
  return {{In[0].shape(), quantizedType(Op, In, A)}};
}

/// The type x / scale is computed in: precision, else NumPy's promotion of
/// the two (the ONNX reference divides in NumPy).
DType divisionType(const std::vector<Tensor> &In, const Attrs &A) {
  if (std::optional<DType> P = attrDType("quantize_linear", A, "precision"))
    return *P;
  DType X = In[0].dtype(), S = In[1].dtype();
  if (X == S)
    return X == DType::Int32 ? DType::Float64 : X;
  if (X == DType::Float64 || S == DType::Float64 || X == DType::Int32 ||
      S == DType::Int32)
    return DType::Float64;
  return DType::Float32; // two different 16-bit floats, or one of float32
}

/// V rounded to dtype T (a float type), as a division computed in T is.
double roundTo(DType T, double V) {
  switch (T) {
  case DType::Float32: return (float)V;
  case DType::Float16: return (float)Half((float)V);
  case DType::BFloat16: return (float)BFloat16((float)V);
  default: return V;
  }
}

void quantizeKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                    const Attrs &A) {
  const char *Op = "quantize_linear";
  QuantAxis QA = quantAxis(Op, In, A);
  DType Div = divisionType(In, A);
  std::vector<double> Scale = In[1].toDoubleVector();
  std::vector<double> Zp = In.size() == 3
                               ? In[2].toDoubleVector()
                               : std::vector<double>(Scale.size(), 0.0);
  std::vector<double> X = In[0].toDoubleVector();
  DType T = Out[0].dtype();
  bool Saturate = OpAttrs(Op, A).getInt("saturate") != 0;
  int64_t Lo, Hi;
  bool IsInt = quantizedIntRange(T, Lo, Hi);
  uint8_t *Bytes = static_cast<uint8_t *>(Out[0].rawData());
  for (size_t I = 0; I < X.size(); ++I) {
    size_t K = (size_t)QA.at((int64_t)I);
    double V = roundTo(Div, roundTo(Div, X[I]) / roundTo(Div, Scale[K]));
    if (!IsInt) {
      Bytes[I] = floatToNarrow(T, V + Zp[K], Saturate);
      continue;
    }
    double R = std::isnan(V) ? Zp[K] : std::nearbyint(V) + Zp[K];
    int64_t Q = (int64_t)std::clamp<double>(R, (double)Lo, (double)Hi);
    switch (T) {
    case DType::UInt8: Out[0].data<uint8_t>()[I] = (uint8_t)Q; break;
    case DType::Int8: Out[0].data<int8_t>()[I] = (int8_t)Q; break;
    case DType::UInt16: Out[0].data<uint16_t>()[I] = (uint16_t)Q; break;
    case DType::Int16: Out[0].data<int16_t>()[I] = (int16_t)Q; break;
    default: Bytes[I] = intToNarrow(T, Q); break;
    }
  }
}

std::vector<TensorMeta> dequantizeShape(const std::vector<Tensor> &In,
                                        const Attrs &A) {
  const char *Op = "dequantize_linear";
  quantAxis(Op, In, A);
  DType X = In[0].dtype();
  if ((!isQuantizedType(X) && X != DType::Int32) || X == DType::Float8E8M0)
    fail("{}: cannot dequantize {} (expected an 8-, 16- or 32-bit integer, a "
         "4- or 2-bit integer, float8 or float4e2m1)",
         Op, dtypeName(X));
  if (In.size() == 3)
    checkSameDType(Op, "x", In[0], "zero_point", In[2]);
  DType Res = attrDType(Op, A, "output_dtype").value_or(In[1].dtype());
  if (!isFloat(Res) || Res == DType::Float64)
    fail("{}: the result must be float32, float16 or bfloat16, got {} (set "
         "output_dtype for a float8e8m0 scale)",
         Op, dtypeName(Res));
  return {{In[0].shape(), Res}};
}

void dequantizeKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &A) {
  QuantAxis QA = quantAxis("dequantize_linear", In, A);
  std::vector<double> Scale = In[1].toDoubleVector();
  std::vector<double> Zp = In.size() == 3
                               ? In[2].toDoubleVector()
                               : std::vector<double>(Scale.size(), 0.0);
  std::vector<double> X = In[0].toDoubleVector();
  // In float32, as the ONNX reference; then rounded to the result type.
  dispatchDType(Out[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      E *P = Out[0].data<E>();
      for (size_t I = 0; I < X.size(); ++I) {
        size_t K = (size_t)QA.at((int64_t)I);
        P[I] = convertElement<E>((float)(X[I] - Zp[K]) * (float)Scale[K]);
      }
    }
  });
}

std::vector<TensorMeta> dynamicQuantizeShape(const std::vector<Tensor> &In,
                                             const Attrs &) {
  checkArity("dynamic_quantize_linear", In, 1);
  checkDType("dynamic_quantize_linear", "x", In[0].dtype(), DTypeClass::Float);
  return {
      {In[0].shape(), DType::UInt8}, {{}, DType::Float32}, {{}, DType::UInt8}};
}

void dynamicQuantizeKernel(const std::vector<Tensor> &In,
                           std::vector<Tensor> &Out, const Attrs &) {
  std::vector<double> X = In[0].toDoubleVector();
  // The range always includes 0 so that 0 is exactly representable.
  float Min = 0, Max = 0;
  for (double V : X) {
    Min = std::min(Min, (float)V);
    Max = std::max(Max, (float)V);
  }
  float Scale = (Max - Min) / 255.0f;
  int64_t Zp = 0;
  if (Scale > 0)
    Zp = (int64_t)quantizeValue<uint8_t>((double)(0.0f - Min / Scale), 0);
  uint8_t *P = Out[0].data<uint8_t>();
  for (size_t I = 0; I < X.size(); ++I)
    P[I] = Scale > 0 ? quantizeValue<uint8_t>((double)((float)X[I] / Scale), Zp)
                     : uint8_t(Zp);
  *Out[1].data<float>() = Scale;
  *Out[2].data<uint8_t>() = (uint8_t)Zp;
}

} // namespace

RIVET_REGISTER_KERNEL("quantize_linear", quantizeKernel, quantizeShape, false);
RIVET_REGISTER_KERNEL("dequantize_linear", dequantizeKernel, dequantizeShape,
                      false);
RIVET_REGISTER_KERNEL("dynamic_quantize_linear", dynamicQuantizeKernel,
                      dynamicQuantizeShape, false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

#define RIVET_QUANT_GRANULARITY_ATTRS                                          \
  {"axis", AttrKind::Int, false,                                               \
   "the axis of a 1-D scale, or the blocked axis", 1},                         \
  {                                                                            \
    "block_size", AttrKind::Int, false,                                        \
        "indices of the axis per scale element (blocked quantization); 0: "    \
        "per tensor or per axis",                                              \
        0                                                                      \
  }
RIVET_REGISTER_ATTRS(
    "quantize_linear",
    {RIVET_QUANT_GRANULARITY_ATTRS,
     {"saturate", AttrKind::Int, false,
      "float8 results: 1 saturates out-of-range values, 0 gives inf/NaN", 1},
     {"output_dtype", AttrKind::String, false,
      "the result dtype (default: the zero point's, else uint8)"},
     {"precision", AttrKind::String, false,
      "the dtype x / scale is computed in (default: NumPy's promotion)"}});
RIVET_REGISTER_ATTRS("dequantize_linear",
                     {RIVET_QUANT_GRANULARITY_ATTRS,
                      {"output_dtype", AttrKind::String, false,
                       "the result dtype (default: the scale's)"}});

} // namespace rivet::kernels
