//===- Image.cc - ONNX image operators ------------------------------------===//
//
// Resize, Upsample, GridSample, AffineGrid, Col2Im, RoiAlign and
// NonMaxSuppression. Resize/Upsample become `resize` when roi, scales and
// sizes are constants (or absent) and `resize_dynamic` otherwise; a missing
// optional input is passed to the dynamic ops as an empty constant.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

/// An empty tensor standing for an absent optional input.
Expr absentInput(DType T) { return ir::constant(Tensor::zeros({0}, T)); }

/// Input I, or an empty constant of dtype T when it is missing.
Expr inputOrAbsent(NodeContext &C, size_t I, DType T) {
  return C.hasInput(I) ? C.input(I) : absentInput(T);
}

/// Copies the ONNX attributes that map 1:1 onto resize's.
void copyResizeAttrs(NodeContext &C, Attrs &A) {
  for (const char *N : {"mode", "coordinate_transformation_mode",
                        "nearest_mode", "keep_aspect_ratio_policy"})
    if (C.hasAttr(N))
      A.set(N, C.attrString(N));
  for (const char *N : {"cubic_coeff_a", "extrapolation_value"})
    if (C.hasAttr(N))
      A.set(N, C.attrFloat(N));
  if (C.hasAttr("exclude_outside"))
    A.set("exclude_outside", C.attrInt("exclude_outside"));
  if (C.hasAttr("axes"))
    A.set("axes", C.attrInts("axes"));
}

/// A constant optional input: nullopt when it is not a constant, an empty
/// tensor when it is absent.
std::optional<Tensor> constantOrAbsent(NodeContext &C, size_t I) {
  if (!C.hasInput(I))
    return Tensor::zeros({0}, DType::Float32);
  return C.constantInput(I);
}

/// resize or resize_dynamic from roi/scales/sizes input positions (SIZE_MAX:
/// the input does not exist in this opset).
Expr makeResize(NodeContext &C, Attrs A, size_t RoiI, size_t ScalesI,
                size_t SizesI) {
  const size_t None = SIZE_MAX;
  auto Const = [&](size_t I) -> std::optional<Tensor> {
    if (I == None)
      return Tensor::zeros({0}, DType::Float32);
    return constantOrAbsent(C, I);
  };
  std::optional<Tensor> Roi = Const(RoiI), Scales = Const(ScalesI),
                        Sizes = Const(SizesI);
  if (Roi && Scales && Sizes) {
    if (Scales->numel() > 0)
      A.set("scales", Scales->toDoubleVector());
    if (Sizes->numel() > 0)
      A.set("sizes", Sizes->toIntVector());
    if (Roi->numel() > 0)
      A.set("roi", Roi->toDoubleVector());
    if (Scales->numel() == 0 && Sizes->numel() == 0)
      C.error("one of 'scales' and 'sizes' must be given");
    return ir::callOp("resize", {C.input(0)}, A);
  }
  auto Dyn = [&](size_t I, DType T) {
    return I == None ? absentInput(T) : inputOrAbsent(C, I, T);
  };
  return ir::callOp("resize_dynamic",
                    {C.input(0), Dyn(RoiI, DType::Float32),
                     Dyn(ScalesI, DType::Float32), Dyn(SizesI, DType::Int64)},
                    A);
}

// Resize-10: (X, scales), asymmetric coordinates, nearest rounds down.
std::vector<Expr> convertResize10(NodeContext &C) {
  Attrs A;
  A.set("mode", C.attrString("mode", "nearest"));
  A.set("coordinate_transformation_mode", std::string("asymmetric"));
  A.set("nearest_mode", std::string("floor"));
  return {makeResize(C, A, SIZE_MAX, 1, SIZE_MAX)};
}
RIVET_REGISTER_ONNX_OP("Resize", 10, convertResize10);

// Resize-11/13: (X, roi, scales, sizes).
std::vector<Expr> convertResize11(NodeContext &C) {
  Attrs A;
  copyResizeAttrs(C, A);
  return {makeResize(C, A, 1, 2, 3)};
}
RIVET_REGISTER_ONNX_OP("Resize", 11, convertResize11);
RIVET_REGISTER_ONNX_OP("Resize", 13, convertResize11);

// Resize-18/19: 18 adds antialias, axes and keep_aspect_ratio_policy, 19
// the half_pixel_symmetric mode; all map 1:1.
std::vector<Expr> convertResize18(NodeContext &C) {
  Attrs A;
  copyResizeAttrs(C, A);
  if (C.hasAttr("antialias"))
    A.set("antialias", C.attrInt("antialias"));
  return {makeResize(C, A, 1, 2, 3)};
}
RIVET_REGISTER_ONNX_OP("Resize", 18, convertResize18);
RIVET_REGISTER_ONNX_OP("Resize", 19, convertResize18);

Attrs upsampleAttrs(NodeContext &C) {
  std::string Mode = C.attrString("mode", "nearest");
  if (Mode == "bilinear")
    Mode = "linear";
  if (Mode != "nearest" && Mode != "linear")
    C.error("mode must be 'nearest' or 'linear', got '{}'", Mode);
  Attrs A;
  A.set("mode", Mode);
  A.set("coordinate_transformation_mode", std::string("asymmetric"));
  A.set("nearest_mode", std::string("floor"));
  return A;
}

// Upsample-7: scales is an attribute.
std::vector<Expr> convertUpsample7(NodeContext &C) {
  Attrs A = upsampleAttrs(C);
  A.set("scales", C.attrFloats("scales"));
  return {ir::callOp("resize", {C.input(0)}, A)};
}
RIVET_REGISTER_ONNX_OP("Upsample", 7, convertUpsample7);

// Upsample-9: scales is an input.
std::vector<Expr> convertUpsample9(NodeContext &C) {
  return {makeResize(C, upsampleAttrs(C), SIZE_MAX, 1, SIZE_MAX)};
}
RIVET_REGISTER_ONNX_OP("Upsample", 9, convertUpsample9);

/// GridSample-16 (4-D; bilinear, nearest, bicubic) and GridSample-20 (N-D;
/// linear, nearest, cubic): Modes are the version's names, the first the
/// default, mapped onto grid_sample's linear, nearest and cubic.
Expr makeGridSample(NodeContext &C, const char *const (&Modes)[3]) {
  std::string Mode = C.attrString("mode", Modes[0]);
  const char *IrModes[] = {"linear", "nearest", "cubic"};
  size_t M = 0;
  while (M < 3 && Mode != Modes[M])
    ++M;
  if (M == 3)
    C.error("mode must be '{}', '{}' or '{}', got '{}'", Modes[0], Modes[1],
            Modes[2], Mode);
  Attrs A;
  A.set("mode", std::string(IrModes[M]));
  A.set("padding_mode", C.attrString("padding_mode", "zeros"));
  A.set("align_corners", C.attrInt("align_corners", 0));
  return ir::callOp("grid_sample", {C.input(0), C.input(1)}, A);
}
std::vector<Expr> convertGridSample16(NodeContext &C) {
  ir::Type T = C.declaredInputType(0);
  const auto *TT = T ? T->as<ir::TensorTypeNode>() : nullptr;
  if (TT && TT->shape && TT->shape->size() != 4)
    C.error("the input must be 4-D before opset 20, got {}", TT->shape->size());
  static const char *const Modes[] = {"bilinear", "nearest", "bicubic"};
  return {makeGridSample(C, Modes)};
}
std::vector<Expr> convertGridSample20(NodeContext &C) {
  static const char *const Modes[] = {"linear", "nearest", "cubic"};
  return {makeGridSample(C, Modes)};
}
RIVET_REGISTER_ONNX_OP("GridSample", 16, convertGridSample16);
RIVET_REGISTER_ONNX_OP("GridSample", 20, convertGridSample20);

std::vector<Expr> convertAffineGrid(NodeContext &C) {
  return {ir::callOp("affine_grid", {C.input(0), C.input(1)},
                     Attrs{{"align_corners", C.attrInt("align_corners", 0)}})};
}
RIVET_REGISTER_ONNX_OP("AffineGrid", 20, convertAffineGrid);

std::vector<Expr> convertCol2Im(NodeContext &C) {
  Attrs A;
  for (const char *N : {"strides", "pads", "dilations"})
    if (C.hasAttr(N))
      A.set(N, C.attrInts(N));
  return {ir::callOp("col2im", {C.input(0), C.input(1), C.input(2)}, A)};
}
RIVET_REGISTER_ONNX_OP("Col2Im", 18, convertCol2Im);

Expr makeRoiAlign(NodeContext &C, const std::string &DefaultCoord) {
  Attrs A;
  A.set("mode", C.attrString("mode", "avg"));
  A.set("output_height", C.attrInt("output_height", 1));
  A.set("output_width", C.attrInt("output_width", 1));
  A.set("sampling_ratio", C.attrInt("sampling_ratio", 0));
  A.set("spatial_scale", C.attrFloat("spatial_scale", 1.0));
  A.set("coordinate_transformation_mode",
        C.attrString("coordinate_transformation_mode", DefaultCoord));
  return ir::callOp("roi_align", {C.input(0), C.input(1), C.input(2)}, A);
}
// RoiAlign-10 has no coordinate_transformation_mode: no half-pixel offset.
std::vector<Expr> convertRoiAlign10(NodeContext &C) {
  return {makeRoiAlign(C, "output_half_pixel")};
}
std::vector<Expr> convertRoiAlign16(NodeContext &C) {
  return {makeRoiAlign(C, "half_pixel")};
}
RIVET_REGISTER_ONNX_OP("RoiAlign", 10, convertRoiAlign10);
RIVET_REGISTER_ONNX_OP("RoiAlign", 16, convertRoiAlign16);

std::vector<Expr> convertNms(NodeContext &C) {
  Attrs A;
  A.set("center_point_box", C.attrInt("center_point_box", 0));
  return {ir::callOp("non_max_suppression",
                     {C.input(0), C.input(1), inputOrAbsent(C, 2, DType::Int64),
                      inputOrAbsent(C, 3, DType::Float32),
                      inputOrAbsent(C, 4, DType::Float32)},
                     A)};
}
RIVET_REGISTER_ONNX_OP("NonMaxSuppression", 10, convertNms);

} // namespace
} // namespace rivet::frontend
