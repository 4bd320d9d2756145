//===- NN.cc - ONNX convolution, pooling and normalization ----------------===//
//
// Conv/ConvTranspose/pools/normalizations map 1:1 onto the IR operators of
// src/ir/ops/NN.cc: ONNX attributes are copied under the same name (absent
// ones keep the IR default), optional inputs become extra arguments, and
// optional outputs select a tuple-returning form. LpNormalization is a
// division by an l1_norm/l2_norm reduction.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

/// Copies an ints attribute when present.
void copyInts(NodeContext &C, Attrs &A, const char *Name) {
  if (C.hasAttr(Name))
    A.set(Name, C.attrInts(Name));
}
void copyInt(NodeContext &C, Attrs &A, const char *Name) {
  if (C.hasAttr(Name))
    A.set(Name, C.attrInt(Name));
}
void copyFloat(NodeContext &C, Attrs &A, const char *Name) {
  if (C.hasAttr(Name))
    A.set(Name, C.attrFloat(Name));
}

/// kernel_shape, strides, pads, dilations and auto_pad (NOTSET is the
/// default and is left out).
Attrs windowAttrs(NodeContext &C) {
  Attrs A;
  for (const char *N : {"kernel_shape", "strides", "pads", "dilations"})
    copyInts(C, A, N);
  std::string AutoPad = C.attrString("auto_pad", "NOTSET");
  if (AutoPad != "NOTSET" && !AutoPad.empty()) {
    if (AutoPad != "SAME_UPPER" && AutoPad != "SAME_LOWER" &&
        AutoPad != "VALID")
      C.error("unknown auto_pad '{}'", AutoPad);
    A.set("auto_pad", AutoPad);
  }
  return A;
}

/// The node's inputs from First on, stopping at the first absent optional.
std::vector<Expr> presentInputs(NodeContext &C, size_t Required) {
  std::vector<Expr> Args;
  for (size_t I = 0; I < C.numInputs(); ++I) {
    if (!C.hasInput(I)) {
      if (I < Required)
        C.error("input {} is required", I);
      // A later present input after an absent one cannot be expressed
      // positionally.
      for (size_t J = I + 1; J < C.numInputs(); ++J)
        if (C.hasInput(J))
          C.error("optional input {} is absent but input {} is given", I, J);
      break;
    }
    Args.push_back(C.input(I));
  }
  if (Args.size() < Required)
    C.error("expected at least {} inputs, got {}", Required, Args.size());
  return Args;
}

std::vector<Expr> convertConv(NodeContext &C) {
  Attrs A = windowAttrs(C);
  copyInt(C, A, "group");
  return {ir::callOp("conv", presentInputs(C, 2), A)};
}
RIVET_REGISTER_ONNX_OP("Conv", 1, convertConv);

std::vector<Expr> convertConvTranspose(NodeContext &C) {
  Attrs A = windowAttrs(C);
  copyInt(C, A, "group");
  copyInts(C, A, "output_padding");
  copyInts(C, A, "output_shape");
  return {ir::callOp("conv_transpose", presentInputs(C, 2), A)};
}
RIVET_REGISTER_ONNX_OP("ConvTranspose", 1, convertConvTranspose);

std::vector<Expr> convertConvInteger(NodeContext &C) {
  Attrs A = windowAttrs(C);
  copyInt(C, A, "group");
  return {ir::callOp("conv_integer", presentInputs(C, 2), A)};
}
RIVET_REGISTER_ONNX_OP("ConvInteger", 10, convertConvInteger);

std::vector<Expr> convertQLinearConv(NodeContext &C) {
  Attrs A = windowAttrs(C);
  copyInt(C, A, "group");
  return {ir::callOp("qlinear_conv", presentInputs(C, 8), A)};
}
RIVET_REGISTER_ONNX_OP("QLinearConv", 10, convertQLinearConv);

// MaxPool-8 added storage_order and the Indices output; -10 ceil_mode and
// dilations. Attributes absent in older opsets keep the IR defaults.
std::vector<Expr> convertMaxPool(NodeContext &C) {
  Attrs A = windowAttrs(C);
  copyInt(C, A, "ceil_mode");
  copyInt(C, A, "storage_order");
  if (!C.hasAttr("kernel_shape"))
    C.error("attribute 'kernel_shape' is required");
  if (!C.hasOutput(1))
    return {ir::callOp("max_pool", {C.input(0)}, A)};
  A.set("with_indices", int64_t(1));
  return C.bindTuple(ir::callOp("max_pool", {C.input(0)}, A), 2);
}
RIVET_REGISTER_ONNX_OP("MaxPool", 1, convertMaxPool);
RIVET_REGISTER_ONNX_OP("MaxPool", 8, convertMaxPool);

// AveragePool-7 added count_include_pad, -10 ceil_mode.
std::vector<Expr> convertAveragePool(NodeContext &C) {
  Attrs A = windowAttrs(C);
  copyInt(C, A, "ceil_mode");
  copyInt(C, A, "count_include_pad");
  if (!C.hasAttr("kernel_shape"))
    C.error("attribute 'kernel_shape' is required");
  return {ir::callOp("avg_pool", {C.input(0)}, A)};
}
RIVET_REGISTER_ONNX_OP("AveragePool", 1, convertAveragePool);
RIVET_REGISTER_ONNX_OP("AveragePool", 7, convertAveragePool);

// LpPool-1 has a float p; LpPool-2 an int p.
std::vector<Expr> convertLpPool1(NodeContext &C) {
  Attrs A = windowAttrs(C);
  double P = C.attrFloat("p", 2.0);
  if (P != (double)(int64_t)P || P < 1)
    C.error("only integral p >= 1 is supported, got {}", P);
  A.set("p", (int64_t)P);
  return {ir::callOp("lp_pool", {C.input(0)}, A)};
}
RIVET_REGISTER_ONNX_OP("LpPool", 1, convertLpPool1);

std::vector<Expr> convertLpPool(NodeContext &C) {
  Attrs A = windowAttrs(C);
  copyInt(C, A, "p");
  return {ir::callOp("lp_pool", {C.input(0)}, A)};
}
RIVET_REGISTER_ONNX_OP("LpPool", 2, convertLpPool);

std::vector<Expr> convertGlobalAveragePool(NodeContext &C) {
  return {ir::callOp("global_avg_pool", {C.input(0)})};
}
RIVET_REGISTER_ONNX_OP("GlobalAveragePool", 1, convertGlobalAveragePool);

std::vector<Expr> convertGlobalMaxPool(NodeContext &C) {
  return {ir::callOp("global_max_pool", {C.input(0)})};
}
RIVET_REGISTER_ONNX_OP("GlobalMaxPool", 1, convertGlobalMaxPool);

// A constant output_shape becomes the static form's default check; a
// run-time one needs the data-dependent max_unpool_to_shape.
std::vector<Expr> convertMaxUnpool(NodeContext &C) {
  Attrs A;
  for (const char *N : {"kernel_shape", "strides", "pads"})
    copyInts(C, A, N);
  if (!C.hasAttr("kernel_shape"))
    C.error("attribute 'kernel_shape' is required");
  if (!C.hasInput(2))
    return {ir::callOp("max_unpool", {C.input(0), C.input(1)}, A)};
  return {ir::callOp("max_unpool_to_shape",
                     {C.input(0), C.input(1), C.input(2)}, A)};
}
RIVET_REGISTER_ONNX_OP("MaxUnpool", 9, convertMaxUnpool);

/// BatchNormalization before opset 14: is_test (< 7), spatial (< 9) and
/// consumed_inputs (< 6) are accepted; only the inference form is supported.
std::vector<Expr> convertBatchNormLegacy(NodeContext &C) {
  if (C.attrInt("spatial", 1) != 1)
    C.error("spatial=0 (per-activation statistics) is not supported");
  for (size_t I = 1; I < C.numOutputs(); ++I)
    if (C.hasOutput(I))
      C.error("training outputs (mean, var, saved_mean, saved_var) are not "
              "supported before opset 14; only the inference form is");
  Attrs A;
  copyFloat(C, A, "epsilon");
  std::vector<Expr> Args;
  for (size_t I = 0; I < 5; ++I)
    Args.push_back(C.input(I));
  return {ir::callOp("batch_norm", Args, A)};
}
RIVET_REGISTER_ONNX_OP("BatchNormalization", 1, convertBatchNormLegacy);
RIVET_REGISTER_ONNX_OP("BatchNormalization", 6, convertBatchNormLegacy);
RIVET_REGISTER_ONNX_OP("BatchNormalization", 7, convertBatchNormLegacy);
RIVET_REGISTER_ONNX_OP("BatchNormalization", 9, convertBatchNormLegacy);

// BatchNormalization-14: training_mode returns running_mean/running_var.
std::vector<Expr> convertBatchNorm(NodeContext &C) {
  Attrs A;
  copyFloat(C, A, "epsilon");
  std::vector<Expr> Args;
  for (size_t I = 0; I < 5; ++I)
    Args.push_back(C.input(I));
  bool Training = C.attrInt("training_mode", 0) != 0;
  if (!Training) {
    if (C.hasOutput(1) || C.hasOutput(2))
      C.error("outputs running_mean/running_var need training_mode=1");
    return {ir::callOp("batch_norm", Args, A)};
  }
  copyFloat(C, A, "momentum");
  A.set("training", int64_t(1));
  return C.bindTuple(ir::callOp("batch_norm", Args, A), 3);
}
RIVET_REGISTER_ONNX_OP("BatchNormalization", 14, convertBatchNorm);

std::vector<Expr> convertInstanceNorm(NodeContext &C) {
  Attrs A;
  copyFloat(C, A, "epsilon");
  return {ir::callOp("instance_norm", {C.input(0), C.input(1), C.input(2)}, A)};
}
RIVET_REGISTER_ONNX_OP("InstanceNormalization", 1, convertInstanceNorm);

std::vector<Expr> convertLayerNorm(NodeContext &C) {
  Attrs A;
  copyInt(C, A, "axis");
  copyFloat(C, A, "epsilon");
  copyInt(C, A, "stash_type");
  std::vector<Expr> Args = presentInputs(C, 2);
  if (!C.hasOutput(1) && !C.hasOutput(2))
    return {ir::callOp("layer_norm", Args, A)};
  A.set("with_stats", int64_t(1));
  std::vector<Expr> R = C.bindTuple(ir::callOp("layer_norm", Args, A), 3);
  R.resize(C.numOutputs());
  return R;
}
RIVET_REGISTER_ONNX_OP("LayerNormalization", 17, convertLayerNorm);

std::vector<Expr> convertRMSNorm(NodeContext &C) {
  Attrs A;
  copyInt(C, A, "axis");
  copyFloat(C, A, "epsilon");
  copyInt(C, A, "stash_type");
  return {ir::callOp("rms_norm", {C.input(0), C.input(1)}, A)};
}
RIVET_REGISTER_ONNX_OP("RMSNormalization", 23, convertRMSNorm);

// GroupNormalization-18 has a scale and bias per group; -21 per channel, and
// stash_type.
template <bool PerGroup> std::vector<Expr> convertGroupNorm(NodeContext &C) {
  Attrs A;
  A.set("num_groups", C.attrInt("num_groups"));
  copyFloat(C, A, "epsilon");
  copyInt(C, A, "stash_type");
  if (PerGroup)
    A.set("per_group", int64_t(1));
  return {ir::callOp("group_norm", {C.input(0), C.input(1), C.input(2)}, A)};
}
RIVET_REGISTER_ONNX_OP("GroupNormalization", 18, convertGroupNorm<true>);
RIVET_REGISTER_ONNX_OP("GroupNormalization", 21, convertGroupNorm<false>);

// LpNormalization: x divided by its L1 or L2 norm along axis (0 / 0 is NaN,
// as in ONNX's reference).
std::vector<Expr> convertLpNorm(NodeContext &C) {
  int64_t P = C.attrInt("p", 2);
  if (P != 1 && P != 2)
    C.error("attribute 'p' must be 1 or 2, got {}", P);
  Expr X = C.bind(C.input(0), "x");
  Attrs A{{"axis", std::vector<int64_t>{C.attrInt("axis", -1)}},
          {"keepdims", int64_t(1)}};
  Expr Norm = ir::callOp(P == 1 ? "l1_norm" : "l2_norm", {X}, std::move(A));
  return {ir::callOp("divide", {X, Norm})};
}
RIVET_REGISTER_ONNX_OP("LpNormalization", 1, convertLpNorm);

std::vector<Expr> convertLRN(NodeContext &C) {
  Attrs A;
  A.set("size", C.attrInt("size"));
  copyFloat(C, A, "alpha");
  copyFloat(C, A, "beta");
  copyFloat(C, A, "bias");
  return {ir::callOp("lrn", {C.input(0)}, A)};
}
RIVET_REGISTER_ONNX_OP("LRN", 1, convertLRN);

std::vector<Expr> convertMVN(NodeContext &C) {
  Attrs A;
  copyInts(C, A, "axes");
  return {ir::callOp("mean_variance_norm", {C.input(0)}, A)};
}
RIVET_REGISTER_ONNX_OP("MeanVarianceNormalization", 9, convertMVN);

} // namespace
} // namespace rivet::frontend
