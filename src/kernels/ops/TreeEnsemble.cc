//===- TreeEnsemble.cc - tree_ensemble ------------------------------------===//
//
// Each row walks every tree (kernels/TreeEnsemble.h) and its leaves' weights
// are aggregated per target in double, then stored in x's dtype. MIN and MAX
// start from the dtype's largest and lowest finite values, so a target no
// leaf reaches keeps them (ONNX's reference does the same).
//
//===----------------------------------------------------------------------===//
#include "kernels/TreeEnsemble.h"
#include "kernels/ops/KernelUtil.h"

#include <limits>

namespace rivet::kernels {
namespace {

constexpr const char *TreeEnsembleOp = "tree_ensemble";
using Aggregate = TreeEnsembleModel::Aggregate;

/// The largest finite value of the float type E.
template <typename E> double finiteMax() {
  if constexpr (std::is_same_v<E, Half>)
    return 65504.0;
  else
    return (double)std::numeric_limits<E>::max();
}

/// Checks x against the trees; returns [N, n_targets].
Shape outputShape(const Tensor &X, const TreeEnsembleModel &M) {
  if (X.rank() != 2)
    fail("{}: input 'x' must have rank 2 [N, F], got shape {}", TreeEnsembleOp,
         shapeToString(X.shape()));
  if (X.shape()[1] < M.numFeatures)
    fail("{}: the trees read feature {}, input 'x' has {} features",
         TreeEnsembleOp, M.numFeatures - 1, X.shape()[1]);
  return {X.shape()[0], M.numTargets};
}

std::vector<TensorMeta> treeEnsembleShape(const std::vector<Tensor> &In,
                                          const Attrs &A) {
  checkArity(TreeEnsembleOp, In, 1);
  checkDType(TreeEnsembleOp, "x", In[0].dtype(), DTypeClass::Float);
  return {{outputShape(In[0], readTreeEnsemble(A)), In[0].dtype()}};
}

void treeEnsembleKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                        const Attrs &A) {
  const Tensor &X = In[0];
  TreeEnsembleModel M = readTreeEnsemble(A);
  Shape Sh = outputShape(X, M);
  int64_t Rows = Sh[0], Features = X.shape()[1], Targets = Sh[1];
  std::vector<double> Acc((size_t)Targets);
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      const E *PX = X.data<E>();
      E *PY = Out[0].data<E>();
      double Start = M.aggregate == Aggregate::Min   ? finiteMax<E>()
                     : M.aggregate == Aggregate::Max ? -finiteMax<E>()
                                                     : 0.0;
      for (int64_t R = 0; R < Rows; ++R) {
        const E *Row = PX + R * Features;
        auto Feature = [Row](int64_t F) { return (double)Row[F]; };
        std::fill(Acc.begin(), Acc.end(), Start);
        for (int64_t Root : M.roots) {
          int64_t Leaf = M.leafReached(Root, Feature);
          double W = M.leafWeights[(size_t)Leaf];
          double &T = Acc[(size_t)M.leafTargets[(size_t)Leaf]];
          switch (M.aggregate) {
          case Aggregate::Average:
          case Aggregate::Sum: T += W; break;
          case Aggregate::Min: T = std::min(T, W); break;
          case Aggregate::Max: T = std::max(T, W); break;
          }
        }
        for (int64_t T = 0; T < Targets; ++T) {
          double V = Acc[(size_t)T];
          if (M.aggregate == Aggregate::Average)
            V /= (double)M.roots.size();
          PY[R * Targets + T] = E(ComputeT<E>(V));
        }
      }
    } else {
      fail("{}: input 'x' must have a float dtype, got {}", TreeEnsembleOp,
           dtypeName(X.dtype()));
    }
  });
}

} // namespace

RIVET_REGISTER_KERNEL("tree_ensemble", treeEnsembleKernel, treeEnsembleShape,
                      false);

RIVET_REGISTER_ATTRS(
    "tree_ensemble",
    {{"n_targets", AttrKind::Int, true, "the number of targets (columns)"},
     {"aggregate_function", AttrKind::String, false,
      "how a target's leaf weights combine: AVERAGE, SUM, MIN or MAX",
      std::string("SUM")},
     {"tree_roots", AttrKind::Ints, true, "the root node of each tree"},
     {"nodes_featureids", AttrKind::Ints, true,
      "per node: the feature (column of x) it tests"},
     {"nodes_modes", AttrKind::Ints, true,
      "per node: the test x[feature] <op> split that takes the true branch; "
      "0 <=, 1 <, 2 >=, 3 >, 4 ==, 5 !=, 6 member of the node's set"},
     {"nodes_splits", AttrKind::Floats, true,
      "per node: the value it compares with"},
     {"nodes_truenodeids", AttrKind::Ints, true,
      "per node: its true branch, a node or a leaf id"},
     {"nodes_trueleafs", AttrKind::Ints, true,
      "per node: 1 when its true branch is a leaf"},
     {"nodes_falsenodeids", AttrKind::Ints, true,
      "per node: its false branch, a node or a leaf id"},
     {"nodes_falseleafs", AttrKind::Ints, true,
      "per node: 1 when its false branch is a leaf"},
     {"nodes_missing_value_tracks_true", AttrKind::Ints, false,
      "per node: 1 sends a NaN feature to the true branch (default: all 0)"},
     {"membership_values", AttrKind::Floats, false,
      "the sets of the mode-6 nodes in node order, each ended by NaN"},
     {"leaf_targetids", AttrKind::Ints, true,
      "per leaf: the target its weight goes to"},
     {"leaf_weights", AttrKind::Floats, true, "per leaf: its weight"}});

} // namespace rivet::kernels
