//===- CombineParallelConv2D.cc - Merge convs that share an input ---------===//
//
// Convolutions (group 1) that read the same input with the same attributes
// and constant weights of one kernel shape become one convolution on the
// weights (and biases) concatenated along the output channels; the branches'
// common elementwise tails (e.g. a batch norm's scale and shift, relu) are
// merged too, and each branch reads its channels back with strided_slice.
// Runs before FoldScaleAxis, which then folds the merged scales. See
// ParallelOpCombiner.h.
//
//===----------------------------------------------------------------------===//
#include "ir/transforms/ParallelOpCombiner.h"
#include "ir/transforms/Pass.h"

namespace rivet::ir {
namespace {

/// Merges parallel convolutions on one input into a single convolution on
/// concatenated weights, followed by a slice per branch.
void combineParallelConv2D(Module &M, const PassContext &) {
  pattern::combineParallelOps(M, "conv");
}

} // namespace

RIVET_REGISTER_PASS("CombineParallelConv2D", 3,
                    "Merges convolutions that share an input into one "
                    "convolution on concatenated weights plus slices.",
                    combineParallelConv2D);

} // namespace rivet::ir
