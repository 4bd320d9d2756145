//===- cuda_libraries_test.cc - cuBLAS and cuDNN loaded with dlopen -------===//
//
// The GPU library kernels reach cuBLAS and cuDNN through function tables
// resolved by name at run time: a misspelt or missing symbol would only show
// on a GPU machine. Resolving needs no GPU, so it is checked wherever the
// libraries are installed (the CUDA toolkit's machines); without a GPU the
// libraries are not usable and say why.
//
//===----------------------------------------------------------------------===//
#include "vm/cuda/Cublas.h"
#include "vm/cuda/Cudnn.h"
#include "vm/cuda/Gpu.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

using namespace rivet::vm::cuda;

namespace {

bool loads(const char *Lib) {
  void *H = dlopen(Lib, RTLD_NOW | RTLD_LOCAL);
  if (H)
    dlclose(H);
  return H != nullptr;
}

TEST(CudaLibraries, CublasResolvesEveryFunction) {
  if (!loads("libcublas.so.13") && !loads("libcublas.so.12"))
    GTEST_SKIP() << "cuBLAS is not installed here";
  std::string Why;
  EXPECT_TRUE(cublasLibraryResolves(&Why)) << Why;
}

TEST(CudaLibraries, CudnnResolvesEveryFunction) {
  if (!loads("libcudnn.so.9"))
    GTEST_SKIP() << "cuDNN 9 is not installed here";
  std::string Why;
  EXPECT_TRUE(cudnnLibraryResolves(&Why)) << Why;
}

TEST(CudaLibraries, WithoutAGpuTheyAreNotUsable) {
  std::string Gpu;
  if (available(&Gpu))
    GTEST_SKIP() << "this machine has a GPU";
  std::string Why;
  EXPECT_FALSE(cublasAvailable(&Why));
  EXPECT_FALSE(Why.empty());
  Why.clear();
  EXPECT_FALSE(cudnnAvailable(&Why));
  EXPECT_FALSE(Why.empty());
  // A product queued without cuBLAS is declined, not attempted.
  GemmBatch G;
  G.m = G.n = G.k = 1;
  EXPECT_FALSE(gemm(G, false));
}

} // namespace
