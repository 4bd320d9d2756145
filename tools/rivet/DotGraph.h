//===- DotGraph.h - A module as a Graphviz picture --------------*- C++ -*-===//
//
// rivet dump --dot: the dataflow of @main as a Graphviz digraph. Nodes are
// operator calls (op, origin, result type), @main's inputs and outputs and
// the tensor constants; edges follow values through let-bound variables.
// Fused groups (Primitive functions) are clusters, and so is control flow:
// an If's branches, a match's clauses, and the local functions (an ONNX
// Loop or Scan body is a let-bound tail-recursive one) and global functions
// @main calls, each call pointing at its function's cluster.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"

#include <string>

namespace rivet::cli {

/// The Graphviz (dot) text of M's @main and the non-prelude functions it
/// reaches; Title labels the graph.
std::string moduleToDot(const ir::Module &M, const std::string &Title);

} // namespace rivet::cli
