//===- TreeEnsemble.h - The trees of a tree_ensemble call -------*- C++ -*-===//
//
// The one reading of tree_ensemble's attributes (ONNX TreeEnsemble-5's
// encoding: parallel nodes_* and leaf_* arrays) into trees, with every check
// that makes walking them safe: ids in range, no cycles, one member set per
// BRANCH_MEMBER node. The type relation reads a call's attributes with it
// (so a bad ensemble is refused at compile time) and so does the reference
// kernel (a .rvx is not trusted either); both cannot disagree.
//
// A tree that is one leaf (its root's branches are both leaf L) gives leaf
// L, as the specification says; onnxruntime and ONNX's reference take the
// leaf numbered like the root instead (the same when L is the root's index).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Attrs.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace rivet {

struct TreeEnsembleModel {
  /// nodes_modes' values: x[feature] <mode> split takes the true branch.
  enum class Mode : uint8_t { Leq, Lt, Gte, Gt, Eq, Neq, Member };
  enum class Aggregate : uint8_t { Average, Sum, Min, Max };

  struct Node {
    int64_t feature;
    double split;
    Mode mode;
    bool missingTracksTrue;
    bool trueIsLeaf, falseIsLeaf;
    int64_t trueId, falseId;         // a leaf or a node, as the flags say
    size_t membersBegin, membersEnd; // Member: the set in `members`
  };

  std::vector<Node> nodes;
  std::vector<int64_t> roots;
  std::vector<int64_t> leafTargets;
  std::vector<double> leafWeights;
  std::vector<double> members; // each Member node's set, sorted
  int64_t numTargets = 0;
  Aggregate aggregate = Aggregate::Sum;
  /// One more than the largest feature id: the columns x needs at least.
  int64_t numFeatures = 0;

  /// Whether node N sends a sample whose feature is V to its true branch.
  bool goesTrue(const Node &N, double V) const;

  /// The leaf a sample reaches from root R; Feature(f) is its feature f.
  template <typename FeatureFn>
  int64_t leafReached(int64_t R, const FeatureFn &Feature) const {
    for (int64_t Id = R;;) {
      const Node &N = nodes[(size_t)Id];
      bool True = goesTrue(N, Feature(N.feature));
      Id = True ? N.trueId : N.falseId;
      if (True ? N.trueIsLeaf : N.falseIsLeaf)
        return Id;
    }
  }
};

/// The trees of a tree_ensemble call with attributes A (the schema's
/// defaults for absent ones); throws rivet::Error naming the operator and
/// the attribute that is malformed.
TreeEnsembleModel readTreeEnsemble(const Attrs &A);

} // namespace rivet
