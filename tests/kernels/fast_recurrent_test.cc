//===- fast_recurrent_test.cc - Library RNN kernels against the reference -===//
//
// cpu.lstm, cpu.gru and cpu.rnn (kernels/cpu/FastRecurrent.cc) compute in
// float32 with their own summation order and vector sigmoid/tanh; the
// reference kernels (ops/RNN.cc, pinned by rnn_exact_test.cc) are the
// oracle. Random calls over every attribute, optional input, direction,
// activation list, sequence length (0 and 1 included, per batch row) and
// extent (batches that fill and do not fill the row tiles, hidden sizes on
// and off the vector width) must agree within float32 rounding; other
// dtypes must give the reference's bits exactly.
//
//===----------------------------------------------------------------------===//
#include "RecurrentCases.h"

#include "kernels/Kernel.h"
#include "kernels/cpu/RecurrentSteps.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace rivet;
using namespace rivet::test;

namespace {

/// The largest error of Got against Want relative to max(1, |Want|). NaN
/// must meet NaN; where the reference (in double) overflowed float32, the
/// float32 kernel overflowed too, and inf - inf may have made it NaN.
double relativeError(const Tensor &Got, const Tensor &Want, int64_t &At) {
  double Worst = 0;
  for (int64_t J = 0; J < Want.numel(); ++J) {
    double G = Got.elementAsDouble(J), W = Want.elementAsDouble(J);
    double E = std::isnan(W)   ? (std::isnan(G) ? 0 : INFINITY)
               : std::isinf(W) ? (std::isfinite(G) ? INFINITY : 0)
                               : std::fabs(G - W) / std::max(1.0, std::fabs(W));
    if (E > Worst)
      Worst = E, At = J;
  }
  return Worst;
}

/// Expects the library kernel of C.Kind to agree with the reference. R is
/// scaled into PyTorch's initial range (|R| <= 1/sqrt(hidden)): with the
/// drawn weights (up to 4.8) the recurrence is chaotic, and float32's
/// rounding, against the reference's double, grows by orders of magnitude
/// within a few steps, which no float32 kernel could avoid. Unbounded
/// activations (relu, elu, ...) still grow the state (to 1e18 as gates of
/// an lstm over 23 steps), and its error with it: 5e-4 of it for them,
/// 2e-5 for sigmoid and tanh.
void expectAgrees(Case C) {
  for (double &V : C.R)
    V = (double)(float)(V / std::sqrt((double)C.Hidden));
  // Likewise a gate function (lstm's and gru's f) that is unbounded makes
  // the state grow without bound, up to float32's overflow; and
  // thresholded_relu jumps, so that a rounding difference becomes a
  // difference of the threshold. Both code paths stay covered by the
  // other functions of the list.
  for (size_t J = 0; J < C.Acts.size(); ++J) {
    std::string &A = C.Acts[J];
    if (C.Kind != "rnn" && J % C.actsPerDir() == 0 && A != "Sigmoid" &&
        A != "HardSigmoid")
      A = "Sigmoid";
    if (A == "ThresholdedRelu")
      A = "Relu";
  }
  SCOPED_TRACE(describe(C));
  std::vector<Tensor> Want = kernelRun(C);
  std::vector<Tensor> Got = kernelRun(C, "cpu." + C.Kind);
  ASSERT_EQ(Got.size(), Want.size());
  double Tolerance = C.Acts.empty() ? 2e-5 : 5e-4;
  for (size_t O = 0; O < Want.size(); ++O) {
    ASSERT_EQ(Got[O].shape(), Want[O].shape()) << "output " << O;
    if (C.Type != DType::Float32) {
      // The reference kernel itself.
      EXPECT_EQ(
          std::memcmp(Got[O].rawData(), Want[O].rawData(), Want[O].nbytes()), 0)
          << "output " << O;
      continue;
    }
    int64_t At = 0;
    double E = relativeError(Got[O], Want[O], At);
    EXPECT_LE(E, Tolerance) << "output " << O << " element " << At << ": got "
                            << Got[O].elementAsDouble(At) << ", want "
                            << Want[O].elementAsDouble(At);
  }
}

TEST(FastRecurrent, EveryOperatorHasALibraryKernel) {
  for (const char *Op : {"lstm", "gru", "rnn"}) {
    const KernelInfo *K = KernelRegistry::global().libraryKernel(Op);
    ASSERT_NE(K, nullptr) << Op;
    EXPECT_EQ(K->name, std::string("cpu.") + Op);
    EXPECT_EQ(K->libraryFor, Op);
  }
  EXPECT_EQ(KernelRegistry::global().libraryKernel("add"), nullptr);
}

TEST(FastRecurrent, RandomSmallCasesAgreeWithTheReference) {
  std::mt19937 Rng(20261127);
  for (int Trial = 0; Trial < 600; ++Trial)
    expectAgrees(randomCase(Rng));
}

/// Each compilation of the vector loops this host can run (the baseline
/// always; AVX2 and AVX-512 where present), not only the one picked.
TEST(FastRecurrent, EveryInstructionSetAgreesWithTheReference) {
  using kernels::recurrent::RecurrentIsa;
  for (RecurrentIsa Isa :
       {RecurrentIsa::Base, RecurrentIsa::Avx2, RecurrentIsa::Avx512}) {
    if (!kernels::recurrent::setRecurrentIsa(Isa))
      continue;
    SCOPED_TRACE("instruction set " + std::to_string((int)Isa));
    std::mt19937 Rng(11);
    CaseLimits Max;
    Max.Seq = 12, Max.Batch = 6, Max.Hidden = 33;
    for (int Trial = 0; Trial < 150; ++Trial)
      expectAgrees(randomCase(Rng, Max));
  }
  kernels::recurrent::setRecurrentIsa(RecurrentIsa::Auto);
}

/// Batches of up to 9 rows (two full row tiles and a remainder), hidden
/// sizes up to 40 (whole and partial vectors), up to 24 steps.
TEST(FastRecurrent, RandomLargerCasesAgreeWithTheReference) {
  std::mt19937 Rng(7);
  CaseLimits Max;
  Max.Seq = 24, Max.Batch = 9, Max.Input = 20, Max.Hidden = 40;
  for (int Trial = 0; Trial < 150; ++Trial)
    expectAgrees(randomCase(Rng, Max));
}

/// The packed weights are kept per thread for the values they came from: a
/// weight changed in place (same buffer) is packed again, never read stale.
TEST(FastRecurrent, WeightsChangedInPlaceArePackedAgain) {
  std::mt19937 Rng(3);
  CaseLimits Max;
  Max.Seq = 4, Max.Batch = 2, Max.Hidden = 9;
  for (int Trial = 0; Trial < 30; ++Trial) {
    Case C = randomCase(Rng, Max);
    C.Type = DType::Float32;
    C.Acts.clear();
    std::vector<Tensor> In = caseInputs(C);
    Attrs A = caseAttrs(C);
    std::string Op = "cpu." + C.Kind;
    runAll(Op, In, A); // packs W, R and B

    // Scale W, R and B in place, then run again on the same tensors.
    for (size_t Idx : {size_t(1), size_t(2), size_t(3)})
      for (int64_t J = 0; J < In[Idx].numel(); ++J)
        In[Idx].data<float>()[J] *= 0.5f;
    std::vector<Tensor> Got = runAll(Op, In, A);
    std::vector<Tensor> Want = runAll(C.Kind, In, A);
    int64_t At = 0;
    for (size_t O = 0; O < Want.size(); ++O)
      EXPECT_LE(relativeError(Got[O], Want[O], At), 2e-5)
          << describe(C) << " output " << O;
  }
}

/// Weights in immutable storage (an executable's constants) are matched by
/// storage and address, not by value: new immutable weights of the same
/// shape, made after the old ones died (the allocator may hand out the same
/// address), are packed again.
TEST(FastRecurrent, ImmutableWeightsAreKeptByStorage) {
  std::mt19937 Rng(5);
  CaseLimits Max;
  Max.Seq = 5, Max.Batch = 3, Max.Hidden = 12;
  for (int Trial = 0; Trial < 20; ++Trial) {
    Case C = randomCase(Rng, Max);
    C.Type = DType::Float32;
    C.Acts.clear();
    for (double &V : C.R) // not chaotic (expectAgrees)
      V = (double)(float)(V / std::sqrt((double)C.Hidden));
    for (int Round = 0; Round < 2; ++Round) {
      std::vector<Tensor> In = caseInputs(C);
      for (size_t Idx : {size_t(1), size_t(2), size_t(3)})
        if (In[Idx].storage())
          In[Idx].storage()->markImmutable();
      Attrs A = caseAttrs(C);
      std::vector<Tensor> Want = runAll(C.Kind, In, A);
      for (int Call = 0; Call < 2; ++Call) {
        std::vector<Tensor> Got = runAll("cpu." + C.Kind, In, A);
        int64_t At = 0;
        for (size_t O = 0; O < Want.size(); ++O)
          EXPECT_LE(relativeError(Got[O], Want[O], At), 2e-5)
              << describe(C) << " round " << Round << " output " << O;
      }
      // The next round: other weights of the same shapes.
      for (double &V : C.W)
        V = -V * 0.5;
      for (double &V : C.R)
        V = V * 0.25;
    }
  }
}

/// Saturating, tiny, signed-zero, infinite and NaN pre-activations through
/// the vector sigmoid and tanh (their clamps, the tanh polynomial and its
/// switch-over), as in RnnExact.SpecialValuesMatchThePlainAlgorithm.
TEST(FastRecurrent, SpecialValuesAgreeWithTheReference) {
  std::vector<double> Xs = {
      0.0,   -0.0,   1e-30,  -1e-9, 9.9e-5,   1e-4,      -1e-4, 5e-5, -3e-5,
      0.001, 0.0624, 0.0626, -0.07, 0.1,      -0.25,     0.5,   1.0,  -3.0,
      9.0,   20.0,   -1000,  1e30,  INFINITY, -INFINITY, NAN};
  for (const char *Kind : {"rnn", "lstm", "gru"}) {
    Case C;
    C.Kind = Kind;
    C.Seq = (int64_t)Xs.size(), C.Hidden = 5;
    int64_t GH = C.gates() * C.Hidden;
    for (double X : Xs)
      C.X.push_back((double)(float)X);
    for (int64_t Row = 0; Row < GH; ++Row)
      C.W.push_back(std::vector<double>{1, -1, 0.5, 2, -4}[(size_t)(Row % 5)]);
    C.R.assign((size_t)(GH * C.Hidden), 0.0);
    expectAgrees(C);
  }
}

} // namespace
