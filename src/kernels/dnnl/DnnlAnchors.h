//===- DnnlAnchors.h - conv and matrix products on oneDNN -------*- C++ -*-===//
//
// The compute-heavy "anchor" operators run on oneDNN when it can do the case
// (float32, 1-3 spatial dims, post-ops it can express); each entry point
// returns false otherwise and the caller runs its reference kernel. No
// oneDNN header leaks through here: the runtime links oneDNN privately.
//
// Repeated calls with the same shapes reuse a cached primitive. Weights the
// caller marks constant are reordered once into oneDNN's preferred layout and
// the copy is cached per weight buffer (see DnnlContext.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"
#include "kernels/dnnl/PostOps.h"

#include <cstdint>
#include <vector>

namespace rivet {

/// Geometry of a convolution over [N, C, D1..Dn] with weights
/// [M, C / group, K1..Kn]; pads are explicit (auto_pad already resolved).
struct ConvParams {
  std::vector<int64_t> strides, dilations, padBegin, padEnd; // per spatial dim
  int64_t group = 1;
  /// The weight values never change while their storage lives (constants of
  /// an executable), so a reordered copy may be cached by storage identity.
  bool constantWeights = false;
};

/// Out = post(conv(X, W) + B). Out is preallocated with the conv's shape.
bool dnnlConv(const Tensor &X, const Tensor &W, const Tensor *B,
              const ConvParams &P, const PostOps &Post, Tensor &Out);

/// The channel blocks of conv2d_nchwc's buffers: x is NCHW{dataBlock}c
/// (1: plain NCHW bytes), w OIHW{kernelInputBlock}i{outBlock}o and the
/// result NCHW{outBlock}c.
struct BlockedConvLayout {
  int64_t dataBlock = 1, kernelInputBlock = 1, outBlock = 1;
};

/// Out = post(conv(X, W) + B) on blocked tensors, run in place (no reorder
/// of the activations); group 1 or depthwise. Binary post-op operands are
/// blocked like Out (a per-channel one as CHW{outBlock}c).
bool dnnlConvBlocked(const Tensor &X, const Tensor &W, const Tensor *B,
                     const ConvParams &P, const BlockedConvLayout &L,
                     const PostOps &Post, Tensor &Out);

/// On several threads a blocked conv of at least this many multiply-adds
/// (default 2^20) runs as parts (ranges of images and output channel
/// blocks, each a one-thread oneDNN call) on the runtime's pool instead of
/// in oneDNN's OpenMP region (DnnlConv.cc says why). Tests lower it; a
/// huge value turns the parts off (benchmarks).
int64_t convPartsMinWork();
void setConvPartsMinWork(int64_t Work);
/// The number of ranges, at most MaxRanges, to cut each of N images' Mb
/// output channel blocks into (range R of Ranges: blocks Mb * R / Ranges up
/// to Mb * (R + 1) / Ranges) so that Threads threads taking the parts in
/// order as they come free finish soonest; of equally fast ones the most
/// (a late worker's share is taken over). Cutting at most 2 * Threads
/// ranges blindly left threads idle: 6 blocks in 4 ranges (1, 2, 1, 2) on
/// two threads take as long as 4 blocks on one, in 2 ranges as 3.
int64_t balancedPartRanges(int64_t Mb, int64_t N, int64_t Threads,
                           int64_t MaxRanges);
/// Blocked convs run as parts since the process started (tests).
int64_t convPartsCalls();
/// The same for dense (DnnlMatMul.cc): multiply-adds from which a dense on
/// several threads runs as parts (ranges of rows, or of columns when it
/// has few), and how many did.
int64_t densePartsMinWork();
void setDensePartsMinWork(int64_t Work);
int64_t densePartsCalls();
/// Denses with few rows of x run as matrix-vector products (DenseGemv.h)
/// since the process started (tests).
int64_t denseGemvCalls();
/// Matrix products run on smallGemm (SmallGemm.h) rather than oneDNN
/// since the process started (tests).
int64_t smallGemmCalls();
/// Matrix products run on oneDNN's sgemm rather than its matmul primitive
/// (DnnlMatMul.cc says which) since the process started (tests).
int64_t sgemmCalls();

/// Out = post(A @ B), NumPy matmul semantics (rank-1 operands, broadcast
/// batch dimensions).
bool dnnlMatMul(const Tensor &A, const Tensor &B, const PostOps &Post,
                Tensor &Out);

/// Out = post(X[..., K] @ W[N, K]^T (+ Bias[N])).
bool dnnlDense(const Tensor &X, const Tensor &W, const Tensor *Bias,
               const PostOps &Post, Tensor &Out, bool ConstantWeights = false);

/// Out = Alpha * op(A) @ op(B) + Beta * C, C broadcast to [M, N].
bool dnnlGemm(const Tensor &A, const Tensor &B, const Tensor *C, bool TransA,
              bool TransB, double Alpha, double Beta, Tensor &Out);

/// Out = X with its channels in blocks of DstBlock instead of SrcBlock
/// (NCHW{b}c; 1: plain NCHW): X is [N, C/s, H, W(, s)] float32, blocks 1,
/// 4, 8 or 16, Out preallocated.
bool dnnlReblockChannels(const Tensor &X, int64_t SrcBlock, int64_t DstBlock,
                         Tensor &Out);

/// Statistics of the caches, for tests and benchmarks.
struct DnnlCacheStats {
  int64_t primitivesCreated = 0; // cache misses: primitive descriptor + JIT
  int64_t primitiveHits = 0;
  int64_t weightReorders = 0; // cached constant copies made (reorders and
                              // Winograd weight transforms)
  int64_t weightHits = 0;
};
DnnlCacheStats dnnlCacheStats();
/// Empties both caches (tests).
void dnnlClearCaches();

} // namespace rivet
