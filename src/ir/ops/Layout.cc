//===- Layout.cc - Layout transforms and the blocked convolution ----------===//
//
// Type relations of the operators AlterOpLayout introduces, and of the
// blocked conv's one-call oneDNN form the VM compiler makes of it. The layout
// grammar (NCHW8c is [N, C/8, H, W, 8]) is kernels/Layout.h, shared with the
// reference kernels.
//
//===----------------------------------------------------------------------===//
#include "kernels/Layout.h"
#include "ir/ops/RelationUtil.h"
#include "kernels/ConvChainAttrs.h"
#include "kernels/PostOpAttrs.h"

#include <array>

namespace rivet::ir {

namespace {

/// The type of X (argument Arg, in layout Src) in layout Dst. An unblocked
/// axis keeps its (possibly symbolic) extent; a blocked one is known when
/// the extents it comes from are constants.
Type transformType(std::string_view Op, const TensorTypeNode &X, size_t Arg,
                   const Layout &Src, const Layout &Dst) {
  checkConvertible(Op, Src, Dst);
  std::array<Dim, 26> Ext;
  if (X.shape) {
    if (X.shape->size() != Src.rank())
      failArg(Arg, "{}: layout '{}' needs rank {}, got {}", Op, Src.Text,
              Src.rank(), typeStr(X));
    for (size_t I = 0; I < Src.rank(); ++I) {
      auto [P, F] = Src.Axes[I];
      const Dim &D = (*X.shape)[I];
      int64_t Block = Src.BlockOf[P - 'A'];
      if (F != 0) {
        if (D.isConst() && D.value != F)
          failArg(Arg, "{}: axis {} of {} is the block {}{} and must be {}", Op,
                  I, typeStr(X), F, char(P - 'A' + 'a'), F);
      } else if (Block == 1) {
        Ext[P - 'A'] = D;
      } else {
        Ext[P - 'A'] =
            D.isConst() ? Dim::constant(D.value * Block) : Dim::any();
      }
    }
  }
  std::vector<Dim> Out;
  for (auto [P, F] : Dst.Axes) {
    int64_t Block = Dst.BlockOf[P - 'A'];
    const Dim &E = Ext[P - 'A'];
    if (F != 0) {
      Out.push_back(Dim::constant(F));
    } else if (Block == 1) {
      Out.push_back(E);
    } else if (E.isConst()) {
      if (E.value % Block != 0)
        failArg(Arg,
                "{}: axis {} of {} has extent {}, which the block {} of "
                "layout '{}' does not divide",
                Op, P, typeStr(X), E.value, Block, Dst.Text);
      Out.push_back(Dim::constant(E.value / Block));
    } else {
      Out.push_back(Dim::any());
    }
  }
  return std::make_shared<TensorTypeNode>(Out, X.dtype);
}

Type layoutTransformRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "layout_transform";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  Layout Src = parseLayout(Op, *optString(A, "src_layout"));
  Layout Dst = parseLayout(Op, *optString(A, "dst_layout"));
  if (anyUndecided(Args))
    return nullptr;
  return transformType(Op, tensorArg(Op, Args, 0), 0, Src, Dst);
}

Type conv2dNchwcRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "conv2d_nchwc";
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (x, w[, b]), got {}", Op, Args.size());
  const BlockedConvLayouts &L = parseBlockedConvLayouts(
      Op, *optString(A, "data_layout"), *optString(A, "kernel_layout"),
      *optString(A, "out_layout"));
  if (anyUndecided(Args))
    return nullptr;
  std::vector<Type> Plain = {
      transformType(Op, tensorArg(Op, Args, 0), 0, L.Data, L.PlainData),
      transformType(Op, tensorArg(Op, Args, 1), 1, L.Kernel, L.PlainKernel)};
  if (Args.size() == 3)
    Plain.push_back(Args[2]);
  // The blocked conv is conv on the unblocked tensors: its relation decides
  // the window arithmetic, so the two cannot drift apart.
  Type R;
  try {
    R = OpRegistry::global().get("conv").relation(Plain, plainConvAttrs(A));
  } catch (const ArgError &E) {
    throw ArgError(E.ArgIndex, fmt::format("{} (on the unblocked tensors): {}",
                                           Op, E.what()));
  }
  const auto *RT = R ? R->as<TensorTypeNode>() : nullptr;
  if (!RT)
    return R;
  return transformType(Op, *RT, 0, L.PlainData, L.Out);
}

/// conv2d_nchwc's relation on the leading arguments; the trailing ones are
/// the post-ops' operands (see FusedAnchors.cc for the unblocked anchors).
Type conv2dNchwcFusedRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "dnnl.conv2d_nchwc_fused";
  int64_t NumOperands = countPostOpOperands(A);
  if (NumOperands < 0 || (size_t)NumOperands > Args.size())
    fail("{}: {} post-op operands named, {} arguments given", Op, NumOperands,
         Args.size());
  std::vector<Type> AnchorArgs(Args.begin(), Args.end() - NumOperands);
  Attrs AnchorAttrs, Stripped = withoutPostOpAttrs(A);
  for (const auto &[Name, V] : Stripped.items())
    if (Name != "weights_constant")
      AnchorAttrs.set(Name, V);
  return conv2dNchwcRel(AnchorArgs, AnchorAttrs);
}

/// The 1x1 call's relation, then the depthwise call's on its result
/// (kernels/ConvChainAttrs.h).
Type conv2dNchwcPwDwRel(const std::vector<Type> &Args, const Attrs &A) {
  Attrs First, Second;
  int64_t FirstInputs = 0;
  if (!splitPointwiseDepthwiseAttrs(A, First, FirstInputs, Second) ||
      FirstInputs < 2 || (size_t)FirstInputs + 1 > Args.size())
    fail("{}: expected the 1x1 conv's inputs ('pw_inputs' of them), then "
         "the depthwise conv's weights and operands; got {} arguments",
         kPointwiseDepthwiseOp, Args.size());
  std::vector<Type> Pointwise(Args.begin(), Args.begin() + FirstInputs);
  Type Mid = conv2dNchwcFusedRel(Pointwise, First);
  if (!Mid)
    return Mid;
  std::vector<Type> Depthwise{Mid};
  Depthwise.insert(Depthwise.end(), Args.begin() + FirstInputs, Args.end());
  return conv2dNchwcFusedRel(Depthwise, Second);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "layout_transform",
    "Copies x from src_layout to dst_layout, e.g. NCHW to the blocked NCHW8c "
    "[N, C/8, H, W, 8] or OIHW to OIHW8i8o; a blocked extent must divide.",
    1, layoutTransformRel, FusionPattern::Injective});
RIVET_REGISTER_OP(OpInfo{
    "conv2d_nchwc",
    "2-d convolution on blocked tensors: x[N, C/i, H, W, i] (NCHW<i>c), "
    "w[M/o, C/group/k, KH, KW, k, o] (OIHW<k>i<o>o; k = i, or 1 for grouped "
    "convs), optional bias b[M]; result NCHW<o>c. Same windows and groups as "
    "conv.",
    -1, conv2dNchwcRel, FusionPattern::OutElementwiseFusable});
RIVET_REGISTER_OP(OpInfo{
    "dnnl.conv2d_nchwc_fused",
    "conv2d_nchwc followed by its elementwise tail as oneDNN post-ops (VM "
    "compiler only): x, w[, b], then the binary post-ops' operands.",
    -1, conv2dNchwcFusedRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    kPointwiseDepthwiseOp,
    "A 1x1 dnnl.conv2d_nchwc_fused call and the depthwise one that alone "
    "reads its result, as one call (VM compiler only): the first call's "
    "inputs, then the second's after its first.",
    -1, conv2dNchwcPwDwRel, FusionPattern::Opaque});

} // namespace rivet::ir
