//===- LoopIR.cc - Builders and printer of the loop-level IR --------------===//

#include "codegen/LoopIR.h"

#include "kernels/Error.h"

#include <fmt/format.h>

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

bool sameExpr(const LoopExpr &A, const LoopExpr &B) {
  if (A == B)
    return true;
  if (A->kind != B->kind || A->dtype != B->dtype || A->op != B->op ||
      A->id != B->id || A->intValue != B->intValue ||
      A->args.size() != B->args.size())
    return false;
  if (A->kind == LoopExprKind::Const && isFloat(A->dtype) &&
      A->floatValue != B->floatValue)
    return false;
  for (size_t I = 0; I < A->args.size(); ++I)
    if (!sameExpr(A->args[I], B->args[I]))
      return false;
  return true;
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

int64_t exprWork(const LoopExpr &E) {
  int64_t W = 0;
  if (E->kind == LoopExprKind::Load)
    W = 1;
  else if (E->kind == LoopExprKind::Op)
    W = E->op >= LoopOp::Exp && E->op != LoopOp::Floor &&
                E->op != LoopOp::Ceil && E->op != LoopOp::Round
            ? 8
            : 1;
  for (const LoopExpr &A : E->args)
    if (E->kind != LoopExprKind::Load) // index arithmetic is not counted
      W += exprWork(A);
  return W;
}

} // namespace

void LoopUses::expr(const LoopExpr &E) {
  if (E->kind == LoopExprKind::Var)
    vars.insert(E->id);
  else if (E->kind == LoopExprKind::Local)
    locals.insert(E->id);
  for (const LoopExpr &A : E->args)
    expr(A);
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

std::string printIndices(const std::vector<LoopExpr> &Ix, const LoopKernel *K) {
  std::string S = "[";
  for (size_t I = 0; I < Ix.size(); ++I)
    S += (I ? ", " : "") + printLoopExpr(Ix[I], K);
  return S + "]";
}

void printStmt(const LoopStmt &S, const LoopKernel &K, int Indent,
               std::string &Out) {
  std::string Pad((size_t)Indent * 2, ' ');
  switch (S->kind) {
  case LoopStmtKind::For: {
    const char *Kind = S->loopKind == LoopKind::Parallel     ? " parallel"
                       : S->loopKind == LoopKind::Vectorized ? " vectorized"
                       : S->loopKind == LoopKind::Unrolled   ? " unrolled"
                                                             : "";
    Out += fmt::format("{}for {} in [0, {}){} {{\n", Pad, S->name,
                       printLoopExpr(S->extent, &K), Kind);
    for (const LoopStmt &B : S->body)
      printStmt(B, K, Indent + 1, Out);
    Out += Pad + "}\n";
    return;
  }
  case LoopStmtKind::Store:
    Out +=
        fmt::format("{}{}{} = {}{}\n", Pad, bufferName(&K, S->id),
                    printIndices(S->indices, &K), printLoopExpr(S->value, &K),
                    S->streaming ? "  // streaming" : "");
    return;
  case LoopStmtKind::Declare:
    Out += fmt::format("{}local acc{}: {} = {}\n", Pad, S->id,
                       dtypeName(S->value->dtype), printLoopExpr(S->value, &K));
    return;
  case LoopStmtKind::Assign:
    Out +=
        fmt::format("{}acc{} = {}{}\n", Pad, S->id, printLoopExpr(S->value, &K),
                    S->nanFree        ? "  // reduction, no NaN"
                    : S->reassociable ? "  // reduction"
                                      : "");
    return;
  }
}

} // namespace

std::string printLoopExpr(const LoopExpr &E, const LoopKernel *K) {
  switch (E->kind) {
  case LoopExprKind::Const:
    if (isFloat(E->dtype))
      return fmt::format("{}{}", E->floatValue,
                         E->dtype == DType::Float32 ? "f" : "");
    if (E->dtype == DType::Bool)
      return E->intValue ? "true" : "false";
    if (E->dtype == DType::Int64)
      return fmt::format("{}", E->intValue);
    return fmt::format("{}:{}", E->intValue, dtypeName(E->dtype));
  case LoopExprKind::Var:
  case LoopExprKind::SizeParam: return E->name;
  case LoopExprKind::Load:
    return bufferName(K, E->id) + printIndices(E->args, K);
  case LoopExprKind::Local: return fmt::format("acc{}", E->id);
  case LoopExprKind::Op: {
    std::string S = loopOpName(E->op);
    if (E->op == LoopOp::Cast)
      S += fmt::format("<{}>", dtypeName(E->dtype));
    S += "(";
    for (size_t I = 0; I < E->args.size(); ++I)
      S += (I ? ", " : "") + printLoopExpr(E->args[I], K);
    return S + ")";
  }
  }
  return "?";
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
  for (const LoopStmt &S : K.body)
    printStmt(S, K, 1, Out);
  return Out + "}\n";
}

} // namespace rivet::codegen
