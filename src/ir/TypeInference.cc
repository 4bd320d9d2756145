//===- TypeInference.cc - Type inference and checking ---------------------===//
//
// One FunctionInferencer per global function walks the body repeatedly
// (passes) until the substitution stops changing, then writes the solved
// types. Globals without a declared return type that call each other (a
// strongly connected component of the call graph restricted to such
// globals, a self-recursive one included) share one inferencer: each gets a
// return hole before any body is walked, so their calls see the return
// types inferred so far (monomorphic let-rec, as in Hindley-Milner). Holes
// created for a node are keyed by (node, occurrence, slot) so that every pass
// sees the same holes; the substitution only ever grows more general (holes get
// bound or unioned, tensor dims generalize to `?`), so the passes converge.
//
//===----------------------------------------------------------------------===//
#include "ir/TypeInference.h"

#include "ir/Op.h"
#include "ir/Visitor.h"
#include "ir/ops/RelationUtil.h"
#include "kernels/Error.h"

#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace rivet::ir {

namespace {

/// A type mismatch found by join/compat; callers add what was being checked.
struct Mismatch : Error {
  using Error::Error;
};

bool sameTypeVar(const TypeVarNode *A, const TypeVarNode *B) {
  return A == B || A->name == B->name;
}

/// The substitution: union-find over hole ids plus a concrete binding per
/// root. join() generalizes; compat() checks an actual type against an
/// expected one.
class Solver {
public:
  bool Changed = false;

  /// The root hole of T when T is a hole.
  std::optional<int64_t> holeRoot(const Type &T) {
    auto *H = T ? T->as<IncompleteTypeNode>() : nullptr;
    if (!H)
      return std::nullopt;
    int64_t Id = H->id;
    Holes.emplace(Id, T);
    while (true) {
      auto It = Parent.find(Id);
      if (It == Parent.end())
        return Id;
      Id = It->second;
    }
  }

  Type binding(int64_t Root) const {
    auto It = Binding.find(Root);
    return It == Binding.end() ? nullptr : It->second;
  }

  /// T with a top-level hole replaced by its binding (or its root hole).
  Type shallow(const Type &T) {
    std::optional<int64_t> R = holeRoot(T);
    if (!R)
      return T;
    if (Type B = binding(*R))
      return B;
    return Holes.at(*R);
  }

  /// T with every bound hole replaced, recursively.
  Type resolve(const Type &T) {
    Type S = shallow(T);
    if (!S)
      return S;
    switch (S->kind) {
    case TypeKind::Tuple: {
      std::vector<Type> F;
      for (const Type &X : S->as<TupleTypeNode>()->fields)
        F.push_back(resolve(X));
      return tupleType(std::move(F));
    }
    case TypeKind::Func: {
      auto *FT = S->as<FuncTypeNode>();
      std::vector<Type> P;
      for (const Type &X : FT->params)
        P.push_back(resolve(X));
      return funcType(std::move(P), resolve(FT->ret), FT->typeParams);
    }
    case TypeKind::Call: {
      auto *TC = S->as<TypeCallNode>();
      std::vector<Type> A;
      for (const Type &X : TC->args)
        A.push_back(resolve(X));
      return typeCall(TC->adt, std::move(A));
    }
    default: return S;
    }
  }

  /// Structural equality of resolved types (holes by root).
  bool equal(const Type &A0, const Type &B0) {
    Type A = shallow(A0), B = shallow(B0);
    if (A == B)
      return true;
    if (!A || !B || A->kind != B->kind)
      return false;
    switch (A->kind) {
    case TypeKind::Tensor: {
      auto *X = A->as<TensorTypeNode>(), *Y = B->as<TensorTypeNode>();
      return X->dtype == Y->dtype && X->shape == Y->shape;
    }
    case TypeKind::Tuple:
      return equalLists(A->as<TupleTypeNode>()->fields,
                        B->as<TupleTypeNode>()->fields);
    case TypeKind::Func: {
      auto *X = A->as<FuncTypeNode>(), *Y = B->as<FuncTypeNode>();
      return X->typeParams == Y->typeParams &&
             equalLists(X->params, Y->params) && equal(X->ret, Y->ret);
    }
    case TypeKind::Call: {
      auto *X = A->as<TypeCallNode>(), *Y = B->as<TypeCallNode>();
      return X->adt == Y->adt && equalLists(X->args, Y->args);
    }
    case TypeKind::Var:
      return sameTypeVar(A->as<TypeVarNode>(), B->as<TypeVarNode>());
    case TypeKind::Incomplete: return *holeRoot(A) == *holeRoot(B);
    }
    return false;
  }

  /// The least general type of which A and B are instances: holes are
  /// bound/unioned, differing tensor dims become `?`, an unknown rank wins.
  Type join(const Type &A, const Type &B) {
    std::optional<int64_t> HA = holeRoot(A), HB = holeRoot(B);
    if (HA && HB) {
      if (*HA == *HB)
        return Holes.at(*HA);
      Type BA = binding(*HA), BB = binding(*HB);
      Parent[*HA] = *HB;
      Changed = true;
      if (BA) {
        Binding.erase(*HA);
        Binding[*HB] = BB ? joinConcrete(BA, BB) : BA;
        if (occursInBinding(*HB)) {
          // Undo before reporting: a cyclic binding left behind would send
          // every later resolve() (the error message's too) round forever.
          Parent.erase(*HA);
          Binding[*HA] = BA;
          if (BB)
            Binding[*HB] = BB;
          else
            Binding.erase(*HB);
          throw Mismatch(kInfiniteType);
        }
      }
      return Holes.at(*HB);
    }
    if (HA)
      return absorb(*HA, B);
    if (HB)
      return absorb(*HB, A);
    return joinConcrete(A, B);
  }

  /// Checks the actual type A against the expected type P. Holes on the
  /// expected side absorb (join) the actual type; an unbound hole on the
  /// actual side is bound to the expected type. Tensor dims: `?` and
  /// symbols match anything; constants must be equal. Symbols of P are
  /// recorded in Syms (when given) for substitution into a return type.
  void compat(const Type &P0, const Type &A0,
              std::map<std::string, std::optional<Dim>> *Syms) {
    if (holeRoot(P0)) {
      // Absorb the actual type's current value rather than uniting with its
      // hole, so that generalizing a parameter does not generalize the
      // caller's variable.
      Type A = A0;
      if (std::optional<int64_t> HA = holeRoot(A0))
        if (Type B = binding(*HA))
          A = B;
      join(P0, A);
      return;
    }
    Type A = A0;
    if (std::optional<int64_t> HA = holeRoot(A0)) {
      if (!binding(*HA)) {
        absorb(*HA, P0);
        return;
      }
      A = binding(*HA);
    }
    const Type &P = P0;
    if (P->kind != A->kind)
      throw Mismatch("kinds differ");
    switch (P->kind) {
    case TypeKind::Tensor: {
      auto *X = P->as<TensorTypeNode>(), *Y = A->as<TensorTypeNode>();
      if (X->dtype != Y->dtype)
        throw Mismatch("dtypes differ");
      if (!X->shape || !Y->shape)
        return;
      if (X->shape->size() != Y->shape->size())
        throw Mismatch("ranks differ");
      for (size_t I = 0; I < X->shape->size(); ++I) {
        const Dim &DP = (*X->shape)[I], &DA = (*Y->shape)[I];
        if (DP.isSymbol() && Syms) {
          auto [It, New] = Syms->emplace(DP.name, DA);
          if (!New && It->second && !(*It->second == DA))
            It->second.reset(); // bound inconsistently: unknown
        }
        if (DP.isConst() && DA.isConst() && DP.value != DA.value)
          throw Mismatch("dimensions differ");
      }
      return;
    }
    case TypeKind::Tuple: {
      auto &X = P->as<TupleTypeNode>()->fields,
           &Y = A->as<TupleTypeNode>()->fields;
      if (X.size() != Y.size())
        throw Mismatch("tuple sizes differ");
      for (size_t I = 0; I < X.size(); ++I)
        compat(X[I], Y[I], Syms);
      return;
    }
    case TypeKind::Func: {
      auto *X = P->as<FuncTypeNode>(), *Y = A->as<FuncTypeNode>();
      if (X->params.size() != Y->params.size())
        throw Mismatch("parameter counts differ");
      if (!sameTypeParams(X->typeParams, Y->typeParams))
        throw Mismatch("type parameters differ");
      for (size_t I = 0; I < X->params.size(); ++I)
        compat(X->params[I], Y->params[I], Syms);
      compat(X->ret, Y->ret, Syms);
      return;
    }
    case TypeKind::Call: {
      auto *X = P->as<TypeCallNode>(), *Y = A->as<TypeCallNode>();
      if (X->adt != Y->adt || X->args.size() != Y->args.size())
        throw Mismatch("ADTs differ");
      for (size_t I = 0; I < X->args.size(); ++I)
        compat(X->args[I], Y->args[I], Syms);
      return;
    }
    case TypeKind::Var:
      if (!sameTypeVar(P->as<TypeVarNode>(), A->as<TypeVarNode>()))
        throw Mismatch("type variables differ");
      return;
    case TypeKind::Incomplete: return; // unreachable: handled above
    }
  }

  /// Joins the current value of A into hole H (uniting them only while A is
  /// an unbound hole), so that generalizing H leaves A's own type alone.
  Type flow(const Type &H, const Type &A0) {
    Type A = A0;
    if (std::optional<int64_t> HA = holeRoot(A0))
      if (Type B = binding(*HA))
        A = B;
    return join(H, A);
  }

  /// Binds (or generalizes) hole Root with T.
  Type absorb(int64_t Root, const Type &T) {
    Type Old = binding(Root);
    if (std::optional<int64_t> HT = holeRoot(T)) {
      // T is a hole itself: union.
      return join(Holes.at(Root), T);
    }
    Type New = Old ? joinConcrete(Old, T) : T;
    if (!Old || !equal(Old, New)) {
      if (occurs(Root, New))
        throw Mismatch(kInfiniteType); // nothing bound yet
      Binding[Root] = New;
      Changed = true;
    }
    return Holes.at(Root);
  }

private:
  std::unordered_map<int64_t, int64_t> Parent;
  std::unordered_map<int64_t, Type> Binding;
  std::unordered_map<int64_t, Type> Holes; // id -> the hole's Type node

  static bool sameTypeParams(const std::vector<Type> &A,
                             const std::vector<Type> &B) {
    if (A.size() != B.size())
      return false;
    for (size_t I = 0; I < A.size(); ++I)
      if (!sameTypeVar(A[I]->as<TypeVarNode>(), B[I]->as<TypeVarNode>()))
        return false;
    return true;
  }

  bool equalLists(const std::vector<Type> &A, const std::vector<Type> &B) {
    if (A.size() != B.size())
      return false;
    for (size_t I = 0; I < A.size(); ++I)
      if (!equal(A[I], B[I]))
        return false;
    return true;
  }

  bool occurs(int64_t Root, const Type &T) {
    if (std::optional<int64_t> H = holeRoot(T)) {
      if (*H == Root)
        return true;
      Type B = binding(*H);
      return B && occurs(Root, B);
    }
    switch (T->kind) {
    case TypeKind::Tuple:
      for (const Type &X : T->as<TupleTypeNode>()->fields)
        if (occurs(Root, X))
          return true;
      return false;
    case TypeKind::Func:
      for (const Type &X : T->as<FuncTypeNode>()->params)
        if (occurs(Root, X))
          return true;
      return occurs(Root, T->as<FuncTypeNode>()->ret);
    case TypeKind::Call:
      for (const Type &X : T->as<TypeCallNode>()->args)
        if (occurs(Root, X))
          return true;
      return false;
    default: return false;
    }
  }

  static constexpr const char *kInfiniteType =
      "a type would contain itself (an infinite type)";

  /// Whether hole Root's binding mentions Root (the occurs check).
  bool occursInBinding(int64_t Root) {
    Type B = binding(Root);
    return B && occurs(Root, B);
  }

  Type joinConcrete(const Type &A, const Type &B) {
    if (A->kind != B->kind)
      throw Mismatch("kinds differ");
    switch (A->kind) {
    case TypeKind::Tensor: {
      auto *X = A->as<TensorTypeNode>(), *Y = B->as<TensorTypeNode>();
      if (X->dtype != Y->dtype)
        throw Mismatch("dtypes differ");
      if (!X->shape)
        return A;
      if (!Y->shape)
        return B;
      // Values of one dtype but different ranks (the elements of an ONNX
      // sequence, say) share the type with an unknown rank.
      if (X->shape->size() != Y->shape->size())
        return tensorTypeUnknownRank(X->dtype);
      std::vector<Dim> Out = *X->shape;
      bool Same = true;
      for (size_t I = 0; I < Out.size(); ++I)
        if (!(Out[I] == (*Y->shape)[I])) {
          Out[I] = Dim::any();
          Same = false;
        }
      return Same ? A : tensorType(std::move(Out), X->dtype);
    }
    case TypeKind::Tuple: {
      auto &X = A->as<TupleTypeNode>()->fields,
           &Y = B->as<TupleTypeNode>()->fields;
      if (X.size() != Y.size())
        throw Mismatch("tuple sizes differ");
      std::vector<Type> F;
      for (size_t I = 0; I < X.size(); ++I)
        F.push_back(join(X[I], Y[I]));
      return tupleType(std::move(F));
    }
    case TypeKind::Func: {
      auto *X = A->as<FuncTypeNode>(), *Y = B->as<FuncTypeNode>();
      if (X->params.size() != Y->params.size())
        throw Mismatch("parameter counts differ");
      if (!sameTypeParams(X->typeParams, Y->typeParams))
        throw Mismatch("type parameters differ");
      std::vector<Type> P;
      for (size_t I = 0; I < X->params.size(); ++I)
        P.push_back(join(X->params[I], Y->params[I]));
      return funcType(std::move(P), join(X->ret, Y->ret), X->typeParams);
    }
    case TypeKind::Call: {
      auto *X = A->as<TypeCallNode>(), *Y = B->as<TypeCallNode>();
      if (X->adt != Y->adt || X->args.size() != Y->args.size())
        throw Mismatch("ADTs differ");
      std::vector<Type> Args;
      for (size_t I = 0; I < X->args.size(); ++I)
        Args.push_back(join(X->args[I], Y->args[I]));
      return typeCall(X->adt, std::move(Args));
    }
    case TypeKind::Var:
      if (!sameTypeVar(A->as<TypeVarNode>(), B->as<TypeVarNode>()))
        throw Mismatch("type variables differ");
      return A;
    case TypeKind::Incomplete: break;
    }
    return A;
  }
};

/// Replaces type variables (by node, or by name for parsers that create one
/// node per mention) with the types in Map.
Type substVars(const Type &T, const std::vector<Type> &Vars,
               const std::vector<Type> &With) {
  if (!T || Vars.empty())
    return T;
  switch (T->kind) {
  case TypeKind::Var:
    for (size_t I = 0; I < Vars.size(); ++I)
      if (sameTypeVar(T->as<TypeVarNode>(), Vars[I]->as<TypeVarNode>()))
        return With[I];
    return T;
  case TypeKind::Tuple: {
    std::vector<Type> F;
    for (const Type &X : T->as<TupleTypeNode>()->fields)
      F.push_back(substVars(X, Vars, With));
    return tupleType(std::move(F));
  }
  case TypeKind::Func: {
    auto *FT = T->as<FuncTypeNode>();
    // Inner type parameters shadow outer ones of the same name.
    std::vector<Type> V, W;
    for (size_t I = 0; I < Vars.size(); ++I) {
      bool Shadowed = false;
      for (const Type &TP : FT->typeParams)
        Shadowed |=
            sameTypeVar(TP->as<TypeVarNode>(), Vars[I]->as<TypeVarNode>());
      if (!Shadowed) {
        V.push_back(Vars[I]);
        W.push_back(With[I]);
      }
    }
    std::vector<Type> P;
    for (const Type &X : FT->params)
      P.push_back(substVars(X, V, W));
    return funcType(std::move(P), substVars(FT->ret, V, W), FT->typeParams);
  }
  case TypeKind::Call: {
    std::vector<Type> A;
    for (const Type &X : T->as<TypeCallNode>()->args)
      A.push_back(substVars(X, Vars, With));
    return typeCall(T->as<TypeCallNode>()->adt, std::move(A));
  }
  default: return T;
  }
}

/// Replaces the symbols bound at a call; unbound or inconsistent ones are `?`.
Type substSymbols(const Type &T,
                  const std::map<std::string, std::optional<Dim>> &Syms) {
  if (!T)
    return T;
  switch (T->kind) {
  case TypeKind::Tensor: {
    auto *TT = T->as<TensorTypeNode>();
    if (!TT->shape)
      return T;
    std::vector<Dim> Out = *TT->shape;
    for (Dim &D : Out) {
      if (!D.isSymbol())
        continue;
      auto It = Syms.find(D.name);
      D = It != Syms.end() && It->second ? *It->second : Dim::any();
    }
    return tensorType(std::move(Out), TT->dtype);
  }
  case TypeKind::Tuple: {
    std::vector<Type> F;
    for (const Type &X : T->as<TupleTypeNode>()->fields)
      F.push_back(substSymbols(X, Syms));
    return tupleType(std::move(F));
  }
  case TypeKind::Func: {
    auto *FT = T->as<FuncTypeNode>();
    std::vector<Type> P;
    for (const Type &X : FT->params)
      P.push_back(substSymbols(X, Syms));
    return funcType(std::move(P), substSymbols(FT->ret, Syms), FT->typeParams);
  }
  case TypeKind::Call: {
    std::vector<Type> A;
    for (const Type &X : T->as<TypeCallNode>()->args)
      A.push_back(substSymbols(X, Syms));
    return typeCall(T->as<TypeCallNode>()->adt, std::move(A));
  }
  default: return T;
  }
}

/// Replaces holes that remain inside a solved type by the empty tuple.
Type defaultHoles(const Type &T) {
  switch (T->kind) {
  case TypeKind::Incomplete: return tupleType({});
  case TypeKind::Tuple: {
    std::vector<Type> F;
    for (const Type &X : T->as<TupleTypeNode>()->fields)
      F.push_back(defaultHoles(X));
    return tupleType(std::move(F));
  }
  case TypeKind::Func: {
    auto *FT = T->as<FuncTypeNode>();
    std::vector<Type> P;
    for (const Type &X : FT->params)
      P.push_back(defaultHoles(X));
    return funcType(std::move(P), defaultHoles(FT->ret), FT->typeParams);
  }
  case TypeKind::Call: {
    std::vector<Type> A;
    for (const Type &X : T->as<TypeCallNode>()->args)
      A.push_back(defaultHoles(X));
    return typeCall(T->as<TypeCallNode>()->adt, std::move(A));
  }
  default: return T;
  }
}

std::string describe(const ExprNode *E) {
  switch (E->kind) {
  case ExprKind::Var:
    return "variable %" + static_cast<const VarNode *>(E)->nameHint;
  case ExprKind::GlobalVar:
    return "global @" + static_cast<const GlobalVarNode *>(E)->name;
  case ExprKind::Constant: return "a constant";
  case ExprKind::Op:
    return "operator '" + static_cast<const OpNode *>(E)->name() + "'";
  case ExprKind::Call: {
    auto *C = static_cast<const CallNode *>(E);
    if (auto *O = C->callee->as<OpNode>())
      return "the call to '" + O->name() + "'";
    if (auto *G = C->callee->as<GlobalVarNode>())
      return "the call to @" + G->name;
    if (auto *K = C->callee->as<ConstructorNode>())
      return "the constructor call " + K->name;
    return "a call";
  }
  case ExprKind::Function: return "a function";
  case ExprKind::Let: return "a let expression";
  case ExprKind::If: return "an if expression";
  case ExprKind::Tuple: return "a tuple";
  case ExprKind::TupleGetItem: return "a tuple item";
  case ExprKind::Constructor:
    return "constructor " + static_cast<const ConstructorNode *>(E)->name;
  case ExprKind::Match: return "a match expression";
  }
  return "an expression";
}

std::string varName(const Var &V) { return "%" + V->nameHint; }

class Driver;

/// Infers one global function (or one closed expression).
class FunctionInferencer {
public:
  FunctionInferencer(const Module &M, Driver &D, std::string Where)
      : M(M), D(D), Where(std::move(Where)) {}

  /// Runs passes over Root until the substitution is stable, then writes
  /// every node's checkedType and returns Root's solved type.
  Type run(const Expr &Root) { return run({{Where, Root}}).front(); }

  /// A global of a recursive group: its name and its FunctionNode.
  using Member = std::pair<std::string, Expr>;

  /// Infers a group of globals without declared return types together (see
  /// the file comment); returns their solved function types.
  std::vector<Type> runGroup(const std::vector<Member> &Members) {
    for (const auto &[Name, Fn] : Members)
      Group.emplace(Name, Fn->as<FunctionNode>());
    std::vector<Member> Roots;
    for (const auto &[Name, Fn] : Members)
      Roots.emplace_back("@" + Name, Fn);
    return run(Roots);
  }

private:
  /// The passes over Roots (each with the name errors in it carry).
  std::vector<Type> run(const std::vector<Member> &Roots) {
    constexpr int MaxPasses = 1000;
    std::vector<Type> Results(Roots.size());
    std::vector<size_t> RootStart(Roots.size()); // its first Recorded entry
    for (int Pass = 0;; ++Pass) {
      if (Pass == MaxPasses)
        error("type inference did not converge after {} passes", MaxPasses);
      S.Changed = false;
      Occ.clear();
      Env.clear();
      Recorded.clear();
      try {
        for (size_t I = 0; I < Roots.size(); ++I) {
          Where = Roots[I].first;
          RootStart[I] = Recorded.size();
          Results[I] = visit(Roots[I].second);
        }
      } catch (const Error &) {
        // An error seen with partial knowledge may go away once the holes
        // are more general; only a pass that changed nothing is final.
        if (!S.Changed)
          throw;
        continue;
      }
      if (!S.Changed)
        break;
    }
    // Only recursive calls use a return hole that nothing else binds; the
    // call's own type would be reported below, less helpfully.
    for (size_t I = 0; I < Roots.size(); ++I) {
      Where = Roots[I].first;
      auto *F = Roots[I].second->as<FunctionNode>();
      if (F && Group.count(Where.substr(1)) &&
          S.resolve(returnHole(*F))->kind == TypeKind::Incomplete)
        error("cannot infer the return type of {}: only its recursive calls "
              "determine it; declare it (def {}(...) -> T)",
              Where, Where);
    }
    // Resolve everything first, then write, so that an error leaves no
    // half-typed function behind.
    std::vector<std::pair<const ExprNode *, Type>> Solved;
    size_t Root = 0;
    for (size_t I = 0; I < Recorded.size(); ++I) {
      while (Root + 1 < Roots.size() && RootStart[Root + 1] <= I)
        ++Root;
      Where = Roots[Root].first;
      auto &[Node, T] = Recorded[I];
      Type R = S.resolve(T);
      if (R->kind == TypeKind::Incomplete)
        error("cannot infer the type of {} (nothing constrains it)",
              describe(Node));
      Solved.emplace_back(Node, defaultHoles(R));
    }
    for (auto &[Node, T] : Solved)
      Node->checkedType = T;
    for (Type &T : Results)
      T = defaultHoles(S.resolve(T));
    return Results;
  }

  using Key = std::tuple<const void *, int, int>;
  struct NodeKey {
    const void *Node;
    int Occurrence;
  };

  const Module &M;
  Driver &D;
  std::string Where;
  Solver S;
  std::map<Key, Type> HoleMap;
  std::unordered_map<const void *, int> Occ;
  std::unordered_map<const VarNode *, Type> Env;
  std::vector<std::pair<const ExprNode *, Type>> Recorded;
  /// The globals inferred together with this one (runGroup), by name.
  std::map<std::string, const FunctionNode *> Group;

  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> Fmt, Args &&...A) {
    throw Error(fmt::format("type error in {}: {}", Where,
                            fmt::format(Fmt, std::forward<Args>(A)...)));
  }

  std::string show(const Type &T) { return typeToString(S.resolve(T)); }

  /// The hole of slot Slot of a node occurrence, the same in every pass.
  Type hole(NodeKey K, int Slot) {
    Type &H = HoleMap[Key{K.Node, K.Occurrence, Slot}];
    if (!H)
      H = incompleteType();
    return H;
  }

  NodeKey keyOf(const void *Node) { return NodeKey{Node, Occ[Node]++}; }

  void record(const ExprNode *N, const Type &T) { Recorded.emplace_back(N, T); }

  /// Expected P vs actual A, with a message built by Ctx on a mismatch.
  template <typename CtxFn>
  void check(const Type &P, const Type &A, CtxFn Ctx,
             std::map<std::string, std::optional<Dim>> *Syms = nullptr) {
    try {
      S.compat(P, A, Syms);
    } catch (const Mismatch &E) {
      error("{}: expected {}, got {} ({})", Ctx(), show(P), show(A), E.what());
    }
  }

  template <typename CtxFn>
  Type joinOrFail(const Type &A, const Type &B, CtxFn Ctx) {
    try {
      return S.join(A, B);
    } catch (const Mismatch &E) {
      error("{}: {} and {} ({})", Ctx(), show(A), show(B), E.what());
    }
  }

  /// Fresh holes for type parameters, keyed by the use site.
  std::vector<Type> instHoles(NodeKey K, size_t N, int SlotBase) {
    std::vector<Type> Hs;
    for (size_t I = 0; I < N; ++I)
      Hs.push_back(hole(K, SlotBase + (int)I));
    return Hs;
  }

  /// A generic function type instantiated with holes of use site K.
  Type instantiate(const Type &FT0, NodeKey K, int SlotBase) {
    auto *FT = FT0->as<FuncTypeNode>();
    if (!FT || FT->typeParams.empty())
      return FT0;
    std::vector<Type> Hs = instHoles(K, FT->typeParams.size(), SlotBase);
    std::vector<Type> P;
    for (const Type &X : FT->params)
      P.push_back(substVars(X, FT->typeParams, Hs));
    return funcType(std::move(P), substVars(FT->ret, FT->typeParams, Hs));
  }

  const TypeData &adtOf(const ConstructorNode &C) {
    const TypeData *TD = M.findTypeData(C.adt);
    if (!TD)
      error("constructor {} belongs to type '{}', which the module does not "
            "define",
            C.name, C.adt);
    return *TD;
  }

  /// A constructor instantiated at K: its field types and its ADT type.
  std::pair<std::vector<Type>, Type> instCtor(const ConstructorNode &C,
                                              NodeKey K, int SlotBase) {
    const TypeData &TD = adtOf(C);
    std::vector<Type> Hs = instHoles(K, TD.typeParams.size(), SlotBase);
    std::vector<Type> Fields;
    for (const Type &X : C.inputs)
      Fields.push_back(substVars(X, TD.typeParams, Hs));
    return {std::move(Fields), typeCall(TD.name, Hs)};
  }

  Type globalSig(const std::string &Name, NodeKey K);

  /// The hole of F's return type: the one visitFunction uses for F as a
  /// root (its first and only occurrence in a pass).
  Type returnHole(const FunctionNode &F) { return hole(NodeKey{&F, 0}, 0); }

  Type visit(const Expr &E) {
    if (!E)
      error("a null expression");
    Type T = visitInner(E);
    record(E.get(), T);
    return T;
  }

  Type visitInner(const Expr &E) {
    NodeKey K = keyOf(E.get());
    switch (E->kind) {
    case ExprKind::Var: {
      auto *V = E->as<VarNode>();
      auto It = Env.find(V);
      if (It == Env.end())
        error("variable %{} is used outside of its scope", V->nameHint);
      return It->second;
    }
    case ExprKind::GlobalVar:
      return instantiate(globalSig(E->as<GlobalVarNode>()->name, K), K, 0);
    case ExprKind::Constant: {
      const Tensor &T = E->as<ConstantNode>()->value;
      if (!T.defined())
        error("a constant without a value");
      std::vector<Dim> Dims;
      for (int64_t X : T.shape())
        Dims.push_back(Dim::constant(X));
      return tensorType(std::move(Dims), T.dtype());
    }
    case ExprKind::Op:
      error("operator '{}' is used as a value; operators can only be called",
            E->as<OpNode>()->name());
    case ExprKind::Call: return visitCall(*E->as<CallNode>(), K);
    case ExprKind::Function: return visitFunction(*E->as<FunctionNode>(), K);
    case ExprKind::Let: return visitLet(E);
    case ExprKind::If: {
      auto *I = E->as<IfNode>();
      Type C = visit(I->cond);
      checkCond(C);
      Type T = visit(I->thenBranch);
      Type F = visit(I->elseBranch);
      Type H = hole(K, 0);
      S.flow(H, T);
      try {
        return S.flow(H, F);
      } catch (const Mismatch &E) {
        error("the branches of 'if' have different types: {} and {} ({})",
              show(T), show(F), E.what());
      }
    }
    case ExprKind::Tuple: {
      std::vector<Type> F;
      for (const Expr &X : E->as<TupleNode>()->fields)
        F.push_back(visit(X));
      return tupleType(std::move(F));
    }
    case ExprKind::TupleGetItem: {
      auto *G = E->as<TupleGetItemNode>();
      Type T = S.shallow(visit(G->tuple));
      if (T->kind == TypeKind::Incomplete)
        return hole(K, 0); // not known yet; a later pass will see the tuple
      auto *TT = T->as<TupleTypeNode>();
      if (!TT)
        error("tuple item .{} of a value that is not a tuple: {}", G->index,
              show(T));
      if (G->index < 0 || G->index >= (int64_t)TT->fields.size())
        error("tuple index {} is out of range for {} ({} fields)", G->index,
              show(T), TT->fields.size());
      return TT->fields[G->index];
    }
    case ExprKind::Constructor: {
      auto *C = E->as<ConstructorNode>();
      auto [Fields, Adt] = instCtor(*C, K, 0);
      if (Fields.empty())
        return Adt;
      return funcType(std::move(Fields), Adt);
    }
    case ExprKind::Match: return visitMatch(*E->as<MatchNode>(), K);
    }
    error("an expression of unknown kind");
  }

  void checkCond(const Type &C0) {
    Type C = S.shallow(C0);
    if (C->kind == TypeKind::Incomplete) {
      S.join(C, scalarType(DType::Bool));
      return;
    }
    auto *T = C->as<TensorTypeNode>();
    if (!T || (T->shape && !T->shape->empty()))
      error("the condition of 'if' must be a scalar (rank-0) tensor, got {}",
            show(C));
  }

  void bind(const Var &V, const Type &T) {
    Env[V.get()] = T;
    record(V.get(), T);
  }

  /// The type a binding site gives V: its annotation (checked against
  /// Value when given) or a hole.
  Type bindingType(const Var &V, NodeKey K, int Slot) {
    return V->typeAnnotation ? V->typeAnnotation : hole(K, Slot);
  }

  Type visitFunction(const FunctionNode &F, NodeKey K) {
    std::vector<Type> Params;
    std::vector<std::pair<const VarNode *, std::optional<Type>>> Saved;
    for (size_t I = 0; I < F.params.size(); ++I) {
      const Var &P = F.params[I];
      Type T = bindingType(P, K, 1 + (int)I);
      Params.push_back(T);
      auto It = Env.find(P.get());
      Saved.emplace_back(P.get(), It == Env.end()
                                      ? std::nullopt
                                      : std::optional<Type>(It->second));
      bind(P, T);
    }
    Type Ret = F.retType ? F.retType : hole(K, 0);
    Type Body = visit(F.body);
    check(Ret, Body, [] {
      return std::string("the function body does not match its return type");
    });
    for (auto It = Saved.rbegin(); It != Saved.rend(); ++It) {
      if (It->second)
        Env[It->first] = *It->second;
      else
        Env.erase(It->first);
    }
    return funcType(std::move(Params), Ret, F.typeParams);
  }

  // Let chains are walked iteratively (programs may nest 100,000 lets).
  /// Annotation VT with each `?` extent of a tensor annotation taken from
  /// the value's type T where T knows it: `?` in an annotation says
  /// nothing, and T is as sound. (ONNX value_info names extents an exporter
  /// could not relate; the importer makes those `?`, and the variable keeps
  /// what inference knows: `batch`, a constant.)
  Type refineAnnotation(const Type &VT, const Type &T) {
    const auto *A = VT ? VT->as<TensorTypeNode>() : nullptr;
    Type R = S.resolve(T);
    const auto *B = R ? R->as<TensorTypeNode>() : nullptr;
    if (!A || !B || !A->shape || !B->shape || A->dtype != B->dtype ||
        A->shape->size() != B->shape->size())
      return VT;
    std::vector<Dim> Dims = *A->shape;
    bool Changed = false;
    for (size_t I = 0; I < Dims.size(); ++I)
      if (Dims[I].isAny() && !(*B->shape)[I].isAny()) {
        Dims[I] = (*B->shape)[I];
        Changed = true;
      }
    return Changed ? tensorType(std::move(Dims), A->dtype) : VT;
  }

  Type visitLet(const Expr &E) {
    std::vector<std::pair<const LetNode *, std::optional<Type>>> Chain;
    Expr Cur = E;
    bool First = true;
    while (auto *L = Cur->as<LetNode>()) {
      NodeKey K = First ? NodeKey{L, Occ[L] - 1} : keyOf(L);
      First = false;
      const Var &V = L->var;
      auto Prev = Env.find(V.get());
      Chain.emplace_back(L, Prev == Env.end()
                                ? std::nullopt
                                : std::optional<Type>(Prev->second));
      Type VT = bindingType(V, K, 0);
      auto Ctx = [&] { return fmt::format("let {}", varName(V)); };
      if (L->value && L->value->kind == ExprKind::Function) {
        bind(V, VT); // a let-bound function may call itself
        Type FT = visit(L->value);
        check(VT, FT, Ctx);
      } else {
        Type T = visit(L->value);
        check(VT, T, Ctx);
        bind(V, refineAnnotation(VT, T));
      }
      Cur = L->body;
    }
    Type Body = visit(Cur);
    for (auto It = Chain.rbegin(); It != Chain.rend(); ++It) {
      const VarNode *V = It->first->var.get();
      if (It->second)
        Env[V] = *It->second;
      else
        Env.erase(V);
      // The inner lets of the chain are recorded here (the outer one by visit).
      if (It->first != E.get())
        record(It->first, Body);
    }
    return Body;
  }

  Type visitCall(const CallNode &C, NodeKey K) {
    const Expr &Callee = C.callee;
    if (auto *O = Callee->as<OpNode>())
      return visitOpCall(C, *O, K);
    if (!C.attrs.empty())
      error("attributes are only allowed on operator calls");
    if (auto *G = Callee->as<GlobalVarNode>()) {
      Type Sig = instantiate(globalSig(G->name, K), K, 100);
      record(Callee.get(), Sig);
      auto *FT = Sig->as<FuncTypeNode>();
      if (FT->params.size() != C.args.size())
        error("call to @{} expects {} argument{}, got {}", G->name,
              FT->params.size(), FT->params.size() == 1 ? "" : "s",
              C.args.size());
      std::map<std::string, std::optional<Dim>> Syms;
      for (size_t I = 0; I < C.args.size(); ++I) {
        Type A = visit(C.args[I]);
        check(
            FT->params[I], A,
            [&] {
              return fmt::format("call to @{}, argument {}", G->name, I + 1);
            },
            &Syms);
      }
      return substSymbols(FT->ret, Syms);
    }
    if (auto *Ctor = Callee->as<ConstructorNode>()) {
      auto [Fields, Adt] = instCtor(*Ctor, K, 100);
      record(Callee.get(), Fields.empty() ? Adt : funcType(Fields, Adt));
      if (Fields.size() != C.args.size())
        error("constructor {} expects {} argument{}, got {}", Ctor->name,
              Fields.size(), Fields.size() == 1 ? "" : "s", C.args.size());
      for (size_t I = 0; I < C.args.size(); ++I) {
        Type A = visit(C.args[I]);
        check(Fields[I], A, [&] {
          return fmt::format("constructor {}, argument {}", Ctor->name, I + 1);
        });
      }
      return Adt;
    }
    // A closure-valued expression.
    Type CT = S.shallow(visit(Callee));
    if (CT->kind == TypeKind::Incomplete) {
      std::vector<Type> Ps = instHoles(K, C.args.size(), 1);
      Type Shape = funcType(Ps, hole(K, 0));
      S.join(CT, Shape);
      CT = Shape;
    }
    auto *FT0 = CT->as<FuncTypeNode>();
    if (!FT0)
      error("cannot call a value of type {}: it is not a function", show(CT));
    Type Inst = instantiate(CT, K, 100);
    auto *FT = Inst->as<FuncTypeNode>();
    if (FT->params.size() != C.args.size())
      error("call of a function of type {} with {} argument{}", show(CT),
            C.args.size(), C.args.size() == 1 ? "" : "s");
    for (size_t I = 0; I < C.args.size(); ++I) {
      Type A = visit(C.args[I]);
      check(FT->params[I], A, [&] {
        return fmt::format("call of a closure, argument {}", I + 1);
      });
    }
    return FT->ret;
  }

  Type visitOpCall(const CallNode &C, const OpNode &O, NodeKey K) {
    const OpInfo &Info = *O.info;
    std::vector<Type> Args;
    for (const Expr &A : C.args)
      Args.push_back(visit(A));
    if (Info.numInputs >= 0 && (size_t)Info.numInputs != C.args.size())
      error("call to '{}' expects {} argument{}, got {}", Info.name,
            Info.numInputs, Info.numInputs == 1 ? "" : "s", C.args.size());
    if (!Info.relation)
      error("operator '{}' has no type relation", Info.name);
    std::vector<Type> Resolved;
    for (const Type &T : Args)
      Resolved.push_back(S.resolve(T));
    Type R;
    try {
      R = Info.relation(Resolved, C.attrs);
    } catch (const ArgError &E) {
      error("call to '{}', argument {}: {}", Info.name, E.ArgIndex + 1,
            E.what());
    } catch (const Error &E) {
      error("call to '{}': {}", Info.name, E.what());
    }
    Type H = hole(K, 0);
    if (R)
      joinOrFail(H, R, [&] {
        return fmt::format(
            "call to '{}': its result conflicts with the type its "
            "uses require",
            Info.name);
      });
    record(C.callee.get(), funcType(Args, H));
    return H;
  }

  Type visitMatch(const MatchNode &Mt, NodeKey K) {
    Type Data = visit(Mt.data);
    if (Mt.clauses.empty())
      error("a match expression without clauses");
    Type Result = hole(K, 0);
    int Slot = 0;
    for (size_t I = 0; I < Mt.clauses.size(); ++I) {
      const Clause &Cl = Mt.clauses[I];
      std::vector<std::pair<const VarNode *, std::optional<Type>>> Saved;
      bindPattern(Cl.lhs, Data, K, Slot, Saved);
      Type T = visit(Cl.rhs);
      try {
        S.flow(Result, T);
      } catch (const Mismatch &E) {
        error("clause {} of 'match' has a type different from the previous "
              "clauses: {} and {} ({})",
              I + 1, show(T), show(Result), E.what());
      }
      for (auto It = Saved.rbegin(); It != Saved.rend(); ++It) {
        if (It->second)
          Env[It->first] = *It->second;
        else
          Env.erase(It->first);
      }
    }
    return Result;
  }

  void bindPattern(
      const Pattern &P, const Type &T, NodeKey K, int &Slot,
      std::vector<std::pair<const VarNode *, std::optional<Type>>> &Saved) {
    if (!P)
      error("a null pattern");
    switch (P->kind) {
    case PatternKind::Wildcard: return;
    case PatternKind::Var: {
      const Var &V = P->var;
      Type VT = T;
      if (V->typeAnnotation) {
        check(V->typeAnnotation, T,
              [&] { return fmt::format("pattern variable {}", varName(V)); });
        VT = V->typeAnnotation;
      }
      auto It = Env.find(V.get());
      Saved.emplace_back(V.get(), It == Env.end()
                                      ? std::nullopt
                                      : std::optional<Type>(It->second));
      bind(V, VT);
      return;
    }
    case PatternKind::Constructor: {
      const ConstructorNode &C = *P->ctor;
      auto [Fields, Adt] = instCtor(C, K, 1000 + Slot);
      Slot += (int)adtOf(C).typeParams.size();
      try {
        S.compat(Adt, T, nullptr);
      } catch (const Mismatch &) {
        error("pattern {} (of type '{}') cannot match a value of type {}",
              C.name, C.adt, show(T));
      }
      if (Fields.size() != P->children.size())
        error("pattern {} has {} field{}, the constructor takes {}", C.name,
              P->children.size(), P->children.size() == 1 ? "" : "s",
              Fields.size());
      for (size_t I = 0; I < Fields.size(); ++I)
        bindPattern(P->children[I], Fields[I], K, Slot, Saved);
      return;
    }
    case PatternKind::Tuple: {
      Type ST = S.shallow(T);
      if (ST->kind == TypeKind::Incomplete) {
        std::vector<Type> Hs;
        for (size_t I = 0; I < P->children.size(); ++I)
          Hs.push_back(hole(K, 1000 + Slot++));
        ST = tupleType(Hs);
        S.join(T, ST);
      }
      auto *TT = ST->as<TupleTypeNode>();
      if (!TT)
        error("a tuple pattern cannot match a value of type {}", show(ST));
      if (TT->fields.size() != P->children.size())
        error("a tuple pattern with {} fields cannot match {}",
              P->children.size(), show(ST));
      for (size_t I = 0; I < TT->fields.size(); ++I)
        bindPattern(P->children[I], TT->fields[I], K, Slot, Saved);
      return;
    }
    }
  }
};

/// Owns the signatures of the module's globals: declared ones directly,
/// missing return types by inferring the global (with its recursive group)
/// on demand.
class Driver {
public:
  explicit Driver(const Module &M) : M(M) {}

  Type signature(const std::string &Name, const std::string &Where) {
    if (!M.hasFunction(Name))
      throw Error(
          fmt::format("type error in {}: call to unknown global function @{}",
                      Where, Name));
    auto *F = M.function(Name)->as<FunctionNode>();
    checkParams(Name);
    if (!F->retType)
      return infer(Name);
    std::vector<Type> Params;
    for (const Var &P : F->params)
      Params.push_back(P->typeAnnotation);
    return funcType(std::move(Params), F->retType, F->typeParams);
  }

  /// Infers (once) global Name and returns its solved function type.
  Type infer(const std::string &Name) {
    auto It = Done.find(Name);
    if (It != Done.end())
      return It->second;
    checkParams(Name);
    const Expr &F = M.function(Name);
    if (F->as<FunctionNode>()->retType) {
      Type T = FunctionInferencer(M, *this, "@" + Name).run(F);
      Done[Name] = T;
      return T;
    }
    // A call from inside the group never comes here (the group's inferencer
    // answers it), nor from a group in progress (groups are components).
    std::vector<FunctionInferencer::Member> Members;
    for (const std::string &G : groupOf(Name)) {
      checkParams(G);
      RIVET_CHECK(!InProgress.count(G), "type inference re-entered @{}", G);
      Members.emplace_back(G, M.function(G));
    }
    for (const auto &[G, _] : Members)
      InProgress.insert(G);
    std::vector<Type> Ts;
    try {
      Ts = FunctionInferencer(M, *this, "@" + Name).runGroup(Members);
    } catch (...) {
      for (const auto &[G, _] : Members)
        InProgress.erase(G);
      throw;
    }
    for (size_t I = 0; I < Members.size(); ++I) {
      InProgress.erase(Members[I].first);
      Done[Members[I].first] = Ts[I];
    }
    return Done.at(Name);
  }

private:
  const Module &M;
  std::map<std::string, Type> Done;
  std::set<std::string> InProgress;
  /// The component of each global without a declared return type in the
  /// call graph of such globals (computed on first use).
  std::map<std::string, std::shared_ptr<std::vector<std::string>>> Groups;

  void checkParams(const std::string &Name) const {
    for (const Var &P : M.function(Name)->as<FunctionNode>()->params)
      if (!P->typeAnnotation)
        throw Error(fmt::format(
            "type error in @{}: parameter %{} of a global function needs a "
            "type annotation (globals are typed by their declared signature)",
            Name, P->nameHint));
  }

  bool untyped(const std::string &Name) const {
    if (!M.hasFunction(Name))
      return false;
    auto *F = M.function(Name)->as<FunctionNode>();
    return F && !F->retType;
  }

  /// The globals without a declared return type that Name refers to.
  std::vector<std::string> untypedCallees(const std::string &Name) const {
    struct Collector : ExprVisitor {
      std::set<std::string> Names;
      void visitGlobalVar(const GlobalVarNode &N) override {
        Names.insert(N.name);
      }
    } C;
    C.visit(M.function(Name));
    std::vector<std::string> Out;
    for (const std::string &G : C.Names)
      if (untyped(G))
        Out.push_back(G);
    return Out;
  }

  /// Name's group, in module order (Tarjan's algorithm over every global
  /// without a declared return type, run once).
  const std::vector<std::string> &groupOf(const std::string &Name) {
    if (Groups.empty()) {
      std::map<std::string, int> Index, Low;
      std::vector<std::string> Stack;
      std::set<std::string> OnStack;
      int Counter = 0;
      std::function<void(const std::string &)> Connect =
          [&](const std::string &V) {
            Index[V] = Low[V] = Counter++;
            Stack.push_back(V);
            OnStack.insert(V);
            for (const std::string &W : untypedCallees(V)) {
              if (!Index.count(W)) {
                Connect(W);
                Low[V] = std::min(Low[V], Low[W]);
              } else if (OnStack.count(W)) {
                Low[V] = std::min(Low[V], Index[W]);
              }
            }
            if (Low[V] != Index[V])
              return;
            auto G = std::make_shared<std::vector<std::string>>();
            std::string W;
            do {
              W = Stack.back();
              Stack.pop_back();
              OnStack.erase(W);
              Groups[W] = G;
            } while (W != V);
          };
      for (const std::string &F : M.functionNames())
        if (untyped(F) && !Index.count(F))
          Connect(F);
      for (const std::string &F : M.functionNames())
        if (untyped(F))
          Groups.at(F)->push_back(F);
    }
    return *Groups.at(Name);
  }
};

Type FunctionInferencer::globalSig(const std::string &Name, NodeKey K) {
  auto It = Group.find(Name);
  if (It == Group.end())
    return D.signature(Name, Where);
  // A member of this group: its declared parameters and its return type as
  // inferred so far. The snapshot is re-taken every pass, so the solution
  // reached is a fixed point; a use-site hole stands in while nothing is
  // known (not the return hole itself, which would let this use's context
  // decide the callee's type).
  const FunctionNode &F = *It->second;
  std::vector<Type> Params;
  for (const Var &P : F.params)
    Params.push_back(P->typeAnnotation);
  Type Ret = S.resolve(returnHole(F));
  if (Ret->kind == TypeKind::Incomplete)
    Ret = hole(K, -1);
  return funcType(std::move(Params), Ret, F.typeParams);
}

} // namespace

void inferTypes(Module &M) {
  Driver D(M);
  for (const std::string &Name : M.functionNames())
    D.infer(Name);
}

Type inferType(const Expr &E, const Module &M) {
  Driver D(M);
  FunctionInferencer FI(M, D, "the expression");
  return FI.run(E);
}

} // namespace rivet::ir
