//===- CollapseLoops.cc - An elementwise nest as one flat loop ------------===//
#include "codegen/CollapseLoops.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace rivet::codegen {
namespace {

/// The loops of a perfect nest and its innermost store.
struct Nest {
  std::vector<const LoopStmtNode *> loops;
  const LoopStmtNode *store = nullptr;
};

std::optional<Nest> perfectNest(const std::vector<LoopStmt> &Body) {
  Nest N;
  const std::vector<LoopStmt> *Level = &Body;
  while (Level->size() == 1 && (*Level)[0]->kind == LoopStmtKind::For) {
    N.loops.push_back((*Level)[0].get());
    Level = &(*Level)[0]->body;
  }
  if (Level->size() != 1 || (*Level)[0]->kind != LoopStmtKind::Store)
    return std::nullopt;
  N.store = (*Level)[0].get();
  return N;
}

class Collapser {
public:
  Collapser(const LoopKernel &K, const Nest &N) : K(K), N(N) {}

  /// Whether Indices are exactly the nest's variables, in order, into a
  /// buffer with the nest's extents.
  bool alignedAccess(int Buffer, const std::vector<LoopExpr> &Indices) const {
    const LoopBuffer &B = K.buffers.at((size_t)Buffer);
    if (Indices.size() != N.loops.size() || B.shape.size() != N.loops.size())
      return false;
    for (size_t D = 0; D < Indices.size(); ++D)
      if (Indices[D]->kind != LoopExprKind::Var ||
          Indices[D]->id != N.loops[D]->id ||
          !sameExpr(B.shape[D], N.loops[D]->extent))
        return false;
    return true;
  }

  /// Whether the loop variables appear in V only as aligned load indices.
  bool onlyAligned(const LoopExpr &V) {
    bool Ok = true;
    forEachNode(
        V,
        [&](const LoopExprNode &E) {
          if (!Ok)
            return false;
          if (E.kind == LoopExprKind::Load && alignedAccess(E.id, E.args))
            return false; // its indices are the ones rewritten
          if (E.kind == LoopExprKind::Var || E.kind == LoopExprKind::Local)
            Ok = false;
          return Ok;
        },
        Seen);
    return Ok;
  }

  /// V with every aligned load at [0, .., 0, Flat] (each node rewritten
  /// once: expressions are DAGs).
  LoopExpr rewrite(const LoopExpr &V, const LoopExpr &Flat) {
    auto It = Done.find(V.get());
    if (It != Done.end())
      return It->second;
    LoopExpr R = V;
    if (V->kind == LoopExprKind::Load && alignedAccess(V->id, V->args)) {
      R = load(V->id, V->dtype, flatIndices(Flat));
    } else if (!V->args.empty()) {
      auto Copy = std::make_shared<LoopExprNode>(*V);
      for (LoopExpr &A : Copy->args)
        A = rewrite(A, Flat);
      R = Copy;
    }
    Done.emplace(V.get(), R);
    return R;
  }

  std::vector<LoopExpr> flatIndices(const LoopExpr &Flat) const {
    std::vector<LoopExpr> I(N.loops.size(), intConst(0));
    I.back() = Flat;
    return I;
  }

private:
  const LoopKernel &K;
  const Nest &N;
  std::unordered_set<const LoopExprNode *> Seen;
  std::unordered_map<const LoopExprNode *, LoopExpr> Done;
};

} // namespace

bool collapseElementwiseNest(LoopKernel &K) {
  std::optional<Nest> N = perfectNest(K.body);
  if (!N || N->loops.size() < 2)
    return false;
  Collapser C(K, *N);
  const LoopStmtNode &S = *N->store;
  if (!K.buffers.at((size_t)S.id).isOutput || !C.alignedAccess(S.id, S.indices))
    return false;
  if (!C.onlyAligned(S.value))
    return false;
  for (const LoopStmtNode *L : N->loops)
    if (L->loopKind == LoopKind::Vectorized)
      return false; // already annotated: run before annotation
  const LoopStmtNode &Outer = *N->loops.front();
  LoopExpr Flat = loopVar(Outer.id, "i");
  LoopExpr Extent = intConst(1);
  bool Parallel = false;
  for (const LoopStmtNode *L : N->loops) {
    Extent = mul(Extent, L->extent);
    Parallel |= L->loopKind == LoopKind::Parallel;
  }
  LoopStmt Store = store(S.id, C.flatIndices(Flat), C.rewrite(S.value, Flat));
  K.body = {forLoop(Outer.id, "i", Extent,
                    Parallel ? LoopKind::Parallel : LoopKind::Serial, {Store})};
  return true;
}

} // namespace rivet::codegen
