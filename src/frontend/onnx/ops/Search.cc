//===- Search.cc - ONNX TopK and Unique
//------------------------------------===//
//
// TopK: k is an attribute before opset 10 and an input after (a constant
// input becomes topk's attribute, a computed one dyn_topk); 'largest' and
// 'sorted' arrive in opset 11. Both return tuples that are unpacked here.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"
#include "ir/ops/StaticForms.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

Attrs topkAttrs(NodeContext &C) {
  return Attrs{{"axis", C.attrInt("axis", -1)},
               {"largest", C.attrInt("largest", 1)},
               {"sorted", C.attrInt("sorted", 1)}};
}

std::vector<Expr> convertTopK1(NodeContext &C) {
  Attrs A = topkAttrs(C);
  A.set("k", C.attrInt("k"));
  return C.bindTuple(ir::callOp("topk", {C.input(0)}, std::move(A)), 2);
}

std::vector<Expr> convertTopK10(NodeContext &C) {
  Attrs A = topkAttrs(C);
  if (std::optional<Tensor> K = C.constantInput(1))
    if (K->numel() != 1 || !isInteger(K->dtype()))
      C.error("input 'K' must hold one integer, got {}", K->typeString());
  // A constant K becomes topk's attribute (ir/ops/StaticForms.h).
  Expr Dyn = ir::callOp("dyn_topk", {C.input(0), C.input(1)}, std::move(A));
  Expr S = ir::staticFormOf(Dyn);
  return C.bindTuple(S ? S : Dyn, 2);
}

std::vector<Expr> convertUnique(NodeContext &C) {
  Attrs A{{"sorted", C.attrInt("sorted", 1)}};
  if (C.hasAttr("axis"))
    A.set("axis", C.attrInt("axis"));
  return C.bindTuple(ir::callOp("unique", {C.input(0)}, std::move(A)), 4);
}

} // namespace

RIVET_REGISTER_ONNX_OP("TopK", 1, convertTopK1);
RIVET_REGISTER_ONNX_OP("TopK", 10, convertTopK10);
RIVET_REGISTER_ONNX_OP("Unique", 11, convertUnique);

} // namespace rivet::frontend
