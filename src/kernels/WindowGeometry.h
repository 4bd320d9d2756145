//===- WindowGeometry.h - Sliding-window extents and pads -------*- C++ -*-===//
//
// The one statement of how a convolution or pooling window walks one spatial
// axis: the output extent and the pads from the input extent, the window
// extent, stride, dilation, the explicit pads, auto_pad and ceil_mode. The
// type relations, the reference kernels, the oneDNN wrappers and codegen
// (on symbolic extents) all use it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Attrs.h"
#include "kernels/Error.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rivet {

/// A per-axis window attribute (strides, dilations, pads): Len entries, each
/// >= Min, or Default repeated when the call leaves it out. The length is
/// the input's spatial rank, so the schema cannot hold this default.
inline std::vector<int64_t> windowInts(std::string_view Op, const Attrs &A,
                                       const std::string &Name, size_t Len,
                                       int64_t Default, int64_t Min) {
  std::vector<int64_t> V;
  try {
    V = A.getInts(Name, std::vector<int64_t>(Len, Default));
  } catch (const Error &E) {
    fail("{}: {}", Op, E.what());
  }
  if (V.size() != Len)
    fail("{}: attribute '{}' must have {} entries, got {}", Op, Name, Len,
         V.size());
  for (int64_t X : V)
    if (X < Min)
      fail("{}: attribute '{}' has an invalid entry {} (must be >= {})", Op,
           Name, X, Min);
  return V;
}

/// ONNX's auto_pad.
enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

/// Null for a value that is none of NOTSET (or empty), SAME_UPPER,
/// SAME_LOWER and VALID.
inline std::optional<AutoPad> parseAutoPad(std::string_view S) {
  if (S == "NOTSET" || S.empty())
    return AutoPad::NotSet;
  if (S == "SAME_UPPER")
    return AutoPad::SameUpper;
  if (S == "SAME_LOWER")
    return AutoPad::SameLower;
  if (S == "VALID")
    return AutoPad::Valid;
  return std::nullopt;
}

/// Arithmetic on constant extents, for windowAxis. Extents are
/// non-negative, so division is floor division.
struct ConstArith {
  using Int = int64_t;
  static Int c(int64_t V) { return V; }
  static Int add(Int A, Int B) { return A + B; }
  static Int sub(Int A, Int B) { return A - B; }
  static Int mul(Int A, Int B) { return A * B; }
  static Int div(Int A, Int B) { return A / B; }
  static Int max(Int A, Int B) { return std::max(A, B); }
  /// A < B ? Then : Else.
  static Int selectLT(Int A, Int B, Int Then, Int Else) {
    return A < B ? Then : Else;
  }
};

/// The geometry of one spatial axis.
template <typename Arith> struct WindowAxis {
  typename Arith::Int padBegin, padEnd, out;
};

/// One spatial axis of a window of extent Kernel over an input of extent In.
/// Arith supplies the integers: ConstArith, or codegen's symbolic ones.
/// SAME pads so that out = ceil(in / stride), the odd pad at the end
/// (SAME_UPPER) or the beginning (SAME_LOWER); ceil_mode follows
/// PyTorch/ONNX Runtime: the last window must start inside the input or the
/// left padding. Under NOTSET the padded input must hold one window
/// (constWindowAxis checks it).
template <typename Arith>
WindowAxis<Arith> windowAxis(typename Arith::Int In, typename Arith::Int Kernel,
                             int64_t Stride, int64_t Dilation, int64_t PadBegin,
                             int64_t PadEnd, AutoPad Mode, bool Ceil) {
  using A = Arith;
  using Int = typename Arith::Int;
  Int Eff = A::add(A::mul(A::sub(Kernel, A::c(1)), A::c(Dilation)), A::c(1));
  Int S = A::c(Stride);
  switch (Mode) {
  case AutoPad::SameUpper:
  case AutoPad::SameLower: {
    Int Out = A::div(A::add(In, A::c(Stride - 1)), S);
    Int Total = A::max(
        A::c(0), A::sub(A::add(A::mul(A::sub(Out, A::c(1)), S), Eff), In));
    Int Half = A::div(Total, A::c(2));
    Int Begin = Mode == AutoPad::SameUpper ? Half : A::sub(Total, Half);
    return {Begin, A::sub(Total, Begin), Out};
  }
  case AutoPad::Valid:
    return {A::c(0), A::c(0),
            A::selectLT(In, Eff, A::c(0),
                        A::add(A::div(A::sub(In, Eff), S), A::c(1)))};
  case AutoPad::NotSet: break;
  }
  Int Span = A::sub(A::add(A::add(In, A::c(PadBegin)), A::c(PadEnd)), Eff);
  if (!Ceil)
    return {A::c(PadBegin), A::c(PadEnd), A::add(A::div(Span, S), A::c(1))};
  Int Out = A::add(A::div(A::add(Span, A::c(Stride - 1)), S), A::c(1));
  Int Last = A::sub(Out, A::c(1));
  // The last window starts at Last * Stride in the padded input.
  return {A::c(PadBegin), A::c(PadEnd),
          A::selectLT(A::mul(Last, S), A::add(In, A::c(PadBegin)), Out, Last)};
}

/// One spatial axis of a transposed window (conv_transpose): the output
/// extent and the pads that crop the full extent
/// stride * (in - 1) + output_padding + the dilated kernel to it.
struct TransposedWindowAxis {
  int64_t padBegin, padEnd, out;
};

/// The output extent is OutShape when given, in * stride under SAME (the
/// kernel does not matter then), else the full extent less the pads (none
/// under VALID). With an explicit or SAME extent the pads are what the full
/// extent exceeds it by, the odd one at the end only under SAME_UPPER; an
/// output larger than the full extent is extended with zeros at the end.
/// out may be negative: the callers reject it, each in its own words.
inline TransposedWindowAxis
transposedWindowAxis(int64_t In, int64_t Kernel, int64_t Stride,
                     int64_t Dilation, int64_t OutPadding, int64_t PadBegin,
                     int64_t PadEnd, AutoPad Mode,
                     std::optional<int64_t> OutShape) {
  bool Same = Mode == AutoPad::SameUpper || Mode == AutoPad::SameLower;
  int64_t Full = Stride * (In - 1) + OutPadding + (Kernel - 1) * Dilation + 1;
  if (OutShape || Same) {
    int64_t O = OutShape ? *OutShape : In * Stride;
    int64_t Total = Full - O;
    int64_t PB = Total < 0                    ? 0
                 : Mode == AutoPad::SameUpper ? Total / 2
                                              : Total - Total / 2;
    return {PB, Total - PB, O};
  }
  if (Mode == AutoPad::Valid)
    PadBegin = PadEnd = 0;
  return {PadBegin, PadEnd, Full - PadBegin - PadEnd};
}

/// windowAxis on constants; throws naming Op and the axis when the window
/// is larger than the padded input.
inline WindowAxis<ConstArith> constWindowAxis(std::string_view Op, size_t Axis,
                                              int64_t In, int64_t Kernel,
                                              int64_t Stride, int64_t Dilation,
                                              int64_t PadBegin, int64_t PadEnd,
                                              AutoPad Mode, bool Ceil) {
  if (Mode == AutoPad::NotSet &&
      In + PadBegin + PadEnd < (Kernel - 1) * Dilation + 1)
    fail("{}: the window ({} with dilation {}) is larger than the padded "
         "input ({}) along spatial axis {}",
         Op, Kernel, Dilation, In + PadBegin + PadEnd, Axis);
  return windowAxis<ConstArith>(In, Kernel, Stride, Dilation, PadBegin, PadEnd,
                                Mode, Ceil);
}

} // namespace rivet
