//===- DominatorTree.h - Post-dominators of a dataflow DAG ------*- C++ -*-===//
//
// FuseOps asks, for each operator, which node every path from it to the end
// of the scope must pass through. The computation uses Boost.Graph; its
// headers stay in DominatorTree.cc.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rivet::ir {

/// Immediate post-dominators of a graph given by its successor lists.
/// Every node that has no successors, or whose LeavesGraph entry is true,
/// also flows to a virtual exit node. Returns, per node, the index of its
/// immediate post-dominator, or -1 when that is the virtual exit.
std::vector<int64_t>
immediatePostDominators(const std::vector<std::vector<size_t>> &Successors,
                        const std::vector<bool> &LeavesGraph);

} // namespace rivet::ir
