//===- SplitParts.h - The parts of split's equal sections -------*- C++ -*-===//
//
// The one statement of which elements each part of `split` with 'sections'
// takes from its axis: equal parts, or with 'uneven' (ONNX Split-18's
// num_outputs) parts of ceil(extent / sections) elements whose last ones are
// smaller or empty. The type relation and the reference kernel both use it,
// so they cannot disagree.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace rivet {

/// [begin, end) of each of the Sections (> 0) parts of an axis of extent
/// Extent; nullopt when the parts must be equal (!Uneven) and Sections does
/// not divide Extent.
inline std::optional<std::vector<std::pair<int64_t, int64_t>>>
sectionParts(int64_t Extent, int64_t Sections, bool Uneven) {
  if (!Uneven && Extent % Sections != 0)
    return std::nullopt;
  int64_t Chunk = Extent / Sections + (Extent % Sections != 0 ? 1 : 0);
  std::vector<std::pair<int64_t, int64_t>> Parts;
  for (int64_t I = 0; I < Sections; ++I)
    Parts.emplace_back(std::min(I * Chunk, Extent),
                       std::min((I + 1) * Chunk, Extent));
  return Parts;
}

} // namespace rivet
