//===- residual_block_test.cc - Batch norms fold away in a ResNet block
//----===//
//
// The inference passes on a conv-bn-relu-conv-bn-add-relu block in the order
// of the default pipeline: SimplifyInference turns each batch norm into a
// scale and a shift, FoldConstant evaluates them, FoldScaleAxis moves them
// into the convs, and CanonicalizeOps leaves conv + bias add.
//
//===----------------------------------------------------------------------===//
#include "support/PassTest.h"

#include "ir/Visitor.h"

#include <map>

using namespace rivet;
using namespace rivet::ir;

namespace {

/// How many calls of each operator @main makes.
std::map<std::string, int> opCounts(const Module &M) {
  std::map<std::string, int> Counts;
  postOrderVisit(M.function("main"), [&](const Expr &E) {
    if (const auto *C = E->as<CallNode>())
      if (const auto *O = C->callee->as<OpNode>())
        ++Counts[O->name()];
  });
  return Counts;
}

TEST(ResidualBlock, BatchNormsFoldIntoTheConvs) {
  Module Before =
      test::parseTyped(test::readPassData("ResidualBlock/basic_block.rvir"));
  Module After = test::runPassesOn(Before, {"SimplifyInference", "FoldConstant",
                                            "FoldScaleAxis", "FoldConstant",
                                            "CanonicalizeOps", "FoldConstant",
                                            "DeadCodeElimination"});
  std::map<std::string, int> Counts = opCounts(After);
  std::map<std::string, int> Expected{
      {"conv", 2}, {"add", 3}, {"relu", 2}}; // two bias adds, the residual
  EXPECT_EQ(Counts, Expected) << printModule(After);
  // Every conv's weight is a folded constant (possibly let-bound).
  std::unordered_map<const ExprNode *, Expr> Bound;
  postOrderVisit(After.function("main"), [&](const Expr &E) {
    if (const auto *L = E->as<LetNode>())
      Bound[L->var.get()] = L->value;
  });
  postOrderVisit(After.function("main"), [&](const Expr &E) {
    const auto *C = E->as<CallNode>();
    const auto *O = C ? C->callee->as<OpNode>() : nullptr;
    if (!O || O->name() != "conv")
      return;
    Expr W = C->args[1];
    if (W->kind == ExprKind::Var && Bound.count(W.get()))
      W = Bound[W.get()];
    EXPECT_EQ(W->kind, ExprKind::Constant) << printModule(After);
  });
  test::expectSameResults(Before, After, 1e-4, 1e-4);
}

} // namespace
