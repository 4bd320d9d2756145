//===- ConvChain.h - Two fused convs as one kernel call ---------*- C++ -*-===//
//
// dnnl.conv2d_nchwc_pw_dw is a dnnl.conv2d_nchwc_fused call (a 1x1 conv and
// its tail) whose result only a depthwise dnnl.conv2d_nchwc_fused reads,
// as one call (PointwiseDepthwiseConv.h says why). Its inputs are the
// first call's, then the second's after its first (the 1x1 conv's result);
// its attributes the first call's, the second's with the prefix "dw_", and
// "pw_inputs", the number of the first call's inputs.
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

/// Which pairs run in one pass. Auto: those whose 1x1 result of one image
/// is at least one core's L2 (apart, it goes to L3 or memory and back).
/// Below, oneDNN's two kernels, each faster alone, keep it in L2, and one
/// pass gained nothing or lost (docs/benchmarks.md has the measurements).
/// Always: every pair the kernel can (tests);
/// Off: none. FuseConvChains makes one call of the pairs the choice takes
/// (of every pair whose size it cannot tell), the kernel checks again.
/// RIVET_POINTWISE_DEPTHWISE=off|always in the environment sets the
/// initial choice.
enum class PointwiseDepthwiseChoice { Auto, Off, Always };
PointwiseDepthwiseChoice pointwiseDepthwiseChoice();
void setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice C);
/// Whether the choice takes a pair whose 1x1 result of one image has
/// Bytes.
bool pointwiseDepthwiseTakes(int64_t Bytes);

} // namespace rivet
