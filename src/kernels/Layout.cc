//===- Layout.cc - Tensor layout strings (NCHW8c) -------------------------===//
#include "kernels/Layout.h"
#include "kernels/Error.h"

#include <unordered_map>

namespace rivet {
namespace {

bool isUpper(char C) { return C >= 'A' && C <= 'Z'; }
bool isLower(char C) { return C >= 'a' && C <= 'z'; }
bool isDigit(char C) { return C >= '0' && C <= '9'; }

} // namespace

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

bool hasAxes(const Layout &L, std::string_view Letters) {
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

const BlockedConvLayouts &parseBlockedConvLayouts(std::string_view Op,
                                                  const std::string &Data,
                                                  const std::string &Kernel,
                                                  const std::string &Out) {
  // A model's convs use a few layouts, parsed on every call of their shape
  // function and kernel: parsed ones are kept (per thread, no lock; entries
  // are never erased, so references stay valid).
  thread_local std::unordered_map<std::string, BlockedConvLayouts> Parsed;
  thread_local BlockedConvLayouts Overflow;
  std::string Key = Data + '|' + Kernel + '|' + Out;
  auto It = Parsed.find(Key);
  if (It != Parsed.end())
    return It->second;
  BlockedConvLayouts L{parseLayout(Op, Data), parseLayout(Op, Kernel),
                       parseLayout(Op, Out), parseLayout(Op, "NCHW"),
                       parseLayout(Op, "OIHW")};
  if (!hasAxes(L.Data, "NCHWc") || !hasAxes(L.Out, "NCHWc"))
    fail("{}: data_layout and out_layout must have the form NCHW<i>c, got "
         "'{}' and '{}'",
         Op, L.Data.Text, L.Out.Text);
  if (!hasAxes(L.Kernel, "OIHWio"))
    fail("{}: kernel_layout must have the form OIHW<i>i<o>o, got '{}'", Op,
         L.Kernel.Text);
  // The input block of the weights is the data's, or 1: a grouped conv's
  // weights have C / group input channels (one for a depthwise conv).
  int64_t KernelIn = L.Kernel.BlockOf['I' - 'A'];
  if ((KernelIn != L.Data.BlockOf['C' - 'A'] && KernelIn != 1) ||
      L.Kernel.BlockOf['O' - 'A'] != L.Out.BlockOf['C' - 'A'])
    fail("{}: kernel_layout '{}' must block by the data_layout '{}' (input, "
         "or 1) and the out_layout '{}' (output)",
         Op, L.Kernel.Text, L.Data.Text, L.Out.Text);
  if (Parsed.size() >= 1024) { // not a model's handful: not kept
    Overflow = std::move(L);
    return Overflow;
  }
  return Parsed.emplace(std::move(Key), std::move(L)).first->second;
}

Attrs plainConvAttrs(const Attrs &A) {
  Attrs R;
  for (const auto &[Name, V] : A.items())
    if (Name != "data_layout" && Name != "kernel_layout" &&
        Name != "out_layout")
      R.set(Name, V);
  return R;
}

} // namespace rivet
