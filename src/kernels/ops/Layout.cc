//===- Layout.cc - Layout transforms and the blocked convolution ----------===//
//
// Reference kernels for the operators AlterOpLayout introduces. A layout is a
// string of axes: an upper-case letter is a primal axis ('C'), a number and
// a lower-case letter is a block of that axis ('8c'), so NCHW8c is
// [N, C/8, H, W, 8] with channel c at (c / 8, c % 8). conv2d_nchwc is conv
// on blocked tensors; its reference semantics is "unblock, conv, reblock".
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <array>
#include <cstring>

namespace rivet::kernels {
namespace {

/// One axis of a layout: a primal axis (Factor 0) or a block of Factor
/// elements of the primal axis Primal.
struct LayoutAxis {
  char Primal;
  int64_t Factor;
};

/// A parsed layout string ("NCHW8c", "OIHW8i8o").
struct Layout {
  std::string Text;
  std::vector<LayoutAxis> Axes;
  /// Block factor of each primal axis ('A'..'Z'); 1 when it has no block.
  std::array<int64_t, 26> BlockOf{};
  /// Position of each primal axis and of its block (-1 when absent).
  std::array<int, 26> PrimalPos{}, BlockPos{};
  size_t rank() const { return Axes.size(); }
};

bool isUpper(char C) { return C >= 'A' && C <= 'Z'; }
bool isLower(char C) { return C >= 'a' && C <= 'z'; }
bool isDigit(char C) { return C >= '0' && C <= '9'; }

/// Parses Text; each primal axis appears once, each block at most once and
/// only for a primal axis of the same layout.
Layout parseLayout(const char *Op, const std::string &Text) {
  Layout L;
  L.Text = Text;
  L.BlockOf.fill(1);
  L.PrimalPos.fill(-1);
  L.BlockPos.fill(-1);
  for (size_t I = 0; I < Text.size();) {
    char C = Text[I];
    if (isUpper(C)) {
      if (L.PrimalPos[C - 'A'] >= 0)
        fail("{}: layout '{}' names axis {} twice", Op, Text, C);
      L.PrimalPos[C - 'A'] = (int)L.Axes.size();
      L.Axes.push_back({C, 0});
      ++I;
      continue;
    }
    if (!isDigit(C))
      fail("{}: layout '{}' has an unexpected character '{}' (expected an "
           "axis letter or a block such as 8c)",
           Op, Text, C);
    int64_t F = 0;
    for (; I < Text.size() && isDigit(Text[I]); ++I) {
      F = F * 10 + (Text[I] - '0');
      if (F > (int64_t(1) << 30))
        fail("{}: layout '{}' has a block factor that is too large", Op, Text);
    }
    if (I == Text.size() || !isLower(Text[I]))
      fail("{}: layout '{}': a block factor must be followed by a lower-case "
           "axis letter",
           Op, Text);
    char P = (char)(Text[I] - 'a' + 'A');
    if (F < 1)
      fail("{}: layout '{}' has a block factor of 0", Op, Text);
    if (L.BlockPos[P - 'A'] >= 0)
      fail("{}: layout '{}' blocks axis {} twice", Op, Text, P);
    L.BlockPos[P - 'A'] = (int)L.Axes.size();
    L.BlockOf[P - 'A'] = F;
    L.Axes.push_back({P, F});
    ++I;
  }
  if (L.Axes.empty())
    fail("{}: empty layout", Op);
  for (int P = 0; P < 26; ++P)
    if (L.BlockPos[P] >= 0 && L.PrimalPos[P] < 0)
      fail("{}: layout '{}' blocks axis {} but does not have it", Op, Text,
           char('A' + P));
  return L;
}

/// Checks that Src and Dst have the same primal axes.
void checkConvertible(const char *Op, const Layout &Src, const Layout &Dst) {
  for (int P = 0; P < 26; ++P)
    if ((Src.PrimalPos[P] >= 0) != (Dst.PrimalPos[P] >= 0))
      fail("{}: layouts '{}' and '{}' do not have the same axes", Op, Src.Text,
           Dst.Text);
}

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

/// The three layouts of a blocked convolution, checked to be
/// NCHW{i}c, OIHW{i}i{o}o and NCHW{o}c.
struct ConvLayouts {
  Layout Data, Kernel, Out;
  Layout PlainData, PlainKernel;
};

bool hasAxes(const Layout &L, const std::string &Letters) {
  if (L.rank() != Letters.size())
    return false;
  for (size_t I = 0; I < Letters.size(); ++I) {
    char C = Letters[I];
    const LayoutAxis &A = L.Axes[I];
    if (isUpper(C) ? (A.Factor != 0 || A.Primal != C)
                   : (A.Factor == 0 || A.Primal != C - 'a' + 'A'))
      return false;
  }
  return true;
}

ConvLayouts convLayouts(const Attrs &A) {
  const char *Op = "conv2d_nchwc";
  auto Get = [&](const char *Name) {
    return parseLayout(Op, withOp(Op, [&] { return A.getString(Name); }));
  };
  ConvLayouts L{Get("data_layout"), Get("kernel_layout"), Get("out_layout"),
                parseLayout(Op, "NCHW"), parseLayout(Op, "OIHW")};
  if (!hasAxes(L.Data, "NCHWc") || !hasAxes(L.Out, "NCHWc"))
    fail("{}: data_layout and out_layout must have the form NCHW<i>c, got "
         "'{}' and '{}'",
         Op, L.Data.Text, L.Out.Text);
  if (!hasAxes(L.Kernel, "OIHWio"))
    fail("{}: kernel_layout must have the form OIHW<i>i<o>o, got '{}'", Op,
         L.Kernel.Text);
  if (L.Kernel.BlockOf['I' - 'A'] != L.Data.BlockOf['C' - 'A'] ||
      L.Kernel.BlockOf['O' - 'A'] != L.Out.BlockOf['C' - 'A'])
    fail("{}: kernel_layout '{}' must block by the data_layout '{}' (input) "
         "and the out_layout '{}' (output)",
         Op, L.Kernel.Text, L.Data.Text, L.Out.Text);
  return L;
}

/// A's attributes without the layouts: the attributes of the plain conv.
Attrs plainConvAttrs(const Attrs &A) {
  Attrs R;
  for (const auto &[Name, V] : A.items())
    if (Name != "data_layout" && Name != "kernel_layout" &&
        Name != "out_layout")
      R.set(Name, V);
  return R;
}

std::vector<TensorMeta> conv2dNchwcShape(const std::vector<Tensor> &In,
                                         const Attrs &A) {
  const char *Op = "conv2d_nchwc";
  if (In.size() != 2 && In.size() != 3)
    fail("{}: expected 2 or 3 inputs (x, w[, b]), got {}", Op, In.size());
  ConvLayouts L = convLayouts(A);
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
  ConvLayouts L = convLayouts(A);
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
