//===- ListPrimitiveSpec.h - What the List primitives take ------*- C++ -*-===//
//
// The one statement of what the List primitives (list_length, list_at,
// list_insert, list_erase; ir/ops/List.cc) take: their operand counts, and
// the positions they accept, an integer tensor of one element, negative
// counting from the end as in ONNX's SequenceAt/Insert/Erase. The type
// relations, the reference interpreter (ir/ListPrimitives.h) and the VM
// (vm/ListPrimitives.h) all read it, so they cannot disagree on which calls
// and positions exist.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Error.h"
#include "kernels/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rivet {

/// A List primitive's name and the numbers of operands it takes: the List,
/// then its other operands; the last one (a position) may be left out when
/// minOperands < maxOperands.
struct ListPrimitiveSpec {
  std::string_view name;
  size_t minOperands, maxOperands;
};

inline constexpr ListPrimitiveSpec kListPrimitives[] = {
    {"list_length", 1, 1}, // (l)
    {"list_at", 2, 2},     // (l, position)
    {"list_insert", 2, 3}, // (l, tensor, position?)
    {"list_erase", 1, 2},  // (l, position?)
};

/// The spec of List primitive Op; null when Op is none.
inline const ListPrimitiveSpec *findListPrimitiveSpec(std::string_view Op) {
  for (const ListPrimitiveSpec &S : kListPrimitives)
    if (S.name == Op)
      return &S;
  return nullptr;
}

/// Throws rivet::Error unless List primitive Op takes N operands.
inline void checkListOperands(std::string_view Op, size_t N) {
  const ListPrimitiveSpec *S = findListPrimitiveSpec(Op);
  if (!S)
    fail("'{}' is not a List primitive", Op);
  if (N < S->minOperands || N > S->maxOperands) {
    if (S->minOperands == S->maxOperands)
      fail("{}: expected {} operand{}, got {}", Op, S->minOperands,
           S->minOperands == 1 ? "" : "s", N);
    fail("{}: expected {} or {} operands, got {}", Op, S->minOperands,
         S->maxOperands, N);
  }
}

/// The index in [0, Length) that position Pos of operator Op names in a List
/// of Length elements, or in [0, Length] where AtEnd allows the position
/// just past the last element (list_insert). Throws rivet::Error for a
/// position out of that range or a Pos that is not one integer.
inline size_t listPosition(std::string_view Op, const Tensor &Pos,
                           size_t Length, bool AtEnd) {
  if (!Pos.defined() || !Pos.hasData() || !isInteger(Pos.dtype()) ||
      Pos.numel() != 1)
    fail("{}: the position must be one integer, got {}", Op,
         Pos.defined() ? Pos.typeString() : std::string("an undefined tensor"));
  int64_t P = Pos.elementAsInt(0);
  int64_t N = (int64_t)Length;
  int64_t Index = P < 0 ? P + N : P;
  if (Index < 0 || Index > N || (Index == N && !AtEnd))
    fail("{}: position {} is out of range for a List of {} element{} "
         "(allowed: {} to {})",
         Op, P, N, N == 1 ? "" : "s", -N, AtEnd ? N : N - 1);
  return (size_t)Index;
}

} // namespace rivet
