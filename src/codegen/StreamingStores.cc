//===- StreamingStores.cc - Output stores that write around the cache -----===//
//
// The marking is conservative: only the shape every elementwise group
// lowers to (one store per output element, rows written in order by the
// innermost loop) streams; anything else keeps ordinary stores.
//
//===----------------------------------------------------------------------===//

#include "codegen/StreamingStores.h"

#include <map>
#include <unordered_set>

namespace rivet::codegen {
namespace {

/// How often each buffer is stored into and loaded from.
struct BufferAccesses {
  /// Stores by statement; loads by distinct node (only whether a buffer is
  /// loaded at all matters).
  std::map<int, int> stores, loads;
  std::unordered_set<const LoopExprNode *> seen;

  void expr(const LoopExpr &E) {
    forEachNode(
        E,
        [&](const LoopExprNode &N) {
          if (N.kind == LoopExprKind::Load)
            ++loads[N.id];
          return true;
        },
        seen);
  }
  void stmts(const std::vector<LoopStmt> &Body) {
    for (const LoopStmt &S : Body) {
      if (S->extent)
        expr(S->extent);
      for (const LoopExpr &I : S->indices)
        expr(I);
      if (S->value)
        expr(S->value);
      if (S->kind == LoopStmtKind::Store)
        ++stores[S->id];
      stmts(S->body);
    }
  }
};

/// Whether Loop is an innermost loop whose whole body is a store that may
/// stream (see markStreamingStores; the size is checked apart).
bool isStreamingShape(const LoopKernel &K, const LoopStmtNode &Loop,
                      const BufferAccesses &A) {
  if (Loop.kind != LoopStmtKind::For || Loop.body.size() != 1 ||
      (Loop.loopKind != LoopKind::Vectorized &&
       Loop.loopKind != LoopKind::Parallel))
    return false;
  const LoopStmtNode &S = *Loop.body[0];
  if (S.kind != LoopStmtKind::Store || S.indices.empty())
    return false;
  const LoopBuffer &Buf = K.buffers.at((size_t)S.id);
  if (!Buf.isOutput || A.stores.at(S.id) != 1 || A.loads.count(S.id))
    return false;
  const LoopExpr &Last = S.indices.back();
  if (Last->kind != LoopExprKind::Var || Last->id != Loop.id ||
      !sameExpr(Loop.extent, Buf.shape.back()))
    return false;
  LoopUses Outer;
  for (size_t I = 0; I + 1 < S.indices.size(); ++I)
    Outer.expr(S.indices[I]);
  return !Outer.vars.count(Loop.id);
}

/// Marks the streaming stores in Body; returns whether it marked any.
bool mark(std::vector<LoopStmt> &Body, const LoopKernel &K,
          const BufferAccesses &A) {
  bool Changed = false;
  for (LoopStmt &S : Body) {
    if (S->kind != LoopStmtKind::For)
      continue;
    if (isStreamingShape(K, *S, A)) {
      LoopExpr Cond = streamingCondition(K, S->body[0]->id);
      if (Cond->isConst() && Cond->intValue == 0)
        continue;
      auto Store = std::make_shared<LoopStmtNode>(*S->body[0]);
      Store->streaming = true;
      auto Loop = std::make_shared<LoopStmtNode>(*S);
      Loop->body = {Store};
      S = Loop;
      Changed = true;
      continue;
    }
    std::vector<LoopStmt> Inner = S->body;
    if (mark(Inner, K, A)) {
      auto Loop = std::make_shared<LoopStmtNode>(*S);
      Loop->body = std::move(Inner);
      S = Loop;
      Changed = true;
    }
  }
  return Changed;
}

LoopExpr atLeast(const LoopExpr &Bytes, int64_t Min) {
  if (Bytes->isConst())
    return intConst(Bytes->intValue >= Min, DType::Bool);
  return compare(LoopOp::GE, Bytes, intConst(Min));
}

} // namespace

LoopExpr streamingCondition(const LoopKernel &K, int Buffer) {
  const LoopBuffer &Buf = K.buffers.at((size_t)Buffer);
  LoopExpr ElemBytes = intConst((int64_t)dtypeSize(Buf.dtype));
  LoopExpr Total = ElemBytes;
  for (const LoopExpr &E : Buf.shape)
    Total = binary(LoopOp::Mul, Total, E);
  LoopExpr Row = Buf.shape.empty()
                     ? ElemBytes
                     : binary(LoopOp::Mul, ElemBytes, Buf.shape.back());
  LoopExpr Big = atLeast(Total, kStreamingStoreMinBytes);
  LoopExpr Long = atLeast(Row, kStreamingRowMinBytes);
  if (Big->isConst() && Long->isConst())
    return intConst(Big->intValue && Long->intValue, DType::Bool);
  if (Big->isConst())
    return Big->intValue ? Long : Big;
  if (Long->isConst())
    return Long->intValue ? Big : Long;
  return binary(LoopOp::And, Big, Long);
}

void markStreamingStores(LoopKernel &K) {
  BufferAccesses A;
  A.stmts(K.body);
  mark(K.body, K, A);
}

} // namespace rivet::codegen
