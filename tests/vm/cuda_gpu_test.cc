//===- cuda_gpu_test.cc - The runtime's CUDA layer ------------------------===//
//
// Without a GPU the layer must say why and refuse cleanly; with one, device
// memory, copies, the caching allocator, PTX modules and graph capture must
// work. Each test skips on the kind of machine it is not for.
//
//===----------------------------------------------------------------------===//
#include "vm/cuda/Gpu.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

using namespace rivet;
using namespace rivet::vm::cuda;

namespace {

/// out[i] = in[i] * 2 for i < n, one thread per element.
const char kScale2Ptx[] = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry scale2(.param .u64 out, .param .u64 in, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<8>;

  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd2;
  cvta.to.global.u64 %rd4, %rd1;
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.f32 %f1, [%rd6];
  add.f32 %f2, %f1, %f1;
  add.s64 %rd7, %rd4, %rd5;
  st.global.f32 [%rd7], %f2;
DONE:
  ret;
}
)";

ImageRef scale2Image() {
  // Without the terminating NUL: the layer must add it.
  return ImageRef{"compute_80", true,
                  reinterpret_cast<const uint8_t *>(kScale2Ptx),
                  sizeof(kScale2Ptx) - 1};
}

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    std::string Why;                                                           \
    if (!available(&Why))                                                      \
      GTEST_SKIP() << "no GPU: " << Why;                                       \
  } while (false)

TEST(CudaGpu, WithoutGpuSaysWhyAndRefuses) {
  std::string Why;
  if (available(&Why))
    GTEST_SKIP() << "this machine has a GPU";
  EXPECT_FALSE(Why.empty());
  std::string Again;
  EXPECT_FALSE(available(&Again));
  EXPECT_EQ(Again, Why);
  EXPECT_FALSE(available()); // no out-parameter: must not crash
  try {
    Gpu::get();
    FAIL() << "Gpu::get() returned without a GPU";
  } catch (const Error &E) {
    std::string Msg = E.what();
    EXPECT_TRUE(Msg.starts_with("this executable needs a CUDA GPU: ")) << Msg;
    EXPECT_NE(Msg.find(Why), std::string::npos) << Msg;
  }
}

TEST(CudaGpu, DescribesTheDevice) {
  REQUIRE_GPU();
  Gpu &G = Gpu::get();
  EXPECT_EQ(&G, &Gpu::get());
  EXPECT_FALSE(G.name().empty());
  EXPECT_GE(G.computeCapability(), 50);
  EXPECT_GT(G.multiprocessors(), 0);
}

TEST(CudaGpu, CopiesRoundTrip) {
  REQUIRE_GPU();
  Gpu &G = Gpu::get();
  for (size_t N : {size_t(0), size_t(1), size_t(7), size_t(512), size_t(513),
                   size_t(100000), size_t(1) << 20, (size_t(3) << 20) + 5}) {
    SCOPED_TRACE(N);
    std::shared_ptr<Storage> A = G.allocate(N), B = G.allocate(N);
    ASSERT_TRUE(A && B);
    EXPECT_EQ(A->device(), Device::CUDA);
    EXPECT_EQ(A->size(), N);
    ASSERT_NE(A->data(), nullptr);
    EXPECT_NE(A->data(), B->data()); // even for 0 bytes
    EXPECT_EQ(reinterpret_cast<uintptr_t>(A->data()) % 256, 0u);
    std::vector<uint8_t> In(N), Out(N, 0);
    for (size_t I = 0; I < N; ++I)
      In[I] = uint8_t(I * 131 + 7);
    G.copyHostToDevice(A->data(), In.data(), N);
    G.copyDeviceToDevice(B->data(), A->data(), N);
    G.copyDeviceToHost(Out.data(), B->data(), N);
    EXPECT_TRUE(In == Out);
  }
  G.synchronize();
}

TEST(CudaGpu, AllocatorReusesFreedBlocks) {
  REQUIRE_GPU();
  Gpu &G = Gpu::get();
  for (size_t N : {size_t(3000), size_t(5) << 20}) {
    SCOPED_TRACE(N);
    void *First = G.allocate(N)->data(); // released at once
    size_t Allocs = G.driverAllocations(), Held = G.heldBytes();
    std::shared_ptr<Storage> Again = G.allocate(N);
    EXPECT_EQ(Again->data(), First);
    EXPECT_EQ(G.driverAllocations(), Allocs);
    EXPECT_EQ(G.heldBytes(), Held);
    EXPECT_GE(Held, N);
  }
  // A cached block more than twice the size does not serve a request.
  void *Big = G.allocate(size_t(64) << 20)->data();
  std::shared_ptr<Storage> Smaller = G.allocate(size_t(20) << 20);
  EXPECT_NE(Smaller->data(), Big);
}

/// Device buffers of n floats for scale2, with its argument array.
struct Scale2Args {
  std::shared_ptr<Storage> Out, In;
  void *OutPtr, *InPtr;
  uint32_t N;
  void *Args[3];
  Scale2Args(Gpu &G, uint32_t Count)
      : Out(G.allocate(Count * sizeof(float))),
        In(G.allocate(Count * sizeof(float))), OutPtr(Out->data()),
        InPtr(In->data()), N(Count), Args{&OutPtr, &InPtr, &N} {}
  uint32_t grid(uint32_t Block) const { return (N + Block - 1) / Block; }
};

TEST(CudaGpu, LaunchesAPtxKernel) {
  REQUIRE_GPU();
  Gpu &G = Gpu::get();
  std::shared_ptr<Module> M = G.loadModule({scale2Image()});
  KernelHandle F = M->function("scale2");
  ASSERT_NE(F, nullptr);

  Scale2Args A(G, 1000);
  std::vector<float> In(A.N), Out(A.N, -1.0f);
  std::iota(In.begin(), In.end(), -10.0f);
  G.copyHostToDevice(A.In->data(), In.data(), A.N * sizeof(float));
  G.launch(F, A.grid(256), 256, A.Args);
  G.copyDeviceToHost(Out.data(), A.Out->data(), A.N * sizeof(float));
  for (uint32_t I = 0; I < A.N; ++I)
    ASSERT_EQ(Out[I], In[I] * 2) << "at " << I;

  try {
    M->function("no_such_kernel");
    FAIL() << "found a kernel that does not exist";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("no_such_kernel"), std::string::npos)
        << E.what();
  }
}

TEST(CudaGpu, RefusesImagesForOtherGpus) {
  REQUIRE_GPU();
  Gpu &G = Gpu::get();
  static const uint8_t Junk[16] = {};
  // A cubin of another architecture and PTX newer than any GPU.
  std::vector<ImageRef> Images = {{"sm_10", false, Junk, sizeof(Junk)},
                                  {"compute_990", true, Junk, sizeof(Junk)}};
  try {
    G.loadModule(Images);
    FAIL() << "loaded code for another GPU";
  } catch (const Error &E) {
    std::string Msg = E.what();
    std::string Arch = "sm_" + std::to_string(G.computeCapability());
    EXPECT_NE(Msg.find(Arch), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("sm_10"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("compute_990"), std::string::npos) << Msg;
  }
}

TEST(CudaGpu, ReplaysACapturedGraph) {
  REQUIRE_GPU();
  Gpu &G = Gpu::get();
  std::shared_ptr<Module> M = G.loadModule({scale2Image()});
  KernelHandle F = M->function("scale2");
  Scale2Args A(G, 300);
  std::vector<float> In(A.N), Out(A.N);
  std::iota(In.begin(), In.end(), 1.0f);
  size_t Bytes = A.N * sizeof(float);
  G.copyHostToDevice(A.In->data(), In.data(), Bytes);
  G.synchronize();

  // in = 2 * in, recorded without running.
  G.beginCapture();
  G.launch(F, A.grid(128), 128, A.Args);
  G.copyDeviceToDevice(A.In->data(), A.Out->data(), Bytes);
  GraphHandle Graph = G.endCapture();
  ASSERT_NE(Graph, nullptr);
  G.copyDeviceToHost(Out.data(), A.In->data(), Bytes);
  EXPECT_TRUE(Out == In) << "captured work ran";

  for (int I = 0; I < 3; ++I)
    G.launchGraph(Graph);
  G.copyDeviceToHost(Out.data(), A.In->data(), Bytes);
  G.destroyGraph(Graph);
  for (uint32_t I = 0; I < A.N; ++I)
    ASSERT_EQ(Out[I], In[I] * 8) << "at " << I;
}

} // namespace
