//===- PointwiseConv.cc - 1x1 convs on NCHW16c by pixel ranges ----------===//
#include "kernels/dnnl/PointwiseConv.h"

#include "kernels/Threading.h"
#include "kernels/dnnl/DnnlConfig.h"
#include "kernels/dnnl/DnnlContext.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>

namespace rivet {

using namespace dnnlctx;

namespace {

/// Sixteen floats: one output channel block of one pixel; at float
/// alignment and may_alias (loads from float arrays). Only inside the
/// target-specific clones, never a parameter or a result.
typedef float Lanes __attribute__((vector_size(64), aligned(4), may_alias));

inline const Lanes &lanesAt(const float *P) {
  return *reinterpret_cast<const Lanes *>(P);
}

constexpr int64_t kBlock = 16, kBlockSquare = kBlock * kBlock;
using TailOp = PointwiseConvArgs::TailOp;

/// The tail on the R sums V of output block Ob, pixels P.., the first at
/// At in the image's output: bias, then the ops, one op at a time over the
/// R vectors (the switch is paid per op, not per vector).
template <int R>
__attribute__((always_inline)) inline void
applyTail(const PointwiseConvArgs &A, Lanes (&V)[R], int64_t Ob, int64_t At) {
  for (int T = 0; T < A.tailOps; ++T) {
    const TailOp &O = A.tail[T];
    if (O.kind == TailOp::Kind::Clamp) {
      Lanes Lo = Lanes{} + O.lo, Hi = Lanes{} + O.hi;
#pragma GCC unroll 24
      for (int Rr = 0; Rr < R; ++Rr) { // NaN stays, as in std::max(x, 0)
        V[Rr] = V[Rr] < Lo ? Lo : V[Rr];
        V[Rr] = V[Rr] > Hi ? Hi : V[Rr];
      }
      continue;
    }
    bool Add = O.kind == TailOp::Kind::Add;
    if (O.form != OperandForm::Full) {
      Lanes X = O.form == OperandForm::Scalar ? Lanes{} + *O.data
                                              : lanesAt(O.data + Ob * kBlock);
#pragma GCC unroll 24
      for (int Rr = 0; Rr < R; ++Rr)
        V[Rr] = Add ? V[Rr] + X : V[Rr] * X;
      continue;
    }
#pragma GCC unroll 24
    for (int Rr = 0; Rr < R; ++Rr) {
      const Lanes &X = lanesAt(O.data + At + Rr * kBlock);
      V[Rr] = Add ? V[Rr] + X : V[Rr] * X;
    }
  }
}

/// NB output blocks of R pixels from P: NB x R sums in registers (24, with
/// NB weight rows: at most 28 of AVX-512's 32), each input value broadcast
/// once for NB multiply-adds; the weights (NB x inBlocks x 1 KB) stay in L1
/// across the tiles.
template <int NB, int R>
__attribute__((always_inline)) inline void tile(const PointwiseConvArgs &A,
                                                int64_t Ob, int64_t P) {
  Lanes Acc[NB][R];
#pragma GCC unroll 4
  for (int B = 0; B < NB; ++B) {
    Lanes Bias = A.bias ? lanesAt(A.bias + (Ob + B) * kBlock) : Lanes{};
#pragma GCC unroll 24
    for (int Rr = 0; Rr < R; ++Rr)
      Acc[B][Rr] = Bias;
  }
  int64_t Plane = A.pixels * kBlock, WStride = A.inBlocks * kBlockSquare;
  const float *X = A.x + P * kBlock;
  const float *W = A.w + Ob * WStride;
  for (int64_t Ib = 0; Ib < A.inBlocks; ++Ib, X += Plane, W += kBlockSquare) {
#pragma GCC unroll 2
    for (int I = 0; I < kBlock; ++I) {
      Lanes Wv[NB];
#pragma GCC unroll 4
      for (int B = 0; B < NB; ++B)
        Wv[B] = lanesAt(W + B * WStride + I * kBlock);
#pragma GCC unroll 24
      for (int Rr = 0; Rr < R; ++Rr) {
        float S = X[Rr * kBlock + I];
#pragma GCC unroll 4
        for (int B = 0; B < NB; ++B)
          Acc[B][Rr] += Wv[B] * S;
      }
    }
  }
#pragma GCC unroll 4
  for (int B = 0; B < NB; ++B) {
    int64_t At = (Ob + B) * Plane + P * kBlock;
    applyTail<R>(A, Acc[B], Ob + B, At);
#pragma GCC unroll 24
    for (int Rr = 0; Rr < R; ++Rr)
      std::memcpy(A.out + At + Rr * kBlock, &Acc[B][Rr], sizeof(Lanes));
  }
}

/// Pixels [P0, P1) of output blocks [Ob, Ob + NB): R at a time, the last
/// few one at a time.
template <int NB, int R>
__attribute__((always_inline)) inline void
pixelRange(const PointwiseConvArgs &A, int64_t Ob, int64_t P0, int64_t P1) {
  int64_t P = P0;
  for (; P + R <= P1; P += R)
    tile<NB, R>(A, Ob, P);
  for (; P < P1; ++P)
    tile<NB, 1>(A, Ob, P);
}

/// Pixels per tile row of every NB: part boundaries fall on multiples.
constexpr int64_t kTilePixels = 24;

} // namespace

// Pixels in chunks whose input (every input block) stays in L2 while each
// group of output blocks passes over it: output blocks four at a time (six
// pixels a tile), the last one to three with more pixels a tile.
__attribute__((target_clones("avx512f", "default"))) void
pointwiseConvPixels(const PointwiseConvArgs &A, int64_t P0, int64_t P1) {
  constexpr int64_t kChunkBytes = 256 << 10;
  int64_t Chunk = kChunkBytes / (A.inBlocks * kBlock * (int64_t)sizeof(float));
  Chunk = Chunk < kTilePixels ? kTilePixels : Chunk - Chunk % kTilePixels;
  for (int64_t C0 = P0; C0 < P1; C0 += Chunk) {
    int64_t C1 = C0 + Chunk < P1 ? C0 + Chunk : P1;
    int64_t Ob = 0;
    for (; Ob + 4 <= A.outBlocks; Ob += 4)
      pixelRange<4, 6>(A, Ob, C0, C1);
    switch (A.outBlocks - Ob) {
    case 3: pixelRange<3, 8>(A, Ob, C0, C1); break;
    case 2: pixelRange<2, 12>(A, Ob, C0, C1); break;
    case 1: pixelRange<1, 24>(A, Ob, C0, C1); break;
    default: break;
    }
  }
}

namespace {

std::atomic<int64_t> Calls{0};

std::atomic<PointwiseChoice> &choiceFlag() {
  static std::atomic<PointwiseChoice> C{[] {
    const char *E = std::getenv("RIVET_POINTWISE");
    std::string_view V = E ? E : "";
    return V == "off"      ? PointwiseChoice::Off
           : V == "always" ? PointwiseChoice::Always
                           : PointwiseChoice::Auto;
  }()};
  return C;
}

/// The tail of Post for an output of M channels, or false when an op is
/// not one the kernel applies (sigmoid, tanh, an operand broadcast along
/// other axes, more than kMaxTailOps ops).
bool makeTail(const PostOps &Post, const Tensor &Out, int64_t M,
              PointwiseConvArgs &A) {
  if (Post.size() > (size_t)PointwiseConvArgs::kMaxTailOps)
    return false;
  constexpr float Inf = std::numeric_limits<float>::infinity();
  for (const PostOp &P : Post) {
    TailOp &O = A.tail[A.tailOps++];
    switch (P.kind) {
    case PostOp::Kind::Relu:
      O = {TailOp::Kind::Clamp, OperandForm::Scalar, nullptr, 0.f, Inf};
      continue;
    case PostOp::Kind::Clip:
      O = {TailOp::Kind::Clamp, OperandForm::Scalar, nullptr, (float)P.lo,
           (float)P.hi};
      continue;
    case PostOp::Kind::Add:
    case PostOp::Kind::Multiply: break;
    default: return false;
    }
    std::optional<OperandForm> F =
        P.operand.hasData() ? blockedOperandForm(P.operand, M, Out.shape())
                            : std::nullopt;
    if (!F)
      return false;
    O.kind = P.kind == PostOp::Kind::Add ? TailOp::Kind::Add
                                         : TailOp::Kind::Multiply;
    O.form = *F;
    O.data = P.operand.data<float>();
  }
  return true;
}

/// Images of at most this many pixels take the kernel at any thread count:
/// mobilenet_v2's 7 x 7 ones, 320 -> 1280 0.43 -> 0.36 ms and 160 -> 960
/// 0.14 -> 0.12 on one thread with operands from L3 (14 x 14 ones lost).
constexpr int64_t kMaxSmallImagePixels = 64;

/// Pixels per part at least: a part of fewer runs mostly single-pixel
/// tiles, and 7 x 7 images split better by output blocks.
constexpr int64_t kMinPartPixels = 48;

/// A part of a pointwise conv: image `image`, output blocks [b0, b1),
/// pixels [p0, p1).
struct PointwisePart {
  int64_t image, b0, b1, p0, p1;
};

} // namespace

bool pointwiseConvBlocked(const Tensor &X, const Tensor &W, const Tensor *B,
                          const ConvParams &P, const BlockedConvLayout &L,
                          const PostOps &Post, Tensor &Out) {
  static const bool HasAvx512 = __builtin_cpu_supports("avx512f");
  PointwiseChoice Choice = pointwiseChoice();
  if (Choice == PointwiseChoice::Off || !dnnlEnabled() || !HasAvx512 ||
      !allFloat32({&X, &W, B, &Out}))
    return false;
  if (L.dataBlock != kBlock || L.kernelInputBlock != kBlock ||
      L.outBlock != kBlock || P.group != 1 || X.rank() != 5 || W.rank() != 6 ||
      Out.rank() != 5)
    return false;
  auto All = [](const std::vector<int64_t> &V, int64_t E) {
    return V.size() == 2 && V[0] == E && V[1] == E;
  };
  const Shape &XS = X.shape(), &WS = W.shape(), &OS = Out.shape();
  if (!All(P.strides, 1) || !All(P.dilations, 1) || !All(P.padBegin, 0) ||
      !All(P.padEnd, 0) || WS[2] != 1 || WS[3] != 1 || WS[4] != kBlock ||
      WS[5] != kBlock || XS[4] != kBlock || OS[4] != kBlock || WS[0] != OS[1] ||
      WS[1] != XS[1] || OS[0] != XS[0] || OS[2] != XS[2] || OS[3] != XS[3] ||
      Out.numel() == 0)
    return false;
  int64_t N = XS[0], Ib = XS[1], Ob = OS[1], Pixels = XS[2] * XS[3];
  int64_t Threads = numThreads(), Work = Out.numel() * Ib * kBlock;
  bool Split = Threads > 1 && Work >= convPartsMinWork();
  bool FewBlocks = Split && N * Ob < 2 * Threads;
  if ((B && B->numel() != Ob * kBlock) ||
      (Choice == PointwiseChoice::Auto && !FewBlocks &&
       Pixels > kMaxSmallImagePixels))
    return false;
  PointwiseConvArgs Image;
  Image.w = W.data<float>();
  Image.bias = B ? B->data<float>() : nullptr;
  Image.inBlocks = Ib;
  Image.outBlocks = Ob;
  Image.pixels = Pixels;
  if (!makeTail(Post, Out, Ob * kBlock, Image))
    return false;

  // Parts: pixel ranges of each image (kMinPartPixels at least, on tile
  // boundaries), or, for images too small for 2 x Threads of those, ranges
  // of output blocks cut by balancedPartRanges.
  int64_t PixelRanges = 1, BlockRanges = 1;
  if (Split) {
    PixelRanges = std::min<int64_t>(2 * Threads, Pixels / kMinPartPixels);
    if (N * PixelRanges < 2 * Threads) {
      PixelRanges = 1;
      BlockRanges = balancedPartRanges(Ob, N, Threads,
                                       std::min<int64_t>(Ob, 2 * Threads));
    }
  }
  PixelRanges = std::max<int64_t>(PixelRanges, 1);
  int64_t OutImage = Out.numel() / N, XImage = X.numel() / N;
  auto RunPart = [&](int64_t Part) {
    int64_t Image0 = Part / (PixelRanges * BlockRanges);
    int64_t Rest = Part % (PixelRanges * BlockRanges);
    int64_t Br = Rest / PixelRanges, Pr = Rest % PixelRanges;
    auto Cut = [](int64_t Extent, int64_t R, int64_t Of, int64_t Align) {
      return R == Of ? Extent : Extent * R / Of / Align * Align;
    };
    int64_t B0 = Ob * Br / BlockRanges, B1 = Ob * (Br + 1) / BlockRanges;
    int64_t P0 = Cut(Pixels, Pr, PixelRanges, kTilePixels);
    int64_t P1 = Cut(Pixels, Pr + 1, PixelRanges, kTilePixels);
    PointwiseConvArgs A = Image;
    A.x = X.data<float>() + Image0 * XImage;
    A.out = Out.data<float>() + Image0 * OutImage + B0 * Pixels * kBlock;
    A.w += B0 * Ib * kBlockSquare;
    if (A.bias)
      A.bias += B0 * kBlock;
    A.outBlocks = B1 - B0;
    for (int T = 0; T < A.tailOps; ++T) {
      TailOp &O = A.tail[T];
      if (O.form == OperandForm::Full)
        O.data += Image0 * OutImage + B0 * Pixels * kBlock;
      else if (O.form == OperandForm::PerChannel)
        O.data += B0 * kBlock;
    }
    pointwiseConvPixels(A, P0, P1);
    return true;
  };
  int64_t Parts = N * BlockRanges * PixelRanges;
  if (Parts == 1 || Threads == 1) {
    for (int64_t Part = 0; Part < Parts; ++Part)
      RunPart(Part);
  } else if (!runPartsOnPool(Parts, RunPart)) {
    return false;
  }
  Calls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

PointwiseChoice pointwiseChoice() {
  return choiceFlag().load(std::memory_order_relaxed);
}
void setPointwiseChoice(PointwiseChoice C) { choiceFlag().store(C); }
int64_t pointwiseConvCalls() { return Calls.load(); }

} // namespace rivet
