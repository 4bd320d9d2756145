//===- PointwiseConv.h - 1x1 convs on NCHW16c by pixel ranges -*- C++ -*-===//
//
// Internal to src/kernels/dnnl. In a 1x1, stride-1, unpadded, group-1 conv
// every output pixel depends on its own input pixel only, so a range of
// pixels of every output block is a part that reads just that range of the
// input. oneDNN's parts cut the output channels (each re-reads the whole
// input) or the input channels (their sums added afterwards): mobilenet_v2's
// projections to 16-32 channels at 56 x 56 and 112 x 112 took as long on
// two threads as on one (the second cut). By pixel ranges here, at T = 2 in
// the model: 144 -> 24 and 96 -> 24 at 56 x 56 0.26 / 0.18 -> 0.17 / 0.11
// ms, 32 -> 16 at 112 x 112 0.20 -> 0.12, the 28 x 28 ones 0.08-0.10 ->
// 0.05-0.06. Where oneDNN's parts are good it stays: its 1x1 kernel ran
// 5-20% ahead of this one inside the model on one thread from 14 x 14 up
// (on 7 x 7 images this one is ahead, 0.01-0.12 ms a conv), and pixel
// ranges before a depthwise conv, which cuts channel blocks, cost that conv
// as much again in reads from the other core's cache.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/dnnl/DnnlAnchors.h"
#include "kernels/dnnl/PostOps.h"

#include <cstdint>

namespace rivet {

/// One image's buffers of a pointwise conv on 16-channel blocks and its
/// tail (bias, then the ops in order).
struct PointwiseConvArgs {
  const float *x = nullptr;    ///< [inBlocks][pixels][16]
  const float *w = nullptr;    ///< [outBlocks][inBlocks][16 i][16 o]
  const float *bias = nullptr; ///< [outBlocks * 16], or null
  float *out = nullptr;        ///< [outBlocks][pixels][16]
  int64_t inBlocks = 0, outBlocks = 0, pixels = 0;
  /// An op of the tail: clamp to [lo, hi] (relu: [0, inf]), or add or
  /// multiply an operand that is one value, one per channel ([outBlocks *
  /// 16]) or one per output element (laid out as out).
  struct TailOp {
    enum class Kind { Clamp, Add, Multiply } kind = Kind::Clamp;
    OperandForm form = OperandForm::Scalar;
    const float *data = nullptr;
    float lo = 0, hi = 0;
  };
  static constexpr int kMaxTailOps = 4;
  TailOp tail[kMaxTailOps];
  int tailOps = 0;
};

/// Computes pixels [P0, P1) of every output block of A, with its tail.
/// Compiled for AVX-512 and the baseline, picked by the CPU at load time
/// (the baseline is correct everywhere, fast nowhere). Sums run in another
/// order than the reference kernel's: equal within rounding.
void pointwiseConvPixels(const PointwiseConvArgs &A, int64_t P0, int64_t P1);

/// Out = post(conv(X, W) + B) for conv2d_nchwc by the kernel above, when
/// the conv is one it takes (float32, 1x1, stride 1, no padding, group 1,
/// 16-channel blocks throughout, a tail of relu, clip, add and multiply
/// whose operands are scalars, per channel or of Out's shape), the CPU has
/// AVX-512 and the choice (PointwiseChoice) says so; on several threads as
/// parts on the runtime's pool (pixel ranges, or output block ranges for
/// small images). False otherwise: then the caller runs oneDNN.
bool pointwiseConvBlocked(const Tensor &X, const Tensor &W, const Tensor *B,
                          const ConvParams &P, const BlockedConvLayout &L,
                          const PostOps &Post, Tensor &Out);

/// Which convs the pointwise kernel takes. Auto: on several threads, those
/// with fewer than two output blocks per thread over all images (where
/// oneDNN's parts must cut the input channels), and at any thread count
/// those on images of at most 64 pixels (where it ran ahead of oneDNN);
/// Always: every conv it can (tests); Off: none. RIVET_POINTWISE=off|always
/// in the environment sets the initial choice.
enum class PointwiseChoice { Auto, Off, Always };
PointwiseChoice pointwiseChoice();
void setPointwiseChoice(PointwiseChoice C);
/// Convs run by pointwiseConvBlocked since the process started (tests).
int64_t pointwiseConvCalls();

} // namespace rivet
