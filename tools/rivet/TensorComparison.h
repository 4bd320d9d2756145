//===- TensorComparison.h - A VM value against the reference ----*- C++ -*-===//
//
// How rivet check compares a tensor of the VM with the reference
// interpreter's: |vm - ref| <= atol + rtol * |ref| element by element, NaN
// only against NaN, strings exactly; the largest absolute and relative
// errors for the report.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"

#include <string>

namespace rivet::cli {

struct Comparison {
  double maxAbs = 0, maxRel = 0;
  bool pass = true;
  std::string note; // a mismatch that is not numeric
};

Comparison compareTensors(const Tensor &Vm, const Tensor &Ref, double Rtol,
                          double Atol);

} // namespace rivet::cli
