//===- ReductionInterchange.cc - Reductions outside the row loop ----------===//
//
// Only the shape lowering gives a sum-reduced element (a declared
// accumulator, a perfect nest of serial reduction loops around one
// reassociable add, the element's store) is rewritten; anything else keeps
// its loops.
//
//===----------------------------------------------------------------------===//

#include "codegen/ReductionInterchange.h"

#include <functional>
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

/// E with every leaf of kind Kind and id Id (a local or a loop variable)
/// replaced by With; Done maps each node rewritten so far to its rewrite, so
/// that a shared node is rewritten once and stays shared.
LoopExpr replaceLeaf(const LoopExpr &E, LoopExprKind Kind, int Id,
                     const LoopExpr &With,
                     std::unordered_map<const LoopExprNode *, LoopExpr> &Done) {
  if (E->kind == Kind && E->id == Id)
    return With;
  if (E->args.empty())
    return E;
  auto It = Done.find(E.get());
  if (It != Done.end())
    return It->second;
  auto N = std::make_shared<LoopExprNode>(*E);
  for (LoopExpr &A : N->args)
    A = replaceLeaf(A, Kind, Id, With, Done);
  Done.emplace(E.get(), N);
  return N;
}

LoopExpr replaceLocal(const LoopExpr &E, int Local, const LoopExpr &With) {
  std::unordered_map<const LoopExprNode *, LoopExpr> Done;
  return replaceLeaf(E, LoopExprKind::Local, Local, With, Done);
}

LoopExpr replaceVar(const LoopExpr &E, int Var, const LoopExpr &With) {
  std::unordered_map<const LoopExprNode *, LoopExpr> Done;
  return replaceLeaf(E, LoopExprKind::Var, Var, With, Done);
}

std::vector<LoopExpr> replaceVar(const std::vector<LoopExpr> &Es, int Var,
                                 const LoopExpr &With) {
  std::vector<LoopExpr> R;
  for (const LoopExpr &E : Es)
    R.push_back(replaceVar(E, Var, With));
  return R;
}

/// The elements a blocked interchange keeps in registers per block: one
/// 64-byte line of float32 output, accumulated in 16 float64 locals.
constexpr int64_t kRowBlock = 16;

/// The reduction of Loop with the row blocked by kRowBlock: for each block
/// of the row, kRowBlock accumulators of the accumulator's dtype (float64
/// for a float32 sum, as the reference) run through the reduction nest
/// together, reading kRowBlock consecutive elements of each row; a tail of
/// the row shorter than a block keeps the original loop. For an
/// accumulator wider than the output, which the output row cannot hold.
std::vector<LoopStmt> blockedRows(LoopKernel &K, const LoopStmtNode &Loop,
                                  const std::vector<const LoopStmtNode *> &Nest,
                                  const LoopStmtNode &Declare,
                                  const LoopExpr &Summand,
                                  const LoopStmtNode &Store, int64_t Extent) {
  int I = Loop.id, Acc = Declare.id;
  DType AccT = K.locals.at((size_t)Acc);
  int Block = K.numLoopVars++;
  LoopExpr Base =
      binary(LoopOp::Mul, loopVar(Block, Loop.name + "b"), intConst(kRowBlock));
  std::vector<LoopStmt> Decls, Updates, Stores;
  for (int64_t J = 0; J < kRowBlock; ++J) {
    int L = (int)K.locals.size();
    K.locals.push_back(AccT);
    LoopExpr At = binary(LoopOp::Add, Base, intConst(J));
    Decls.push_back(declareLocal(L, Declare.value));
    Updates.push_back(assignLocal(
        L, binary(LoopOp::Add, localRef(L, AccT), replaceVar(Summand, I, At)),
        true));
    Stores.push_back(store(
        Store.id, replaceVar(Store.indices, I, At),
        replaceVar(replaceLocal(Store.value, Acc, localRef(L, AccT)), I, At)));
  }
  std::vector<LoopStmt> Reduce = std::move(Updates);
  for (size_t D = Nest.size(); D-- > 0;)
    Reduce = {forLoop(Nest[D]->id, Nest[D]->name, Nest[D]->extent,
                      LoopKind::Serial, std::move(Reduce))};
  std::vector<LoopStmt> Body = std::move(Decls);
  Body.insert(Body.end(), Reduce.begin(), Reduce.end());
  Body.insert(Body.end(), Stores.begin(), Stores.end());
  std::vector<LoopStmt> Result{forLoop(Block, Loop.name + "b",
                                       intConst(Extent / kRowBlock),
                                       LoopKind::Serial, std::move(Body))};
  if (int64_t Tail = Extent % kRowBlock) {
    // The original loop over the last Tail elements: I = full blocks + t.
    auto T = std::make_shared<LoopStmtNode>(Loop);
    T->extent = intConst(Tail);
    LoopExpr Offset =
        binary(LoopOp::Add, loopVar(I, Loop.name), intConst(Extent - Tail));
    auto Shift = [&](const LoopStmt &S) {
      auto N = std::make_shared<LoopStmtNode>(*S);
      if (N->value)
        N->value = replaceVar(N->value, I, Offset);
      N->indices = replaceVar(N->indices, I, Offset);
      return LoopStmt(N);
    };
    // Declare, the reduction nest (its innermost Assign), the Store.
    std::vector<LoopStmt> TB;
    TB.push_back(Shift(Loop.body[0]));
    std::function<LoopStmt(const LoopStmt &)> Deep = [&](const LoopStmt &S) {
      if (S->kind != LoopStmtKind::For)
        return Shift(S);
      auto N = std::make_shared<LoopStmtNode>(*S);
      N->body = {Deep(S->body[0])};
      return LoopStmt(N);
    };
    TB.push_back(Deep(Loop.body[1]));
    TB.push_back(Shift(Loop.body[2]));
    T->body = std::move(TB);
    Result.push_back(T);
  }
  return Result;
}

/// The interchanged form of Loop (see interchangeReductions), or nothing.
std::optional<std::vector<LoopStmt>> interchanged(LoopKernel &K,
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
      !isVar(Store.indices.back(), I) || loadsBuffer(Summand, Store.id) ||
      loadsBuffer(Store.value, Store.id))
    return std::nullopt;
  // An accumulator wider than the output (float64 for float32) cannot live
  // in the output row: blocks of the row then live in registers, which
  // needs a row of at least one block, of known extent.
  bool InOutput = Out.dtype == K.locals.at((size_t)Acc);
  if (!InOutput &&
      !(Loop.extent->isConst() && Loop.extent->intValue >= kRowBlock))
    return std::nullopt;
  for (size_t D = 0; D + 1 < Store.indices.size(); ++D)
    if (usesVar(Store.indices[D], I) || usesAnyVar(Store.indices[D], Reduced))
      return std::nullopt;
  SummandLoads Loads;
  Loads.expr(Summand, I, Reduced);
  if (!Loads.rowContiguous || !Loads.acrossRows)
    return std::nullopt;
  if (!InOutput)
    return blockedRows(K, Loop, Nest, Declare, Summand, Store,
                       Loop.extent->intValue);

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

std::vector<LoopStmt> rewrite(LoopKernel &K,
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
