//===- PointwiseDepthwiseConv.h - 1x1 conv into depthwise conv -*- C++ -*-===//
//
// Used by the anchors of src/kernels/dnnl. MobileNet's inverted residual blocks
// widen the channels six times with a 1x1 conv whose result only a depthwise
// conv reads. Apart, that wide tensor goes out to memory and back (96 x 112 x
// 112 floats: 4.8 MB), and the depthwise conv, which does little arithmetic,
// runs at the speed of those reads (about 2.5 times slower from memory
// than from cache on mobilenet_v2: docs/benchmarks.md). Here the
// 1x1 conv's rows go into a ring of a few rows per channel block that stays
// in L2, and the depthwise conv reads them from there as soon as its
// window is complete.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/cpu/ConvChain.h"
#include "kernels/dnnl/DnnlAnchors.h"
#include "kernels/dnnl/PostOps.h"

namespace rivet {

/// Out = post2(dwconv(post1(conv1x1(X, W1) + B1), W2) + B2) on NCHW16c
/// tensors, without the 1x1 conv's result in memory, when the pair is one
/// the kernel takes: float32; the first a 1x1, stride-1, unpadded conv of
/// group 1 (OIHW16i16o weights); the second depthwise (group = its
/// channels, OIHW1i16o weights) of any window up to 16 x 16, stride and
/// padding (within the window), dilation 1; tails of relu, clip, add and
/// multiply whose operands are scalars or per channel; a CPU with AVX-512;
/// and the choice (PointwiseDepthwiseChoice, ConvChain.h) takes it. On several
/// threads as parts (ranges of channel blocks of each image) on the runtime's
/// pool. False otherwise: then the caller runs the two convs one after the
/// other.
bool pointwiseDepthwiseBlocked(const Tensor &X, const Tensor &W1,
                               const Tensor *B1, const ConvParams &P1,
                               const PostOps &Post1, const Tensor &W2,
                               const Tensor *B2, const ConvParams &P2,
                               const PostOps &Post2, Tensor &Out);

/// Pairs run by pointwiseDepthwiseBlocked since the process started.
int64_t pointwiseDepthwiseCalls();

} // namespace rivet
