//===- Expr.h - Expressions of the IR ---------------------------*- C++ -*-===//
//
// The functional IR: Var, GlobalVar, Constant, Op, Call, Function, Let, If,
// Tuple, TupleGetItem, Constructor and Match with Patterns. Nodes are
// immutable and shared (mutation is by rebuilding); the only mutable slot is
// checkedType, which type inference fills in.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Type.h"
#include "kernels/Attrs.h"
#include "kernels/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace rivet::ir {

struct OpInfo;

enum class ExprKind : uint8_t {
  Var,
  GlobalVar,
  Constant,
  Op,
  Call,
  Function,
  Let,
  If,
  Tuple,
  TupleGetItem,
  Constructor,
  Match,
};

class ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

class ExprNode {
public:
  const ExprKind kind;
  /// Filled in by type inference; null before.
  mutable Type checkedType;
  virtual ~ExprNode() = default;
  template <typename T> const T *as() const {
    return kind == T::Kind ? static_cast<const T *>(this) : nullptr;
  }

protected:
  explicit ExprNode(ExprKind K) : kind(K) {}
};

/// A local variable. Identity is by node (pointer); nameHint is only for
/// printing. typeAnnotation may be null (to be inferred).
class VarNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::Var;
  std::string nameHint;
  Type typeAnnotation;
  VarNode(std::string N, Type T)
      : ExprNode(Kind), nameHint(std::move(N)), typeAnnotation(std::move(T)) {}
};
using Var = std::shared_ptr<const VarNode>;

/// A reference to a global function of the Module, by name (@name).
class GlobalVarNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::GlobalVar;
  std::string name;
  explicit GlobalVarNode(std::string N) : ExprNode(Kind), name(std::move(N)) {}
};

class ConstantNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::Constant;
  Tensor value;
  explicit ConstantNode(Tensor V) : ExprNode(Kind), value(std::move(V)) {}
};

/// A primitive operator, by registry entry.
class OpNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::Op;
  const OpInfo *info;
  explicit OpNode(const OpInfo *I) : ExprNode(Kind), info(I) {}
  const std::string &name() const;
};

/// A call of an Op (with attrs), a Function, a GlobalVar, a closure-valued
/// expression, or a Constructor.
class CallNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::Call;
  Expr callee;
  std::vector<Expr> args;
  Attrs attrs; // only for Op callees
  /// Where the call comes from (ir/Origin.h); "" when unknown.
  std::string origin;
  /// When it stands for several source calls (a library kernel that
  /// replaced a fused group): their origins, in order; else empty.
  std::vector<std::string> covers;
  CallNode(Expr C, std::vector<Expr> A, Attrs At = {})
      : ExprNode(Kind), callee(std::move(C)), args(std::move(A)),
        attrs(std::move(At)) {}
};

/// fn[typeParams](params) -> retType { body }. A function literal that
/// refers to free variables is a closure. retType may be null (inferred).
/// A function with the attribute "Primitive" is a fused kernel (later issues).
class FunctionNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::Function;
  std::vector<Var> params;
  Expr body;
  Type retType;
  std::vector<Type> typeParams; // TypeVarNodes
  Attrs attrs;
  FunctionNode(std::vector<Var> P, Expr B, Type R, std::vector<Type> TP = {},
               Attrs A = {})
      : ExprNode(Kind), params(std::move(P)), body(std::move(B)),
        retType(std::move(R)), typeParams(std::move(TP)), attrs(std::move(A)) {}
};

/// let var = value; body. The var is in scope in value too when value is a
/// Function (a recursive local function).
class LetNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::Let;
  Var var;
  Expr value;
  Expr body;
  LetNode(Var V, Expr Val, Expr B)
      : ExprNode(Kind), var(std::move(V)), value(std::move(Val)),
        body(std::move(B)) {}
  /// Releases a chain of lets iteratively: a long chain (a big imported
  /// graph) must not overflow the stack when it dies.
  ~LetNode() override;
};

/// if (cond) { then } else { else }; cond is a bool (or numeric, nonzero)
/// scalar tensor.
class IfNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::If;
  Expr cond, thenBranch, elseBranch;
  IfNode(Expr C, Expr T, Expr E)
      : ExprNode(Kind), cond(std::move(C)), thenBranch(std::move(T)),
        elseBranch(std::move(E)) {}
};

class TupleNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::Tuple;
  std::vector<Expr> fields;
  explicit TupleNode(std::vector<Expr> F)
      : ExprNode(Kind), fields(std::move(F)) {}
};

class TupleGetItemNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::TupleGetItem;
  Expr tuple;
  int64_t index;
  TupleGetItemNode(Expr T, int64_t I)
      : ExprNode(Kind), tuple(std::move(T)), index(I) {}
};

/// A constructor of an ADT, e.g. Cons. Called like a function. adt names the
/// TypeData in the Module; tag is the constructor's index in it.
class ConstructorNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::Constructor;
  std::string name;
  std::string adt;
  int64_t tag;
  std::vector<Type> inputs; // field types, may mention the ADT's type params
  ConstructorNode(std::string N, std::string Adt, int64_t Tag,
                  std::vector<Type> In)
      : ExprNode(Kind), name(std::move(N)), adt(std::move(Adt)), tag(Tag),
        inputs(std::move(In)) {}
};
using Constructor = std::shared_ptr<const ConstructorNode>;

// Patterns of match clauses.
enum class PatternKind : uint8_t { Wildcard, Var, Constructor, Tuple };
class PatternNode;
using Pattern = std::shared_ptr<const PatternNode>;
class PatternNode {
public:
  PatternKind kind;
  Var var;                       // Var
  Constructor ctor;              // Constructor
  std::vector<Pattern> children; // Constructor fields or Tuple fields
  static Pattern wildcard();
  static Pattern bind(Var V);
  static Pattern constructor(Constructor C, std::vector<Pattern> Fields);
  static Pattern tuple(std::vector<Pattern> Fields);
};

struct Clause {
  Pattern lhs;
  Expr rhs;
};

/// match (data) { lhs => rhs, ... }; the first matching clause wins; no match
/// is a run-time error.
class MatchNode : public ExprNode {
public:
  static constexpr ExprKind Kind = ExprKind::Match;
  Expr data;
  std::vector<Clause> clauses;
  MatchNode(Expr D, std::vector<Clause> C)
      : ExprNode(Kind), data(std::move(D)), clauses(std::move(C)) {}
};

// Builders. op() looks the operator up in the registry (throws when unknown).
Var var(std::string NameHint, Type Annotation = nullptr);
Expr globalVar(std::string Name);
Expr constant(Tensor Value);
Expr op(const std::string &Name);
/// A call with the current origin (ir/Origin.h).
Expr call(Expr Callee, std::vector<Expr> Args, Attrs A = {});
/// call(op(Name), Args, A)
Expr callOp(const std::string &Name, std::vector<Expr> Args, Attrs A = {});
Expr function(std::vector<Var> Params, Expr Body, Type RetType = nullptr,
              std::vector<Type> TypeParams = {}, Attrs A = {});
Expr let(Var V, Expr Value, Expr Body);
Expr ifThenElse(Expr Cond, Expr Then, Expr Else);
Expr tuple(std::vector<Expr> Fields);
Expr tupleGetItem(Expr Tuple, int64_t Index);
Expr match(Expr Data, std::vector<Clause> Clauses);

} // namespace rivet::ir
