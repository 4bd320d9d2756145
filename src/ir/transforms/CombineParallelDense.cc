//===- CombineParallelDense.cc - Merge dense/matmul that share an input ---===//
//
// dense(x, W_i) (W_i constant [N_i, K]) and matmul(x, B_i) (B_i constant
// [K, N_i]) that read the same x become one dense on the weights
// concatenated along N (one matmul on B_i concatenated along the columns);
// the branches' common elementwise tails (e.g. a bias add) are merged too,
// and each branch reads its columns back with strided_slice on the last
// axis. Concatenation rather than a stacked batch matmul, so the weights may
// differ in N. See ParallelOpCombiner.h.
//
//===----------------------------------------------------------------------===//
#include "ir/transforms/ParallelOpCombiner.h"
#include "ir/transforms/Pass.h"

namespace rivet::ir {
namespace {

/// Merges parallel dense and matmul calls on one input into a single one on
/// concatenated weights, followed by a slice per branch.
void combineParallelDense(Module &M, const PassContext &) {
  pattern::combineParallelOps(M, "dense");
  pattern::combineParallelOps(M, "matmul");
}

} // namespace

RIVET_REGISTER_PASS("CombineParallelDense", 3,
                    "Merges dense/matmul calls that share an input into one "
                    "call on concatenated weights plus slices.",
                    combineParallelDense);

} // namespace rivet::ir
