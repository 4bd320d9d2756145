//===- DnnlConv.cc - Convolution on oneDNN --------------------------------===//
//
// Direct convolution with oneDNN choosing the layouts (blocked nChw8c-style
// activations and weights on AVX2/AVX-512): activations are reordered in
// and out around each call, weights once per constant buffer. When the
// blocked form cannot take the post-ops, plain layouts are tried. A residual
// add of the output's shape becomes the `sum` post-op (see PostOpPlan).
//
//===----------------------------------------------------------------------===//
#include "kernels/dnnl/DnnlAnchors.h"

#include "kernels/dnnl/DnnlConfig.h"
#include "kernels/dnnl/DnnlContext.h"

#include <fmt/format.h>

#include <string_view>

namespace rivet {

using namespace dnnlctx;
using dnnl::memory;

namespace {

/// Whether T broadcasts against a conv output of rank Rank along the
/// channel axis only, holding one value per output channel (M of them,
/// contiguous): a folded batch-norm shift, which oneDNN takes as the bias.
bool isPerChannel(const Tensor &T, int64_t M, int64_t Rank) {
  if (T.numel() != M || T.rank() > Rank || T.rank() < Rank - 1)
    return false;
  int64_t C = T.rank() - (Rank - 1); // the channel axis of T
  for (int64_t I = 0; I < T.rank(); ++I)
    if (I != C && T.shape()[(size_t)I] != 1)
      return false;
  return true;
}

} // namespace

bool dnnlConv(const Tensor &X, const Tensor &W, const Tensor *B,
              const ConvParams &P, const PostOps &PostIn, Tensor &Out) {
  if (!dnnlEnabled() || !allFloat32({&X, &W, B, &Out}))
    return false;
  size_t Rank = (size_t)X.rank() - 2;
  if (X.rank() < 3 || X.rank() > 5 || W.rank() != X.rank() ||
      Out.rank() != X.rank() || P.strides.size() != Rank ||
      P.dilations.size() != Rank || P.padBegin.size() != Rank ||
      P.padEnd.size() != Rank || P.group < 1 || X.numel() == 0 ||
      Out.numel() == 0)
    return false;
  int64_t M = W.shape()[0], G = P.group;
  // A leading per-channel add becomes the bias: oneDNN's direct kernels
  // take `bias + sum + eltwise`, but not every `binary + sum` chain.
  PostOps Post = PostIn;
  if (!B && !Post.empty() && Post[0].kind == PostOp::Kind::Add &&
      allFloat32({&Post[0].operand}) &&
      isPerChannel(Post[0].operand, M, Out.rank())) {
    B = &PostIn[0].operand;
    Post.erase(Post.begin());
  }
  memory::dims SrcDims = toDims(X.shape()), DstDims = toDims(Out.shape());
  memory::dims WDims = toDims(W.shape());
  if (G > 1) {
    WDims[0] = M / G;
    WDims.insert(WDims.begin(), G);
  }
  memory::dims Strides(P.strides.begin(), P.strides.end()), Dil, PadL, PadR;
  for (size_t I = 0; I < Rank; ++I) {
    Dil.push_back(P.dilations[I] - 1);
    PadL.push_back(P.padBegin[I]);
    PadR.push_back(P.padEnd[I]);
  }
  std::vector<int> OutToDst(Out.shape().size());
  for (size_t I = 0; I < OutToDst.size(); ++I)
    OutToDst[I] = (int)I;
  std::optional<PostOpPlan> Plan =
      planPostOps(Post, Out.shape(), DstDims, OutToDst, /*AllowSum=*/true);
  if (!Plan)
    return false;
  memory::desc SrcPlain = plainDesc(SrcDims), DstPlain = plainDesc(DstDims),
               WPlain = plainDesc(WDims);
  memory::desc BiasDesc = B ? plainDesc({M}) : memory::desc();
  WorkScope Scope(Out.numel() * (W.numel() / std::max<int64_t>(M, 1)));
  std::string Key = fmt::format(
      "conv|{}|{}|{}|s{}|d{}|l{}|r{}|b{}|{}", fmt::join(SrcDims, "x"),
      fmt::join(WDims, "x"), fmt::join(DstDims, "x"), fmt::join(Strides, ","),
      fmt::join(Dil, ","), fmt::join(PadL, ","), fmt::join(PadR, ","),
      B != nullptr, Plan->key);
  auto Prim = findPrimitive(Key, [&] {
    dnnl::primitive_attr Attr = baseAttr();
    Attr.set_post_ops(Plan->ops);
    memory::desc Any(SrcDims, memory::data_type::f32, memory::format_tag::any);
    memory::desc AnyW(WDims, memory::data_type::f32, memory::format_tag::any);
    memory::desc AnyDst(DstDims, memory::data_type::f32,
                        memory::format_tag::any);
    // Blocked layouts first (the fast direct kernels), then plain.
    for (bool Blocked : {true, false}) {
      try {
        dnnl::convolution_forward::desc D(
            dnnl::prop_kind::forward_inference,
            dnnl::algorithm::convolution_direct, Blocked ? Any : SrcPlain, AnyW,
            BiasDesc, Blocked ? AnyDst : DstPlain, Strides, Dil, PadL, PadR);
        dnnl::convolution_forward::primitive_desc PD(D, Attr, engine());
        // With `any` layouts oneDNN may settle on its reference kernel
        // (when no optimized one takes these post-ops); the plain-layout
        // gemm kernels are far faster than that.
        if (Blocked && std::string_view(PD.impl_info_str()).starts_with("ref"))
          continue;
        CachedPrimitive C;
        C.prim = dnnl::convolution_forward(PD);
        C.src = PD.src_desc();
        C.weights = PD.weights_desc();
        C.dst = PD.dst_desc();
        C.scratchpad = PD.scratchpad_desc();
        return C;
      } catch (const dnnl::error &) {
        if (!Blocked)
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
    memory Src = wrap(X, SrcPlain);
    if (Prim->src != SrcPlain) {
      memory Blocked = threadScratch(Prim->src, 0);
      reorderInto(Src, Blocked);
      Src = Blocked;
    }
    memory Wts = weightsIn(W, WPlain, Prim->weights, P.constantWeights);
    memory OutMem = wrap(Out, DstPlain);
    bool PlainDst = Prim->dst == DstPlain;
    memory Dst = PlainDst ? OutMem : threadScratch(Prim->dst, 1);
    if (Plan->sumOperand) // the sum post-op adds what Dst holds
      reorderInto(wrap(*Plan->sumOperand, DstPlain), Dst);
    std::unordered_map<int, memory> Args{
        {DNNL_ARG_SRC, Src}, {DNNL_ARG_WEIGHTS, Wts}, {DNNL_ARG_DST, Dst}};
    if (B)
      Args[DNNL_ARG_BIAS] = wrap(*B, BiasDesc);
    addPostOpArgs(*Plan, Args);
    executePrimitive(*Prim, std::move(Args));
    if (!PlainDst)
      reorderInto(Dst, OutMem);
    S.wait();
  } catch (const dnnl::error &) {
    return false;
  }
  return true;
}

} // namespace rivet
