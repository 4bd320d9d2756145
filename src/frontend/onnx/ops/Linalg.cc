//===- Linalg.cc - ONNX MatMul, Gemm and the integer matmuls --------------===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

std::vector<Expr> convertMatMul(NodeContext &C) {
  return {ir::callOp("matmul", {C.input(0), C.input(1)})};
}
RIVET_REGISTER_ONNX_OP("MatMul", 1, convertMatMul);

/// Gemm's attributes; `broadcast` (opset < 7) only restricted C's shape, so
/// the broadcasting IR operator covers both settings.
Attrs gemmAttrs(NodeContext &C) {
  Attrs A;
  if (C.hasAttr("alpha"))
    A.set("alpha", C.attrFloat("alpha"));
  if (C.hasAttr("beta"))
    A.set("beta", C.attrFloat("beta"));
  if (C.hasAttr("transA"))
    A.set("trans_a", C.attrInt("transA"));
  if (C.hasAttr("transB"))
    A.set("trans_b", C.attrInt("transB"));
  return A;
}

// Gemm-1..9: C is required.
std::vector<Expr> convertGemmLegacy(NodeContext &C) {
  return {
      ir::callOp("gemm", {C.input(0), C.input(1), C.input(2)}, gemmAttrs(C))};
}
RIVET_REGISTER_ONNX_OP("Gemm", 1, convertGemmLegacy);
RIVET_REGISTER_ONNX_OP("Gemm", 7, convertGemmLegacy);

// Gemm-11: C is optional.
std::vector<Expr> convertGemm(NodeContext &C) {
  std::vector<Expr> Args{C.input(0), C.input(1)};
  if (C.hasInput(2))
    Args.push_back(C.input(2));
  return {ir::callOp("gemm", Args, gemmAttrs(C))};
}
RIVET_REGISTER_ONNX_OP("Gemm", 11, convertGemm);

std::vector<Expr> convertMatMulInteger(NodeContext &C) {
  std::vector<Expr> Args{C.input(0), C.input(1)};
  if (C.hasInput(3) && !C.hasInput(2)) {
    // b's zero point alone: a's is 0 of a's dtype, which the IR needs
    // positionally; a zero scalar of the dtype of a is not known here, so
    // reject clearly.
    C.error("b_zero_point without a_zero_point is not supported");
  }
  for (size_t I = 2; I < 4; ++I)
    if (C.hasInput(I))
      Args.push_back(C.input(I));
  return {ir::callOp("matmul_integer", Args)};
}
RIVET_REGISTER_ONNX_OP("MatMulInteger", 10, convertMatMulInteger);

std::vector<Expr> convertQLinearMatMul(NodeContext &C) {
  std::vector<Expr> Args;
  for (size_t I = 0; I < 8; ++I)
    Args.push_back(C.input(I));
  return {ir::callOp("qlinear_matmul", Args)};
}
RIVET_REGISTER_ONNX_OP("QLinearMatMul", 10, convertQLinearMatMul);

} // namespace
} // namespace rivet::frontend
