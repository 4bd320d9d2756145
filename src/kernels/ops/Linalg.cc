//===- Linalg.cc - dense, matmul, gemm and the integer matmuls ------------===//
//
// Reference matrix products (ReferenceGemm.h: plain C++, no oneDNN, which
// the VM's library kernels use: see dnnl/DnnlLibraryKernels.cc) with an
// accumulator of the compute precision (double for float64, float for
// float16/float32, wrapping int64 for integers), converted once at the end.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"
#include "kernels/ops/ReferenceGemm.h"

#include <cmath>
#include <limits>

namespace rivet::kernels {
namespace {

/// Accumulator type for products of E.
template <typename E>
using AccT = std::conditional_t<
    std::is_same_v<E, double>, double,
    std::conditional_t<std::is_integral_v<E>, int64_t, float>>;

/// R[i, j] (row stride N) = op(a)[i, :] @ op(b)[:, j] as referenceGemm, in
/// the accumulator type, written in place when Out already is (float32,
/// float64) and converted from a scratch buffer otherwise.
template <typename E, typename FA, typename FB>
void productInto(int64_t M, int64_t N, int64_t K, FA &&A, FB &&B, E *Out,
                 GemmScratch<AccT<E>> &S) {
  using Acc = AccT<E>;
  if constexpr (std::is_same_v<E, Acc>) {
    referenceGemm<Acc>(M, N, K, A, B, Out, N, S);
  } else {
    S.Caller.resize((size_t)(M * N));
    referenceGemm<Acc>(M, N, K, A, B, S.Caller.data(), N, S);
    for (int64_t I = 0; I < M * N; ++I)
      Out[I] = convertElement<E>(S.Caller[(size_t)I]);
  }
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
      GemmScratch<A> &S = GemmScratch<A>::forThread();
      productInto<E>(
          M, N, K, [&](int64_t I, int64_t L) { return A(PX[I * K + L]); },
          [&](int64_t L, int64_t J) { return A(PW[J * K + L]); },
          Out[0].data<E>(), S);
      S.trim();
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
      GemmScratch<A> &Scratch = GemmScratch<A>::forThread();
      forEachStrided<2>(P.Batch, S,
                        [&](int64_t BI, const std::array<int64_t, 2> &Off) {
                          const E *MA = PA + Off[0], *MB = PB + Off[1];
                          productInto<E>(
                              M, N, K,
                              [&](int64_t I, int64_t L) {
                                return A(ComputeT<E>(MA[I * K + L]));
                              },
                              [&](int64_t L, int64_t J) {
                                return A(ComputeT<E>(MB[L * N + J]));
                              },
                              PR + BI * M * N, Scratch);
                        });
      Scratch.trim();
    } else {
      checkDType("matmul", "a", In[0].dtype(), DTypeClass::Numeric);
    }
  });
}

//===----------------------------------------------------------------------===//
// gemm: alpha * op(a) @ op(b) + beta * c, c broadcast to [M, N].
//===----------------------------------------------------------------------===//

struct GemmPlan {
  int64_t M, K, N;
  bool TA, TB;
};

GemmPlan planGemm(const std::vector<Tensor> &In, const Attrs &A) {
  const char *Op = "gemm";
  if (In.size() != 2 && In.size() != 3)
    fail("{}: expected 2 or 3 inputs (a, b[, c]), got {}", Op, In.size());
  const Tensor &TA = In[0], &TB = In[1];
  checkDType(Op, "a", TA.dtype(), DTypeClass::Numeric);
  checkSameDType(Op, "a", TA, "b", TB);
  if (TA.rank() != 2 || TB.rank() != 2)
    fail("{}: operands must have rank 2, got {} and {}", Op,
         shapeToString(TA.shape()), shapeToString(TB.shape()));
  GemmPlan P;
  P.TA = attrFlag(Op, A, "trans_a");
  P.TB = attrFlag(Op, A, "trans_b");
  P.M = TA.shape()[P.TA ? 1 : 0];
  P.K = TA.shape()[P.TA ? 0 : 1];
  int64_t KB = TB.shape()[P.TB ? 1 : 0];
  P.N = TB.shape()[P.TB ? 0 : 1];
  if (KB != P.K)
    fail("{}: inner dimensions differ: a {} (trans_a={}) and b {} (trans_b={})",
         Op, shapeToString(TA.shape()), (int)P.TA, shapeToString(TB.shape()),
         (int)P.TB);
  if (In.size() == 3) {
    checkSameDType(Op, "a", TA, "c", In[2]);
    const Shape &SC = In[2].shape();
    // Unidirectional broadcast of c to [M, N].
    bool Ok = SC.size() <= 2;
    Shape Target{P.M, P.N};
    for (size_t D = 0; Ok && D < SC.size(); ++D) {
      int64_t E = SC[SC.size() - 1 - D], T = Target[1 - D];
      Ok = E == 1 || E == T;
    }
    if (!Ok)
      fail("{}: c {} cannot be broadcast to the result ({}, {})", Op,
           shapeToString(SC), P.M, P.N);
  }
  return P;
}

std::vector<TensorMeta> gemmShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  GemmPlan P = planGemm(In, A);
  return {{{P.M, P.N}, In[0].dtype()}};
}

void gemmKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &A) {
  GemmPlan P = planGemm(In, A);
  double Alpha = attrFloat("gemm", A, "alpha");
  double Beta = attrFloat("gemm", A, "beta");
  int64_t M = P.M, K = P.K, N = P.N;
  dispatchDType(In[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Numeric)) {
      using Acc = AccT<E>;
      const E *PA = In[0].data<E>(), *PB = In[1].data<E>();
      // Strides of op(a)[i, l] and op(b)[l, j].
      int64_t AI = P.TA ? 1 : K, AL = P.TA ? M : 1;
      int64_t BL = P.TB ? 1 : N, BJ = P.TB ? K : 1;
      std::vector<Acc> R((size_t)(M * N));
      GemmScratch<Acc> &S = GemmScratch<Acc>::forThread();
      referenceGemm<Acc>(
          M, N, K,
          [&](int64_t I, int64_t L) {
            return Acc(ComputeT<E>(PA[I * AI + L * AL]));
          },
          [&](int64_t L, int64_t J) {
            return Acc(ComputeT<E>(PB[L * BL + J * BJ]));
          },
          R.data(), N, S);
      S.trim();
      std::vector<int64_t> CS;
      const E *PC = nullptr;
      if (In.size() == 3) {
        CS = broadcastStrides(In[2].shape(), Shape{M, N});
        PC = In[2].data<E>();
      }
      E *PO = Out[0].data<E>();
      for (int64_t I = 0; I < M; ++I)
        for (int64_t J = 0; J < N; ++J) {
          double V = Alpha * (double)R[(size_t)(I * N + J)];
          if (PC)
            V += Beta * (double)ComputeT<E>(PC[I * CS[0] + J * CS[1]]);
          if constexpr (std::is_integral_v<E>) {
            // Integers keep exact (wrapping) arithmetic when alpha = beta = 1.
            if (Alpha == 1.0 && (Beta == 1.0 || !PC)) {
              int64_t IV = (int64_t)R[(size_t)(I * N + J)];
              if (PC)
                IV = (int64_t)((uint64_t)IV +
                               (uint64_t)(int64_t)PC[I * CS[0] + J * CS[1]]);
              PO[I * N + J] = (E)IV;
              continue;
            }
          }
          PO[I * N + J] = convertElement<E>(V);
        }
    } else {
      checkDType("gemm", "a", In[0].dtype(), DTypeClass::Numeric);
    }
  });
}

//===----------------------------------------------------------------------===//
// matmul_integer and qlinear_matmul: int64 matmul of zero-point-shifted
// 8-bit operands.
//===----------------------------------------------------------------------===//

/// X - Zp as int64. For a (IsA), a 1-D zero point of length M is per row
/// ([M, 1]); otherwise it broadcasts to X NumPy style (per column for b).
Tensor minusZeroPoint(const char *Op, const char *Arg, const Tensor &X,
                      const Tensor *Zp, bool IsA) {
  Tensor R = X.cast(DType::Int64);
  if (!Zp)
    return R;
  Tensor Z = Zp->cast(DType::Int64);
  if (IsA && Z.rank() == 1 && X.rank() >= 2 && Z.numel() != 1)
    Z = Z.reshape({Z.numel(), 1});
  if (Z.numel() == 1)
    Z = Z.reshape({});
  Shape B;
  try {
    B = broadcastShapes(Z.shape(), X.shape());
  } catch (const Error &) {
    B.clear();
  }
  if (B != X.shape())
    fail("{}: zero point {} of '{}' does not match its shape {}", Op,
         shapeToString(Zp->shape()), Arg, shapeToString(X.shape()));
  int64_t *PR = R.data<int64_t>();
  const int64_t *PZ = Z.data<int64_t>();
  forEachStrided<1>(X.shape(), {broadcastStrides(Z.shape(), X.shape())},
                    [&](int64_t O, const std::array<int64_t, 1> &Off) {
                      PR[O] -= PZ[Off[0]];
                    });
  return R;
}

Tensor integerMatmul(const char *Op, const Tensor &A, const Tensor *AZ,
                     const Tensor &B, const Tensor *BZ) {
  Tensor A64 = minusZeroPoint(Op, "a", A, AZ, true);
  Tensor B64 = minusZeroPoint(Op, "b", B, BZ, false);
  std::vector<Tensor> Res{
      Tensor::empty(planMatmul(A.shape(), B.shape()).Out, DType::Int64)};
  matmulKernel({A64, B64}, Res, {});
  return Res[0];
}

std::vector<TensorMeta> matmulIntegerShape(const std::vector<Tensor> &In,
                                           const Attrs &) {
  const char *Op = "matmul_integer";
  if (In.size() < 2 || In.size() > 4)
    fail("{}: expected 2 to 4 inputs (a, b[, a_zero_point[, b_zero_point]]), "
         "got {}",
         Op, In.size());
  checkQuant8(Op, "a", In[0]);
  checkQuant8(Op, "b", In[1]);
  if (In.size() > 2)
    checkSameDType(Op, "a", In[0], "a_zero_point", In[2]);
  if (In.size() > 3)
    checkSameDType(Op, "b", In[1], "b_zero_point", In[3]);
  return {
      {withOp(Op, [&] { return planMatmul(In[0].shape(), In[1].shape()).Out; }),
       DType::Int32}};
}

void matmulIntegerKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &) {
  Tensor R =
      integerMatmul("matmul_integer", In[0], In.size() > 2 ? &In[2] : nullptr,
                    In[1], In.size() > 3 ? &In[3] : nullptr);
  const int64_t *P = R.data<int64_t>();
  int32_t *O = Out[0].data<int32_t>();
  for (int64_t I = 0; I < R.numel(); ++I)
    O[I] = (int32_t)(uint32_t)(uint64_t)P[I]; // int32 wrap-around
}

/// A scale or zero point: one element, or a vector of length Len.
void checkScalarOrVector(const char *Op, const char *Arg, const Tensor &T,
                         int64_t Len) {
  if (T.numel() == 1 || (T.rank() == 1 && T.shape()[0] == Len))
    return;
  fail("{}: input '{}' must be a scalar or have shape ({},), got {}", Op, Arg,
       Len, shapeToString(T.shape()));
}

std::vector<TensorMeta> qlinearMatmulShape(const std::vector<Tensor> &In,
                                           const Attrs &) {
  const char *Op = "qlinear_matmul";
  checkArity(Op, In, 8);
  checkQuant8(Op, "a", In[0]);
  checkQuant8(Op, "b", In[3]);
  checkQuant8(Op, "y_zero_point", In[7]);
  checkSameDType(Op, "a", In[0], "a_zero_point", In[2]);
  checkSameDType(Op, "b", In[3], "b_zero_point", In[5]);
  checkDType(Op, "a_scale", In[1].dtype(), DTypeClass::Float);
  checkDType(Op, "b_scale", In[4].dtype(), DTypeClass::Float);
  checkDType(Op, "y_scale", In[6].dtype(), DTypeClass::Float);
  MatmulPlan P =
      withOp(Op, [&] { return planMatmul(In[0].shape(), In[3].shape()); });
  checkScalarOrVector(Op, "a_scale", In[1], P.M);
  checkScalarOrVector(Op, "a_zero_point", In[2], P.M);
  checkScalarOrVector(Op, "b_scale", In[4], P.N);
  checkScalarOrVector(Op, "b_zero_point", In[5], P.N);
  checkScalarOrVector(Op, "y_scale", In[6], 1);
  checkScalarOrVector(Op, "y_zero_point", In[7], 1);
  return {{P.Out, In[7].dtype()}};
}

void qlinearMatmulKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &) {
  MatmulPlan P = planMatmul(In[0].shape(), In[3].shape());
  Tensor R = integerMatmul("qlinear_matmul", In[0], &In[2], In[3], &In[5]);
  std::vector<double> AS = In[1].toDoubleVector(), BS = In[4].toDoubleVector();
  double YS = In[6].elementAsDouble(0);
  int64_t YZ = In[7].elementAsInt(0);
  const int64_t *PR = R.data<int64_t>();
  dispatchDType(In[7].dtype(), [&](auto Tag) {
    using Q = decltype(Tag);
    if constexpr (std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int8_t>) {
      Q *PO = Out[0].data<Q>();
      for (int64_t O = 0; O < R.numel(); ++O) {
        int64_t J = O % P.N, I = (O / P.N) % P.M;
        double Scale = AS[AS.size() == 1 ? 0 : (size_t)I] *
                       BS[BS.size() == 1 ? 0 : (size_t)J] / YS;
        // Round half to even, add the zero point, saturate.
        double V = std::nearbyint((double)PR[O] * Scale) + (double)YZ;
        V = std::min<double>(std::max<double>(V, std::numeric_limits<Q>::min()),
                             std::numeric_limits<Q>::max());
        PO[O] = (Q)V;
      }
    }
  });
}

} // namespace

RIVET_REGISTER_KERNEL("dense", denseKernel, denseShape, false);
RIVET_REGISTER_KERNEL("matmul", matmulKernel, matmulShape, false);
RIVET_REGISTER_KERNEL("gemm", gemmKernel, gemmShape, false);
RIVET_REGISTER_KERNEL("matmul_integer", matmulIntegerKernel, matmulIntegerShape,
                      false);
RIVET_REGISTER_KERNEL("qlinear_matmul", qlinearMatmulKernel, qlinearMatmulShape,
                      false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS("gemm",
                     {{"alpha", AttrKind::Float, false, "scale of the product",
                       1.0},
                      {"beta", AttrKind::Float, false, "scale of c", 1.0},
                      {"trans_a", AttrKind::Int, false, "1: use a^T", 0},
                      {"trans_b", AttrKind::Int, false, "1: use b^T", 0}});

} // namespace rivet::kernels
