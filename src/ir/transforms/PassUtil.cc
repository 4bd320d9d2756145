//===- PassUtil.cc - Helpers shared by the rewriting passes ---------------===//
#include "ir/transforms/PassUtil.h"

#include "ir/Op.h"
#include "ir/transforms/Pass.h"

namespace rivet::ir {

Expr BindingMutator::visitFunction(const FunctionNode &N, const Expr &Self) {
  // Fused functions are FuseOps' output: no other pass looks inside.
  if (isPrimitiveFunction(Self))
    return Self;
  return ExprMutator::visitFunction(N, Self);
}

BindingMutator::Binding BindingMutator::visitBinding(const Var &,
                                                     const Expr &Value) {
  return {Value, isAtom(Value)};
}

Expr BindingMutator::visitLet(const LetNode &N, const Expr &Self) {
  return mutateLetChain(N, Self, [this](const Var &V, Expr &Value) {
    Binding B = visitBinding(V, Value);
    Value = B.value;
    // A recursive function refers to its own variable: never inline it.
    return B.inlined && B.value->kind != ExprKind::Function;
  });
}

BindingMutator::Binding DefinitionMutator::visitBinding(const Var &V,
                                                        const Expr &Value) {
  Defs[V.get()] = Value;
  return BindingMutator::visitBinding(V, Value);
}

Expr DefinitionMutator::definition(const Expr &E) const {
  if (const auto *V = E->as<VarNode>()) {
    auto It = Defs.find(V);
    return It == Defs.end() ? nullptr : It->second;
  }
  return E;
}

const CallNode *DefinitionMutator::producer(const Expr &E,
                                            std::string_view Op) const {
  Expr D = definition(E);
  const auto *C = D ? D->as<CallNode>() : nullptr;
  const auto *O = C ? C->callee->as<OpNode>() : nullptr;
  return O && O->name() == Op ? C : nullptr;
}

bool isAtom(const Expr &E) {
  switch (E->kind) {
  case ExprKind::Var:
  case ExprKind::Constant:
  case ExprKind::GlobalVar:
  case ExprKind::Op: return true;
  default: return false;
  }
}

TensorTypeRef tensorTypeOf(const Expr &E) {
  if (!E)
    return nullptr;
  Type T = E->checkedType;
  if (!T)
    if (const auto *V = E->as<VarNode>())
      T = V->typeAnnotation;
  if (!T)
    if (const auto *C = E->as<ConstantNode>()) {
      // A constant built by a pass has no checkedType yet; its value says it.
      std::vector<Dim> Dims;
      for (int64_t D : C->value.shape())
        Dims.push_back(Dim::constant(D));
      T = tensorType(std::move(Dims), C->value.dtype());
    }
  if (!T || T->kind != TypeKind::Tensor)
    return nullptr;
  return std::static_pointer_cast<const TensorTypeNode>(T);
}

bool staticShapeOf(const TensorTypeRef &T, std::vector<int64_t> &Shape) {
  if (!T || !T->isStatic())
    return false;
  Shape.clear();
  for (const Dim &D : *T->shape)
    Shape.push_back(D.value);
  return true;
}

bool sameKnownShape(const TensorTypeRef &A, const TensorTypeRef &B) {
  if (!A || !B || !A->shape || !B->shape ||
      A->shape->size() != B->shape->size())
    return false;
  for (size_t I = 0; I < A->shape->size(); ++I) {
    const Dim &X = (*A->shape)[I], &Y = (*B->shape)[I];
    if (X.isAny() || !(X == Y))
      return false;
  }
  return true;
}

bool broadcastsInto(const std::vector<Expr> &Args, size_t I) {
  // One argument: a broadcast to a shape from elsewhere (expand).
  TensorTypeRef Into = tensorTypeOf(Args.at(I));
  if (Args.size() < 2 || !Into || !Into->shape)
    return false;
  const std::vector<Dim> &S = *Into->shape;
  for (size_t J = 0; J < Args.size(); ++J) {
    if (J == I)
      continue;
    TensorTypeRef T = tensorTypeOf(Args[J]);
    if (!T || !T->shape || T->shape->size() > S.size())
      return false;
    const std::vector<Dim> &O = *T->shape;
    for (size_t K = 1; K <= O.size(); ++K) {
      const Dim &D = O[O.size() - K], &E = S[S.size() - K];
      bool One = D.isConst() && D.value == 1;
      if (!One && (D.isAny() || !(D == E)))
        return false;
    }
  }
  return true;
}

const std::string &calledOpName(const Expr &E) {
  static const std::string None;
  const auto *C = E ? E->as<CallNode>() : nullptr;
  const auto *O = C ? C->callee->as<OpNode>() : nullptr;
  return O ? O->name() : None;
}

} // namespace rivet::ir
