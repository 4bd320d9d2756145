//===- Signal.cc - dft, stft, window functions, mel_weight_matrix ---------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

/// A scalar-valued argument (rank 0 or one element of rank 1), or an empty
/// placeholder (absent).
void requireScalarArg(std::string_view Op, const std::vector<Type> &Args,
                      size_t I, const char *Name, bool Integer) {
  const TensorTypeNode &T = tensorArg(Op, Args, I);
  if (Integer && !isInteger(T.dtype))
    failArg(I, "{}: '{}' must be an integer scalar, got {}", Op, Name,
            typeStr(T));
  if (!Integer && T.dtype == DType::Bool)
    failArg(I, "{}: '{}' must be a numeric scalar, got {}", Op, Name,
            typeStr(T));
  if (T.shape && T.shape->size() > 1)
    failArg(I, "{}: '{}' must be a scalar, got {}", Op, Name, typeStr(T));
}

/// True when T is known to have zero elements (an absent optional input).
bool knownEmpty(const TensorTypeNode &T) {
  return T.shape && T.shape->size() == 1 && (*T.shape)[0].isConst() &&
         (*T.shape)[0].value == 0;
}

/// The output of dft for input x; Len is the dft length when known.
/// dft_dynamic's optional third argument is the axis (ONNX DFT-20), which
/// then decides the transformed axis at run time.
template <OpName Name>
Type dftRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  bool Dynamic = Op == "dft_dynamic";
  validateOpAttrs(Op, A);
  if (Dynamic && Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (x, dft_length[, axis]), got {}", Op,
         Args.size());
  if (!Dynamic)
    checkArity(Op, Args, 1);
  std::optional<int64_t> Len = optInt(A, "dft_length");
  if (Len && *Len <= 0)
    fail("{}: dft_length must be positive, got {}", Op, *Len);
  bool Onesided = OpAttrs(Op, A).getInt("onesided") != 0;
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  if (Dynamic)
    requireScalarArg(Op, Args, 1, "dft_length", true);
  bool AxisArg = Args.size() > 2;
  if (AxisArg)
    requireScalarArg(Op, Args, 2, "axis", true);
  if (!X.shape)
    return tensorTypeUnknownRank(X.dtype);
  int64_t R = (int64_t)X.shape->size();
  const Dim &Last = X.shape->empty() ? Dim::any() : X.shape->back();
  if (R < 2 || (Last.isConst() && Last.value != 1 && Last.value != 2))
    failArg(0, "{}: the input must be [..., N, 1] or [..., N, 2], got {}", Op,
            typeStr(X));
  std::vector<Dim> Out = *X.shape;
  Out.back() = Dim::constant(2);
  if (AxisArg) {
    // Every signal axis keeps its extent unless the unknown one changes.
    if (Onesided || !knownEmpty(tensorArg(Op, Args, 1)))
      for (size_t I = 0; I + 1 < Out.size(); ++I)
        Out[I] = Dim::any();
    return makeTensor(Out, X.dtype);
  }
  int64_t Axis = OpAttrs(Op, A).getInt("axis");
  if (Axis < -R || Axis >= R - 1 || Axis == -1)
    fail("{}: axis {} is out of range for rank {} (the last axis holds the "
         "complex parts)",
         Op, Axis, R);
  if (Axis < 0)
    Axis += R;
  Dim N = Dynamic ? Dim::any() : Len ? Dim::constant(*Len) : Out[(size_t)Axis];
  if (Onesided)
    N = N.isConst() ? Dim::constant(N.value / 2 + 1) : Dim::any();
  Out[(size_t)Axis] = N;
  return makeTensor(Out, X.dtype);
}

template <OpName Name>
Type stftRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  bool Dynamic = Op == "stft_dynamic";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, Dynamic ? 4 : 2);
  bool Onesided = OpAttrs(Op, A).getInt("onesided") != 0;
  std::optional<int64_t> Step = optInt(A, "frame_step");
  std::optional<int64_t> FrameLen = optInt(A, "frame_length");
  if (!Dynamic && !Step)
    fail("{}: attribute 'frame_step' is required", Op);
  if (Step && *Step <= 0)
    fail("{}: frame_step must be positive, got {}", Op, *Step);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  size_t WindowArg = Dynamic ? 2 : 1;
  const TensorTypeNode &Win = tensorArg(Op, Args, WindowArg);
  if (Win.shape && Win.shape->size() != 1)
    failArg(WindowArg, "{}: the window must be 1-D, got {}", Op, typeStr(Win));
  if (Dynamic) {
    requireScalarArg(Op, Args, 1, "frame_step", true);
    requireScalarArg(Op, Args, 3, "frame_length", true);
  }
  if (X.shape && (X.shape->size() != 3 ||
                  ((*X.shape)[2].isConst() && (*X.shape)[2].value != 1 &&
                   (*X.shape)[2].value != 2)))
    failArg(0, "{}: the signal must be [batch, length, 1 or 2], got {}", Op,
            typeStr(X));
  Dim Batch = X.shape ? (*X.shape)[0] : Dim::any();
  Dim Frames = Dim::any(), Bins = Dim::any();
  if (!Dynamic) {
    // frame_length from the attribute, else from a known window length
    // (a window of zero elements is absent).
    std::optional<int64_t> FL = FrameLen;
    if (!FL && Win.shape && (*Win.shape)[0].isConst() &&
        (*Win.shape)[0].value > 0)
      FL = (*Win.shape)[0].value;
    if (FL) {
      Bins = Dim::constant(Onesided ? *FL / 2 + 1 : *FL);
      if (X.shape && (*X.shape)[1].isConst() && (*X.shape)[1].value >= *FL)
        Frames = Dim::constant(((*X.shape)[1].value - *FL) / *Step + 1);
    }
  }
  return makeTensor(std::vector<Dim>{Batch, Frames, Bins, Dim::constant(2)},
                    X.dtype);
}

DType outDType(std::string_view Op, const Attrs &A) {
  DType T = *optDType(Op, A, "dtype");
  if (T == DType::Bool)
    fail("{}: the output dtype must be numeric, got bool", Op);
  return T;
}

template <OpName Name>
Type windowRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  bool Dynamic = Op.ends_with("_dynamic");
  validateOpAttrs(Op, A);
  checkArity(Op, Args, Dynamic ? 1 : 0);
  DType T = outDType(Op, A);
  if (!Dynamic) {
    int64_t Size = *optInt(A, "size");
    if (Size < 0)
      fail("{}: the window size must be non-negative, got {}", Op, Size);
    return tensorType({Dim::constant(Size)}, T);
  }
  if (anyUndecided(Args))
    return nullptr;
  requireScalarArg(Op, Args, 0, "size", true);
  return tensorType({Dim::any()}, T);
}

template <OpName Name>
Type melRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  bool Dynamic = Op.ends_with("_dynamic");
  validateOpAttrs(Op, A);
  checkArity(Op, Args, Dynamic ? 5 : 0);
  DType T = outDType(Op, A);
  if (!Dynamic) {
    int64_t Bins = *optInt(A, "num_mel_bins"), Len = *optInt(A, "dft_length");
    if (Bins <= 0 || Len <= 0)
      fail("{}: num_mel_bins and dft_length must be positive, got {} and {}",
           Op, Bins, Len);
    return tensorType({Dim::constant(Len / 2 + 1), Dim::constant(Bins)}, T);
  }
  if (anyUndecided(Args))
    return nullptr;
  const char *Names[] = {"num_mel_bins", "dft_length", "sample_rate",
                         "lower_edge_hertz", "upper_edge_hertz"};
  for (size_t I = 0; I < 5; ++I)
    requireScalarArg(Op, Args, I, Names[I], I < 3);
  return tensorType({Dim::any(), Dim::any()}, T);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "dft",
    "Discrete Fourier transform along an axis of a real ([..., 1]) or complex\n"
    "([..., 2]) signal; dft_length, inverse and onesided as in ONNX DFT.",
    1, dftRel<"dft">, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "dft_dynamic",
    "dft whose dft_length is a scalar input (zero elements: absent), and\n"
    "optionally the axis too (ONNX DFT-20); the transformed extent is\n"
    "data-dependent.",
    -1, dftRel<"dft_dynamic">, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "stft",
    "Short-time Fourier transform of signal[batch, length, 1|2] with a window\n"
    "(zero elements: rectangular); output [batch, frames, bins, 2].",
    2, stftRel<"stft">, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "stft_dynamic",
    "stft over (signal, frame_step, window, frame_length) inputs; empty\n"
    "optional inputs are absent and the output shape is data-dependent.",
    4, stftRel<"stft_dynamic">, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "hann_window",
    "Hann window of a static length:\n"
    "0.5 - 0.5 cos(2 pi n / N), N = size (periodic) or size - 1.",
    0, windowRel<"hann_window">, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{"hamming_window",
                         "Hamming window of a static length:\n"
                         "25/46 - 21/46 cos(2 pi n / N).",
                         0, windowRel<"hamming_window">,
                         FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{"blackman_window",
                         "Blackman window of a static length:\n"
                         "0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N).",
                         0, windowRel<"blackman_window">,
                         FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{"hann_window_dynamic",
                         "hann_window whose length is a scalar input\n"
                         "(data-dependent shape).",
                         1, windowRel<"hann_window_dynamic">,
                         FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{"hamming_window_dynamic",
                         "hamming_window whose length is a scalar input\n"
                         "(data-dependent shape).",
                         1, windowRel<"hamming_window_dynamic">,
                         FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{"blackman_window_dynamic",
                         "blackman_window whose length is a scalar input\n"
                         "(data-dependent shape).",
                         1, windowRel<"blackman_window_dynamic">,
                         FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "mel_weight_matrix",
    "Triangular mel filter bank [dft_length/2 + 1, num_mel_bins] from static\n"
    "parameters (ONNX MelWeightMatrix).",
    0, melRel<"mel_weight_matrix">, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "mel_weight_matrix_dynamic",
    "mel_weight_matrix over scalar inputs (num_mel_bins, dft_length,\n"
    "sample_rate, lower/upper_edge_hertz); data-dependent shape.",
    5, melRel<"mel_weight_matrix_dynamic">, FusionPattern::Opaque});

} // namespace rivet::ir
