//===- LstmStack.h - The operands of lstm_stack ------------------*- C++
//-*-===//
//
// lstm_stack (FuseLstmStack) takes x, then five operands per layer; each is
// an input of the layer's forward lstm call. Its relation, its pass and its
// kernels read the layout here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

namespace rivet::lstm_stack {

/// A layer's operands, in order, after x.
enum Operand : size_t { W, R, B, InitialH, InitialC, OperandsPerLayer };

/// The lstm input each operand is (lstm: x, w, r, b, sequence_lens,
/// initial_h, initial_c, p; lstm_stack has no sequence lengths or
/// peepholes).
inline constexpr size_t kLstmInput[OperandsPerLayer] = {1, 2, 3, 5, 6};

/// A layer's results, in order: Y [seq, 1, batch, hidden], Y_h and Y_c.
inline constexpr size_t kOutputsPerLayer = 3;

/// The argument index of operand Op of layer Layer.
constexpr size_t argument(size_t Layer, Operand Op) {
  return 1 + OperandsPerLayer * Layer + Op;
}

/// The layer count of a call with Args arguments, or 0 when Args has not
/// that form.
constexpr size_t layers(size_t Args) {
  return Args > OperandsPerLayer && (Args - 1) % OperandsPerLayer == 0
             ? (Args - 1) / OperandsPerLayer
             : 0;
}

} // namespace rivet::lstm_stack
