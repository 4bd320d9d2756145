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
#include "kernels/Threading.h"
#include "kernels/ops/KernelUtil.h"

#include <cmath>

namespace rivet::kernels {
namespace {

constexpr const char *LayerNormOp = "layer_norm";

/// Elements a thread's share of the rows should have at least.
constexpr int64_t kRowsChunkElements = 16384;

/// Four floats, loaded and stored in place (any alignment): the row loops
/// in vectors of the baseline's registers, two at a time, where GCC's -O2
/// left the runtime-length loops scalar (and 32-byte vectors, two SSE
/// registers each, went through the stack).
typedef float F4 __attribute__((vector_size(16), aligned(4), may_alias));

struct Rows {
  const float *x, *scale, *bias;
  float *y;
  int64_t n; // elements per row
  float epsilon;
};

void normalizeRows(void *Closure, int64_t Begin, int64_t End) {
  const Rows &R = *static_cast<const Rows *>(Closure);
  const int64_t N = R.n, Whole = N - N % 8;
  auto At = [](const float *P) -> const F4 & {
    return *reinterpret_cast<const F4 *>(P);
  };
  auto Total = [](F4 A, F4 B) {
    return (A[0] + A[1]) + (A[2] + A[3]) + ((B[0] + B[1]) + (B[2] + B[3]));
  };
  for (int64_t Row = Begin; Row < End; ++Row) {
    const float *X = R.x + Row * N;
    float *Y = R.y + Row * N;
    // Mean, then the mean square of the deviations (two passes, as the
    // reference: one pass of sum and sum of squares loses digits).
    F4 A0 = {}, A1 = {};
    for (int64_t J = 0; J < Whole; J += 8) {
      A0 += At(X + J);
      A1 += At(X + J + 4);
    }
    float Sum = Total(A0, A1);
    for (int64_t J = Whole; J < N; ++J)
      Sum += X[J];
    const float Mean = N ? Sum / (float)N : 0.0f;
    A0 = F4{};
    A1 = F4{};
    for (int64_t J = 0; J < Whole; J += 8) {
      F4 D0 = At(X + J) - Mean, D1 = At(X + J + 4) - Mean;
      A0 += D0 * D0;
      A1 += D1 * D1;
    }
    float Squares = Total(A0, A1);
    for (int64_t J = Whole; J < N; ++J)
      Squares += (X[J] - Mean) * (X[J] - Mean);
    const float Inv =
        1.0f / std::sqrt((N ? Squares / (float)N : 0.0f) + R.epsilon);
    for (int64_t J = 0; J < Whole; J += 4) {
      F4 V = (At(X + J) - Mean) * Inv * At(R.scale + J);
      if (R.bias)
        V += At(R.bias + J);
      *reinterpret_cast<F4 *>(Y + J) = V;
    }
    for (int64_t J = Whole; J < N; ++J)
      Y[J] = (X[J] - Mean) * Inv * R.scale[J] + (R.bias ? R.bias[J] : 0.0f);
  }
}

void fastLayerNormKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &A) {
  const KernelInfo &Reference = KernelRegistry::global().get(LayerNormOp);
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
      normalizeRows);
}

std::vector<TensorMeta> fastLayerNormShape(const std::vector<Tensor> &In,
                                           const Attrs &A) {
  return KernelRegistry::global().get(LayerNormOp).shapeFn(In, A);
}

} // namespace

RIVET_REGISTER_LIBRARY_KERNEL("cpu.layer_norm", "layer_norm",
                              fastLayerNormKernel, fastLayerNormShape);

} // namespace rivet::kernels
