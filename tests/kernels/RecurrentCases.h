//===- RecurrentCases.h - Random lstm, gru and rnn calls --------*- C++ -*-===//
//
// One drawn call of an ONNX recurrent layer (every attribute, optional
// input and extent varies), how to run it through a registered kernel and
// how to describe it: shared by the reference kernels' exact test and the
// library kernels' differential test.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "KernelTestUtil.h"

#include <random>
#include <string>
#include <vector>

namespace rivet::test {

/// One randomly drawn call.
struct Case {
  std::string Kind; // lstm, gru, rnn
  DType Type = DType::Float32;
  int64_t Seq = 1, Batch = 1, Input = 1, Hidden = 1;
  std::string Direction = "forward";
  bool Layout = false, InputForget = false, LinearBeforeReset = false;
  double Clip = 0;
  std::vector<std::string> Acts; // empty: defaults
  std::vector<double> Alphas, Betas;
  // Inputs as double (exactly representable in Type); empty when absent.
  std::vector<double> X, W, R, B, H0, C0, P;
  std::vector<int64_t> Lens;

  int64_t gates() const { return Kind == "lstm" ? 4 : Kind == "gru" ? 3 : 1; }
  int64_t numDir() const { return Direction == "bidirectional" ? 2 : 1; }
  size_t actsPerDir() const {
    return Kind == "lstm" ? 3 : Kind == "gru" ? 2 : 1;
  }
};

/// The largest extents randomCase draws.
struct CaseLimits {
  int64_t Seq = 7, Batch = 3, Input = 11, Hidden = 21;
};

/// A random case; Rng picks it.
inline Case randomCase(std::mt19937 &Rng, const CaseLimits &Max = {}) {
  auto Int = [&](int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(Rng);
  };
  auto Flip = [&] { return Int(0, 1) == 1; };
  Case C;
  C.Kind = std::vector<std::string>{"lstm", "gru", "rnn"}[(size_t)Int(0, 2)];
  C.Type = Int(0, 3) == 0 ? DType::Float64 : DType::Float32;
  C.Seq = Int(0, Max.Seq), C.Batch = Int(1, Max.Batch),
  C.Input = Int(1, Max.Input);
  // Up to 21 hidden units: gate rows from 1 to 84, every padding remainder.
  C.Hidden = Int(1, Max.Hidden);
  C.Direction = std::vector<std::string>{"forward", "reverse",
                                         "bidirectional"}[(size_t)Int(0, 2)];
  C.Layout = Flip();
  C.InputForget = C.Kind == "lstm" && Int(0, 3) == 0;
  C.LinearBeforeReset = C.Kind == "gru" && Flip();
  C.Clip = Int(0, 2) == 0 ? 0.75 : 0;
  if (Int(0, 2) == 0) {
    static const std::vector<std::string> Names = {
        "Relu",       "Tanh",        "Sigmoid",
        "Affine",     "LeakyRelu",   "ThresholdedRelu",
        "ScaledTanh", "HardSigmoid", "Elu",
        "Softsign",   "Softplus"};
    size_t Count = C.actsPerDir() * (size_t)(Flip() ? C.numDir() : 1);
    for (size_t J = 0; J < Count; ++J)
      C.Acts.push_back(Names[(size_t)Int(0, (int64_t)Names.size() - 1)]);
    C.Alphas = {0.5, 1.5, 0.25, 0.75, 2.0, 0.1};
    C.Betas = {0.3, -0.2, 0.6, 0.1};
  }
  // Values exactly representable in float32 with mixed magnitudes, so that
  // a different summation order rounds differently.
  std::uniform_real_distribution<float> U(-1, 1);
  auto Values = [&](int64_t Count, float Scale) {
    std::vector<double> V((size_t)Count);
    for (double &E : V)
      E = (double)(U(Rng) * Scale * (Int(0, 4) == 0 ? 8.0f : 1.0f));
    return V;
  };
  int64_t G = C.gates(), ND = C.numDir();
  C.X = Values(C.Seq * C.Batch * C.Input, 1.5f);
  C.W = Values(ND * G * C.Hidden * C.Input, 0.6f);
  C.R = Values(ND * G * C.Hidden * C.Hidden, 0.6f);
  if (Flip())
    C.B = Values(ND * 2 * G * C.Hidden, 0.5f);
  if (Flip())
    C.H0 = Values(ND * C.Batch * C.Hidden, 0.8f);
  if (C.Kind == "lstm" && Flip())
    C.C0 = Values(ND * C.Batch * C.Hidden, 0.8f);
  if (C.Kind == "lstm" && Flip())
    C.P = Values(ND * 3 * C.Hidden, 0.5f);
  if (Flip())
    for (int64_t Bi = 0; Bi < C.Batch; ++Bi)
      C.Lens.push_back(Int(0, C.Seq));
  return C;
}

inline Tensor toTensor(const std::vector<double> &V, Shape S, DType T) {
  return Tensor::fromVector<double>(V, S).cast(T);
}
/// An optional input: zero elements when absent.
inline Tensor optionalTensor(const std::vector<double> &V, Shape S, DType T) {
  return V.empty() ? Tensor::zeros({0}, T) : toTensor(V, S, T);
}

/// C's inputs as tensors, in the operator's order.
inline std::vector<Tensor> caseInputs(const Case &C) {
  int64_t S = C.Seq, N = C.Batch, I = C.Input, H = C.Hidden, G = C.gates(),
          ND = C.numDir();
  Shape HShape = C.Layout ? Shape{N, ND, H} : Shape{ND, N, H};
  std::vector<Tensor> In = {
      toTensor(C.X, C.Layout ? Shape{N, S, I} : Shape{S, N, I}, C.Type),
      toTensor(C.W, {ND, G * H, I}, C.Type),
      toTensor(C.R, {ND, G * H, H}, C.Type),
      optionalTensor(C.B, {ND, 2 * G * H}, C.Type),
      C.Lens.empty() ? Tensor::zeros({0}, DType::Int32)
                     : Tensor::fromVector<int64_t>(C.Lens, {N}),
      optionalTensor(C.H0, HShape, C.Type)};
  if (C.Kind == "lstm") {
    In.push_back(optionalTensor(C.C0, HShape, C.Type));
    In.push_back(optionalTensor(C.P, {ND, 3 * H}, C.Type));
  }
  return In;
}

/// C's attributes.
inline Attrs caseAttrs(const Case &C) {
  Attrs A{{"hidden_size", C.Hidden},
          {"direction", C.Direction},
          {"layout", int64_t(C.Layout)}};
  if (C.Clip > 0)
    A.set("clip", C.Clip);
  if (C.InputForget)
    A.set("input_forget", int64_t(1));
  if (C.LinearBeforeReset)
    A.set("linear_before_reset", int64_t(1));
  if (!C.Acts.empty()) {
    A.set("activations", C.Acts);
    A.set("activation_alpha", C.Alphas);
    A.set("activation_beta", C.Betas);
  }
  return A;
}

/// Runs C through the kernel registered as Op (default: C.Kind).
inline std::vector<Tensor> kernelRun(const Case &C, std::string Op = "") {
  return runAll(Op.empty() ? C.Kind : Op, caseInputs(C), caseAttrs(C));
}

inline std::string describe(const Case &C) {
  std::string Acts;
  for (const std::string &N : C.Acts)
    Acts += N + " ";
  return C.Kind + " " + std::string(dtypeName(C.Type)) + " seq " +
         std::to_string(C.Seq) + " batch " + std::to_string(C.Batch) +
         " input " + std::to_string(C.Input) + " hidden " +
         std::to_string(C.Hidden) + " " + C.Direction + " layout " +
         std::to_string(C.Layout) + (C.B.empty() ? "" : " bias") +
         (C.P.empty() ? "" : " peepholes") + (C.H0.empty() ? "" : " h0") +
         (C.C0.empty() ? "" : " c0") + (C.Lens.empty() ? "" : " lens") +
         (C.Clip > 0 ? " clip" : "") + (C.InputForget ? " input_forget" : "") +
         (C.LinearBeforeReset ? " linear_before_reset" : "") +
         (Acts.empty() ? "" : " activations " + Acts);
}

} // namespace rivet::test
