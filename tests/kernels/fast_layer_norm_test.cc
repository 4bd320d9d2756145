//===- fast_layer_norm_test.cc - cpu.layer_norm against the reference -----===//
//
// cpu.layer_norm (kernels/cpu/FastLayerNorm.cc) normalizes float32 rows in
// vectors of four with float32 statistics; the reference kernel (in
// double) is the oracle: rows on and off multiples of 8 elements, a
// normalized block of several axes, no bias, many rows on several threads,
// and the calls it hands to the reference (a broadcast scale, statistics
// returned, float64) with the reference's results exactly.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/Threading.h"

#include <fmt/format.h>

namespace rivet::test {
namespace {

Attrs layerNormAttrs(int64_t Axis, double Eps, bool WithStats = false) {
  Attrs A;
  A.set("axis", Axis);
  A.set("epsilon", Eps);
  if (WithStats)
    A.set("with_stats", int64_t(1));
  return A;
}

TEST(FastLayerNorm, RowsAgreeWithTheReference) {
  std::mt19937 G(17);
  struct Case {
    Shape x, param;
    int64_t axis;
    bool bias;
  };
  for (const Case &C : std::vector<Case>{{{5, 64}, {64}, -1, true},
                                         {{3, 7, 13}, {13}, -1, true},
                                         {{2, 3, 20}, {3, 20}, 1, true},
                                         {{4, 8}, {8}, 1, false},
                                         {{1, 1}, {1}, -1, true},
                                         {{700, 64}, {64}, -1, true}}) {
    SCOPED_TRACE(fmt::format("x {}, axis {}, bias {}", shapeToString(C.x),
                             C.axis, C.bias));
    Tensor X = randomF32(G, C.x), W = randomF32(G, C.param),
           B = randomF32(G, C.param);
    // Rows far from zero mean: the two-pass variance must hold its digits.
    for (int64_t I = 0; I < X.numel(); ++I)
      X.data<float>()[I] = X.data<float>()[I] * 3 + 100;
    std::vector<Tensor> In = {X, W};
    if (C.bias)
      In.push_back(B);
    Attrs A = layerNormAttrs(C.axis, 1e-5);
    Tensor Want = run("layer_norm", In, A);
    for (int Threads : {1, 2}) {
      SettingScope<int> T(numThreads, setNumThreads, Threads);
      expectTensor(run("cpu.layer_norm", In, A), Want, 2e-5, 2e-5);
    }
  }
}

TEST(FastLayerNorm, OtherCallsAreTheReferences) {
  std::mt19937 G(5);
  Tensor X = randomF32(G, {3, 4, 6});
  auto Same = [](const std::vector<Tensor> &Got,
                 const std::vector<Tensor> &Want) {
    ASSERT_EQ(Got.size(), Want.size());
    for (size_t I = 0; I < Got.size(); ++I)
      expectTensor(Got[I], Want[I], 0, 0);
  };
  // A scale broadcast over the normalized block; statistics returned;
  // float64.
  std::vector<Tensor> Broadcast = {X, randomF32(G, {1, 6})};
  Same(runAll("cpu.layer_norm", Broadcast, layerNormAttrs(1, 1e-5)),
       runAll("layer_norm", Broadcast, layerNormAttrs(1, 1e-5)));
  std::vector<Tensor> Plain = {X, randomF32(G, {6}), randomF32(G, {6})};
  Same(runAll("cpu.layer_norm", Plain, layerNormAttrs(-1, 1e-3, true)),
       runAll("layer_norm", Plain, layerNormAttrs(-1, 1e-3, true)));
  std::vector<Tensor> Wide = {X.cast(DType::Float64),
                              randomF32(G, {6}).cast(DType::Float64)};
  Same(runAll("cpu.layer_norm", Wide, layerNormAttrs(-1, 1e-5)),
       runAll("layer_norm", Wide, layerNormAttrs(-1, 1e-5)));
}

} // namespace
} // namespace rivet::test
