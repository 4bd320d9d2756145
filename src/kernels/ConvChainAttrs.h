//===- ConvChainAttrs.h - Two fused convs' attributes -----------*- C++ -*-===//
//
// dnnl.conv2d_nchwc_pw_dw is a dnnl.conv2d_nchwc_fused call (a 1x1 conv and
// its tail) whose result only a depthwise dnnl.conv2d_nchwc_fused reads,
// as one call (kernels/cpu/PointwiseDepthwiseConv.h says why). Its inputs
// are the first call's, then the second's after its first (the 1x1 conv's
// result); its attributes the first call's, the second's with the prefix
// "dw_", and "pw_inputs", the number of the first call's inputs.
//
// The operator's name and attribute encoding, without the kernel: the IR's
// type relation (ir/ops/Layout.cc) reads them as well as the kernel and
// FuseConvChains (kernels/cpu/ConvChain.h adds which pairs to fuse).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Attrs.h"

#include <cstdint>

namespace rivet {

inline constexpr const char *kPointwiseDepthwiseOp = "dnnl.conv2d_nchwc_pw_dw";

/// The chain's attributes from the two calls' (First with FirstInputs
/// inputs, then Second).
Attrs pointwiseDepthwiseAttrs(const Attrs &First, int64_t FirstInputs,
                              const Attrs &Second);

/// The two calls' attributes and the first's number of inputs; false when A
/// is not a chain's.
bool splitPointwiseDepthwiseAttrs(const Attrs &A, Attrs &First,
                                  int64_t &FirstInputs, Attrs &Second);

} // namespace rivet
