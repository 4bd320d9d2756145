//===- BlockedDirectConv.cc - Stride-1 convs on NCHW16c, sums in registers ===//
#include "kernels/cpu/BlockedDirectConv.h"
#include "kernels/cpu/BlockedLanes.h"

#include "kernels/DnnlConfig.h"
#include "kernels/Threading.h"
#include "kernels/cpu/CpuSupport.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

namespace rivet {

using namespace cpu;

namespace {

using namespace blocked;

/// Floats from a tile's first input pixel to its pixel R's: consecutive
/// pixels (Cols = 0, a 1x1 conv's unpadded input) or rows of Cols pixels
/// in the padded input.
template <int Cols>
__attribute__((always_inline)) inline int64_t pixelOffset(int R,
                                                          int64_t RowStride) {
  return Cols == 0 ? R * kBlock : R / Cols * RowStride + R % Cols * kBlock;
}

/// NB output blocks of R pixels from output pixel P: NB x R sums in
/// registers (24-28, with NB weight rows: at most 29 of AVX-512's 32), each
/// input value broadcast once for NB multiply-adds. With Prefetch, the next
/// NB blocks' weights are prefetched into L2 as these are read.
template <int NB, int R, int Cols, bool Prefetch>
__attribute__((always_inline)) inline void tile(const DirectConvArgs &A,
                                                int64_t Ob, int64_t P) {
  Lanes Acc[NB][R];
#pragma GCC unroll 4
  for (int B = 0; B < NB; ++B) {
    Lanes Bias = A.bias ? lanesAt(A.bias + (Ob + B) * kBlock) : Lanes{};
#pragma GCC unroll 28
    for (int Rr = 0; Rr < R; ++Rr)
      Acc[B][Rr] = Bias;
  }
  int64_t Row = A.xRowStride,
          WStride = A.inBlocks * A.kernelH * A.kernelW * kBlockSquare;
  const float *X =
      A.x + (Cols == 0 ? P * kBlock : P / Cols * Row + P % Cols * kBlock);
  const float *W = A.w + Ob * WStride;
  for (int64_t Ib = 0; Ib < A.inBlocks; ++Ib, X += A.xBlockStride) {
    for (int64_t T = 0; T < A.kernelH * A.kernelW; ++T, W += kBlockSquare) {
      const float *Xt = X + T / A.kernelW * Row + T % A.kernelW * kBlock;
#pragma GCC unroll 2
      for (int I = 0; I < kBlock; ++I) {
        Lanes Wv[NB];
#pragma GCC unroll 4
        for (int B = 0; B < NB; ++B)
          Wv[B] = lanesAt(W + B * WStride + I * kBlock);
        if (Prefetch)
          __builtin_prefetch(W + NB * WStride + I * kBlock, 0, 2);
#pragma GCC unroll 28
        for (int Rr = 0; Rr < R; ++Rr) {
          float S = Xt[pixelOffset<Cols>(Rr, Row) + I];
#pragma GCC unroll 4
          for (int B = 0; B < NB; ++B)
            Acc[B][Rr] += Wv[B] * S;
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int B = 0; B < NB; ++B) {
    int64_t At = ((Ob + B) * A.outPixels + P) * kBlock;
    applyTail<R>(A.tail, A.tailOps, Acc[B], Ob + B, At);
#pragma GCC unroll 28
    for (int Rr = 0; Rr < R; ++Rr)
      std::memcpy(A.out + At + Rr * kBlock, &Acc[B][Rr], sizeof(Lanes));
  }
}

/// Pixels [P0, P1) of output blocks [Ob, Ob + NB) of a 1x1 conv: R at a
/// time, the last few one at a time.
template <int NB, int R>
__attribute__((always_inline)) inline void
pixelRange(const DirectConvArgs &A, int64_t Ob, int64_t P0, int64_t P1) {
  int64_t P = P0;
  for (; P + R <= P1; P += R)
    tile<NB, R, 0, false>(A, Ob, P);
  for (; P < P1; ++P)
    tile<NB, 1, 0, false>(A, Ob, P);
}

/// Every output block, one at a time, over the whole image: Rows rows of
/// Cols pixels a tile, the last tile with the rows left.
template <int Cols, int Rows>
__attribute__((always_inline)) inline void imageRows(const DirectConvArgs &A) {
  static_assert(Rows >= 1 && Rows <= 4, "one case per remainder below");
  int64_t Ho = A.outPixels / Cols;
  for (int64_t Ob = 0; Ob < A.outBlocks; ++Ob) {
    int64_t H = 0;
    for (; H + Rows <= Ho; H += Rows)
      tile<1, Rows * Cols, Cols, true>(A, Ob, H * Cols);
    switch (Ho - H) {
    case 3: tile<1, 3 * Cols, Cols, true>(A, Ob, H * Cols); break;
    case 2: tile<1, 2 * Cols, Cols, true>(A, Ob, H * Cols); break;
    case 1: tile<1, Cols, Cols, true>(A, Ob, H * Cols); break;
    default: break;
    }
  }
}

/// Pixels per tile row of every NB: part boundaries fall on multiples.
constexpr int64_t kTilePixels = 24;

} // namespace

namespace {

// Pixels in chunks whose input (every input block) stays in L2 while each
// group of output blocks passes over it: output blocks four at a time (six
// pixels a tile), the last one to three with more pixels a tile.
__attribute__((target("avx512f"))) void pixelsAvx512(const DirectConvArgs &A,
                                                     int64_t P0, int64_t P1) {
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

// Rows of 7 (ResNet's last stage at 224 x 224), 8 (at 256 x 256) and 14
// pixels, 21-28 sums a tile.
__attribute__((target("avx512f"))) void rowsAvx512(const DirectConvArgs &A,
                                                   int64_t Cols) {
  switch (Cols) {
  case 7: imageRows<7, 4>(A); break;
  case 8: imageRows<8, 3>(A); break;
  case 14: imageRows<14, 2>(A); break;
  default: break;
  }
}

/// Without AVX-512 (callers do not choose these kernels there; tests do):
/// one pixel of one block a tile, the same sums. Not the AVX-512 tiles
/// compiled for the baseline: 16-float vectors in 28 sums spill everywhere
/// and took most of a minute to compile.
template <int Cols>
void pixelByPixel(const DirectConvArgs &A, int64_t P0, int64_t P1) {
  for (int64_t Ob = 0; Ob < A.outBlocks; ++Ob)
    for (int64_t P = P0; P < P1; ++P)
      tile<1, 1, Cols, false>(A, Ob, P);
}

std::atomic<bool> Baseline{false};

/// Whether the kernels run their AVX-512 tiles.
bool avx512Tiles() {
  return cpuHasAvx512() && !Baseline.load(std::memory_order_relaxed);
}

} // namespace

void directConvPixels(const DirectConvArgs &A, int64_t P0, int64_t P1) {
  if (avx512Tiles())
    pixelsAvx512(A, P0, P1);
  else
    pixelByPixel<0>(A, P0, P1);
}

void directConvRows(const DirectConvArgs &A, int64_t Cols) {
  if (avx512Tiles()) {
    rowsAvx512(A, Cols);
    return;
  }
  switch (Cols) {
  case 7: pixelByPixel<7>(A, 0, A.outPixels); break;
  case 8: pixelByPixel<8>(A, 0, A.outPixels); break;
  case 14: pixelByPixel<14>(A, 0, A.outPixels); break;
  default: break;
  }
}

bool rowKernelTakes(int64_t Cols) {
  return Cols == 7 || Cols == 8 || Cols == 14;
}

namespace {

std::atomic<int64_t> DirectCalls{0};

std::atomic<DirectConvChoice> &directChoiceFlag() {
  static std::atomic<DirectConvChoice> C{
      choiceFromEnvironment<DirectConvChoice>("RIVET_DIRECT_CONV")};
  return C;
}

/// Images of at most this many output pixels take the kernels at any
/// thread count: mobilenet_v2's 7 x 7 1x1 convs, 320 -> 1280 0.43 -> 0.36
/// ms and 160 -> 960 0.14 -> 0.12 on one thread with operands from L3
/// (14 x 14 ones lost); resnet18's 7 x 7 3x3 convs (the file comment).
constexpr int64_t kMaxSmallImagePixels = 64;

/// Pixels per part at least: a part of fewer runs mostly single-pixel
/// tiles, and 7 x 7 images split better by output blocks.
constexpr int64_t kMinPartPixels = 48;

/// A conv's input for the row kernel: Image's Ib input blocks of H x W
/// pixels with zeros around each (PadTop rows above, PadLeft columns
/// before, up to Hp x Wp), into Into.
void padImage(const float *Image, int64_t Ib, int64_t H, int64_t W,
              int64_t PadTop, int64_t PadLeft, int64_t Hp, int64_t Wp,
              float *Into) {
  std::memset(Into, 0, (size_t)(Ib * Hp * Wp * kBlock) * sizeof(float));
  for (int64_t B = 0; B < Ib; ++B)
    for (int64_t R = 0; R < H; ++R)
      std::memcpy(Into + ((B * Hp + R + PadTop) * Wp + PadLeft) * kBlock,
                  Image + (B * H + R) * W * kBlock,
                  (size_t)(W * kBlock) * sizeof(float));
}

} // namespace

bool makeDirectConvTail(const PostOps &Post, const Shape &Out, int64_t M,
                        DirectConvArgs &A) {
  if (Post.size() > (size_t)DirectConvArgs::kMaxTailOps)
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
    std::optional<OperandForm> F = P.operand.hasData()
                                       ? blockedOperandForm(P.operand, M, Out)
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

bool directConvBlocked(const Tensor &X, const Tensor &W, const Tensor *B,
                       const ConvParams &P, const BlockedConvLayout &L,
                       const PostOps &Post, Tensor &Out) {
  DirectConvChoice Choice = directConvChoice();
  if (Choice == DirectConvChoice::Off || !dnnlEnabled() || !cpuHasAvx512() ||
      !allFloat32({&X, &W, B, &Out}))
    return false;
  if (L.dataBlock != kBlock || L.kernelInputBlock != kBlock ||
      L.outBlock != kBlock || P.group != 1 || X.rank() != 5 || W.rank() != 6 ||
      Out.rank() != 5)
    return false;
  auto Two = [](const std::vector<int64_t> &V) { return V.size() == 2; };
  auto Ones = [&](const std::vector<int64_t> &V) {
    return Two(V) && V[0] == 1 && V[1] == 1;
  };
  if (!Ones(P.strides) || !Ones(P.dilations) || !Two(P.padBegin) ||
      !Two(P.padEnd))
    return false;
  const Shape &XS = X.shape(), &WS = W.shape(), &OS = Out.shape();
  int64_t N = XS[0], Ib = XS[1], H = XS[2], Wd = XS[3], Ob = OS[1];
  int64_t KH = WS[2], KW = WS[3], Ho = OS[2], Wo = OS[3];
  int64_t Pt = P.padBegin[0], Pl = P.padBegin[1], Pb = P.padEnd[0],
          Pr = P.padEnd[1];
  if (Pt < 0 || Pl < 0 || Pb < 0 || Pr < 0 || WS[4] != kBlock ||
      WS[5] != kBlock || XS[4] != kBlock || OS[4] != kBlock || WS[0] != Ob ||
      WS[1] != Ib || OS[0] != N || Ho != H + Pt + Pb - KH + 1 ||
      Wo != Wd + Pl + Pr - KW + 1 || Out.numel() == 0 ||
      (B && B->numel() != Ob * kBlock))
    return false;
  bool OneByOne = KH == 1 && KW == 1 && Pt + Pl + Pb + Pr == 0;
  int64_t Pixels = Ho * Wo, Threads = numThreads();
  int64_t Work = Out.numel() * Ib * KH * KW * kBlock;
  bool Split = Threads > 1 && Work >= convPartsMinWork();
  bool Small = Pixels <= kMaxSmallImagePixels;
  bool Rows = !OneByOne && rowKernelTakes(Wo);
  if (!OneByOne && !Rows)
    return false;
  if (Choice == DirectConvChoice::Auto &&
      !(Small || (OneByOne && Split && N * Ob < 2 * Threads)))
    return false;
  DirectConvArgs Image;
  Image.w = W.data<float>();
  Image.bias = B ? B->data<float>() : nullptr;
  Image.inBlocks = Ib;
  Image.outBlocks = Ob;
  Image.outPixels = Pixels;
  if (!makeDirectConvTail(Post, Out.shape(), Ob * kBlock, Image))
    return false;

  // The row kernel reads a padded copy of the images (a few hundred KB:
  // small images only take it by Auto).
  thread_local std::vector<float> Padded;
  int64_t Hp = H + Pt + Pb, Wp = Wd + Pl + Pr;
  int64_t XImage = Rows ? Ib * Hp * Wp * kBlock : X.numel() / N;
  if (Rows) {
    Padded.resize((size_t)(N * XImage));
    for (int64_t I = 0; I < N; ++I)
      padImage(X.data<float>() + I * (X.numel() / N), Ib, H, Wd, Pt, Pl, Hp, Wp,
               Padded.data() + I * XImage);
    Image.kernelH = KH;
    Image.kernelW = KW;
    Image.xBlockStride = Hp * Wp * kBlock;
    Image.xRowStride = Wp * kBlock;
  } else {
    Image.xBlockStride = Pixels * kBlock;
  }
  const float *XData = Rows ? Padded.data() : X.data<float>();

  // Parts: a 1x1 conv's pixel ranges of each image (kMinPartPixels at
  // least, on tile boundaries); else, or for images too small for 2 x
  // Threads of those, ranges of output blocks cut by balancedPartRanges.
  int64_t PixelRanges = 1, BlockRanges = 1;
  if (Split) {
    PixelRanges =
        Rows ? 0 : std::min<int64_t>(2 * Threads, Pixels / kMinPartPixels);
    if (N * PixelRanges < 2 * Threads) {
      PixelRanges = 1;
      BlockRanges = balancedPartRanges(Ob, N, Threads,
                                       std::min<int64_t>(Ob, 2 * Threads));
    }
  }
  int64_t OutImage = Out.numel() / N, WStride = Ib * KH * KW * kBlockSquare;
  auto RunPart = [&](int64_t Part) {
    int64_t Img = Part / (PixelRanges * BlockRanges);
    int64_t Rest = Part % (PixelRanges * BlockRanges);
    int64_t Br = Rest / PixelRanges, Pi = Rest % PixelRanges;
    auto Cut = [](int64_t Extent, int64_t R, int64_t Of, int64_t Align) {
      return R == Of ? Extent : Extent * R / Of / Align * Align;
    };
    int64_t B0 = Ob * Br / BlockRanges, B1 = Ob * (Br + 1) / BlockRanges;
    DirectConvArgs A = Image;
    A.x = XData + Img * XImage;
    A.out = Out.data<float>() + Img * OutImage + B0 * Pixels * kBlock;
    A.w += B0 * WStride;
    if (A.bias)
      A.bias += B0 * kBlock;
    A.outBlocks = B1 - B0;
    for (int T = 0; T < A.tailOps; ++T) {
      TailOp &O = A.tail[T];
      if (O.form == OperandForm::Full)
        O.data += Img * OutImage + B0 * Pixels * kBlock;
      else if (O.form == OperandForm::PerChannel)
        O.data += B0 * kBlock;
    }
    if (Rows)
      directConvRows(A, Wo);
    else
      directConvPixels(A, Cut(Pixels, Pi, PixelRanges, kTilePixels),
                       Cut(Pixels, Pi + 1, PixelRanges, kTilePixels));
    return true;
  };
  // One thread (or part): the pool runs them inline.
  if (!runPartsOnPool(N * BlockRanges * PixelRanges, RunPart))
    return false;
  DirectCalls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

DirectConvChoice directConvChoice() {
  return directChoiceFlag().load(std::memory_order_relaxed);
}
void setDirectConvChoice(DirectConvChoice C) { directChoiceFlag().store(C); }
int64_t directConvCalls() { return DirectCalls.load(); }
bool directConvBaseline() { return Baseline.load(); }
void setDirectConvBaseline(bool On) { Baseline.store(On); }

} // namespace rivet
