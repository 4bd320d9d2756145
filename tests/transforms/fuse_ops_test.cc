//===- fuse_ops_test.cc - FuseOps: groups, boundaries, group size ---------===//
#include "support/PassTest.h"

#include "ir/Visitor.h"
#include "ir/transforms/DominatorTree.h"
#include "ir/transforms/FuseOps.h"

using namespace rivet;
using namespace rivet::ir;

namespace {

/// test::expectTransform for FuseOps, comparing only the functions the texts
/// define: the pass also fuses the prelude (@length's add, @concat's
/// concatenate), which an expected text cannot spell. MaxGroupSize 0 runs
/// the registered pass; otherwise fuseOps runs with that limit.
Module expectFusedText(const std::string &BeforeText,
                       const std::string &ExpectedText,
                       size_t MaxGroupSize = 0) {
  Module Before = test::parseTyped(BeforeText, "before");
  Module After = Before;
  if (MaxGroupSize == 0) {
    After = test::runPassesOn(Before, {"FuseOps"});
  } else {
    fuseOps(After, FuseOptions{MaxGroupSize});
    verifyModule(After);
  }
  Module Expected = test::parseTyped(ExpectedText, "expected");
  auto Defined = [](const Module &M) {
    std::vector<std::string> Names;
    for (const std::string &N : M.functionNames())
      if (!isPreludeName(N))
        Names.push_back(N);
    return Names;
  };
  EXPECT_EQ(Defined(After), Defined(Expected));
  for (const std::string &N : Defined(Expected)) {
    if (!After.hasFunction(N))
      continue;
    EXPECT_TRUE(structuralEqual(After.function(N), Expected.function(N)))
        << "@" << N << " differs\n--- got:\n"
        << printModule(After) << "\n--- expected:\n"
        << printModule(Expected);
  }
  test::expectSameResults(Before, After);
  return After;
}

void expectFused(const std::string &Case) {
  SCOPED_TRACE(Case);
  expectFusedText(test::readPassData("FuseOps/" + Case + ".rvir"),
                  test::readPassData("FuseOps/" + Case + ".expected.rvir"));
}

TEST(FuseOps, ConvBiasReluIsOneGroup) { expectFused("conv_bias_relu"); }
TEST(FuseOps, ResidualAddJoinsTheConvItPostDominates) {
  expectFused("residual");
}
TEST(FuseOps, AGroupHasOneAnchor) { expectFused("parallel_convs"); }
TEST(FuseOps, ElementwiseChain) { expectFused("elementwise_chain"); }
TEST(FuseOps, DiamondFuses) { expectFused("diamond"); }
TEST(FuseOps, ReductionTakesItsElementwiseInput) { expectFused("reduction"); }
TEST(FuseOps, InjectiveChain) { expectFused("injective_chain"); }
TEST(FuseOps, NoFusionAcrossIf) { expectFused("if_boundary"); }
TEST(FuseOps, ResultUsedTwiceIsAGroupBoundary) { expectFused("multiple_uses"); }
TEST(FuseOps, DynamicShapesFuse) { expectFused("dynamic_shape"); }
TEST(FuseOps, BiasOverUnknownExtentsJoinsItsProduct) {
  expectFused("matmul_bias_unknown_extents");
}

TEST(FuseOps, NoFusionAcrossFunctionsOrCalls) {
  // The closure body is a scope of its own; a call of a non-operator pins
  // its operand, and a global call is a boundary too.
  expectFusedText(R"(
def @twice(%y: Tensor[(2, 2), float32]) {
  let %s = add(%y, %y);
  exp(%s)
}
def @main(%x: Tensor[(2, 2), float32]) {
  let %f = fn (%z: Tensor[(2, 2), float32]) {
    relu(negative(%z))
  };
  let %a = tanh(%x);
  let %b = @twice(%a);
  let %c = %f(%b);
  abs(%c)
}
)",
                  R"(
def @twice(%y: Tensor[(2, 2), float32]) {
  fn (%p0: Tensor[(2, 2), float32], Primitive=1) {
    let %s = add(%p0, %p0);
    exp(%s)
  }(%y)
}
def @main(%x: Tensor[(2, 2), float32]) {
  let %f = fn (%z: Tensor[(2, 2), float32]) {
    fn (%p0: Tensor[(2, 2), float32], Primitive=1) {
      relu(negative(%p0))
    }(%z)
  };
  let %a = fn (%p0: Tensor[(2, 2), float32], Primitive=1) {
    tanh(%p0)
  }(%x);
  let %b = @twice(%a);
  let %c = %f(%b);
  fn (%p0: Tensor[(2, 2), float32], Primitive=1) {
    abs(%p0)
  }(%c)
}
)");
}

TEST(FuseOps, PrimitiveFunctionsAreLeftAlone) {
  // Running the pass twice changes nothing the second time.
  Module Once = test::runPassesOn(
      test::parseTyped(test::readPassData("FuseOps/residual.rvir")),
      {"FuseOps"});
  Module Twice = test::runPassesOn(Once, {"FuseOps"});
  EXPECT_TRUE(structuralEqual(Once, Twice)) << structuralDiff(Once, Twice);
}

TEST(FuseOps, MaximumGroupSizeIsRespected) {
  const char *Chain = R"(
def @main(%x: Tensor[(3,), float32]) {
  let %a = exp(%x);
  let %b = negative(%a);
  let %c = tanh(%b);
  let %d = abs(%c);
  relu(%d)
}
)";
  expectFusedText(Chain, R"(
def @main(%x: Tensor[(3,), float32]) {
  let %b = fn (%p0: Tensor[(3,), float32], Primitive=1) {
    let %a = exp(%p0);
    negative(%a)
  }(%x);
  let %d = fn (%p0: Tensor[(3,), float32], Primitive=1) {
    let %c = tanh(%p0);
    abs(%c)
  }(%b);
  fn (%p0: Tensor[(3,), float32], Primitive=1) {
    relu(%p0)
  }(%d)
}
)",
                  2);

  // The default limit puts the whole chain into one group.
  Module Default = test::parseTyped(Chain);
  fuseOps(Default);
  size_t Primitives = 0;
  postOrderVisit(Default.function("main"),
                 [&](const Expr &E) { Primitives += isPrimitiveFunction(E); });
  EXPECT_EQ(Primitives, 1u) << printModule(Default);
}

TEST(FuseOps, ImmediatePostDominators) {
  // 0 -> {1, 2} -> 3 -> 4, and 5 -> {3, 4}: the diamond joins at 3; 2 also
  // leaves the graph, so only the exit post-dominates 0 and 2.
  std::vector<std::vector<size_t>> Succ = {{1, 2}, {3}, {3}, {4}, {}, {3, 4}};
  std::vector<bool> Leaves = {false, false, true, false, false, false};
  EXPECT_EQ(immediatePostDominators(Succ, Leaves),
            (std::vector<int64_t>{-1, 3, -1, 4, -1, 4}));
  Leaves[2] = false;
  EXPECT_EQ(immediatePostDominators(Succ, Leaves),
            (std::vector<int64_t>{3, 3, 3, 4, -1, 4}));
}

} // namespace
