//===- PostOps.h - Elementwise tails fused into an anchor -------*- C++ -*-===//
//
// The post-op list and its attribute encoding are kernels/PostOpAttrs.h
// (rivet_kernels, which the IR reads too); this adds what the blocked
// kernels (kernels/dnnl, kernels/cpu) need on top.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/PostOpAttrs.h"
#include "kernels/Shape.h"
#include "kernels/Tensor.h"

#include <optional>

namespace rivet {

/// How a binary post-op's operand reaches the elements of a blocked conv
/// output Out ([N, M/o, H, W, o]) of M channels: one value for all, one per
/// channel (CHW<o>c form), or one per element (Out's shape).
enum class OperandForm { Scalar, PerChannel, Full };
/// X's form against Out, or nullopt when it is not float32 or broadcasts
/// along other axes (the kernels that read operands by form refuse those).
std::optional<OperandForm> blockedOperandForm(const Tensor &X, int64_t M,
                                              const Shape &Out);

} // namespace rivet
