//===- Quantize.cc - Linear quantization operators ------------------------===//
//
// quantize_linear / dequantize_linear take the scale and zero point as
// tensors (per-tensor or per-axis); dynamic_quantize_linear returns the
// quantized tensor with its scale and zero point.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

/// Checks scale (argument 1) and zero point (argument 2): a scalar, a 1-D
/// vector matching x's extent along axis, or (block_size > 0) x's shape with
/// ceil(extent / block_size) along axis.
void checkQuantParams(std::string_view Op, const std::vector<Type> &Args,
                      const Attrs &A) {
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  const TensorTypeNode &S = tensorArg(Op, Args, 1);
  if (!isFloat(S.dtype) && S.dtype != DType::Int32 &&
      S.dtype != DType::Float8E8M0)
    failArg(1, "{}: the scale must be float, int32 or float8e8m0, got {}", Op,
            typeStr(S));
  OpAttrs Own(Op, A);
  int64_t Axis = Own.getInt("axis");
  int64_t BlockSize = Own.getInt("block_size");
  if (BlockSize < 0)
    fail("{}: block_size must be >= 0, got {}", Op, BlockSize);
  if (BlockSize > 0) {
    if (S.shape && X.shape) {
      if (S.shape->size() != X.shape->size())
        failArg(1, "{}: a blocked scale {} must have the rank of {}", Op,
                typeStr(S), typeStr(X));
      int64_t Ax = normalizeAxisFor(Op, Axis, (int64_t)X.shape->size());
      for (size_t D = 0; D < X.shape->size(); ++D) {
        const Dim &XD = (*X.shape)[D], &SD = (*S.shape)[D];
        bool Ok = (int64_t)D == Ax
                      ? !XD.isConst() || !SD.isConst() ||
                            SD.value == (XD.value + BlockSize - 1) / BlockSize
                      : mergeEqualDim(SD, XD).has_value();
        if (!Ok)
          failArg(1,
                  "{}: the scale {} does not block {} along axis {} in "
                  "blocks of {}",
                  Op, typeStr(S), typeStr(X), Ax, BlockSize);
      }
    }
  } else {
    if (S.shape && S.shape->size() > 1)
      failArg(1,
              "{}: the scale must be a scalar or 1-D, got {} (or set "
              "block_size for blocked quantization)",
              Op, typeStr(S));
    bool PerAxis = S.shape && S.shape->size() == 1 &&
                   !((*S.shape)[0].isConst() && (*S.shape)[0].value == 1);
    if (PerAxis && X.shape) {
      int64_t Ax = normalizeAxisFor(Op, Axis, (int64_t)X.shape->size());
      if (!mergeEqualDim((*S.shape)[0], (*X.shape)[(size_t)Ax]))
        failArg(1, "{}: the scale {} does not match axis {} of {}", Op,
                typeStr(S), Ax, typeStr(X));
    }
  }
  // Per tensor: [] and [1] are the same granularity.
  auto perTensor = [](const TensorTypeNode &T) {
    return T.shape && (T.shape->empty() ||
                       (T.shape->size() == 1 && (*T.shape)[0].isConst() &&
                        (*T.shape)[0].value == 1));
  };
  if (Args.size() == 3) {
    const TensorTypeNode &Z = tensorArg(Op, Args, 2);
    if (Z.shape && S.shape && Z.shape->size() != S.shape->size() &&
        !(perTensor(Z) && perTensor(S)))
      failArg(2, "{}: the zero point {} must have the shape of the scale {}",
              Op, typeStr(Z), typeStr(S));
  }
}

/// The types quantize_linear produces and dequantize_linear reads.
bool isQuantizedType(DType T) {
  switch (T) {
  case DType::UInt8:
  case DType::Int8:
  case DType::UInt16:
  case DType::Int16: return true;
  default: return isNarrow(T) && T != DType::Float8E8M0;
  }
}

Type quantizeRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "quantize_linear";
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (x, scale[, zero_point]), got {}", Op,
         Args.size());
  std::optional<DType> OutDType = optDType(Op, A, "output_dtype");
  optDType(Op, A, "precision");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (!isFloat(X.dtype) && X.dtype != DType::Int32)
    failArg(0, "{}: the input must have a float dtype or int32, got {}", Op,
            typeStr(X));
  checkQuantParams(Op, Args, A);
  DType OutT = OutDType.value_or(DType::UInt8);
  if (Args.size() == 3) {
    const TensorTypeNode &Z = tensorArg(Op, Args, 2);
    if (OutDType && *OutDType != Z.dtype)
      failArg(2, "{}: output_dtype {} differs from the zero point {}", Op,
              dtypeName(*OutDType), typeStr(Z));
    OutT = Z.dtype;
  }
  if (!isQuantizedType(OutT))
    fail("{}: cannot quantize to {} (uint8, int8, uint16, int16, the 4- and "
         "2-bit integers, float8 or float4e2m1)",
         Op, dtypeName(OutT));
  return makeTensor(X.shape, OutT);
}

Type dequantizeRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "dequantize_linear";
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (x, scale[, zero_point]), got {}", Op,
         Args.size());
  std::optional<DType> OutDType = optDType(Op, A, "output_dtype");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (!isQuantizedType(X.dtype) && X.dtype != DType::Int32)
    failArg(0,
            "{}: cannot dequantize {} (expected an 8-, 16- or 32-bit "
            "integer, a 4- or 2-bit integer, float8 or float4e2m1)",
            Op, typeStr(X));
  checkQuantParams(Op, Args, A);
  if (Args.size() == 3)
    requireSameDType(Op, X, tensorArg(Op, Args, 2), 2);
  DType Res = OutDType.value_or(tensorArg(Op, Args, 1).dtype);
  if (!isFloat(Res) || Res == DType::Float64)
    fail("{}: the result must be float32, float16 or bfloat16, got {} (set "
         "output_dtype for a float8e8m0 scale)",
         Op, dtypeName(Res));
  return makeTensor(X.shape, Res);
}

Type dynamicQuantizeRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "dynamic_quantize_linear";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  return tupleType({makeTensor(X.shape, DType::UInt8),
                    scalarType(DType::Float32), scalarType(DType::UInt8)});
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "quantize_linear",
    "Linear quantization: saturate(round_half_even(x / scale) + zero_point), "
    "per tensor, per axis or blocked; the result type is output_dtype, else "
    "the zero point's, else uint8 (float8 types: a saturating cast).",
    -1, quantizeRel, FusionPattern::Elementwise});
RIVET_REGISTER_OP(OpInfo{
    "dequantize_linear",
    "Linear dequantization: (x - zero_point) * scale in float32, per tensor, "
    "per axis or blocked; the result type is output_dtype, else the scale's.",
    -1, dequantizeRel, FusionPattern::Elementwise});
RIVET_REGISTER_OP(OpInfo{
    "dynamic_quantize_linear",
    "Quantizes float x to uint8 with scale and zero point computed from the "
    "range of x (which always includes 0); returns (y, scale, zero_point).",
    1, dynamicQuantizeRel, FusionPattern::Opaque});

} // namespace rivet::ir
