//===- StructuralEqual.cc - Equality up to renaming, and hashing ----------===//
#include "ir/StructuralEqual.h"

#include "ir/Op.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <functional>
#include <set>
#include <unordered_map>

namespace rivet::ir {

namespace {

//===----------------------------------------------------------------------===//
// Constants and attributes (shared by equality and hashing)
//===----------------------------------------------------------------------===//

/// Element I of a floating-point tensor, widened exactly to double.
double floatElement(const Tensor &T, int64_t I) {
  const void *P = T.rawData();
  switch (T.dtype()) {
  case DType::Float16: return (float)static_cast<const Half *>(P)[I];
  case DType::BFloat16: return (float)static_cast<const BFloat16 *>(P)[I];
  case DType::Float32: return static_cast<const float *>(P)[I];
  case DType::Float64: return static_cast<const double *>(P)[I];
  default: return 0;
  }
}

/// Floats are equal when bitwise equal as doubles, or both NaN (the text
/// format does not keep NaN payloads).
bool sameFloat(double A, double B) {
  if (std::isnan(A) || std::isnan(B))
    return std::isnan(A) && std::isnan(B);
  return std::bit_cast<uint64_t>(A) == std::bit_cast<uint64_t>(B);
}

uint64_t floatBits(double D) {
  if (std::isnan(D))
    return 0x7ff8000000000000ull;
  return std::bit_cast<uint64_t>(D);
}

bool tensorsEqual(const Tensor &A, const Tensor &B) {
  if (A.defined() != B.defined())
    return false;
  if (!A.defined())
    return true;
  if (A.dtype() != B.dtype() || A.shape() != B.shape() ||
      A.hasData() != B.hasData())
    return false;
  if (!A.hasData())
    return true;
  if (isFloat(A.dtype())) {
    int64_t N = A.numel();
    for (int64_t I = 0; I < N; ++I)
      if (!sameFloat(floatElement(A, I), floatElement(B, I)))
        return false;
    return true;
  }
  if (A.dtype() == DType::Bool) {
    auto *PA = static_cast<const uint8_t *>(A.rawData());
    auto *PB = static_cast<const uint8_t *>(B.rawData());
    for (int64_t I = 0, N = A.numel(); I < N; ++I)
      if ((PA[I] != 0) != (PB[I] != 0))
        return false;
    return true;
  }
  return A.nbytes() == 0 ||
         std::memcmp(A.rawData(), B.rawData(), A.nbytes()) == 0;
}

inline void combine(size_t &H, size_t V) {
  H ^= V + 0x9e3779b97f4a7c15ull + (H << 6) + (H >> 2);
}

size_t hashTensor(const Tensor &T) {
  size_t H = 0x7e75;
  if (!T.defined())
    return H;
  combine(H, (size_t)T.dtype());
  for (int64_t D : T.shape())
    combine(H, (size_t)D);
  if (!T.hasData())
    return H;
  int64_t N = T.numel();
  if (isFloat(T.dtype())) {
    for (int64_t I = 0; I < N; ++I)
      combine(H, floatBits(floatElement(T, I)));
  } else if (T.dtype() == DType::Bool) {
    auto *P = static_cast<const uint8_t *>(T.rawData());
    for (int64_t I = 0; I < N; ++I)
      combine(H, P[I] != 0);
  } else {
    auto *P = static_cast<const unsigned char *>(T.rawData());
    combine(H, std::hash<std::string_view>()(
                   std::string_view((const char *)P, T.nbytes())));
  }
  return H;
}

bool attrValuesEqual(const AttrValue &A, const AttrValue &B) {
  if (A.index() != B.index())
    return false;
  if (auto *D = std::get_if<double>(&A))
    return sameFloat(*D, std::get<double>(B));
  if (auto *V = std::get_if<std::vector<double>>(&A)) {
    auto &W = std::get<std::vector<double>>(B);
    if (V->size() != W.size())
      return false;
    for (size_t I = 0; I < V->size(); ++I)
      if (!sameFloat((*V)[I], W[I]))
        return false;
    return true;
  }
  if (auto *T = std::get_if<Tensor>(&A))
    return tensorsEqual(*T, std::get<Tensor>(B));
  if (auto *I = std::get_if<int64_t>(&A))
    return *I == std::get<int64_t>(B);
  if (auto *S = std::get_if<std::string>(&A))
    return *S == std::get<std::string>(B);
  if (auto *V = std::get_if<std::vector<int64_t>>(&A))
    return *V == std::get<std::vector<int64_t>>(B);
  return std::get<std::vector<std::string>>(A) ==
         std::get<std::vector<std::string>>(B);
}

bool attrsEqual(const Attrs &A, const Attrs &B) {
  auto &MA = A.items(), &MB = B.items();
  if (MA.size() != MB.size())
    return false;
  for (auto IA = MA.begin(), IB = MB.begin(); IA != MA.end(); ++IA, ++IB)
    if (IA->first != IB->first || !attrValuesEqual(IA->second, IB->second))
      return false;
  return true;
}

size_t hashAttrs(const Attrs &A) {
  size_t H = 0xa77;
  for (auto &[Name, V] : A.items()) {
    combine(H, std::hash<std::string>()(Name));
    combine(H, V.index());
    std::visit(
        [&](const auto &X) {
          using T = std::decay_t<decltype(X)>;
          if constexpr (std::is_same_v<T, int64_t>)
            combine(H, (size_t)X);
          else if constexpr (std::is_same_v<T, double>)
            combine(H, floatBits(X));
          else if constexpr (std::is_same_v<T, std::string>)
            combine(H, std::hash<std::string>()(X));
          else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            for (int64_t I : X)
              combine(H, (size_t)I);
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            for (double D : X)
              combine(H, floatBits(D));
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            for (auto &S : X)
              combine(H, std::hash<std::string>()(S));
          } else {
            combine(H, hashTensor(X));
          }
        },
        V);
  }
  return H;
}

//===----------------------------------------------------------------------===//
// Equality
//===----------------------------------------------------------------------===//

class EqualChecker {
public:
  explicit EqualChecker(bool MapFree) : MapFree(MapFree) {}
  std::string Why; // the first difference found

  bool fail(std::string Msg) {
    if (Why.empty())
      Why = std::move(Msg);
    return false;
  }

  bool bindTypeVar(const Type &A, const Type &B) {
    if (!A || !B || A->kind != TypeKind::Var || B->kind != TypeKind::Var)
      return fail("type parameter is not a type variable");
    TLtoR[A.get()] = B.get();
    TRtoL[B.get()] = A.get();
    return true;
  }

  bool bindTypeVars(const std::vector<Type> &A, const std::vector<Type> &B) {
    if (A.size() != B.size())
      return fail(fmt::format("{} vs {} type parameters", A.size(), B.size()));
    for (size_t I = 0; I < A.size(); ++I)
      if (!bindTypeVar(A[I], B[I]))
        return false;
    return true;
  }

  bool typeEq(const Type &A, const Type &B) {
    // A shared type is trivially equal unless it could mention a type
    // variable that is bound to something else.
    if (A == B && (!A || (TLtoR.empty() && TRtoL.empty())))
      return true;
    if (!A || !B)
      return fail(
          fmt::format("type {} vs {}", typeToString(A), typeToString(B)));
    if (A->kind != B->kind)
      return fail(
          fmt::format("type {} vs {}", typeToString(A), typeToString(B)));
    switch (A->kind) {
    case TypeKind::Tensor: {
      auto *TA = A->as<TensorTypeNode>(), *TB = B->as<TensorTypeNode>();
      if (TA->dtype != TB->dtype || TA->shape != TB->shape)
        return fail(
            fmt::format("type {} vs {}", typeToString(A), typeToString(B)));
      return true;
    }
    case TypeKind::Tuple: {
      auto *TA = A->as<TupleTypeNode>(), *TB = B->as<TupleTypeNode>();
      if (TA->fields.size() != TB->fields.size())
        return fail(
            fmt::format("type {} vs {}", typeToString(A), typeToString(B)));
      for (size_t I = 0; I < TA->fields.size(); ++I)
        if (!typeEq(TA->fields[I], TB->fields[I]))
          return false;
      return true;
    }
    case TypeKind::Func: {
      auto *FA = A->as<FuncTypeNode>(), *FB = B->as<FuncTypeNode>();
      if (FA->params.size() != FB->params.size())
        return fail(
            fmt::format("type {} vs {}", typeToString(A), typeToString(B)));
      if (!bindTypeVars(FA->typeParams, FB->typeParams))
        return false;
      for (size_t I = 0; I < FA->params.size(); ++I)
        if (!typeEq(FA->params[I], FB->params[I]))
          return false;
      return typeEq(FA->ret, FB->ret);
    }
    case TypeKind::Var: {
      auto IA = TLtoR.find(A.get());
      auto IB = TRtoL.find(B.get());
      if (IA != TLtoR.end() || IB != TRtoL.end()) {
        if (IA == TLtoR.end() || IA->second != B.get())
          return fail(fmt::format("type variable {} vs {}", typeToString(A),
                                  typeToString(B)));
        return true;
      }
      if (A->as<TypeVarNode>()->name != B->as<TypeVarNode>()->name)
        return fail(fmt::format("free type variable {} vs {}", typeToString(A),
                                typeToString(B)));
      return true;
    }
    case TypeKind::Call: {
      auto *CA = A->as<TypeCallNode>(), *CB = B->as<TypeCallNode>();
      if (CA->adt != CB->adt || CA->args.size() != CB->args.size())
        return fail(
            fmt::format("type {} vs {}", typeToString(A), typeToString(B)));
      for (size_t I = 0; I < CA->args.size(); ++I)
        if (!typeEq(CA->args[I], CB->args[I]))
          return false;
      return true;
    }
    case TypeKind::Incomplete: return true;
    }
    return false;
  }

  bool bindVar(const Var &A, const Var &B) {
    if (!A || !B)
      return fail("missing variable");
    if (!typeEq(A->typeAnnotation, B->typeAnnotation))
      return fail(
          fmt::format("annotation of %{} vs %{}", A->nameHint, B->nameHint));
    LtoR[A.get()] = B.get();
    RtoL[B.get()] = A.get();
    return true;
  }

  bool varUseEq(const VarNode *A, const VarNode *B) {
    auto IA = LtoR.find(A);
    auto IB = RtoL.find(B);
    if (IA != LtoR.end() || IB != RtoL.end()) {
      if (IA == LtoR.end() || IA->second != B || IB == RtoL.end() ||
          IB->second != A)
        return fail(
            fmt::format("variable %{} vs %{}", A->nameHint, B->nameHint));
      return true;
    }
    if (MapFree) { // pair up on first use (A == B included), one to one
      if (!typeEq(A->typeAnnotation, B->typeAnnotation))
        return fail(fmt::format("annotation of free %{} vs %{}", A->nameHint,
                                B->nameHint));
      LtoR[A] = B;
      RtoL[B] = A;
      return true;
    }
    if (A == B)
      return true;
    return fail(
        fmt::format("free variable %{} vs %{}", A->nameHint, B->nameHint));
  }

  bool ctorEq(const ConstructorNode *A, const ConstructorNode *B) {
    if (A == B)
      return true;
    if (!A || !B || A->name != B->name || A->adt != B->adt || A->tag != B->tag)
      return fail(fmt::format("constructor {} vs {}", A ? A->name : "<null>",
                              B ? B->name : "<null>"));
    return true;
  }

  bool patternEq(const Pattern &A, const Pattern &B) {
    if (!A || !B)
      return A == B || fail("missing pattern");
    if (A->kind != B->kind)
      return fail("pattern kinds differ");
    switch (A->kind) {
    case PatternKind::Wildcard: return true;
    case PatternKind::Var: return bindVar(A->var, B->var);
    case PatternKind::Constructor:
      if (!ctorEq(A->ctor.get(), B->ctor.get()))
        return false;
      [[fallthrough]];
    case PatternKind::Tuple:
      if (A->children.size() != B->children.size())
        return fail("pattern arity differs");
      for (size_t I = 0; I < A->children.size(); ++I)
        if (!patternEq(A->children[I], B->children[I]))
          return false;
      return true;
    }
    return false;
  }

  bool exprsEq(const std::vector<Expr> &A, const std::vector<Expr> &B) {
    if (A.size() != B.size())
      return fail(fmt::format("{} vs {} operands", A.size(), B.size()));
    for (size_t I = 0; I < A.size(); ++I)
      if (!eq(A[I], B[I]))
        return false;
    return true;
  }

  bool eq(Expr A, Expr B) {
    // Loop over let chains (and tail positions) instead of recursing.
    while (true) {
      if (!A || !B)
        return A == B || fail("missing expression");
      if (A->kind != B->kind)
        return fail("expression kinds differ");
      if (A->kind != ExprKind::Let)
        return nonLetEq(A, B);
      auto *LA = A->as<LetNode>(), *LB = B->as<LetNode>();
      if (!bindVar(LA->var, LB->var) || !eq(LA->value, LB->value))
        return false;
      A = LA->body;
      B = LB->body;
    }
  }

  bool nonLetEq(const Expr &A, const Expr &B) {
    switch (A->kind) {
    case ExprKind::Var: return varUseEq(A->as<VarNode>(), B->as<VarNode>());
    case ExprKind::GlobalVar:
      if (A->as<GlobalVarNode>()->name != B->as<GlobalVarNode>()->name)
        return fail(fmt::format("@{} vs @{}", A->as<GlobalVarNode>()->name,
                                B->as<GlobalVarNode>()->name));
      return true;
    case ExprKind::Constant:
      if (!tensorsEqual(A->as<ConstantNode>()->value,
                        B->as<ConstantNode>()->value))
        return fail("constants differ");
      return true;
    case ExprKind::Op: {
      auto *OA = A->as<OpNode>(), *OB = B->as<OpNode>();
      if (OA->info != OB->info)
        return fail(fmt::format("operator {} vs {}",
                                OA->info ? OA->name() : "?",
                                OB->info ? OB->name() : "?"));
      return true;
    }
    case ExprKind::Call: {
      auto *CA = A->as<CallNode>(), *CB = B->as<CallNode>();
      if (!eq(CA->callee, CB->callee))
        return false;
      if (!attrsEqual(CA->attrs, CB->attrs))
        return fail("call attributes differ");
      return exprsEq(CA->args, CB->args);
    }
    case ExprKind::Function: {
      auto *FA = A->as<FunctionNode>(), *FB = B->as<FunctionNode>();
      if (FA->params.size() != FB->params.size())
        return fail("function parameter counts differ");
      if (!bindTypeVars(FA->typeParams, FB->typeParams))
        return false;
      for (size_t I = 0; I < FA->params.size(); ++I)
        if (!bindVar(FA->params[I], FB->params[I]))
          return false;
      if (!typeEq(FA->retType, FB->retType))
        return false;
      if (!attrsEqual(FA->attrs, FB->attrs))
        return fail("function attributes differ");
      return eq(FA->body, FB->body);
    }
    case ExprKind::If: {
      auto *IA = A->as<IfNode>(), *IB = B->as<IfNode>();
      return eq(IA->cond, IB->cond) && eq(IA->thenBranch, IB->thenBranch) &&
             eq(IA->elseBranch, IB->elseBranch);
    }
    case ExprKind::Tuple:
      return exprsEq(A->as<TupleNode>()->fields, B->as<TupleNode>()->fields);
    case ExprKind::TupleGetItem: {
      auto *TA = A->as<TupleGetItemNode>(), *TB = B->as<TupleGetItemNode>();
      if (TA->index != TB->index)
        return fail(fmt::format("tuple index {} vs {}", TA->index, TB->index));
      return eq(TA->tuple, TB->tuple);
    }
    case ExprKind::Constructor:
      return ctorEq(A->as<ConstructorNode>(), B->as<ConstructorNode>());
    case ExprKind::Match: {
      auto *MA = A->as<MatchNode>(), *MB = B->as<MatchNode>();
      if (!eq(MA->data, MB->data))
        return false;
      if (MA->clauses.size() != MB->clauses.size())
        return fail("match clause counts differ");
      for (size_t I = 0; I < MA->clauses.size(); ++I)
        if (!patternEq(MA->clauses[I].lhs, MB->clauses[I].lhs) ||
            !eq(MA->clauses[I].rhs, MB->clauses[I].rhs))
          return false;
      return true;
    }
    case ExprKind::Let: break;
    }
    return false;
  }

  bool typeDataEq(const TypeData &A, const TypeData &B) {
    if (A.name != B.name)
      return fail(fmt::format("type {} vs {}", A.name, B.name));
    if (!bindTypeVars(A.typeParams, B.typeParams))
      return false;
    if (A.constructors.size() != B.constructors.size())
      return fail(fmt::format("type {}: constructor counts differ", A.name));
    for (size_t I = 0; I < A.constructors.size(); ++I) {
      auto &CA = A.constructors[I], &CB = B.constructors[I];
      if (!ctorEq(CA.get(), CB.get()))
        return false;
      if (CA->inputs.size() != CB->inputs.size())
        return fail(
            fmt::format("constructor {}: field counts differ", CA->name));
      for (size_t J = 0; J < CA->inputs.size(); ++J)
        if (!typeEq(CA->inputs[J], CB->inputs[J]))
          return false;
    }
    return true;
  }

private:
  bool MapFree;
  std::unordered_map<const VarNode *, const VarNode *> LtoR, RtoL;
  std::unordered_map<const TypeNode *, const TypeNode *> TLtoR, TRtoL;
};

//===----------------------------------------------------------------------===//
// Hashing
//===----------------------------------------------------------------------===//

class Hasher {
public:
  size_t typeHash(const Type &T) {
    size_t H = 0x7195;
    if (!T)
      return H;
    combine(H, (size_t)T->kind);
    switch (T->kind) {
    case TypeKind::Tensor: {
      auto *TT = T->as<TensorTypeNode>();
      combine(H, (size_t)TT->dtype);
      combine(H, TT->shape.has_value());
      if (TT->shape)
        for (const Dim &D : *TT->shape) {
          combine(H, (size_t)D.kind);
          combine(H, (size_t)D.value);
          combine(H, std::hash<std::string>()(D.name));
        }
      break;
    }
    case TypeKind::Tuple:
      for (auto &F : T->as<TupleTypeNode>()->fields)
        combine(H, typeHash(F));
      break;
    case TypeKind::Func: {
      auto *FT = T->as<FuncTypeNode>();
      bindTypeVars(FT->typeParams);
      combine(H, FT->typeParams.size());
      for (auto &P : FT->params)
        combine(H, typeHash(P));
      combine(H, typeHash(FT->ret));
      break;
    }
    case TypeKind::Var: {
      auto It = TypeVarIndex.find(T.get());
      if (It != TypeVarIndex.end())
        combine(H, It->second);
      else
        combine(H, std::hash<std::string>()(T->as<TypeVarNode>()->name));
      break;
    }
    case TypeKind::Call: {
      auto *TC = T->as<TypeCallNode>();
      combine(H, std::hash<std::string>()(TC->adt));
      for (auto &A : TC->args)
        combine(H, typeHash(A));
      break;
    }
    case TypeKind::Incomplete: break;
    }
    return H;
  }

  void bindTypeVars(const std::vector<Type> &TPs) {
    for (auto &TP : TPs)
      TypeVarIndex[TP.get()] = NextIndex++;
  }

  size_t bindVar(const Var &V) {
    size_t H = 0xb1d;
    if (!V)
      return H;
    VarIndex[V.get()] = NextIndex++;
    combine(H, typeHash(V->typeAnnotation));
    return H;
  }

  size_t patternHash(const Pattern &P) {
    size_t H = 0x9a7;
    if (!P)
      return H;
    combine(H, (size_t)P->kind);
    if (P->kind == PatternKind::Var)
      combine(H, bindVar(P->var));
    if (P->kind == PatternKind::Constructor && P->ctor)
      combine(H, std::hash<std::string>()(P->ctor->name));
    for (auto &C : P->children)
      combine(H, patternHash(C));
    return H;
  }

  size_t hash(Expr E) {
    size_t H = 0xe1;
    while (E && E->kind == ExprKind::Let) {
      auto *L = E->as<LetNode>();
      combine(H, (size_t)ExprKind::Let);
      combine(H, bindVar(L->var));
      combine(H, hash(L->value));
      E = L->body;
    }
    combine(H, nonLetHash(E));
    return H;
  }

  size_t nonLetHash(const Expr &E) {
    size_t H = 0x3e;
    if (!E)
      return H;
    combine(H, (size_t)E->kind);
    switch (E->kind) {
    case ExprKind::Var: {
      auto It = VarIndex.find(E.get());
      combine(H, It == VarIndex.end() ? 0xf4ee : It->second);
      break;
    }
    case ExprKind::GlobalVar:
      combine(H, std::hash<std::string>()(E->as<GlobalVarNode>()->name));
      break;
    case ExprKind::Constant:
      combine(H, hashTensor(E->as<ConstantNode>()->value));
      break;
    case ExprKind::Op:
      combine(H, std::hash<const void *>()(E->as<OpNode>()->info));
      break;
    case ExprKind::Call: {
      auto *C = E->as<CallNode>();
      combine(H, hash(C->callee));
      for (auto &A : C->args)
        combine(H, hash(A));
      combine(H, hashAttrs(C->attrs));
      break;
    }
    case ExprKind::Function: {
      auto *F = E->as<FunctionNode>();
      bindTypeVars(F->typeParams);
      combine(H, F->typeParams.size());
      for (auto &P : F->params)
        combine(H, bindVar(P));
      combine(H, typeHash(F->retType));
      combine(H, hashAttrs(F->attrs));
      combine(H, hash(F->body));
      break;
    }
    case ExprKind::If: {
      auto *I = E->as<IfNode>();
      combine(H, hash(I->cond));
      combine(H, hash(I->thenBranch));
      combine(H, hash(I->elseBranch));
      break;
    }
    case ExprKind::Tuple:
      for (auto &F : E->as<TupleNode>()->fields)
        combine(H, hash(F));
      break;
    case ExprKind::TupleGetItem:
      combine(H, (size_t)E->as<TupleGetItemNode>()->index);
      combine(H, hash(E->as<TupleGetItemNode>()->tuple));
      break;
    case ExprKind::Constructor: {
      auto *C = E->as<ConstructorNode>();
      combine(H, std::hash<std::string>()(C->name));
      combine(H, std::hash<std::string>()(C->adt));
      combine(H, (size_t)C->tag);
      break;
    }
    case ExprKind::Match: {
      auto *M = E->as<MatchNode>();
      combine(H, hash(M->data));
      for (auto &C : M->clauses) {
        combine(H, patternHash(C.lhs));
        combine(H, hash(C.rhs));
      }
      break;
    }
    case ExprKind::Let: break;
    }
    return H;
  }

private:
  // Binding sites get consecutive indices in traversal order, so renaming
  // does not change the hash.
  std::unordered_map<const ExprNode *, size_t> VarIndex;
  std::unordered_map<const TypeNode *, size_t> TypeVarIndex;
  size_t NextIndex = 1;
};

} // namespace

bool structuralEqual(const Expr &A, const Expr &B, bool MapFreeVars) {
  EqualChecker C(MapFreeVars);
  return C.eq(A, B);
}

bool structuralEqual(const Type &A, const Type &B) {
  EqualChecker C(false);
  return C.typeEq(A, B);
}

bool structuralEqual(const TypeData &A, const TypeData &B) {
  EqualChecker C(false);
  return C.typeDataEq(A, B);
}

std::string structuralDiff(const Module &A, const Module &B) {
  std::set<std::string> FA(A.functionNames().begin(), A.functionNames().end());
  std::set<std::string> FB(B.functionNames().begin(), B.functionNames().end());
  for (auto &N : FA)
    if (!FB.count(N))
      return fmt::format("@{} only in the first module", N);
  for (auto &N : FB)
    if (!FA.count(N))
      return fmt::format("@{} only in the second module", N);
  std::set<std::string> TA(A.typeDataNames().begin(), A.typeDataNames().end());
  std::set<std::string> TB(B.typeDataNames().begin(), B.typeDataNames().end());
  if (TA != TB)
    return "the modules define different types";
  for (auto &N : TA) {
    EqualChecker C(false);
    if (!C.typeDataEq(A.typeData(N), B.typeData(N)))
      return fmt::format("type {}: {}", N, C.Why);
  }
  for (auto &N : FA) {
    EqualChecker C(false);
    if (!C.eq(A.function(N), B.function(N)))
      return fmt::format("@{}: {}", N, C.Why);
  }
  return "";
}

bool structuralEqual(const Module &A, const Module &B) {
  return structuralDiff(A, B).empty();
}

size_t structuralHash(const Expr &E) {
  Hasher H;
  return H.hash(E);
}

size_t structuralHash(const Type &T) {
  Hasher H;
  return H.typeHash(T);
}

} // namespace rivet::ir
