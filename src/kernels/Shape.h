//===- Shape.h - Concrete tensor shapes -------------------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rivet {

/// A concrete (run-time) shape: one non-negative extent per dimension,
/// row-major. Symbolic shapes live in the IR (ir::Dim), not here.
using Shape = std::vector<int64_t>;

/// Product of the extents (1 for a scalar). Throws on overflow or a negative
/// extent.
int64_t numElements(const Shape &S);
/// "(2, 3, 4)"; "()" for a scalar.
std::string shapeToString(const Shape &S);
/// Row-major strides in elements.
std::vector<int64_t> contiguousStrides(const Shape &S);
/// NumPy broadcasting of two shapes; throws rivet::Error naming both shapes.
Shape broadcastShapes(const Shape &A, const Shape &B);
/// Normalizes a possibly negative axis into [0, Rank); throws when out of
/// range.
int64_t normalizeAxis(int64_t Axis, int64_t Rank);

} // namespace rivet
