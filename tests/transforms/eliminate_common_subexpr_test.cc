//===- eliminate_common_subexpr_test.cc - EliminateCommonSubexpr ----------===//
#include "support/PassTest.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes = {"EliminateCommonSubexpr"};

TEST(EliminateCommonSubexpr, RepeatedCallsMerge) {
  test::expectTransformFiles(Passes, "EliminateCommonSubexpr",
                             "repeated_calls");
}

TEST(EliminateCommonSubexpr, OnlyBindingsInScope) {
  test::expectTransformFiles(Passes, "EliminateCommonSubexpr", "scopes");
}

TEST(EliminateCommonSubexpr, PrimitiveFunctionsStay) {
  test::expectTransformFiles(Passes, "EliminateCommonSubexpr", "primitive");
}

} // namespace
