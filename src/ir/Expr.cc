//===- Expr.cc - Expression builders --------------------------------------===//
#include "ir/Expr.h"

#include "ir/Op.h"
#include "ir/Origin.h"

namespace rivet::ir {

const std::string &OpNode::name() const { return info->name; }

LetNode::~LetNode() {
  Expr Next = std::move(body);
  while (Next && Next.use_count() == 1 && Next->kind == ExprKind::Let) {
    // Sole owner: detach the next link's body before dropping the link.
    auto *L = const_cast<LetNode *>(static_cast<const LetNode *>(Next.get()));
    Expr After = std::move(L->body);
    Next = std::move(After);
  }
}

Pattern PatternNode::wildcard() {
  auto P = std::make_shared<PatternNode>();
  P->kind = PatternKind::Wildcard;
  return P;
}
Pattern PatternNode::bind(Var V) {
  auto P = std::make_shared<PatternNode>();
  P->kind = PatternKind::Var;
  P->var = std::move(V);
  return P;
}
Pattern PatternNode::constructor(Constructor C, std::vector<Pattern> Fields) {
  auto P = std::make_shared<PatternNode>();
  P->kind = PatternKind::Constructor;
  P->ctor = std::move(C);
  P->children = std::move(Fields);
  return P;
}
Pattern PatternNode::tuple(std::vector<Pattern> Fields) {
  auto P = std::make_shared<PatternNode>();
  P->kind = PatternKind::Tuple;
  P->children = std::move(Fields);
  return P;
}

Var var(std::string NameHint, Type Annotation) {
  return std::make_shared<VarNode>(std::move(NameHint), std::move(Annotation));
}
Expr globalVar(std::string Name) {
  return std::make_shared<GlobalVarNode>(std::move(Name));
}
Expr constant(Tensor Value) {
  return std::make_shared<ConstantNode>(std::move(Value));
}
Expr op(const std::string &Name) {
  return std::make_shared<OpNode>(&OpRegistry::global().get(Name));
}
Expr call(Expr Callee, std::vector<Expr> Args, Attrs A) {
  auto C = std::make_shared<CallNode>(std::move(Callee), std::move(Args),
                                      std::move(A));
  C->origin = currentOrigin();
  return C;
}
Expr callOp(const std::string &Name, std::vector<Expr> Args, Attrs A) {
  return call(op(Name), std::move(Args), std::move(A));
}
Expr function(std::vector<Var> Params, Expr Body, Type RetType,
              std::vector<Type> TypeParams, Attrs A) {
  return std::make_shared<FunctionNode>(std::move(Params), std::move(Body),
                                        std::move(RetType),
                                        std::move(TypeParams), std::move(A));
}
Expr let(Var V, Expr Value, Expr Body) {
  return std::make_shared<LetNode>(std::move(V), std::move(Value),
                                   std::move(Body));
}
Expr ifThenElse(Expr Cond, Expr Then, Expr Else) {
  return std::make_shared<IfNode>(std::move(Cond), std::move(Then),
                                  std::move(Else));
}
Expr tuple(std::vector<Expr> Fields) {
  return std::make_shared<TupleNode>(std::move(Fields));
}
Expr tupleGetItem(Expr Tuple, int64_t Index) {
  return std::make_shared<TupleGetItemNode>(std::move(Tuple), Index);
}
Expr match(Expr Data, std::vector<Clause> Clauses) {
  return std::make_shared<MatchNode>(std::move(Data), std::move(Clauses));
}

} // namespace rivet::ir
