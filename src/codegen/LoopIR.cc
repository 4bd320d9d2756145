//===- LoopIR.cc - Builders and printer of the loop-level IR --------------===//

#include "codegen/LoopIR.h"

#include "kernels/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace rivet::codegen {

const char *loopOpName(LoopOp Op) {
  switch (Op) {
  case LoopOp::Add: return "add";
  case LoopOp::Sub: return "sub";
  case LoopOp::Mul: return "mul";
  case LoopOp::Div: return "div";
  case LoopOp::Rem: return "rem";
  case LoopOp::Min: return "min";
  case LoopOp::Max: return "max";
  case LoopOp::Neg: return "neg";
  case LoopOp::Abs: return "abs";
  case LoopOp::Not: return "not";
  case LoopOp::And: return "and";
  case LoopOp::Or: return "or";
  case LoopOp::Xor: return "xor";
  case LoopOp::Shl: return "shl";
  case LoopOp::Shr: return "shr";
  case LoopOp::EQ: return "eq";
  case LoopOp::NE: return "ne";
  case LoopOp::LT: return "lt";
  case LoopOp::LE: return "le";
  case LoopOp::GT: return "gt";
  case LoopOp::GE: return "ge";
  case LoopOp::Select: return "select";
  case LoopOp::Cast: return "cast";
  case LoopOp::IsNan: return "isnan";
  case LoopOp::SignBit: return "signbit";
  case LoopOp::Exp: return "exp";
  case LoopOp::Log: return "log";
  case LoopOp::Sqrt: return "sqrt";
  case LoopOp::Tanh: return "tanh";
  case LoopOp::Erf: return "erf";
  case LoopOp::Pow: return "pow";
  case LoopOp::Sin: return "sin";
  case LoopOp::Cos: return "cos";
  case LoopOp::Tan: return "tan";
  case LoopOp::Asin: return "asin";
  case LoopOp::Acos: return "acos";
  case LoopOp::Atan: return "atan";
  case LoopOp::Sinh: return "sinh";
  case LoopOp::Cosh: return "cosh";
  case LoopOp::Asinh: return "asinh";
  case LoopOp::Acosh: return "acosh";
  case LoopOp::Atanh: return "atanh";
  case LoopOp::Floor: return "floor";
  case LoopOp::Ceil: return "ceil";
  case LoopOp::Round: return "round";
  case LoopOp::Log1p: return "log1p";
  case LoopOp::Expm1: return "expm1";
  }
  return "?";
}

LoopExpr intConst(int64_t V, DType T) {
  auto N = std::make_shared<LoopExprNode>(LoopExprKind::Const, T);
  N->intValue = V;
  N->floatValue = (double)V;
  return N;
}

LoopExpr floatConst(double V, DType T) {
  auto N = std::make_shared<LoopExprNode>(LoopExprKind::Const, T);
  N->floatValue = V;
  return N;
}

LoopExpr constOf(double V, DType T) {
  if (isFloat(T))
    return floatConst(V, T);
  if (T == DType::Bool)
    return intConst(V != 0, T);
  return intConst((int64_t)V, T);
}

LoopExpr loopVar(int Id, std::string Name) {
  auto N = std::make_shared<LoopExprNode>(LoopExprKind::Var, DType::Int64);
  N->id = Id;
  N->name = std::move(Name);
  return N;
}

LoopExpr sizeParam(int Id, std::string Name) {
  auto N =
      std::make_shared<LoopExprNode>(LoopExprKind::SizeParam, DType::Int64);
  N->id = Id;
  N->name = std::move(Name);
  return N;
}

LoopExpr load(int Buffer, DType T, std::vector<LoopExpr> Indices) {
  auto N = std::make_shared<LoopExprNode>(LoopExprKind::Load, T);
  N->id = Buffer;
  N->args = std::move(Indices);
  return N;
}

LoopExpr localRef(int Local, DType T) {
  auto N = std::make_shared<LoopExprNode>(LoopExprKind::Local, T);
  N->id = Local;
  return N;
}

LoopExpr opExpr(LoopOp Op, DType T, std::vector<LoopExpr> Args) {
  auto N = std::make_shared<LoopExprNode>(LoopExprKind::Op, T);
  N->op = Op;
  N->args = std::move(Args);
  return N;
}

namespace {

/// Folds int64 index arithmetic; null when nothing folds.
LoopExpr foldIndex(LoopOp Op, const LoopExpr &A, const LoopExpr &B) {
  if (A->dtype != DType::Int64)
    return nullptr;
  bool CA = A->isConst(), CB = B->isConst();
  if (CA && CB) {
    int64_t X = A->intValue, Y = B->intValue;
    switch (Op) {
    case LoopOp::Add: return intConst(X + Y);
    case LoopOp::Sub: return intConst(X - Y);
    case LoopOp::Mul: return intConst(X * Y);
    case LoopOp::Div:
      if (Y != 0)
        return intConst(X / Y);
      return nullptr;
    case LoopOp::Rem:
      if (Y != 0)
        return intConst(X % Y);
      return nullptr;
    case LoopOp::Min: return intConst(std::min(X, Y));
    case LoopOp::Max: return intConst(std::max(X, Y));
    default: return nullptr;
    }
  }
  switch (Op) {
  case LoopOp::Add:
    if (CA && A->intValue == 0)
      return B;
    if (CB && B->intValue == 0)
      return A;
    return nullptr;
  case LoopOp::Sub:
    if (CB && B->intValue == 0)
      return A;
    return nullptr;
  case LoopOp::Mul:
    if ((CA && A->intValue == 0) || (CB && B->intValue == 0))
      return intConst(0);
    if (CA && A->intValue == 1)
      return B;
    if (CB && B->intValue == 1)
      return A;
    return nullptr;
  case LoopOp::Div:
    if (CB && B->intValue == 1)
      return A;
    if (CA && A->intValue == 0)
      return A;
    return nullptr;
  case LoopOp::Rem:
    if (CB && B->intValue == 1)
      return intConst(0);
    return nullptr;
  default: return nullptr;
  }
}

} // namespace

LoopExpr binary(LoopOp Op, LoopExpr A, LoopExpr B) {
  RIVET_CHECK(A->dtype == B->dtype, "loop IR: {} of {} and {}", loopOpName(Op),
              dtypeName(A->dtype), dtypeName(B->dtype));
  if (LoopExpr F = foldIndex(Op, A, B))
    return F;
  DType T = A->dtype;
  return opExpr(Op, T, {std::move(A), std::move(B)});
}

LoopExpr unary(LoopOp Op, LoopExpr A) {
  DType T = A->dtype;
  if (Op == LoopOp::IsNan || Op == LoopOp::SignBit)
    T = DType::Bool;
  return opExpr(Op, T, {std::move(A)});
}

LoopExpr compare(LoopOp Op, LoopExpr A, LoopExpr B) {
  RIVET_CHECK(A->dtype == B->dtype, "loop IR: {} of {} and {}", loopOpName(Op),
              dtypeName(A->dtype), dtypeName(B->dtype));
  if (A->dtype == DType::Int64 && A->isConst() && B->isConst()) {
    int64_t X = A->intValue, Y = B->intValue;
    bool R = Op == LoopOp::EQ   ? X == Y
             : Op == LoopOp::NE ? X != Y
             : Op == LoopOp::LT ? X < Y
             : Op == LoopOp::LE ? X <= Y
             : Op == LoopOp::GT ? X > Y
                                : X >= Y;
    return intConst(R, DType::Bool);
  }
  return opExpr(Op, DType::Bool, {std::move(A), std::move(B)});
}

LoopExpr lowest(DType T) {
  if (isFloat(T))
    return floatConst(-INFINITY, T);
  switch (T) {
  case DType::Bool: return intConst(0, T);
  case DType::Int8: return intConst(-128, T);
  case DType::Int16: return intConst(-32768, T);
  case DType::Int32: return intConst(std::numeric_limits<int32_t>::min(), T);
  case DType::Int64: return intConst(std::numeric_limits<int64_t>::min(), T);
  default: return intConst(0, T); // unsigned
  }
}

LoopExpr select(LoopExpr Cond, LoopExpr Then, LoopExpr Else) {
  RIVET_CHECK(Then->dtype == Else->dtype, "loop IR: select of {} and {}",
              dtypeName(Then->dtype), dtypeName(Else->dtype));
  if (Cond->isConst())
    return Cond->intValue ? Then : Else;
  if (sameExpr(Then, Else))
    return Then;
  DType T = Then->dtype;
  return opExpr(LoopOp::Select, T,
                {std::move(Cond), std::move(Then), std::move(Else)});
}

LoopExpr cast(LoopExpr A, DType T) {
  if (A->dtype == T)
    return A;
  if (A->isConst()) {
    double V = isFloat(A->dtype) ? A->floatValue : (double)A->intValue;
    if (!isFloat(A->dtype) && !isFloat(T) && T != DType::Bool)
      return intConst(A->intValue, T);
    return constOf(V, T);
  }
  return opExpr(LoopOp::Cast, T, {std::move(A)});
}

namespace {

/// Pairs of distinct nodes already found equal: two equal DAGs built apart
/// share subexpressions in the same places, and each pair is compared once.
using EqualPairs =
    std::set<std::pair<const LoopExprNode *, const LoopExprNode *>>;

bool sameExprIn(const LoopExpr &A, const LoopExpr &B, EqualPairs &Equal) {
  if (A == B)
    return true;
  if (A->kind != B->kind || A->dtype != B->dtype || A->op != B->op ||
      A->id != B->id || A->intValue != B->intValue ||
      A->args.size() != B->args.size())
    return false;
  if (A->kind == LoopExprKind::Const && isFloat(A->dtype) &&
      A->floatValue != B->floatValue)
    return false;
  if (A->args.empty() || Equal.count({A.get(), B.get()}))
    return true;
  for (size_t I = 0; I < A->args.size(); ++I)
    if (!sameExprIn(A->args[I], B->args[I], Equal))
      return false;
  Equal.insert({A.get(), B.get()});
  return true;
}

} // namespace

bool sameExpr(const LoopExpr &A, const LoopExpr &B) {
  EqualPairs Equal;
  return sameExprIn(A, B, Equal);
}

void forEachNode(const LoopExpr &E,
                 const std::function<bool(const LoopExprNode &)> &Visit,
                 std::unordered_set<const LoopExprNode *> &Seen) {
  if (!Seen.insert(E.get()).second)
    return;
  if (!Visit(*E))
    return;
  for (const LoopExpr &A : E->args)
    forEachNode(A, Visit, Seen);
}

void forEachNode(const LoopExpr &E,
                 const std::function<bool(const LoopExprNode &)> &Visit) {
  std::unordered_set<const LoopExprNode *> Seen;
  forEachNode(E, Visit, Seen);
}

size_t countNodes(const std::vector<LoopExpr> &Roots) {
  std::unordered_set<const LoopExprNode *> Seen;
  for (const LoopExpr &R : Roots)
    forEachNode(
        R, [](const LoopExprNode &) { return true; }, Seen);
  return Seen.size();
}

LoopStmt forLoop(int Var, std::string Name, LoopExpr Extent, LoopKind Kind,
                 std::vector<LoopStmt> Body) {
  auto S = std::make_shared<LoopStmtNode>(LoopStmtKind::For);
  S->id = Var;
  S->name = std::move(Name);
  S->extent = std::move(Extent);
  S->loopKind = Kind;
  S->body = std::move(Body);
  return S;
}

LoopStmt store(int Buffer, std::vector<LoopExpr> Indices, LoopExpr Value) {
  auto S = std::make_shared<LoopStmtNode>(LoopStmtKind::Store);
  S->id = Buffer;
  S->indices = std::move(Indices);
  S->value = std::move(Value);
  return S;
}

LoopStmt declareLocal(int Local, LoopExpr Init) {
  auto S = std::make_shared<LoopStmtNode>(LoopStmtKind::Declare);
  S->id = Local;
  S->value = std::move(Init);
  return S;
}

LoopStmt assignLocal(int Local, LoopExpr Value, bool Reassociable,
                     bool NanFree) {
  auto S = std::make_shared<LoopStmtNode>(LoopStmtKind::Assign);
  S->id = Local;
  S->value = std::move(Value);
  S->reassociable = Reassociable;
  S->nanFree = NanFree;
  return S;
}

//===----------------------------------------------------------------------===//
// Work estimate
//===----------------------------------------------------------------------===//

namespace {

/// The operations of E, each shared node once: the backend emits a node
/// once per statement.
int64_t exprWork(const LoopExpr &E) {
  int64_t W = 0;
  forEachNode(E, [&](const LoopExprNode &N) {
    if (N.kind == LoopExprKind::Load) {
      ++W;
      return false; // index arithmetic is not counted
    }
    if (N.kind == LoopExprKind::Op)
      W += N.op >= LoopOp::Exp && N.op != LoopOp::Floor &&
                   N.op != LoopOp::Ceil && N.op != LoopOp::Round
               ? 8
               : 1;
    return true;
  });
  return W;
}

} // namespace

void LoopUses::expr(const LoopExpr &E) {
  forEachNode(
      E,
      [&](const LoopExprNode &N) {
        if (N.kind == LoopExprKind::Var)
          vars.insert(N.id);
        else if (N.kind == LoopExprKind::Local)
          locals.insert(N.id);
        return true;
      },
      seen);
}

void LoopUses::stmt(const LoopStmt &S) {
  hasLoop |= S->kind == LoopStmtKind::For;
  if (S->kind == LoopStmtKind::Declare)
    declared.insert(S->id);
  if (S->extent)
    expr(S->extent);
  if (S->value)
    expr(S->value);
  for (const LoopExpr &I : S->indices)
    expr(I);
  stmts(S->body);
}

void LoopUses::stmts(const std::vector<LoopStmt> &Ss) {
  for (const LoopStmt &S : Ss)
    stmt(S);
}

LoopExpr loopWork(const std::vector<LoopStmt> &Body) {
  LoopExpr Work = intConst(0);
  int64_t Scalar = 0;
  for (const LoopStmt &S : Body) {
    if (S->kind == LoopStmtKind::For)
      Work = binary(LoopOp::Add, Work,
                    binary(LoopOp::Mul, S->extent, loopWork(S->body)));
    else
      Scalar += 1 + exprWork(S->value);
  }
  return binary(LoopOp::Add, Work, intConst(Scalar));
}

//===----------------------------------------------------------------------===//
// Printer
//===----------------------------------------------------------------------===//

namespace {

std::string bufferName(const LoopKernel *K, int Id) {
  if (K && Id >= 0 && (size_t)Id < K->buffers.size())
    return K->buffers[(size_t)Id].name;
  return fmt::format("buf{}", Id);
}

/// Prints the expressions of one statement. A subexpression used more than
/// once whose text would exceed kInlineNodes nodes gets a name: it is
/// printed once, as a `let`, and referred to by name, so that a DAG's text
/// stays linear in its size (printed as a tree, a chain of relus doubles
/// per op). Small shared ones stay inline, as they read best.
class ExprPrinter {
public:
  ExprPrinter(const LoopKernel *K, int &Counter) : K(K), Counter(Counter) {}

  /// Finds the subexpressions of Roots to name (call before print).
  void plan(const std::vector<LoopExpr> &Roots) {
    std::unordered_map<const LoopExprNode *, int> Uses;
    std::unordered_set<const LoopExprNode *> Seen;
    for (const LoopExpr &R : Roots) {
      ++Uses[R.get()];
      forEachNode(
          R,
          [&](const LoopExprNode &N) {
            for (const LoopExpr &A : N.args)
              ++Uses[A.get()];
            return true;
          },
          Seen);
    }
    for (auto &[N, Count] : Uses)
      if (Count > 1 && treeSize(N) > kInlineNodes)
        Named.insert(N);
  }

  std::string print(const LoopExpr &E) {
    auto It = Names.find(E.get());
    if (It != Names.end())
      return It->second;
    std::string Text = printNode(*E);
    if (!Named.count(E.get()))
      return Text;
    std::string Name = fmt::format("t{}", Counter++);
    Lets.push_back(fmt::format("let {} = {}", Name, Text));
    Names.emplace(E.get(), Name);
    return Name;
  }

  std::string printIndices(const std::vector<LoopExpr> &Ix) {
    std::string S = "[";
    for (size_t I = 0; I < Ix.size(); ++I)
      S += (I ? ", " : "") + print(Ix[I]);
    return S + "]";
  }

  /// The `let`s of the named subexpressions printed so far, operands first.
  std::vector<std::string> Lets;

private:
  static constexpr size_t kInlineNodes = 24;

  const LoopKernel *K;
  int &Counter;
  std::unordered_set<const LoopExprNode *> Named;
  std::unordered_map<const LoopExprNode *, std::string> Names;
  std::unordered_map<const LoopExprNode *, size_t> Sizes;

  /// The node count of N printed as a tree (saturating).
  size_t treeSize(const LoopExprNode *N) {
    auto It = Sizes.find(N);
    if (It != Sizes.end())
      return It->second;
    size_t S = 1;
    for (const LoopExpr &A : N->args)
      S = std::min(S + treeSize(A.get()), (size_t)1 << 40);
    Sizes.emplace(N, S);
    return S;
  }

  std::string printNode(const LoopExprNode &E) {
    switch (E.kind) {
    case LoopExprKind::Const:
      if (isFloat(E.dtype))
        return fmt::format("{}{}", E.floatValue,
                           E.dtype == DType::Float32 ? "f" : "");
      if (E.dtype == DType::Bool)
        return E.intValue ? "true" : "false";
      if (E.dtype == DType::Int64)
        return fmt::format("{}", E.intValue);
      return fmt::format("{}:{}", E.intValue, dtypeName(E.dtype));
    case LoopExprKind::Var:
    case LoopExprKind::SizeParam: return E.name;
    case LoopExprKind::Load: return bufferName(K, E.id) + printIndices(E.args);
    case LoopExprKind::Local: return fmt::format("acc{}", E.id);
    case LoopExprKind::Op: {
      std::string S = loopOpName(E.op);
      if (E.op == LoopOp::Cast)
        S += fmt::format("<{}>", dtypeName(E.dtype));
      S += "(";
      for (size_t I = 0; I < E.args.size(); ++I)
        S += (I ? ", " : "") + print(E.args[I]);
      return S + ")";
    }
    }
    return "?";
  }
};

void printStmt(const LoopStmt &S, const LoopKernel &K, int Indent, int &Temps,
               std::string &Out) {
  std::string Pad((size_t)Indent * 2, ' ');
  ExprPrinter P(&K, Temps);
  std::vector<LoopExpr> Roots = S->indices;
  for (const LoopExpr &E : {S->extent, S->value})
    if (E)
      Roots.push_back(E);
  P.plan(Roots);
  std::string Line;
  switch (S->kind) {
  case LoopStmtKind::For: {
    const char *Kind = S->loopKind == LoopKind::Parallel     ? " parallel"
                       : S->loopKind == LoopKind::Vectorized ? " vectorized"
                       : S->loopKind == LoopKind::Unrolled   ? " unrolled"
                                                             : "";
    Line = fmt::format("{}for {} in [0, {}){} {{\n", Pad, S->name,
                       P.print(S->extent), Kind);
    break;
  }
  case LoopStmtKind::Store: {
    std::string Value = P.print(S->value);
    Line = fmt::format("{}{}{} = {}{}\n", Pad, bufferName(&K, S->id),
                       P.printIndices(S->indices), Value,
                       S->streaming ? "  // streaming" : "");
    break;
  }
  case LoopStmtKind::Declare:
    Line = fmt::format("{}local acc{}: {} = {}\n", Pad, S->id,
                       dtypeName(S->value->dtype), P.print(S->value));
    break;
  case LoopStmtKind::Assign:
    Line = fmt::format("{}acc{} = {}{}\n", Pad, S->id, P.print(S->value),
                       S->nanFree        ? "  // reduction, no NaN"
                       : S->reassociable ? "  // reduction"
                                         : "");
    break;
  }
  for (const std::string &Let : P.Lets)
    Out += Pad + Let + "\n";
  Out += Line;
  if (S->kind == LoopStmtKind::For) {
    for (const LoopStmt &B : S->body)
      printStmt(B, K, Indent + 1, Temps, Out);
    Out += Pad + "}\n";
  }
}

} // namespace

std::string printLoopExpr(const LoopExpr &E, const LoopKernel *K) {
  int Temps = 0;
  ExprPrinter P(K, Temps);
  P.plan({E});
  std::string Text = P.print(E);
  std::string Out;
  for (const std::string &Let : P.Lets)
    Out += Let + "; ";
  return Out + Text;
}

std::string printLoopKernel(const LoopKernel &K) {
  std::string Out = "kernel " + K.name + "(";
  for (size_t I = 0; I < K.buffers.size(); ++I) {
    const LoopBuffer &B = K.buffers[I];
    Out += fmt::format("{}{}{}: {}[", I ? ", " : "", B.isOutput ? "out " : "",
                       B.name, dtypeName(B.dtype));
    for (size_t D = 0; D < B.shape.size(); ++D)
      Out += (D ? ", " : "") + printLoopExpr(B.shape[D], &K);
    Out += "]";
  }
  Out += ")";
  if (!K.sizeParams.empty()) {
    Out += " sizes(";
    for (size_t I = 0; I < K.sizeParams.size(); ++I)
      Out += (I ? ", " : "") + K.sizeParams[I];
    Out += ")";
  }
  Out += " {\n";
  int Temps = 0;
  for (const LoopStmt &S : K.body)
    printStmt(S, K, 1, Temps, Out);
  return Out + "}\n";
}

} // namespace rivet::codegen
