//===- slice_views_test.cc - contiguous slices share their input's memory ===//
//
// slice_dyn's view function (KernelInfo::viewFn) finds the slices that are
// one contiguous range of the input; the VM makes those views instead of
// copies, and copies the others. Every program runs on the reference
// interpreter and on the VM at -O0..-O3 with the same results; the memory
// planner keeps a sliced intermediate alive as long as its view.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Kernel.h"
#include "kernels/Random.h"
#include "support/Executors.h"

#include <gtest/gtest.h>

using namespace rivet;
using namespace rivet::ir;

namespace {

Tensor ints(std::vector<int64_t> V) {
  int64_t N = (int64_t)V.size();
  return Tensor::fromVector<int64_t>(V, {N});
}

std::optional<TensorView> viewOf(const Tensor &X, std::vector<int64_t> Starts,
                                 std::vector<int64_t> Ends,
                                 std::vector<int64_t> Axes,
                                 std::vector<int64_t> Steps = {}) {
  const KernelInfo &K = KernelRegistry::global().get("slice_dyn");
  EXPECT_NE(K.viewFn, nullptr);
  if (Steps.empty())
    Steps.assign(Starts.size(), 1);
  return K.viewFn({X, ints(Starts), ints(Ends), ints(Axes), ints(Steps)},
                  Attrs());
}

TEST(SliceViews, ContiguousRangesAreViews) {
  Tensor X = Tensor::zeros({4, 3, 2}, DType::Float32);
  auto V = viewOf(X, {1}, {3}, {0}); // rows 1 and 2
  ASSERT_TRUE(V);
  EXPECT_EQ(V->byteOffset, 1u * 6 * 4);
  EXPECT_EQ(V->shape, (Shape{2, 3, 2}));
  V = viewOf(X, {2, 1}, {3, 3}, {0, 1}); // X[2:3, 1:3, :]
  ASSERT_TRUE(V);
  EXPECT_EQ(V->byteOffset, (2u * 6 + 1 * 2) * 4);
  EXPECT_EQ(V->shape, (Shape{1, 2, 2}));
  V = viewOf(X, {3, 2, 1}, {4, 3, 2}, {0, 1, 2}); // one element
  ASSERT_TRUE(V);
  EXPECT_EQ(V->byteOffset, (3u * 6 + 2 * 2 + 1) * 4);
  Tensor Row = Tensor::zeros({1, 1, 5}, DType::Int64);
  V = viewOf(Row, {1}, {4}, {-1}); // inner axis, outer extents 1
  ASSERT_TRUE(V);
  EXPECT_EQ(V->byteOffset, 8u);
  EXPECT_EQ(V->shape, (Shape{1, 1, 3}));
}

TEST(SliceViews, OthersAreCopies) {
  Tensor X = Tensor::zeros({4, 3, 2}, DType::Float32);
  EXPECT_FALSE(viewOf(X, {1}, {2}, {1}));       // a column of every row
  EXPECT_FALSE(viewOf(X, {0}, {4}, {0}, {2}));  // every other row
  EXPECT_FALSE(viewOf(X, {3}, {0}, {0}, {-1})); // rows reversed
  EXPECT_FALSE(viewOf(X, {2}, {2}, {0}));       // empty
  EXPECT_TRUE(viewOf(X, {1}, {2}, {0}, {5}));   // one row, any step
}

Module typed(const std::string &Text) {
  Module M = parseModule(Text);
  inferTypes(M);
  return M;
}

/// Runs M on the interpreter and the VM at every level; returns the VM's
/// outputs of -O3 after checking that all agree.
void expectAgreement(const Module &M, const std::vector<Tensor> &In) {
  std::vector<Tensor> Want = rivet::testing::runOnInterpreter(M, In);
  for (int Level = 0; Level <= 3; ++Level) {
    SCOPED_TRACE(::testing::Message() << "-O" << Level);
    std::vector<Tensor> Got =
        rivet::testing::runOnVM(M, Level, vm::NativeCode::Jit, In);
    ASSERT_EQ(Got.size(), Want.size());
    for (size_t I = 0; I < Want.size(); ++I) {
      EXPECT_EQ(Got[I].shape(), Want[I].shape()) << "output " << I;
      EXPECT_TRUE(allClose(Got[I], Want[I], 0, 0)) << "output " << I;
    }
  }
}

TEST(SliceViews, TheVMSharesTheInputsMemory) {
  Module M = typed(R"(
def @main(%x: Tensor[(6, 4), float32], %b: Tensor[(1,), int64],
          %e: Tensor[(1,), int64], %a: Tensor[(1,), int64]) {
  slice_dyn(%x, %b, %e, %a)
}
)");
  Tensor X = randomTensor({6, 4}, DType::Float32, 5);
  for (int Level = 0; Level <= 3; ++Level) {
    SCOPED_TRACE(::testing::Message() << "-O" << Level);
    std::vector<Tensor> Rows = rivet::testing::runOnVM(
        M, Level, vm::NativeCode::Jit, {X, ints({2}), ints({5}), ints({0})});
    ASSERT_EQ(Rows.size(), 1u);
    EXPECT_EQ(Rows[0].shape(), (Shape{3, 4}));
    EXPECT_EQ(static_cast<const void *>(Rows[0].rawData()),
              static_cast<const void *>(X.data<float>() + 2 * 4))
        << "a view";
    std::vector<Tensor> Cols = rivet::testing::runOnVM(
        M, Level, vm::NativeCode::Jit, {X, ints({1}), ints({3}), ints({1})});
    EXPECT_EQ(Cols[0].shape(), (Shape{6, 2}));
    EXPECT_NE(Cols[0].storage().get(), X.storage().get()) << "a copy";
  }
  for (auto [B, E, A] :
       {std::tuple{2, 5, 0}, {1, 3, 1}, {-2, 100, 0}, {3, 3, 0}, {0, 6, 0}})
    expectAgreement(M, {X, ints({B}), ints({E}), ints({A})});
}

TEST(SliceViews, ASlicedIntermediateLivesAsLongAsItsView) {
  // %a's last use is the slice; %m, computed after it, could take %a's
  // place in the function's arena if the planner forgot that %v is %a's
  // memory and is read after %m is written.
  Module M = typed(R"(
def @main(%x: Tensor[(8, 4), float32], %b: Tensor[(1,), int64],
          %e: Tensor[(1,), int64]) {
  let %a = add(%x, %x);
  let %v = slice_dyn(%a, %b, %e);
  let %m = multiply(%x, 3f32);
  let %n = subtract(%m, %x);
  let %w = multiply(%v, %v);
  (%w, %n)
}
)");
  Tensor X = randomTensor({8, 4}, DType::Float32, 7);
  for (auto [B, E] : {std::pair{0, 8}, {2, 6}, {7, 8}})
    expectAgreement(M, {X, ints({B}), ints({E})});
}

} // namespace
