//===- Image.cc - Resampling, sampling grids, col2im, roi_align, NMS ------===//
//
// Reference kernels of the image operators, with ONNX semantics. Resize and
// grid_sample are separable: each axis gets, per output index, a short list
// of (input index, weight) taps; an output element is the sum over the
// tensor product of its taps. Arithmetic happens in double and is converted
// once per element.
// Optional inputs of the *_dynamic/nms variants are absent when they have
// zero elements (the frontend passes an empty constant for a missing input).
//
//===----------------------------------------------------------------------===//
#include "kernels/WindowGeometry.h"
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
  bool Antialias = false;
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
  P.Antialias = attrFlag(Op, A, "antialias");
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
  double A = P.CubicA;
  auto Near = [&](double S) { return ((A + 2) * S - (A + 3)) * S * S + 1; };
  auto Far = [&](double S) {
    return ((A * S - 5 * A) * S + 8 * A) * S - 4 * A;
  };
  if (P.Antialias && Scale < 1) {
    // Downsampling stretches the filter by 1 / Scale (ONNX's reference):
    // taps Lo + K around Ori, weighted by the filter at (Lo + K - Ori) *
    // Scale and normalized to sum 1. Lo rounds toward the left neighbour, so
    // an integral Ori takes Ori - 1 as the left tap.
    double Support = P.Mode == "linear" ? 1.0 : 2.0;
    int64_t Start = (int64_t)std::floor(-Support / Scale) + 1;
    int64_t Left = T == 0 ? Base - 1 : Base;
    First = Left + Start;
    double Sum = 0;
    for (int64_t K = 0; K < 2 - 2 * Start; ++K) {
      double D = std::fabs((double)(First + K) - Ori) * Scale;
      double V = P.Mode == "linear" ? std::max(1 - D, 0.0)
                 : D <= 1           ? Near(D)
                 : D < 2            ? Far(D)
                                    : 0.0;
      W.push_back(V);
      Sum += V;
    }
    for (double &V : W)
      V /= Sum;
  } else if (P.Mode == "linear") {
    W = {1 - T, T};
    First = Base;
  } else {
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
// grid_sample (PyTorch/ONNX semantics, any number of spatial axes)
//===----------------------------------------------------------------------===//

struct GridParams {
  int Mode;    // 0 (bi)linear, 1 nearest, 2 (bi)cubic
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
    fail("{}: unknown mode '{}' (expected linear, nearest or cubic)", Op, M);
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
  int64_t R = X.rank() - 2;
  if (R < 1 || Grid.rank() != R + 2 || Grid.shape().back() != R ||
      Grid.shape()[0] != X.shape()[0])
    fail("{}: expected x [N, C, D1, ..., Dr] and grid [N, O1, ..., Or, r], "
         "got {} and {}",
         Op, shapeToString(X.shape()), shapeToString(Grid.shape()));
  Shape Out = {X.shape()[0], X.shape()[1]};
  Out.insert(Out.end(), Grid.shape().begin() + 1, Grid.shape().end() - 1);
  return {{Out, X.dtype()}};
}

/// The (input index, weight) taps of one sample along one spatial axis of
/// extent Size at the unnormalized coordinate X; taps outside the input are
/// dropped (they read zero).
std::vector<Tap> gridTaps(const GridParams &G, double X, int64_t Size) {
  std::vector<Tap> Taps;
  auto Add = [&](double I, double W) {
    if (I >= 0 && I < (double)Size)
      Taps.push_back({(int64_t)I, W});
  };
  if (G.Mode == 2) {
    // Cubic pads each tap, not the sample point.
    double F = std::floor(X), T = X - F;
    for (int K = 0; K < 4; ++K)
      Add(std::trunc(padCoord(G, F - 1 + K, Size)), cubicWeight(T, K));
    return Taps;
  }
  double S = padCoord(G, X, Size);
  if (G.Mode == 1) {
    Add(std::nearbyint(S), 1.0);
  } else {
    double F = std::floor(S), T = S - F;
    Add(F, 1 - T);
    Add(F + 1, T);
  }
  return Taps;
}

void gridSampleKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &A) {
  GridParams G = gridParams(A);
  const Tensor &X = In[0], &Grid = In[1];
  size_t R = (size_t)X.rank() - 2;
  int64_t N = X.shape()[0], C = X.shape()[1];
  Shape Spatial(X.shape().begin() + 2, X.shape().end());
  std::vector<int64_t> Strides = contiguousStrides(Spatial);
  int64_t InSize = numElements(Spatial);
  int64_t OutSize = Out[0].numel() / std::max<int64_t>(N * C, 1);
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Float)) {
      const E *PX = X.data<E>(), *PG = Grid.data<E>();
      E *PO = Out[0].data<E>();
      std::vector<Tap> Taps; // (flat spatial offset, weight) of one sample
      for (int64_t B = 0; B < N; ++B)
        for (int64_t O = 0; O < OutSize; ++O) {
          const E *GP = PG + (B * OutSize + O) * (int64_t)R;
          Taps.assign(1, Tap{0, 1.0});
          for (size_t D = 0; D < R && !Taps.empty(); ++D) {
            // The grid lists the innermost axis first.
            double V = (double)ComputeT<E>(GP[R - 1 - D]);
            double Coord = unnormalize(G, V, Spatial[D]);
            // A non-finite location samples nothing (and is never cast).
            std::vector<Tap> Axis;
            if (std::isfinite(Coord))
              Axis = gridTaps(G, Coord, Spatial[D]);
            std::vector<Tap> Next;
            for (const Tap &P : Taps)
              for (const Tap &Q : Axis)
                Next.push_back(
                    {P.Index + Q.Index * Strides[D], P.Weight * Q.Weight});
            Taps = std::move(Next);
          }
          for (int64_t Ch = 0; Ch < C; ++Ch) {
            const E *Img = PX + (B * C + Ch) * InSize;
            double V = 0;
            for (const Tap &T : Taps)
              V += T.Weight * (double)ComputeT<E>(Img[T.Index]);
            PO[(B * C + Ch) * OutSize + O] = convertElement<E>(V);
          }
        }
    } else {
      checkDType("grid_sample", "x", X.dtype(), DTypeClass::Float);
    }
  });
}

//===----------------------------------------------------------------------===//
// affine_grid (ONNX AffineGrid, 2-D and 3-D)
//===----------------------------------------------------------------------===//

/// The values of a 1-D integer shape input.
std::vector<int64_t> shapeValues(const char *Op, const char *Name,
                                 const Tensor &T) {
  checkDType(Op, Name, T.dtype(), DTypeClass::Index);
  if (T.rank() != 1)
    fail("{}: input '{}' must be 1-D, got {}", Op, Name,
         shapeToString(T.shape()));
  if (!T.hasData())
    fail("{}: '{}' is a value the shape depends on, but no data was given", Op,
         Name);
  return T.toIntVector();
}

std::vector<TensorMeta> affineGridShape(const std::vector<Tensor> &In,
                                        const Attrs &A) {
  const char *Op = "affine_grid";
  checkArity(Op, In, 2);
  attrFlag(Op, A, "align_corners");
  const Tensor &Theta = In[0];
  checkDType(Op, "theta", Theta.dtype(), DTypeClass::Float);
  std::vector<int64_t> Size = shapeValues(Op, "size", In[1]);
  int64_t R = Theta.rank() == 3 ? Theta.shape()[1] : 0;
  if ((R != 2 && R != 3) || Theta.shape()[2] != R + 1)
    fail("{}: theta must be [N, 2, 3] or [N, 3, 4], got {}", Op,
         shapeToString(Theta.shape()));
  if ((int64_t)Size.size() != R + 2 || Size[0] != Theta.shape()[0])
    fail("{}: size {} must be (N, C, {}) with N = {} for theta {}", Op,
         shapeToString(Size), R == 2 ? "H, W" : "D, H, W", Theta.shape()[0],
         shapeToString(Theta.shape()));
  Shape Out = {Size[0]};
  for (int64_t I = 0; I < R; ++I) {
    if (Size[(size_t)I + 2] < 0)
      fail("{}: size {} has a negative extent", Op, shapeToString(Size));
    Out.push_back(Size[(size_t)I + 2]);
  }
  Out.push_back(R);
  return {{Out, Theta.dtype()}};
}

void affineGridKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &A) {
  bool Align = attrFlag("affine_grid", A, "align_corners");
  const Shape &S = Out[0].shape();
  size_t R = S.size() - 2;
  Shape Spatial(S.begin() + 1, S.end() - 1);
  int64_t Points = numElements(Spatial);
  std::vector<double> Theta = In[0].toDoubleVector();
  // The normalized position of index I of an axis of extent D: -1 and 1 are
  // the corner pixels' centers (Align) or outer edges.
  auto Pos = [&](int64_t I, int64_t D) {
    if (Align)
      return D == 1 ? -1.0 : -1 + 2.0 * (double)I / (double)(D - 1);
    return (2.0 * (double)I + 1) / (double)D - 1;
  };
  std::vector<double> V((size_t)Out[0].numel());
  std::vector<double> H(R + 1); // homogeneous position, innermost axis first
  for (int64_t B = 0; B < S[0]; ++B) {
    const double *T = Theta.data() + B * (int64_t)(R * (R + 1));
    for (int64_t P = 0; P < Points; ++P) {
      int64_t Rest = P;
      for (size_t D = 0; D < R; ++D) {
        int64_t Ext = Spatial[R - 1 - D];
        H[D] = Pos(Rest % Ext, Ext);
        Rest /= Ext;
      }
      H[R] = 1;
      double *Dst = V.data() + (B * Points + P) * (int64_t)R;
      for (size_t I = 0; I < R; ++I) {
        double Sum = 0;
        for (size_t J = 0; J <= R; ++J)
          Sum += T[I * (R + 1) + J] * H[J];
        Dst[I] = Sum;
      }
    }
  }
  dispatchDType(Out[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E *PO = Out[0].data<E>();
    for (size_t I = 0; I < V.size(); ++I)
      PO[I] = convertElement<E>(V[I]);
  });
}

//===----------------------------------------------------------------------===//
// col2im (ONNX Col2Im: PyTorch's fold, N-D)
//===----------------------------------------------------------------------===//

struct Col2ImPlan {
  Shape Image, Block, Blocks; // Blocks: block positions per axis
  std::vector<int64_t> Strides, Pads, Dilations;
  Shape Out;
};

Col2ImPlan planCol2Im(const std::vector<Tensor> &In, const Attrs &A) {
  const char *Op = "col2im";
  checkArity(Op, In, 3);
  const Tensor &X = In[0];
  checkDType(Op, "x", X.dtype(), DTypeClass::Numeric);
  Col2ImPlan P;
  P.Image = shapeValues(Op, "image_shape", In[1]);
  P.Block = shapeValues(Op, "block_shape", In[2]);
  size_t R = P.Image.size();
  if (R == 0 || P.Block.size() != R)
    fail("{}: image_shape {} and block_shape {} must have the same, non-zero "
         "length",
         Op, shapeToString(P.Image), shapeToString(P.Block));
  P.Strides = windowInts(Op, A, "strides", R, 1, 1);
  P.Dilations = windowInts(Op, A, "dilations", R, 1, 1);
  P.Pads = windowInts(Op, A, "pads", 2 * R, 0, 0);
  int64_t BlockSize = 1, Count = 1;
  for (size_t D = 0; D < R; ++D) {
    if (P.Image[D] < 0 || P.Block[D] < 1)
      fail("{}: image_shape {} must be non-negative and block_shape {} "
           "positive",
           Op, shapeToString(P.Image), shapeToString(P.Block));
    BlockSize *= P.Block[D];
    int64_t Span = P.Dilations[D] * (P.Block[D] - 1) + 1;
    int64_t Padded = P.Image[D] + P.Pads[D] + P.Pads[D + R];
    P.Blocks.push_back(Padded < Span ? 0 : (Padded - Span) / P.Strides[D] + 1);
    Count *= P.Blocks.back();
  }
  if (X.rank() != 3 || X.shape()[1] % BlockSize != 0 || X.shape()[2] != Count)
    fail("{}: the input must be [N, C * {}, {}] for image_shape {} and "
         "block_shape {}, got {}",
         Op, BlockSize, Count, shapeToString(P.Image), shapeToString(P.Block),
         shapeToString(X.shape()));
  P.Out = {X.shape()[0], X.shape()[1] / BlockSize};
  P.Out.insert(P.Out.end(), P.Image.begin(), P.Image.end());
  return P;
}

std::vector<TensorMeta> col2imShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  return {{planCol2Im(In, A).Out, In[0].dtype()}};
}

void col2imKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  Col2ImPlan P = planCol2Im(In, A);
  size_t R = P.Image.size();
  int64_t Planes = P.Out[0] * P.Out[1];
  int64_t BlockSize = numElements(P.Block), Count = numElements(P.Blocks);
  int64_t ImageSize = numElements(P.Image);
  std::vector<int64_t> ImStrides = contiguousStrides(P.Image);
  // Image offset of each (block element, block position) pair; -1 outside.
  std::vector<int64_t> Target((size_t)(BlockSize * Count));
  for (int64_t KI = 0; KI < BlockSize; ++KI) {
    for (int64_t LI = 0; LI < Count; ++LI) {
      int64_t Rk = KI, Rl = LI, Off = 0;
      bool Inside = true;
      for (size_t D = R; D-- > 0;) {
        int64_t Kd = Rk % P.Block[D], Ld = Rl % P.Blocks[D];
        Rk /= P.Block[D];
        Rl /= P.Blocks[D];
        int64_t I = Ld * P.Strides[D] - P.Pads[D] + Kd * P.Dilations[D];
        Inside &= I >= 0 && I < P.Image[D];
        Off += I * ImStrides[D];
      }
      Target[(size_t)(KI * Count + LI)] = Inside ? Off : -1;
    }
  }
  dispatchDType(In[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Numeric)) {
      using Acc = std::conditional_t<std::is_integral_v<E>, int64_t, double>;
      const E *PX = In[0].data<E>();
      E *PO = Out[0].data<E>();
      std::vector<Acc> Sum((size_t)ImageSize);
      for (int64_t Pl = 0; Pl < Planes; ++Pl) {
        std::fill(Sum.begin(), Sum.end(), Acc(0));
        const E *Src = PX + Pl * BlockSize * Count;
        for (size_t I = 0; I < Target.size(); ++I)
          if (Target[I] >= 0)
            Sum[(size_t)Target[I]] += Acc(ComputeT<E>(Src[I]));
        for (int64_t I = 0; I < ImageSize; ++I)
          PO[Pl * ImageSize + I] = convertElement<E>(Sum[(size_t)I]);
      }
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
RIVET_REGISTER_KERNEL("affine_grid", affineGridKernel, affineGridShape, true);
RIVET_REGISTER_KERNEL("col2im", col2imKernel, col2imShape, true);
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
      {"antialias", AttrKind::Int, false,
       "1: linear and cubic downsampling stretch the filter by 1 / scale", 0},
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
                       "linear, nearest or cubic (bilinear and bicubic are "
                       "synonyms)",
                       "linear"},
                      {"padding_mode", AttrKind::String, false,
                       "zeros, border or reflection", "zeros"},
                      {"align_corners", AttrKind::Int, false,
                       "1: -1/1 are pixel centers", 0}});
RIVET_REGISTER_ATTRS("affine_grid",
                     {{"align_corners", AttrKind::Int, false,
                       "1: -1 and 1 are the corner pixels' centers; 0: their "
                       "outer edges",
                       0}});
RIVET_REGISTER_ATTRS(
    "col2im", {{"strides", AttrKind::Ints, false,
                "step between blocks per spatial axis (default 1s)"},
               {"pads", AttrKind::Ints, false,
                "begin pads then end pads per spatial axis (default 0s)"},
               {"dilations", AttrKind::Ints, false,
                "dilation of the block per spatial axis (default 1s)"}});
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
