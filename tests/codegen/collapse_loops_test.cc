// CollapseLoops: an elementwise nest whose operands line up with its output
// becomes one flat loop (parallel when the nest was); a broadcast, a
// transpose, a reduction or operands whose extents are not provably the
// output's keep their nest. Every case agrees with the interpreter, at 1
// and 3 threads.

#include "codegen/CodegenTestUtil.h"
#include "codegen/CollapseLoops.h"
#include "kernels/Threading.h"

using namespace rivet;
using namespace rivet::test;

namespace {

size_t loopsOf(const std::vector<std::string> &Types, const std::string &Body,
               std::string *Text = nullptr) {
  codegen::LoweredKernel L =
      lowerOrFail(parsePrimitive(Types, Body), uniqueKernelName(Body));
  std::string T = codegen::printLoopKernel(L.kernel);
  if (Text)
    *Text = T;
  return countOccurrences(T, "for ");
}

void expectAgreesAtThreads(const std::vector<std::string> &Types,
                           const std::string &Body,
                           const std::vector<SizeMap> &Sizes) {
  for (int Threads : {1, 3}) {
    ThreadCountScope Scope(Threads);
    expectKernelMatches(Types, Body, Sizes);
  }
}

TEST(CollapseLoops, ARowsTimesScalarGroupIsOneLoop) {
  // seq_insert_loop's group: rows of 8 scaled by a cast loop counter.
  std::vector<std::string> Types = {"Tensor[(), int64]",
                                    "Tensor[(n, 8), float32]"};
  std::string Body = "let %c = cast(%p0, dtype=\"float32\");\n"
                     "multiply(%p1, %c)";
  std::string Text;
  EXPECT_EQ(loopsOf(Types, Body, &Text), 1u) << Text;
  EXPECT_NE(Text.find("[0, mul(n, 8))"), std::string::npos) << Text;
  EXPECT_NE(Text.find("out[0, i]"), std::string::npos) << Text;
  expectAgreesAtThreads(Types, Body,
                        {{{"n", 1}}, {{"n", 3}}, {{"n", 1000}}, {{"n", 0}}});
}

TEST(CollapseLoops, SameShapedOperandsOfEveryRank) {
  expectAgreesAtThreads({"Tensor[(n, m), float32]", "Tensor[(n, m), float32]"},
                        "let %a = add(%p0, %p1);\nsigmoid(%a)",
                        {{{"n", 5}, {"m", 7}}, {{"n", 300}, {"m", 300}}});
  EXPECT_EQ(loopsOf({"Tensor[(n, m), float32]", "Tensor[(n, m), float32]"},
                    "add(%p0, %p1)"),
            1u);
  std::string Text;
  EXPECT_EQ(loopsOf({"Tensor[(4, 3, 5), float64]"}, "tanh(%p0)", &Text), 1u);
  EXPECT_NE(Text.find("[0, 60)"), std::string::npos) << Text;
  expectAgreesAtThreads({"Tensor[(4, 3, 5), float64]"}, "tanh(%p0)", {{}});
  // Rank 1 has nothing to collapse.
  EXPECT_EQ(loopsOf({"Tensor[(n), float32]"}, "relu(%p0)"), 1u);
}

TEST(CollapseLoops, NestsThatDoNotLineUpStay) {
  const std::vector<SizeMap> Sizes = {{{"n", 4}, {"m", 6}},
                                      {{"n", 1}, {"m", 1}}};
  struct Case {
    std::vector<std::string> types;
    std::string body;
  };
  for (const Case &C : std::vector<Case>{
           // A row vector broadcast down the rows.
           {{"Tensor[(n, m), float32]", "Tensor[(m), float32]"},
            "add(%p0, %p1)"},
           // A column broadcast across them.
           {{"Tensor[(n, m), float32]", "Tensor[(n, 1), float32]"},
            "multiply(%p0, %p1)"},
           // Read in another order.
           {{"Tensor[(m, n), float32]"}, "transpose(%p0, axes=[1, 0])"},
           // Extents equal only at run time.
           {{"Tensor[(n, m), float32]", "Tensor[(?, m), float32]"},
            "add(%p0, %p1)"},
           // A reduction per row.
           {{"Tensor[(n, m), float32]"}, "sum(%p0, axis=[1], keepdims=1)"},
       }) {
    SCOPED_TRACE(C.body);
    std::string Text;
    EXPECT_GE(loopsOf(C.types, C.body, &Text), 2u) << Text;
    std::vector<SizeMap> S = Sizes;
    for (SizeMap &M : S)
      M["?"] = M["n"];
    expectAgreesAtThreads(C.types, C.body, S);
  }
}

} // namespace
