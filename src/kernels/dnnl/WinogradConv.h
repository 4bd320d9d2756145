//===- WinogradConv.h - 3x3 convolutions by minimal filtering ---*- C++ -*-===//
//
// Internal to src/kernels/dnnl. oneDNN 2.6 has Winograd convolutions only
// for AVX-512; its direct kernels reach ~80-90% of the FMA peak, so a
// 3x3 stride-1 conv (most of a ResNet's work) runs faster as Lavin & Gray's
// F(m x m, 3 x 3): 2.25x (m = 2) or 4x (m = 4) fewer multiplies, done as one
// batched oneDNN matmul between two cheap transforms.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/dnnl/DnnlAnchors.h"

#include <cstdint>

namespace rivet {

/// Out = post(conv(X, W) + B) for conv2d_nchwc by Winograd's algorithm,
/// when the conv is one it takes (float32, 3x3, stride and dilation 1,
/// group 1, channel blocks of 8 or 16, post-ops it can apply) and the
/// choice (see WinogradChoice) says it should. False otherwise; then the
/// caller runs the direct kernel.
bool winogradConvBlocked(const Tensor &X, const Tensor &W, const Tensor *B,
                         const ConvParams &P, const BlockedConvLayout &L,
                         const PostOps &Post, Tensor &Out);

/// Which convs take the Winograd path. Auto picks by the conv's shape
/// (WinogradConv.cc says how); the others force a tile size or turn it off
/// (tests, benchmarks). RIVET_WINOGRAD=off|2|4 in the environment sets the
/// initial choice.
enum class WinogradChoice { Auto, Off, Tile2, Tile4 };
WinogradChoice winogradChoice();
void setWinogradChoice(WinogradChoice C);

/// How the per-position products are laid out: Auto picks by shape
/// (WinogradConv.cc, TileScratch); tests force each form.
enum class WinogradProducts { Auto, TileMajor, ChannelMajor };
WinogradProducts winogradProducts();
void setWinogradProducts(WinogradProducts P);

/// The most bytes the transformed input (or output) of one chunk of tile
/// rows takes (16 MiB by default); a conv with more runs in chunks. Tests
/// lower it.
int64_t winogradScratchLimit();
void setWinogradScratchLimit(int64_t Bytes);

/// The tile size WinogradChoice::Auto picks for a conv of N images, C
/// input and M output channels and an Ho x Wo output: 4, 2, or 0 for the
/// direct kernel.
int winogradAutoTile(int64_t N, int64_t C, int64_t M, int64_t Ho, int64_t Wo);
/// Convs run by winogradConvBlocked since the process started (tests).
int64_t winogradConvCalls();

} // namespace rivet
