//===- GpuLibraryKernels.cc - cuBLAS and cuDNN in place of the anchors ----===//
//
// Library kernels (KernelInfo::libraryFor) on the GPU: cuda.conv (cuDNN),
// cuda.dense and cuda.matmul (cuBLAS). For a GPU target the VM compiler
// calls them in place of a float32 anchor whose fused group it splits into
// the library call and a generated epilogue (vm/compiler/InlinePrimitives),
// with their tensors on the GPU. Where the library is absent or declines a
// case (another dtype, asymmetric pads, extents over 32 bits) they run the
// operator's reference kernel on host copies: slow, but the same result.
// The "allow_tf32" attribute (`--allow-tf32`) lets the libraries use TF32
// tensor cores; without it they compute in float32.
//
//===----------------------------------------------------------------------===//
#include "kernels/AttrSchema.h"
#include "kernels/Kernel.h"
#include "kernels/WindowGeometry.h"
#include "vm/cuda/Cublas.h"
#include "vm/cuda/Cudnn.h"
#include "vm/cuda/Gpu.h"

#include <algorithm>

namespace rivet::vm::cuda {
namespace {

/// A library kernel here: Run computes the operator on the GPU into the
/// preallocated Out, or returns false (nothing queued).
struct GpuOp {
  const char *Name, *Op;
  bool (*Run)(const std::vector<Tensor> &In, const Attrs &A, Tensor &Out,
              bool AllowTf32);
};

template <const GpuOp &D> const KernelInfo &hostReference() {
  static const KernelInfo &K = KernelRegistry::global().get(D.Op);
  return K;
}

template <const GpuOp &D>
std::vector<TensorMeta> gpuOpShape(const std::vector<Tensor> &In,
                                   const Attrs &A) {
  return hostReference<D>().shapeFn(In, A);
}

/// T's copy on the host (T is on the GPU).
Tensor hostCopy(const Tensor &T) {
  Tensor H = Tensor::empty(T.shape(), T.dtype());
  Gpu::get().copyDeviceToHost(H.rawData(), T.rawData(), T.nbytes());
  return H;
}

/// K's reference kernel on host copies of In, its results copied into Out.
void onHost(const KernelInfo &K, const std::vector<Tensor> &In,
            std::vector<Tensor> &Out, const Attrs &A) {
  std::vector<Tensor> HostIn, HostOut;
  for (const Tensor &T : In)
    HostIn.push_back(hostCopy(T));
  for (const Tensor &T : Out)
    HostOut.push_back(Tensor::empty(T.shape(), T.dtype()));
  K.kernel(HostIn, HostOut, A);
  for (size_t I = 0; I < Out.size(); ++I)
    Gpu::get().copyHostToDevice(Out[I].rawData(), HostOut[I].rawData(),
                                Out[I].nbytes());
  // The host buffers die now: wait until the copies have read them.
  Gpu::get().synchronize();
}

template <const GpuOp &D>
void gpuOpKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &A) {
  bool Float32 = Out.size() == 1 && Out[0].dtype() == DType::Float32 &&
                 std::all_of(In.begin(), In.end(), [](const Tensor &T) {
                   return T.dtype() == DType::Float32;
                 });
  bool Tf32 = A.getInt("allow_tf32", 0) != 0;
  if (!Float32 || !D.Run(In, A, Out[0], Tf32))
    onHost(hostReference<D>(), In, Out, A);
}

const float *floats(const Tensor &T) { return T.data<float>(); }

/// conv(x, w[, b]): cuDNN, pads resolved from auto_pad as the reference
/// kernel does (WindowGeometry.h).
bool convCudnn(const std::vector<Tensor> &In, const Attrs &A, Tensor &Out,
               bool AllowTf32) {
  const Tensor &X = In[0], &W = In[1];
  if (In.size() < 2 || In.size() > 3 || X.rank() < 3 || W.rank() != X.rank())
    return false;
  size_t R = (size_t)X.rank() - 2;
  OpAttrs Conv("conv", A);
  ConvProblem P;
  P.x = X.shape();
  P.w = W.shape();
  P.y = Out.shape();
  P.group = Conv.getInt("group");
  P.strides = windowInts("conv", A, "strides", R, 1, 1);
  P.dilations = windowInts("conv", A, "dilations", R, 1, 1);
  std::vector<int64_t> Pads = windowInts("conv", A, "pads", 2 * R, 0, 0);
  std::optional<AutoPad> Mode = parseAutoPad(Conv.getString("auto_pad"));
  if (!Mode)
    return false;
  for (size_t I = 0; I < R; ++I) {
    WindowAxis<ConstArith> G = windowAxis<ConstArith>(
        P.x[I + 2], P.w[I + 2], P.strides[I], P.dilations[I], Pads[I],
        Pads[I + R], *Mode, /*Ceil=*/false);
    P.padBegin.push_back(G.padBegin);
    P.padEnd.push_back(G.padEnd);
  }
  return convolution(P, floats(X), floats(W),
                     In.size() == 3 ? floats(In[2]) : nullptr,
                     Out.data<float>(), AllowTf32);
}

/// dense(x [..., K], w [N, K]) = x w^T: one product of every row of x.
bool denseCublas(const std::vector<Tensor> &In, const Attrs &, Tensor &Out,
                 bool AllowTf32) {
  const Tensor &X = In[0], &W = In[1];
  if (In.size() != 2 || X.rank() < 1 || W.rank() != 2)
    return false;
  GemmBatch G;
  G.k = X.shape().back();
  G.n = W.shape()[0];
  G.m = X.numel() / std::max<int64_t>(G.k, 1);
  if (G.k == 0)
    return false; // the reference writes the zeros
  G.a = floats(X);
  G.lda = G.k;
  G.b = floats(W);
  G.ldb = G.k;
  G.transB = true;
  G.c = Out.data<float>();
  G.ldc = G.n;
  return gemm(G, AllowTf32);
}

/// The stride between the matrices of a batch operand whose batch shape is
/// Own within the broadcast batch Batch: the matrix size when it has the
/// whole batch, 0 when it has one matrix; nothing when it broadcasts along
/// some axes only.
std::optional<int64_t> uniformBatchStride(const Shape &Own, const Shape &Batch,
                                          int64_t MatrixSize) {
  int64_t N = 1;
  for (int64_t E : Own)
    N *= E;
  if (N == 1)
    return 0;
  Shape Padded(Batch.size() - std::min(Batch.size(), Own.size()), 1);
  Padded.insert(Padded.end(), Own.begin(), Own.end());
  if (Padded == Batch)
    return MatrixSize;
  return std::nullopt;
}

/// matmul with NumPy semantics: a vector operand is a one-row (a) or
/// one-column (b) matrix; batch axes broadcast. One strided batched product
/// when each operand has one matrix or the whole batch.
bool matmulCublas(const std::vector<Tensor> &In, const Attrs &, Tensor &Out,
                  bool AllowTf32) {
  const Tensor &A = In[0], &B = In[1];
  if (In.size() != 2 || A.rank() < 1 || B.rank() < 1)
    return false;
  const Shape &SA = A.shape(), &SB = B.shape();
  GemmBatch G;
  G.m = SA.size() == 1 ? 1 : SA[SA.size() - 2];
  G.k = SA.back();
  G.n = SB.size() == 1 ? 1 : SB.back();
  if (G.k == 0)
    return false;
  Shape BatchA(SA.begin(), SA.end() - (SA.size() == 1 ? 1 : 2));
  Shape BatchB(SB.begin(), SB.end() - (SB.size() == 1 ? 1 : 2));
  Shape Batch(std::max(BatchA.size(), BatchB.size()), 1);
  auto Merge = [&](const Shape &S) {
    for (size_t I = 0; I < S.size(); ++I) {
      int64_t &D = Batch[Batch.size() - S.size() + I];
      D = D == 1 ? S[I] : D;
    }
  };
  Merge(BatchA);
  Merge(BatchB);
  std::optional<int64_t> StrideA = uniformBatchStride(BatchA, Batch, G.m * G.k);
  std::optional<int64_t> StrideB = uniformBatchStride(BatchB, Batch, G.k * G.n);
  if (!StrideA || !StrideB)
    return false;
  G.batch = 1;
  for (int64_t E : Batch)
    G.batch *= E;
  G.a = floats(A);
  G.lda = G.k;
  G.strideA = *StrideA;
  G.b = floats(B);
  G.ldb = G.n;
  G.strideB = *StrideB;
  G.c = Out.data<float>();
  G.ldc = G.n;
  G.strideC = G.m * G.n;
  return gemm(G, AllowTf32);
}

constexpr GpuOp ConvOp{"cuda.conv", "conv", convCudnn};
constexpr GpuOp DenseOp{"cuda.dense", "dense", denseCublas};
constexpr GpuOp MatMulOp{"cuda.matmul", "matmul", matmulCublas};

} // namespace

RIVET_REGISTER_DEVICE_LIBRARY_KERNEL(ConvOp.Name, ConvOp.Op, Device::CUDA,
                                     gpuOpKernel<ConvOp>, gpuOpShape<ConvOp>);
RIVET_REGISTER_DEVICE_LIBRARY_KERNEL(DenseOp.Name, DenseOp.Op, Device::CUDA,
                                     gpuOpKernel<DenseOp>, gpuOpShape<DenseOp>);
RIVET_REGISTER_DEVICE_LIBRARY_KERNEL(MatMulOp.Name, MatMulOp.Op, Device::CUDA,
                                     gpuOpKernel<MatMulOp>,
                                     gpuOpShape<MatMulOp>);

} // namespace rivet::vm::cuda
