//===- FastLayerNorm.cc - float32 layer_norm, a row in one pass -----------===//
//
// Library kernel cpu.layer_norm (KernelInfo::libraryFor): the VM calls it in
// place of the reference kernel (ops/NN.cc: every value converted to double,
// buffers allocated per call). Here, for float32 x, scale and bias over the
// whole normalized block and no statistics returned: each row's mean and
// variance in float32 (two passes over the row, which stays in L1), then y = (x
// - mean) / sqrt(var + epsilon) * scale + bias, in vectors of eight; rows in
// parallel when there are enough of them. Anything else runs the reference
// kernel.
//
//===----------------------------------------------------------------------===//
#include "kernels/HostIsa.h"
#include "kernels/NativeKernelAbi.h"
#include "kernels/Threading.h"
#include "kernels/ops/KernelUtil.h"

#include <cmath>
#include <utility>

namespace rivet::kernels {
namespace {

constexpr const char *LayerNormOp = "layer_norm";

/// Elements a thread's share of the rows should have at least.
constexpr int64_t kRowsChunkElements = 16384;

/// What a part of the rows reads and writes.
struct Rows {
  const float *x, *scale, *bias;
  float *y;
  int64_t n; // elements per row
  float epsilon;
};

// normalizeRows (FastLayerNormRows.inc) compiled for AVX-512 (16 floats a
// vector), AVX2 (8) and the baseline (4); hostIsa() picks.
namespace ln_base {
#define RIVET_LN_VECTOR_BYTES 16
#include "kernels/cpu/FastLayerNormRows.inc"
#undef RIVET_LN_VECTOR_BYTES
} // namespace ln_base
#if defined(__x86_64__)
RIVET_BEGIN_TARGET_AVX2
namespace ln_avx2 {
#define RIVET_LN_VECTOR_BYTES 32
#include "kernels/cpu/FastLayerNormRows.inc"
#undef RIVET_LN_VECTOR_BYTES
} // namespace ln_avx2
RIVET_END_TARGET
RIVET_BEGIN_TARGET_AVX512
namespace ln_avx512 {
#define RIVET_LN_VECTOR_BYTES 64
#include "kernels/cpu/FastLayerNormRows.inc"
#undef RIVET_LN_VECTOR_BYTES
} // namespace ln_avx512
RIVET_END_TARGET
#endif

RivetParallelBody rowsBody() {
#if defined(__x86_64__)
  switch (cpu::hostIsa()) {
  case cpu::CpuIsa::Avx512: return ln_avx512::normalizeRows;
  case cpu::CpuIsa::Avx2: return ln_avx2::normalizeRows;
  case cpu::CpuIsa::Base: break;
  }
#endif
  return ln_base::normalizeRows;
}

/// layer_norm's reference kernel, looked up once (the registry's lookup
/// takes its lock).
const KernelInfo &referenceLayerNorm() {
  static const KernelInfo &K = KernelRegistry::global().get(LayerNormOp);
  return K;
}

void fastLayerNormKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &A) {
  const KernelInfo &Reference = referenceLayerNorm();
  bool Fast = (In.size() == 2 || In.size() == 3) && Out.size() == 1 &&
              In[0].rank() >= 1;
  for (const Tensor &T : In)
    Fast = Fast && T.dtype() == DType::Float32 && T.hasData();
  int64_t Axis = Fast ? attrInt(LayerNormOp, A, "axis") : 0;
  const int64_t Rank = Fast ? In[0].rank() : 0;
  Fast = Fast && Axis >= -Rank && Axis < Rank;
  if (Fast && Axis < 0)
    Axis += Rank;
  const int64_t N =
      Fast ? prodRange(In[0].shape(), (size_t)Axis, (size_t)Rank) : 0;
  // Scale and bias of the whole normalized block (broadcast ones: the
  // reference).
  for (size_t I = 1; Fast && I < In.size(); ++I)
    Fast = In[I].numel() == N && In[I].rank() <= Rank - Axis;
  if (!Fast || Out[0].shape() != In[0].shape()) {
    Reference.kernel(In, Out, A);
    return;
  }
  Rows R{In[0].data<float>(),
         In[1].data<float>(),
         In.size() == 3 ? In[2].data<float>() : nullptr,
         Out[0].data<float>(),
         N,
         (float)attrFloat(LayerNormOp, A, "epsilon")};
  const int64_t NumRows = N ? In[0].numel() / N : 0;
  kernelRuntime().parallelFor(
      NumRows,
      std::max<int64_t>(1, kRowsChunkElements / std::max<int64_t>(N, 1)), &R,
      rowsBody());
}

std::vector<TensorMeta> fastLayerNormShape(const std::vector<Tensor> &In,
                                           const Attrs &A) {
  return referenceLayerNorm().shapeFn(In, A);
}

} // namespace

RIVET_REGISTER_LIBRARY_KERNEL("cpu.layer_norm", "layer_norm",
                              fastLayerNormKernel, fastLayerNormShape);

} // namespace rivet::kernels
