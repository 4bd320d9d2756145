//===- Origin.cc - Where an operator call comes from ----------------------===//
#include "ir/Origin.h"

#include "ir/Visitor.h"

#include <algorithm>
#include <unordered_map>

namespace rivet::ir {

namespace {
std::string &current() {
  thread_local std::string Origin;
  return Origin;
}
const std::string kNone;
} // namespace

const std::string &currentOrigin() { return current(); }

OriginScope::OriginScope(const std::string &Origin) : Active(!Origin.empty()) {
  if (Active) {
    Saved = std::move(current());
    current() = Origin;
  }
}

OriginScope::OriginScope(None) : Active(true) {
  Saved = std::move(current());
  current().clear();
}

OriginScope::OriginScope(const CallNode &C) : Active(true) {
  Saved = std::move(current());
  current() = C.origin;
}

OriginScope::~OriginScope() {
  if (Active)
    current() = std::move(Saved);
}

const std::string &originOf(const Expr &E) {
  const CallNode *C = E ? E->as<CallNode>() : nullptr;
  return C ? C->origin : kNone;
}

std::vector<std::string> originsComputedBy(const CallNode &C) {
  if (!C.covers.empty())
    return C.covers;
  if (C.origin.empty())
    return {};
  return {C.origin};
}

std::vector<std::string> originsIn(const Expr &E) {
  std::vector<std::string> Out;
  postOrderVisit(E, [&](const Expr &X) {
    const auto *C = X->as<CallNode>();
    if (!C || !C->callee->as<OpNode>())
      return;
    for (std::string &O : originsComputedBy(*C))
      if (std::find(Out.begin(), Out.end(), O) == Out.end())
        Out.push_back(std::move(O));
  });
  return Out;
}

Expr withCovers(const Expr &Call, std::vector<std::string> Covers) {
  const auto *C = Call->as<CallNode>();
  if (!C)
    return Call;
  auto N = std::make_shared<CallNode>(C->callee, C->args, C->attrs);
  N->origin = C->origin;
  N->covers = std::move(Covers);
  N->checkedType = C->checkedType;
  return N;
}

std::unordered_set<const CallNode *> originValueCalls(const Expr &E) {
  std::unordered_map<const VarNode *, const ExprNode *> Bound;
  std::vector<const CallNode *> Calls;
  postOrderVisit(E, [&](const Expr &X) {
    if (const auto *L = X->as<LetNode>())
      Bound[L->var.get()] = L->value.get();
    else if (const auto *C = X->as<CallNode>())
      Calls.push_back(C);
  });
  // The call whose result A is (through let-bound variables and
  // projections of a tuple result), or null.
  auto Producer = [&](const ExprNode *A) -> const CallNode * {
    for (int Steps = 0; A && Steps < 64; ++Steps) {
      if (const auto *V = A->as<VarNode>()) {
        auto It = Bound.find(V);
        A = It == Bound.end() ? nullptr : It->second;
      } else if (const auto *G = A->as<TupleGetItemNode>()) {
        A = G->tuple.get();
      } else {
        return A->as<CallNode>();
      }
    }
    return nullptr;
  };
  std::unordered_set<const CallNode *> Internal;
  for (const CallNode *U : Calls) {
    std::vector<std::string> Reader = originsComputedBy(*U);
    for (const Expr &A : U->args) {
      const CallNode *P = Producer(A.get());
      if (P && !P->origin.empty() &&
          std::find(Reader.begin(), Reader.end(), P->origin) != Reader.end())
        Internal.insert(P);
    }
  }
  std::unordered_set<const CallNode *> Out;
  for (const CallNode *C : Calls)
    if (!C->origin.empty() && !Internal.count(C))
      Out.insert(C);
  return Out;
}

} // namespace rivet::ir
