//===- canonicalize_ops_test.cc - CanonicalizeOps
//--------------------------===//
#include "support/PassTest.h"

using namespace rivet;

namespace {

const std::vector<std::string> Passes{"CanonicalizeOps"};

TEST(CanonicalizeOps, ConvBiasBecomesABroadcastAdd) {
  test::expectTransformFiles(Passes, "CanonicalizeOps", "conv_bias");
}

TEST(CanonicalizeOps, GemmBecomesDenseOrMatmulWithScaleAndBias) {
  test::expectTransformFiles(Passes, "CanonicalizeOps", "gemm");
}

TEST(CanonicalizeOps, StaticSplitBecomesSlices) {
  // Projections become slices of their own; a computed input is bound
  // first, in the enclosing let chain.
  test::expectTransform(Passes, R"(
def @main(%x: Tensor[(4, 6), float32]) {
  let %s = split(%x, axis=1, sections=3);
  let %t = split(relu(%x), axis=-2, indices=[1, -9]);
  (sigmoid(%s.0), %s.2, %t.1, %t.2)
}
)",
                        R"(
def @main(%x: Tensor[(4, 6), float32]) {
  let %s = (strided_slice(%x, begin=[0], end=[2], axes=[1]),
            strided_slice(%x, begin=[2], end=[4], axes=[1]),
            strided_slice(%x, begin=[4], end=[6], axes=[1]));
  let %v = relu(%x);
  let %t = (strided_slice(%v, begin=[0], end=[1], axes=[0]),
            strided_slice(%v, begin=[1], end=[1], axes=[0]),
            strided_slice(%v, begin=[0], end=[4], axes=[0]));
  (sigmoid(strided_slice(%x, begin=[0], end=[2], axes=[1])),
   strided_slice(%x, begin=[4], end=[6], axes=[1]),
   strided_slice(%v, begin=[1], end=[1], axes=[0]),
   strided_slice(%v, begin=[0], end=[4], axes=[0]))
}
)");
}

/// Each program must come out of the pass unchanged.
void expectUnchanged(const std::string &Program) {
  test::expectTransform(Passes, Program, Program);
}

TEST(CanonicalizeOps, CanonicalFormsAreKept) {
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %a: Tensor[(2, 3), float32]) -> (Tensor[(1, 2, 3, 3), float32], Tensor[(2, 4), float32]) {
  let %c = add(conv(%x, const[(2, 2, 1, 1), float32]([1, 2, 3, 4])), const[(2, 1, 1), float32]([1, 2]));
  let %d = dense(%a, const[(4, 3), float32]([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
  (%c, %d)
}
)");
}

TEST(CanonicalizeOps, IntegerGemmIsKept) {
  // dense is float-only and alpha/beta are float factors.
  expectUnchanged(R"(
def @main(%a: Tensor[(2, 3), int32], %b: Tensor[(3, 4), int32]) -> Tensor[(2, 4), int32] {
  gemm(%a, %b)
}
)");
}

TEST(CanonicalizeOps, SplitOfAnUnknownExtentIsKept) {
  // Its pieces (and whether the sections divide it) are known at run time
  // only: the kernel decides, and reports an uneven split.
  expectUnchanged(R"(
def @main(%x: Tensor[(?, 6), float32]) -> (Tensor[(?, 6), float32], Tensor[(?, 6), float32], Tensor[(?, 6), float32]) {
  split(%x, axis=0, sections=3)
}
)");
}

TEST(CanonicalizeOps, PrimitiveFunctionsAreLeftAlone) {
  expectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) -> Tensor[(1, 2, 3, 3), float32] {
  let %f = fn (%p: Tensor[(1, 2, 3, 3), float32], Primitive=1) {
    conv(%p, const[(2, 2, 1, 1), float32]([1, 2, 3, 4]), const[(2,), float32]([1, 2]))
  };
  %f(%x)
}
)");
}

} // namespace
