//===- PointwiseDepthwiseConv.cc - A 1x1 conv feeding a depthwise conv ----===//
//
// Per image and range of channel blocks, the output rows go in chunks: the
// input rows a chunk's depthwise windows need that the ring lacks are
// computed by the 1x1 conv's tiles (directConvPixels) into their slots
// (row r in slot r mod ringRows), then the depthwise conv reads its taps
// from the ring. The ring holds ringRows rows of every block of the range
// (about 256 KB), so that a row is computed once and read while in L2.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/PointwiseDepthwiseConv.h"

#include "kernels/DnnlConfig.h"
#include "kernels/Threading.h"
#include "kernels/cpu/BlockedDirectConv.h"
#include "kernels/cpu/BlockedLanes.h"
#include "kernels/cpu/CpuSupport.h"

#include <algorithm>
#include <atomic>
#include <vector>

namespace rivet {

using namespace cpu;
using namespace blocked;

namespace {

/// The depthwise half of one part: its geometry, weights and tail.
struct DepthwiseArgs {
  const float *w = nullptr;    ///< [blocks][kh][kw][16]
  const float *bias = nullptr; ///< [blocks * 16], or null
  float *out = nullptr;        ///< [blocks][outH][outW][16]
  int64_t h = 0, w_ = 0, outH = 0, outW = 0;
  int64_t kernelH = 0, kernelW = 0, stride = 1, padTop = 0, padLeft = 0;
  TailOp tail[DirectConvArgs::kMaxTailOps];
  int tailOps = 0;
};

/// The input rows of one output row of one block: the rows its window
/// covers that are inside the image (those outside are the padding's
/// zeros), each with its row of the block's weights.
struct WindowRows {
  const float *rows[16], *taps[16];
  int count = 0;
};

/// NT output pixels from Ow: sums in registers, one multiply-add per tap,
/// the tap's weights loaded once for the NT. Checked: taps outside the row
/// (the left and right padding) are skipped, for the row's edges.
template <int NT, bool Checked>
__attribute__((always_inline)) inline void
depthwiseTile(const DepthwiseArgs &D, const WindowRows &Win, int64_t B,
              float *Out, int64_t Ow) {
  Lanes V[NT];
  Lanes Bias = D.bias ? lanesAt(D.bias + B * kBlock) : Lanes{};
#pragma GCC unroll 8
  for (int T = 0; T < NT; ++T)
    V[T] = Bias;
  int64_t S = D.stride, Iw0 = Ow * S - D.padLeft;
  for (int R = 0; R < Win.count; ++R) {
    const float *In = Win.rows[R];
    for (int64_t Kw = 0; Kw < D.kernelW; ++Kw) {
      Lanes Wt = lanesAt(Win.taps[R] + Kw * kBlock);
#pragma GCC unroll 8
      for (int T = 0; T < NT; ++T) {
        int64_t Iw = Iw0 + T * S + Kw;
        if (!Checked || (Iw >= 0 && Iw < D.w_))
          V[T] += lanesAt(In + Iw * kBlock) * Wt;
      }
    }
  }
  applyTail<NT>(D.tail, D.tailOps, V, B, 0);
#pragma GCC unroll 8
  for (int T = 0; T < NT; ++T)
    __builtin_memcpy(Out + (Ow + T) * kBlock, &V[T], sizeof(Lanes));
}

/// Output row O of block B from the ring (rows of W pixels, row r at slot
/// r mod RingRows, Ring pointing at the block's first slot). Columns whose
/// taps are all inside the row run in tiles of 8, 4, 2 and 1 pixels; the
/// edges (the padding's columns) one pixel at a time, checked.
__attribute__((target("avx512f"))) void
depthwiseRow(const DepthwiseArgs &D, int64_t B, const float *Ring,
             int64_t RingRows, int64_t O) {
  WindowRows Win;
  const float *W = D.w + B * D.kernelH * D.kernelW * kBlock;
  for (int64_t Kh = 0; Kh < D.kernelH; ++Kh) {
    int64_t Ih = O * D.stride - D.padTop + Kh;
    if (Ih < 0 || Ih >= D.h)
      continue;
    Win.rows[Win.count] = Ring + (Ih % RingRows) * D.w_ * kBlock;
    Win.taps[Win.count] = W + Kh * D.kernelW * kBlock;
    ++Win.count;
  }
  float *Out = D.out + (B * D.outH + O) * D.outW * kBlock;
  // Columns [Lo, Hi) read only columns inside the row.
  int64_t S = D.stride, Last = D.w_ - D.kernelW + D.padLeft;
  int64_t Hi = Last >= 0 ? std::min(D.outW, Last / S + 1) : 0;
  int64_t Lo = std::min((D.padLeft + S - 1) / S, Hi);
  for (int64_t Ow = 0; Ow < Lo; ++Ow)
    depthwiseTile<1, true>(D, Win, B, Out, Ow);
  int64_t Ow = Lo;
  for (; Ow + 8 <= Hi; Ow += 8)
    depthwiseTile<8, false>(D, Win, B, Out, Ow);
  if (Ow + 4 <= Hi) {
    depthwiseTile<4, false>(D, Win, B, Out, Ow);
    Ow += 4;
  }
  if (Ow + 2 <= Hi) {
    depthwiseTile<2, false>(D, Win, B, Out, Ow);
    Ow += 2;
  }
  if (Ow < Hi)
    depthwiseTile<1, false>(D, Win, B, Out, Ow++);
  for (Ow = std::max(Ow, Hi); Ow < D.outW; ++Ow)
    depthwiseTile<1, true>(D, Win, B, Out, Ow);
}

/// Rows of the ring a part holds: about 256 KB of them for every block of
/// the part, at least a window's.
int64_t ringRows(int64_t Blocks, int64_t W, int64_t KernelH, int64_t Stride) {
  constexpr int64_t kRingBytes = 256 << 10;
  int64_t Row = Blocks * W * kBlock * (int64_t)sizeof(float);
  return std::max(KernelH + Stride, kRingBytes / std::max<int64_t>(Row, 1));
}

/// One part: blocks [0, PW.outBlocks) of one image (PW and D offset to
/// them), every output row.
void runPart(const DirectConvArgs &PW, const DepthwiseArgs &D) {
  int64_t Blocks = PW.outBlocks, W = D.w_;
  int64_t RingRows = ringRows(Blocks, W, D.kernelH, D.stride);
  thread_local std::vector<float> Ring;
  Ring.resize((size_t)(Blocks * RingRows * W * kBlock));
  // Output rows a chunk: its window's rows all fit in the ring.
  int64_t Chunk = std::max<int64_t>(1, (RingRows - D.kernelH) / D.stride + 1);
  int64_t Done = 0; // input rows [0, Done) computed (the last RingRows kept)
  for (int64_t O0 = 0; O0 < D.outH; O0 += Chunk) {
    int64_t O1 = std::min(D.outH, O0 + Chunk);
    int64_t Lo = std::max<int64_t>(0, O0 * D.stride - D.padTop);
    int64_t Hi = std::min(D.h, (O1 - 1) * D.stride - D.padTop + D.kernelH);
    // Input rows [max(Done, Lo), Hi) into their slots, in runs that do not
    // wrap around the ring: pixel P of the run's call is both the input's
    // pixel (from the run's ring turn) and the slot's.
    for (int64_t R = std::max(Done, Lo); R < Hi;) {
      int64_t Turn = R / RingRows * RingRows;
      int64_t End = std::min(Hi, Turn + RingRows);
      DirectConvArgs A = PW;
      A.x += Turn * W * kBlock;
      A.out = Ring.data();
      A.outPixels = RingRows * W;
      directConvPixels(A, (R - Turn) * W, (End - Turn) * W);
      R = End;
    }
    Done = std::max(Done, Hi);
    for (int64_t B = 0; B < Blocks; ++B)
      for (int64_t O = O0; O < O1; ++O)
        depthwiseRow(D, B, Ring.data() + B * RingRows * W * kBlock, RingRows,
                     O);
  }
}

std::atomic<int64_t> PairCalls{0};

/// The tail in D's form (scalars and per-channel operands only: the ring
/// has no layout a full operand could follow).
bool scalarOrChannelTail(const PostOps &Post, const Shape &Out, int64_t M,
                         DirectConvArgs &A) {
  if (!makeDirectConvTail(Post, Out, M, A))
    return false;
  for (int T = 0; T < A.tailOps; ++T)
    if (A.tail[T].kind != TailOp::Kind::Clamp &&
        A.tail[T].form == OperandForm::Full)
      return false;
  return true;
}

bool isPair(const std::vector<int64_t> &V, int64_t A, int64_t B) {
  return V.size() == 2 && V[0] == A && V[1] == B;
}

} // namespace

bool pointwiseDepthwiseBlocked(const Tensor &X, const Tensor &W1,
                               const Tensor *B1, const ConvParams &P1,
                               const PostOps &Post1, const Tensor &W2,
                               const Tensor *B2, const ConvParams &P2,
                               const PostOps &Post2, Tensor &Out) {
  if (!dnnlEnabled() || !cpuHasAvx512() ||
      !allFloat32({&X, &W1, B1, &W2, B2, &Out}))
    return false;
  if (X.rank() != 5 || W1.rank() != 6 || W2.rank() != 6 || Out.rank() != 5)
    return false;
  const Shape &XS = X.shape(), &W1S = W1.shape(), &W2S = W2.shape(),
              &OS = Out.shape();
  int64_t N = XS[0], Ib = XS[1], H = XS[2], W = XS[3], Eb = W1S[0];
  int64_t KH = W2S[2], KW = W2S[3], Ho = OS[2], Wo = OS[3];
  // The 1x1 conv: stride 1, unpadded, group 1, 16-channel blocks.
  if (XS[4] != kBlock || W1S[1] != Ib || W1S[2] != 1 || W1S[3] != 1 ||
      W1S[4] != kBlock || W1S[5] != kBlock || P1.group != 1 ||
      !isPair(P1.strides, 1, 1) || !isPair(P1.dilations, 1, 1) ||
      !isPair(P1.padBegin, 0, 0) || !isPair(P1.padEnd, 0, 0) ||
      (B1 && B1->numel() != Eb * kBlock))
    return false;
  // The depthwise conv: one input channel per output channel, square
  // strides, pads inside the window, the shape Out has.
  if (W2S[0] != Eb || W2S[1] != 1 || W2S[4] != 1 || W2S[5] != kBlock ||
      P2.group != Eb * kBlock || P2.strides.size() != 2 ||
      P2.strides[0] != P2.strides[1] || P2.strides[0] < 1 ||
      !isPair(P2.dilations, 1, 1) || P2.padBegin.size() != 2 ||
      P2.padEnd.size() != 2 || OS[0] != N || OS[1] != Eb || OS[4] != kBlock ||
      KH > 16 || KW > 16 || (B2 && B2->numel() != Eb * kBlock))
    return false;
  int64_t S = P2.strides[0], Pt = P2.padBegin[0], Pl = P2.padBegin[1];
  for (int64_t Pad :
       {P2.padBegin[0], P2.padBegin[1], P2.padEnd[0], P2.padEnd[1]})
    if (Pad < 0 || Pad >= std::min(KH, KW))
      return false;
  if (Ho != (H + Pt + P2.padEnd[0] - KH) / S + 1 ||
      Wo != (W + Pl + P2.padEnd[1] - KW) / S + 1 || Ho < 1 || Wo < 1 || H < 1 ||
      W < 1)
    return false;

  if (!pointwiseDepthwiseTakes(Eb * kBlock * H * W * (int64_t)sizeof(float)))
    return false;

  DirectConvArgs PW;
  PW.w = W1.data<float>();
  PW.bias = B1 ? B1->data<float>() : nullptr;
  PW.inBlocks = Ib;
  PW.outBlocks = Eb;
  PW.xBlockStride = H * W * kBlock;
  Shape Mid = {N, Eb, H, W, kBlock};
  DirectConvArgs Tail2;
  if (!scalarOrChannelTail(Post1, Mid, Eb * kBlock, PW) ||
      !scalarOrChannelTail(Post2, OS, Eb * kBlock, Tail2))
    return false;
  DepthwiseArgs DW;
  DW.w = W2.data<float>();
  DW.bias = B2 ? B2->data<float>() : nullptr;
  DW.h = H;
  DW.w_ = W;
  DW.outH = Ho;
  DW.outW = Wo;
  DW.kernelH = KH;
  DW.kernelW = KW;
  DW.stride = S;
  DW.padTop = Pt;
  DW.padLeft = Pl;
  std::copy(Tail2.tail, Tail2.tail + Tail2.tailOps, DW.tail);
  DW.tailOps = Tail2.tailOps;

  // Parts: ranges of channel blocks of each image (each part computes only
  // its blocks of the 1x1 conv, so nothing is computed twice).
  int64_t Threads = numThreads();
  int64_t Ranges = Threads > 1 ? balancedPartRanges(Eb, N, Threads,
                                                    std::min(Eb, 2 * Threads))
                               : 1;
  int64_t XImage = Ib * H * W * kBlock, OutImage = Eb * Ho * Wo * kBlock;
  auto RunPart = [&](int64_t Part) {
    int64_t Img = Part / Ranges, R = Part % Ranges;
    int64_t B0 = Eb * R / Ranges, B1End = Eb * (R + 1) / Ranges;
    DirectConvArgs A = PW;
    A.x = X.data<float>() + Img * XImage;
    A.w += B0 * Ib * kBlockSquare;
    if (A.bias)
      A.bias += B0 * kBlock;
    A.outBlocks = B1End - B0;
    DepthwiseArgs D = DW;
    D.w += B0 * KH * KW * kBlock;
    if (D.bias)
      D.bias += B0 * kBlock;
    D.out = Out.data<float>() + Img * OutImage + B0 * Ho * Wo * kBlock;
    auto Shift = [&](TailOp *T, int NumOps) {
      for (int I = 0; I < NumOps; ++I)
        if (T[I].kind != TailOp::Kind::Clamp &&
            T[I].form == OperandForm::PerChannel)
          T[I].data += B0 * kBlock;
    };
    Shift(A.tail, A.tailOps);
    Shift(D.tail, D.tailOps);
    runPart(A, D);
    return true;
  };
  // One thread (or part): the pool runs them inline.
  if (!runPartsOnPool(N * Ranges, RunPart))
    return false;
  PairCalls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int64_t pointwiseDepthwiseCalls() { return PairCalls.load(); }

} // namespace rivet
