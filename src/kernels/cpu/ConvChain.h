//===- ConvChain.h - Two fused convs as one kernel call ---------*- C++ -*-===//
//
// The choice of which pointwise + depthwise pairs run as one call
// (dnnl.conv2d_nchwc_pw_dw). The operator's name and attribute encoding are
// kernels/ConvChainAttrs.h (rivet_kernels, which the IR reads too).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/ConvChainAttrs.h"

#include <cstdint>

namespace rivet {

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
