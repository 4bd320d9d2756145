//===- RNN.cc - ONNX LSTM, GRU and RNN ------------------------------------===//
//
// Each layer is one IR op with a tuple result (Y, Y_h[, Y_c]); missing
// optional inputs are passed as empty constants. Opset 14 added `layout`,
// which maps 1:1.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

Expr inputOrAbsent(NodeContext &C, size_t I, DType T) {
  return C.hasInput(I) ? C.input(I) : ir::constant(Tensor::zeros({0}, T));
}

std::vector<Expr> convertRecurrent(NodeContext &C, const char *Op, size_t NumIn,
                                   size_t NumOut, const char *Extra) {
  Attrs A;
  if (C.hasAttr("hidden_size"))
    A.set("hidden_size", C.attrInt("hidden_size"));
  A.set("direction", C.attrString("direction", "forward"));
  if (C.hasAttr("activations"))
    A.set("activations", C.attrStrings("activations"));
  if (C.hasAttr("activation_alpha"))
    A.set("activation_alpha", C.attrFloats("activation_alpha"));
  if (C.hasAttr("activation_beta"))
    A.set("activation_beta", C.attrFloats("activation_beta"));
  if (C.hasAttr("clip"))
    A.set("clip", C.attrFloat("clip"));
  A.set("layout", C.attrInt("layout", 0));
  if (Extra && C.hasAttr(Extra))
    A.set(Extra, C.attrInt(Extra));
  if (C.hasAttr("output_sequence") && C.attrInt("output_sequence") != 0)
    C.error("attribute 'output_sequence' is not supported");
  std::vector<Expr> Args = {C.input(0), C.input(1), C.input(2)};
  for (size_t I = 3; I < NumIn; ++I)
    Args.push_back(inputOrAbsent(C, I, I == 4 ? DType::Int32 : DType::Float32));
  std::vector<Expr> Outs = C.bindTuple(ir::callOp(Op, Args, A), NumOut);
  Outs.resize(std::min(NumOut, C.numOutputs()));
  return Outs;
}

std::vector<Expr> convertLstm(NodeContext &C) {
  return convertRecurrent(C, "lstm", 8, 3, "input_forget");
}
std::vector<Expr> convertGru(NodeContext &C) {
  return convertRecurrent(C, "gru", 6, 2, "linear_before_reset");
}
std::vector<Expr> convertRnn(NodeContext &C) {
  return convertRecurrent(C, "rnn", 6, 2, nullptr);
}

} // namespace

RIVET_REGISTER_ONNX_OP("LSTM", 7, convertLstm);
RIVET_REGISTER_ONNX_OP("LSTM", 14, convertLstm);
RIVET_REGISTER_ONNX_OP("GRU", 7, convertGru);
RIVET_REGISTER_ONNX_OP("GRU", 14, convertGru);
RIVET_REGISTER_ONNX_OP("RNN", 7, convertRnn);
RIVET_REGISTER_ONNX_OP("RNN", 14, convertRnn);

} // namespace rivet::frontend
