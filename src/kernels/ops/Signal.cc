//===- Signal.cc - dft, stft, window functions, mel_weight_matrix ---------===//
//
// Reference signal-processing kernels with ONNX semantics. Complex values
// are a trailing dimension of 2 (real, imaginary). The DFT is the direct sum
// with a twiddle table indexed by (k * n) mod N, in double. Each operator
// whose ONNX scalar inputs fix the output shape has a static form (those
// scalars as attributes) and a *_dynamic form (scalars as inputs, zero
// elements meaning absent) with a data-dependent shape function.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <cmath>

namespace rivet::kernels {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// A scalar integer input (a one-element tensor); nullopt when it has zero
/// elements (absent).
std::optional<int64_t> scalarInt(const char *Op, const char *Name,
                                 const Tensor &T) {
  if (T.numel() == 0)
    return std::nullopt;
  if (T.numel() != 1 || !isInteger(T.dtype()))
    fail("{}: '{}' must be an integer scalar, got {}", Op, Name,
         T.typeString());
  if (!T.hasData())
    fail("{}: '{}' is a value the shape depends on, but no data was given", Op,
         Name);
  return T.elementAsInt(0);
}
std::optional<double> scalarFloat(const char *Op, const char *Name,
                                  const Tensor &T) {
  if (T.numel() == 0)
    return std::nullopt;
  if (T.numel() != 1 || T.dtype() == DType::Bool)
    fail("{}: '{}' must be a numeric scalar, got {}", Op, Name, T.typeString());
  if (!T.hasData())
    fail("{}: '{}' is a value the shape depends on, but no data was given", Op,
         Name);
  return T.elementAsDouble(0);
}

/// Writes double values into a tensor of any numeric dtype.
void storeDoubles(const std::vector<double> &V, Tensor &T) {
  dispatchDType(T.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E *P = T.data<E>();
    for (size_t I = 0; I < V.size(); ++I)
      P[I] = convertElement<E>(V[I]);
  });
}

//===----------------------------------------------------------------------===//
// dft / dft_dynamic
//===----------------------------------------------------------------------===//

struct DftPlan {
  int64_t Axis;   // normalized, < rank - 1
  int64_t Length; // dft_length
  bool Inverse, Onesided;
  Shape Out;
};

/// Axis overrides the 'axis' attribute (dft_dynamic's axis input).
DftPlan planDft(const char *Op, const Tensor &X, std::optional<int64_t> Len,
                const Attrs &A, std::optional<int64_t> AxisIn = std::nullopt) {
  checkDType(Op, "x", X.dtype(), DTypeClass::Float);
  int64_t R = X.rank();
  if (R < 2 || (X.shape().back() != 1 && X.shape().back() != 2))
    fail("{}: the input must be [..., N, 1] (real) or [..., N, 2] (complex), "
         "got {}",
         Op, shapeToString(X.shape()));
  DftPlan P;
  int64_t Axis = AxisIn ? *AxisIn : attrInt(Op, A, "axis");
  if (Axis < -R || Axis >= R - 1 || Axis == -1)
    fail("{}: axis {} is out of range for rank {} (the last axis holds the "
         "complex parts)",
         Op, Axis, R);
  P.Axis = Axis < 0 ? Axis + R : Axis;
  P.Inverse = attrFlag(Op, A, "inverse");
  P.Onesided = attrFlag(Op, A, "onesided");
  P.Length = Len.value_or(X.shape()[(size_t)P.Axis]);
  if (P.Length <= 0)
    fail("{}: dft_length must be positive, got {}", Op, P.Length);
  P.Out = X.shape();
  P.Out[(size_t)P.Axis] = P.Onesided ? P.Length / 2 + 1 : P.Length;
  P.Out.back() = 2;
  return P;
}

/// The DFT of Len complex samples read from In (stride InStride, Avail of
/// them present; the rest are zero), written as Count complex values to Out.
void dft1d(const std::vector<double> &Cos, const std::vector<double> &Sin,
           const double *ReIn, const double *ImIn, int64_t InStride,
           int64_t Avail, int64_t Len, int64_t Count, bool Inverse,
           double *ReOut, double *ImOut, int64_t OutStride) {
  int64_t M = std::min(Avail, Len);
  for (int64_t K = 0; K < Count; ++K) {
    double SR = 0, SI = 0;
    int64_t Idx = 0; // (k * n) mod Len
    for (int64_t N = 0; N < M; ++N) {
      double XR = ReIn[N * InStride], XI = ImIn ? ImIn[N * InStride] : 0.0;
      double C = Cos[(size_t)Idx],
             S = Inverse ? Sin[(size_t)Idx] : -Sin[(size_t)Idx];
      SR += XR * C - XI * S;
      SI += XR * S + XI * C;
      Idx += K;
      if (Idx >= Len)
        Idx %= Len;
    }
    if (Inverse) {
      SR /= (double)Len;
      SI /= (double)Len;
    }
    ReOut[K * OutStride] = SR;
    ImOut[K * OutStride] = SI;
  }
}

void runDft(const Tensor &X, Tensor &Out, const DftPlan &P) {
  const Shape &In = X.shape();
  int64_t R = (int64_t)In.size();
  bool Complex = In.back() == 2;
  int64_t N = In[(size_t)P.Axis];
  int64_t Outer = prodRange(In, 0, (size_t)P.Axis);
  int64_t Inner = prodRange(In, (size_t)P.Axis + 1, (size_t)R - 1);
  int64_t Count = P.Out[(size_t)P.Axis];
  std::vector<double> Cos((size_t)P.Length), Sin((size_t)P.Length);
  for (int64_t I = 0; I < P.Length; ++I) {
    Cos[(size_t)I] = std::cos(2 * kPi * (double)I / (double)P.Length);
    Sin[(size_t)I] = std::sin(2 * kPi * (double)I / (double)P.Length);
  }
  std::vector<double> XV = X.toDoubleVector();
  std::vector<double> OV((size_t)Out.numel());
  int64_t C = Complex ? 2 : 1;
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t J = 0; J < Inner; ++J) {
      const double *Src = XV.data() + (O * N * Inner + J) * C;
      double *Dst = OV.data() + (O * Count * Inner + J) * 2;
      dft1d(Cos, Sin, Src, Complex ? Src + 1 : nullptr, Inner * C, N, P.Length,
            Count, P.Inverse, Dst, Dst + 1, Inner * 2);
    }
  storeDoubles(OV, Out);
}

std::vector<TensorMeta> dftShape(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  checkArity("dft", In, 1);
  std::optional<int64_t> Len;
  if (A.has("dft_length"))
    Len = attrInt("dft", A, "dft_length");
  return {{planDft("dft", In[0], Len, A).Out, In[0].dtype()}};
}
void dftKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  std::optional<int64_t> Len;
  if (A.has("dft_length"))
    Len = attrInt("dft", A, "dft_length");
  runDft(In[0], Out[0], planDft("dft", In[0], Len, A));
}

/// dft_dynamic's plan: (x, dft_length[, axis]) with empty optional inputs.
DftPlan planDftDynamic(const std::vector<Tensor> &In, const Attrs &A) {
  const char *Op = "dft_dynamic";
  if (In.size() != 2 && In.size() != 3)
    fail("{}: expected 2 or 3 inputs (x, dft_length[, axis]), got {}", Op,
         In.size());
  std::optional<int64_t> Axis;
  if (In.size() > 2)
    Axis = scalarInt(Op, "axis", In[2]);
  return planDft(Op, In[0], scalarInt(Op, "dft_length", In[1]), A, Axis);
}
std::vector<TensorMeta> dftDynamicShape(const std::vector<Tensor> &In,
                                        const Attrs &A) {
  return {{planDftDynamic(In, A).Out, In[0].dtype()}};
}
void dftDynamicKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &A) {
  runDft(In[0], Out[0], planDftDynamic(In, A));
}

//===----------------------------------------------------------------------===//
// stft / stft_dynamic
//===----------------------------------------------------------------------===//

struct StftPlan {
  int64_t Step, FrameLen, Frames, Bins;
  Shape Out;
};

StftPlan planStft(const char *Op, const Tensor &X, const Tensor &Window,
                  std::optional<int64_t> Step, std::optional<int64_t> FrameLen,
                  const Attrs &A) {
  checkDType(Op, "signal", X.dtype(), DTypeClass::Float);
  if (X.rank() != 3 || (X.shape()[2] != 1 && X.shape()[2] != 2))
    fail("{}: the signal must be [batch, length, 1 or 2], got {}", Op,
         shapeToString(X.shape()));
  if (!Step)
    fail("{}: frame_step is required", Op);
  if (*Step <= 0)
    fail("{}: frame_step must be positive, got {}", Op, *Step);
  bool HasWindow = Window.numel() > 0;
  if (HasWindow) {
    checkSameDType(Op, "signal", X, "window", Window);
    if (Window.rank() != 1)
      fail("{}: the window must be 1-D, got {}", Op,
           shapeToString(Window.shape()));
  }
  StftPlan P;
  P.Step = *Step;
  if (FrameLen) {
    P.FrameLen = *FrameLen;
    if (HasWindow && Window.shape()[0] != P.FrameLen)
      fail("{}: the window has {} values, frame_length is {}", Op,
           Window.shape()[0], P.FrameLen);
  } else if (HasWindow) {
    P.FrameLen = Window.shape()[0];
  } else {
    fail("{}: one of 'window' and 'frame_length' must be given", Op);
  }
  int64_t Len = X.shape()[1];
  if (P.FrameLen <= 0 || P.FrameLen > Len)
    fail("{}: frame_length {} must be in [1, {}] (the signal length)", Op,
         P.FrameLen, Len);
  bool Onesided = attrFlag(Op, A, "onesided");
  if (Onesided && X.shape()[2] == 2)
    fail("{}: onesided output needs a real signal", Op);
  P.Frames = (Len - P.FrameLen) / P.Step + 1;
  P.Bins = Onesided ? P.FrameLen / 2 + 1 : P.FrameLen;
  P.Out = {X.shape()[0], P.Frames, P.Bins, 2};
  return P;
}

void runStft(const Tensor &X, const Tensor &Window, Tensor &Out,
             const StftPlan &P) {
  int64_t B = X.shape()[0], Len = X.shape()[1], C = X.shape()[2];
  std::vector<double> XV = X.toDoubleVector();
  std::vector<double> WV = Window.numel() > 0
                               ? Window.toDoubleVector()
                               : std::vector<double>((size_t)P.FrameLen, 1.0);
  std::vector<double> Cos((size_t)P.FrameLen), Sin((size_t)P.FrameLen);
  for (int64_t I = 0; I < P.FrameLen; ++I) {
    Cos[(size_t)I] = std::cos(2 * kPi * (double)I / (double)P.FrameLen);
    Sin[(size_t)I] = std::sin(2 * kPi * (double)I / (double)P.FrameLen);
  }
  std::vector<double> OV((size_t)Out.numel());
  std::vector<double> Re((size_t)P.FrameLen), Im((size_t)P.FrameLen);
  for (int64_t Bi = 0; Bi < B; ++Bi)
    for (int64_t F = 0; F < P.Frames; ++F) {
      const double *Src = XV.data() + (Bi * Len + F * P.Step) * C;
      for (int64_t I = 0; I < P.FrameLen; ++I) {
        Re[(size_t)I] = Src[I * C] * WV[(size_t)I];
        Im[(size_t)I] = C == 2 ? Src[I * C + 1] * WV[(size_t)I] : 0.0;
      }
      double *Dst = OV.data() + ((Bi * P.Frames + F) * P.Bins) * 2;
      dft1d(Cos, Sin, Re.data(), Im.data(), 1, P.FrameLen, P.FrameLen, P.Bins,
            false, Dst, Dst + 1, 2);
    }
  storeDoubles(OV, Out);
}

std::optional<int64_t> optAttrInt(const char *Op, const Attrs &A,
                                  const std::string &N) {
  if (!A.has(N))
    return std::nullopt;
  return attrInt(Op, A, N);
}

std::vector<TensorMeta> stftShape(const std::vector<Tensor> &In,
                                  const Attrs &A) {
  checkArity("stft", In, 2);
  return {{planStft("stft", In[0], In[1], optAttrInt("stft", A, "frame_step"),
                    optAttrInt("stft", A, "frame_length"), A)
               .Out,
           In[0].dtype()}};
}
void stftKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                const Attrs &A) {
  runStft(In[0], In[1], Out[0],
          planStft("stft", In[0], In[1], optAttrInt("stft", A, "frame_step"),
                   optAttrInt("stft", A, "frame_length"), A));
}

StftPlan dynamicStftPlan(const std::vector<Tensor> &In, const Attrs &A) {
  const char *Op = "stft_dynamic";
  checkArity(Op, In, 4);
  return planStft(Op, In[0], In[2], scalarInt(Op, "frame_step", In[1]),
                  scalarInt(Op, "frame_length", In[3]), A);
}
std::vector<TensorMeta> stftDynamicShape(const std::vector<Tensor> &In,
                                         const Attrs &A) {
  return {{dynamicStftPlan(In, A).Out, In[0].dtype()}};
}
void stftDynamicKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                       const Attrs &A) {
  runStft(In[0], In[2], Out[0], dynamicStftPlan(In, A));
}

//===----------------------------------------------------------------------===//
// hann_window, hamming_window, blackman_window (+ *_dynamic)
//===----------------------------------------------------------------------===//

enum class WindowKind { Hann, Hamming, Blackman };

template <WindowKind W> constexpr const char *windowOp(bool Dynamic) {
  if constexpr (W == WindowKind::Hann)
    return Dynamic ? "hann_window_dynamic" : "hann_window";
  else if constexpr (W == WindowKind::Hamming)
    return Dynamic ? "hamming_window_dynamic" : "hamming_window";
  else
    return Dynamic ? "blackman_window_dynamic" : "blackman_window";
}

DType windowDType(const char *Op, const Attrs &A) {
  DType T = *attrDType(Op, A, "dtype");
  if (T == DType::Bool)
    fail("{}: the output dtype must be numeric, got bool", Op);
  return T;
}

int64_t windowSize(const char *Op, std::optional<int64_t> Size) {
  if (!Size)
    fail("{}: the window size is required", Op);
  if (*Size < 0)
    fail("{}: the window size must be non-negative, got {}", Op, *Size);
  return *Size;
}

template <WindowKind W>
std::vector<double> windowValues(int64_t Size, bool Periodic) {
  std::vector<double> V((size_t)Size);
  double N = (double)(Periodic ? Size : Size - 1);
  for (int64_t I = 0; I < Size; ++I) {
    // A symmetric window of one sample is [1] (the formula divides by 0).
    double X = N == 0 ? 0.0 : 2 * kPi * (double)I / N;
    if constexpr (W == WindowKind::Hann)
      V[(size_t)I] = N == 0 ? 1.0 : 0.5 - 0.5 * std::cos(X);
    else if constexpr (W == WindowKind::Hamming)
      V[(size_t)I] = N == 0 ? 1.0 : 25.0 / 46.0 - 21.0 / 46.0 * std::cos(X);
    else
      V[(size_t)I] =
          N == 0 ? 1.0 : 0.42 - 0.5 * std::cos(X) + 0.08 * std::cos(2 * X);
  }
  return V;
}

template <WindowKind W>
std::vector<TensorMeta> windowShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  const char *Op = windowOp<W>(false);
  checkArity(Op, In, 0);
  return {{{windowSize(Op, optAttrInt(Op, A, "size"))}, windowDType(Op, A)}};
}
template <WindowKind W>
void windowKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  const char *Op = windowOp<W>(false);
  storeDoubles(windowValues<W>(windowSize(Op, optAttrInt(Op, A, "size")),
                               attrFlag(Op, A, "periodic")),
               Out[0]);
}
template <WindowKind W>
std::vector<TensorMeta> windowDynamicShape(const std::vector<Tensor> &In,
                                           const Attrs &A) {
  const char *Op = windowOp<W>(true);
  checkArity(Op, In, 1);
  return {{{windowSize(Op, scalarInt(Op, "size", In[0]))}, windowDType(Op, A)}};
}
template <WindowKind W>
void windowDynamicKernel(const std::vector<Tensor> &In,
                         std::vector<Tensor> &Out, const Attrs &A) {
  const char *Op = windowOp<W>(true);
  storeDoubles(windowValues<W>(windowSize(Op, scalarInt(Op, "size", In[0])),
                               attrFlag(Op, A, "periodic")),
               Out[0]);
}

//===----------------------------------------------------------------------===//
// mel_weight_matrix (+ _dynamic)
//===----------------------------------------------------------------------===//

struct MelParams {
  int64_t Bins, DftLength, SampleRate;
  double Lower, Upper;
};

MelParams checkMel(const char *Op, MelParams P) {
  if (P.Bins <= 0 || P.DftLength <= 0 || P.SampleRate <= 0)
    fail("{}: num_mel_bins, dft_length and sample_rate must be positive, got "
         "{}, {} and {}",
         Op, P.Bins, P.DftLength, P.SampleRate);
  if (P.Lower < 0 || P.Upper < P.Lower)
    fail("{}: expected 0 <= lower_edge_hertz <= upper_edge_hertz, got {} and "
         "{}",
         Op, P.Lower, P.Upper);
  return P;
}

MelParams staticMel(const Attrs &A) {
  const char *Op = "mel_weight_matrix";
  return checkMel(Op,
                  {attrInt(Op, A, "num_mel_bins"), attrInt(Op, A, "dft_length"),
                   attrInt(Op, A, "sample_rate"),
                   withOp(Op, [&] { return A.getFloat("lower_edge_hertz"); }),
                   withOp(Op, [&] { return A.getFloat("upper_edge_hertz"); })});
}

MelParams dynamicMel(const std::vector<Tensor> &In) {
  const char *Op = "mel_weight_matrix_dynamic";
  checkArity(Op, In, 5);
  auto Req = [&](auto V, const char *Name) {
    if (!V)
      fail("{}: '{}' is required", Op, Name);
    return *V;
  };
  return checkMel(
      Op,
      {Req(scalarInt(Op, "num_mel_bins", In[0]), "num_mel_bins"),
       Req(scalarInt(Op, "dft_length", In[1]), "dft_length"),
       Req(scalarInt(Op, "sample_rate", In[2]), "sample_rate"),
       Req(scalarFloat(Op, "lower_edge_hertz", In[3]), "lower_edge_hertz"),
       Req(scalarFloat(Op, "upper_edge_hertz", In[4]), "upper_edge_hertz")});
}

Shape melShape(const MelParams &P) { return {P.DftLength / 2 + 1, P.Bins}; }

/// Triangular filters between mel-spaced edges (the ONNX reference).
std::vector<double> melValues(const MelParams &P) {
  int64_t Rows = P.DftLength / 2 + 1, M = P.Bins;
  auto ToMel = [](double Hz) { return 2595.0 * std::log10(1 + Hz / 700.0); };
  double Low = ToMel(P.Lower), High = ToMel(P.Upper);
  double Step = (High - Low) / (double)(M + 2);
  std::vector<int64_t> Edge((size_t)(M + 2));
  for (int64_t I = 0; I < M + 2; ++I) {
    double Hz = 700.0 * (std::pow(10.0, ((double)I * Step + Low) / 2595.0) - 1);
    Edge[(size_t)I] = (int64_t)std::floor((double)(P.DftLength + 1) * Hz /
                                          (double)P.SampleRate);
  }
  std::vector<double> V((size_t)(Rows * M), 0.0);
  auto Set = [&](int64_t Row, int64_t Col, double X) {
    if (Row < 0 || Row >= Rows)
      fail("mel_weight_matrix: frequency bin {} is outside the {} spectrogram "
           "bins (upper_edge_hertz above the Nyquist frequency?)",
           Row, Rows);
    V[(size_t)(Row * M + Col)] = X;
  };
  for (int64_t I = 0; I < M; ++I) {
    int64_t L = Edge[(size_t)I], C = Edge[(size_t)I + 1],
            H = Edge[(size_t)I + 2];
    if (C == L)
      Set(C, I, 1.0);
    else
      for (int64_t J = L; J <= C; ++J)
        Set(J, I, (double)(J - L) / (double)(C - L));
    for (int64_t J = C; J < H; ++J)
      Set(J, I, (double)(H - J) / (double)(H - C));
  }
  return V;
}

DType melDType(const char *Op, const Attrs &A) {
  DType T = *attrDType(Op, A, "dtype");
  if (T == DType::Bool)
    fail("{}: the output dtype must be numeric, got bool", Op);
  return T;
}

std::vector<TensorMeta> melStaticShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  checkArity("mel_weight_matrix", In, 0);
  return {{melShape(staticMel(A)), melDType("mel_weight_matrix", A)}};
}
void melStaticKernel(const std::vector<Tensor> &, std::vector<Tensor> &Out,
                     const Attrs &A) {
  storeDoubles(melValues(staticMel(A)), Out[0]);
}
std::vector<TensorMeta> melDynamicShape(const std::vector<Tensor> &In,
                                        const Attrs &A) {
  return {{melShape(dynamicMel(In)), melDType("mel_weight_matrix_dynamic", A)}};
}
void melDynamicKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &) {
  storeDoubles(melValues(dynamicMel(In)), Out[0]);
}

} // namespace

RIVET_REGISTER_KERNEL("dft", dftKernel, dftShape, false);
RIVET_REGISTER_KERNEL("dft_dynamic", dftDynamicKernel, dftDynamicShape, true);
RIVET_REGISTER_KERNEL("stft", stftKernel, stftShape, false);
RIVET_REGISTER_KERNEL("stft_dynamic", stftDynamicKernel, stftDynamicShape,
                      true);
RIVET_REGISTER_KERNEL("hann_window", windowKernel<WindowKind::Hann>,
                      windowShape<WindowKind::Hann>, false);
RIVET_REGISTER_KERNEL("hamming_window", windowKernel<WindowKind::Hamming>,
                      windowShape<WindowKind::Hamming>, false);
RIVET_REGISTER_KERNEL("blackman_window", windowKernel<WindowKind::Blackman>,
                      windowShape<WindowKind::Blackman>, false);
RIVET_REGISTER_KERNEL("hann_window_dynamic",
                      windowDynamicKernel<WindowKind::Hann>,
                      windowDynamicShape<WindowKind::Hann>, true);
RIVET_REGISTER_KERNEL("hamming_window_dynamic",
                      windowDynamicKernel<WindowKind::Hamming>,
                      windowDynamicShape<WindowKind::Hamming>, true);
RIVET_REGISTER_KERNEL("blackman_window_dynamic",
                      windowDynamicKernel<WindowKind::Blackman>,
                      windowDynamicShape<WindowKind::Blackman>, true);
RIVET_REGISTER_KERNEL("mel_weight_matrix", melStaticKernel, melStaticShape,
                      false);
RIVET_REGISTER_KERNEL("mel_weight_matrix_dynamic", melDynamicKernel,
                      melDynamicShape, true);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

namespace {
std::vector<AttrSpec> dftAttrs(bool Static) {
  std::vector<AttrSpec> S = {
      {"axis", AttrKind::Int, false,
       Static ? "the transformed axis"
              : "the transformed axis, unless an axis input gives it",
       1},
      {"inverse", AttrKind::Int, false, "1: inverse transform (scaled 1/N)", 0},
      {"onesided", AttrKind::Int, false, "1: only bins 0..N/2", 0}};
  if (Static)
    S.push_back({"dft_length", AttrKind::Int, false,
                 "transform length (default the axis extent)"});
  return S;
}
std::vector<AttrSpec> stftAttrs(bool Static) {
  std::vector<AttrSpec> S = {
      {"onesided", AttrKind::Int, false, "1: only bins 0..N/2", 1}};
  if (Static) {
    S.push_back({"frame_step", AttrKind::Int, true, "samples between frames"});
    S.push_back({"frame_length", AttrKind::Int, false,
                 "samples per frame (default the window length)"});
  }
  return S;
}
std::vector<AttrSpec> windowAttrs(bool Static) {
  std::vector<AttrSpec> S = {
      {"periodic", AttrKind::Int, false, "1: periodic window", 1},
      {"dtype", AttrKind::String, false, "output dtype", "float32"}};
  if (Static)
    S.push_back({"size", AttrKind::Int, true, "the window length"});
  return S;
}
std::vector<AttrSpec> melAttrs(bool Static) {
  std::vector<AttrSpec> S = {
      {"dtype", AttrKind::String, false, "output dtype", "float32"}};
  if (Static) {
    S.push_back({"num_mel_bins", AttrKind::Int, true, "mel bands"});
    S.push_back({"dft_length", AttrKind::Int, true, "the DFT length"});
    S.push_back({"sample_rate", AttrKind::Int, true, "samples per second"});
    S.push_back(
        {"lower_edge_hertz", AttrKind::Float, true, "lowest frequency"});
    S.push_back(
        {"upper_edge_hertz", AttrKind::Float, true, "highest frequency"});
  }
  return S;
}
} // namespace
RIVET_REGISTER_ATTRS("dft", dftAttrs(true));
RIVET_REGISTER_ATTRS("dft_dynamic", dftAttrs(false));
RIVET_REGISTER_ATTRS("stft", stftAttrs(true));
RIVET_REGISTER_ATTRS("stft_dynamic", stftAttrs(false));
RIVET_REGISTER_ATTRS("hann_window", windowAttrs(true));
RIVET_REGISTER_ATTRS("hamming_window", windowAttrs(true));
RIVET_REGISTER_ATTRS("blackman_window", windowAttrs(true));
RIVET_REGISTER_ATTRS("hann_window_dynamic", windowAttrs(false));
RIVET_REGISTER_ATTRS("hamming_window_dynamic", windowAttrs(false));
RIVET_REGISTER_ATTRS("blackman_window_dynamic", windowAttrs(false));
RIVET_REGISTER_ATTRS("mel_weight_matrix", melAttrs(true));
RIVET_REGISTER_ATTRS("mel_weight_matrix_dynamic", melAttrs(false));

} // namespace rivet::kernels
