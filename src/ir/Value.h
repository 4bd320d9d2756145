//===- Value.h - Run-time values of the reference interpreter ---*- C++ -*-===//
//
// A Value is a tensor, a tuple of values, a closure (a FunctionNode plus the
// values of its free variables), an ADT value (constructor + fields) or a
// constructor used as a function value. Values are immutable, reference
// counted and cheap to copy. Destruction of long chains (a List of a million
// elements, closures capturing closures) is iterative, so dropping a value
// never overflows the native stack.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Expr.h"
#include "kernels/Tensor.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rivet::ir {

enum class ValueKind : uint8_t { Tensor, Tuple, Closure, ADT, ConstructorFn };

class ValueNode;

/// A shared handle to an immutable ValueNode; a default-constructed Value is
/// "undefined" (no node).
class Value {
public:
  Value() = default;
  /// Implicit from a tensor: tensors are the common case.
  Value(Tensor T);

  bool defined() const { return Node != nullptr; }
  ValueKind kind() const;
  bool isTensor() const { return defined() && kind() == ValueKind::Tensor; }
  bool isTuple() const { return defined() && kind() == ValueKind::Tuple; }
  bool isClosure() const { return defined() && kind() == ValueKind::Closure; }
  bool isADT() const { return defined() && kind() == ValueKind::ADT; }
  bool isConstructorFn() const {
    return defined() && kind() == ValueKind::ConstructorFn;
  }

  /// The tensor; throws rivet::Error naming What when the value is not one.
  const Tensor &tensor(const std::string &What = "value") const;
  /// Fields of a tuple or an ADT value (empty for other kinds).
  const std::vector<Value> &fields() const;
  /// The constructor of an ADT value or a constructor function value.
  const Constructor &ctor() const;
  const ValueNode &node() const { return *Node; }
  /// Number of Values sharing the node (0 when undefined).
  long useCount() const { return Node.use_count(); }

  /// Builders.
  static Value tuple(std::vector<Value> Fields);
  static Value adt(Constructor C, std::vector<Value> Fields);
  static Value constructorFn(Constructor C);
  /// A closure of Fn (a FunctionNode). Captured are the values of its free
  /// variables; SelfVar (may be null) is the let-bound name under which the
  /// function refers to itself: it is bound to the closure at each call
  /// instead of being captured, so recursive closures form no reference cycle.
  static Value closure(Expr Fn,
                       std::vector<std::pair<const VarNode *, Value>> Captured,
                       Var SelfVar, std::string Name);

private:
  std::shared_ptr<ValueNode> Node;
};

/// The node behind a Value. Only the fields of its kind are set.
class ValueNode {
public:
  ValueKind kind;
  Tensor tensor;             // Tensor
  std::vector<Value> fields; // Tuple, ADT
  Constructor ctor;          // ADT, ConstructorFn
  Expr fn;                   // Closure: the FunctionNode
  std::vector<std::pair<const VarNode *, Value>> captured; // Closure
  Var selfVar;      // Closure: recursive let binding or null
  std::string name; // Closure: "@f", "%loop in @main", ...

  explicit ValueNode(ValueKind K) : kind(K) {}
  ~ValueNode();
  ValueNode(const ValueNode &) = delete;
  ValueNode &operator=(const ValueNode &) = delete;

  const FunctionNode *function() const { return fn->as<FunctionNode>(); }
};

/// A short human-readable rendering for messages: tensors by type (small
/// scalars with their value), tuples, ADTs as Cons(..., Nil); long or deep
/// values are elided with "...".
std::string valueToString(const Value &V);

} // namespace rivet::ir
