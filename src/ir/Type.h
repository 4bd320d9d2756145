//===- Type.h - Types of the IR ---------------------------------*- C++ -*-===//
//
// TensorType with partially known shapes, TupleType, FuncType (with type
// parameters), TypeVar, TypeCall (an ADT applied to arguments, e.g.
// List[Tensor[(?), float32]]) and IncompleteType (a hole during inference).
// Types are immutable and shared; compare them with structuralEqual.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/DType.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivet::ir {

/// One dimension of a tensor type.
struct Dim {
  enum class Kind : uint8_t {
    Const,  // a known extent
    Symbol, // a named symbolic extent (e.g. "n" from an ONNX dim_param)
    Any,    // unknown: "?"
  };
  Kind kind = Kind::Any;
  int64_t value = 0; // Const only
  std::string name;  // Symbol only

  static Dim constant(int64_t V) { return {Kind::Const, V, {}}; }
  static Dim symbol(std::string N) { return {Kind::Symbol, 0, std::move(N)}; }
  static Dim any() { return {}; }
  bool isConst() const { return kind == Kind::Const; }
  bool isSymbol() const { return kind == Kind::Symbol; }
  bool isAny() const { return kind == Kind::Any; }
  bool operator==(const Dim &O) const {
    return kind == O.kind && value == O.value && name == O.name;
  }
  /// "3", "n" or "?".
  std::string str() const;
};

enum class TypeKind : uint8_t { Tensor, Tuple, Func, Var, Call, Incomplete };

class TypeNode;
using Type = std::shared_ptr<const TypeNode>;

class TypeNode {
public:
  const TypeKind kind;
  virtual ~TypeNode() = default;
  /// Downcast; null when the kind differs.
  template <typename T> const T *as() const {
    return kind == T::Kind ? static_cast<const T *>(this) : nullptr;
  }

protected:
  explicit TypeNode(TypeKind K) : kind(K) {}
};

/// Tensor[(d0, d1, ...), dtype]; an unknown rank is shape == nullopt
/// (printed Tensor[?, dtype]).
class TensorTypeNode : public TypeNode {
public:
  static constexpr TypeKind Kind = TypeKind::Tensor;
  std::optional<std::vector<Dim>> shape;
  DType dtype;
  TensorTypeNode(std::optional<std::vector<Dim>> S, DType T)
      : TypeNode(Kind), shape(std::move(S)), dtype(T) {}
  bool hasKnownRank() const { return shape.has_value(); }
  /// True when the rank and every dimension are constants.
  bool isStatic() const;
};

class TupleTypeNode : public TypeNode {
public:
  static constexpr TypeKind Kind = TypeKind::Tuple;
  std::vector<Type> fields;
  explicit TupleTypeNode(std::vector<Type> F)
      : TypeNode(Kind), fields(std::move(F)) {}
};

/// A type variable, bound by a FuncType's or a TypeData's type parameters.
/// Identity is by node (pointer); the name is for printing.
class TypeVarNode : public TypeNode {
public:
  static constexpr TypeKind Kind = TypeKind::Var;
  std::string name;
  explicit TypeVarNode(std::string N) : TypeNode(Kind), name(std::move(N)) {}
};

/// fn[A, B](params) -> ret
class FuncTypeNode : public TypeNode {
public:
  static constexpr TypeKind Kind = TypeKind::Func;
  std::vector<Type> params;
  Type ret;
  std::vector<Type> typeParams; // TypeVarNodes
  FuncTypeNode(std::vector<Type> P, Type R, std::vector<Type> TP = {})
      : TypeNode(Kind), params(std::move(P)), ret(std::move(R)),
        typeParams(std::move(TP)) {}
};

/// An algebraic data type applied to type arguments: List[A],
/// Option[Tensor...]. The ADT is named by its global type name (resolved
/// through the Module).
class TypeCallNode : public TypeNode {
public:
  static constexpr TypeKind Kind = TypeKind::Call;
  std::string adt;
  std::vector<Type> args;
  TypeCallNode(std::string Adt, std::vector<Type> A)
      : TypeNode(Kind), adt(std::move(Adt)), args(std::move(A)) {}
};

/// A placeholder that type inference solves; never appears in a checked module.
class IncompleteTypeNode : public TypeNode {
public:
  static constexpr TypeKind Kind = TypeKind::Incomplete;
  explicit IncompleteTypeNode(int64_t Id) : TypeNode(Kind), id(Id) {}
  int64_t id;
};

// Constructors.
Type tensorType(std::vector<Dim> Shape, DType T);
Type tensorTypeUnknownRank(DType T);
Type scalarType(DType T);
Type tupleType(std::vector<Type> Fields);
Type funcType(std::vector<Type> Params, Type Ret,
              std::vector<Type> TypeParams = {});
Type typeVar(std::string Name);
Type typeCall(std::string Adt, std::vector<Type> Args);
Type incompleteType();

/// Human-readable, same syntax as the text format.
std::string typeToString(const Type &T);

} // namespace rivet::ir
