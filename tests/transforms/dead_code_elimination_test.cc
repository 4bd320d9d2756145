//===- dead_code_elimination_test.cc - DeadCodeElimination ----------------===//
#include "support/PassTest.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes = {"DeadCodeElimination"};

TEST(DeadCodeElimination, UnusedChainGoesInOneSweep) {
  test::expectTransformFiles(Passes, "DeadCodeElimination", "chain");
}

TEST(DeadCodeElimination, FunctionsAndBranches) {
  test::expectTransformFiles(Passes, "DeadCodeElimination",
                             "functions_and_branches");
}

TEST(DeadCodeElimination, LiveBindingsStay) {
  test::expectTransformFiles(Passes, "DeadCodeElimination", "nothing_dead");
}

TEST(DeadCodeElimination, LongChainsUseConstantStack) {
  // 100,000 bindings, every other one dead: iterative, and linear.
  std::string Text = "def @main(%x: Tensor[(2,), float32]) {\n";
  std::string Expected = Text;
  std::string Last = "%x";
  for (int I = 0; I < 50000; ++I) {
    std::string Live = "%l" + std::to_string(I);
    Text += "  let %d" + std::to_string(I) + " = exp(" + Last + ");\n";
    Text += "  let " + Live + " = negative(" + Last + ");\n";
    Expected += "  let " + Live + " = negative(" + Last + ");\n";
    Last = Live;
  }
  Text += "  " + Last + "\n}\n";
  Expected += "  " + Last + "\n}\n";
  ir::Module After = test::runPassesOn(test::parseTyped(Text), Passes);
  EXPECT_TRUE(ir::structuralEqual(After, test::parseTyped(Expected)));
}

} // namespace
