//===- TensorComparison.cc - A compiled value against the reference -------===//
#include "TensorComparison.h"

#include "kernels/StringTable.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace rivet::cli {

Comparison compareTensors(const Tensor &Vm, const Tensor &Ref, double Rtol,
                          double Atol) {
  Comparison C;
  if (!Vm.defined() || !Ref.defined()) {
    C.pass = Vm.defined() == Ref.defined();
    if (!C.pass)
      C.note = Ref.defined() ? "the VM gives none"
                             : "the VM gives a value, "
                               "the reference none";
    return C;
  }
  if (Vm.dtype() != Ref.dtype() || Vm.shape() != Ref.shape()) {
    C.pass = false;
    C.note =
        fmt::format("VM {} vs reference {}", Vm.typeString(), Ref.typeString());
    return C;
  }
  if (isString(Ref.dtype())) { // text agrees exactly or not at all
    for (int64_t I = 0; I < Ref.numel() && C.pass; ++I)
      if (stringElement(Vm, I) != stringElement(Ref, I)) {
        C.pass = false;
        C.note = fmt::format("element {}: VM \"{}\" vs reference \"{}\"", I,
                             stringElement(Vm, I), stringElement(Ref, I));
      }
    return C;
  }
  const double Inf = std::numeric_limits<double>::infinity();
  for (int64_t I = 0; I < Ref.numel(); ++I) {
    double A = Vm.elementAsDouble(I), E = Ref.elementAsDouble(I);
    if (std::isnan(A) || std::isnan(E)) {
      if (std::isnan(A) != std::isnan(E)) {
        C.maxAbs = C.maxRel = Inf;
        C.pass = false;
      }
      continue;
    }
    if (A == E) // also equal infinities
      continue;
    double D = std::fabs(A - E);
    if (std::isnan(D))
      D = Inf;
    C.maxAbs = std::max(C.maxAbs, D);
    C.maxRel = std::max(C.maxRel, E == 0 ? Inf : D / std::fabs(E));
    if (!(D <= Atol + Rtol * std::fabs(E)))
      C.pass = false;
  }
  return C;
}

} // namespace rivet::cli
