//===- StructuralEqual.h - Equality up to renaming, and hashing -*- C++ -*-===//
//
// Two expressions are structurally equal when they have the same shape, the
// same operators, attributes, constants (bitwise; all NaNs are equal) and
// types, and their bound variables and type variables correspond one to one
// (alpha-equivalence). Name hints and checkedType are ignored. A free
// variable equals only itself, unless MapFreeVars asks to pair free
// variables up on first use. structuralHash is consistent with equality.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Expr.h"
#include "ir/Module.h"

#include <cstddef>

namespace rivet::ir {

/// Alpha-equivalence of expressions (see above).
bool structuralEqual(const Expr &A, const Expr &B, bool MapFreeVars = false);
/// Equality of types; type variables bound by function types correspond by
/// position, free type variables are compared by name.
bool structuralEqual(const Type &A, const Type &B);
/// Same global functions and type definitions (by name, in any order), each
/// structurally equal.
bool structuralEqual(const Module &A, const Module &B);
/// Equality of ADT definitions (type parameters correspond by position).
bool structuralEqual(const TypeData &A, const TypeData &B);

/// A hash with structuralEqual(A, B) => structuralHash(A) == structuralHash(B).
size_t structuralHash(const Expr &E);
size_t structuralHash(const Type &T);

/// Explains the first difference found (empty when equal); for test output.
std::string structuralDiff(const Module &A, const Module &B);

} // namespace rivet::ir
