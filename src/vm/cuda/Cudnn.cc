//===- Cudnn.cc - Convolutions on the GPU through cuDNN -------------------===//
//
// One cuDNN handle for the process, bound to the GPU's stream; calls are
// serialized (a handle must not be used by two threads at once). Each
// distinct problem keeps its descriptors and chosen algorithm, so a call in
// steady state is one cudnnConvolutionForward (plus cudnnAddTensor for a
// bias) with a workspace from the caching allocator.
//
//===----------------------------------------------------------------------===//
#include "vm/cuda/Cudnn.h"

#include "kernels/Error.h"
#include "kernels/Tensor.h"
#include "vm/cuda/Gpu.h"
#include "vm/cuda/SharedLibrary.h"

#include <climits>
#include <map>
#include <memory>
#include <mutex>

namespace rivet::vm::cuda {
namespace {

// cudnn_graph.h, cudnn_ops.h and cudnn_cnn.h of cuDNN 9: the types and enum
// values used here.
using cudnnStatus_t = int;
using cudnnHandle_t = struct cudnnContext *;
using cudnnTensorDescriptor_t = struct cudnnTensorStruct *;
using cudnnFilterDescriptor_t = struct cudnnFilterStruct *;
using cudnnConvolutionDescriptor_t = struct cudnnConvolutionStruct *;
constexpr cudnnStatus_t CUDNN_STATUS_SUCCESS = 0;
constexpr int CUDNN_DATA_FLOAT = 0;
constexpr int CUDNN_TENSOR_NCHW = 0;
constexpr int CUDNN_CROSS_CORRELATION = 1;
constexpr int CUDNN_DEFAULT_MATH = 0, CUDNN_FMA_MATH = 3;
constexpr int CUDNN_CONVOLUTION_FWD_ALGO_FFT = 4,
              CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING = 5,
              CUDNN_CONVOLUTION_FWD_ALGO_COUNT = 8;

struct AlgoPerf { // cudnnConvolutionFwdAlgoPerf_t
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};

struct CudnnApi {
  cudnnStatus_t (*create)(cudnnHandle_t *);
  cudnnStatus_t (*setStream)(cudnnHandle_t, void *);
  const char *(*errorString)(cudnnStatus_t);
  cudnnStatus_t (*createTensor)(cudnnTensorDescriptor_t *);
  cudnnStatus_t (*setTensorNd)(cudnnTensorDescriptor_t, int, int, const int *,
                               const int *);
  cudnnStatus_t (*createFilter)(cudnnFilterDescriptor_t *);
  cudnnStatus_t (*setFilterNd)(cudnnFilterDescriptor_t, int, int, int,
                               const int *);
  cudnnStatus_t (*createConv)(cudnnConvolutionDescriptor_t *);
  cudnnStatus_t (*setConvNd)(cudnnConvolutionDescriptor_t, int, const int *,
                             const int *, const int *, int, int);
  cudnnStatus_t (*setGroupCount)(cudnnConvolutionDescriptor_t, int);
  cudnnStatus_t (*setMathType)(cudnnConvolutionDescriptor_t, int);
  cudnnStatus_t (*findForward)(cudnnHandle_t, cudnnTensorDescriptor_t,
                               cudnnFilterDescriptor_t,
                               cudnnConvolutionDescriptor_t,
                               cudnnTensorDescriptor_t, int, int *, AlgoPerf *);
  cudnnStatus_t (*heuristicForward)(cudnnHandle_t, cudnnTensorDescriptor_t,
                                    cudnnFilterDescriptor_t,
                                    cudnnConvolutionDescriptor_t,
                                    cudnnTensorDescriptor_t, int, int *,
                                    AlgoPerf *);
  cudnnStatus_t (*workspaceSize)(cudnnHandle_t, cudnnTensorDescriptor_t,
                                 cudnnFilterDescriptor_t,
                                 cudnnConvolutionDescriptor_t,
                                 cudnnTensorDescriptor_t, int, size_t *);
  cudnnStatus_t (*forward)(cudnnHandle_t, const void *, cudnnTensorDescriptor_t,
                           const void *, cudnnFilterDescriptor_t, const void *,
                           cudnnConvolutionDescriptor_t, int, void *, size_t,
                           const void *, cudnnTensorDescriptor_t, void *);
  cudnnStatus_t (*addTensor)(cudnnHandle_t, const void *,
                             cudnnTensorDescriptor_t, const void *,
                             const void *, cudnnTensorDescriptor_t, void *);
};

bool resolveAll(void *L, CudnnApi &A, std::string &Why) {
  const char *N = "libcudnn";
  return resolveSymbol(L, N, "cudnnCreate", A.create, Why) &&
         resolveSymbol(L, N, "cudnnSetStream", A.setStream, Why) &&
         resolveSymbol(L, N, "cudnnGetErrorString", A.errorString, Why) &&
         resolveSymbol(L, N, "cudnnCreateTensorDescriptor", A.createTensor,
                       Why) &&
         resolveSymbol(L, N, "cudnnSetTensorNdDescriptor", A.setTensorNd,
                       Why) &&
         resolveSymbol(L, N, "cudnnCreateFilterDescriptor", A.createFilter,
                       Why) &&
         resolveSymbol(L, N, "cudnnSetFilterNdDescriptor", A.setFilterNd,
                       Why) &&
         resolveSymbol(L, N, "cudnnCreateConvolutionDescriptor", A.createConv,
                       Why) &&
         resolveSymbol(L, N, "cudnnSetConvolutionNdDescriptor", A.setConvNd,
                       Why) &&
         resolveSymbol(L, N, "cudnnSetConvolutionGroupCount", A.setGroupCount,
                       Why) &&
         resolveSymbol(L, N, "cudnnSetConvolutionMathType", A.setMathType,
                       Why) &&
         resolveSymbol(L, N, "cudnnFindConvolutionForwardAlgorithm",
                       A.findForward, Why) &&
         resolveSymbol(L, N, "cudnnGetConvolutionForwardAlgorithm_v7",
                       A.heuristicForward, Why) &&
         resolveSymbol(L, N, "cudnnGetConvolutionForwardWorkspaceSize",
                       A.workspaceSize, Why) &&
         resolveSymbol(L, N, "cudnnConvolutionForward", A.forward, Why) &&
         resolveSymbol(L, N, "cudnnAddTensor", A.addTensor, Why);
}

/// A problem's descriptors and algorithm (never destroyed: few per model).
struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  size_t workspace = 0;
  /// The plan's own workspace, kept: a CUDA graph that captured a call
  /// reads and writes it again on every replay.
  std::shared_ptr<Storage> work;
  bool usable = false; // false: cuDNN has no algorithm for it
};

struct Dnn {
  CudnnApi Api{};
  bool Resolved = false;
  cudnnHandle_t Handle = nullptr;
  std::string Why;
  std::mutex Lock;
  std::map<std::vector<int64_t>, Plan> Plans;
};

void checkDnn(const Dnn &D, cudnnStatus_t S, const char *Call) {
  if (S != CUDNN_STATUS_SUCCESS)
    fail("cuDNN error in {}: {}", Call,
         D.Api.errorString ? D.Api.errorString(S) : "unknown");
}

Dnn &dnn() {
  static std::once_flag Once;
  static Dnn *D = nullptr;
  std::call_once(Once, [] {
    auto *New = new Dnn;
    D = New;
    void *L = openLibrary({"libcudnn.so.9"}, New->Why);
    New->Resolved = L && resolveAll(L, New->Api, New->Why);
    if (!New->Resolved || !available(&New->Why))
      return;
    try {
      Gpu &G = Gpu::get();
      cudnnHandle_t H = nullptr;
      checkDnn(*New, New->Api.create(&H), "cudnnCreate");
      checkDnn(*New, New->Api.setStream(H, G.stream()), "cudnnSetStream");
      New->Handle = H;
    } catch (const Error &E) {
      New->Why = E.what();
    }
  });
  return *D;
}

/// Packed strides of Dims.
std::vector<int> packedStrides(const std::vector<int> &Dims) {
  std::vector<int> S(Dims.size(), 1);
  for (size_t I = Dims.size() - 1; I-- > 0;)
    S[I] = S[I + 1] * Dims[I + 1];
  return S;
}

/// The first of Candidates (sorted best first) that computes in float32
/// (or TF32 when allowed), is not an FFT and ran; null when none.
const AlgoPerf *pickAlgorithm(const AlgoPerf *Candidates, int N,
                              bool AllowTf32) {
  for (int I = 0; I < N; ++I) {
    const AlgoPerf &P = Candidates[I];
    if (P.status != CUDNN_STATUS_SUCCESS ||
        P.algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT ||
        P.algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
        P.memory > (size_t(1) << 30))
      continue;
    if (!AllowTf32 && P.mathType != CUDNN_FMA_MATH)
      continue;
    return &P;
  }
  return nullptr;
}

/// Makes the plan of P (4 or 5 dimensions; a 1-D convolution gets a unit
/// height). Dims are checked to fit in int by the caller.
void makePlan(Dnn &D, const ConvProblem &P, bool AllowTf32, Plan &Out) {
  const CudnnApi &A = D.Api;
  bool OneD = P.x.size() == 3;
  auto Dims = [&](const std::vector<int64_t> &V) {
    std::vector<int> R(V.begin(), V.end());
    if (OneD)
      R.insert(R.begin() + 2, 1);
    return R;
  };
  auto Spatial = [&](const std::vector<int64_t> &V, int Unit) {
    std::vector<int> R(V.begin(), V.end());
    if (OneD)
      R.insert(R.begin(), Unit);
    return R;
  };
  std::vector<int> X = Dims(P.x), W = Dims(P.w), Y = Dims(P.y);
  int Nb = (int)X.size();
  checkDnn(D, A.createTensor(&Out.x), "cudnnCreateTensorDescriptor");
  checkDnn(D, A.createTensor(&Out.y), "cudnnCreateTensorDescriptor");
  checkDnn(D, A.createTensor(&Out.bias), "cudnnCreateTensorDescriptor");
  checkDnn(D, A.createFilter(&Out.w), "cudnnCreateFilterDescriptor");
  checkDnn(D, A.createConv(&Out.conv), "cudnnCreateConvolutionDescriptor");
  checkDnn(D,
           A.setTensorNd(Out.x, CUDNN_DATA_FLOAT, Nb, X.data(),
                         packedStrides(X).data()),
           "cudnnSetTensorNdDescriptor");
  checkDnn(D,
           A.setTensorNd(Out.y, CUDNN_DATA_FLOAT, Nb, Y.data(),
                         packedStrides(Y).data()),
           "cudnnSetTensorNdDescriptor");
  std::vector<int> B(X.size(), 1);
  B[1] = Y[1];
  checkDnn(D,
           A.setTensorNd(Out.bias, CUDNN_DATA_FLOAT, Nb, B.data(),
                         packedStrides(B).data()),
           "cudnnSetTensorNdDescriptor");
  checkDnn(
      D,
      A.setFilterNd(Out.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, Nb, W.data()),
      "cudnnSetFilterNdDescriptor");
  std::vector<int> Pads = Spatial(P.padBegin, 0),
                   Strides = Spatial(P.strides, 1),
                   Dilations = Spatial(P.dilations, 1);
  checkDnn(D,
           A.setConvNd(Out.conv, Nb - 2, Pads.data(), Strides.data(),
                       Dilations.data(), CUDNN_CROSS_CORRELATION,
                       CUDNN_DATA_FLOAT),
           "cudnnSetConvolutionNdDescriptor");
  checkDnn(D, A.setGroupCount(Out.conv, (int)P.group),
           "cudnnSetConvolutionGroupCount");
  checkDnn(
      D,
      A.setMathType(Out.conv, AllowTf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
      "cudnnSetConvolutionMathType");
  // Timed candidates first (they run the convolution on scratch memory
  // cuDNN allocates itself), then the heuristics' ranking.
  AlgoPerf Perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {};
  int N = 0;
  const AlgoPerf *Best = nullptr;
  if (A.findForward(D.Handle, Out.x, Out.w, Out.conv, Out.y,
                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &N,
                    Perf) == CUDNN_STATUS_SUCCESS)
    Best = pickAlgorithm(Perf, N, AllowTf32);
  if (!Best && A.heuristicForward(D.Handle, Out.x, Out.w, Out.conv, Out.y,
                                  CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &N,
                                  Perf) == CUDNN_STATUS_SUCCESS)
    Best = pickAlgorithm(Perf, N, AllowTf32);
  if (!Best)
    return;
  checkDnn(D, A.setMathType(Out.conv, Best->mathType),
           "cudnnSetConvolutionMathType");
  checkDnn(D,
           A.workspaceSize(D.Handle, Out.x, Out.w, Out.conv, Out.y, Best->algo,
                           &Out.workspace),
           "cudnnGetConvolutionForwardWorkspaceSize");
  if (Out.workspace)
    Out.work = Gpu::get().allocate(Out.workspace);
  Out.algo = Best->algo;
  Out.usable = true;
}

} // namespace

bool cudnnLibraryResolves(std::string *Why) {
  Dnn &D = dnn();
  if (!D.Resolved && Why)
    *Why = D.Why;
  return D.Resolved;
}

bool cudnnAvailable(std::string *Why) {
  Dnn &D = dnn();
  if (!D.Handle && Why)
    *Why = D.Why;
  return D.Handle != nullptr;
}

bool convolution(const ConvProblem &P, const float *X, const float *W,
                 const float *Bias, float *Y, bool AllowTf32) {
  Dnn &D = dnn();
  size_t Rank = P.x.size();
  size_t R = Rank - 2;
  if (!D.Handle || Rank < 3 || Rank > 5 || P.w.size() != Rank ||
      P.y.size() != Rank || P.strides.size() != R || P.dilations.size() != R ||
      P.padBegin.size() != R || P.padEnd.size() != R || P.group < 1 ||
      P.group > INT_MAX)
    return false;
  for (const std::vector<int64_t> *V :
       {&P.x, &P.w, &P.y, &P.strides, &P.dilations, &P.padBegin})
    for (int64_t E : *V)
      if (E < 0 || E > INT_MAX)
        return false;
  for (size_t I = 0; I < R; ++I)
    if (P.padBegin[I] != P.padEnd[I])
      return false; // cuDNN pads both ends alike
  int64_t Elements = 1;
  for (int64_t E : P.y)
    Elements *= E;
  if (Elements == 0)
    return true;
  // The key: every extent and parameter, and the math allowed.
  std::vector<int64_t> Key;
  for (const std::vector<int64_t> *V :
       {&P.x, &P.w, &P.y, &P.strides, &P.dilations, &P.padBegin})
    Key.insert(Key.end(), V->begin(), V->end());
  Key.push_back(P.group);
  Key.push_back(AllowTf32);
  Gpu &G = Gpu::get();
  const Plan *Pl = nullptr;
  {
    // Timing the algorithms runs convolutions on the stream: nothing else
    // may be queued or captured meanwhile (lock order: stream, then cuDNN).
    auto Stream = G.lockStream();
    std::lock_guard<std::mutex> Hold(D.Lock);
    auto [It, New] = D.Plans.try_emplace(Key);
    if (New)
      makePlan(D, P, AllowTf32, It->second);
    Pl = &It->second; // map nodes stay where they are
  }
  if (!Pl->usable)
    return false;
  auto Word = [](const void *Ptr) { return (uint64_t)(uintptr_t)Ptr; };
  G.enqueue({'C', Word(Pl), Word(X), Word(W), Word(Bias), Word(Y)}, [&D, Pl, X,
                                                                     W, Bias,
                                                                     Y] {
    const float One = 1.0f, Zero = 0.0f;
    std::lock_guard<std::mutex> Hold(D.Lock);
    checkDnn(D,
             D.Api.forward(D.Handle, &One, Pl->x, X, Pl->w, W, Pl->conv,
                           Pl->algo, Pl->work ? Pl->work->data() : nullptr,
                           Pl->workspace, &Zero, Pl->y, Y),
             "cudnnConvolutionForward");
    if (Bias)
      checkDnn(D,
               D.Api.addTensor(D.Handle, &One, Pl->bias, Bias, &One, Pl->y, Y),
               "cudnnAddTensor");
  });
  return true;
}

} // namespace rivet::vm::cuda
