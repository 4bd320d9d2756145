//===- CpuSupport.h - What Rivet's own CPU kernels share --------*- C++ -*-===//
//
// Small services of the hand-written CPU kernels (src/kernels/cpu) and the
// oneDNN anchors (src/kernels/dnnl) alike: the host's vector width, a
// kernel's Auto/Off/Always switch, views of a tensor's parts, and running
// parts of a call on the runtime's pool. Nothing here calls oneDNN.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/HostIsa.h"
#include "kernels/Tensor.h"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <string_view>

namespace rivet::cpu {

/// Whether this CPU has AVX-512 (our NCHW16c kernels' vectors).
bool cpuHasAvx512();

/// A kernel's Auto/Off/Always choice from environment variable Var:
/// "off", "always", anything else (or unset) Auto.
template <class Choice> Choice choiceFromEnvironment(const char *Var) {
  const char *E = std::getenv(Var);
  std::string_view V = E ? E : "";
  return V == "off"      ? Choice::Off
         : V == "always" ? Choice::Always
                         : Choice::Auto;
}

/// True when every tensor is float32 and has data.
bool allFloat32(std::initializer_list<const Tensor *> Ts);

/// Elements [Offset, Offset + numel(Sh)) of T's data as a tensor of shape
/// Sh (a view on T's storage: a part of a call split over threads).
Tensor viewOf(const Tensor &T, int64_t Offset, Shape Sh);

/// Runs Part(0) .. Part(Parts - 1) on the runtime's pool (the caller takes
/// part; each part single-threaded); true when every part returned true. A
/// part that throws counts as failed: it may run on a pool thread.
bool runPartsOnPool(int64_t Parts, const std::function<bool(int64_t)> &Part);

} // namespace rivet::cpu
