//===- Origin.h - Where an operator call comes from -------------*- C++ -*-===//
//
// Every call keeps the origin of the source it was made from (the ONNX
// node's name, or its first output's when unnamed; a .rvir call's line and
// column) through import, passes and fusion, so that rivet check
// --localize can name the node where a compiled model first diverges.
// call() gives a new call the current origin: the innermost OriginScope's.
// The importer opens one per node; ExprMutator one per call it rewrites and
// per let binding it passes to a rewrite, so a pass's replacement calls
// carry the origin of what they replace without saying so.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Expr.h"

#include <string>
#include <unordered_set>
#include <vector>

namespace rivet::ir {

/// The origin call() gives new calls on this thread ("" outside a scope).
const std::string &currentOrigin();

/// Makes Origin current for its lifetime (an empty one leaves the current
/// origin as it is: a call without origin changes nothing).
class OriginScope {
public:
  explicit OriginScope(const std::string &Origin);
  /// No origin for its lifetime: calls that are no node's value (the
  /// counters and conditions of an imported Loop) must not take the
  /// origin of the node that made them.
  struct None {};
  explicit OriginScope(None);
  /// Exactly C's origin (none when it has none): what rewriting C makes
  /// comes from where C came from.
  explicit OriginScope(const CallNode &C);
  ~OriginScope();
  OriginScope(const OriginScope &) = delete;
  OriginScope &operator=(const OriginScope &) = delete;

private:
  std::string Saved;
  bool Active;
};

/// The origin of E when it is a call, else "".
const std::string &originOf(const Expr &E);

/// The origins call C computes: its covers, else its own origin (none when
/// it has none).
std::vector<std::string> originsComputedBy(const CallNode &C);
/// The origins of the operator calls in E (a fused group's body), in
/// order, each call's originsComputedBy, each once.
std::vector<std::string> originsIn(const Expr &E);
/// Call (a CallNode) standing for the calls of Covers: a copy with them.
Expr withCovers(const Expr &Call, std::vector<std::string> Covers);

/// The calls of E whose result is their origin's value: those with an
/// origin that no call reading their result shares. An ONNX node imported
/// as several calls has one, its last; so has a node a pass rewrote into
/// several. The reference interpreter and the compiled code are compared
/// at these (the n-th run of one against the n-th run of the other).
std::unordered_set<const CallNode *> originValueCalls(const Expr &E);

} // namespace rivet::ir
