//===- DnnlConv.cc - Convolution on oneDNN --------------------------------===//
//
// Direct convolution. On plain NCHW tensors oneDNN chooses the layouts
// (blocked nChw8c-style activations and weights on AVX2/AVX-512): the
// activations are reordered in and out around each call; when the blocked
// form cannot take the post-ops, plain layouts are tried. On tensors that
// are already blocked (conv2d_nchwc) the call runs on them in place. Weights
// are reordered once per constant buffer. A residual add of the output's
// shape becomes the `sum` post-op (see PostOpPlan). Blocked 3x3 stride-1
// convs go to Winograd's algorithm first (WinogradConv.h), where it pays;
// stride-1 convs that oneDNN splits or streams poorly (1x1 ones with too
// few output blocks for the threads, any on 7 x 7 images) to a kernel of
// our own next (BlockedDirectConv.h); other blocked convs on several
// threads run as parts on the runtime's pool (ConvParts: ranges of images
// and output channel blocks, or, with too few output blocks, of input
// channel blocks whose sums are added).
//
//===----------------------------------------------------------------------===//
#include "kernels/dnnl/DnnlAnchors.h"

#include "kernels/DnnlConfig.h"
#include "kernels/NativeKernelAbi.h"
#include "kernels/Threading.h"
#include "kernels/cpu/BlockedDirectConv.h"
#include "kernels/dnnl/DnnlContext.h"
#include "kernels/dnnl/PostOps.h"
#include "kernels/dnnl/WinogradConv.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <string_view>
#include <vector>

namespace rivet {

using namespace dnnlctx;
using dnnl::memory;

namespace {

/// Whether T broadcasts against a conv output of shape Out along the
/// channel axis only, holding one value per output channel (M of them,
/// contiguous): a folded batch-norm shift, which oneDNN takes as the bias.
bool isPerChannel(const Tensor &T, int64_t M, const Shape &Out) {
  int64_t Rank = (int64_t)Out.size();
  if (T.numel() != M || T.rank() > Rank || T.rank() < Rank - 1)
    return false;
  int64_t C = T.rank() - (Rank - 1); // the channel axis of T
  for (int64_t I = 0; I < T.rank(); ++I)
    if (I != C && T.shape()[(size_t)I] != 1)
      return false;
  return true;
}

/// The layouts of a conv's buffers as oneDNN descriptors, and whether
/// oneDNN may pick the activations' layouts itself (then the buffers are
/// plain and reordered around the call).
struct ConvBuffers {
  memory::dims srcDims, weightDims, dstDims;
  memory::desc src, weights, dst;
  bool chooseLayouts = false;
  /// Maps each axis of Out's shape to a oneDNN axis (post-op operands).
  std::vector<int> outToDst;
  /// The output's layout when blocked (binary operands of its full size).
  std::optional<memory::desc> blockedDst;
  /// The layout choice, for the primitive cache key.
  PrimitiveKey key;
};

/// Kind tag of a conv's PrimitiveKey.
constexpr int64_t kConvTag = 0x636f6e76; // "conv"

/// Multiply-adds below which a conv runs on one thread. Higher than other
/// calls' threshold: a conv's OpenMP region splits the work statically, so
/// the calling thread waits for a (passive, sleeping) worker that a shared
/// machine may not schedule for a while. mobilenet_v2 at --threads 2, load
/// 2 on the two cores: median 12.0-13.9 ms with 2^18, 11.9 with 2^22,
/// 10.5-10.7 with 2^23 (9.2 on one thread); resnet18 (115M per conv) does
/// not change.
constexpr int64_t kMinParallelConvWork = int64_t(1) << 23;
/// The same for a blocked conv, which reaches oneDNN's OpenMP region only
/// when it does not split into parts (runConvInParts): a batch-1 conv with
/// two or three output blocks. mobilenet_v2's 144 -> 24 at 56 x 56 (11M)
/// took 0.27 ms on one thread, 0.30-0.51 in the region at two.
constexpr int64_t kMinParallelBlockedConvWork = int64_t(1) << 26;

/// ThreadMemories::flags of a conv: which buffers need no reorder.
constexpr unsigned kDirectSrc = 1, kDirectDst = 2, kDirectWeights = 4;

/// Runs conv(X, W, B) + Post into Out with the buffer layouts L.
bool runConv(const Tensor &X, const Tensor &W, const Tensor *B,
             const ConvParams &P, const PostOps &PostIn, Tensor &Out,
             const ConvBuffers &L,
             bool PerChannel(const Tensor &, int64_t, const Shape &)) {
  size_t Rank = L.srcDims.size() - 2;
  if (P.strides.size() != Rank || P.dilations.size() != Rank ||
      P.padBegin.size() != Rank || P.padEnd.size() != Rank || P.group < 1 ||
      X.numel() == 0 || Out.numel() == 0)
    return false;
  int64_t M = L.dstDims[1];
  // A leading per-channel add becomes the bias: oneDNN's direct kernels
  // take `bias + sum + eltwise`, but not every `binary + sum` chain.
  PostOps Post = PostIn;
  if (!B && !Post.empty() && Post[0].kind == PostOp::Kind::Add &&
      allFloat32({&Post[0].operand}) &&
      PerChannel(Post[0].operand, M, Out.shape())) {
    B = &PostIn[0].operand;
    Post.erase(Post.begin());
  }
  std::optional<PostOpPlan> Plan =
      planPostOps(Post, Out.shape(), L.dstDims, L.outToDst,
                  /*AllowSum=*/true, L.blockedDst ? &*L.blockedDst : nullptr);
  if (!Plan)
    return false;
  WorkScope Scope(Out.numel() * (W.numel() / std::max<int64_t>(M, 1)),
                  L.blockedDst ? kMinParallelBlockedConvWork
                               : kMinParallelConvWork);
  thread_local PrimitiveKey Key;
  Key.clear();
  Key.add(kConvTag);
  Key.addList(L.key.words.data(), L.key.words.size());
  const memory::dims *Parts[] = {&L.srcDims, &L.weightDims, &L.dstDims,
                                 &P.strides, &P.dilations,  &P.padBegin,
                                 &P.padEnd};
  for (const memory::dims *D : Parts)
    Key.addList(D->data(), D->size());
  Key.add(B != nullptr);
  Key.addList(Plan->key.words.data(), Plan->key.words.size());
  auto Prim = findPrimitive(Key, [&] {
    dnnl::primitive_attr Attr = baseAttr();
    Attr.set_post_ops(Plan->ops);
    memory::desc BiasDesc = B ? plainDesc({M}) : memory::desc();
    memory::dims Dil; // oneDNN counts dilation from 0
    for (int64_t D : P.dilations)
      Dil.push_back(D - 1);
    auto AnyOf = [](const memory::dims &D) {
      return memory::desc(D, memory::data_type::f32, memory::format_tag::any);
    };
    // Blocked layouts first (the fast direct kernels), then plain; with the
    // layouts fixed by the caller, only those.
    for (bool Choose : {true, false}) {
      if (Choose && !L.chooseLayouts)
        continue;
      try {
        dnnl::convolution_forward::desc D(dnnl::prop_kind::forward_inference,
                                          dnnl::algorithm::convolution_direct,
                                          Choose ? AnyOf(L.srcDims) : L.src,
                                          AnyOf(L.weightDims), BiasDesc,
                                          Choose ? AnyOf(L.dstDims) : L.dst,
                                          P.strides, Dil, P.padBegin, P.padEnd);
        dnnl::convolution_forward::primitive_desc PD(D, Attr, engine());
        // With `any` layouts oneDNN may settle on its reference kernel
        // (when no optimized one takes these post-ops); the plain-layout
        // gemm kernels are far faster than that.
        if (Choose && std::string_view(PD.impl_info_str()).starts_with("ref"))
          continue;
        CachedPrimitive C;
        C.prim = dnnl::convolution_forward(PD);
        C.src = PD.src_desc();
        C.weights = PD.weights_desc();
        C.dst = PD.dst_desc();
        C.bias = BiasDesc;
        C.scratchpad = PD.scratchpad_desc();
        return C;
      } catch (const dnnl::error &) {
        if (!Choose)
          throw;
      }
    }
    return CachedPrimitive{};
  });
  if (!Prim->prim)
    return false;
  // A failure while running (e.g. no memory for a reordered copy) leaves
  // the case to the reference kernel, which overwrites all of Out.
  try {
    dnnl::stream &S = threadStream();
    // This thread's memory objects for the primitive, and whether the
    // buffers are already in its layouts (fixed by the primitive's key,
    // which names the layout choice and the dims).
    ThreadMemories &M = threadMemories(Prim);
    if (M.fresh)
      M.flags = (Prim->src == L.src ? kDirectSrc : 0) |
                (Prim->dst == L.dst ? kDirectDst : 0) |
                (Prim->weights == L.weights ? kDirectWeights : 0);
    bool DirectDst = M.flags & kDirectDst;
    thread_local std::vector<dnnl_exec_arg_t> Args;
    std::vector<memory> Keep; // per-call memory objects, alive until run
    Args.clear();
    if (M.flags & kDirectSrc) {
      M.src.set_data_handle(X.rawData());
      Args.push_back({DNNL_ARG_SRC, M.src.get()});
    } else {
      Keep.push_back(threadScratch(Prim->src, 0));
      reorderInto(wrap(X, L.src), Keep.back());
      Args.push_back({DNNL_ARG_SRC, Keep.back().get()});
    }
    if (M.flags & kDirectWeights) {
      M.weights.set_data_handle(W.rawData());
      Args.push_back({DNNL_ARG_WEIGHTS, M.weights.get()});
    } else {
      Keep.push_back(weightsIn(W, L.weights, Prim->weights, P.constantWeights));
      Args.push_back({DNNL_ARG_WEIGHTS, Keep.back().get()});
    }
    memory Dst;
    if (DirectDst) {
      M.dst.set_data_handle(Out.rawData());
      Args.push_back({DNNL_ARG_DST, M.dst.get()});
    } else {
      Dst = threadScratch(Prim->dst, 1);
      Args.push_back({DNNL_ARG_DST, Dst.get()});
    }
    if (Plan->sumOperand) { // the sum post-op adds what Dst holds
      const Tensor &Sum = *Plan->sumOperand;
      if (DirectDst) {
        if (Sum.rawData() != Out.rawData())
          std::memcpy(Out.rawData(), Sum.rawData(), L.dst.get_size());
      } else {
        reorderInto(wrap(Sum, L.dst), Dst);
      }
    }
    if (B) {
      M.bias.set_data_handle(B->rawData());
      Args.push_back({DNNL_ARG_BIAS, M.bias.get()});
    }
    addPostOpArgs(*Plan, Args, Keep);
    executePrimitive(*Prim, Args);
    if (!DirectDst)
      reorderInto(Dst, wrap(Out, L.dst));
    S.wait();
  } catch (const dnnl::error &) {
    return false;
  }
  return true;
}

/// oneDNN's tag for a layout with channel blocks of Block (0: none).
std::optional<memory::format_tag> activationTag(int64_t Block) {
  switch (Block) {
  case 1: return memory::format_tag::nchw;
  case 8: return memory::format_tag::nChw8c;
  case 16: return memory::format_tag::nChw16c;
  default: return std::nullopt;
  }
}

} // namespace

bool dnnlConv(const Tensor &X, const Tensor &W, const Tensor *B,
              const ConvParams &P, const PostOps &Post, Tensor &Out) {
  if (!dnnlEnabled() || !allFloat32({&X, &W, B, &Out}))
    return false;
  if (X.rank() < 3 || X.rank() > 5 || W.rank() != X.rank() ||
      Out.rank() != X.rank() || P.group < 1)
    return false;
  ConvBuffers L;
  L.srcDims = toDims(X.shape());
  L.dstDims = toDims(Out.shape());
  L.weightDims = toDims(W.shape());
  int64_t M = W.shape()[0], G = P.group;
  if (G > 1) {
    L.weightDims[0] = M / G;
    L.weightDims.insert(L.weightDims.begin(), G);
  }
  L.src = plainDesc(L.srcDims);
  L.dst = plainDesc(L.dstDims);
  L.weights = plainDesc(L.weightDims);
  L.chooseLayouts = true;
  for (size_t I = 0; I < Out.shape().size(); ++I)
    L.outToDst.push_back((int)I);
  L.key.add(0); // plain
  return runConv(X, W, B, P, Post, Out, L, isPerChannel);
}

namespace {

/// The oneDNN layouts of conv2d_nchwc's buffers X, W and Out (group 1 or
/// depthwise); nullopt for other layouts.
std::optional<ConvBuffers> blockedConvBuffers(const Tensor &X, const Tensor &W,
                                              const Tensor &Out, int64_t G,
                                              const BlockedConvLayout &BL) {
  std::optional<memory::format_tag> SrcTag = activationTag(BL.dataBlock),
                                    DstTag = activationTag(BL.outBlock);
  if (!SrcTag || !DstTag || BL.outBlock == 1)
    return std::nullopt;
  int64_t N = X.shape()[0], C = X.shape()[1] * BL.dataBlock;
  int64_t M = Out.shape()[1] * BL.outBlock;
  int64_t CG = W.shape()[1] * BL.kernelInputBlock; // C / group
  ConvBuffers L;
  L.srcDims = {N, C, X.shape()[2], X.shape()[3]};
  L.dstDims = {N, M, Out.shape()[2], Out.shape()[3]};
  using Tag = memory::format_tag;
  std::optional<Tag> WTag;
  bool Sixteen = BL.outBlock == 16;
  if (G == 1 && CG == C) {
    L.weightDims = {M, C, W.shape()[2], W.shape()[3]};
    if (BL.kernelInputBlock == BL.outBlock)
      WTag = Sixteen ? Tag::ABcd16b16a : Tag::ABcd8b8a; // OIhw8i8o
    else if (BL.kernelInputBlock == 1)
      WTag = Sixteen ? Tag::Abcd16a : Tag::Abcd8a; // Oihw8o
  } else if (G == C && G == M && CG == 1 && BL.kernelInputBlock == 1) {
    L.weightDims = {G, 1, 1, W.shape()[2], W.shape()[3]};
    WTag = Sixteen ? Tag::Abcde16a : Tag::Abcde8a; // Goihw8g
  }
  if (!WTag || (BL.outBlock != 8 && BL.outBlock != 16))
    return std::nullopt;
  L.src = memory::desc(L.srcDims, memory::data_type::f32, *SrcTag);
  L.dst = memory::desc(L.dstDims, memory::data_type::f32, *DstTag);
  L.weights = memory::desc(L.weightDims, memory::data_type::f32, *WTag);
  L.outToDst = {0, 1, 2, 3, 1};
  L.blockedDst = L.dst;
  L.key.words = {1, BL.dataBlock, BL.kernelInputBlock, BL.outBlock};
  return L;
}

/// blockedConvBuffers, kept per thread by the shapes and layout it depends
/// on: building the three descriptors was a fifth of a small conv call.
const std::optional<ConvBuffers> &
cachedBlockedConvBuffers(const Tensor &X, const Tensor &W, const Tensor &Out,
                         int64_t G, const BlockedConvLayout &BL) {
  thread_local std::unordered_map<PrimitiveKey, std::optional<ConvBuffers>,
                                  PrimitiveKeyHash>
      Cache;
  thread_local PrimitiveKey Key;
  Key.clear();
  for (const Tensor *T : {&X, &W, &Out})
    Key.addList(T->shape().data(), T->shape().size());
  Key.add(G);
  Key.add(BL.dataBlock);
  Key.add(BL.kernelInputBlock);
  Key.add(BL.outBlock);
  auto It = Cache.find(Key);
  if (It != Cache.end())
    return It->second;
  if (Cache.size() >= 1024) // a model has far fewer convs
    Cache.clear();
  return Cache.emplace(Key, blockedConvBuffers(X, W, Out, G, BL)).first->second;
}

/// Multiply-adds from which a blocked conv splits (each part takes a
/// quarter of it at least). 2^20 left mobilenet_v2's depthwise convs at
/// 14 x 14 and 7 x 7 on one thread, and on a Sapphire Rapids VM those ran
/// 1.2-1.5x slower at two threads than at one, reading what the other core
/// had written; with 2^18 they split (the model 4% faster at T = 2).
std::atomic<int64_t> PartsMinWork{int64_t(1) << 18};
std::atomic<int64_t> PartsCalls{0};

/// The part of T, broadcast against a blocked output [N, Mb, H, W, b], that
/// meets image Image's channel blocks [B0, B1): T sliced along those of the
/// two leading axes it does not broadcast, a contiguous range.
Tensor partOf(const Tensor &T, int64_t Image, int64_t B0, int64_t B1) {
  int64_t Shift = 5 - T.rank();
  Shape Sh = T.shape();
  int64_t Offset = 0, Stride = T.numel();
  for (int64_t Axis = 0; Axis < 2; ++Axis) {
    int64_t I = Axis - Shift; // T's axis aligned with the output's
    if (I < 0 || Sh[(size_t)I] == 1)
      continue;
    Stride /= Sh[(size_t)I];
    Offset += (Axis == 0 ? Image : B0) * Stride;
    Sh[(size_t)I] = Axis == 0 ? 1 : B1 - B0;
  }
  return viewOf(T, Offset, std::move(Sh));
}

/// A blocked conv split into parts over its images and ranges of output
/// channel blocks.
struct ConvParts {
  const Tensor &X, &W, *B;
  const ConvParams &P;
  const BlockedConvLayout &BL;
  const PostOps &Post;
  Tensor &Out;
  int64_t ranges; // of channel blocks per image

  /// Runs part Part: a one-thread oneDNN call on views of the buffers.
  bool run(int64_t Part) const {
    int64_t Mb = Out.shape()[1], Image = Part / ranges, R = Part % ranges;
    int64_t B0 = Mb * R / ranges, B1 = Mb * (R + 1) / ranges;
    bool Depthwise = P.group > 1;
    // The weights lead with the output blocks ([Mb, ...]); a depthwise
    // part reads only its own input channels.
    Shape WShape = W.shape(), XShape = X.shape();
    WShape[0] = B1 - B0;
    XShape[0] = 1;
    int64_t XImage = X.numel() / X.shape()[0], XOffset = Image * XImage;
    if (Depthwise) {
      XShape[1] = B1 - B0;
      XOffset += B0 * (XImage / X.shape()[1]);
    }
    Tensor XPart = viewOf(X, XOffset, XShape);
    Tensor WPart = viewOf(W, B0 * (W.numel() / Mb), WShape);
    Tensor OutPart = partOf(Out, Image, B0, B1), BPart;
    if (B)
      BPart = viewOf(*B, B0 * BL.outBlock, {(B1 - B0) * BL.outBlock});
    PostOps PostPart = Post;
    for (PostOp &Op : PostPart)
      if (Op.isBinary())
        Op.operand = partOf(Op.operand, Image, B0, B1);
    ConvParams PPart = P;
    if (Depthwise)
      PPart.group = (B1 - B0) * BL.outBlock;
    WorkScope OneThread(0);
    const std::optional<ConvBuffers> &L =
        cachedBlockedConvBuffers(XPart, WPart, OutPart, PPart.group, BL);
    return L && runConv(XPart, WPart, B ? &BPart : nullptr, PPart, PostPart,
                        OutPart, *L, isPerChannelBlocked);
  }
};

/// A blocked conv on several threads runs as parts, each an ordinary
/// one-thread oneDNN call, taken by the runtime's pool threads as they
/// come. With batch 1 in NCHW{b}c a part's output, weights, bias and
/// post-op operands are contiguous ranges, so the parts need no copies.
/// oneDNN's own OpenMP region splits a conv statically, so its caller waits
/// for a worker that sleeps (OMP_WAIT_POLICY=passive; a shared machine):
/// mobilenet_v2's convs took 1.3-1.6x as long on two threads as on one.
/// Here a late worker finds no part left. Returns nullopt when the conv
/// does not split (one thread, too little work, too few blocks), else
/// whether oneDNN ran every part.
std::optional<bool> runConvInParts(const Tensor &X, const Tensor &W,
                                   const Tensor *B, const ConvParams &P,
                                   const BlockedConvLayout &BL,
                                   const PostOps &Post, Tensor &Out) {
  int64_t Threads = numThreads(), MinWork = convPartsMinWork();
  int64_t N = Out.shape()[0], Mb = Out.shape()[1];
  if (Threads < 2 || Out.numel() == 0 || W.numel() == 0)
    return std::nullopt;
  int64_t Work = Out.numel() * (W.numel() / (Mb * BL.outBlock));
  bool Depthwise = P.group > 1;
  if (Work < MinWork || (Depthwise && BL.dataBlock != BL.outBlock) ||
      (B && B->numel() != Mb * BL.outBlock))
    return std::nullopt;
  // Up to two parts per thread, each with a quarter of MinWork at least,
  // cut so that no thread idles while another runs a part
  // (balancedPartRanges). A group-1 part re-reads the whole input: it has
  // two channel blocks at least, or one when the input is no larger than a
  // block of the output (an image's few channels: the stem conv of
  // mobilenet_v2, 3 -> 32, had not split at all).
  int64_t BlockElems = Out.numel() / (N * Mb);
  bool OneBlock = Depthwise || X.numel() / N <= BlockElems;
  int64_t MaxRanges =
      std::min<int64_t>(Mb / (OneBlock ? 1 : std::min<int64_t>(2, Mb)),
                        (2 * Threads + N - 1) / N);
  if (MinWork > 0)
    MaxRanges = std::min(MaxRanges, Work / N / (MinWork / 4 + 1));
  int64_t Ranges = balancedPartRanges(Mb, N, Threads, MaxRanges);
  if (N * Ranges < 2)
    return std::nullopt;
  PartsCalls.fetch_add(1, std::memory_order_relaxed);
  ConvParts Parts{X, W, B, P, BL, Post, Out, Ranges};
  return runPartsOnPool(N * Ranges,
                        [&](int64_t Part) { return Parts.run(Part); });
}

/// Weight-copy tag of a conv's weights restricted to input channel blocks.
constexpr int64_t kInputBlocksTag = 0x696e626c6b; // "inblk"

/// W (OIhw{i}i{o}o, [Ob, Ib, KH, KW, i, o]) restricted to the input channel
/// blocks [I0, I1), a copy; constant weights are copied once and cached.
Tensor inputBlocksOf(const Tensor &W, int64_t I0, int64_t I1, bool Constant) {
  const Shape &S = W.shape();
  int64_t Ob = S[0], Ib = S[1], Inner = W.numel() / (Ob * Ib), Span = I1 - I0;
  int64_t Count = Ob * Span * Inner;
  auto Make = [&] {
    memory M(plainDesc({Count}), engine());
    auto *To = static_cast<float *>(M.get_data_handle());
    const float *From = W.data<float>();
    for (int64_t O = 0; O < Ob; ++O)
      std::memcpy(To + O * Span * Inner, From + (O * Ib + I0) * Inner,
                  (size_t)(Span * Inner) * sizeof(float));
    return M;
  };
  memory M;
  if (Constant) {
    PrimitiveKey Form;
    Form.add(kInputBlocksTag);
    Form.add(I0);
    Form.add(I1);
    M = cachedWeightCopy(W, Form, Make);
  } else {
    M = Make();
  }
  Shape Sh = S;
  Sh[1] = Span;
  return Tensor(
      Storage::wrap(M.get_data_handle(), (size_t)Count * sizeof(float), [M] {}),
      0, std::move(Sh), DType::Float32);
}

/// A batch-1 group-1 blocked conv split over its input channel blocks:
/// part P convolves input blocks [I0, I1) with those rows of the weights
/// into a buffer of its own (part 0: into Out, with the bias and the tail's
/// adds), and the parts' sums are added, then the tail's activations run.
struct ConvInputParts {
  const Tensor &X, &W, *B;
  const ConvParams &P;
  const BlockedConvLayout &BL;
  const PostOps &Adds; // the tail's leading adds (part 0)
  Tensor &Out;
  std::vector<Tensor> &Partial; // parts 1..: their sums
  int64_t parts;

  bool run(int64_t Part) const {
    int64_t Ib = X.shape()[1], I0 = Ib * Part / parts,
            I1 = Ib * (Part + 1) / parts;
    Shape XShape = X.shape();
    XShape[1] = I1 - I0;
    Tensor XPart = viewOf(X, I0 * (X.numel() / Ib), XShape);
    Tensor WPart = inputBlocksOf(W, I0, I1, P.constantWeights);
    Tensor &Dst = Part == 0 ? Out : Partial[(size_t)Part];
    WorkScope OneThread(0);
    const std::optional<ConvBuffers> &L =
        cachedBlockedConvBuffers(XPart, WPart, Dst, 1, BL);
    return L &&
           runConv(XPart, WPart, Part == 0 ? B : nullptr, P,
                   Part == 0 ? Adds : PostOps(), Dst, *L, isPerChannelBlocked);
  }
};

/// Out += every partial sum, over a range of elements.
struct AddPartials {
  Tensor &Out;
  const std::vector<Tensor> &Partial;
};

/// Multiply-adds per output element below which a conv does not split its
/// input channels: each part writes and the sum reads the whole output, as
/// much memory traffic as the parts save in arithmetic (mobilenet_v2's
/// 32 -> 16 1x1 conv at 112 x 112 took 0.26 ms in two parts, 0.16 in one).
constexpr int64_t kMinInputSplitReduction = 64;

/// A blocked conv whose output has too few channel blocks to split among
/// the threads (mobilenet_v2's projections to 24 and 32 channels: 2-3
/// blocks from 9-18) splits its input channels instead, when the batch is
/// one and the tail is adds then activations: each part reads only its
/// share of the input, and the extra buffers are the output's small size.
/// Nullopt when it does not split that way, else whether oneDNN ran every
/// part.
std::optional<bool> runConvOverInputs(const Tensor &X, const Tensor &W,
                                      const Tensor *B, const ConvParams &P,
                                      const BlockedConvLayout &BL,
                                      const PostOps &Post, Tensor &Out) {
  int64_t Threads = numThreads(), MinWork = convPartsMinWork();
  if (Threads < 2 || P.group != 1 || X.shape()[0] != 1 || BL.dataBlock == 1 ||
      BL.kernelInputBlock != BL.dataBlock || Out.numel() == 0)
    return std::nullopt;
  int64_t Ib = X.shape()[1], Mb = Out.shape()[1];
  int64_t Reduction = W.numel() / (Mb * BL.outBlock); // per output element
  int64_t Parts = std::min<int64_t>(
      {Threads, Ib, MinWork > 0 ? Out.numel() * Reduction / MinWork : Threads});
  if (Parts < 2 || Reduction < kMinInputSplitReduction ||
      (B && B->numel() != Mb * BL.outBlock))
    return std::nullopt;
  PostOps Adds, Activations;
  for (const PostOp &Op : Post) {
    if (Op.kind == PostOp::Kind::Multiply ||
        (Op.kind == PostOp::Kind::Add && !Activations.empty()))
      return std::nullopt; // does not distribute over the parts' sums
    (Op.isBinary() ? Adds : Activations).push_back(Op);
  }
  // The partial sums live in this thread's buffer, kept between calls (a
  // fresh one of this size would be mapped and faulted in each time).
  thread_local Tensor Buffer;
  int64_t Elems = Out.numel() * (Parts - 1);
  if (!Buffer.defined() || Buffer.numel() < Elems)
    Buffer = Tensor::empty({Elems}, DType::Float32);
  std::vector<Tensor> Partial((size_t)Parts);
  for (int64_t I = 1; I < Parts; ++I)
    Partial[(size_t)I] = viewOf(Buffer, (I - 1) * Out.numel(), Out.shape());
  PartsCalls.fetch_add(1, std::memory_order_relaxed);
  ConvInputParts Run{X, W, B, P, BL, Adds, Out, Partial, Parts};
  if (!runPartsOnPool(Parts, [&](int64_t Part) { return Run.run(Part); }))
    return false;
  AddPartials Sum{Out, Partial};
  kernelRuntime().parallelFor(
      Out.numel(), int64_t(1) << 14, &Sum,
      [](void *Closure, int64_t Begin, int64_t End) {
        auto &Sum = *static_cast<AddPartials *>(Closure);
        float *O = Sum.Out.data<float>();
        for (size_t I = 1; I < Sum.Partial.size(); ++I) {
          const float *S = Sum.Partial[I].data<float>();
          for (int64_t E = Begin; E < End; ++E)
            O[E] += S[E];
        }
      });
  if (!Activations.empty())
    applyPostOpsReference(Out, Activations);
  return true;
}

} // namespace

int64_t balancedPartRanges(int64_t Mb, int64_t N, int64_t Threads,
                           int64_t MaxRanges) {
  // Simulating every cut costs O(MaxRanges^2 * N * Threads): remembered
  // per thread (a model has a few dozen shapes).
  thread_local std::map<std::array<int64_t, 4>, int64_t> Known;
  std::array<int64_t, 4> Key{Mb, N, Threads, MaxRanges};
  if (auto It = Known.find(Key); It != Known.end())
    return It->second;
  if (Known.size() >= 1024)
    Known.clear();
  int64_t Best = 1, BestSpan = INT64_MAX;
  std::vector<int64_t> Busy;
  for (int64_t Ranges = 1; Ranges <= std::min(MaxRanges, Mb); ++Ranges) {
    Busy.assign((size_t)std::max<int64_t>(Threads, 1), 0);
    for (int64_t Image = 0; Image < N; ++Image)
      for (int64_t R = 0; R < Ranges; ++R)
        *std::min_element(Busy.begin(), Busy.end()) +=
            Mb * (R + 1) / Ranges - Mb * R / Ranges;
    int64_t Span = *std::max_element(Busy.begin(), Busy.end());
    if (Span <= BestSpan) {
      Best = Ranges;
      BestSpan = Span;
    }
  }
  return Known[Key] = Best;
}

int64_t convPartsMinWork() {
  return PartsMinWork.load(std::memory_order_relaxed);
}
void setConvPartsMinWork(int64_t Work) { PartsMinWork.store(Work); }
int64_t convPartsCalls() { return PartsCalls.load(); }

bool dnnlConvBlocked(const Tensor &X, const Tensor &W, const Tensor *B,
                     const ConvParams &P, const BlockedConvLayout &BL,
                     const PostOps &Post, Tensor &Out) {
  if (!dnnlEnabled() || !allFloat32({&X, &W, B, &Out}))
    return false;
  if (X.rank() != 5 || W.rank() != 6 || Out.rank() != 5 || P.group < 1 ||
      X.shape()[4] != BL.dataBlock || Out.shape()[4] != BL.outBlock ||
      W.shape()[4] != BL.kernelInputBlock || W.shape()[5] != BL.outBlock)
    return false;
  if (winogradConvBlocked(X, W, B, P, BL, Post, Out) ||
      directConvBlocked(X, W, B, P, BL, Post, Out))
    return true;
  if (std::optional<bool> Ran = runConvInParts(X, W, B, P, BL, Post, Out))
    return *Ran;
  if (std::optional<bool> Ran = runConvOverInputs(X, W, B, P, BL, Post, Out))
    return *Ran;
  const std::optional<ConvBuffers> &L =
      cachedBlockedConvBuffers(X, W, Out, P.group, BL);
  return L && runConv(X, W, B, P, Post, Out, *L, isPerChannelBlocked);
}

} // namespace rivet
