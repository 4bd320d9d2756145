//===- Layout.cc - Layout transforms and the blocked convolution ----------===//
//
// Type relations of the operators AlterOpLayout introduces. A layout is a
// string of axes: an upper-case letter is a primal axis, a number and a
// lower-case letter a block of it, so NCHW8c is [N, C/8, H, W, 8]. Same
// grammar and arithmetic as the kernels in src/kernels/ops/Layout.cc.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

#include <array>

namespace rivet::ir {
namespace {

using K = AttrSpec::Kind;

/// A parsed layout string ("NCHW8c", "OIHW8i8o").
struct Layout {
  std::string Text;
  /// Per axis: the primal letter and the block factor (0: the primal axis).
  std::vector<std::pair<char, int64_t>> Axes;
  /// Block factor of each primal axis ('A'..'Z'); 1 when it has no block.
  std::array<int64_t, 26> BlockOf{};
  /// Position of each primal axis and of its block (-1 when absent).
  std::array<int, 26> PrimalPos{}, BlockPos{};
  size_t rank() const { return Axes.size(); }
};

bool isUpper(char C) { return C >= 'A' && C <= 'Z'; }
bool isLower(char C) { return C >= 'a' && C <= 'z'; }
bool isDigit(char C) { return C >= '0' && C <= '9'; }

Layout parseLayout(std::string_view Op, const std::string &Text) {
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

void checkConvertible(std::string_view Op, const Layout &Src,
                      const Layout &Dst) {
  for (int P = 0; P < 26; ++P)
    if ((Src.PrimalPos[P] >= 0) != (Dst.PrimalPos[P] >= 0))
      fail("{}: layouts '{}' and '{}' do not have the same axes", Op, Src.Text,
           Dst.Text);
}

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

/// True when L's axes spell Letters ('c' stands for any block of C).
bool hasAxes(const Layout &L, const std::string &Letters) {
  if (L.rank() != Letters.size())
    return false;
  for (size_t I = 0; I < Letters.size(); ++I) {
    char C = Letters[I];
    auto [P, F] = L.Axes[I];
    if (isUpper(C) ? (F != 0 || P != C) : (F == 0 || P != C - 'a' + 'A'))
      return false;
  }
  return true;
}

Type conv2dNchwcRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "conv2d_nchwc";
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (x, w[, b]), got {}", Op, Args.size());
  Layout Data = parseLayout(Op, *optString(A, "data_layout"));
  Layout Kernel = parseLayout(Op, *optString(A, "kernel_layout"));
  Layout Out = parseLayout(Op, *optString(A, "out_layout"));
  if (!hasAxes(Data, "NCHWc") || !hasAxes(Out, "NCHWc"))
    fail("{}: data_layout and out_layout must have the form NCHW<i>c, got "
         "'{}' and '{}'",
         Op, Data.Text, Out.Text);
  if (!hasAxes(Kernel, "OIHWio"))
    fail("{}: kernel_layout must have the form OIHW<i>i<o>o, got '{}'", Op,
         Kernel.Text);
  if (Kernel.BlockOf['I' - 'A'] != Data.BlockOf['C' - 'A'] ||
      Kernel.BlockOf['O' - 'A'] != Out.BlockOf['C' - 'A'])
    fail("{}: kernel_layout '{}' must block by the data_layout '{}' (input) "
         "and the out_layout '{}' (output)",
         Op, Kernel.Text, Data.Text, Out.Text);
  if (anyUndecided(Args))
    return nullptr;
  Layout PlainData = parseLayout(Op, "NCHW");
  std::vector<Type> Plain = {
      transformType(Op, tensorArg(Op, Args, 0), 0, Data, PlainData),
      transformType(Op, tensorArg(Op, Args, 1), 1, Kernel,
                    parseLayout(Op, "OIHW"))};
  if (Args.size() == 3)
    Plain.push_back(Args[2]);
  // The blocked conv is conv on the unblocked tensors: its relation decides
  // the window arithmetic, so the two cannot drift apart.
  Attrs ConvAttrs;
  for (const auto &[Name, V] : A.items())
    if (Name != "data_layout" && Name != "kernel_layout" &&
        Name != "out_layout")
      ConvAttrs.set(Name, V);
  Type R;
  try {
    R = OpRegistry::global().get("conv").relation(Plain, ConvAttrs);
  } catch (const ArgError &E) {
    throw ArgError(E.ArgIndex, fmt::format("{} (on the unblocked tensors): {}",
                                           Op, E.what()));
  }
  const auto *RT = R ? R->as<TensorTypeNode>() : nullptr;
  if (!RT)
    return R;
  return transformType(Op, *RT, 0, PlainData, Out);
}

const std::vector<AttrSpec> &conv2dNchwcSpecs() {
  static const std::vector<AttrSpec> S = {
      {"strides", K::Ints, false, "step per spatial axis (default 1s)"},
      {"pads", K::Ints, false,
       "begin pads then end pads per spatial axis (default 0s)"},
      {"dilations", K::Ints, false, "dilation per spatial axis (default 1s)"},
      {"auto_pad", K::String, false,
       "NOTSET (default), SAME_UPPER, SAME_LOWER or VALID"},
      {"kernel_shape", K::Ints, false,
       "window extents (taken from the weight)"},
      {"data_layout", K::String, true, "the layout of x: NCHW<i>c"},
      {"kernel_layout", K::String, true, "the layout of w: OIHW<i>i<o>o"},
      {"out_layout", K::String, true, "the layout of the result: NCHW<o>c"}};
  return S;
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "layout_transform",
    "Copies x from src_layout to dst_layout, e.g. NCHW to the blocked NCHW8c "
    "[N, C/8, H, W, 8] or OIHW to OIHW8i8o; a blocked extent must divide.",
    1,
    {{"src_layout", K::String, true, "the layout of x (e.g. NCHW, NCHW8c)"},
     {"dst_layout", K::String, true, "the layout of the result"}},
    layoutTransformRel,
    FusionPattern::Injective});
RIVET_REGISTER_OP(OpInfo{
    "conv2d_nchwc",
    "2-d convolution on blocked tensors: x[N, C/i, H, W, i] (NCHW<i>c), "
    "w[M/o, C/i, KH, KW, i, o] (OIHW<i>i<o>o), optional bias b[M]; result "
    "NCHW<o>c. Same windows as conv, group 1.",
    -1, conv2dNchwcSpecs(), conv2dNchwcRel,
    FusionPattern::OutElementwiseFusable});

} // namespace rivet::ir
