//===- Image.cc - resize, grid_sample, roi_align, non_max_suppression -----===//
//
// Reference kernels of the image operators, with ONNX semantics. Resize is
// separable: each axis gets, per output index, a short list of (input index,
// weight) taps; an output element is the sum over the tensor product of its
// taps. Arithmetic happens in double and is converted once per element.
// Optional inputs of the *_dynamic/nms variants are absent when they have
// zero elements (the frontend passes an empty constant for a missing input).
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rivet::kernels {
namespace {

std::vector<double> attrFloats(const char *Op, const Attrs &A,
                               const std::string &N) {
  if (!A.has(N))
    return {};
  return withOp(Op, [&] { return A.getFloats(N); });
}

/// Reads a float and integer attribute value list of a dynamic input.
std::vector<double> floatValues(const char *Op, const char *Name,
                                const Tensor &T) {
  if (T.numel() > 0 && !isFloat(T.dtype()))
    fail("{}: input '{}' must have a float dtype, got {}", Op, Name,
         dtypeName(T.dtype()));
  return T.toDoubleVector();
}
std::vector<int64_t> intValues(const char *Op, const char *Name,
                               const Tensor &T) {
  if (T.numel() > 0 && T.dtype() != DType::Int64 && T.dtype() != DType::Int32)
    fail("{}: input '{}' must have dtype int64, got {}", Op, Name,
         dtypeName(T.dtype()));
  return T.toIntVector();
}

//===----------------------------------------------------------------------===//
// resize / resize_dynamic
//===----------------------------------------------------------------------===//

struct ResizeParams {
  std::string Mode, CoordMode, NearestMode, KeepPolicy;
  double CubicA = -0.75;
  bool ExcludeOutside = false;
  double Extrapolation = 0.0;
  std::vector<int64_t> Axes;
  std::vector<double> Roi, Scales;
  std::vector<int64_t> Sizes;
};

ResizeParams resizeParams(const char *Op, const Attrs &A) {
  ResizeParams P;
  P.Mode = attrString(Op, A, "mode");
  P.CoordMode = attrString(Op, A, "coordinate_transformation_mode");
  P.NearestMode = attrString(Op, A, "nearest_mode");
  P.KeepPolicy = attrString(Op, A, "keep_aspect_ratio_policy");
  P.CubicA = attrFloat(Op, A, "cubic_coeff_a");
  P.ExcludeOutside = attrFlag(Op, A, "exclude_outside");
  P.Extrapolation = attrFloat(Op, A, "extrapolation_value");
  P.Axes = attrInts(Op, A, "axes");
  if (P.Mode != "nearest" && P.Mode != "linear" && P.Mode != "cubic")
    fail("{}: unknown mode '{}' (expected nearest, linear or cubic)", Op,
         P.Mode);
  static const char *Coords[] = {"half_pixel",           "pytorch_half_pixel",
                                 "align_corners",        "asymmetric",
                                 "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                 "half_pixel_symmetric"};
  if (std::find(std::begin(Coords), std::end(Coords), P.CoordMode) ==
      std::end(Coords))
    fail("{}: unknown coordinate_transformation_mode '{}'", Op, P.CoordMode);
  static const char *Nearest[] = {"round_prefer_floor", "round_prefer_ceil",
                                  "floor", "ceil"};
  if (std::find(std::begin(Nearest), std::end(Nearest), P.NearestMode) ==
      std::end(Nearest))
    fail("{}: unknown nearest_mode '{}'", Op, P.NearestMode);
  if (P.KeepPolicy != "stretch" && P.KeepPolicy != "not_larger" &&
      P.KeepPolicy != "not_smaller")
    fail("{}: unknown keep_aspect_ratio_policy '{}'", Op, P.KeepPolicy);
  return P;
}

/// Output shape plus, per axis, the scale and the roi used by the
/// coordinate transformation.
struct ResizePlan {
  Shape Out;
  std::vector<double> Scale, RoiStart, RoiEnd;
  std::vector<bool> FromSizes;
};

ResizePlan planResize(const char *Op, const Shape &In, const ResizeParams &P) {
  int64_t R = (int64_t)In.size();
  std::vector<int64_t> Axes = P.Axes;
  if (Axes.empty()) {
    Axes.resize((size_t)R);
    std::iota(Axes.begin(), Axes.end(), 0);
  }
  std::vector<bool> Seen((size_t)R, false);
  for (int64_t &Ax : Axes) {
    Ax = opAxis(Op, Ax, R);
    if (Seen[(size_t)Ax])
      fail("{}: axis {} appears twice in 'axes'", Op, Ax);
    Seen[(size_t)Ax] = true;
  }
  size_t NA = Axes.size();
  bool HasScales = !P.Scales.empty(), HasSizes = !P.Sizes.empty();
  if (HasScales == HasSizes)
    fail("{}: exactly one of 'scales' and 'sizes' must be given", Op);
  ResizePlan Plan;
  Plan.Out = In;
  Plan.Scale.assign((size_t)R, 1.0);
  Plan.RoiStart.assign((size_t)R, 0.0);
  Plan.RoiEnd.assign((size_t)R, 1.0);
  Plan.FromSizes.assign((size_t)R, false);
  if (HasScales) {
    if (P.Scales.size() != NA)
      fail("{}: 'scales' has {} values, expected {} (one per axis of {})", Op,
           P.Scales.size(), NA, shapeToString(In));
    for (size_t I = 0; I < NA; ++I) {
      double S = P.Scales[I];
      if (!(S > 0))
        fail("{}: scales must be positive, got {}", Op, S);
      size_t D = (size_t)Axes[I];
      Plan.Scale[D] = S;
      // ONNX: floor(input_dimension * scale), computed in double.
      Plan.Out[D] = (int64_t)std::floor(S * (double)In[D]);
    }
  } else {
    if (P.Sizes.size() != NA)
      fail("{}: 'sizes' has {} values, expected {} (one per axis of {})", Op,
           P.Sizes.size(), NA, shapeToString(In));
    for (size_t I = 0; I < NA; ++I)
      if (P.Sizes[I] < 0)
        fail("{}: sizes must be non-negative, got {}", Op, P.Sizes[I]);
    if (P.KeepPolicy == "stretch") {
      for (size_t I = 0; I < NA; ++I) {
        size_t D = (size_t)Axes[I];
        Plan.Out[D] = P.Sizes[I];
        Plan.Scale[D] = In[D] == 0 ? 1.0 : (double)P.Sizes[I] / (double)In[D];
        Plan.FromSizes[D] = true;
      }
    } else {
      // One scale for all axes keeps the aspect ratio.
      bool Larger = P.KeepPolicy == "not_smaller";
      double S = Larger ? 0.0 : INFINITY;
      for (size_t I = 0; I < NA; ++I) {
        size_t D = (size_t)Axes[I];
        double Ratio = In[D] == 0 ? 1.0 : (double)P.Sizes[I] / (double)In[D];
        S = Larger ? std::max(S, Ratio) : std::min(S, Ratio);
      }
      for (size_t I = 0; I < NA; ++I) {
        size_t D = (size_t)Axes[I];
        Plan.Scale[D] = S;
        Plan.Out[D] = (int64_t)std::floor(S * (double)In[D] + 0.5);
      }
    }
  }
  if (P.CoordMode == "tf_crop_and_resize") {
    if (P.Roi.size() != 2 * NA)
      fail("{}: tf_crop_and_resize needs 'roi' with {} values (starts and "
           "ends per axis), got {}",
           Op, 2 * NA, P.Roi.size());
    for (size_t I = 0; I < NA; ++I) {
      Plan.RoiStart[(size_t)Axes[I]] = P.Roi[I];
      Plan.RoiEnd[(size_t)Axes[I]] = P.Roi[NA + I];
    }
  }
  return Plan;
}

struct Tap {
  int64_t Index;
  double Weight;
};

/// The taps of one output index along one axis; empty means "extrapolate"
/// (tf_crop_and_resize outside the input).
std::vector<Tap> resizeTaps(const ResizeParams &P, int64_t X, int64_t InLen,
                            int64_t OutLen, double Scale, double RoiStart,
                            double RoiEnd, bool FromSizes) {
  double XD = (double)X, InF = (double)InLen;
  // The reference computes the output length as scale * input length.
  double OutF = FromSizes ? (double)OutLen : Scale * InF;
  double Ori;
  const std::string &C = P.CoordMode;
  if (C == "align_corners") {
    Ori = OutF == 1 ? 0.0 : XD * (InF - 1) / (OutF - 1);
  } else if (C == "asymmetric") {
    Ori = XD / Scale;
  } else if (C == "tf_crop_and_resize") {
    Ori = OutF == 1 ? (RoiEnd - RoiStart) * (InF - 1) / 2
                    : XD * (RoiEnd - RoiStart) * (InF - 1) / (OutF - 1);
    Ori += RoiStart * (InF - 1);
    if (Ori < 0 || Ori > InF - 1)
      return {};
  } else if (C == "pytorch_half_pixel") {
    Ori = OutF == 1 ? -0.5 : (XD + 0.5) / Scale - 0.5;
  } else if (C == "tf_half_pixel_for_nn") {
    Ori = (XD + 0.5) / Scale;
  } else if (C == "half_pixel_symmetric") {
    double Adjust = (double)OutLen / (Scale * InF);
    double Center = InF / 2;
    Ori = Center * (1 - Adjust) + (XD + 0.5) / Scale - 0.5;
  } else {
    Ori = (XD + 0.5) / Scale - 0.5;
  }
  auto Clamp = [&](int64_t I) { return std::clamp<int64_t>(I, 0, InLen - 1); };
  double Floor = std::floor(Ori);
  int64_t Base = (int64_t)Floor;
  double T = Ori - Floor;
  std::vector<Tap> Taps;
  if (P.Mode == "nearest") {
    int64_t I = Base;
    if (T != 0) {
      const std::string &M = P.NearestMode;
      bool Up = M == "ceil" || (M == "round_prefer_floor" && T > 0.5) ||
                (M == "round_prefer_ceil" && T >= 0.5);
      I = Up ? Base + 1 : Base;
    }
    Taps.push_back({Clamp(I), 1.0});
    return Taps;
  }
  std::vector<double> W;
  int64_t First;
  if (P.Mode == "linear") {
    W = {1 - T, T};
    First = Base;
  } else {
    double A = P.CubicA;
    auto Near = [&](double S) { return ((A + 2) * S - (A + 3)) * S * S + 1; };
    auto Far = [&](double S) {
      return ((A * S - 5 * A) * S + 8 * A) * S - 4 * A;
    };
    W = {Far(T + 1), Near(T), Near(1 - T), Far(2 - T)};
    First = Base - 1;
  }
  if (P.ExcludeOutside) {
    double Sum = 0;
    for (size_t K = 0; K < W.size(); ++K) {
      int64_t I = First + (int64_t)K;
      if (I < 0 || I >= InLen)
        W[K] = 0;
      Sum += W[K];
    }
    if (Sum != 0)
      for (double &V : W)
        V /= Sum;
  }
  for (size_t K = 0; K < W.size(); ++K)
    if (W[K] != 0)
      Taps.push_back({Clamp(First + (int64_t)K), W[K]});
  if (Taps.empty())
    Taps.push_back({Clamp(Base), 0.0});
  return Taps;
}

void runResize(const char *Op, const Tensor &X, Tensor &Out,
               const ResizeParams &P) {
  ResizePlan Plan = planResize(Op, X.shape(), P);
  const Shape &In = X.shape();
  size_t R = In.size();
  if (Out.numel() == 0)
    return;
  if (X.numel() == 0)
    fail("{}: cannot resize the empty tensor {} to {}", Op, shapeToString(In),
         shapeToString(Plan.Out));
  // Taps[d][o]; an empty list marks an extrapolated position.
  std::vector<std::vector<std::vector<Tap>>> Taps(R);
  for (size_t D = 0; D < R; ++D)
    for (int64_t O = 0; O < Plan.Out[D]; ++O)
      Taps[D].push_back(resizeTaps(P, O, In[D], Plan.Out[D], Plan.Scale[D],
                                   Plan.RoiStart[D], Plan.RoiEnd[D],
                                   Plan.FromSizes[D]));
  std::vector<int64_t> Strides = contiguousStrides(In);
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (std::is_same_v<E, bool>) {
      fail("{}: input 'x' must be numeric, got bool", Op);
    } else {
      const E *PX = X.data<E>();
      E *PO = Out.data<E>();
      std::vector<int64_t> Idx(R, 0);
      std::vector<const std::vector<Tap> *> Cur(R);
      auto Sum = [&](auto &&Self, size_t D, int64_t Off) -> double {
        if (D == R)
          return (double)ComputeT<E>(PX[Off]);
        double S = 0;
        for (const Tap &T : *Cur[D])
          S += T.Weight * Self(Self, D + 1, Off + T.Index * Strides[D]);
        return S;
      };
      int64_t Total = Out.numel();
      for (int64_t O = 0; O < Total; ++O) {
        bool Extrapolate = false;
        for (size_t D = 0; D < R; ++D) {
          Cur[D] = &Taps[D][(size_t)Idx[D]];
          Extrapolate |= Cur[D]->empty();
        }
        double V = Extrapolate ? P.Extrapolation : Sum(Sum, 0, 0);
        PO[O] = convertElement<E>(V);
        for (size_t D = R; D-- > 0;) {
          if (++Idx[D] < Plan.Out[D])
            break;
          Idx[D] = 0;
        }
      }
    }
  });
}

ResizeParams staticResizeParams(const Attrs &A) {
  ResizeParams P = resizeParams("resize", A);
  P.Scales = attrFloats("resize", A, "scales");
  // Absent sizes are no sizes: the scales give the extents.
  if (A.has("sizes"))
    P.Sizes = attrInts("resize", A, "sizes");
  P.Roi = attrFloats("resize", A, "roi");
  return P;
}

ResizeParams dynamicResizeParams(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  const char *Op = "resize_dynamic";
  ResizeParams P = resizeParams(Op, A);
  P.Roi = floatValues(Op, "roi", In[1]);
  P.Scales = floatValues(Op, "scales", In[2]);
  P.Sizes = intValues(Op, "sizes", In[3]);
  return P;
}

void checkResizeInput(const char *Op, const Tensor &X) {
  checkDType(Op, "x", X.dtype(), DTypeClass::Numeric);
  if (X.rank() == 0)
    fail("{}: the input must have rank >= 1, got a scalar", Op);
}

std::vector<TensorMeta> resizeShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  checkArity("resize", In, 1);
  checkResizeInput("resize", In[0]);
  return {{planResize("resize", In[0].shape(), staticResizeParams(A)).Out,
           In[0].dtype()}};
}
void resizeKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  runResize("resize", In[0], Out[0], staticResizeParams(A));
}

std::vector<TensorMeta> resizeDynamicShape(const std::vector<Tensor> &In,
                                           const Attrs &A) {
  checkArity("resize_dynamic", In, 4);
  checkResizeInput("resize_dynamic", In[0]);
  return {
      {planResize("resize_dynamic", In[0].shape(), dynamicResizeParams(In, A))
           .Out,
       In[0].dtype()}};
}
void resizeDynamicKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &A) {
  runResize("resize_dynamic", In[0], Out[0], dynamicResizeParams(In, A));
}

//===----------------------------------------------------------------------===//
// grid_sample (PyTorch/ONNX semantics, 4-D)
//===----------------------------------------------------------------------===//

struct GridParams {
  int Mode;    // 0 bilinear, 1 nearest, 2 bicubic
  int Padding; // 0 zeros, 1 border, 2 reflection
  bool AlignCorners;
};

GridParams gridParams(const Attrs &A) {
  const char *Op = "grid_sample";
  GridParams G;
  std::string M = attrString(Op, A, "mode");
  std::string Pad = attrString(Op, A, "padding_mode");
  if (M == "bilinear" || M == "linear")
    G.Mode = 0;
  else if (M == "nearest")
    G.Mode = 1;
  else if (M == "bicubic" || M == "cubic")
    G.Mode = 2;
  else
    fail("{}: unknown mode '{}' (expected bilinear, nearest or bicubic)", Op,
         M);
  if (Pad == "zeros")
    G.Padding = 0;
  else if (Pad == "border")
    G.Padding = 1;
  else if (Pad == "reflection")
    G.Padding = 2;
  else
    fail("{}: unknown padding_mode '{}' (expected zeros, border or "
         "reflection)",
         Op, Pad);
  G.AlignCorners = attrFlag(Op, A, "align_corners");
  return G;
}

double reflectCoord(double X, double TwiceLow, double TwiceHigh) {
  if (TwiceLow == TwiceHigh)
    return 0;
  double Min = TwiceLow / 2, Span = (TwiceHigh - TwiceLow) / 2;
  X = std::fabs(X - Min);
  double Extra = std::fmod(X, Span);
  int64_t Flips = (int64_t)std::floor(X / Span);
  return Flips % 2 == 0 ? Extra + Min : Span - Extra + Min;
}

/// Applies the padding mode to a source coordinate (border/reflection).
double padCoord(const GridParams &G, double X, int64_t Size) {
  if (G.Padding == 1)
    return std::clamp(X, 0.0, (double)(Size - 1));
  if (G.Padding == 2) {
    X = G.AlignCorners ? reflectCoord(X, 0, 2.0 * (double)(Size - 1))
                       : reflectCoord(X, -1, 2.0 * (double)Size - 1);
    return std::clamp(X, 0.0, (double)(Size - 1));
  }
  return X;
}

double unnormalize(const GridParams &G, double X, int64_t Size) {
  return G.AlignCorners ? (X + 1) / 2 * (double)(Size - 1)
                        : ((X + 1) * (double)Size - 1) / 2;
}

double cubicWeight(double T, int K) {
  const double A = -0.75;
  auto Near = [&](double S) { return ((A + 2) * S - (A + 3)) * S * S + 1; };
  auto Far = [&](double S) {
    return ((A * S - 5 * A) * S + 8 * A) * S - 4 * A;
  };
  switch (K) {
  case 0: return Far(T + 1);
  case 1: return Near(T);
  case 2: return Near(1 - T);
  default: return Far(2 - T);
  }
}

std::vector<TensorMeta> gridSampleShape(const std::vector<Tensor> &In,
                                        const Attrs &A) {
  const char *Op = "grid_sample";
  checkArity(Op, In, 2);
  gridParams(A);
  const Tensor &X = In[0], &Grid = In[1];
  checkDType(Op, "x", X.dtype(), DTypeClass::Float);
  checkSameDType(Op, "x", X, "grid", Grid);
  if (X.rank() != 4 || Grid.rank() != 4 || Grid.shape()[3] != 2 ||
      Grid.shape()[0] != X.shape()[0])
    fail("{}: expected x [N, C, H, W] and grid [N, H_out, W_out, 2], got {} "
         "and {}",
         Op, shapeToString(X.shape()), shapeToString(Grid.shape()));
  return {{{X.shape()[0], X.shape()[1], Grid.shape()[1], Grid.shape()[2]},
           X.dtype()}};
}

void gridSampleKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &A) {
  GridParams G = gridParams(A);
  const Tensor &X = In[0], &Grid = In[1];
  int64_t N = X.shape()[0], C = X.shape()[1], H = X.shape()[2],
          W = X.shape()[3];
  int64_t HO = Grid.shape()[1], WO = Grid.shape()[2];
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      const E *PX = X.data<E>(), *PG = Grid.data<E>();
      E *PO = Out[0].data<E>();
      for (int64_t B = 0; B < N; ++B)
        for (int64_t Y = 0; Y < HO; ++Y)
          for (int64_t XO = 0; XO < WO; ++XO) {
            const E *GP = PG + ((B * HO + Y) * WO + XO) * 2;
            double GX = (double)ComputeT<E>(GP[0]),
                   GY = (double)ComputeT<E>(GP[1]);
            double IX = unnormalize(G, GX, W), IY = unnormalize(G, GY, H);
            // A non-finite location samples nothing (and is never cast).
            bool Finite = std::isfinite(IX) && std::isfinite(IY);
            for (int64_t Ch = 0; Ch < C; ++Ch) {
              const E *Img = PX + (B * C + Ch) * H * W;
              auto At = [&](int64_t YY, int64_t XX) -> double {
                if (YY < 0 || YY >= H || XX < 0 || XX >= W)
                  return 0.0;
                return (double)ComputeT<E>(Img[YY * W + XX]);
              };
              double V = 0;
              if (!Finite) {
                V = 0;
              } else if (G.Mode == 2) {
                // Bicubic pads each tap, not the sample point.
                double FX = std::floor(IX), FY = std::floor(IY);
                double TX = IX - FX, TY = IY - FY;
                for (int KY = 0; KY < 4; ++KY) {
                  double Row = 0;
                  for (int KX = 0; KX < 4; ++KX) {
                    double SX = padCoord(G, FX - 1 + KX, W);
                    double SY = padCoord(G, FY - 1 + KY, H);
                    Row += cubicWeight(TX, KX) * At((int64_t)SY, (int64_t)SX);
                  }
                  V += cubicWeight(TY, KY) * Row;
                }
              } else {
                double SX = padCoord(G, IX, W), SY = padCoord(G, IY, H);
                if (G.Mode == 1) {
                  V = At((int64_t)std::nearbyint(SY),
                         (int64_t)std::nearbyint(SX));
                } else {
                  double FX = std::floor(SX), FY = std::floor(SY);
                  double TX = SX - FX, TY = SY - FY;
                  int64_t X0 = (int64_t)FX, Y0 = (int64_t)FY;
                  V = At(Y0, X0) * (1 - TX) * (1 - TY) +
                      At(Y0, X0 + 1) * TX * (1 - TY) +
                      At(Y0 + 1, X0) * (1 - TX) * TY +
                      At(Y0 + 1, X0 + 1) * TX * TY;
                }
              }
              PO[((B * C + Ch) * HO + Y) * WO + XO] = convertElement<E>(V);
            }
          }
    } else {
      checkDType("grid_sample", "x", X.dtype(), DTypeClass::Float);
    }
  });
}

//===----------------------------------------------------------------------===//
// roi_align (ONNX semantics, as onnxruntime computes it)
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> roiAlignShape(const std::vector<Tensor> &In,
                                      const Attrs &A) {
  const char *Op = "roi_align";
  checkArity(Op, In, 3);
  const Tensor &X = In[0], &Rois = In[1], &Idx = In[2];
  checkDType(Op, "x", X.dtype(), DTypeClass::Float);
  checkSameDType(Op, "x", X, "rois", Rois);
  checkDType(Op, "batch_indices", Idx.dtype(), DTypeClass::Index);
  if (X.rank() != 4 || Rois.rank() != 2 || Rois.shape()[1] != 4 ||
      Idx.rank() != 1 || Idx.shape()[0] != Rois.shape()[0])
    fail("{}: expected x [N, C, H, W], rois [R, 4] and batch_indices [R], got "
         "{}, {} and {}",
         Op, shapeToString(X.shape()), shapeToString(Rois.shape()),
         shapeToString(Idx.shape()));
  if (X.shape()[2] == 0 || X.shape()[3] == 0)
    fail("{}: the input has an empty spatial extent: {}", Op,
         shapeToString(X.shape()));
  int64_t OH = attrInt(Op, A, "output_height"),
          OW = attrInt(Op, A, "output_width");
  if (OH <= 0 || OW <= 0)
    fail("{}: output_height and output_width must be positive, got {} and {}",
         Op, OH, OW);
  if (attrInt(Op, A, "sampling_ratio") < 0)
    fail("{}: sampling_ratio must be non-negative", Op);
  std::string Mode = attrString(Op, A, "mode");
  if (Mode != "avg" && Mode != "max")
    fail("{}: unknown mode '{}' (expected avg or max)", Op, Mode);
  std::string Coord = attrString(Op, A, "coordinate_transformation_mode");
  if (Coord != "half_pixel" && Coord != "output_half_pixel")
    fail("{}: unknown coordinate_transformation_mode '{}'", Op, Coord);
  return {{{Rois.shape()[0], X.shape()[1], OH, OW}, X.dtype()}};
}

void roiAlignKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                    const Attrs &A) {
  const char *Op = "roi_align";
  const Tensor &X = In[0], &Rois = In[1];
  int64_t N = X.shape()[0], C = X.shape()[1], H = X.shape()[2],
          W = X.shape()[3];
  int64_t NR = Rois.shape()[0];
  int64_t OH = attrInt(Op, A, "output_height"),
          OW = attrInt(Op, A, "output_width");
  int64_t Ratio = attrInt(Op, A, "sampling_ratio");
  double Scale = attrFloat(Op, A, "spatial_scale");
  bool Max = attrString(Op, A, "mode") == "max";
  double Offset =
      attrString(Op, A, "coordinate_transformation_mode") == "half_pixel" ? 0.5
                                                                          : 0.0;
  std::vector<int64_t> Batch = In[2].toIntVector();
  std::vector<double> R = Rois.toDoubleVector();
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      const E *PX = X.data<E>();
      E *PO = Out[0].data<E>();
      for (int64_t I = 0; I < NR; ++I) {
        int64_t B = Batch[(size_t)I];
        if (B < 0 || B >= N)
          fail("{}: batch index {} of roi {} is out of range for batch size {}",
               Op, B, I, N);
        double X1 = R[(size_t)I * 4] * Scale - Offset,
               Y1 = R[(size_t)I * 4 + 1] * Scale - Offset,
               X2 = R[(size_t)I * 4 + 2] * Scale - Offset,
               Y2 = R[(size_t)I * 4 + 3] * Scale - Offset;
        double RW = X2 - X1, RH = Y2 - Y1;
        if (Offset == 0) {
          // Legacy mode: rois are at least one pixel.
          RW = std::max(RW, 1.0);
          RH = std::max(RH, 1.0);
        }
        double BinH = RH / (double)OH, BinW = RW / (double)OW;
        int64_t GH = Ratio > 0 ? Ratio : (int64_t)std::ceil(RH / (double)OH);
        int64_t GW = Ratio > 0 ? Ratio : (int64_t)std::ceil(RW / (double)OW);
        double Count = (double)std::max<int64_t>(GH * GW, 1);
        for (int64_t Ch = 0; Ch < C; ++Ch) {
          const E *Img = PX + (B * C + Ch) * H * W;
          for (int64_t PH = 0; PH < OH; ++PH)
            for (int64_t PW = 0; PW < OW; ++PW) {
              double Acc = 0;
              bool First = true;
              for (int64_t IY = 0; IY < GH; ++IY) {
                double Y = Y1 + (double)PH * BinH +
                           ((double)IY + 0.5) * BinH / (double)GH;
                for (int64_t IX = 0; IX < GW; ++IX) {
                  double XX = X1 + (double)PW * BinW +
                              ((double)IX + 0.5) * BinW / (double)GW;
                  // Bilinear sample with onnxruntime's border rules.
                  double Yc = Y, Xc = XX;
                  double V = 0;
                  double W1 = 0, W2 = 0, W3 = 0, W4 = 0;
                  int64_t YL = 0, XL = 0, YH = 0, XH = 0;
                  bool Inside = std::isfinite(Yc) && std::isfinite(Xc) &&
                                !(Yc < -1.0 || Yc > (double)H || Xc < -1.0 ||
                                  Xc > (double)W);
                  if (Inside) {
                    Yc = std::max(Yc, 0.0);
                    Xc = std::max(Xc, 0.0);
                    YL = (int64_t)Yc;
                    XL = (int64_t)Xc;
                    if (YL >= H - 1) {
                      YH = YL = H - 1;
                      Yc = (double)YL;
                    } else {
                      YH = YL + 1;
                    }
                    if (XL >= W - 1) {
                      XH = XL = W - 1;
                      Xc = (double)XL;
                    } else {
                      XH = XL + 1;
                    }
                    double LY = Yc - (double)YL, LX = Xc - (double)XL;
                    double HY = 1 - LY, HX = 1 - LX;
                    W1 = HY * HX;
                    W2 = HY * LX;
                    W3 = LY * HX;
                    W4 = LY * LX;
                  }
                  auto P = [&](int64_t YY, int64_t XQ) {
                    return (double)ComputeT<E>(Img[YY * W + XQ]);
                  };
                  if (Max) {
                    if (Inside)
                      V = std::max(std::max(W1 * P(YL, XL), W2 * P(YL, XH)),
                                   std::max(W3 * P(YH, XL), W4 * P(YH, XH)));
                    Acc = First ? V : std::max(Acc, V);
                    First = false;
                  } else if (Inside) {
                    Acc += W1 * P(YL, XL) + W2 * P(YL, XH) + W3 * P(YH, XL) +
                           W4 * P(YH, XH);
                  }
                }
              }
              double Res = Max ? Acc : Acc / Count;
              PO[((I * C + Ch) * OH + PH) * OW + PW] = convertElement<E>(Res);
            }
        }
      }
    } else {
      checkDType(Op, "x", X.dtype(), DTypeClass::Float);
    }
  });
}

//===----------------------------------------------------------------------===//
// non_max_suppression
//===----------------------------------------------------------------------===//

struct NmsPlan {
  std::vector<int64_t> Selected; // triples
};

NmsPlan planNms(const std::vector<Tensor> &In, const Attrs &A) {
  const char *Op = "non_max_suppression";
  checkArity(Op, In, 5);
  const Tensor &Boxes = In[0], &Scores = In[1];
  checkDType(Op, "boxes", Boxes.dtype(), DTypeClass::Float);
  checkDType(Op, "scores", Scores.dtype(), DTypeClass::Float);
  if (Boxes.rank() != 3 || Boxes.shape()[2] != 4 || Scores.rank() != 3 ||
      Scores.shape()[0] != Boxes.shape()[0] ||
      Scores.shape()[2] != Boxes.shape()[1])
    fail("{}: expected boxes [B, S, 4] and scores [B, C, S], got {} and {}", Op,
         shapeToString(Boxes.shape()), shapeToString(Scores.shape()));
  for (size_t I = 2; I < 5; ++I)
    if (In[I].numel() > 1)
      fail("{}: input {} must be a scalar or have one element, got {}", Op,
           I + 1, shapeToString(In[I].shape()));
  int64_t CenterBox = attrInt(Op, A, "center_point_box");
  if (CenterBox != 0 && CenterBox != 1)
    fail("{}: center_point_box must be 0 or 1, got {}", Op, CenterBox);
  int64_t MaxOut = In[2].numel() ? In[2].elementAsInt(0) : 0;
  double Iou = In[3].numel() ? In[3].elementAsDouble(0) : 0.0;
  bool HasThreshold = In[4].numel() > 0;
  double ScoreThr = HasThreshold ? In[4].elementAsDouble(0) : 0.0;
  if (Iou < 0 || Iou > 1)
    fail("{}: iou_threshold must be in [0, 1], got {}", Op, Iou);
  int64_t B = Boxes.shape()[0], S = Boxes.shape()[1], C = Scores.shape()[1];
  std::vector<double> BV = Boxes.toDoubleVector(), SV = Scores.toDoubleVector();
  // Boxes as (y1, x1, y2, x2) with y1 <= y2, x1 <= x2.
  auto Corners = [&](int64_t Bi, int64_t I) {
    const double *P = &BV[(size_t)((Bi * S + I) * 4)];
    std::array<double, 4> R;
    if (CenterBox) {
      R = {P[1] - P[3] / 2, P[0] - P[2] / 2, P[1] + P[3] / 2, P[0] + P[2] / 2};
    } else {
      R = {std::min(P[0], P[2]), std::min(P[1], P[3]), std::max(P[0], P[2]),
           std::max(P[1], P[3])};
    }
    return R;
  };
  auto Suppress = [&](const std::array<double, 4> &X,
                      const std::array<double, 4> &Y) {
    double AX = (X[2] - X[0]) * (X[3] - X[1]);
    double AY = (Y[2] - Y[0]) * (Y[3] - Y[1]);
    if (AX <= 0 || AY <= 0)
      return false;
    double IH = std::min(X[2], Y[2]) - std::max(X[0], Y[0]);
    double IW = std::min(X[3], Y[3]) - std::max(X[1], Y[1]);
    if (IH <= 0 || IW <= 0)
      return false;
    double Inter = IH * IW;
    return Inter / (AX + AY - Inter) > Iou;
  };
  NmsPlan P;
  if (MaxOut <= 0)
    return P;
  for (int64_t Bi = 0; Bi < B; ++Bi) {
    std::vector<std::array<double, 4>> Box((size_t)S);
    for (int64_t I = 0; I < S; ++I)
      Box[(size_t)I] = Corners(Bi, I);
    for (int64_t Ci = 0; Ci < C; ++Ci) {
      const double *Sc = &SV[(size_t)((Bi * C + Ci) * S)];
      std::vector<int64_t> Order;
      for (int64_t I = 0; I < S; ++I)
        if (!HasThreshold || Sc[I] > ScoreThr)
          Order.push_back(I);
      // Highest score first; equal scores keep the lower index first.
      std::stable_sort(Order.begin(), Order.end(),
                       [&](int64_t L, int64_t R) { return Sc[L] > Sc[R]; });
      std::vector<int64_t> Kept;
      for (int64_t I : Order) {
        if ((int64_t)Kept.size() >= MaxOut)
          break;
        bool Ok = true;
        for (int64_t K : Kept)
          if (Suppress(Box[(size_t)K], Box[(size_t)I])) {
            Ok = false;
            break;
          }
        if (Ok) {
          Kept.push_back(I);
          P.Selected.insert(P.Selected.end(), {Bi, Ci, I});
        }
      }
    }
  }
  return P;
}

std::vector<TensorMeta> nmsShape(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  NmsPlan P = planNms(In, A);
  return {{{(int64_t)P.Selected.size() / 3, 3}, DType::Int64}};
}

void nmsKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  NmsPlan P = planNms(In, A);
  if ((int64_t)P.Selected.size() != Out[0].numel())
    fail("non_max_suppression: output has {} elements, expected {}",
         Out[0].numel(), P.Selected.size());
  std::copy(P.Selected.begin(), P.Selected.end(), Out[0].data<int64_t>());
}

} // namespace

RIVET_REGISTER_KERNEL("resize", resizeKernel, resizeShape, false);
RIVET_REGISTER_KERNEL("resize_dynamic", resizeDynamicKernel, resizeDynamicShape,
                      true);
RIVET_REGISTER_KERNEL("grid_sample", gridSampleKernel, gridSampleShape, false);
RIVET_REGISTER_KERNEL("roi_align", roiAlignKernel, roiAlignShape, false);
RIVET_REGISTER_KERNEL("non_max_suppression", nmsKernel, nmsShape, true);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

namespace {
std::vector<AttrSpec> resizeCommonAttrs() {
  return {
      {"mode", AttrKind::String, false, "nearest, linear or cubic", "nearest"},
      {"coordinate_transformation_mode", AttrKind::String, false,
       "half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
       "tf_half_pixel_for_nn, tf_crop_and_resize, half_pixel_symmetric",
       "half_pixel"},
      {"nearest_mode", AttrKind::String, false,
       "round_prefer_floor, round_prefer_ceil, floor or ceil",
       "round_prefer_floor"},
      {"cubic_coeff_a", AttrKind::Float, false, "cubic coefficient", -0.75},
      {"exclude_outside", AttrKind::Int, false,
       "1: zero the weights of taps outside the input", 0},
      {"extrapolation_value", AttrKind::Float, false,
       "value outside the roi for tf_crop_and_resize", 0.0},
      {"axes", AttrKind::Ints, false, "the resized axes; empty: all",
       std::vector<int64_t>{}},
      {"keep_aspect_ratio_policy", AttrKind::String, false,
       "stretch, not_larger or not_smaller (with sizes)", "stretch"},
  };
}
std::vector<AttrSpec> resizeStaticAttrs() {
  std::vector<AttrSpec> S = resizeCommonAttrs();
  S.push_back({"scales", AttrKind::Floats, false, "scale per resized axis"});
  S.push_back(
      {"sizes", AttrKind::Ints, false, "output extent per resized axis"});
  S.push_back({"roi", AttrKind::Floats, false,
               "starts then ends per resized axis (tf_crop_and_resize)"});
  return S;
}
} // namespace
RIVET_REGISTER_ATTRS("resize", resizeStaticAttrs());
RIVET_REGISTER_ATTRS("resize_dynamic", resizeCommonAttrs());
RIVET_REGISTER_ATTRS("grid_sample",
                     {{"mode", AttrKind::String, false,
                       "bilinear, nearest or bicubic", "bilinear"},
                      {"padding_mode", AttrKind::String, false,
                       "zeros, border or reflection", "zeros"},
                      {"align_corners", AttrKind::Int, false,
                       "1: -1/1 are pixel centers", 0}});
RIVET_REGISTER_ATTRS(
    "roi_align",
    {{"mode", AttrKind::String, false, "avg or max", "avg"},
     {"output_height", AttrKind::Int, false, "bins per roi height", 1},
     {"output_width", AttrKind::Int, false, "bins per roi width", 1},
     {"sampling_ratio", AttrKind::Int, false,
      "samples per bin side (0: adaptive)", 0},
     {"spatial_scale", AttrKind::Float, false, "roi to input scale", 1.0},
     {"coordinate_transformation_mode", AttrKind::String, false,
      "half_pixel or output_half_pixel", "half_pixel"}});
RIVET_REGISTER_ATTRS("non_max_suppression",
                     {{"center_point_box", AttrKind::Int, false,
                       "0: [y1, x1, y2, x2], 1: [x_c, y_c, w, h]", 0}});

} // namespace rivet::kernels
