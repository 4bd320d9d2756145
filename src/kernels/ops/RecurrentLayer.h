//===- RecurrentLayer.h - What lstm, gru and rnn kernels share --*- C++ -*-===//
//
// The ONNX recurrent layers' attributes, checked extents and activation
// functions, read once here so that the reference kernels (RNN.cc) and the
// library kernels the VM compiler selects (kernels/cpu/FastRecurrent.cc)
// agree on every attribute's meaning and default.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Attrs.h"
#include "kernels/Kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace rivet::kernels {

enum class RnnKind { Lstm, Gru, Rnn };

inline const char *kindOp(RnnKind K) {
  return K == RnnKind::Lstm ? "lstm" : K == RnnKind::Gru ? "gru" : "rnn";
}
inline int64_t numGates(RnnKind K) {
  return K == RnnKind::Lstm ? 4 : K == RnnKind::Gru ? 3 : 1;
}
inline size_t numInputs(RnnKind K) { return K == RnnKind::Lstm ? 8 : 6; }
/// Activation functions per direction: f, g[, h].
inline size_t numActivations(RnnKind K) {
  return K == RnnKind::Lstm ? 3 : K == RnnKind::Gru ? 2 : 1;
}

/// tanh in double precision from one exp: libm's tanh goes through expm1
/// and took a third of a small LSTM's time. Relative error below 1e-11
/// (cancellation in 1 - 2/(e^2x + 1) loses at most ~20 bits for |x| >=
/// 1e-4; below, x - x^3/3 is exact to double precision), far inside the
/// float results these kernels produce.
inline double tanhViaExp(double X) {
  double A = std::fabs(X);
  if (A < 1e-4)
    return X * (1 - X * X / 3);
  return std::copysign(1 - 2 / (std::exp(2 * A) + 1), X);
}

inline double sigmoid(double X) { return 1 / (1 + std::exp(-X)); }

/// One activation function with its alpha and beta.
struct Activation {
  enum Fn {
    Relu,
    Tanh,
    Sigmoid,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    HardSigmoid,
    Elu,
    Softsign,
    Softplus
  } F = Tanh;
  double Alpha = 0, Beta = 0;

  double operator()(double X) const {
    switch (F) {
    case Relu: return std::max(X, 0.0);
    case Tanh: return tanhViaExp(X);
    case Sigmoid: return sigmoid(X);
    case Affine: return Alpha * X + Beta;
    case LeakyRelu: return X >= 0 ? X : Alpha * X;
    case ThresholdedRelu: return X > Alpha ? X : 0;
    case ScaledTanh: return Alpha * tanhViaExp(Beta * X);
    case HardSigmoid: return std::clamp(Alpha * X + Beta, 0.0, 1.0);
    case Elu: return X >= 0 ? X : Alpha * (std::exp(X) - 1);
    case Softsign: return X / (1 + std::fabs(X));
    case Softplus: return std::log1p(std::exp(X));
    }
    return X;
  }
  /// V[j] = f(V[j]) for j < N (Tmp: N doubles of scratch, unused here).
  void apply(double *V, int64_t N, double *Tmp) const {
    for (int64_t J = 0; J < N; ++J)
      V[J] = (*this)(V[J]);
  }
};

/// At most 3 activations per direction, 2 directions.
constexpr size_t MaxActivations = 6;

struct RnnParams {
  int64_t NumDir = 1;
  bool Reverse = false; // forward-only vs reverse-only
  int64_t Hidden = 0;   // 0: from R's shape
  double Clip = 0;      // 0: none
  bool Layout = false;
  bool InputForget = false;
  bool LinearBeforeReset = false;
  bool DefaultActs = true;         // no (or an empty) "activations" attribute
  Activation Acts[MaxActivations]; // per direction: f, g[, h]
};

/// Parses and checks the attributes of a K call.
RnnParams rnnParams(RnnKind K, const Attrs &A);

/// Checked extents of a call.
struct RnnDims {
  int64_t Seq, Batch, Input, Hidden, NumDir, Gates;
};

/// Checks a call's inputs (every shape, dtype and sequence length) and
/// returns its extents; throws naming the operator otherwise.
RnnDims checkRnn(RnnKind K, const std::vector<Tensor> &In, const RnnParams &P);

/// The outputs of a K call: y, y_h and (lstm) y_c.
std::vector<TensorMeta> rnnOutputs(RnnKind K, const std::vector<Tensor> &In,
                                   const Attrs &A);
template <RnnKind K>
std::vector<TensorMeta> rnnShape(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  return rnnOutputs(K, In, A);
}

/// lstm_stack (FuseLstmStack): x, then w, r, b, initial_h and initial_c of
/// each layer, a forward lstm with default activations fed the previous
/// layer's Y. The layer count; throws unless In has that form.
size_t stackLayers(const std::vector<Tensor> &In);
/// Layer L's inputs as those of an lstm call, given its x.
std::vector<Tensor> stackLayerInputs(const std::vector<Tensor> &In, size_t L,
                                     const Tensor &X);
/// A layer's Y [seq, 1, batch, hidden] as the next layer's x [seq, batch,
/// hidden] (a view).
Tensor stackLayerX(const Tensor &Y);
/// The outputs of an lstm_stack call: each layer's y, y_h and y_c.
std::vector<TensorMeta> lstmStackOutputs(const std::vector<Tensor> &In,
                                         const Attrs &A);

/// Whether direction Dir uses the ONNX default activations (sigmoid and
/// tanh; tanh for rnn), listed or not.
bool defaultActivations(RnnKind K, const RnnParams &P, int64_t Dir);

/// Element I of an int32 or int64 tensor (sequence_lens).
int64_t indexElement(const Tensor &T, int64_t I);

} // namespace rivet::kernels
