//===- SliceBounds.h - ONNX Slice start and count on one axis ----*- C++
//-*-===//
//
// The one statement of which elements ONNX Slice (strided_slice) takes from
// one axis: the clamped start and the element count from the extent, begin,
// end and step. The type relation and the reference kernel both use it, so
// the inferred shape and the computed one cannot disagree; the arithmetic is
// safe on the INT64 extremes that ONNX models use for "to the end" (and a
// step of INT64_MIN, whose negation overflows).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>

namespace rivet {

struct SliceBounds {
  int64_t start = 0; // the first index taken (0 when nothing is)
  int64_t count = 0; // how many elements are taken
};

/// NumPy's slice semantics on an axis of extent N: a negative begin or end
/// counts from the end, then both clamp to [0, N] for a positive step and
/// to [-1, N - 1] (begin to [0, N - 1]) for a negative one. Step != 0.
inline SliceBounds sliceBounds(int64_t N, int64_t Begin, int64_t End,
                               int64_t Step) {
  // Far below -N stays negative (clamps below) without computing I + N.
  auto FromEnd = [N](int64_t I) { return I >= 0 ? I : I < -N ? -1 : I + N; };
  int64_t B = FromEnd(Begin), E = FromEnd(End);
  SliceBounds R;
  if (N == 0)
    return R;
  // Unsigned arithmetic: a huge step must not overflow the rounding.
  if (Step > 0) {
    B = std::clamp<int64_t>(B, 0, N);
    E = std::clamp<int64_t>(E, 0, N);
    if (E > B)
      R.count =
          (int64_t)(((uint64_t)(E - B) + (uint64_t)Step - 1) / (uint64_t)Step);
  } else {
    B = std::clamp<int64_t>(B, 0, N - 1);
    E = std::clamp<int64_t>(E, -1, N - 1);
    uint64_t NS = 0 - (uint64_t)Step; // |Step|, also for INT64_MIN
    if (B > E)
      R.count = (int64_t)(((uint64_t)(B - E) + NS - 1) / NS);
  }
  R.start = B;
  return R;
}

} // namespace rivet
