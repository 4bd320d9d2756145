//===- Attention.cc - ONNX Attention --------------------------------------===//
//
// Attention-23 (and -24, which adds input 6 nonpad_kv_seqlen) maps onto the
// IR's attention: present optional inputs follow q, k, v in order and set a
// has_* attribute; requested optional outputs set with_present / with_qk
// and make the result a tuple. softmax_precision (an ONNX dtype code)
// becomes the dtype name softmax_dtype.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Converter.h"
#include "frontend/onnx/OnnxTensor.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

std::vector<Expr> convertAttention(NodeContext &C) {
  Attrs A;
  if (C.hasAttr("scale"))
    A.set("scale", C.attrFloat("scale"));
  for (const char *Name :
       {"is_causal", "q_num_heads", "kv_num_heads", "qk_matmul_output_mode"})
    if (C.hasAttr(Name))
      A.set(Name, C.attrInt(Name));
  if (C.hasAttr("softcap"))
    A.set("softcap", C.attrFloat("softcap"));
  if (C.hasAttr("softmax_precision"))
    A.set("softmax_dtype",
          std::string(dtypeName(
              dtypeFromOnnx((int32_t)C.attrInt("softmax_precision"),
                            C.where() + ", attribute 'softmax_precision'"))));

  std::vector<Expr> Args = {C.input(0), C.input(1), C.input(2)};
  if (C.hasInput(3)) {
    A.set("has_attn_mask", int64_t(1));
    Args.push_back(C.input(3));
  }
  bool PastKey = C.hasInput(4), PastValue = C.hasInput(5);
  if (PastKey != PastValue)
    C.error("past_key and past_value must be given together");
  if (PastKey) {
    A.set("has_past", int64_t(1));
    Args.push_back(C.input(4));
    Args.push_back(C.input(5));
  }
  if (C.opset() >= 24 && C.hasInput(6)) {
    A.set("has_nonpad_kv_seqlen", int64_t(1));
    Args.push_back(C.input(6));
  }

  bool WithPresent = C.hasOutput(1) || C.hasOutput(2);
  bool WithQk = C.hasOutput(3);
  if (!WithPresent && !WithQk)
    return {ir::callOp("attention", Args, A)};
  if (WithPresent)
    A.set("with_present", int64_t(1));
  if (WithQk)
    A.set("with_qk", int64_t(1));
  size_t Fields = 1 + (WithPresent ? 2 : 0) + (WithQk ? 1 : 0);
  std::vector<Expr> R = C.bindTuple(ir::callOp("attention", Args, A), Fields);
  std::vector<Expr> Outs(4);
  Outs[0] = R[0];
  if (WithPresent) {
    Outs[1] = R[1];
    Outs[2] = R[2];
  }
  if (WithQk)
    Outs[3] = R.back();
  Outs.resize(C.numOutputs());
  return Outs;
}

} // namespace

RIVET_REGISTER_ONNX_OP("Attention", 23, convertAttention);
RIVET_REGISTER_ONNX_OP("Attention", 24, convertAttention);

} // namespace rivet::frontend
