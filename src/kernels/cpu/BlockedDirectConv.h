//===- BlockedDirectConv.h - Stride-1 convs on NCHW16c, sums in registers -===//
//
// Used by the anchors of src/kernels/dnnl. A direct conv kernel of our own
// for two cases oneDNN 2.6 splits or streams poorly, on 16-channel blocks
// (AVX-512):
//
// - 1x1, stride-1, unpadded convs with few output blocks for the threads.
//   Every output pixel depends on its own input pixel only, so a range of
//   pixels of every output block is a part that reads just that range of
//   the input. oneDNN's parts cut the output channels (each re-reads the
//   whole input) or the input channels (their sums added afterwards):
//   mobilenet_v2's projections to 16-32 channels took as long on two
//   threads as on one.
// - Convs on images of at most 64 pixels (ResNet's and MobileNet's 7 x 7
//   stages), whose weights outgrow L2: oneDNN's kernel re-reads them from
//   L3 for every output row. Here each output block covers the whole image
//   in two passes of rows (28 sums in registers), its weights read from L3
//   once and the next block's prefetched meanwhile.
//
// Where oneDNN is good it stays: its 1x1 kernel ran ahead of this one inside
// the model on one thread from 14 x 14 up, and pixel ranges before a
// depthwise conv, which cuts channel blocks, cost that conv as much again
// in reads from the other core's cache. The measurements behind each choice
// are in docs/benchmarks.md (the direct conv kernel, issue 6).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/dnnl/DnnlAnchors.h"
#include "kernels/dnnl/PostOps.h"

#include <cstdint>

namespace rivet {

/// One image's buffers of a stride-1 conv on 16-channel blocks and its tail
/// (bias, then the ops in order). Output pixels are numbered row-major.
struct DirectConvArgs {
  /// The input: [inBlocks][pixels][16] for a 1x1 conv; for the row kernel
  /// padded ([inBlocks][rows][xRowStride / 16][16], the pads zero) so that
  /// output pixel (h, w) reads tap (kh, kw) at row h + kh, column w + kw.
  const float *x = nullptr;
  const float *w = nullptr;    ///< [outBlocks][inBlocks][kh][kw][16 i][16 o]
  const float *bias = nullptr; ///< [outBlocks * 16], or null
  float *out = nullptr;        ///< [outBlocks][outPixels][16]
  /// outPixels: of each output block, and the pixels from one output
  /// block to the next (a 1x1 conv may compute a range of them).
  int64_t inBlocks = 0, outBlocks = 0, outPixels = 0;
  int64_t xBlockStride = 0;         ///< floats from one input block to the next
  int64_t xRowStride = 0;           ///< floats from one input row to the next
  int64_t kernelH = 1, kernelW = 1; ///< taps (kh, kw) of the conv kernel
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

/// Fills A's tail from Post for an output of shape Out with M channels;
/// false when an op is not one the kernels apply (sigmoid, tanh, an operand
/// broadcast along other axes, more than kMaxTailOps ops).
bool makeDirectConvTail(const PostOps &Post, const Shape &Out, int64_t M,
                        DirectConvArgs &A);

/// A 1x1 conv: pixels [P0, P1) of every output block of A, with its tail.
/// Tiles for AVX-512, or pixel by pixel on other CPUs (correct everywhere,
/// fast nowhere). Sums run in another order than the reference kernel's:
/// equal within rounding.
void directConvPixels(const DirectConvArgs &A, int64_t P0, int64_t P1);
/// Any stride-1 conv whose output rows have Cols pixels (rowKernelTakes):
/// every output pixel of every output block of A, on A's padded input.
void directConvRows(const DirectConvArgs &A, int64_t Cols);
/// Whether directConvRows has a kernel for output rows of Cols pixels.
bool rowKernelTakes(int64_t Cols);

/// Out = post(conv(X, W) + B) for conv2d_nchwc by the kernels above, when
/// the conv is one they take (float32, stride and dilation 1, group 1,
/// 16-channel blocks throughout; 1x1 and unpadded, or output rows that
/// rowKernelTakes; a tail of relu, clip, add and multiply whose operands are
/// scalars, per channel or of Out's shape), the CPU has AVX-512 and the
/// choice (DirectConvChoice) says so; on several threads as parts on the
/// runtime's pool (ranges of pixels or of output blocks). False otherwise:
/// then the caller runs oneDNN.
bool directConvBlocked(const Tensor &X, const Tensor &W, const Tensor *B,
                       const ConvParams &P, const BlockedConvLayout &L,
                       const PostOps &Post, Tensor &Out);

/// Which convs directConvBlocked takes. Auto: 1x1 convs with fewer than two
/// output blocks per thread over the images on several threads (where
/// oneDNN's parts must cut the input channels), and any it can on images
/// of at most 64 pixels; Always: every conv it can (tests); Off: none.
/// RIVET_DIRECT_CONV=off|always in the environment sets the initial choice.
enum class DirectConvChoice { Auto, Off, Always };
DirectConvChoice directConvChoice();
void setDirectConvChoice(DirectConvChoice C);
/// Convs run by directConvBlocked since the process started (tests).
int64_t directConvCalls();
/// Tests: directConvPixels and directConvRows in their pixel-by-pixel form
/// (what CPUs without AVX-512 run) even on AVX-512.
bool directConvBaseline();
void setDirectConvBaseline(bool On);

} // namespace rivet
