//===- Type.cc - Type constructors and printing ---------------------------===//
#include "ir/Type.h"

#include <atomic>
#include <fmt/format.h>

namespace rivet::ir {

std::string Dim::str() const {
  switch (kind) {
  case Kind::Const: return std::to_string(value);
  case Kind::Symbol: return name;
  case Kind::Any: return "?";
  }
  return "?";
}

bool TensorTypeNode::isStatic() const {
  if (!shape)
    return false;
  for (const Dim &D : *shape)
    if (!D.isConst())
      return false;
  return true;
}

Type tensorType(std::vector<Dim> Shape, DType T) {
  return std::make_shared<TensorTypeNode>(std::move(Shape), T);
}
Type tensorTypeUnknownRank(DType T) {
  return std::make_shared<TensorTypeNode>(std::nullopt, T);
}
Type scalarType(DType T) { return tensorType({}, T); }
Type tupleType(std::vector<Type> Fields) {
  return std::make_shared<TupleTypeNode>(std::move(Fields));
}
Type funcType(std::vector<Type> Params, Type Ret,
              std::vector<Type> TypeParams) {
  return std::make_shared<FuncTypeNode>(std::move(Params), std::move(Ret),
                                        std::move(TypeParams));
}
Type typeVar(std::string Name) {
  return std::make_shared<TypeVarNode>(std::move(Name));
}
Type typeCall(std::string Adt, std::vector<Type> Args) {
  return std::make_shared<TypeCallNode>(std::move(Adt), std::move(Args));
}
Type incompleteType() {
  static std::atomic<int64_t> Next{0};
  return std::make_shared<IncompleteTypeNode>(Next++);
}

static std::string joinTypes(const std::vector<Type> &Ts) {
  std::string S;
  for (size_t I = 0; I < Ts.size(); ++I) {
    if (I)
      S += ", ";
    S += typeToString(Ts[I]);
  }
  return S;
}

std::string typeToString(const Type &T) {
  if (!T)
    return "<null>";
  switch (T->kind) {
  case TypeKind::Tensor: {
    auto *TT = T->as<TensorTypeNode>();
    std::string Dims;
    if (!TT->shape) {
      Dims = "?";
    } else {
      Dims = "(";
      for (size_t I = 0; I < TT->shape->size(); ++I) {
        if (I)
          Dims += ", ";
        Dims += (*TT->shape)[I].str();
      }
      if (TT->shape->size() == 1)
        Dims += ",";
      Dims += ")";
    }
    return fmt::format("Tensor[{}, {}]", Dims, dtypeName(TT->dtype));
  }
  case TypeKind::Tuple: {
    auto *TT = T->as<TupleTypeNode>();
    if (TT->fields.size() == 1)
      return fmt::format("({},)", typeToString(TT->fields[0]));
    return fmt::format("({})", joinTypes(TT->fields));
  }
  case TypeKind::Func: {
    auto *FT = T->as<FuncTypeNode>();
    std::string TP;
    if (!FT->typeParams.empty())
      TP = fmt::format("[{}]", joinTypes(FT->typeParams));
    return fmt::format("fn{}({}) -> {}", TP, joinTypes(FT->params),
                       typeToString(FT->ret));
  }
  case TypeKind::Var: return T->as<TypeVarNode>()->name;
  case TypeKind::Call: {
    auto *TC = T->as<TypeCallNode>();
    if (TC->args.empty())
      return TC->adt;
    return fmt::format("{}[{}]", TC->adt, joinTypes(TC->args));
  }
  case TypeKind::Incomplete:
    return fmt::format("_{}", T->as<IncompleteTypeNode>()->id);
  }
  return "<type>";
}

} // namespace rivet::ir
