//===- ReductionInterchange.cc - Reductions outside the row loop ----------===//
//
// Only the shape lowering gives a sum-reduced element (a declared
// accumulator, a perfect nest of serial reduction loops around one
// reassociable add, the element's store) is rewritten; anything else keeps
// its loops.
//
//===----------------------------------------------------------------------===//

#include "codegen/ReductionInterchange.h"

#include <optional>
#include <set>
#include <unordered_map>

namespace rivet::codegen {
namespace {

/// The loop variables and locals E reads.
LoopUses usesOf(const LoopExpr &E) {
  LoopUses U;
  U.expr(E);
  return U;
}

bool usesVar(const LoopExpr &E, int Var) {
  return usesOf(E).vars.count(Var) != 0;
}

bool usesAnyVar(const LoopExpr &E, const std::set<int> &Vars) {
  for (int V : usesOf(E).vars)
    if (Vars.count(V))
      return true;
  return false;
}

bool loadsBuffer(const LoopExpr &E, int Buffer) {
  bool Loads = false;
  forEachNode(E, [&](const LoopExprNode &N) {
    Loads |= N.kind == LoopExprKind::Load && N.id == Buffer;
    return !Loads;
  });
  return Loads;
}

bool isVar(const LoopExpr &E, int Var) {
  return E->kind == LoopExprKind::Var && E->id == Var;
}

/// Whether E is I, or I plus an offset free of I: contiguous along I.
bool isRowIndex(const LoopExpr &E, int I) {
  if (isVar(E, I))
    return true;
  if (E->kind != LoopExprKind::Op || E->op != LoopOp::Add)
    return false;
  return (isVar(E->args[0], I) && !usesVar(E->args[1], I)) ||
         (isVar(E->args[1], I) && !usesVar(E->args[0], I));
}

/// How the summand's loads index: whether each reads the row variable I
/// only as (an offset of) its last index, and whether one reads across
/// rows (a reduction variable in an index other than the last).
struct SummandLoads {
  bool rowContiguous = true;
  bool acrossRows = false;

  void expr(const LoopExpr &E, int I, const std::set<int> &Reduced) {
    forEachNode(E, [&](const LoopExprNode &N) {
      if (N.kind == LoopExprKind::Load)
        for (size_t K = 0; K < N.args.size(); ++K) {
          const LoopExpr &Ix = N.args[K];
          bool Last = K + 1 == N.args.size();
          if (usesVar(Ix, I) && !(Last && isRowIndex(Ix, I)))
            rowContiguous = false;
          if (!Last && usesAnyVar(Ix, Reduced))
            acrossRows = true;
        }
      return true;
    });
  }
};

/// E with every read of Local replaced by With.
/// E with the local replaced; Done maps each node rewritten so far to its
/// rewrite, so that a shared node is rewritten once and stays shared.
LoopExpr
replaceLocal(const LoopExpr &E, int Local, const LoopExpr &With,
             std::unordered_map<const LoopExprNode *, LoopExpr> &Done) {
  if (E->kind == LoopExprKind::Local && E->id == Local)
    return With;
  if (E->args.empty())
    return E;
  auto It = Done.find(E.get());
  if (It != Done.end())
    return It->second;
  auto N = std::make_shared<LoopExprNode>(*E);
  for (LoopExpr &A : N->args)
    A = replaceLocal(A, Local, With, Done);
  Done.emplace(E.get(), N);
  return N;
}

LoopExpr replaceLocal(const LoopExpr &E, int Local, const LoopExpr &With) {
  std::unordered_map<const LoopExprNode *, LoopExpr> Done;
  return replaceLocal(E, Local, With, Done);
}

/// The interchanged form of Loop (see interchangeReductions), or nothing.
std::optional<std::vector<LoopStmt>> interchanged(const LoopKernel &K,
                                                  const LoopStmtNode &Loop) {
  if (Loop.loopKind != LoopKind::Serial || Loop.body.size() != 3)
    return std::nullopt;
  const LoopStmtNode &Declare = *Loop.body[0], &Store = *Loop.body[2];
  if (Declare.kind != LoopStmtKind::Declare || !Declare.value->isConst() ||
      Loop.body[1]->kind != LoopStmtKind::For ||
      Store.kind != LoopStmtKind::Store)
    return std::nullopt;
  int I = Loop.id, Acc = Declare.id;
  // The reduction nest, down to its one accumulation.
  std::vector<const LoopStmtNode *> Nest;
  std::set<int> Reduced;
  const LoopStmtNode *Cur = Loop.body[1].get();
  while (Cur->kind == LoopStmtKind::For) {
    if (Cur->body.size() != 1 || Cur->loopKind == LoopKind::Parallel ||
        usesVar(Cur->extent, I))
      return std::nullopt;
    Nest.push_back(Cur);
    Reduced.insert(Cur->id);
    Cur = Cur->body[0].get();
  }
  if (Cur->kind != LoopStmtKind::Assign || Cur->id != Acc ||
      !Cur->reassociable || Cur->value->kind != LoopExprKind::Op ||
      Cur->value->op != LoopOp::Add)
    return std::nullopt;
  const LoopExpr &AccRead = Cur->value->args[0], &Summand = Cur->value->args[1];
  if (AccRead->kind != LoopExprKind::Local || AccRead->id != Acc ||
      usesOf(Summand).locals.count(Acc))
    return std::nullopt;
  // The element's store: the output, indexed by I last and by outer
  // variables only elsewhere, accumulating in its own dtype.
  const LoopBuffer &Out = K.buffers.at((size_t)Store.id);
  if (!Out.isOutput || Store.indices.empty() ||
      !isVar(Store.indices.back(), I) ||
      Out.dtype != K.locals.at((size_t)Acc) || loadsBuffer(Summand, Store.id) ||
      loadsBuffer(Store.value, Store.id))
    return std::nullopt;
  for (size_t D = 0; D + 1 < Store.indices.size(); ++D)
    if (usesVar(Store.indices[D], I) || usesAnyVar(Store.indices[D], Reduced))
      return std::nullopt;
  SummandLoads Loads;
  Loads.expr(Summand, I, Reduced);
  if (!Loads.rowContiguous || !Loads.acrossRows)
    return std::nullopt;

  LoopExpr Element = load(Store.id, Out.dtype, Store.indices);
  auto RowLoop = [&](LoopExpr Value) {
    return forLoop(I, Loop.name, Loop.extent, LoopKind::Serial,
                   {store(Store.id, Store.indices, std::move(Value))});
  };
  std::vector<LoopStmt> Result{RowLoop(Declare.value)};
  LoopStmt Accumulate = RowLoop(binary(LoopOp::Add, Element, Summand));
  for (size_t D = Nest.size(); D-- > 0;)
    Accumulate = forLoop(Nest[D]->id, Nest[D]->name, Nest[D]->extent,
                         LoopKind::Serial, {std::move(Accumulate)});
  Result.push_back(std::move(Accumulate));
  // The epilogue, unless the element is the sum itself.
  if (!(Store.value->kind == LoopExprKind::Local && Store.value->id == Acc))
    Result.push_back(RowLoop(replaceLocal(Store.value, Acc, Element)));
  return Result;
}

std::vector<LoopStmt> rewrite(const LoopKernel &K,
                              const std::vector<LoopStmt> &Body) {
  std::vector<LoopStmt> Result;
  for (const LoopStmt &S : Body) {
    if (S->kind != LoopStmtKind::For) {
      Result.push_back(S);
      continue;
    }
    if (std::optional<std::vector<LoopStmt>> New = interchanged(K, *S)) {
      Result.insert(Result.end(), New->begin(), New->end());
      continue;
    }
    auto N = std::make_shared<LoopStmtNode>(*S);
    N->body = rewrite(K, S->body);
    Result.push_back(std::move(N));
  }
  return Result;
}

} // namespace

void interchangeReductions(LoopKernel &K) { K.body = rewrite(K, K.body); }

} // namespace rivet::codegen
