//===- PostOps.cc - Elementwise tails fused into an anchor ----------------===//
#include "kernels/dnnl/PostOps.h"

#include "kernels/dnnl/DnnlContext.h"

namespace rivet {

std::optional<OperandForm> blockedOperandForm(const Tensor &X, int64_t M,
                                              const Shape &Out) {
  if (X.dtype() != DType::Float32)
    return std::nullopt;
  if (X.shape() == Out)
    return OperandForm::Full;
  if (X.numel() == 1)
    return OperandForm::Scalar;
  if (dnnlctx::isPerChannelBlocked(X, M, Out))
    return OperandForm::PerChannel;
  return std::nullopt;
}

} // namespace rivet
