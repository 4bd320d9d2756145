//===- Linalg.cc - dense and matmul ---------------------------------------===//
//
// Reference matrix products: an i-k-j loop over row-major operands with an
// accumulator of the compute precision (double for float64, float for
// float16/float32, wrapping int64 for integers), converted once at the end.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

namespace rivet::kernels {
namespace {

/// Accumulator type for products of E.
template <typename E>
using AccT = std::conditional_t<
    std::is_same_v<E, double>, double,
    std::conditional_t<std::is_integral_v<E>, int64_t, float>>;

template <typename T> T accMulAdd(T Acc, T A, T B) {
  if constexpr (std::is_integral_v<T>)
    return (T)((uint64_t)Acc + (uint64_t)A * (uint64_t)B);
  else
    return Acc + A * B;
}

//===----------------------------------------------------------------------===//
// dense: x[..., K] @ w[N, K]^T
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> denseShape(const std::vector<Tensor> &In,
                                   const Attrs &) {
  checkArity("dense", In, 2);
  const Tensor &X = In[0], &W = In[1];
  checkSameDType("dense", "x", X, "w", W);
  checkDType("dense", "x", X.dtype(), DTypeClass::Float);
  if (X.rank() < 1 || W.rank() != 2)
    fail("dense: expected x of rank >= 1 and w of rank 2, got {} and {}",
         shapeToString(X.shape()), shapeToString(W.shape()));
  if (X.shape().back() != W.shape()[1])
    fail("dense: reduction dimensions differ: x {} and w {} (w is [N, K])",
         shapeToString(X.shape()), shapeToString(W.shape()));
  Shape S = X.shape();
  S.back() = W.shape()[0];
  return {{S, X.dtype()}};
}

void denseKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &) {
  const Tensor &X = In[0], &W = In[1];
  int64_t K = X.shape().back(), N = W.shape()[0];
  int64_t M = prodRange(X.shape(), 0, X.shape().size() - 1);
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      using A = AccT<E>;
      const E *PX = X.data<E>(), *PW = W.data<E>();
      E *PR = Out[0].data<E>();
      // Both operands are walked along K contiguously: row of x, row of w.
      for (int64_t I = 0; I < M; ++I)
        for (int64_t J = 0; J < N; ++J) {
          A Acc = 0;
          const E *XR = PX + I * K, *WR = PW + J * K;
          for (int64_t L = 0; L < K; ++L)
            Acc += A(XR[L]) * A(WR[L]);
          PR[I * N + J] = convertElement<E>(Acc);
        }
    } else {
      checkDType("dense", "x", X.dtype(), DTypeClass::Float);
    }
  });
}

//===----------------------------------------------------------------------===//
// matmul: NumPy semantics.
//===----------------------------------------------------------------------===//

/// The operands viewed as batched matrices, plus the output shape.
struct MatmulPlan {
  Shape ABatch, BBatch, Batch; // batch shapes (broadcast in Batch)
  int64_t M, K, N;
  Shape Out;
};

MatmulPlan planMatmul(const Shape &SA, const Shape &SB) {
  if (SA.empty() || SB.empty())
    fail("matmul: operands must have rank >= 1, got {} and {}",
         shapeToString(SA), shapeToString(SB));
  Shape A = SA, B = SB;
  bool AVec = A.size() == 1, BVec = B.size() == 1;
  if (AVec)
    A.insert(A.begin(), 1);
  if (BVec)
    B.push_back(1);
  MatmulPlan P;
  P.M = A[A.size() - 2];
  P.K = A.back();
  P.N = B.back();
  if (B[B.size() - 2] != P.K)
    fail("matmul: inner dimensions differ: {} and {}", shapeToString(SA),
         shapeToString(SB));
  P.ABatch.assign(A.begin(), A.end() - 2);
  P.BBatch.assign(B.begin(), B.end() - 2);
  try {
    P.Batch = broadcastShapes(P.ABatch, P.BBatch);
  } catch (const Error &) {
    fail("matmul: cannot broadcast batch dimensions of {} and {}",
         shapeToString(SA), shapeToString(SB));
  }
  P.Out = P.Batch;
  if (!AVec)
    P.Out.push_back(P.M);
  if (!BVec)
    P.Out.push_back(P.N);
  return P;
}

std::vector<TensorMeta> matmulShape(const std::vector<Tensor> &In,
                                    const Attrs &) {
  checkArity("matmul", In, 2);
  checkSameDType("matmul", "a", In[0], "b", In[1]);
  checkDType("matmul", "a", In[0].dtype(), DTypeClass::Numeric);
  return {{planMatmul(In[0].shape(), In[1].shape()).Out, In[0].dtype()}};
}

void matmulKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &) {
  MatmulPlan P = planMatmul(In[0].shape(), In[1].shape());
  int64_t M = P.M, K = P.K, N = P.N;
  // Batch strides in units of whole matrices.
  std::array<std::vector<int64_t>, 2> S{broadcastStrides(P.ABatch, P.Batch),
                                        broadcastStrides(P.BBatch, P.Batch)};
  for (auto &V : S[0])
    V *= M * K;
  for (auto &V : S[1])
    V *= K * N;
  dispatchDType(In[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Numeric)) {
      using A = AccT<E>;
      const E *PA = In[0].data<E>(), *PB = In[1].data<E>();
      E *PR = Out[0].data<E>();
      std::vector<A> Acc((size_t)(M * N));
      forEachStrided<2>(
          P.Batch, S, [&](int64_t BI, const std::array<int64_t, 2> &Off) {
            const E *MA = PA + Off[0], *MB = PB + Off[1];
            std::fill(Acc.begin(), Acc.end(), A(0));
            for (int64_t I = 0; I < M; ++I)
              for (int64_t L = 0; L < K; ++L) {
                A AV = A(ComputeT<E>(MA[I * K + L]));
                const E *BRow = MB + L * N;
                A *ARow = Acc.data() + I * N;
                for (int64_t J = 0; J < N; ++J)
                  ARow[J] = accMulAdd(ARow[J], AV, A(ComputeT<E>(BRow[J])));
              }
            E *R = PR + BI * M * N;
            for (int64_t I = 0; I < M * N; ++I)
              R[I] = convertElement<E>(Acc[(size_t)I]);
          });
    } else {
      checkDType("matmul", "a", In[0].dtype(), DTypeClass::Numeric);
    }
  });
}

} // namespace

RIVET_REGISTER_KERNEL("dense", denseKernel, denseShape, false);
RIVET_REGISTER_KERNEL("matmul", matmulKernel, matmulShape, false);

} // namespace rivet::kernels
