//===- Visitor.h - Traversal and rewriting of expressions -------*- C++ -*-===//
//
// ExprVisitor walks an expression (patterns included), visiting every node
// once even when the expression is a DAG. ExprMutator rebuilds an expression
// bottom-up and shares every subtree that did not change. Both walk chains of
// Let nodes iteratively, so a program of 100,000 nested lets does not overflow
// the stack; other nesting is recursive.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Expr.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace rivet::ir {

/// Read-only traversal. visit() dispatches once per node to visitXxx, whose
/// default implementations recurse into the children.
class ExprVisitor {
public:
  virtual ~ExprVisitor() = default;

  /// Visits E unless it was already visited (memoized by node).
  virtual void visit(const Expr &E);
  /// Visits a match pattern and the variables it binds.
  virtual void visitPattern(const Pattern &P);

  virtual void visitVar(const VarNode &N);
  virtual void visitGlobalVar(const GlobalVarNode &N);
  virtual void visitConstant(const ConstantNode &N);
  virtual void visitOp(const OpNode &N);
  virtual void visitCall(const CallNode &N);
  virtual void visitFunction(const FunctionNode &N);
  /// Default: walks the whole chain of directly nested lets iteratively,
  /// calling visitLetBinding for each link, then visits the final body.
  /// The inner links of the chain are marked visited without passing
  /// through visit()/visitLet, so per-let work belongs in visitLetBinding.
  virtual void visitLet(const LetNode &N);
  virtual void visitIf(const IfNode &N);
  virtual void visitTuple(const TupleNode &N);
  virtual void visitTupleGetItem(const TupleGetItemNode &N);
  virtual void visitConstructor(const ConstructorNode &N);
  virtual void visitMatch(const MatchNode &N);

  /// One link of a let chain: default visits the bound var, then the value.
  virtual void visitLetBinding(const LetNode &N);

protected:
  /// Dispatches on the kind without the memo check.
  void dispatch(const Expr &E);
  std::unordered_set<const ExprNode *> Visited;
};

/// Rebuilding traversal. mutate() returns the rewritten expression, memoized
/// by node; a node is rebuilt only when one of its children changed (the
/// original shared_ptr, with its checkedType, is returned otherwise).
class ExprMutator {
public:
  virtual ~ExprMutator() = default;

  /// The rewritten E (memoized).
  virtual Expr mutate(const Expr &E);
  /// Rewrites the variables a pattern binds (via mutate) and its children.
  virtual Pattern mutatePattern(const Pattern &P);

  // Self is the node being rewritten, as the shared pointer.
  virtual Expr visitVar(const VarNode &N, const Expr &Self);
  virtual Expr visitGlobalVar(const GlobalVarNode &N, const Expr &Self);
  virtual Expr visitConstant(const ConstantNode &N, const Expr &Self);
  virtual Expr visitOp(const OpNode &N, const Expr &Self);
  virtual Expr visitCall(const CallNode &N, const Expr &Self);
  virtual Expr visitFunction(const FunctionNode &N, const Expr &Self);
  /// Default: rewrites the whole chain of directly nested lets iteratively.
  virtual Expr visitLet(const LetNode &N, const Expr &Self);
  virtual Expr visitIf(const IfNode &N, const Expr &Self);
  virtual Expr visitTuple(const TupleNode &N, const Expr &Self);
  virtual Expr visitTupleGetItem(const TupleGetItemNode &N, const Expr &Self);
  virtual Expr visitConstructor(const ConstructorNode &N, const Expr &Self);
  virtual Expr visitMatch(const MatchNode &N, const Expr &Self);

protected:
  /// Dispatches on the kind without the memo check.
  Expr dispatch(const Expr &E);
  /// mutate(V), checked to still be a Var (binding positions need one).
  Var mutateBinder(const Var &V);
  /// Decides one let binding after its variable and value are rewritten; may
  /// change Value. True drops the binding: the variable becomes Value.
  using BindingRewrite = std::function<bool(const Var &NewVar, Expr &Value)>;
  /// Rewrites the chain of directly nested lets headed by N iteratively,
  /// passing each binding through Rewrite (when set); visitLet's loop.
  Expr mutateLetChain(const LetNode &N, const Expr &Self,
                      const BindingRewrite &Rewrite);
  std::unordered_map<const ExprNode *, Expr> Memo;
};

/// Calls F on every node of E in post order (children first), once per node.
void postOrderVisit(const Expr &E, const std::function<void(const Expr &)> &F);

/// Variables used in E but not bound in it, in order of first use.
std::vector<Var> freeVars(const Expr &E);
/// Variables bound in E (parameters, lets, pattern variables), in order.
std::vector<Var> boundVars(const Expr &E);
/// Names of the global functions E refers to, in order of first use.
std::vector<std::string> referencedGlobals(const Expr &E);
/// Replaces free occurrences of variables by expressions (by node identity).
Expr substitute(const Expr &E,
                const std::unordered_map<const VarNode *, Expr> &Map);

} // namespace rivet::ir
