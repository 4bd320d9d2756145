//===- Layout.cc - Layout transforms and the blocked convolution ----------===//
//
// Reference kernels for the operators AlterOpLayout introduces; the layout
// grammar (NCHW8c is [N, C/8, H, W, 8]) is in kernels/Layout.h.
// conv2d_nchwc is conv on blocked tensors; its reference semantics is
// "unblock, conv, reblock".
//
//===----------------------------------------------------------------------===//
#include "kernels/Layout.h"
#include "kernels/ops/KernelUtil.h"

#include <array>
#include <cstring>

namespace rivet::kernels {
namespace {

/// The full extent of every primal axis of a tensor of shape In in layout
/// Src; checks the rank and the block extents.
std::array<int64_t, 26> primalExtents(const char *Op, const Shape &In,
                                      const Layout &Src) {
  if (In.size() != Src.rank())
    fail("{}: layout '{}' needs rank {}, got the shape {}", Op, Src.Text,
         Src.rank(), shapeToString(In));
  std::array<int64_t, 26> E{};
  for (size_t I = 0; I < Src.rank(); ++I) {
    const LayoutAxis &A = Src.Axes[I];
    if (A.Factor == 0)
      E[A.Primal - 'A'] = In[I] * Src.BlockOf[A.Primal - 'A'];
    else if (In[I] != A.Factor)
      fail("{}: axis {} of the shape {} is the block {}{} and must be {}", Op,
           I, shapeToString(In), A.Factor, char(A.Primal - 'A' + 'a'),
           A.Factor);
  }
  return E;
}

/// The shape of In (in layout Src) in layout Dst; every blocked axis must be
/// divisible by its block.
Shape transformedShape(const char *Op, const Shape &In, const Layout &Src,
                       const Layout &Dst) {
  checkConvertible(Op, Src, Dst);
  std::array<int64_t, 26> E = primalExtents(Op, In, Src);
  Shape Out;
  for (const LayoutAxis &A : Dst.Axes) {
    int64_t F = Dst.BlockOf[A.Primal - 'A'];
    if (A.Factor != 0) {
      Out.push_back(F);
      continue;
    }
    int64_t Ext = E[A.Primal - 'A'];
    if (Ext % F != 0)
      fail("{}: axis {} has extent {}, which the block {} of layout '{}' does "
           "not divide",
           Op, A.Primal, Ext, F, Dst.Text);
    Out.push_back(Ext / F);
  }
  return Out;
}

/// Copies In (layout Src) into the preallocated Out (layout Dst). Walks Out
/// in order; each primal coordinate is outer * block + inner in either
/// layout, so the source offset follows by a division per blocked axis.
void transformInto(const Tensor &In, const Layout &Src, const Layout &Dst,
                   Tensor &Out) {
  std::vector<int64_t> SrcStrides = contiguousStrides(In.shape());
  // Per primal axis: its stride in In as outer (per block) and inner.
  std::array<int64_t, 26> OuterStride{}, InnerStride{};
  for (int P = 0; P < 26; ++P) {
    if (Src.PrimalPos[P] < 0)
      continue;
    OuterStride[P] = SrcStrides[(size_t)Src.PrimalPos[P]];
    InnerStride[P] =
        Src.BlockPos[P] >= 0 ? SrcStrides[(size_t)Src.BlockPos[P]] : 0;
  }
  const Shape &OS = Out.shape();
  size_t R = OS.size();
  int64_t Total = Out.numel();
  size_t ESize = dtypeSize(In.dtype());
  const char *S = static_cast<const char *>(In.rawData());
  char *D = static_cast<char *>(Out.rawData());
  std::vector<int64_t> Idx(R, 0);
  std::array<int64_t, 26> Coord{};
  for (int64_t O = 0; O < Total; ++O) {
    Coord.fill(0);
    for (size_t I = 0; I < R; ++I) {
      const LayoutAxis &A = Dst.Axes[I];
      int P = A.Primal - 'A';
      Coord[P] += A.Factor == 0 ? Idx[I] * Dst.BlockOf[P] : Idx[I];
    }
    int64_t Off = 0;
    for (int P = 0; P < 26; ++P)
      if (Src.PrimalPos[P] >= 0)
        Off += Coord[P] / Src.BlockOf[P] * OuterStride[P] +
               Coord[P] % Src.BlockOf[P] * InnerStride[P];
    std::memcpy(D + (size_t)O * ESize, S + (size_t)Off * ESize, ESize);
    for (size_t I = R; I-- > 0;) {
      if (++Idx[I] < OS[I])
        break;
      Idx[I] = 0;
    }
  }
}

/// In (layout Src) as a new tensor in layout Dst.
Tensor transformed(const char *Op, const Tensor &In, const Layout &Src,
                   const Layout &Dst) {
  Tensor Out =
      Tensor::empty(transformedShape(Op, In.shape(), Src, Dst), In.dtype());
  transformInto(In, Src, Dst, Out);
  return Out;
}

//===----------------------------------------------------------------------===//
// layout_transform(x, src_layout, dst_layout)
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> layoutTransformShape(const std::vector<Tensor> &In,
                                             const Attrs &A) {
  const char *Op = "layout_transform";
  checkArity(Op, In, 1);
  Layout Src =
      parseLayout(Op, withOp(Op, [&] { return A.getString("src_layout"); }));
  Layout Dst =
      parseLayout(Op, withOp(Op, [&] { return A.getString("dst_layout"); }));
  return {{transformedShape(Op, In[0].shape(), Src, Dst), In[0].dtype()}};
}

void layoutTransformKernel(const std::vector<Tensor> &In,
                           std::vector<Tensor> &Out, const Attrs &A) {
  const char *Op = "layout_transform";
  Layout Src = parseLayout(Op, A.getString("src_layout"));
  Layout Dst = parseLayout(Op, A.getString("dst_layout"));
  transformInto(In[0], Src, Dst, Out[0]);
}

//===----------------------------------------------------------------------===//
// conv2d_nchwc(x[N, C/i, H, W, i], w[M/o, C/i, KH, KW, i, o][, b[M]])
//===----------------------------------------------------------------------===//

BlockedConvLayouts convLayouts(const Attrs &A) {
  const char *Op = "conv2d_nchwc";
  auto Get = [&](const char *Name) {
    return withOp(Op, [&] { return A.getString(Name); });
  };
  return parseBlockedConvLayouts(Op, Get("data_layout"), Get("kernel_layout"),
                                 Get("out_layout"));
}

std::vector<TensorMeta> conv2dNchwcShape(const std::vector<Tensor> &In,
                                         const Attrs &A) {
  const char *Op = "conv2d_nchwc";
  if (In.size() != 2 && In.size() != 3)
    fail("{}: expected 2 or 3 inputs (x, w[, b]), got {}", Op, In.size());
  BlockedConvLayouts L = convLayouts(A);
  std::vector<Tensor> Plain = {
      Tensor::meta(transformedShape(Op, In[0].shape(), L.Data, L.PlainData),
                   In[0].dtype()),
      Tensor::meta(transformedShape(Op, In[1].shape(), L.Kernel, L.PlainKernel),
                   In[1].dtype())};
  if (In.size() == 3)
    Plain.push_back(In[2]);
  std::vector<TensorMeta> R =
      KernelRegistry::global().get("conv").shapeFn(Plain, plainConvAttrs(A));
  R[0].shape = transformedShape(Op, R[0].shape, L.PlainData, L.Out);
  return R;
}

void conv2dNchwcKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                       const Attrs &A) {
  const char *Op = "conv2d_nchwc";
  BlockedConvLayouts L = convLayouts(A);
  std::vector<Tensor> Plain = {transformed(Op, In[0], L.Data, L.PlainData),
                               transformed(Op, In[1], L.Kernel, L.PlainKernel)};
  if (In.size() == 3)
    Plain.push_back(In[2]);
  std::vector<Tensor> R = invokeKernel(KernelRegistry::global().get("conv"),
                                       Plain, plainConvAttrs(A));
  transformInto(R[0], L.PlainData, L.Out, Out[0]);
}

} // namespace

RIVET_REGISTER_KERNEL("layout_transform", layoutTransformKernel,
                      layoutTransformShape, false);
RIVET_REGISTER_KERNEL("conv2d_nchwc", conv2dNchwcKernel, conv2dNchwcShape,
                      false);

} // namespace rivet::kernels
