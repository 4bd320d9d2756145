//===- NN.cc - Convolution, pooling and normalization kernels -------------===//
//
// Reference kernels for the neural-network operators over N-d inputs laid out
// as [N, C, D1..Dn]. Convolution is im2col followed by a matrix product
// (ReferenceGemm.h; no oneDNN, which the VM's library kernels use: see
// dnnl/DnnlLibraryKernels.cc); pools walk each window with hoisted index
// math; normalizations accumulate in double.
//
//===----------------------------------------------------------------------===//
#include "kernels/WindowGeometry.h"
#include "kernels/ops/KernelUtil.h"
#include "kernels/ops/ReferenceGemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace rivet::kernels {
namespace {

//===----------------------------------------------------------------------===//
// Window geometry shared by conv and the pools.
//===----------------------------------------------------------------------===//

/// Spatial geometry of a sliding window over [N, C, D1..Dn].
struct Window {
  size_t Rank = 0; // number of spatial dimensions
  Shape In, Kernel, Strides, Dilations, PadBegin, PadEnd, Out;
  int64_t inSize() const { return numElements(In); }
  int64_t outSize() const { return numElements(Out); }
  int64_t kernelSize() const { return numElements(Kernel); }
};

/// Computes output extents and pads. Kernel holds the window extents; In the
/// input's spatial extents. ceil_mode follows PyTorch/ONNX Runtime: the last
/// window must start inside the input or the left padding.
Window makeWindow(const char *Op, const Attrs &A, const Shape &In,
                  const Shape &Kernel, bool AllowCeil) {
  Window W;
  W.Rank = In.size();
  W.In = In;
  W.Kernel = Kernel;
  W.Strides = windowInts(Op, A, "strides", W.Rank, 1, 1);
  W.Dilations = windowInts(Op, A, "dilations", W.Rank, 1, 1);
  std::vector<int64_t> Pads = windowInts(Op, A, "pads", 2 * W.Rank, 0, 0);
  std::string AutoPadName = attrString(Op, A, "auto_pad");
  std::optional<AutoPad> Mode = parseAutoPad(AutoPadName);
  if (!Mode)
    fail("{}: unknown auto_pad '{}' (expected NOTSET, SAME_UPPER, "
         "SAME_LOWER or VALID)",
         Op, AutoPadName);
  bool Ceil = AllowCeil && attrFlag(Op, A, "ceil_mode");
  W.PadBegin.assign(Pads.begin(), Pads.begin() + W.Rank);
  W.PadEnd.assign(Pads.begin() + W.Rank, Pads.end());
  for (size_t I = 0; I < W.Rank; ++I) {
    if (Kernel[I] < 1)
      fail("{}: kernel extent {} along spatial axis {} must be >= 1", Op,
           Kernel[I], I);
    WindowAxis<ConstArith> G =
        constWindowAxis(Op, I, In[I], Kernel[I], W.Strides[I], W.Dilations[I],
                        W.PadBegin[I], W.PadEnd[I], *Mode, Ceil);
    W.PadBegin[I] = G.padBegin;
    W.PadEnd[I] = G.padEnd;
    W.Out.push_back(G.out);
  }
  return W;
}

/// Checks x is [N, C, D1..Dn] with n >= 1.
void checkSpatialInput(const char *Op, const Tensor &X) {
  if (X.rank() < 3)
    fail("{}: input 'x' must have rank >= 3 ([N, C, D1, ...]), got {}", Op,
         shapeToString(X.shape()));
}

Shape spatialOf(const Tensor &X) {
  return Shape(X.shape().begin() + 2, X.shape().end());
}

/// Calls Fn(OutIndex, Start) for every output position, where Start holds
/// the input coordinates of the window's origin (negative inside padding).
template <typename F> void forEachOutput(const Window &W, F &&Fn) {
  std::vector<int64_t> Idx(W.Rank, 0), Start(W.Rank);
  int64_t Total = W.outSize();
  for (size_t D = 0; D < W.Rank; ++D)
    Start[D] = -W.PadBegin[D];
  for (int64_t O = 0; O < Total; ++O) {
    Fn(O, Start);
    for (size_t D = W.Rank; D-- > 0;) {
      if (++Idx[D] < W.Out[D]) {
        Start[D] += W.Strides[D];
        break;
      }
      Idx[D] = 0;
      Start[D] = -W.PadBegin[D];
    }
  }
}

/// Calls Fn(InFlatIndex) for every in-bounds element of the window starting
/// at Start (padding positions are skipped).
template <typename F>
void forEachInWindow(const Window &W, const std::vector<int64_t> &Start,
                     F &&Fn) {
  // Odometer over the kernel, skipping out-of-bounds positions.
  std::vector<int64_t> K(W.Rank, 0);
  int64_t KTotal = W.kernelSize();
  std::vector<int64_t> InStride = contiguousStrides(W.In);
  for (int64_t KI = 0; KI < KTotal; ++KI) {
    int64_t Off = 0;
    bool Inside = true;
    for (size_t D = 0; D < W.Rank; ++D) {
      int64_t P = Start[D] + K[D] * W.Dilations[D];
      if (P < 0 || P >= W.In[D]) {
        Inside = false;
        break;
      }
      Off += P * InStride[D];
    }
    if (Inside)
      Fn(Off);
    for (size_t D = W.Rank; D-- > 0;) {
      if (++K[D] < W.Kernel[D])
        break;
      K[D] = 0;
    }
  }
}

//===----------------------------------------------------------------------===//
// Convolution core: im2col + matmul (ReferenceGemm.h), shared by conv,
// conv_integer and qlinear_conv. X and Wt are already in the accumulator
// type with zero points subtracted.
//===----------------------------------------------------------------------===//

// Y[j] += A * X[j] and Y[j] += A for j < N, each in a function of its own
// and in whole chunks of 8, so that they vectorize at -O2 (GCC's cheap cost
// model takes no loop that leaves a remainder, nor one whose pointers may
// overlap).
template <typename Acc>
void multiplyAdd(Acc *__restrict Y, Acc A, const Acc *__restrict X, int64_t N) {
  int64_t J = 0;
  for (; J + 8 <= N; J += 8)
    for (int64_t L = 0; L < 8; ++L)
      Y[J + L] = gemm_detail::mulAdd(Y[J + L], A, X[J + L]);
  for (; J < N; ++J)
    Y[J] = gemm_detail::mulAdd(Y[J], A, X[J]);
}
template <typename Acc> void addScalar(Acc *__restrict Y, Acc A, int64_t N) {
  int64_t J = 0;
  for (; J + 8 <= N; J += 8)
    for (int64_t L = 0; L < 8; ++L)
      Y[J + L] += A;
  for (; J < N; ++J)
    Y[J] += A;
}

/// Row (c, k) of the im2col matrix of one image's channel XC, at the
/// kernel position KIdx: Row[o] = x[c, o * s - pb + k * d] (0 outside).
template <typename Acc>
void im2colRow(const Acc *XC, const std::vector<int64_t> &KIdx, const Window &W,
               Acc *Row) {
  size_t R = W.Rank;
  int64_t O = W.outSize(), Inner = W.Out[R - 1];
  int64_t KLast = KIdx[R - 1] * W.Dilations[R - 1] - W.PadBegin[R - 1];
  int64_t S = W.Strides[R - 1], Len = W.In[R - 1];
  // The x[J * S + KLast] with J in [Lo, Hi) fall inside a row of x.
  int64_t Hi = std::clamp<int64_t>(KLast >= Len ? 0 : (Len - KLast + S - 1) / S,
                                   0, Inner);
  int64_t Lo = std::min(KLast >= 0 ? 0 : (S - 1 - KLast) / S, Hi);
  std::vector<int64_t> InStride = contiguousStrides(W.In), OIdx(R, 0);
  for (int64_t OB = 0; OB < O; OB += Inner) {
    // Offset and validity from the outer spatial dims.
    int64_t Off = 0;
    bool Valid = true;
    for (size_t D = 0; D + 1 < R; ++D) {
      int64_t P =
          OIdx[D] * W.Strides[D] - W.PadBegin[D] + KIdx[D] * W.Dilations[D];
      if (P < 0 || P >= W.In[D]) {
        Valid = false;
        break;
      }
      Off += P * InStride[D];
    }
    Acc *Dst = Row + OB;
    if (!Valid) {
      std::fill(Dst, Dst + Inner, Acc(0));
    } else {
      const Acc *Src = XC + Off + KLast;
      std::fill(Dst, Dst + Lo, Acc(0));
      if (S == 1)
        std::copy(Src + Lo, Src + Hi, Dst + Lo);
      else
        for (int64_t J = Lo; J < Hi; ++J)
          Dst[J] = Src[J * S];
      std::fill(Dst + Hi, Dst + Inner, Acc(0));
    }
    for (size_t D = R - 1; D-- > 0;) {
      if (++OIdx[D] < W.Out[D])
        break;
      OIdx[D] = 0;
    }
  }
}

/// Calls Fn(Ci, KIdx, R) for the rows R = Ci * K + (KIdx's position) of the
/// im2col matrix of CG channels, in the order of R.
template <typename F>
void forEachIm2colRow(int64_t CG, const Window &W, F &&Fn) {
  int64_t K = W.kernelSize();
  std::vector<int64_t> KIdx(W.Rank, 0);
  for (int64_t Ci = 0; Ci < CG; ++Ci)
    for (int64_t KI = 0; KI < K; ++KI) {
      Fn(Ci, KIdx, Ci * K + KI);
      for (size_t D = W.Rank; D-- > 0;) {
        if (++KIdx[D] < W.Kernel[D])
          break;
        KIdx[D] = 0;
      }
    }
}

template <typename Acc>
void convCore(const Acc *X, const Acc *Wt, int64_t N, int64_t C, int64_t M,
              int64_t Group, const Window &W, Acc *Out) {
  int64_t CG = C / Group, MG = M / Group;
  int64_t K = W.kernelSize(), O = W.outSize(), I = W.inSize();
  int64_t Rows = CG * K;
  // A 1x1 window with unit strides and no padding: x is its own im2col
  // matrix (mobilenet_v2's pointwise convs).
  bool Pointwise = K == 1;
  for (size_t D = 0; D < W.Rank; ++D)
    Pointwise &= W.Strides[D] == 1 && W.PadBegin[D] == 0 && W.PadEnd[D] == 0;
  // Fewer output channels per group than a tile has rows (depthwise convs):
  // each im2col row is added into them as it is made, with the sums in the
  // same order, instead of a matrix product that would mostly pad.
  bool RowByRow = !Pointwise && MG < gemm_detail::MR;
  GemmScratch<Acc> &Scratch = GemmScratch<Acc>::forThread();
  std::vector<Acc> &Col = Scratch.Caller;
  Col.resize(Pointwise ? 0 : (size_t)((RowByRow ? 1 : Rows) * O));
  for (int64_t Nb = 0; Nb < N; ++Nb)
    for (int64_t G = 0; G < Group; ++G) {
      const Acc *XG = X + (Nb * C + G * CG) * I;
      const Acc *WG = Wt + G * MG * Rows;
      Acc *OutG = Out + (Nb * M + G * MG) * O;
      if (RowByRow) {
        std::fill(OutG, OutG + MG * O, Acc(0));
        forEachIm2colRow(
            CG, W,
            [&](int64_t Ci, const std::vector<int64_t> &KIdx, int64_t R) {
              im2colRow(XG + Ci * I, KIdx, W, Col.data());
              for (int64_t Mi = 0; Mi < MG; ++Mi)
                multiplyAdd(OutG + Mi * O, WG[Mi * Rows + R], Col.data(), O);
            });
        continue;
      }
      if (!Pointwise)
        forEachIm2colRow(
            CG, W,
            [&](int64_t Ci, const std::vector<int64_t> &KIdx, int64_t R) {
              im2colRow(XG + Ci * I, KIdx, W, Col.data() + R * O);
            });
      const Acc *ColG = Pointwise ? XG : Col.data();
      // out[m, o] = sum_r w[m, r] * col[r, o].
      referenceGemm<Acc>(
          MG, O, Rows,
          [&](int64_t Mi, int64_t Ri) { return WG[Mi * Rows + Ri]; },
          [&](int64_t Ri, int64_t J) { return ColG[Ri * O + J]; }, OutG, O,
          Scratch);
    }
  Scratch.trim();
}

/// Validates x/w shapes for a convolution and builds the window.
Window convWindow(const char *Op, const Tensor &X, const Tensor &Wt,
                  const Attrs &A, int64_t &Group) {
  checkSpatialInput(Op, X);
  if (Wt.rank() != X.rank())
    fail("{}: weight 'w' must have the rank of 'x' ({}), got {}", Op,
         shapeToString(X.shape()), shapeToString(Wt.shape()));
  Group = attrInt(Op, A, "group");
  int64_t C = X.shape()[1], M = Wt.shape()[0];
  if (Group < 1 || C % Group != 0 || M % Group != 0)
    fail("{}: group {} must divide the input channels {} and the output "
         "channels {}",
         Op, Group, C, M);
  if (Wt.shape()[1] * Group != C)
    fail("{}: weight {} expects {} input channels, x {} has {} (group {})", Op,
         shapeToString(Wt.shape()), Wt.shape()[1] * Group,
         shapeToString(X.shape()), C, Group);
  Shape K(Wt.shape().begin() + 2, Wt.shape().end());
  if (A.has("kernel_shape") && attrInts(Op, A, "kernel_shape") != K)
    fail("{}: attribute 'kernel_shape' ({}) does not match the weight {}", Op,
         fmt::join(attrInts(Op, A, "kernel_shape"), ", "),
         shapeToString(Wt.shape()));
  return makeWindow(Op, A, spatialOf(X), K, false);
}

Shape convOutShape(const Tensor &X, int64_t M, const Window &W) {
  Shape S{X.shape()[0], M};
  S.insert(S.end(), W.Out.begin(), W.Out.end());
  return S;
}

/// A copy of T's elements in type To.
template <typename To> std::vector<To> toVec(const Tensor &T) {
  std::vector<To> R((size_t)T.numel());
  dispatchDType(T.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    const E *P = T.data<E>();
    for (size_t I = 0; I < R.size(); ++I)
      R[I] = To(ComputeT<E>(P[I]));
  });
  return R;
}

void checkBias(const char *Op, const Tensor &B, int64_t M) {
  if (B.rank() != 1 || B.shape()[0] != M)
    fail("{}: bias must have shape ({},), got {}", Op, M,
         shapeToString(B.shape()));
}

//===----------------------------------------------------------------------===//
// conv(x, w[, b])
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> convShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  if (In.size() != 2 && In.size() != 3)
    fail("conv: expected 2 or 3 inputs (x, w[, b]), got {}", In.size());
  checkDType("conv", "x", In[0].dtype(), DTypeClass::Float);
  checkSameDType("conv", "x", In[0], "w", In[1]);
  int64_t G;
  Window W = convWindow("conv", In[0], In[1], A, G);
  if (In.size() == 3) {
    checkSameDType("conv", "x", In[0], "b", In[2]);
    checkBias("conv", In[2], In[1].shape()[0]);
  }
  return {{convOutShape(In[0], In[1].shape()[0], W), In[0].dtype()}};
}

void convKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &A) {
  int64_t G;
  const Tensor &X = In[0], &Wt = In[1];
  Window W = convWindow("conv", X, Wt, A, G);
  int64_t N = X.shape()[0], C = X.shape()[1], M = Wt.shape()[0];
  int64_t O = W.outSize();
  auto Run = [&](auto AccTag) {
    using Acc = decltype(AccTag);
    // float32 and float64 are read and written where they are; float16 and
    // bfloat16 through copies in Acc.
    bool InPlace = X.dtype() == dtypeOf<Acc>();
    std::vector<Acc> XV, WV, RV;
    if (!InPlace) {
      XV = toVec<Acc>(X);
      WV = toVec<Acc>(Wt);
      RV.resize((size_t)(N * M * O));
    }
    Acc *R = InPlace ? Out[0].data<Acc>() : RV.data();
    convCore<Acc>(InPlace ? X.data<Acc>() : XV.data(),
                  InPlace ? Wt.data<Acc>() : WV.data(), N, C, M, G, W, R);
    if (In.size() == 3) {
      std::vector<Acc> B = toVec<Acc>(In[2]);
      for (int64_t Nb = 0; Nb < N; ++Nb)
        for (int64_t Mi = 0; Mi < M; ++Mi)
          addScalar(R + (Nb * M + Mi) * O, B[(size_t)Mi], O);
    }
    if (!InPlace)
      dispatchDType(X.dtype(), [&](auto Tag) {
        using E = decltype(Tag);
        E *P = Out[0].data<E>();
        for (size_t I = 0; I < RV.size(); ++I)
          P[I] = convertElement<E>(RV[I]);
      });
  };
  if (X.dtype() == DType::Float64)
    Run(double{});
  else
    Run(float{});
}

//===----------------------------------------------------------------------===//
// conv_integer(x, w[, x_zero_point[, w_zero_point]]) -> int32
// qlinear_conv(x, xs, xzp, w, ws, wzp, ys, yzp[, b]) -> dtype of yzp
//===----------------------------------------------------------------------===//

/// A zero point / scale that is a scalar (one element) or a vector of Len.
void checkPerTensorOrAxis(const char *Op, const char *Arg, const Tensor &T,
                          int64_t Len) {
  if (T.numel() == 1 && T.rank() <= 1)
    return;
  if (T.rank() == 1 && T.shape()[0] == Len)
    return;
  fail("{}: input '{}' must be a scalar or have shape ({},), got {}", Op, Arg,
       Len, shapeToString(T.shape()));
}

/// Weights minus per-tensor or per-output-channel zero point, as int64.
std::vector<int64_t> weightsMinusZero(const Tensor &Wt, const Tensor *Zp) {
  std::vector<int64_t> WV = toVec<int64_t>(Wt);
  if (!Zp)
    return WV;
  std::vector<int64_t> Z = toVec<int64_t>(*Zp);
  int64_t M = Wt.shape()[0], Per = Wt.numel() / std::max<int64_t>(M, 1);
  for (int64_t Mi = 0; Mi < M; ++Mi) {
    int64_t ZV = Z.size() == 1 ? Z[0] : Z[(size_t)Mi];
    for (int64_t J = 0; J < Per; ++J)
      WV[(size_t)(Mi * Per + J)] -= ZV;
  }
  return WV;
}

std::vector<int64_t> inputMinusZero(const Tensor &X, const Tensor *Zp) {
  std::vector<int64_t> XV = toVec<int64_t>(X);
  if (Zp) {
    int64_t Z = Zp->elementAsInt(0);
    for (auto &V : XV)
      V -= Z;
  }
  return XV;
}

std::vector<TensorMeta> convIntegerShape(const std::vector<Tensor> &In,
                                         const Attrs &A) {
  if (In.size() < 2 || In.size() > 4)
    fail("conv_integer: expected 2 to 4 inputs (x, w[, x_zero_point[, "
         "w_zero_point]]), got {}",
         In.size());
  checkQuant8("conv_integer", "x", In[0]);
  checkQuant8("conv_integer", "w", In[1]);
  int64_t G;
  Window W = convWindow("conv_integer", In[0], In[1], A, G);
  if (In.size() > 2) {
    checkSameDType("conv_integer", "x", In[0], "x_zero_point", In[2]);
    checkPerTensorOrAxis("conv_integer", "x_zero_point", In[2], 1);
  }
  if (In.size() > 3) {
    checkSameDType("conv_integer", "w", In[1], "w_zero_point", In[3]);
    checkPerTensorOrAxis("conv_integer", "w_zero_point", In[3],
                         In[1].shape()[0]);
  }
  return {{convOutShape(In[0], In[1].shape()[0], W), DType::Int32}};
}

void convIntegerKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                       const Attrs &A) {
  int64_t G;
  Window W = convWindow("conv_integer", In[0], In[1], A, G);
  std::vector<int64_t> XV =
      inputMinusZero(In[0], In.size() > 2 ? &In[2] : nullptr);
  std::vector<int64_t> WV =
      weightsMinusZero(In[1], In.size() > 3 ? &In[3] : nullptr);
  int64_t N = In[0].shape()[0], C = In[0].shape()[1], M = In[1].shape()[0];
  std::vector<int64_t> R((size_t)Out[0].numel());
  convCore<int64_t>(XV.data(), WV.data(), N, C, M, G, W, R.data());
  int32_t *P = Out[0].data<int32_t>();
  for (size_t I = 0; I < R.size(); ++I)
    P[I] = (int32_t)(uint32_t)(uint64_t)R[I]; // wraps like int32 arithmetic
}

/// Round half to even, then saturate to the range of Q, plus zero point.
template <typename Q> Q saturateRound(double V, int64_t Zp) {
  double R = std::nearbyint(V) + (double)Zp; // default rounding: half-even
  R = std::min<double>(std::max<double>(R, std::numeric_limits<Q>::min()),
                       std::numeric_limits<Q>::max());
  return (Q)R;
}

std::vector<TensorMeta> qlinearConvShape(const std::vector<Tensor> &In,
                                         const Attrs &A) {
  const char *Op = "qlinear_conv";
  if (In.size() != 8 && In.size() != 9)
    fail("{}: expected 8 or 9 inputs (x, x_scale, x_zero_point, w, w_scale, "
         "w_zero_point, y_scale, y_zero_point[, b]), got {}",
         Op, In.size());
  checkQuant8(Op, "x", In[0]);
  checkQuant8(Op, "w", In[3]);
  checkQuant8(Op, "y_zero_point", In[7]);
  checkSameDType(Op, "x", In[0], "x_zero_point", In[2]);
  checkSameDType(Op, "w", In[3], "w_zero_point", In[5]);
  for (size_t I : {1, 4, 6})
    checkDType(Op,
               I == 1   ? "x_scale"
               : I == 4 ? "w_scale"
                        : "y_scale",
               In[I].dtype(), DTypeClass::Float);
  int64_t G;
  Window W = convWindow(Op, In[0], In[3], A, G);
  int64_t M = In[3].shape()[0];
  checkPerTensorOrAxis(Op, "x_scale", In[1], 1);
  checkPerTensorOrAxis(Op, "x_zero_point", In[2], 1);
  checkPerTensorOrAxis(Op, "w_scale", In[4], M);
  checkPerTensorOrAxis(Op, "w_zero_point", In[5], M);
  checkPerTensorOrAxis(Op, "y_scale", In[6], 1);
  checkPerTensorOrAxis(Op, "y_zero_point", In[7], 1);
  if (In.size() == 9) {
    if (In[8].dtype() != DType::Int32)
      fail("{}: bias must be int32, got {}", Op, dtypeName(In[8].dtype()));
    checkBias(Op, In[8], M);
  }
  return {{convOutShape(In[0], M, W), In[7].dtype()}};
}

void qlinearConvKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                       const Attrs &A) {
  int64_t G;
  Window W = convWindow("qlinear_conv", In[0], In[3], A, G);
  std::vector<int64_t> XV = inputMinusZero(In[0], &In[2]);
  std::vector<int64_t> WV = weightsMinusZero(In[3], &In[5]);
  int64_t N = In[0].shape()[0], C = In[0].shape()[1], M = In[3].shape()[0];
  int64_t O = W.outSize();
  std::vector<int64_t> R((size_t)(N * M * O));
  convCore<int64_t>(XV.data(), WV.data(), N, C, M, G, W, R.data());
  std::vector<double> WS = In[4].toDoubleVector();
  double XS = In[1].elementAsDouble(0), YS = In[6].elementAsDouble(0);
  int64_t YZ = In[7].elementAsInt(0);
  std::vector<int64_t> B =
      In.size() == 9 ? In[8].toIntVector() : std::vector<int64_t>(M, 0);
  dispatchDType(In[7].dtype(), [&](auto Tag) {
    using Q = decltype(Tag);
    if constexpr (std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int8_t>) {
      Q *P = Out[0].data<Q>();
      for (int64_t Nb = 0; Nb < N; ++Nb)
        for (int64_t Mi = 0; Mi < M; ++Mi) {
          // Scale in float like the ONNX reference (x_scale * w_scale /
          // y_scale).
          double Scale =
              (double)((float)XS * (float)WS[WS.size() == 1 ? 0 : Mi] /
                       (float)YS);
          size_t Base = (size_t)((Nb * M + Mi) * O);
          for (int64_t J = 0; J < O; ++J)
            P[Base + J] = saturateRound<Q>(
                (double)(R[Base + J] + B[(size_t)Mi]) * Scale, YZ);
        }
    }
  });
}

//===----------------------------------------------------------------------===//
// conv_transpose(x[N, C, ...], w[C, M/g, k...][, b])
//===----------------------------------------------------------------------===//

struct TransposeGeom {
  size_t Rank;
  Shape In, Kernel, Strides, Dilations, PadBegin, PadEnd, Out;
};

TransposeGeom convTransposeGeom(const Tensor &X, const Tensor &Wt,
                                const Attrs &A, int64_t &Group) {
  const char *Op = "conv_transpose";
  checkSpatialInput(Op, X);
  if (Wt.rank() != X.rank())
    fail("{}: weight 'w' must have the rank of 'x' ({}), got {}", Op,
         shapeToString(X.shape()), shapeToString(Wt.shape()));
  Group = attrInt(Op, A, "group");
  int64_t C = X.shape()[1];
  if (Group < 1 || C % Group != 0)
    fail("{}: group {} must divide the input channels {}", Op, Group, C);
  if (Wt.shape()[0] != C)
    fail("{}: weight {} must have {} (input channels of x {}) as its first "
         "dimension",
         Op, shapeToString(Wt.shape()), C, shapeToString(X.shape()));
  TransposeGeom T;
  T.Rank = (size_t)X.rank() - 2;
  T.In = spatialOf(X);
  T.Kernel.assign(Wt.shape().begin() + 2, Wt.shape().end());
  if (A.has("kernel_shape") && attrInts(Op, A, "kernel_shape") != T.Kernel)
    fail("{}: attribute 'kernel_shape' ({}) does not match the weight {}", Op,
         fmt::join(attrInts(Op, A, "kernel_shape"), ", "),
         shapeToString(Wt.shape()));
  T.Strides = windowInts(Op, A, "strides", T.Rank, 1, 1);
  T.Dilations = windowInts(Op, A, "dilations", T.Rank, 1, 1);
  std::vector<int64_t> Pads = windowInts(Op, A, "pads", 2 * T.Rank, 0, 0);
  std::vector<int64_t> OutPad =
      windowInts(Op, A, "output_padding", T.Rank, 0, 0);
  std::string AutoPadName = attrString(Op, A, "auto_pad");
  if (AutoPadName != "NOTSET" && AutoPadName != "SAME_UPPER" &&
      AutoPadName != "SAME_LOWER" && AutoPadName != "VALID")
    fail("{}: unknown auto_pad '{}'", Op, AutoPadName);
  std::vector<int64_t> OutShape;
  if (A.has("output_shape")) {
    OutShape = attrInts(Op, A, "output_shape");
    if (OutShape.size() == T.Rank + 2) // the full shape is accepted too
      OutShape.erase(OutShape.begin(), OutShape.begin() + 2);
    if (OutShape.size() != T.Rank)
      fail("{}: attribute 'output_shape' must have {} entries, got {}", Op,
           T.Rank, OutShape.size());
  }
  AutoPad Mode = *parseAutoPad(AutoPadName);
  bool Given = !OutShape.empty() || Mode == AutoPad::SameUpper ||
               Mode == AutoPad::SameLower;
  for (size_t I = 0; I < T.Rank; ++I) {
    TransposedWindowAxis G = transposedWindowAxis(
        T.In[I], T.Kernel[I], T.Strides[I], T.Dilations[I], OutPad[I], Pads[I],
        Pads[I + T.Rank], Mode,
        OutShape.empty() ? std::nullopt : std::optional(OutShape[I]));
    if (G.out < 0 && Given)
      fail("{}: negative output extent {} along spatial axis {}", Op, G.out, I);
    if (G.out < 0)
      fail("{}: pads make the output extent negative along spatial axis {}", Op,
           I);
    T.PadBegin.push_back(G.padBegin);
    T.PadEnd.push_back(G.padEnd);
    T.Out.push_back(G.out);
  }
  return T;
}

std::vector<TensorMeta> convTransposeShape(const std::vector<Tensor> &In,
                                           const Attrs &A) {
  if (In.size() != 2 && In.size() != 3)
    fail("conv_transpose: expected 2 or 3 inputs (x, w[, b]), got {}",
         In.size());
  checkDType("conv_transpose", "x", In[0].dtype(), DTypeClass::Float);
  checkSameDType("conv_transpose", "x", In[0], "w", In[1]);
  int64_t G;
  TransposeGeom T = convTransposeGeom(In[0], In[1], A, G);
  int64_t M = In[1].shape()[1] * G;
  if (In.size() == 3) {
    checkSameDType("conv_transpose", "x", In[0], "b", In[2]);
    checkBias("conv_transpose", In[2], M);
  }
  Shape S{In[0].shape()[0], M};
  S.insert(S.end(), T.Out.begin(), T.Out.end());
  return {{S, In[0].dtype()}};
}

void convTransposeKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &A) {
  int64_t G;
  TransposeGeom T = convTransposeGeom(In[0], In[1], A, G);
  const Tensor &X = In[0], &Wt = In[1];
  int64_t N = X.shape()[0], C = X.shape()[1], CG = C / G;
  int64_t MG = Wt.shape()[1], M = MG * G;
  int64_t K = numElements(T.Kernel), I = numElements(T.In);
  int64_t O = numElements(T.Out);
  size_t R = T.Rank;
  std::vector<int64_t> OutStride = contiguousStrides(T.Out);
  auto Run = [&](auto AccTag) {
    using Acc = decltype(AccTag);
    std::vector<Acc> XV = toVec<Acc>(X), WV = toVec<Acc>(Wt);
    std::vector<Acc> Res((size_t)(N * M * O), Acc(0));
    std::vector<Acc> Col((size_t)(MG * K * I));
    for (int64_t Nb = 0; Nb < N; ++Nb)
      for (int64_t Gi = 0; Gi < G; ++Gi) {
        // col[(m, k), i] = sum_c w[c, m, k] * x[c, i]
        std::fill(Col.begin(), Col.end(), Acc(0));
        for (int64_t Ci = 0; Ci < CG; ++Ci) {
          const Acc *XR = XV.data() + (Nb * C + Gi * CG + Ci) * I;
          const Acc *WR = WV.data() + (Gi * CG + Ci) * MG * K;
          for (int64_t MK = 0; MK < MG * K; ++MK) {
            Acc Wv = WR[MK];
            if (Wv == Acc(0))
              continue;
            Acc *CR = Col.data() + MK * I;
            for (int64_t J = 0; J < I; ++J)
              CR[J] += Wv * XR[J];
          }
        }
        // col2im: scatter col[(m, k), i] to out[m, i * s - pb + k * d].
        std::vector<int64_t> KIdx(R, 0), IIdx(R, 0);
        for (int64_t Kk = 0; Kk < K; ++Kk) {
          std::fill(IIdx.begin(), IIdx.end(), 0);
          for (int64_t J = 0; J < I; ++J) {
            int64_t Off = 0;
            bool Inside = true;
            for (size_t D = 0; D < R; ++D) {
              int64_t P = IIdx[D] * T.Strides[D] - T.PadBegin[D] +
                          KIdx[D] * T.Dilations[D];
              if (P < 0 || P >= T.Out[D]) {
                Inside = false;
                break;
              }
              Off += P * OutStride[D];
            }
            if (Inside)
              for (int64_t Mi = 0; Mi < MG; ++Mi)
                Res[(size_t)((Nb * M + Gi * MG + Mi) * O + Off)] +=
                    Col[(size_t)((Mi * K + Kk) * I + J)];
            for (size_t D = R; D-- > 0;) {
              if (++IIdx[D] < T.In[D])
                break;
              IIdx[D] = 0;
            }
          }
          for (size_t D = R; D-- > 0;) {
            if (++KIdx[D] < T.Kernel[D])
              break;
            KIdx[D] = 0;
          }
        }
      }
    if (In.size() == 3) {
      std::vector<Acc> B = toVec<Acc>(In[2]);
      for (int64_t Nb = 0; Nb < N; ++Nb)
        for (int64_t Mi = 0; Mi < M; ++Mi)
          for (int64_t J = 0; J < O; ++J)
            Res[(size_t)((Nb * M + Mi) * O + J)] += B[(size_t)Mi];
    }
    dispatchDType(X.dtype(), [&](auto Tag) {
      using E = decltype(Tag);
      E *P = Out[0].data<E>();
      for (size_t J = 0; J < Res.size(); ++J)
        P[J] = convertElement<E>(Res[J]);
    });
  };
  if (X.dtype() == DType::Float64)
    Run(double{});
  else
    Run(float{});
}

//===----------------------------------------------------------------------===//
// Pools: max_pool (optionally with indices), avg_pool, lp_pool.
//===----------------------------------------------------------------------===//

Window poolWindow(const char *Op, const Tensor &X, const Attrs &A) {
  checkSpatialInput(Op, X);
  std::vector<int64_t> K = attrInts(Op, A, "kernel_shape");
  if (K.size() != (size_t)X.rank() - 2)
    fail("{}: attribute 'kernel_shape' must have {} entries for input {}, "
         "got {}",
         Op, X.rank() - 2, shapeToString(X.shape()), K.size());
  return makeWindow(Op, A, spatialOf(X), K, true);
}

Shape poolOutShape(const Tensor &X, const Window &W) {
  Shape S{X.shape()[0], X.shape()[1]};
  S.insert(S.end(), W.Out.begin(), W.Out.end());
  return S;
}

std::vector<TensorMeta> maxPoolShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  checkArity("max_pool", In, 1);
  DType T = In[0].dtype();
  if (T == DType::Bool || T == DType::Int16 || T == DType::Int32 ||
      T == DType::Int64)
    fail("max_pool: input 'x' must be a float dtype, int8 or uint8, got {}",
         dtypeName(T));
  Window W = poolWindow("max_pool", In[0], A);
  attrFlag("max_pool", A, "storage_order");
  Shape S = poolOutShape(In[0], W);
  if (attrFlag("max_pool", A, "with_indices"))
    return {{S, T}, {S, DType::Int64}};
  return {{S, T}};
}

void maxPoolKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &A) {
  const Tensor &X = In[0];
  Window W = poolWindow("max_pool", X, A);
  bool ColMajor = attrFlag("max_pool", A, "storage_order");
  bool WithIdx = Out.size() == 2;
  int64_t NC = X.shape()[0] * X.shape()[1], I = W.inSize(), O = W.outSize();
  std::vector<int64_t> InStride = contiguousStrides(W.In);
  // Column-major spatial index of a row-major offset (storage_order = 1).
  auto colMajor = [&](int64_t Off) {
    int64_t R = 0, Mul = 1;
    for (size_t D = 0; D < W.Rank; ++D) {
      int64_t Coord = (Off / InStride[D]) % W.In[D];
      R += Coord * Mul;
      Mul *= W.In[D];
    }
    return R;
  };
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (!std::is_same_v<E, bool>) {
      using CT = ComputeT<E>;
      const E *PX = X.data<E>();
      E *PY = Out[0].data<E>();
      int64_t *PI = WithIdx ? Out[1].data<int64_t>() : nullptr;
      for (int64_t B = 0; B < NC; ++B) {
        const E *XB = PX + B * I;
        forEachOutput(W, [&](int64_t OI, const std::vector<int64_t> &Start) {
          CT Best = std::numeric_limits<CT>::lowest();
          if constexpr (std::is_floating_point_v<CT>)
            Best = -std::numeric_limits<CT>::infinity();
          int64_t BestOff = -1;
          forEachInWindow(W, Start, [&](int64_t Off) {
            CT V = CT(XB[Off]);
            // The first NaN wins and stays (NaN propagates).
            if (BestOff < 0 || V > Best || (V != V && Best == Best)) {
              Best = V;
              BestOff = Off;
            }
          });
          PY[B * O + OI] = convertElement<E>(Best);
          if (PI)
            PI[B * O + OI] =
                BestOff < 0 ? -1
                            : B * I + (ColMajor ? colMajor(BestOff) : BestOff);
        });
      }
    }
  });
}

std::vector<TensorMeta> avgPoolShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  checkArity("avg_pool", In, 1);
  checkDType("avg_pool", "x", In[0].dtype(), DTypeClass::Float);
  Window W = poolWindow("avg_pool", In[0], A);
  attrFlag("avg_pool", A, "count_include_pad");
  return {{poolOutShape(In[0], W), In[0].dtype()}};
}

void avgPoolKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &A) {
  const Tensor &X = In[0];
  Window W = poolWindow("avg_pool", X, A);
  bool IncludePad = attrFlag("avg_pool", A, "count_include_pad");
  int64_t NC = X.shape()[0] * X.shape()[1], I = W.inSize(), O = W.outSize();
  // Divisor per output position: the window positions inside the padded
  // input (count_include_pad) or inside the input.
  std::vector<double> Div((size_t)O);
  forEachOutput(W, [&](int64_t OI, const std::vector<int64_t> &Start) {
    double Count = 1;
    for (size_t D = 0; D < W.Rank; ++D) {
      int64_t Lo = IncludePad ? -W.PadBegin[D] : 0;
      int64_t Hi = IncludePad ? W.In[D] + W.PadEnd[D] : W.In[D];
      int64_t N = 0;
      for (int64_t K = 0; K < W.Kernel[D]; ++K) {
        int64_t P = Start[D] + K * W.Dilations[D];
        N += P >= Lo && P < Hi;
      }
      Count *= (double)N;
    }
    Div[(size_t)OI] = Count;
  });
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      const E *PX = X.data<E>();
      E *PY = Out[0].data<E>();
      for (int64_t B = 0; B < NC; ++B) {
        const E *XB = PX + B * I;
        forEachOutput(W, [&](int64_t OI, const std::vector<int64_t> &Start) {
          double Sum = 0;
          forEachInWindow(W, Start,
                          [&](int64_t Off) { Sum += double(XB[Off]); });
          double D = Div[(size_t)OI];
          PY[B * O + OI] = convertElement<E>(
              D > 0 ? Sum / D : std::numeric_limits<double>::quiet_NaN());
        });
      }
    }
  });
}

std::vector<TensorMeta> lpPoolShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  checkArity("lp_pool", In, 1);
  checkDType("lp_pool", "x", In[0].dtype(), DTypeClass::Float);
  Window W = poolWindow("lp_pool", In[0], A);
  if (attrInt("lp_pool", A, "p") < 1)
    fail("lp_pool: attribute 'p' must be >= 1, got {}",
         attrInt("lp_pool", A, "p"));
  return {{poolOutShape(In[0], W), In[0].dtype()}};
}

void lpPoolKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  const Tensor &X = In[0];
  Window W = poolWindow("lp_pool", X, A);
  double P = (double)attrInt("lp_pool", A, "p");
  int64_t NC = X.shape()[0] * X.shape()[1], I = W.inSize(), O = W.outSize();
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      const E *PX = X.data<E>();
      E *PY = Out[0].data<E>();
      for (int64_t B = 0; B < NC; ++B) {
        const E *XB = PX + B * I;
        forEachOutput(W, [&](int64_t OI, const std::vector<int64_t> &Start) {
          double Sum = 0;
          forEachInWindow(W, Start, [&](int64_t Off) {
            Sum += std::pow(std::abs(double(XB[Off])), P);
          });
          PY[B * O + OI] = convertElement<E>(std::pow(Sum, 1.0 / P));
        });
      }
    }
  });
}

//===----------------------------------------------------------------------===//
// global_avg_pool / global_max_pool: reduce all spatial dims to 1.
//===----------------------------------------------------------------------===//

template <bool IsMax>
std::vector<TensorMeta> globalPoolShape(const std::vector<Tensor> &In,
                                        const Attrs &) {
  const char *Op = IsMax ? "global_max_pool" : "global_avg_pool";
  checkArity(Op, In, 1);
  checkDType(Op, "x", In[0].dtype(), DTypeClass::Float);
  checkSpatialInput(Op, In[0]);
  Shape S = In[0].shape();
  std::fill(S.begin() + 2, S.end(), 1);
  return {{S, In[0].dtype()}};
}

template <bool IsMax>
void globalPoolKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &) {
  const Tensor &X = In[0];
  int64_t NC = X.shape()[0] * X.shape()[1];
  int64_t I = prodRange(X.shape(), 2, X.shape().size());
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      const E *PX = X.data<E>();
      E *PY = Out[0].data<E>();
      for (int64_t B = 0; B < NC; ++B) {
        const E *XB = PX + B * I;
        double R = IsMax ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t J = 0; J < I; ++J) {
          double V = double(XB[J]);
          if constexpr (IsMax)
            R = (V > R || V != V) ? V : R;
          else
            R += V;
        }
        if constexpr (!IsMax)
          R = I > 0 ? R / (double)I : std::numeric_limits<double>::quiet_NaN();
        PY[B] = convertElement<E>(R);
      }
    }
  });
}

//===----------------------------------------------------------------------===//
// max_unpool(x, indices[, output_shape])
//===----------------------------------------------------------------------===//

Shape maxUnpoolOutShape(const std::vector<Tensor> &In, const Attrs &A,
                        bool FromInput) {
  const char *Op = FromInput ? "max_unpool_to_shape" : "max_unpool";
  checkArity(Op, In, FromInput ? 3 : 2);
  const Tensor &X = In[0], &Idx = In[1];
  checkSpatialInput(Op, X);
  if (Idx.dtype() != DType::Int64)
    fail("{}: input 'indices' must be int64, got {}", Op,
         dtypeName(Idx.dtype()));
  if (Idx.shape() != X.shape())
    fail("{}: 'indices' {} must have the shape of 'x' {}", Op,
         shapeToString(Idx.shape()), shapeToString(X.shape()));
  size_t R = (size_t)X.rank() - 2;
  std::vector<int64_t> K = attrInts(Op, A, "kernel_shape");
  if (K.size() != R)
    fail("{}: attribute 'kernel_shape' must have {} entries, got {}", Op, R,
         K.size());
  std::vector<int64_t> S = windowInts(Op, A, "strides", R, 1, 1);
  std::vector<int64_t> P = windowInts(Op, A, "pads", 2 * R, 0, 0);
  Shape Out{X.shape()[0], X.shape()[1]};
  for (size_t D = 0; D < R; ++D)
    Out.push_back((X.shape()[D + 2] - 1) * S[D] + K[D] - P[D] - P[D + R]);
  if (FromInput) {
    std::vector<int64_t> Given = In[2].toIntVector();
    if (Given.size() != Out.size())
      fail("{}: 'output_shape' must have {} entries, got {}", Op, Out.size(),
           Given.size());
    for (size_t D = 0; D < Given.size(); ++D)
      if (Given[D] < 0 || (D < 2 && Given[D] != Out[D]))
        fail("{}: invalid 'output_shape' ({}) for input {}", Op,
             fmt::join(Given, ", "), shapeToString(X.shape()));
    Out = Given;
  }
  for (int64_t D : Out)
    if (D < 0)
      fail("{}: pads make the output shape negative", Op);
  return Out;
}

template <bool FromInput>
std::vector<TensorMeta> maxUnpoolShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  return {{maxUnpoolOutShape(In, A, FromInput), In.at(0).dtype()}};
}

template <bool FromInput>
void maxUnpoolKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  const char *Op = FromInput ? "max_unpool_to_shape" : "max_unpool";
  const Tensor &X = In[0];
  const int64_t *PI = In[1].data<int64_t>();
  int64_t Total = Out[0].numel(), N = X.numel();
  // Indices address the default output shape (what max_pool saw); a given
  // output_shape keeps each element's coordinates.
  Shape Default = maxUnpoolOutShape({In[0], In[1]}, A, false);
  const Shape &OutS = Out[0].shape();
  bool Remap = Default != OutS;
  std::vector<int64_t> DStride = contiguousStrides(Default);
  std::vector<int64_t> OStride = contiguousStrides(OutS);
  int64_t DTotal = numElements(Default);
  auto target = [&](int64_t T) {
    if (T < 0 || T >= DTotal)
      fail("{}: index {} is out of range for the unpooled shape {}", Op, T,
           shapeToString(Default));
    if (!Remap)
      return T;
    int64_t R = 0;
    for (size_t D = 0; D < Default.size(); ++D) {
      int64_t Coord = (T / DStride[D]) % Default[D];
      if (Coord >= OutS[D])
        fail("{}: index {} lies outside the output shape {}", Op, T,
             shapeToString(OutS));
      R += Coord * OStride[D];
    }
    return R;
  };
  std::memset(Out[0].rawData(), 0, Out[0].nbytes());
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    const E *PX = X.data<E>();
    E *PY = Out[0].data<E>();
    for (int64_t J = 0; J < N; ++J) {
      int64_t T = target(PI[J]);
      if (T >= Total)
        fail("{}: index {} is out of range for the output of {} elements", Op,
             PI[J], Total);
      PY[T] = PX[J];
    }
  });
}

//===----------------------------------------------------------------------===//
// Normalizations.
//===----------------------------------------------------------------------===//

/// Checks a per-channel parameter of length C.
void checkChannelParam(const char *Op, const char *Arg, const Tensor &T,
                       int64_t C) {
  checkDType(Op, Arg, T.dtype(), DTypeClass::Float);
  if (T.rank() != 1 || T.shape()[0] != C)
    fail("{}: input '{}' must have shape ({},), got {}", Op, Arg, C,
         shapeToString(T.shape()));
}

/// Writes double values into a float tensor.
void storeDoubles(const std::vector<double> &V, Tensor &T) {
  dispatchDType(T.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E *P = T.data<E>();
    for (size_t I = 0; I < V.size(); ++I)
      P[I] = convertElement<E>(V[I]);
  });
}

std::vector<TensorMeta> batchNormShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  const char *Op = "batch_norm";
  checkArity(Op, In, 5);
  checkDType(Op, "x", In[0].dtype(), DTypeClass::Float);
  if (In[0].rank() < 2)
    fail("{}: input 'x' must have rank >= 2 ([N, C, ...]), got {}", Op,
         shapeToString(In[0].shape()));
  int64_t C = In[0].shape()[1];
  const char *Names[] = {"x", "scale", "bias", "mean", "var"};
  for (size_t I = 1; I < 5; ++I)
    checkChannelParam(Op, Names[I], In[I], C);
  if (attrFlag(Op, A, "training"))
    return {{In[0].shape(), In[0].dtype()},
            {{C}, In[3].dtype()},
            {{C}, In[4].dtype()}};
  return {{In[0].shape(), In[0].dtype()}};
}

void batchNormKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  const Tensor &X = In[0];
  double Eps = attrFloat("batch_norm", A, "epsilon");
  bool Training = Out.size() == 3;
  int64_t N = X.shape()[0], C = X.shape()[1];
  int64_t S = prodRange(X.shape(), 2, X.shape().size());
  std::vector<double> XV = X.toDoubleVector(), Y(XV.size());
  std::vector<double> Scale = In[1].toDoubleVector(),
                      Bias = In[2].toDoubleVector();
  std::vector<double> Mean = In[3].toDoubleVector(),
                      Var = In[4].toDoubleVector();
  if (Training) {
    // Batch statistics (biased variance) and updated running statistics.
    double Mom = attrFloat("batch_norm", A, "momentum");
    std::vector<double> RunMean(C), RunVar(C);
    for (int64_t Ci = 0; Ci < C; ++Ci) {
      double Sum = 0, Sq = 0, Cnt = (double)(N * S);
      for (int64_t Nb = 0; Nb < N; ++Nb)
        for (int64_t J = 0; J < S; ++J)
          Sum += XV[(size_t)((Nb * C + Ci) * S + J)];
      double M = Cnt > 0 ? Sum / Cnt : 0;
      for (int64_t Nb = 0; Nb < N; ++Nb)
        for (int64_t J = 0; J < S; ++J) {
          double D = XV[(size_t)((Nb * C + Ci) * S + J)] - M;
          Sq += D * D;
        }
      double V = Cnt > 0 ? Sq / Cnt : 0;
      RunMean[(size_t)Ci] = Mean[(size_t)Ci] * Mom + M * (1 - Mom);
      RunVar[(size_t)Ci] = Var[(size_t)Ci] * Mom + V * (1 - Mom);
      Mean[(size_t)Ci] = M;
      Var[(size_t)Ci] = V;
    }
    storeDoubles(RunMean, Out[1]);
    storeDoubles(RunVar, Out[2]);
  }
  for (int64_t Nb = 0; Nb < N; ++Nb)
    for (int64_t Ci = 0; Ci < C; ++Ci) {
      size_t Cs = (size_t)Ci;
      double Mul = Scale[Cs] / std::sqrt(Var[Cs] + Eps);
      double Add = Bias[Cs] - Mean[Cs] * Mul;
      size_t Base = (size_t)((Nb * C + Ci) * S);
      for (int64_t J = 0; J < S; ++J)
        Y[Base + J] = XV[Base + J] * Mul + Add;
    }
  storeDoubles(Y, Out[0]);
}

std::vector<TensorMeta> instanceNormShape(const std::vector<Tensor> &In,
                                          const Attrs &) {
  const char *Op = "instance_norm";
  checkArity(Op, In, 3);
  checkDType(Op, "x", In[0].dtype(), DTypeClass::Float);
  if (In[0].rank() < 3)
    fail("{}: input 'x' must have rank >= 3 ([N, C, D1, ...]), got {}", Op,
         shapeToString(In[0].shape()));
  checkChannelParam(Op, "scale", In[1], In[0].shape()[1]);
  checkChannelParam(Op, "bias", In[2], In[0].shape()[1]);
  return {{In[0].shape(), In[0].dtype()}};
}

void instanceNormKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                        const Attrs &A) {
  const Tensor &X = In[0];
  double Eps = attrFloat("instance_norm", A, "epsilon");
  int64_t N = X.shape()[0], C = X.shape()[1];
  int64_t S = prodRange(X.shape(), 2, X.shape().size());
  std::vector<double> XV = X.toDoubleVector(), Y(XV.size());
  std::vector<double> Scale = In[1].toDoubleVector(),
                      Bias = In[2].toDoubleVector();
  for (int64_t Nb = 0; Nb < N; ++Nb)
    for (int64_t Ci = 0; Ci < C; ++Ci) {
      size_t Base = (size_t)((Nb * C + Ci) * S);
      double Sum = 0, Sq = 0;
      for (int64_t J = 0; J < S; ++J)
        Sum += XV[Base + J];
      double M = S > 0 ? Sum / (double)S : 0;
      for (int64_t J = 0; J < S; ++J)
        Sq += (XV[Base + J] - M) * (XV[Base + J] - M);
      double V = S > 0 ? Sq / (double)S : 0;
      double Mul = Scale[(size_t)Ci] / std::sqrt(V + Eps);
      for (int64_t J = 0; J < S; ++J)
        Y[Base + J] = (XV[Base + J] - M) * Mul + Bias[(size_t)Ci];
    }
  storeDoubles(Y, Out[0]);
}

/// The dtype of a normalization's statistics (ONNX stash_type, a TensorProto
/// data type: 1 float, 10 float16, 11 double, 16 bfloat16): layer_norm's
/// Mean/InvStdDev. The kernels compute every statistic in double.
DType stashDType(const char *Op, const Attrs &A) {
  int64_t T = attrInt(Op, A, "stash_type");
  switch (T) {
  case 1: return DType::Float32;
  case 10: return DType::Float16;
  case 11: return DType::Float64;
  case 16: return DType::BFloat16;
  default:
    fail("{}: unsupported stash_type {} (expected 1, 10, 11 or 16)", Op, T);
  }
}

/// Validates layer_norm's inputs; returns the normalized axis.
int64_t layerNormAxis(const std::vector<Tensor> &In, const Attrs &A) {
  const char *Op = "layer_norm";
  if (In.size() != 2 && In.size() != 3)
    fail("{}: expected 2 or 3 inputs (x, scale[, bias]), got {}", Op,
         In.size());
  checkDType(Op, "x", In[0].dtype(), DTypeClass::Float);
  int64_t Axis = opAxis(Op, attrInt(Op, A, "axis"), In[0].rank());
  Shape Norm(In[0].shape().begin() + Axis, In[0].shape().end());
  for (size_t I = 1; I < In.size(); ++I) {
    const char *Arg = I == 1 ? "scale" : "bias";
    checkDType(Op, Arg, In[I].dtype(), DTypeClass::Float);
    bool Ok = In[I].rank() <= (int64_t)Norm.size();
    for (int64_t D = 0; Ok && D < In[I].rank(); ++D) {
      int64_t E = In[I].shape()[(size_t)(In[I].rank() - 1 - D)];
      Ok = E == 1 || E == Norm[Norm.size() - 1 - (size_t)D];
    }
    if (!Ok)
      fail("{}: input '{}' {} does not broadcast to the normalized shape {}",
           Op, Arg, shapeToString(In[I].shape()), shapeToString(Norm));
  }
  return Axis;
}

std::vector<TensorMeta> layerNormShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  int64_t Axis = layerNormAxis(In, A);
  DType SD = stashDType("layer_norm", A);
  if (!attrFlag("layer_norm", A, "with_stats"))
    return {{In[0].shape(), In[0].dtype()}};
  Shape Stat = In[0].shape();
  std::fill(Stat.begin() + Axis, Stat.end(), 1);
  return {{In[0].shape(), In[0].dtype()}, {Stat, SD}, {Stat, SD}};
}

void layerNormKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  const Tensor &X = In[0];
  int64_t Axis = layerNormAxis(In, A);
  double Eps = attrFloat("layer_norm", A, "epsilon");
  Shape Norm(X.shape().begin() + Axis, X.shape().end());
  int64_t S = numElements(Norm), Rows = prodRange(X.shape(), 0, (size_t)Axis);
  // Offsets of scale/bias for each position of the normalized block.
  auto offsets = [&](const Tensor &P) {
    std::vector<int64_t> Off((size_t)S);
    std::vector<int64_t> St = broadcastStrides(P.shape(), Norm);
    forEachStrided<1>(Norm, {St},
                      [&](int64_t O, const std::array<int64_t, 1> &F) {
                        Off[(size_t)O] = F[0];
                      });
    return Off;
  };
  std::vector<double> XV = X.toDoubleVector(), Y(XV.size());
  std::vector<double> Scale = In[1].toDoubleVector();
  std::vector<int64_t> SOff = offsets(In[1]);
  std::vector<double> Bias;
  std::vector<int64_t> BOff;
  if (In.size() == 3) {
    Bias = In[2].toDoubleVector();
    BOff = offsets(In[2]);
  }
  std::vector<double> Means((size_t)Rows), InvStd((size_t)Rows);
  for (int64_t R = 0; R < Rows; ++R) {
    size_t Base = (size_t)(R * S);
    double Sum = 0, Sq = 0;
    for (int64_t J = 0; J < S; ++J)
      Sum += XV[Base + J];
    double M = S > 0 ? Sum / (double)S : 0;
    for (int64_t J = 0; J < S; ++J)
      Sq += (XV[Base + J] - M) * (XV[Base + J] - M);
    double Inv = 1.0 / std::sqrt((S > 0 ? Sq / (double)S : 0) + Eps);
    Means[(size_t)R] = M;
    InvStd[(size_t)R] = Inv;
    for (int64_t J = 0; J < S; ++J) {
      double V = (XV[Base + J] - M) * Inv * Scale[(size_t)SOff[(size_t)J]];
      if (!Bias.empty())
        V += Bias[(size_t)BOff[(size_t)J]];
      Y[Base + J] = V;
    }
  }
  storeDoubles(Y, Out[0]);
  if (Out.size() == 3) {
    storeDoubles(Means, Out[1]);
    storeDoubles(InvStd, Out[2]);
  }
}

//===----------------------------------------------------------------------===//
// rms_norm, group_norm
//===----------------------------------------------------------------------===//

/// Validates rms_norm's inputs; returns the normalized axis.
int64_t rmsNormAxis(const std::vector<Tensor> &In, const Attrs &A) {
  const char *Op = "rms_norm";
  checkArity(Op, In, 2);
  checkDType(Op, "x", In[0].dtype(), DTypeClass::Float);
  checkDType(Op, "scale", In[1].dtype(), DTypeClass::Float);
  stashDType(Op, A);
  const Shape &X = In[0].shape(), &S = In[1].shape();
  bool Ok = S.size() <= X.size();
  for (size_t D = 0; Ok && D < S.size(); ++D)
    Ok = S[S.size() - 1 - D] == 1 || S[S.size() - 1 - D] == X[X.size() - 1 - D];
  if (!Ok)
    fail("{}: input 'scale' {} does not broadcast to x {}", Op,
         shapeToString(S), shapeToString(X));
  return opAxis(Op, attrInt(Op, A, "axis"), In[0].rank());
}

std::vector<TensorMeta> rmsNormShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  rmsNormAxis(In, A);
  return {{In[0].shape(), In[0].dtype()}};
}

/// Offsets into a tensor read with Strides (broadcastStrides) at every
/// position of Shape, in row-major order.
std::vector<int64_t> stridedOffsets(const Shape &Sh,
                                    const std::vector<int64_t> &Strides) {
  std::vector<int64_t> Off((size_t)numElements(Sh));
  forEachStrided<1>(Sh, {Strides},
                    [&](int64_t O, const std::array<int64_t, 1> &F) {
                      Off[(size_t)O] = F[0];
                    });
  return Off;
}

/// The sum of the squares of P[0, N) in double, in 8 independent partial
/// sums: the compiler vectorizes them (one running sum it may not reorder).
template <typename E> double sumOfSquares(const E *P, int64_t N) {
  constexpr int64_t K = 8;
  double Part[K] = {};
  int64_t J = 0;
  for (; J + K <= N; J += K)
    for (int64_t I = 0; I < K; ++I) {
      double V = convertElement<double>(P[J + I]);
      Part[I] += V * V;
    }
  for (; J < N; ++J) {
    double V = convertElement<double>(P[J]);
    Part[0] += V * V;
  }
  double Sum = 0;
  for (double V : Part)
    Sum += V;
  return Sum;
}

/// One pass over each row [axis, rank) of x: its sum of squares, then the
/// scaled row. The scale's offset is the sum of a per-row part (nonzero only
/// when scale spans axes before axis) and a per-position part.
void rmsNormKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &A) {
  const Tensor &X = In[0], &Scale = In[1];
  size_t Axis = (size_t)rmsNormAxis(In, A);
  double Eps = attrFloat("rms_norm", A, "epsilon");
  std::vector<int64_t> St = broadcastStrides(Scale.shape(), X.shape());
  Shape Lead(X.shape().begin(), X.shape().begin() + (ptrdiff_t)Axis);
  Shape Norm(X.shape().begin() + (ptrdiff_t)Axis, X.shape().end());
  std::vector<int64_t> RowOff =
      stridedOffsets(Lead, {St.begin(), St.begin() + (ptrdiff_t)Axis});
  std::vector<int64_t> PosOff =
      stridedOffsets(Norm, {St.begin() + (ptrdiff_t)Axis, St.end()});
  int64_t S = numElements(Norm), Rows = numElements(Lead);
  // The usual scale, of the normalized shape: read it as a plain array.
  bool DenseScale = true;
  for (size_t J = 0; J < PosOff.size() && DenseScale; ++J)
    DenseScale = PosOff[J] == (int64_t)J;
  dispatchDType(X.dtype(), [&](auto XTag) {
    using E = decltype(XTag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      dispatchDType(Scale.dtype(), [&](auto STag) {
        using W = decltype(STag);
        if constexpr (elemInClass<W>(DTypeClass::Float)) {
          const W *PS = Scale.data<W>();
          for (int64_t R = 0; R < Rows; ++R) {
            const E *PX = X.data<E>() + R * S;
            E *PY = Out[0].data<E>() + R * S;
            const W *Row = PS + RowOff[(size_t)R];
            double Sq = sumOfSquares(PX, S);
            double Inv =
                1.0 / std::sqrt(Sq / (double)std::max<int64_t>(S, 1) + Eps);
            if (DenseScale) {
              for (int64_t J = 0; J < S; ++J)
                PY[J] = convertElement<E>(convertElement<double>(PX[J]) * Inv *
                                          convertElement<double>(Row[J]));
              continue;
            }
            for (int64_t J = 0; J < S; ++J)
              PY[J] = convertElement<E>(
                  convertElement<double>(PX[J]) * Inv *
                  convertElement<double>(Row[PosOff[(size_t)J]]));
          }
        }
      });
    }
  });
}

/// Validates group_norm's inputs; returns num_groups.
int64_t groupNormGroups(const std::vector<Tensor> &In, const Attrs &A) {
  const char *Op = "group_norm";
  checkArity(Op, In, 3);
  checkDType(Op, "x", In[0].dtype(), DTypeClass::Float);
  checkSameDType(Op, "x", In[0], "scale", In[1]);
  checkSameDType(Op, "x", In[0], "bias", In[2]);
  stashDType(Op, A);
  if (In[0].rank() < 2)
    fail("{}: input 'x' must have rank >= 2 ([N, C, ...]), got {}", Op,
         shapeToString(In[0].shape()));
  int64_t G = attrInt(Op, A, "num_groups"), C = In[0].shape()[1];
  if (G < 1 || C % G != 0)
    fail("{}: num_groups {} does not divide the {} channels", Op, G, C);
  int64_t Len = attrFlag(Op, A, "per_group") ? G : C;
  for (size_t I : {size_t(1), size_t(2)})
    if (In[I].shape() != Shape{Len})
      fail("{}: input '{}' must have shape ({},), got {}", Op,
           I == 1 ? "scale" : "bias", Len, shapeToString(In[I].shape()));
  return G;
}

std::vector<TensorMeta> groupNormShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  groupNormGroups(In, A);
  return {{In[0].shape(), In[0].dtype()}};
}

/// The channels of a group are one contiguous block of x per instance: its
/// mean, then its variance (two passes, as the definition), then the output.
void groupNormKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  const Tensor &X = In[0];
  int64_t G = groupNormGroups(In, A);
  bool PerGroup = attrFlag("group_norm", A, "per_group");
  double Eps = attrFloat("group_norm", A, "epsilon");
  int64_t N = X.shape()[0], C = X.shape()[1], CG = C / G;
  int64_t S = prodRange(X.shape(), 2, X.shape().size()), Block = CG * S;
  std::vector<double> Scale = In[1].toDoubleVector(),
                      Bias = In[2].toDoubleVector();
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      for (int64_t Nb = 0; Nb < N; ++Nb)
        for (int64_t Gi = 0; Gi < G; ++Gi) {
          int64_t Base = (Nb * G + Gi) * Block;
          const E *PX = X.data<E>() + Base;
          E *PY = Out[0].data<E>() + Base;
          double Sum = 0, Sq = 0;
          for (int64_t J = 0; J < Block; ++J)
            Sum += convertElement<double>(PX[J]);
          double M = Block > 0 ? Sum / (double)Block : 0;
          for (int64_t J = 0; J < Block; ++J) {
            double D = convertElement<double>(PX[J]) - M;
            Sq += D * D;
          }
          double Inv =
              1.0 / std::sqrt((Block > 0 ? Sq / (double)Block : 0) + Eps);
          for (int64_t Ci = 0; Ci < CG; ++Ci) {
            size_t P = (size_t)(PerGroup ? Gi : Gi * CG + Ci);
            double Mul = Inv * Scale[P], Add = Bias[P] - M * Mul;
            for (int64_t J = Ci * S; J < (Ci + 1) * S; ++J)
              PY[J] =
                  convertElement<E>(convertElement<double>(PX[J]) * Mul + Add);
          }
        }
    }
  });
}

std::vector<TensorMeta> lrnShape(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  checkArity("lrn", In, 1);
  checkDType("lrn", "x", In[0].dtype(), DTypeClass::Float);
  if (In[0].rank() < 2)
    fail("lrn: input 'x' must have rank >= 2 ([N, C, ...]), got {}",
         shapeToString(In[0].shape()));
  if (attrInt("lrn", A, "size") < 1)
    fail("lrn: attribute 'size' must be >= 1, got {}",
         attrInt("lrn", A, "size"));
  return {{In[0].shape(), In[0].dtype()}};
}

void lrnKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  const Tensor &X = In[0];
  int64_t Size = attrInt("lrn", A, "size");
  double Alpha = attrFloat("lrn", A, "alpha");
  double Beta = attrFloat("lrn", A, "beta");
  double Bias = attrFloat("lrn", A, "bias");
  int64_t N = X.shape()[0], C = X.shape()[1];
  int64_t S = prodRange(X.shape(), 2, X.shape().size());
  int64_t Lo = (Size - 1) / 2, Hi = Size - 1 - Lo; // floor below, ceil above
  std::vector<double> XV = X.toDoubleVector(), Y(XV.size());
  for (int64_t Nb = 0; Nb < N; ++Nb)
    for (int64_t Ci = 0; Ci < C; ++Ci)
      for (int64_t J = 0; J < S; ++J) {
        double Sq = 0;
        for (int64_t K = std::max<int64_t>(0, Ci - Lo);
             K <= std::min<int64_t>(C - 1, Ci + Hi); ++K) {
          double V = XV[(size_t)((Nb * C + K) * S + J)];
          Sq += V * V;
        }
        size_t I = (size_t)((Nb * C + Ci) * S + J);
        Y[I] = XV[I] / std::pow(Bias + Alpha / (double)Size * Sq, Beta);
      }
  storeDoubles(Y, Out[0]);
}

/// The reduced axes of mean_variance_norm, normalized.
std::vector<bool> mvnAxes(const Tensor &X, const Attrs &A) {
  std::vector<int64_t> Axes = attrInts("mean_variance_norm", A, "axes");
  std::vector<bool> Red((size_t)X.rank(), false);
  for (int64_t Ax : Axes) {
    int64_t N = opAxis("mean_variance_norm", Ax, X.rank());
    if (Red[(size_t)N])
      fail("mean_variance_norm: axis {} is repeated", Ax);
    Red[(size_t)N] = true;
  }
  return Red;
}

std::vector<TensorMeta> mvnShape(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  checkArity("mean_variance_norm", In, 1);
  checkDType("mean_variance_norm", "x", In[0].dtype(), DTypeClass::Float);
  mvnAxes(In[0], A);
  return {{In[0].shape(), In[0].dtype()}};
}

void mvnKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  const Tensor &X = In[0];
  std::vector<bool> Red = mvnAxes(X, A);
  // Group elements by their coordinates on the kept axes.
  Shape Kept;
  for (size_t D = 0; D < Red.size(); ++D)
    Kept.push_back(Red[D] ? 1 : X.shape()[D]);
  std::vector<int64_t> St = broadcastStrides(Kept, X.shape());
  int64_t G = numElements(Kept);
  std::vector<int64_t> Group((size_t)X.numel());
  forEachStrided<1>(X.shape(), {St},
                    [&](int64_t O, const std::array<int64_t, 1> &F) {
                      Group[(size_t)O] = F[0];
                    });
  std::vector<double> XV = X.toDoubleVector(), Y(XV.size());
  std::vector<double> Sum((size_t)G, 0), Sq((size_t)G, 0), Cnt((size_t)G, 0);
  for (size_t I = 0; I < XV.size(); ++I) {
    Sum[(size_t)Group[I]] += XV[I];
    Cnt[(size_t)Group[I]] += 1;
  }
  for (size_t I = 0; I < Sum.size(); ++I)
    Sum[I] = Cnt[I] > 0 ? Sum[I] / Cnt[I] : 0;
  for (size_t I = 0; I < XV.size(); ++I) {
    double D = XV[I] - Sum[(size_t)Group[I]];
    Sq[(size_t)Group[I]] += D * D;
  }
  // ONNX's function body: (x - mean) / (sqrt(var) + 1e-9).
  for (size_t I = 0; I < XV.size(); ++I) {
    size_t Gi = (size_t)Group[I];
    double Std = std::sqrt(Cnt[Gi] > 0 ? Sq[Gi] / Cnt[Gi] : 0);
    Y[I] = (XV[I] - Sum[Gi]) / (Std + 1e-9);
  }
  storeDoubles(Y, Out[0]);
}

} // namespace

RIVET_REGISTER_KERNEL("conv", convKernel, convShape, false);
RIVET_REGISTER_KERNEL("conv_integer", convIntegerKernel, convIntegerShape,
                      false);
RIVET_REGISTER_KERNEL("qlinear_conv", qlinearConvKernel, qlinearConvShape,
                      false);
RIVET_REGISTER_KERNEL("conv_transpose", convTransposeKernel, convTransposeShape,
                      false);
RIVET_REGISTER_KERNEL("max_pool", maxPoolKernel, maxPoolShape, false);
RIVET_REGISTER_KERNEL("avg_pool", avgPoolKernel, avgPoolShape, false);
RIVET_REGISTER_KERNEL("lp_pool", lpPoolKernel, lpPoolShape, false);
RIVET_REGISTER_KERNEL("global_avg_pool", globalPoolKernel<false>,
                      globalPoolShape<false>, false);
RIVET_REGISTER_KERNEL("global_max_pool", globalPoolKernel<true>,
                      globalPoolShape<true>, false);
RIVET_REGISTER_KERNEL("max_unpool", maxUnpoolKernel<false>,
                      maxUnpoolShape<false>, false);
RIVET_REGISTER_KERNEL("max_unpool_to_shape", maxUnpoolKernel<true>,
                      maxUnpoolShape<true>, true);
RIVET_REGISTER_KERNEL("batch_norm", batchNormKernel, batchNormShape, false);
RIVET_REGISTER_KERNEL("instance_norm", instanceNormKernel, instanceNormShape,
                      false);
RIVET_REGISTER_KERNEL("layer_norm", layerNormKernel, layerNormShape, false);
RIVET_REGISTER_KERNEL("rms_norm", rmsNormKernel, rmsNormShape, false);
RIVET_REGISTER_KERNEL("group_norm", groupNormKernel, groupNormShape, false);
RIVET_REGISTER_KERNEL("lrn", lrnKernel, lrnShape, false);
RIVET_REGISTER_KERNEL("mean_variance_norm", mvnKernel, mvnShape, false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

namespace {
using Ints = std::vector<int64_t>;
/// Strides, pads and dilations have no schema default: their length is the
/// input's spatial rank. WindowGeometry.h fills them.
std::vector<AttrSpec> withWindow(std::vector<AttrSpec> Extra) {
  std::vector<AttrSpec> S = {
      {"strides", AttrKind::Ints, false, "step per spatial axis (default 1s)"},
      {"pads", AttrKind::Ints, false,
       "begin pads then end pads per spatial axis (default 0s)"},
      {"dilations", AttrKind::Ints, false,
       "dilation per spatial axis (default 1s)"},
      {"auto_pad", AttrKind::String, false,
       "NOTSET, SAME_UPPER, SAME_LOWER or VALID", "NOTSET"},
      {"kernel_shape", AttrKind::Ints, false,
       "window extents (conv: taken from the weight)"}};
  S.insert(S.end(), Extra.begin(), Extra.end());
  return S;
}
std::vector<AttrSpec> poolSpecs(std::vector<AttrSpec> Extra) {
  std::vector<AttrSpec> S = withWindow(std::move(Extra));
  for (AttrSpec &A : S)
    if (A.name == "kernel_shape")
      A.required = true;
  S.push_back(
      {"ceil_mode", AttrKind::Int, false, "1: round the output extent up", 0});
  return S;
}
const std::vector<AttrSpec> UnpoolSpecs = {
    {"kernel_shape", AttrKind::Ints, true, "the pool's window extents"},
    {"strides", AttrKind::Ints, false, "the pool's steps (default 1s)"},
    {"pads", AttrKind::Ints, false, "the pool's pads (default 0s)"}};
} // namespace

/// Also conv2d_nchwc's (Layout.cc), hence built on each call rather than
/// kept in a static that another file's registrar might read first.
std::vector<AttrSpec> convWindowAttrs() {
  return withWindow({{"group", AttrKind::Int, false, "groups of channels", 1}});
}

RIVET_REGISTER_ATTRS("conv", convWindowAttrs());
RIVET_REGISTER_ATTRS("conv_integer", convWindowAttrs());
RIVET_REGISTER_ATTRS("qlinear_conv", convWindowAttrs());
RIVET_REGISTER_ATTRS(
    "conv_transpose",
    withWindow({{"group", AttrKind::Int, false, "groups of channels", 1},
                {"output_padding", AttrKind::Ints, false,
                 "extra extent at the end per spatial axis"},
                {"output_shape", AttrKind::Ints, false,
                 "explicit spatial output extents (pads derived)"}}));
RIVET_REGISTER_ATTRS("max_pool",
                     poolSpecs({{"storage_order", AttrKind::Int, false,
                                 "indices: 0 row-major, 1 column-major", 0},
                                {"with_indices", AttrKind::Int, false,
                                 "1: return (y, indices)", 0}}));
RIVET_REGISTER_ATTRS("avg_pool",
                     poolSpecs({{"count_include_pad", AttrKind::Int, false,
                                 "1: divide by the padded window size", 0}}));
RIVET_REGISTER_ATTRS("lp_pool", poolSpecs({{"p", AttrKind::Int, false,
                                            "the norm's exponent", 2}}));
RIVET_REGISTER_ATTRS("max_unpool", UnpoolSpecs);
RIVET_REGISTER_ATTRS("max_unpool_to_shape", UnpoolSpecs);
RIVET_REGISTER_ATTRS("batch_norm",
                     {{"epsilon", AttrKind::Float, false,
                       "added to the variance", 1e-5},
                      {"momentum", AttrKind::Float, false,
                       "running-stat momentum in training", 0.9},
                      {"training", AttrKind::Int, false,
                       "1: use batch stats, return (y, mean, var)", 0}});
RIVET_REGISTER_ATTRS("instance_norm", {{"epsilon", AttrKind::Float, false,
                                        "added to the variance", 1e-5}});
RIVET_REGISTER_ATTRS(
    "layer_norm",
    {{"axis", AttrKind::Int, false, "first normalized axis", -1},
     {"epsilon", AttrKind::Float, false, "added to the variance", 1e-5},
     {"stash_type", AttrKind::Int, false,
      "dtype of the statistics (ONNX code; 1 is float32)", 1},
     {"with_stats", AttrKind::Int, false, "1: return (y, mean, inv_std_dev)",
      0}});
RIVET_REGISTER_ATTRS(
    "rms_norm",
    {{"axis", AttrKind::Int, false, "first normalized axis", -1},
     {"epsilon", AttrKind::Float, false, "added to the mean square", 1e-5},
     {"stash_type", AttrKind::Int, false,
      "precision of the statistics (ONNX code; 1 is float32)", 1}});
RIVET_REGISTER_ATTRS(
    "group_norm",
    {{"num_groups", AttrKind::Int, true, "groups of channels"},
     {"epsilon", AttrKind::Float, false, "added to the variance", 1e-5},
     {"stash_type", AttrKind::Int, false,
      "precision of the statistics (ONNX code; 1 is float32)", 1},
     {"per_group", AttrKind::Int, false,
      "1: scale and bias have one value per group (ONNX opset 18), 0: per "
      "channel",
      0}});
RIVET_REGISTER_ATTRS(
    "lrn",
    {{"size", AttrKind::Int, true, "number of channels summed over"},
     {"alpha", AttrKind::Float, false, "scale of the sum of squares", 1e-4},
     {"beta", AttrKind::Float, false, "exponent", 0.75},
     {"bias", AttrKind::Float, false, "added to the scaled sum", 1.0}});
RIVET_REGISTER_ATTRS("mean_variance_norm",
                     {{"axes", AttrKind::Ints, false, "the reduced axes",
                       Ints{0, 2, 3}}});

} // namespace rivet::kernels
