//===- LabelEncoder.cc - label_encoder ------------------------------------===//
//
// ONNX ai.onnx.ml LabelEncoder: x's shape, the values' dtype. The
// attributes are checked by kernels/LabelEncoder.h, as the kernel checks
// them.
//
//===----------------------------------------------------------------------===//
#include "kernels/LabelEncoder.h"
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

Type labelEncoderRel(const std::vector<Type> &Args, const Attrs &A) {
  constexpr std::string_view Op = "label_encoder";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  return std::make_shared<TensorTypeNode>(X.shape,
                                          labelEncoderResultDType(A, X.dtype));
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "label_encoder",
    "Maps each element of x to the value of its key, or to the default when "
    "no key equals it (ONNX LabelEncoder): string, integer or float keys to "
    "string, integer or float values.",
    1, labelEncoderRel, FusionPattern::Opaque});

} // namespace rivet::ir
