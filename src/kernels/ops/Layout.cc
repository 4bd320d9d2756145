//===- Layout.cc - Layout transforms and the blocked convolution ----------===//
//
// Reference kernels for the operators AlterOpLayout introduces; the layout
// grammar (NCHW8c is [N, C/8, H, W, 8]) is in kernels/Layout.h.
// conv2d_nchwc is conv on blocked tensors; its reference semantics is
// "unblock, conv, reblock". No oneDNN here (the VM's library kernels use it:
// dnnl/DnnlLibraryKernels.cc).
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

/// True when Src and Dst order the elements alike: the same axes once the
/// blocks of 1 (NCHW1c) are dropped.
bool sameOrder(const Layout &Src, const Layout &Dst) {
  auto Strip = [](const Layout &L) {
    std::vector<std::pair<char, int64_t>> R;
    for (const LayoutAxis &A : L.Axes)
      if (A.Factor != 1)
        R.push_back({A.Primal, A.Factor});
    return R;
  };
  return Strip(Src) == Strip(Dst);
}

/// Copies Count elements of Size bytes from S at the offsets Off[0..Count)
/// to D, contiguously; 4-byte elements (float32) get a typed loop.
void gather(char *D, const char *S, const int64_t *Off, int64_t Count,
            size_t Size) {
  if (Size == 4) {
    for (int64_t J = 0; J < Count; ++J) {
      uint32_t V;
      std::memcpy(&V, S + (size_t)Off[J] * 4, 4);
      std::memcpy(D + (size_t)J * 4, &V, 4);
    }
    return;
  }
  for (int64_t J = 0; J < Count; ++J)
    std::memcpy(D + (size_t)J * Size, S + (size_t)Off[J] * Size, Size);
}

/// Copies In (layout Src) into the preallocated Out (layout Dst). A primal
/// coordinate is outer * block + inner in either layout; its source offset
/// comes from a table per primal axis, so each element costs a few adds.
/// The innermost output axis is gathered through a precomputed offset row.
void transformInto(const Tensor &In, const Layout &Src, const Layout &Dst,
                   Tensor &Out) {
  size_t ESize = dtypeSize(In.dtype());
  const char *S = static_cast<const char *>(In.rawData());
  char *D = static_cast<char *>(Out.rawData());
  int64_t Total = Out.numel();
  if (Total == 0)
    return;
  if (sameOrder(Src, Dst)) {
    std::memcpy(D, S, (size_t)Total * ESize);
    return;
  }
  std::vector<int64_t> SrcStrides = contiguousStrides(In.shape());
  std::array<int64_t, 26> Extent =
      primalExtents("layout_transform", In.shape(), Src);
  // Per primal axis: the source offset of each coordinate.
  std::array<std::vector<int64_t>, 26> OffsetOf;
  for (int P = 0; P < 26; ++P) {
    if (Src.PrimalPos[P] < 0)
      continue;
    int64_t Outer = SrcStrides[(size_t)Src.PrimalPos[P]];
    int64_t Inner =
        Src.BlockPos[P] >= 0 ? SrcStrides[(size_t)Src.BlockPos[P]] : 0;
    int64_t B = Src.BlockOf[P];
    OffsetOf[P].resize((size_t)Extent[P]);
    for (int64_t C = 0; C < Extent[P]; ++C)
      OffsetOf[P][(size_t)C] = C / B * Outer + C % B * Inner;
  }
  const Shape &OS = Out.shape();
  size_t R = OS.size();
  // How far each output axis moves its primal coordinate per step.
  std::vector<int64_t> Step(R);
  for (size_t I = 0; I < R; ++I) {
    const LayoutAxis &A = Dst.Axes[I];
    Step[I] = A.Factor == 0 ? Dst.BlockOf[A.Primal - 'A'] : 1;
  }
  int LastP = Dst.Axes[R - 1].Primal - 'A';
  int64_t Row = OS[R - 1];
  std::vector<int64_t> RowOff((size_t)Row), Off((size_t)Row);
  for (int64_t J = 0; J < Row; ++J)
    RowOff[(size_t)J] = J * Step[R - 1];
  std::vector<int64_t> Idx(R, 0);
  std::array<int64_t, 26> Coord{};
  for (int64_t O = 0; O < Total; O += Row) {
    Coord.fill(0);
    for (size_t I = 0; I + 1 < R; ++I)
      Coord[Dst.Axes[I].Primal - 'A'] += Idx[I] * Step[I];
    int64_t Base = 0;
    for (int P = 0; P < 26; ++P)
      if (P != LastP && Src.PrimalPos[P] >= 0)
        Base += OffsetOf[P][(size_t)Coord[P]];
    const std::vector<int64_t> &Last = OffsetOf[LastP];
    for (int64_t J = 0; J < Row; ++J)
      Off[(size_t)J] = Base + Last[(size_t)(Coord[LastP] + RowOff[(size_t)J])];
    gather(D + (size_t)O * ESize, S, Off.data(), Row, ESize);
    for (size_t I = R - 1; I-- > 0;) {
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

const BlockedConvLayouts &convLayouts(const Attrs &A) {
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
  const BlockedConvLayouts &L = convLayouts(A);
  std::vector<Tensor> Plain = {
      Tensor::meta(transformedShape(Op, In[0].shape(), L.Data, L.PlainData),
                   In[0].dtype()),
      Tensor::meta(transformedShape(Op, In[1].shape(), L.Kernel, L.PlainKernel),
                   In[1].dtype())};
  if (In.size() == 3)
    Plain.push_back(In[2]);
  // conv's shape function reads only its own attributes, so A serves as
  // they are (no copy without the layouts on every call).
  std::vector<TensorMeta> R =
      KernelRegistry::global().get("conv").shapeFn(Plain, A);
  R[0].shape = transformedShape(Op, R[0].shape, L.PlainData, L.Out);
  return R;
}

void conv2dNchwcKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                       const Attrs &A) {
  const char *Op = "conv2d_nchwc";
  const BlockedConvLayouts &L = convLayouts(A);
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

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS("layout_transform",
                     {{"src_layout", AttrKind::String, true,
                       "the layout of x (e.g. NCHW, NCHW8c)"},
                      {"dst_layout", AttrKind::String, true,
                       "the layout of the result"}});
RIVET_REGISTER_ATTRS("conv2d_nchwc", [] {
  std::vector<AttrSpec> S = convWindowAttrs();
  S.insert(S.end(), {{"data_layout", AttrKind::String, true,
                      "the layout of x: NCHW<i>c"},
                     {"kernel_layout", AttrKind::String, true,
                      "the layout of w: OIHW<k>i<o>o"},
                     {"out_layout", AttrKind::String, true,
                      "the layout of the result: NCHW<o>c"}});
  return S;
}());

} // namespace rivet::kernels
