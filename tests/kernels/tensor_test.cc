//===- tensor_test.cc - Storage and Tensor --------------------------------===//
#include "KernelTestUtil.h"

#include <cmath>

using namespace rivet;
using namespace rivet::test;

TEST(Storage, AlignedAndReleased) {
  for (size_t N : {0ul, 1ul, 63ul, 64ul, 1000ul}) {
    auto S = Storage::allocate(N);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(S->data()) % kStorageAlignment, 0u);
    EXPECT_EQ(S->size(), N);
  }
  int Released = 0;
  {
    static char Buf[16];
    auto S = Storage::wrap(Buf, sizeof(Buf), [&] { ++Released; });
    EXPECT_EQ(S->data(), Buf);
    auto S2 = S;
    S.reset();
    EXPECT_EQ(Released, 0);
  }
  EXPECT_EQ(Released, 1);
}

TEST(Tensor, CreateAndAccess) {
  Tensor T = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(T.typeString(), "Tensor[(2, 3), float32]");
  EXPECT_EQ(T.numel(), 6);
  EXPECT_EQ(T.nbytes(), 24u);
  EXPECT_EQ(T.dim(-1), 3);
  EXPECT_EQ(T.elementAsDouble(4), 5.0);
  EXPECT_EQ(T.elementAsInt(5), 6);
  EXPECT_THROW(T.elementAsDouble(6), Error);
  EXPECT_THROW(T.data<double>(), Error);
  Tensor Z = Tensor::zeros({3}, DType::Int32);
  EXPECT_EQ(Z.toIntVector(), (std::vector<int64_t>{0, 0, 0}));
  Tensor S = Tensor::scalar<int64_t>(7);
  EXPECT_EQ(S.rank(), 0);
  EXPECT_EQ(S.elementAsInt(0), 7);
  EXPECT_THROW(Tensor::fromVector<float>({1, 2}, {3}), Error);
}

TEST(Tensor, MetaTensorHasNoData) {
  Tensor M = Tensor::meta({2, 3}, DType::Float16);
  EXPECT_TRUE(M.defined());
  EXPECT_FALSE(M.hasData());
  EXPECT_EQ(M.nbytes(), 12u);
  expectError([&] { M.rawData(); }, "no storage");
  EXPECT_FALSE(M.clone().hasData());
  EXPECT_FALSE(Tensor().defined());
}

TEST(Tensor, ReshapeSharesStorageCloneDoesNot) {
  Tensor T = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor R = T.reshape({3, 2});
  EXPECT_EQ(R.shape(), (Shape{3, 2}));
  EXPECT_EQ(R.rawData(), T.rawData());
  expectError([&] { T.reshape({4}); }, "cannot reshape");
  Tensor C = T.clone();
  EXPECT_NE(C.rawData(), T.rawData());
  C.data<float>()[0] = 42;
  EXPECT_EQ(T.data<float>()[0], 1.0f);
}

TEST(Tensor, ViewOutsideStorageIsRejected) {
  auto S = Storage::allocate(16);
  EXPECT_NO_THROW(Tensor(S, 8, {2}, DType::Float32));
  EXPECT_THROW(Tensor(S, 8, {3}, DType::Float32), Error);
  EXPECT_THROW(Tensor(S, 20, {}, DType::Int8), Error);
}

TEST(Tensor, Cast) {
  Tensor T = f32({-1.7f, 0.0f, 2.9f, 300.5f}, {4});
  EXPECT_EQ(T.cast(DType::Int32).toIntVector(),
            (std::vector<int64_t>{-1, 0, 2, 300}));
  Tensor B = T.cast(DType::Bool);
  EXPECT_EQ(B.toIntVector(), (std::vector<int64_t>{1, 0, 1, 1}));
  Tensor H = T.cast(DType::Float16);
  EXPECT_EQ(H.toDoubleVector()[3], 300.5);
  EXPECT_NEAR(H.toDoubleVector()[0], -1.7, 1e-3);
  // Out-of-range and NaN conversions are defined: saturate / 0.
  Tensor Big = f32({1e20f, -1e20f, NAN}, {3});
  EXPECT_EQ(Big.cast(DType::Int8).toIntVector(),
            (std::vector<int64_t>{127, -128, 0}));
  Tensor I = i64({-1, 256}, {2});
  EXPECT_EQ(I.cast(DType::UInt8).toIntVector(), (std::vector<int64_t>{255, 0}));
}

TEST(Tensor, AllClose) {
  Tensor A = f32({1, 2, NAN, INFINITY}, {4});
  EXPECT_TRUE(allClose(A, A.clone()));
  Tensor B = f32({1.000001f, 2, NAN, INFINITY}, {4});
  EXPECT_TRUE(allClose(B, A));
  Tensor C = f32({1.1f, 2, NAN, INFINITY}, {4});
  EXPECT_FALSE(allClose(C, A));
  EXPECT_TRUE(allClose(C, A, 0.2, 0));
  Tensor D = f32({1, 2, 3, INFINITY}, {4});
  EXPECT_FALSE(allClose(D, A)); // NaN vs number
  Tensor E = f32({1, 2, NAN, -INFINITY}, {4});
  EXPECT_FALSE(allClose(E, A)); // inf signs differ
  EXPECT_FALSE(allClose(A.reshape({2, 2}), A));
  EXPECT_FALSE(allClose(A.cast(DType::Float64), A));
}
