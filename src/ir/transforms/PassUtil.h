//===- PassUtil.h - Helpers shared by the rewriting passes ------*- C++ -*-===//
//
// BindingMutator walks let chains binding by binding (iteratively, like
// ExprMutator), lets a pass replace a bound variable by another expression
// everywhere and drop its binding, and leaves primitive (fused) functions
// alone. Also small predicates on operators and types that several passes
// ask.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Visitor.h"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace rivet::ir {

/// An ExprMutator for passes: primitive functions are returned unchanged and
/// each let binding goes through visitBinding after its value is rewritten.
class BindingMutator : public ExprMutator {
public:
  Expr visitFunction(const FunctionNode &N, const Expr &Self) override;
  Expr visitLet(const LetNode &N, const Expr &Self) override;

protected:
  /// What becomes of one binding `let V = Value` (Value already rewritten).
  struct Binding {
    /// The value to bind, or (Inline) the expression that replaces V.
    Expr value;
    /// True: V is replaced by value at every use and the binding dropped.
    bool inlined = false;
  };
  /// Default: an atom (variable, constant, global) replaces the variable;
  /// anything else stays bound.
  virtual Binding visitBinding(const Var &V, const Expr &Value);
};

/// A BindingMutator that remembers each let's value (as rewritten), so that
/// a rewrite can look through a variable to the call that computed it.
class DefinitionMutator : public BindingMutator {
protected:
  Binding visitBinding(const Var &V, const Expr &Value) override;
  /// E itself, or the value the let-bound variable E was bound to (null
  /// for a variable bound elsewhere: a parameter, a pattern).
  Expr definition(const Expr &E) const;
  /// The call of operator Op that E is or is bound to, else null.
  const CallNode *producer(const Expr &E, std::string_view Op) const;

private:
  std::unordered_map<const VarNode *, Expr> Defs;
};

/// True for an expression that costs nothing to repeat: a variable, a
/// constant, a global or an operator.
bool isAtom(const Expr &E);

using TensorTypeRef = std::shared_ptr<const TensorTypeNode>;
/// The tensor type of E (its checkedType, a variable's annotation or a
/// constant's value), or null when E is not known to be a tensor.
TensorTypeRef tensorTypeOf(const Expr &E);

/// The extents of a tensor type whose rank and dimensions are all
/// constants; false otherwise.
bool staticShapeOf(const TensorTypeRef &T, std::vector<int64_t> &Shape);

/// True when the shapes of A and B are known to be the same: equal ranks and
/// dimensions that are equal constants or the same symbol.
bool sameKnownShape(const TensorTypeRef &A, const TensorTypeRef &B);

/// Whether the broadcast of a call's arguments (two or more) has argument
/// I's shape: every other argument has no more axes, and each of its extents is
/// 1 or provably argument I's (the same constant or symbol). Holds over unknown
/// extents where sameKnownShape cannot (a bias over a [?, ?, 192] product).
bool broadcastsInto(const std::vector<Expr> &Args, size_t I);

/// The operator name of a call of an operator, or "" for anything else.
const std::string &calledOpName(const Expr &E);

} // namespace rivet::ir
