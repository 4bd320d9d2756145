//===- CollapseLoops.h - An elementwise nest as one flat loop ---*- C++ -*-===//
//
// Lowering gives an elementwise group one loop per output axis. When the
// rows are short (a [n, 8] tensor), the inner loop is too short for whole
// vectors and each row pays the loop's set-up: 8 floats ran scalar at about
// 1 ns each. When every buffer the nest reads at the output's indices has
// the output's shape, the elements line up in memory, and the nest is one
// loop over all of them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/LoopIR.h"

namespace rivet::codegen {

/// Rewrites K's body when it is a perfect nest of two or more loops whose
/// innermost body is the one store out[i0, .., ik] = v, every loop variable
/// in v is an index of a load at exactly [i0, .., ik] from a buffer of the
/// output's extents, and nothing else reads them (scalar or constant-index
/// loads may appear): the nest becomes one loop over the product of the
/// extents, each such access at [0, .., 0, i]. The loop is parallel when
/// any loop of the nest was. Run before the innermost loops are marked
/// vectorized. Returns whether it rewrote K.
bool collapseElementwiseNest(LoopKernel &K);

} // namespace rivet::codegen
