//===- LabelEncoder.h - What a label_encoder call maps ----------*- C++ -*-===//
//
// label_encoder's attributes are checked in one place, here, for both the
// type relation (src/ir/ops/LabelEncoder.cc) and the kernel
// (src/kernels/ops/LabelEncoder.cc).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Attrs.h"

namespace rivet {

/// The dtype label_encoder gives x of dtype X under attributes A. Throws
/// rivet::Error naming the operator unless A has exactly one keys_* and one
/// values_* list, of equal length, x's dtype is of the keys' kind (strings,
/// integers, floats) and the result dtype holds values of the values' kind.
DType labelEncoderResultDType(const Attrs &A, DType X);

} // namespace rivet
