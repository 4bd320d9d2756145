//===- join_parallel_test.cc - concatenate and stack in parts -------------===//
//
// Joins of a megabyte or more copy in parts of about equal bytes on the
// pool, a part's range cutting through pieces anywhere. Every element of
// such joins (pieces of very different sizes, along the first and an inner
// axis, and stack) must land where the plain definition puts it, at 1, 2
// and 3 threads.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "kernels/Threading.h"

using namespace rivet;
using namespace rivet::test;

namespace {

/// A tensor whose elements say where they come from: input I, element J.
Tensor numbered(Shape S, int64_t I) {
  Tensor T = Tensor::empty(S, DType::Int32);
  for (int64_t J = 0; J < T.numel(); ++J)
    T.data<int32_t>()[J] = (int32_t)(I * 1000000 + J);
  return T;
}

TEST(JoinInParts, ConcatenationOfAGrowingSequence) {
  // Pieces of 1 .. 700 rows of 8: about 7.8 MB, as a loop's sequence.
  std::vector<Tensor> In;
  for (int64_t I = 0; I < 700; ++I)
    In.push_back(numbered({I + 1, 8}, I));
  for (int Threads : {1, 2, 3}) {
    SettingScope<int> T(numThreads, setNumThreads, Threads);
    Tensor Y = run("concatenate", In, Attrs{{"axis", int64_t(0)}});
    int64_t Row = 0;
    bool Same = true;
    for (int64_t I = 0; I < 700 && Same; Row += ++I)
      for (int64_t J = 0; J < (I + 1) * 8 && Same; ++J) {
        Same &= Y.data<int32_t>()[Row * 8 + J] == I * 1000000 + J;
        if (!Same)
          ADD_FAILURE() << "piece " << I << " element " << J << ": "
                        << Y.data<int32_t>()[Row * 8 + J];
      }
    EXPECT_TRUE(Same) << Threads << " threads";
  }
}

TEST(JoinInParts, InnerAxisAndStack) {
  // [64, w_i, 100] along axis 1: 64 pieces per input, interleaved in y.
  std::vector<Tensor> In;
  const int64_t Widths[] = {1, 37, 3, 90, 12};
  int64_t Total = 0;
  for (int64_t I = 0; I < 5; ++I) {
    In.push_back(numbered({64, Widths[I], 100}, I));
    Total += Widths[I];
  }
  for (int Threads : {1, 2, 3}) {
    SettingScope<int> T(numThreads, setNumThreads, Threads);
    Tensor Y = run("concatenate", In, Attrs{{"axis", int64_t(1)}});
    ASSERT_EQ(Y.shape(), (Shape{64, Total, 100}));
    bool Same = true;
    for (int64_t O = 0; O < 64; ++O) {
      int64_t Col = 0;
      for (int64_t I = 0; I < 5; ++I) {
        for (int64_t W = 0; W < Widths[I]; ++W)
          for (int64_t K = 0; K < 100; ++K)
            Same &= Y.data<int32_t>()[(O * Total + Col + W) * 100 + K] ==
                    I * 1000000 + (O * Widths[I] + W) * 100 + K;
        Col += Widths[I];
      }
    }
    EXPECT_TRUE(Same) << Threads << " threads";

    std::vector<Tensor> Same4(4, numbered({300, 400}, 7));
    Same4[2] = numbered({300, 400}, 9);
    Tensor S = run("stack", Same4, Attrs{{"axis", int64_t(1)}});
    ASSERT_EQ(S.shape(), (Shape{300, 4, 400}));
    bool Stacked = true;
    for (int64_t R = 0; R < 300; ++R)
      for (int64_t I = 0; I < 4; ++I)
        for (int64_t K = 0; K < 400; ++K)
          Stacked &= S.data<int32_t>()[(R * 4 + I) * 400 + K] ==
                     (I == 2 ? 9 : 7) * 1000000 + R * 400 + K;
    EXPECT_TRUE(Stacked) << Threads << " threads";
  }
}

} // namespace
