//===- DeformConv.cc - deform_conv ----------------------------------------===//
//
// The reference deformable convolution (ONNX DeformConv), N-D: each tap of
// each output position's window is moved by its offset and sampled
// N-linearly (zero outside the input), scaled by the mask, and multiplied
// into the weights of the output channels of its group. Arithmetic happens
// in double.
//
//===----------------------------------------------------------------------===//
#include "kernels/WindowGeometry.h"
#include "kernels/ops/KernelUtil.h"

#include <cmath>

namespace rivet::kernels {
namespace {

constexpr const char *DeformConvOp = "deform_conv";

struct DeformPlan {
  size_t R = 0; // spatial rank
  int64_t N = 0, C = 0, M = 0, Group = 1, OffsetGroup = 1;
  Shape In, Kernel, OutSpatial; // spatial extents
  std::vector<int64_t> Strides, Pads, Dilations;
  bool HasBias = false, HasMask = false;
  Shape Out;
};

DeformPlan planDeform(const std::vector<Tensor> &In, const Attrs &A) {
  checkArity(DeformConvOp, In, 5);
  const Tensor &X = In[0], &W = In[1], &Off = In[2], &B = In[3], &Mask = In[4];
  checkDType(DeformConvOp, "x", X.dtype(), DTypeClass::Float);
  checkSameDType(DeformConvOp, "x", X, "w", W);
  checkSameDType(DeformConvOp, "x", X, "offset", Off);
  checkSameDType(DeformConvOp, "x", X, "b", B);
  checkSameDType(DeformConvOp, "x", X, "mask", Mask);
  DeformPlan P;
  if (X.rank() < 3 || W.rank() != X.rank())
    fail("{}: expected x [N, C, D1, ...] and w [M, C/group, k1, ...] of one "
         "rank, got {} and {}",
         DeformConvOp, shapeToString(X.shape()), shapeToString(W.shape()));
  P.R = (size_t)X.rank() - 2;
  P.N = X.shape()[0];
  P.C = X.shape()[1];
  P.M = W.shape()[0];
  P.Group = attrInt(DeformConvOp, A, "group");
  P.OffsetGroup = attrInt(DeformConvOp, A, "offset_group");
  if (P.Group < 1 || P.OffsetGroup < 1 || P.C % P.Group != 0 ||
      P.M % P.Group != 0 || P.C % P.OffsetGroup != 0 ||
      W.shape()[1] * P.Group != P.C)
    fail("{}: group {} and offset_group {} do not fit x {} and w {}",
         DeformConvOp, P.Group, P.OffsetGroup, shapeToString(X.shape()),
         shapeToString(W.shape()));
  P.In.assign(X.shape().begin() + 2, X.shape().end());
  P.Kernel.assign(W.shape().begin() + 2, W.shape().end());
  if (A.has("kernel_shape") &&
      attrInts(DeformConvOp, A, "kernel_shape") != P.Kernel)
    fail("{}: attribute 'kernel_shape' {} does not match the weight {}",
         DeformConvOp, shapeToString(attrInts(DeformConvOp, A, "kernel_shape")),
         shapeToString(W.shape()));
  P.Strides = windowInts(DeformConvOp, A, "strides", P.R, 1, 1);
  P.Dilations = windowInts(DeformConvOp, A, "dilations", P.R, 1, 1);
  P.Pads = windowInts(DeformConvOp, A, "pads", 2 * P.R, 0, 0);
  for (size_t D = 0; D < P.R; ++D)
    P.OutSpatial.push_back(
        constWindowAxis(DeformConvOp, D, P.In[D], P.Kernel[D], P.Strides[D],
                        P.Dilations[D], P.Pads[D], P.Pads[D + P.R],
                        AutoPad::NotSet, false)
            .out);
  int64_t Taps = numElements(P.Kernel);
  Shape Want = {P.N, P.OffsetGroup * Taps * (int64_t)P.R};
  Want.insert(Want.end(), P.OutSpatial.begin(), P.OutSpatial.end());
  if (Off.shape() != Want)
    fail("{}: offset must be {}, got {}", DeformConvOp, shapeToString(Want),
         shapeToString(Off.shape()));
  P.HasBias = B.numel() > 0;
  if (P.HasBias && B.shape() != Shape{P.M})
    fail("{}: b must be [{}] (or empty), got {}", DeformConvOp, P.M,
         shapeToString(B.shape()));
  P.HasMask = Mask.numel() > 0;
  Want[1] = P.OffsetGroup * Taps;
  if (P.HasMask && Mask.shape() != Want)
    fail("{}: mask must be {} (or empty), got {}", DeformConvOp,
         shapeToString(Want), shapeToString(Mask.shape()));
  P.Out = {P.N, P.M};
  P.Out.insert(P.Out.end(), P.OutSpatial.begin(), P.OutSpatial.end());
  return P;
}

std::vector<TensorMeta> deformConvShape(const std::vector<Tensor> &In,
                                        const Attrs &A) {
  return {{planDeform(In, A).Out, In[0].dtype()}};
}

struct DeformTap {
  int64_t Offset; // flat spatial offset into one input channel
  double Weight;
};

void deformConvKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &A) {
  DeformPlan P = planDeform(In, A);
  size_t R = P.R;
  std::vector<double> X = In[0].toDoubleVector(), W = In[1].toDoubleVector(),
                      Off = In[2].toDoubleVector(), B = In[3].toDoubleVector(),
                      Mask = In[4].toDoubleVector();
  int64_t InSize = numElements(P.In), OutSize = numElements(P.OutSpatial);
  int64_t Taps = numElements(P.Kernel);
  int64_t CPerGroup = P.C / P.Group, MPerGroup = P.M / P.Group;
  int64_t CPerOffsetGroup = P.C / P.OffsetGroup;
  std::vector<int64_t> InStrides = contiguousStrides(P.In);
  std::vector<double> Y((size_t)Out[0].numel(), 0.0);
  std::vector<int64_t> OIdx(R), KIdx(R);
  std::vector<DeformTap> Sample, Next;
  for (int64_t Nb = 0; Nb < P.N; ++Nb)
    for (int64_t O = 0; O < OutSize; ++O) {
      for (size_t D = R, Rest = (size_t)O; D-- > 0;) {
        OIdx[D] = (int64_t)Rest % P.OutSpatial[D];
        Rest /= (size_t)P.OutSpatial[D];
      }
      for (int64_t G = 0; G < P.OffsetGroup; ++G)
        for (int64_t K = 0; K < Taps; ++K) {
          for (size_t D = R, Rest = (size_t)K; D-- > 0;) {
            KIdx[D] = (int64_t)Rest % P.Kernel[D];
            Rest /= (size_t)P.Kernel[D];
          }
          // The moved tap, sampled N-linearly; corners outside read zero.
          Sample.assign(1, DeformTap{0, 1.0});
          for (size_t D = 0; D < R && !Sample.empty(); ++D) {
            int64_t Ch =
                ((Nb * P.OffsetGroup + G) * Taps + K) * (int64_t)R + (int64_t)D;
            double Pos = (double)(OIdx[D] * P.Strides[D] - P.Pads[D] +
                                  KIdx[D] * P.Dilations[D]) +
                         Off[(size_t)(Ch * OutSize + O)];
            double F = std::floor(Pos), T = Pos - F;
            Next.clear();
            for (int Corner = 0; Corner < 2; ++Corner) {
              double I = F + Corner;
              if (!(I >= 0 && I < (double)P.In[D]))
                continue;
              double Wt = Corner ? T : 1 - T;
              for (const DeformTap &S : Sample)
                Next.push_back(
                    {S.Offset + (int64_t)I * InStrides[D], S.Weight * Wt});
            }
            Sample.swap(Next);
          }
          if (Sample.empty())
            continue;
          double Scale =
              P.HasMask ? Mask[(size_t)(((Nb * P.OffsetGroup + G) * Taps + K) *
                                            OutSize +
                                        O)]
                        : 1.0;
          for (int64_t C = G * CPerOffsetGroup; C < (G + 1) * CPerOffsetGroup;
               ++C) {
            const double *Img = X.data() + (Nb * P.C + C) * InSize;
            double V = 0;
            for (const DeformTap &S : Sample)
              V += S.Weight * Img[S.Offset];
            V *= Scale;
            int64_t Grp = C / CPerGroup;
            for (int64_t M = Grp * MPerGroup; M < (Grp + 1) * MPerGroup; ++M)
              Y[(size_t)((Nb * P.M + M) * OutSize + O)] +=
                  V * W[(size_t)((M * CPerGroup + C % CPerGroup) * Taps + K)];
          }
        }
    }
  if (P.HasBias)
    for (int64_t Nb = 0; Nb < P.N; ++Nb)
      for (int64_t M = 0; M < P.M; ++M)
        for (int64_t O = 0; O < OutSize; ++O)
          Y[(size_t)((Nb * P.M + M) * OutSize + O)] += B[(size_t)M];
  dispatchDType(Out[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E *PO = Out[0].data<E>();
    for (size_t I = 0; I < Y.size(); ++I)
      PO[I] = convertElement<E>(Y[I]);
  });
}

} // namespace

RIVET_REGISTER_KERNEL("deform_conv", deformConvKernel, deformConvShape, false);

RIVET_REGISTER_ATTRS(
    "deform_conv",
    {{"strides", AttrKind::Ints, false, "step per spatial axis (default 1s)"},
     {"pads", AttrKind::Ints, false,
      "begin pads then end pads per spatial axis (default 0s)"},
     {"dilations", AttrKind::Ints, false,
      "dilation per spatial axis (default 1s)"},
     {"kernel_shape", AttrKind::Ints, false,
      "window extents (default the weight's)"},
     {"group", AttrKind::Int, false, "groups of channels", 1},
     {"offset_group", AttrKind::Int, false,
      "groups of input channels sharing one set of offsets", 1}});

} // namespace rivet::kernels
