//===- Transform.cc - ONNX shape manipulation operators -------------------===//
//
// Reshape, Transpose, Concat, Squeeze, Unsqueeze, Flatten, Slice, Expand,
// Tile, Pad, CenterCropPad, Split, DepthToSpace and SpaceToDepth. Where ONNX
// passes a shape, axes, pads or repeats as a tensor input, a constant input
// becomes the static operator's attribute and any other input the
// data-dependent *_dyn operator, so models that compute their shapes still
// import.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"
#include "ir/ops/StaticForms.h"

#include <limits>
#include <optional>

namespace rivet::frontend {
namespace {

using ir::Expr;
using Ints = std::vector<int64_t>;

/// The values of constant input I as int64s, or nullopt when it is not a
/// constant; an error naming the node when it is not integer-valued.
std::optional<Ints> constantInts(NodeContext &C, size_t I, const char *What) {
  std::optional<Tensor> T = C.constantInput(I);
  if (!T)
    return std::nullopt;
  if (T->dtype() != DType::Int64 && T->dtype() != DType::Int32)
    C.error("input '{}' must be int32 or int64, got {}", What,
            dtypeName(T->dtype()));
  if (T->rank() > 1)
    C.error("input '{}' must be 1-D, got shape {}", What,
            shapeToString(T->shape()));
  return T->toIntVector();
}

/// Dyn, or its static form when the inputs that decide its shape are
/// constants (ir/ops/StaticForms.h: the mapping DynamicToStatic applies to
/// shapes that become constant later).
using ir::staticOrDynamic;

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

std::vector<Expr> convertReshape1(NodeContext &C) {
  return {ir::callOp("reshape", {C.input(0)},
                     Attrs{{"newshape", C.attrInts("shape")}})};
}

std::vector<Expr> convertReshape5(NodeContext &C) {
  (void)constantInts(C, 1, "shape"); // checks a constant's dtype and rank
  return {staticOrDynamic(
      ir::callOp("reshape_dyn", {C.input(0), C.input(1)},
                 Attrs{{"allowzero", C.attrInt("allowzero", 0)}}))};
}

//===----------------------------------------------------------------------===//
// Transpose, Concat, Flatten
//===----------------------------------------------------------------------===//

std::vector<Expr> convertTranspose(NodeContext &C) {
  Attrs A;
  if (C.hasAttr("perm"))
    A.set("axes", C.attrInts("perm"));
  return {ir::callOp("transpose", {C.input(0)}, A)};
}

std::vector<Expr> convertConcat(NodeContext &C) {
  std::vector<Expr> Args;
  for (size_t I = 0; I < C.numInputs(); ++I)
    if (C.hasInput(I))
      Args.push_back(C.input(I));
  if (Args.empty())
    C.error("needs at least one input");
  // Concat-1 had an optional axis defaulting to 1.
  int64_t Axis = C.opset() < 4 ? C.attrInt("axis", 1) : C.attrInt("axis");
  return {ir::callOp("concatenate", Args, Attrs{{"axis", Axis}})};
}

std::vector<Expr> convertFlatten(NodeContext &C) {
  return {ir::callOp("flatten", {C.input(0)},
                     Attrs{{"axis", C.attrInt("axis", 1)}})};
}

//===----------------------------------------------------------------------===//
// Squeeze and Unsqueeze (axes attribute < 13, input >= 13)
//===----------------------------------------------------------------------===//

std::vector<Expr> convertSqueeze1(NodeContext &C) {
  Attrs A;
  if (C.hasAttr("axes"))
    A.set("axes", C.attrInts("axes"));
  return {ir::callOp("squeeze", {C.input(0)}, A)};
}

std::vector<Expr> convertSqueeze13(NodeContext &C) {
  if (!C.hasInput(1))
    return {ir::callOp("squeeze", {C.input(0)})};
  (void)constantInts(C, 1, "axes");
  return {staticOrDynamic(ir::callOp("squeeze_dyn", {C.input(0), C.input(1)}))};
}

std::vector<Expr> convertUnsqueeze1(NodeContext &C) {
  return {ir::callOp("unsqueeze", {C.input(0)},
                     Attrs{{"axes", C.attrInts("axes")}})};
}

std::vector<Expr> convertUnsqueeze13(NodeContext &C) {
  (void)constantInts(C, 1, "axes");
  return {
      staticOrDynamic(ir::callOp("unsqueeze_dyn", {C.input(0), C.input(1)}))};
}

//===----------------------------------------------------------------------===//
// Slice (attributes < 10, inputs >= 10)
//===----------------------------------------------------------------------===//

std::vector<Expr> convertSlice1(NodeContext &C) {
  Attrs A{{"begin", C.attrInts("starts")}, {"end", C.attrInts("ends")}};
  if (C.hasAttr("axes"))
    A.set("axes", C.attrInts("axes"));
  return {ir::callOp("strided_slice", {C.input(0)}, A)};
}

std::vector<Expr> convertSlice10(NodeContext &C) {
  std::optional<Ints> Starts = constantInts(C, 1, "starts");
  std::optional<Ints> Ends = constantInts(C, 2, "ends");
  std::optional<Ints> Axes, Steps;
  bool AxesOk = !C.hasInput(3) || (Axes = constantInts(C, 3, "axes"));
  bool StepsOk = !C.hasInput(4) || (Steps = constantInts(C, 4, "steps"));
  if (Starts && Ends && AxesOk && StepsOk) {
    Attrs A{{"begin", *Starts}, {"end", *Ends}};
    if (Axes)
      A.set("axes", *Axes);
    if (Steps)
      A.set("strides", *Steps);
    return {ir::callOp("strided_slice", {C.input(0)}, A)};
  }
  std::vector<Expr> Args = {C.input(0), C.input(1), C.input(2)};
  if (C.hasInput(3)) {
    Args.push_back(C.input(3));
  } else if (C.hasInput(4)) {
    // Default axes 0..len(starts)-1, computed because starts is a tensor.
    Expr N = ir::callOp("dim_size", {C.input(1)}, Attrs{{"axis", int64_t(0)}});
    Args.push_back(
        ir::callOp("arange", {ir::constant(Tensor::scalar<int64_t>(0)), N,
                              ir::constant(Tensor::scalar<int64_t>(1))}));
  }
  if (C.hasInput(4))
    Args.push_back(C.input(4));
  return {ir::callOp("slice_dyn", Args)};
}

//===----------------------------------------------------------------------===//
// Expand and Tile
//===----------------------------------------------------------------------===//

std::vector<Expr> convertExpand(NodeContext &C) {
  (void)constantInts(C, 1, "shape");
  return {staticOrDynamic(ir::callOp("expand_dyn", {C.input(0), C.input(1)}))};
}

std::vector<Expr> convertTile6(NodeContext &C) {
  (void)constantInts(C, 1, "repeats");
  return {staticOrDynamic(ir::callOp("tile_dyn", {C.input(0), C.input(1)}))};
}

/// Pad's default fill value, a scalar 0 of input 0's dtype: a constant when
/// the declared type states the dtype (so that pad_dyn's static form
/// applies once the pads are known), else converted at run time.
Expr zeroFillValue(NodeContext &C) {
  ir::Type T = C.declaredInputType(0);
  if (const auto *TT = T ? T->as<ir::TensorTypeNode>() : nullptr)
    return ir::constant(Tensor::zeros({}, TT->dtype));
  return ir::callOp("cast_like",
                    {ir::constant(Tensor::scalar<float>(0)), C.input(0)});
}

//===----------------------------------------------------------------------===//
// Pad (paddings < 2, pads attribute < 11, inputs >= 11, axes input >= 18,
// mode 'wrap' >= 19)
//===----------------------------------------------------------------------===//

std::vector<Expr> convertPad1(NodeContext &C) {
  Ints Pads = C.opset() < 2 ? C.attrInts("paddings") : C.attrInts("pads");
  return {ir::callOp("pad", {C.input(0)},
                     Attrs{{"pads", Pads},
                           {"mode", C.attrString("mode", "constant")},
                           {"value", C.attrFloat("value", 0.0)}})};
}

std::vector<Expr> convertPad11(NodeContext &C) {
  std::string Mode = C.attrString("mode", "constant");
  if (Mode == "wrap" && C.opset() < 19)
    C.error("mode 'wrap' needs opset 19 or later");
  std::optional<Ints> Pads = constantInts(C, 1, "pads");
  std::optional<Tensor> Value = C.constantInput(2);
  std::optional<Ints> Axes;
  bool AxesOk = !C.hasInput(3) || (Axes = constantInts(C, 3, "axes"));
  if (Value && Value->numel() != 1)
    C.error("constant_value must have one element, got shape {}",
            shapeToString(Value->shape()));
  if (Pads && AxesOk && (!C.hasInput(2) || Value)) {
    Attrs A{{"pads", *Pads}, {"mode", Mode}};
    if (Value)
      A.set("value", Value->elementAsDouble(0));
    if (Axes)
      A.set("axes", *Axes);
    return {ir::callOp("pad", {C.input(0)}, A)};
  }
  std::vector<Expr> Args = {C.input(0), C.input(1)};
  if (C.hasInput(2)) {
    Args.push_back(toScalar(C.input(2)));
  } else if (C.hasInput(3)) {
    // pad_dyn's axes come after the fill value: the default, 0.
    Args.push_back(zeroFillValue(C));
  }
  if (C.hasInput(3))
    Args.push_back(C.input(3));
  return {ir::callOp("pad_dyn", Args, Attrs{{"mode", Mode}})};
}

//===----------------------------------------------------------------------===//
// CenterCropPad: each named axis is padded with zeros to at least the target
// extent (the odd pixel on the right) and then cropped to it (the window
// starts rounded down), as the operator's function body does.
//===----------------------------------------------------------------------===//

/// pad and strided_slice when the target and the input's extents on the
/// axes are known at import; null otherwise.
Expr centerCropPadStatic(NodeContext &C, const Ints &Axes, bool AllAxes) {
  std::optional<Ints> Target = constantInts(C, 1, "shape");
  ir::Type T = C.declaredInputType(0);
  const auto *TT = T ? T->as<ir::TensorTypeNode>() : nullptr;
  if (!Target || !TT || !TT->shape)
    return nullptr;
  int64_t Rank = (int64_t)TT->shape->size();
  Ints Ax = Axes;
  if (AllAxes)
    for (int64_t I = 0; I < Rank; ++I)
      Ax.push_back(I);
  if (Target->size() != Ax.size())
    C.error("'shape' has {} entries for {} axes", Target->size(), Ax.size());
  size_t N = Ax.size();
  Ints Pads(2 * N), Begin(N), End(N);
  for (size_t I = 0; I < N; ++I) {
    if (Ax[I] < -Rank || Ax[I] >= Rank)
      C.error("axis {} is out of range for rank {}", Ax[I], Rank);
    const ir::Dim &D = (*TT->shape)[Ax[I] < 0 ? Ax[I] + Rank : Ax[I]];
    int64_t Want = (*Target)[I];
    if (!D.isConst())
      return nullptr;
    if (Want < 0)
      C.error("'shape' has a negative extent {}", Want);
    int64_t Pad = std::max<int64_t>(Want - D.value, 0);
    Pads[I] = Pad / 2;
    Pads[N + I] = Pad - Pad / 2;
    Begin[I] = (D.value + Pad - Want) / 2;
    End[I] = Begin[I] + Want;
  }
  Expr P = ir::callOp("pad", {C.input(0)}, Attrs{{"pads", Pads}, {"axes", Ax}});
  return ir::callOp("strided_slice", {P},
                    Attrs{{"begin", Begin}, {"end", End}, {"axes", Ax}});
}

std::vector<Expr> convertCenterCropPad(NodeContext &C) {
  bool AllAxes = !C.hasAttr("axes");
  Ints Axes = C.attrInts("axes", {});
  if (Expr S = centerCropPadStatic(C, Axes, AllAxes))
    return {S};
  // The function body on run-time extents.
  Expr X = C.input(0);
  Expr AxesE = ir::constant(Tensor::fromVector(Axes, {(int64_t)Axes.size()}));
  Expr Extents = ir::callOp("shape_of", {X});
  if (!AllAxes)
    Extents = ir::callOp("take", {Extents, AxesE}, Attrs{{"axis", int64_t(0)}});
  Extents = C.bind(Extents, "extents");
  Expr Target = C.input(1);
  Expr Two = ir::constant(Tensor::scalar<int64_t>(2));
  auto Sub = [](Expr A, Expr B) { return ir::callOp("subtract", {A, B}); };
  auto Half = [&](Expr A) { return ir::callOp("divide", {A, Two}); };
  Expr Padded = C.bind(ir::callOp("maximum", {Extents, Target}), "padded");
  Expr Amount = C.bind(Sub(Padded, Extents), "pad_amount");
  Expr Left = C.bind(Half(Amount), "pad_left");
  Expr Pads = ir::callOp("concatenate", {Left, Sub(Amount, Left)},
                         Attrs{{"axis", int64_t(0)}});
  std::vector<Expr> PadArgs = {X, Pads};
  if (!AllAxes)
    PadArgs.insert(PadArgs.end(), {zeroFillValue(C), AxesE});
  Expr P =
      ir::callOp("pad_dyn", PadArgs, Attrs{{"mode", std::string("constant")}});
  Expr Start = C.bind(Half(Sub(Padded, Target)), "crop_start");
  std::vector<Expr> SliceArgs = {P, Start, ir::callOp("add", {Start, Target})};
  if (!AllAxes)
    SliceArgs.push_back(AxesE);
  return {ir::callOp("slice_dyn", SliceArgs)};
}

//===----------------------------------------------------------------------===//
// Split (split attribute < 13, input >= 13, num_outputs >= 18)
//===----------------------------------------------------------------------===//

/// Sizes computed at run time: split_dyn checks them against the extent.
std::vector<Expr> splitDyn(NodeContext &C, int64_t Axis, Expr Sizes) {
  size_t N = C.numOutputs();
  Expr S = ir::callOp("split_dyn", {C.input(0), std::move(Sizes)},
                      Attrs{{"axis", Axis}, {"num_outputs", (int64_t)N}});
  return C.bindTuple(S, N);
}

/// The extent of input 0's axis Axis when its declared type states it.
std::optional<int64_t> declaredExtent(NodeContext &C, int64_t Axis) {
  ir::Type T = C.declaredInputType(0);
  const auto *TT = T ? T->as<ir::TensorTypeNode>() : nullptr;
  if (!TT || !TT->shape)
    return std::nullopt;
  int64_t Rank = (int64_t)TT->shape->size();
  if (Axis < -Rank || Axis >= Rank)
    return std::nullopt; // the relation reports the bad axis
  const ir::Dim &D = (*TT->shape)[Axis < 0 ? Axis + Rank : Axis];
  return D.isConst() ? std::optional<int64_t>(D.value) : std::nullopt;
}

/// Sizes given (a split attribute or constant input), or else equal
/// sections; Uneven (Split-18) lets the last sections be smaller.
std::vector<Expr> splitBySizes(NodeContext &C, int64_t Axis,
                               const std::optional<Ints> &Sizes,
                               bool Uneven = false) {
  size_t N = C.numOutputs();
  Attrs A{{"axis", Axis}};
  if (Sizes) {
    if (Sizes->size() != N)
      C.error("'split' has {} entries but the node has {} outputs",
              Sizes->size(), N);
    Ints Points;
    int64_t Sum = 0;
    for (size_t I = 0; I < Sizes->size(); ++I) {
      if ((*Sizes)[I] < 0)
        C.error("'split' has a negative size {}", (*Sizes)[I]);
      if (Sum > std::numeric_limits<int64_t>::max() - (*Sizes)[I])
        C.error("'split' sizes overflow");
      Sum += (*Sizes)[I];
      if (I + 1 < Sizes->size())
        Points.push_back(Sum);
    }
    // split's last part is the remainder of the axis, so the sizes must add
    // up to its extent: checked here when the declared type knows the
    // extent, else by split_dyn at run time (which becomes this static split
    // once the inferred type proves the sum).
    std::optional<int64_t> Extent = declaredExtent(C, Axis);
    if (!Extent)
      return splitDyn(
          C, Axis,
          ir::constant(Tensor::fromVector(*Sizes, {(int64_t)Sizes->size()})));
    if (Sum != *Extent)
      C.error("'split' sizes add up to {}, but axis {} has extent {}", Sum,
              Axis, *Extent);
    A.set("indices", Points);
  } else {
    A.set("sections", (int64_t)N);
    if (Uneven)
      A.set("uneven", int64_t(1));
  }
  Expr S = ir::callOp("split", {C.input(0)}, A);
  return C.bindTuple(S, N);
}

std::vector<Expr> convertSplit1(NodeContext &C) {
  int64_t Axis = C.attrInt("axis", 0);
  if (C.hasAttr("split"))
    return splitBySizes(C, Axis, C.attrInts("split"));
  if (C.hasInput(1)) {
    std::optional<Ints> Sizes = constantInts(C, 1, "split");
    if (!Sizes)
      return splitDyn(C, Axis, C.input(1));
    return splitBySizes(C, Axis, Sizes);
  }
  return splitBySizes(C, Axis, std::nullopt);
}

/// Split-13 splits into equal parts without 'split'; Split-18 adds
/// num_outputs, whose parts may be uneven (the last ones smaller).
template <bool Uneven> std::vector<Expr> convertSplit13(NodeContext &C) {
  int64_t Axis = C.attrInt("axis", 0);
  if (!C.hasInput(1)) {
    if (Uneven && C.hasAttr("num_outputs") &&
        C.attrInt("num_outputs") != (int64_t)C.numOutputs())
      C.error("num_outputs {} differs from the node's {} outputs",
              C.attrInt("num_outputs"), C.numOutputs());
    return splitBySizes(C, Axis, std::nullopt, Uneven);
  }
  if (Uneven && C.hasAttr("num_outputs"))
    C.error("'split' and num_outputs must not both be given");
  std::optional<Ints> Sizes = constantInts(C, 1, "split");
  if (!Sizes)
    return splitDyn(C, Axis, C.input(1));
  return splitBySizes(C, Axis, Sizes);
}

//===----------------------------------------------------------------------===//
// DepthToSpace and SpaceToDepth
//===----------------------------------------------------------------------===//

std::vector<Expr> convertDepthToSpace(NodeContext &C) {
  return {ir::callOp("depth_to_space", {C.input(0)},
                     Attrs{{"blocksize", C.attrInt("blocksize")},
                           {"mode", C.attrString("mode", "DCR")}})};
}

std::vector<Expr> convertSpaceToDepth(NodeContext &C) {
  return {ir::callOp("space_to_depth", {C.input(0)},
                     Attrs{{"blocksize", C.attrInt("blocksize")}})};
}

} // namespace

RIVET_REGISTER_ONNX_OP("Reshape", 1, convertReshape1);
RIVET_REGISTER_ONNX_OP("Reshape", 5, convertReshape5);
RIVET_REGISTER_ONNX_OP("Reshape", 14, convertReshape5);
RIVET_REGISTER_ONNX_OP("Transpose", 1, convertTranspose);
RIVET_REGISTER_ONNX_OP("Concat", 1, convertConcat);
RIVET_REGISTER_ONNX_OP("Concat", 4, convertConcat);
RIVET_REGISTER_ONNX_OP("Flatten", 1, convertFlatten);
RIVET_REGISTER_ONNX_OP("Flatten", 11, convertFlatten);
RIVET_REGISTER_ONNX_OP("Squeeze", 1, convertSqueeze1);
RIVET_REGISTER_ONNX_OP("Squeeze", 13, convertSqueeze13);
RIVET_REGISTER_ONNX_OP("Unsqueeze", 1, convertUnsqueeze1);
RIVET_REGISTER_ONNX_OP("Unsqueeze", 13, convertUnsqueeze13);
RIVET_REGISTER_ONNX_OP("Slice", 1, convertSlice1);
RIVET_REGISTER_ONNX_OP("Slice", 10, convertSlice10);
RIVET_REGISTER_ONNX_OP("Expand", 8, convertExpand);
RIVET_REGISTER_ONNX_OP("Tile", 6, convertTile6);
RIVET_REGISTER_ONNX_OP("Pad", 1, convertPad1);
RIVET_REGISTER_ONNX_OP("Pad", 11, convertPad11);
RIVET_REGISTER_ONNX_OP("Pad", 18, convertPad11);
RIVET_REGISTER_ONNX_OP("Pad", 19, convertPad11);
RIVET_REGISTER_ONNX_OP("Split", 1, convertSplit1);
RIVET_REGISTER_ONNX_OP("Split", 13, convertSplit13<false>);
RIVET_REGISTER_ONNX_OP("Split", 18, convertSplit13<true>);
RIVET_REGISTER_ONNX_OP("CenterCropPad", 18, convertCenterCropPad);
RIVET_REGISTER_ONNX_OP("DepthToSpace", 1, convertDepthToSpace);
RIVET_REGISTER_ONNX_OP("DepthToSpace", 11, convertDepthToSpace);
RIVET_REGISTER_ONNX_OP("SpaceToDepth", 1, convertSpaceToDepth);

} // namespace rivet::frontend
