//===- dlpack_test.cc - DLPack import and export --------------------------===//
#include "KernelTestUtil.h"

#include <dlpack/dlpack.h>

using namespace rivet;
using namespace rivet::test;

TEST(DLPack, ExportSharesStorageAndKeepsItAlive) {
  Tensor T = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  DLManagedTensor *M = T.toDLPack();
  EXPECT_EQ(M->dl_tensor.ndim, 2);
  EXPECT_EQ(M->dl_tensor.shape[1], 3);
  EXPECT_EQ(M->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(M->dl_tensor.dtype.bits, 32);
  EXPECT_EQ(M->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(static_cast<char *>(M->dl_tensor.data) + M->dl_tensor.byte_offset,
            T.rawData());
  void *Data = T.rawData();
  T = Tensor(); // the capsule still owns the storage
  EXPECT_EQ(static_cast<float *>(Data)[5], 6.0f);
  // Import back: no copy for dense input.
  Tensor U = Tensor::fromDLPack(M);
  EXPECT_EQ(U.rawData(), Data);
  expectTensor(U, f32({1, 2, 3, 4, 5, 6}, {2, 3}));
}

TEST(DLPack, RoundTripEveryDType) {
  for (int I = 0; I <= (int)DType::Float64; ++I) {
    Tensor T = Tensor::zeros({3}, (DType)I).cast((DType)I);
    Tensor U = Tensor::fromDLPack(T.toDLPack());
    EXPECT_EQ(U.typeString(), T.typeString());
  }
  Tensor S = Tensor::scalar<int64_t>(9);
  EXPECT_EQ(Tensor::fromDLPack(S.toDLPack()).elementAsInt(0), 9);
  EXPECT_THROW(Tensor::meta({2}, DType::Float32).toDLPack(), Error);
}

namespace {
struct Foreign {
  DLManagedTensor M{};
  std::vector<int64_t> Shape, Strides;
  std::vector<float> Data;
  int *Deleted;
};
void foreignDeleter(DLManagedTensor *M) {
  auto *F = static_cast<Foreign *>(M->manager_ctx);
  ++*F->Deleted;
  delete F;
}
DLManagedTensor *makeForeign(std::vector<float> Data, std::vector<int64_t> Sh,
                             std::vector<int64_t> St, int *Deleted) {
  auto *F = new Foreign{{}, Sh, St, Data, Deleted};
  F->M.dl_tensor.data = F->Data.data();
  F->M.dl_tensor.device = {kDLCPU, 0};
  F->M.dl_tensor.ndim = (int)Sh.size();
  F->M.dl_tensor.dtype = {kDLFloat, 32, 1};
  F->M.dl_tensor.shape = F->Shape.data();
  F->M.dl_tensor.strides = St.empty() ? nullptr : F->Strides.data();
  F->M.manager_ctx = F;
  F->M.deleter = foreignDeleter;
  return &F->M;
}
} // namespace

TEST(DLPack, ImportStridedCopies) {
  int Deleted = 0;
  // A transposed view: logical (3, 2) over row-major (2, 3) data.
  DLManagedTensor *M =
      makeForeign({1, 2, 3, 4, 5, 6}, {3, 2}, {1, 3}, &Deleted);
  Tensor T = Tensor::fromDLPack(M);
  EXPECT_EQ(Deleted, 1); // copied, so released right away
  expectTensor(T, f32({1, 4, 2, 5, 3, 6}, {3, 2}));
  // Every other element with an offset of one element.
  M = makeForeign({0, 1, 2, 3, 4, 5, 6}, {3}, {2}, &Deleted);
  M->dl_tensor.byte_offset = 4;
  expectTensor(Tensor::fromDLPack(M), f32({1, 3, 5}, {3}));
  EXPECT_EQ(Deleted, 2);
  // Dense with explicit strides is wrapped; released with the tensor.
  M = makeForeign({1, 2, 3, 4}, {2, 2}, {2, 1}, &Deleted);
  {
    Tensor W = Tensor::fromDLPack(M);
    EXPECT_EQ(W.elementAsDouble(3), 4.0);
    EXPECT_EQ(Deleted, 2);
  }
  EXPECT_EQ(Deleted, 3);
}

TEST(DLPack, RejectsUnsupported) {
  int Deleted = 0;
  DLManagedTensor *M = makeForeign({1, 2}, {2}, {}, &Deleted);
  M->dl_tensor.device = {kDLCUDA, 0};
  expectError([&] { Tensor::fromDLPack(M); }, "unsupported device");
  EXPECT_EQ(Deleted, 1); // ownership was taken even on error
  M = makeForeign({1, 2}, {2}, {}, &Deleted);
  M->dl_tensor.dtype = {kDLComplex, 64, 1}; // bfloat16 is supported now
  expectError([&] { Tensor::fromDLPack(M); }, "unsupported dtype");
  M = makeForeign({1, 2}, {2}, {}, &Deleted);
  M->dl_tensor.dtype = {kDLFloat, 32, 4};
  expectError([&] { Tensor::fromDLPack(M); }, "lanes 4");
  EXPECT_EQ(Deleted, 3);
  expectError([] { Tensor::fromDLPack(nullptr); }, "null");
}
