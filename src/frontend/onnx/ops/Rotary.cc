//===- Rotary.cc - ONNX RotaryEmbedding -----------------------------------===//
//
// RotaryEmbedding-23 maps 1:1 to rotary_embedding, attributes by the same
// names; the optional position_ids become a fourth argument.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

std::vector<Expr> convertRotaryEmbedding(NodeContext &C) {
  Attrs A;
  for (const char *N : {"interleaved", "rotary_embedding_dim", "num_heads"})
    if (C.hasAttr(N))
      A.set(N, C.attrInt(N));
  std::vector<Expr> Args = {C.input(0), C.input(1), C.input(2)};
  if (C.hasInput(3))
    Args.push_back(C.input(3));
  return {ir::callOp("rotary_embedding", std::move(Args), std::move(A))};
}

} // namespace

RIVET_REGISTER_ONNX_OP("RotaryEmbedding", 23, convertRotaryEmbedding);

} // namespace rivet::frontend
