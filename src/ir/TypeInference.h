//===- TypeInference.h - Type inference and checking ------------*- C++ -*-===//
//
// Hindley-Milner style inference with IncompleteType holes, extended with
// tensor dimensions:
//  - Global functions are typed by their declared signature (parameters must
//    be annotated). A missing return type is inferred from the body; globals
//    without one that call each other (or themselves) are inferred together,
//    their recursive calls monomorphic. When only recursive calls determine
//    it, the error "cannot infer the return type of @f" asks for it.
//    Generic globals and generic constructors are instantiated freshly at
//    each use.
//  - Local functions (closures, let-bound recursive functions) are inferred;
//    their parameters may be unannotated.
//  - A hole that meets two tensor types of the same dtype and rank is
//    generalized: differing dimensions become `?` (loop-carried values whose
//    extent changes per iteration); a dtype or rank mismatch is an error.
//    Inference iterates over a function until no hole changes.
//  - At a call boundary (and for annotations) an argument matches a declared
//    parameter when dtypes and ranks agree and each dimension is compatible:
//    `?` and symbols match anything, constants must be equal. Symbols of a
//    global's signature bound by the arguments are substituted into its
//    return type (an unbound or inconsistently bound symbol becomes `?`).
//  - `if` conditions are rank-0 tensors of any dtype (bool, or numeric meaning
//    "nonzero"), as in ir/Expr.h.
//  - Defaults: a node whose whole type stays unconstrained is an error naming
//    it; a hole nested inside an otherwise known type (the element type of a
//    never-filled `Nil`, say) defaults to the empty tuple `()`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"

namespace rivet::ir {

/// Infers and checks every global function of M and fills the checkedType
/// of every node; throws rivet::Error ("type error in @f: ...") on an error.
void inferTypes(Module &M);

/// Infers the type of a closed expression that may use M's globals and
/// ADTs; fills checkedType of its nodes and returns the solved type.
Type inferType(const Expr &E, const Module &M);

} // namespace rivet::ir
