//===- Layout.h - Tensor layout strings (NCHW8c) ----------------*- C++ -*-===//
//
// The layout grammar of layout_transform and conv2d_nchwc, shared by their
// type relations (src/ir/ops/Layout.cc) and reference kernels
// (src/kernels/ops/Layout.cc) so the two cannot disagree. A layout is a string
// of axes: an upper-case letter is a primal axis ('C'), a number and a
// lower-case letter a block of that axis ('8c'), so NCHW8c is
// [N, C/8, H, W, 8] with channel c at (c / 8, c % 8).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Attrs.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rivet {

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

/// Parses Text; each primal axis appears once, each block at most once and
/// only for a primal axis of the same layout. Errors name the operator Op.
Layout parseLayout(std::string_view Op, const std::string &Text);

/// Checks that Src and Dst have the same primal axes.
void checkConvertible(std::string_view Op, const Layout &Src,
                      const Layout &Dst);

/// True when L's axes spell Letters ('c' stands for any block of C).
bool hasAxes(const Layout &L, std::string_view Letters);

/// The layouts of a blocked convolution: NCHW{i}c, OIHW{i}i{o}o and
/// NCHW{o}c, and the plain NCHW and OIHW it is defined by.
struct BlockedConvLayouts {
  Layout Data, Kernel, Out;
  Layout PlainData, PlainKernel;
};

/// Parses and checks conv2d_nchwc's data, kernel and out layouts. The
/// result is remembered per thread; the reference stays valid until the
/// thread ends (after 1024 distinct triples: until the next call).
const BlockedConvLayouts &parseBlockedConvLayouts(std::string_view Op,
                                                  const std::string &Data,
                                                  const std::string &Kernel,
                                                  const std::string &Out);

/// A blocked convolution's attributes without the layouts: the attributes
/// of the plain conv it is defined by.
Attrs plainConvAttrs(const Attrs &A);

} // namespace rivet
