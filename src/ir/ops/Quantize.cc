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

Type makeTensor(const std::optional<std::vector<Dim>> &Shape, DType T) {
  return std::make_shared<TensorTypeNode>(Shape, T);
}

/// Checks scale (argument 1) and zero point (argument 2): a scalar or 1-D
/// vector matching x's extent along axis.
void checkQuantParams(std::string_view Op, const std::vector<Type> &Args,
                      const Attrs &A) {
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  const TensorTypeNode &S = tensorArg(Op, Args, 1);
  requireFloat(Op, S, 1);
  int64_t Axis = OpAttrs(Op, A).getInt("axis");
  if (S.shape && S.shape->size() > 1)
    failArg(1, "{}: the scale must be a scalar or 1-D, got {}", Op, typeStr(S));
  bool PerAxis = S.shape && S.shape->size() == 1 &&
                 !((*S.shape)[0].isConst() && (*S.shape)[0].value == 1);
  if (PerAxis && X.shape) {
    int64_t Ax = normalizeAxisFor(Op, Axis, (int64_t)X.shape->size());
    if (!mergeEqualDim((*S.shape)[0], (*X.shape)[(size_t)Ax]))
      failArg(1, "{}: the scale {} does not match axis {} of {}", Op,
              typeStr(S), Ax, typeStr(X));
  }
  if (Args.size() == 3) {
    const TensorTypeNode &Z = tensorArg(Op, Args, 2);
    if (Z.shape && S.shape && Z.shape->size() != S.shape->size())
      failArg(2, "{}: the zero point {} must have the shape of the scale {}",
              Op, typeStr(Z), typeStr(S));
  }
}

Type quantizeRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "quantize_linear";
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (x, scale[, zero_point]), got {}", Op,
         Args.size());
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (!isFloat(X.dtype) && X.dtype != DType::Int32)
    failArg(0, "{}: the input must have a float dtype or int32, got {}", Op,
            typeStr(X));
  checkQuantParams(Op, Args, A);
  DType OutT = DType::UInt8;
  if (Args.size() == 3) {
    OutT = tensorArg(Op, Args, 2).dtype;
    if (OutT != DType::UInt8 && OutT != DType::Int8)
      failArg(2, "{}: the zero point must be uint8 or int8, got {}", Op,
              typeStr(tensorArg(Op, Args, 2)));
  }
  return makeTensor(X.shape, OutT);
}

Type dequantizeRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "dequantize_linear";
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (x, scale[, zero_point]), got {}", Op,
         Args.size());
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (X.dtype != DType::UInt8 && X.dtype != DType::Int8 &&
      X.dtype != DType::Int32)
    failArg(0, "{}: the input must be uint8, int8 or int32, got {}", Op,
            typeStr(X));
  checkQuantParams(Op, Args, A);
  if (Args.size() == 3)
    requireSameDType(Op, X, tensorArg(Op, Args, 2), 2);
  return makeTensor(X.shape, tensorArg(Op, Args, 1).dtype);
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
    "per tensor or per axis; uint8 unless the zero point says int8.",
    -1, quantizeRel, FusionPattern::Elementwise});
RIVET_REGISTER_OP(OpInfo{
    "dequantize_linear",
    "Linear dequantization: (x - zero_point) * scale, per tensor or per axis; "
    "the result has the scale's dtype.",
    -1, dequantizeRel, FusionPattern::Elementwise});
RIVET_REGISTER_OP(OpInfo{
    "dynamic_quantize_linear",
    "Quantizes float x to uint8 with scale and zero point computed from the "
    "range of x (which always includes 0); returns (y, scale, zero_point).",
    1, dynamicQuantizeRel, FusionPattern::Opaque});

} // namespace rivet::ir
