//===- ParallelOpCombiner.h - Merge parallel anchors on one input -*- C++ -*-=//
//
// The shared core of CombineParallelConv2D and CombineParallelDense (TVM's
// ParallelOpCombiner): anchors of one operator that read the same input with
// the same attributes and constant weights of the same shape (except along
// the output channels) become one anchor on the concatenated weights. Each
// branch's following elementwise ops (unary, or binary with a constant along
// the channel axis) are merged as long as every branch has the same one, and
// each branch's result is then a strided_slice of the merged result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"

#include <string_view>

namespace rivet::ir::pattern {

/// The fewest parallel products worth merging.
inline constexpr size_t kMinParallelBranches = 2;

/// Merges parallel calls of Op (a weighted anchor, OpInfo::channelAxes: conv,
/// dense, matmul) in every global function of M when at least MinBranches of
/// them share an input.
void combineParallelOps(Module &M, std::string_view Op,
                        size_t MinBranches = kMinParallelBranches);

} // namespace rivet::ir::pattern
