//===- Cublas.cc - Matrix products on the GPU through cuBLAS --------------===//
//
// One cuBLAS handle for the process, bound to the GPU's stream, with a
// workspace from the caching allocator (so that no call allocates, which a
// CUDA graph capture forbids). Calls are serialized: they change the
// handle's math mode.
//
//===----------------------------------------------------------------------===//
#include "vm/cuda/Cublas.h"

#include "kernels/Error.h"
#include "kernels/Tensor.h"
#include "vm/cuda/Gpu.h"
#include "vm/cuda/SharedLibrary.h"

#include <climits>
#include <memory>
#include <mutex>
#include <vector>

namespace rivet::vm::cuda {
namespace {

// cublas_api.h of CUDA 13: the types and enum values used here.
using cublasStatus_t = int;
using cublasHandle_t = struct cublasContext *;
using cublasOperation_t = int;
using cublasMath_t = int;
constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
constexpr cublasOperation_t CUBLAS_OP_N = 0, CUBLAS_OP_T = 1;
constexpr cublasMath_t CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3;

struct CublasApi {
  cublasStatus_t (*create)(cublasHandle_t *);
  cublasStatus_t (*setStream)(cublasHandle_t, void *);
  cublasStatus_t (*setWorkspace)(cublasHandle_t, void *, size_t);
  cublasStatus_t (*setMathMode)(cublasHandle_t, cublasMath_t);
  const char *(*statusString)(cublasStatus_t);
  cublasStatus_t (*sgemmStridedBatched)(cublasHandle_t, cublasOperation_t,
                                        cublasOperation_t, int, int, int,
                                        const float *, const float *, int,
                                        long long, const float *, int,
                                        long long, const float *, float *, int,
                                        long long, int);
};

/// Workspace for cuBLAS's split-K and the like (its documentation suggests
/// 32 MiB on Hopper).
constexpr size_t kWorkspaceBytes = 32u << 20;

struct Blas {
  CublasApi Api{};
  bool Resolved = false; // the library loaded with every function
  cublasHandle_t Handle = nullptr;
  std::shared_ptr<Storage> Workspace;
  std::string Why; // when unusable
  std::mutex Lock;
};

bool resolveAll(void *L, CublasApi &A, std::string &Why) {
  const char *N = "libcublas";
  return resolveSymbol(L, N, "cublasCreate_v2", A.create, Why) &&
         resolveSymbol(L, N, "cublasSetStream_v2", A.setStream, Why) &&
         resolveSymbol(L, N, "cublasSetWorkspace_v2", A.setWorkspace, Why) &&
         resolveSymbol(L, N, "cublasSetMathMode", A.setMathMode, Why) &&
         resolveSymbol(L, N, "cublasGetStatusString", A.statusString, Why) &&
         resolveSymbol(L, N, "cublasSgemmStridedBatched", A.sgemmStridedBatched,
                       Why);
}

void checkBlas(const Blas &B, cublasStatus_t S, const char *Call) {
  if (S != CUBLAS_STATUS_SUCCESS)
    fail("cuBLAS error in {}: {}", Call,
         B.Api.statusString ? B.Api.statusString(S) : "unknown");
}

/// Loaded and set up on first use; leaked (handles may be used at exit).
Blas &blas() {
  static std::once_flag Once;
  static Blas *B = nullptr;
  std::call_once(Once, [] {
    auto *New = new Blas;
    B = New;
    void *L = openLibrary({"libcublas.so.13", "libcublas.so.12"}, New->Why);
    New->Resolved = L && resolveAll(L, New->Api, New->Why);
    if (!New->Resolved || !available(&New->Why))
      return;
    try {
      Gpu &G = Gpu::get();
      cublasHandle_t H = nullptr;
      checkBlas(*New, New->Api.create(&H), "cublasCreate");
      checkBlas(*New, New->Api.setStream(H, G.stream()), "cublasSetStream");
      New->Workspace = G.allocate(kWorkspaceBytes);
      checkBlas(
          *New,
          New->Api.setWorkspace(H, New->Workspace->data(), kWorkspaceBytes),
          "cublasSetWorkspace");
      New->Handle = H;
    } catch (const Error &E) {
      New->Why = E.what();
    }
  });
  return *B;
}

bool fitsInt(int64_t V) { return V >= 0 && V <= INT_MAX; }

} // namespace

bool cublasLibraryResolves(std::string *Why) {
  Blas &B = blas();
  if (!B.Resolved && Why)
    *Why = B.Why;
  return B.Resolved;
}

bool cublasAvailable(std::string *Why) {
  Blas &B = blas();
  if (!B.Handle && Why)
    *Why = B.Why;
  return B.Handle != nullptr;
}

bool gemm(const GemmBatch &G, bool AllowTf32) {
  Blas &B = blas();
  if (!B.Handle)
    return false;
  for (int64_t V : {G.m, G.n, G.k, G.batch, G.lda, G.ldb, G.ldc})
    if (!fitsInt(V))
      return false;
  if (G.m == 0 || G.n == 0 || G.batch == 0)
    return true;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a
  // row-major matrix read column-major is its transpose: so B comes first,
  // transposed by cuBLAS exactly when it is stored transposed.
  auto Word = [](const void *P) { return (uint64_t)(uintptr_t)P; };
  std::vector<uint64_t> Signature = {'G',
                                     (uint64_t)G.m,
                                     (uint64_t)G.n,
                                     (uint64_t)G.k,
                                     (uint64_t)G.batch,
                                     Word(G.a),
                                     (uint64_t)G.lda,
                                     (uint64_t)G.strideA,
                                     G.transA,
                                     Word(G.b),
                                     (uint64_t)G.ldb,
                                     (uint64_t)G.strideB,
                                     G.transB,
                                     Word(G.c),
                                     (uint64_t)G.ldc,
                                     (uint64_t)G.strideC,
                                     AllowTf32};
  Gpu::get().enqueue(std::move(Signature), [&B, G, AllowTf32] {
    const float One = 1.0f, Zero = 0.0f;
    std::lock_guard<std::mutex> Hold(B.Lock);
    checkBlas(B,
              B.Api.setMathMode(B.Handle, AllowTf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                    : CUBLAS_DEFAULT_MATH),
              "cublasSetMathMode");
    checkBlas(B,
              B.Api.sgemmStridedBatched(
                  B.Handle, G.transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                  G.transA ? CUBLAS_OP_T : CUBLAS_OP_N, (int)G.n, (int)G.m,
                  (int)G.k, &One, G.b, (int)G.ldb, G.strideB, G.a, (int)G.lda,
                  G.strideA, &Zero, G.c, (int)G.ldc, G.strideC, (int)G.batch),
              "cublasSgemmStridedBatched");
  });
  return true;
}

} // namespace rivet::vm::cuda
