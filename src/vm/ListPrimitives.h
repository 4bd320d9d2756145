//===- ListPrimitives.h - The List primitives in the VM ---------*- C++ -*-===//
//
// The operators with OpInfo::listPrimitive (list_length, list_at,
// list_insert, list_erase; ir/ops/List.cc) as the VM runs them, from kernel
// entries of kind ListPrimitive: on packed Lists (vm/PackedList.h), where a
// length, an element, an append and dropping either end cost O(1). A List
// of Cons cells is packed first. The reference interpreter gives them their
// meaning (ir/ListPrimitives.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "vm/Object.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rivet::vm {

/// The operands of one call: registers R[Ops[0]], ..., R[Ops[N - 1]].
struct ListPrimitiveArgs {
  const ObjectRef *R;
  const uint32_t *Ops;
  size_t N;
  const ObjectRef &operator[](size_t I) const { return R[Ops[I]]; }
};

/// A List primitive: its result from its operands; throws rivet::Error for a
/// wrong operand or a position out of range.
using ListPrimitive = ObjectRef (*)(const ListPrimitiveArgs &Args);

/// The List primitive named Op, or null. The operands it takes are in
/// kernels/ListPrimitiveSpec.h (the verifier checks each call's count).
ListPrimitive findListPrimitive(std::string_view Op);

} // namespace rivet::vm
