//===- DnnlConfig.h - Turning the oneDNN anchors on and off -----*- C++ -*-===//
//
// The oneDNN anchors are on by default; RIVET_DISABLE_DNNL=1 in the
// environment or setDnnlEnabled(false) sends every conv/matmul to the
// reference kernels (tests compare the two paths this way).
//
// Only a switch, no oneDNN code: it lives in rivet_kernels because the
// compiler's passes (ir/transforms/LayoutPreference.cc) read it as well as
// the VM compiler and the anchors in kernels/dnnl, and rivet_ir must not
// link the runtime library that holds oneDNN.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace rivet {

/// True when conv/matmul/dense/gemm may run on oneDNN.
bool dnnlEnabled();
/// Process-wide switch; overrides RIVET_DISABLE_DNNL.
void setDnnlEnabled(bool On);

/// Turns oneDNN off for the lifetime of the object, then restores the
/// previous setting.
class DnnlDisabledScope {
public:
  DnnlDisabledScope() : Saved(dnnlEnabled()) { setDnnlEnabled(false); }
  ~DnnlDisabledScope() { setDnnlEnabled(Saved); }
  DnnlDisabledScope(const DnnlDisabledScope &) = delete;
  DnnlDisabledScope &operator=(const DnnlDisabledScope &) = delete;

private:
  bool Saved;
};

} // namespace rivet
