//===- Signal.cc - ONNX DFT, STFT, window functions, MelWeightMatrix ------===//
//
// Scalar inputs that fix the output shape (dft_length, frame_step, the window
// size, ...) become attributes of the static op when they are constants;
// otherwise the *_dynamic op takes them as inputs (an empty constant stands
// for a missing optional one).
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Converter.h"
#include "ir/ops/StaticForms.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

/// Dyn, or its static form when its length inputs are constants
/// (ir/ops/StaticForms.h, shared with DynamicToStatic).
using ir::staticOrDynamic;

Expr inputOrAbsent(NodeContext &C, size_t I, DType T) {
  return C.hasInput(I) ? C.input(I) : ir::constant(Tensor::zeros({0}, T));
}

/// The value of a constant one-element input, nullopt when it is not a
/// constant; Absent is true when the input is missing.
std::optional<Tensor> constScalar(NodeContext &C, size_t I, bool &Absent) {
  Absent = !C.hasInput(I);
  if (Absent)
    return std::nullopt;
  std::optional<Tensor> T = C.constantInput(I);
  if (T && T->numel() != 1)
    C.error("input {} must have exactly one element, got {}", I,
            T->typeString());
  return T;
}

/// ONNX TensorProto data type -> Rivet dtype name.
std::string onnxDTypeName(NodeContext &C, int64_t T) {
  switch (T) {
  case 1: return "float32";
  case 2: return "uint8";
  case 3: return "int8";
  case 5: return "int16";
  case 6: return "int32";
  case 7: return "int64";
  case 10: return "float16";
  case 11: return "float64";
  default:
    C.error("output_datatype {} is not supported (Rivet has bool, int8/16/32/"
            "64, uint8, float16/32/64; windows need a numeric type)",
            T);
  }
}

// DFT-17: the axis is an attribute (default 1).
std::vector<Expr> convertDft17(NodeContext &C) {
  Attrs A;
  A.set("axis", C.attrInt("axis", 1));
  A.set("inverse", C.attrInt("inverse", 0));
  A.set("onesided", C.attrInt("onesided", 0));
  bool Absent;
  (void)constScalar(C, 1, Absent); // checks a constant's element count
  return {staticOrDynamic(ir::callOp(
      "dft_dynamic", {C.input(0), inputOrAbsent(C, 1, DType::Int64)}, A))};
}
RIVET_REGISTER_ONNX_OP("DFT", 17, convertDft17);

// DFT-20: the axis is an optional scalar input (default -2, the last signal
// axis); a computed one is dft_dynamic's third argument.
std::vector<Expr> convertDft20(NodeContext &C) {
  Attrs A;
  A.set("axis", int64_t(-2));
  A.set("inverse", C.attrInt("inverse", 0));
  A.set("onesided", C.attrInt("onesided", 0));
  bool Absent;
  (void)constScalar(C, 1, Absent);
  std::vector<Expr> Args = {C.input(0), inputOrAbsent(C, 1, DType::Int64)};
  std::optional<Tensor> Axis = constScalar(C, 2, Absent);
  if (Axis)
    A.set("axis", Axis->elementAsInt(0));
  else if (!Absent)
    Args.push_back(C.input(2));
  return {staticOrDynamic(ir::callOp("dft_dynamic", Args, A))};
}
RIVET_REGISTER_ONNX_OP("DFT", 20, convertDft20);

std::vector<Expr> convertStft(NodeContext &C) {
  Attrs A;
  A.set("onesided", C.attrInt("onesided", 1));
  bool StepAbsent, LenAbsent;
  std::optional<Tensor> Step = constScalar(C, 1, StepAbsent);
  std::optional<Tensor> Len = constScalar(C, 3, LenAbsent);
  if (StepAbsent)
    C.error("the input frame_step is required");
  Expr Window = inputOrAbsent(C, 2, DType::Float32);
  if (Step && (Len || LenAbsent)) {
    A.set("frame_step", Step->elementAsInt(0));
    if (Len)
      A.set("frame_length", Len->elementAsInt(0));
    return {ir::callOp("stft", {C.input(0), Window}, A)};
  }
  return {ir::callOp(
      "stft_dynamic",
      {C.input(0), C.input(1), Window, inputOrAbsent(C, 3, DType::Int64)}, A)};
}
RIVET_REGISTER_ONNX_OP("STFT", 17, convertStft);

std::vector<Expr> convertWindow(NodeContext &C, const std::string &Op) {
  Attrs A;
  A.set("periodic", C.attrInt("periodic", 1));
  A.set("dtype", onnxDTypeName(C, C.attrInt("output_datatype", 1)));
  bool Absent;
  (void)constScalar(C, 0, Absent);
  if (Absent)
    C.error("the input size is required");
  return {staticOrDynamic(ir::callOp(Op + "_dynamic", {C.input(0)}, A))};
}
std::vector<Expr> convertHann(NodeContext &C) {
  return convertWindow(C, "hann_window");
}
std::vector<Expr> convertHamming(NodeContext &C) {
  return convertWindow(C, "hamming_window");
}
std::vector<Expr> convertBlackman(NodeContext &C) {
  return convertWindow(C, "blackman_window");
}
RIVET_REGISTER_ONNX_OP("HannWindow", 17, convertHann);
RIVET_REGISTER_ONNX_OP("HammingWindow", 17, convertHamming);
RIVET_REGISTER_ONNX_OP("BlackmanWindow", 17, convertBlackman);

std::vector<Expr> convertMel(NodeContext &C) {
  Attrs A;
  A.set("dtype", onnxDTypeName(C, C.attrInt("output_datatype", 1)));
  const char *Names[] = {"num_mel_bins", "dft_length", "sample_rate",
                         "lower_edge_hertz", "upper_edge_hertz"};
  std::vector<Expr> Args;
  for (size_t I = 0; I < 5; ++I) {
    bool Absent;
    (void)constScalar(C, I, Absent);
    if (Absent)
      C.error("the input {} is required", Names[I]);
    Args.push_back(C.input(I));
  }
  return {staticOrDynamic(ir::callOp("mel_weight_matrix_dynamic", Args, A))};
}
RIVET_REGISTER_ONNX_OP("MelWeightMatrix", 17, convertMel);

} // namespace
} // namespace rivet::frontend
