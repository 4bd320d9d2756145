//===- Quantize.cc - Linear quantization kernels --------------------------===//
//
// quantize_linear / dequantize_linear with per-tensor or per-axis scale and
// zero point, and dynamic_quantize_linear (uint8, scale from the data range).
// Quantization rounds half to even and saturates, as ONNX specifies.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rivet::kernels {
namespace {

/// Where the parameters (scale, zero point) of element I come from: a
/// per-tensor parameter or one per index along Axis.
struct QuantAxis {
  bool PerAxis = false;
  int64_t Inner = 1, Len = 1; // element I uses parameter (I / Inner) % Len
  int64_t at(int64_t I) const { return PerAxis ? (I / Inner) % Len : 0; }
};

/// Validates scale (and zero point) against x; per-axis when the scale is a
/// vector of more than one element.
QuantAxis quantAxis(const char *Op, const std::vector<Tensor> &In,
                    const Attrs &A) {
  if (In.size() != 2 && In.size() != 3)
    fail("{}: expected 2 or 3 inputs (x, scale[, zero_point]), got {}", Op,
         In.size());
  const Tensor &X = In[0], &S = In[1];
  checkDType(Op, "scale", S.dtype(), DTypeClass::Float);
  QuantAxis Q;
  bool Scalar = S.rank() == 0 || (S.rank() == 1 && S.numel() == 1);
  if (!Scalar) {
    if (S.rank() != 1)
      fail("{}: 'scale' must be a scalar or 1-D, got {}", Op,
           shapeToString(S.shape()));
    int64_t Axis = opAxis(Op, attrInt(Op, A, "axis"), X.rank());
    if (X.shape()[(size_t)Axis] != S.numel())
      fail("{}: 'scale' has {} elements but axis {} of x {} has extent {}", Op,
           S.numel(), Axis, shapeToString(X.shape()), X.shape()[(size_t)Axis]);
    Q.PerAxis = true;
    Q.Len = S.numel();
    Q.Inner = prodRange(X.shape(), (size_t)Axis + 1, X.shape().size());
  }
  if (In.size() == 3 && In[2].shape() != S.shape())
    fail("{}: 'zero_point' {} must have the shape of 'scale' {}", Op,
         shapeToString(In[2].shape()), shapeToString(S.shape()));
  return Q;
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
  DType OutT = In.size() == 3 ? In[2].dtype() : DType::UInt8;
  if (OutT != DType::UInt8 && OutT != DType::Int8)
    fail("{}: 'zero_point' must be uint8 or int8, got {}", Op, dtypeName(OutT));
  return {{In[0].shape(), OutT}};
}

void quantizeKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                    const Attrs &A) {
  QuantAxis QA = quantAxis("quantize_linear", In, A);
  std::vector<double> Scale = In[1].toDoubleVector();
  std::vector<int64_t> Zp = In.size() == 3
                                ? In[2].toIntVector()
                                : std::vector<int64_t>(Scale.size(), 0);
  bool F32 = In[0].dtype() == DType::Float32 ||
             In[0].dtype() == DType::Float16 ||
             In[0].dtype() == DType::BFloat16;
  std::vector<double> X = In[0].toDoubleVector();
  dispatchDType(Out[0].dtype(), [&](auto Tag) {
    using Q = decltype(Tag);
    if constexpr (std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int8_t>) {
      Q *P = Out[0].data<Q>();
      for (size_t I = 0; I < X.size(); ++I) {
        size_t K = (size_t)QA.at((int64_t)I);
        // Divide in float for float inputs, as the ONNX reference does.
        double V =
            F32 ? (double)((float)X[I] / (float)Scale[K]) : X[I] / Scale[K];
        P[I] = quantizeValue<Q>(V, Zp[K]);
      }
    }
  });
}

std::vector<TensorMeta> dequantizeShape(const std::vector<Tensor> &In,
                                        const Attrs &A) {
  const char *Op = "dequantize_linear";
  quantAxis(Op, In, A);
  DType X = In[0].dtype();
  if (X != DType::UInt8 && X != DType::Int8 && X != DType::Int32)
    fail("{}: input 'x' must be uint8, int8 or int32, got {}", Op,
         dtypeName(X));
  if (In.size() == 3)
    checkSameDType(Op, "x", In[0], "zero_point", In[2]);
  return {{In[0].shape(), In[1].dtype()}};
}

void dequantizeKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &A) {
  QuantAxis QA = quantAxis("dequantize_linear", In, A);
  std::vector<double> Scale = In[1].toDoubleVector();
  std::vector<int64_t> Zp = In.size() == 3
                                ? In[2].toIntVector()
                                : std::vector<int64_t>(Scale.size(), 0);
  std::vector<int64_t> X = In[0].toIntVector();
  dispatchDType(Out[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      using CT = ComputeT<E>;
      E *P = Out[0].data<E>();
      for (size_t I = 0; I < X.size(); ++I) {
        size_t K = (size_t)QA.at((int64_t)I);
        P[I] = convertElement<E>(CT(X[I] - Zp[K]) * CT(Scale[K]));
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

RIVET_REGISTER_ATTRS("quantize_linear", {{"axis", AttrKind::Int, false,
                                          "the axis of a 1-D scale", 1}});
RIVET_REGISTER_ATTRS("dequantize_linear", {{"axis", AttrKind::Int, false,
                                            "the axis of a 1-D scale", 1}});

} // namespace rivet::kernels
