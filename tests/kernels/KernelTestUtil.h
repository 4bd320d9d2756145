//===- KernelTestUtil.h - Helpers for the kernel unit tests -----*- C++ -*-===//
#pragma once

#include "kernels/Kernel.h"

#include <gtest/gtest.h>

#include <random>

namespace rivet::test {

/// A float32 tensor of uniform values in [-1, 1).
inline Tensor randomF32(std::mt19937 &G, const Shape &S) {
  std::uniform_real_distribution<float> D(-1.f, 1.f);
  Tensor T = Tensor::empty(S, DType::Float32);
  float *P = T.data<float>();
  for (int64_t I = 0; I < T.numel(); ++I)
    P[I] = D(G);
  return T;
}

/// Sets a process-wide setting (Get/Set) for the object's lifetime.
template <class T> class SettingScope {
public:
  SettingScope(T (*Get)(), void (*Set)(T), T Value) : Set(Set), Saved(Get()) {
    Set(Value);
  }
  ~SettingScope() { Set(Saved); }
  SettingScope(const SettingScope &) = delete;
  SettingScope &operator=(const SettingScope &) = delete;

private:
  void (*Set)(T);
  T Saved;
};

/// A tensor from values and a shape.
template <typename E> Tensor tensor(std::vector<E> V, Shape S) {
  return Tensor::fromVector<E>(V, S);
}
inline Tensor f32(std::vector<float> V, Shape S) { return tensor(V, S); }
inline Tensor i64(std::vector<int64_t> V, Shape S) { return tensor(V, S); }
inline Tensor b8(std::vector<bool> V, Shape S) {
  Tensor T = Tensor::empty(S, DType::Bool);
  for (size_t I = 0; I < V.size(); ++I)
    T.data<bool>()[I] = V[I];
  return T;
}

/// Runs a registered kernel and returns all outputs.
inline std::vector<Tensor> runAll(const std::string &Op,
                                  const std::vector<Tensor> &In,
                                  const Attrs &A = {}) {
  return invokeKernel(KernelRegistry::global().get(Op), In, A);
}
/// Runs a registered kernel with one output.
inline Tensor run(const std::string &Op, const std::vector<Tensor> &In,
                  const Attrs &A = {}) {
  std::vector<Tensor> R = runAll(Op, In, A);
  EXPECT_EQ(R.size(), 1u);
  return R.at(0);
}
/// The shape function alone on meta tensors.
inline std::vector<TensorMeta> shapeOf(const std::string &Op,
                                       const std::vector<Tensor> &In,
                                       const Attrs &A = {}) {
  return KernelRegistry::global().get(Op).shapeFn(In, A);
}

/// Expects Fn to throw rivet::Error whose message contains Sub.
template <typename F> void expectError(F &&Fn, const std::string &Sub) {
  try {
    Fn();
    ADD_FAILURE() << "expected rivet::Error containing '" << Sub << "'";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find(Sub), std::string::npos)
        << "message: " << E.what() << "\nexpected to contain: " << Sub;
  }
}

/// T from layout From to layout To (layout_transform), e.g. NCHW to NCHW16c.
inline Tensor toBlocked(const Tensor &T, const std::string &From,
                        const std::string &To) {
  return run("layout_transform", {T},
             {{"src_layout", From}, {"dst_layout", To}});
}

/// The largest magnitude in T (the scale of a bound on its rounding error).
inline double maxAbs(const Tensor &T) {
  double M = 0;
  for (double V : T.toDoubleVector())
    M = std::max(M, std::abs(V));
  return M;
}

/// Expects T to be exactly Expected (shape, dtype, all values).
inline void expectTensor(const Tensor &T, const Tensor &Expected,
                         double Rtol = 1e-6, double Atol = 1e-6) {
  EXPECT_EQ(T.typeString(), Expected.typeString());
  EXPECT_TRUE(allClose(T, Expected, Rtol, Atol))
      << "got " << ::testing::PrintToString(T.toDoubleVector()) << " expected "
      << ::testing::PrintToString(Expected.toDoubleVector());
}

} // namespace rivet::test
