//===- ListPrimitives.h - List primitives on interpreter values -*- C++ -*-===//
//
// The reference meaning of the operators with OpInfo::listPrimitive
// (list_length, list_at, list_insert, list_erase; ir/ops/List.cc) on the
// interpreter's Lists, chains of Cons cells: each call walks and rebuilds
// what it needs, O(length), as obviously right as the prelude functions it
// replaces. The VM runs the same operators on arrays (vm/ListPrimitives.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"
#include "ir/Value.h"

#include <vector>

namespace rivet::ir {

struct OpInfo;

/// Op (a List primitive) applied to Args; Lists are built with M's prelude
/// constructors. Throws rivet::Error for an operator that is none, a wrong
/// argument or a position out of range.
Value applyListPrimitive(const OpInfo &Op, const std::vector<Value> &Args,
                         const Module &M);

} // namespace rivet::ir
