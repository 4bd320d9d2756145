//===- TreeEnsemble.cc - tree_ensemble ------------------------------------===//
//
// The trees of ONNX TreeEnsemble-5 (and of the TreeEnsembleRegressor and
// TreeEnsembleClassifier before it, which the frontend re-encodes): x[N, F]
// to the aggregated leaf weights per target, [N, n_targets]. The attributes
// are read and checked by kernels/TreeEnsemble.h, as the kernel reads them.
//
//===----------------------------------------------------------------------===//
#include "kernels/TreeEnsemble.h"
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

Type treeEnsembleRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("tree_ensemble", A);
  checkArity("tree_ensemble", Args, 1);
  TreeEnsembleModel M = readTreeEnsemble(A);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("tree_ensemble", Args, 0);
  requireFloat("tree_ensemble", X, 0);
  Dim Rows = Dim::any();
  if (X.shape) {
    if (X.shape->size() != 2)
      failArg(0, "tree_ensemble: expects x of rank 2 [N, F], got {}",
              typeStr(X));
    Rows = (*X.shape)[0];
    const Dim &F = (*X.shape)[1];
    if (F.isConst() && F.value < M.numFeatures)
      failArg(0, "tree_ensemble: the trees read feature {}, x has {} features",
              M.numFeatures - 1, F.value);
  }
  return std::make_shared<TensorTypeNode>(
      std::vector<Dim>{Rows, Dim::constant(M.numTargets)}, X.dtype);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "tree_ensemble",
    "Tree ensemble (ONNX TreeEnsemble-5): each row of x[N, F] walks every "
    "tree from its root to a leaf, whose weight goes to its target; the "
    "weights are aggregated per target into [N, n_targets].",
    1, treeEnsembleRel, FusionPattern::Opaque});

} // namespace rivet::ir
