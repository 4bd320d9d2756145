//===- TreeEnsemble.cc - The trees of a tree_ensemble call ----------------===//
#include "kernels/TreeEnsemble.h"

#include "kernels/AttrSchema.h"
#include "kernels/Error.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace rivet {

namespace {

constexpr const char *kTreeEnsembleOp = "tree_ensemble";

using Aggregate = TreeEnsembleModel::Aggregate;
using Mode = TreeEnsembleModel::Mode;

constexpr std::array<std::pair<std::string_view, Aggregate>, 4> Aggregates{{
    {"AVERAGE", Aggregate::Average},
    {"SUM", Aggregate::Sum},
    {"MIN", Aggregate::Min},
    {"MAX", Aggregate::Max},
}};

/// Attribute Name (a node or leaf array), which must have Size entries.
template <typename T>
std::vector<T> sized(const OpAttrs &A, const std::string &Name, size_t Size,
                     const char *What) {
  std::vector<T> V;
  if constexpr (std::is_same_v<T, double>)
    V = A.getFloats(Name);
  else
    V = A.getInts(Name);
  if (V.size() != Size)
    fail("{}: attribute '{}' has {} entries for {} {}", kTreeEnsembleOp, Name,
         V.size(), Size, What);
  return V;
}

/// Fails unless V is a flag (0 or 1).
bool treeFlag(const std::string &Name, size_t I, int64_t V) {
  if (V != 0 && V != 1)
    fail("{}: attribute '{}' must hold 0 or 1, got {} at {}", kTreeEnsembleOp,
         Name, V, I);
  return V == 1;
}

/// Fails when a tree reached from a root loops back on itself (walking it
/// would never end).
void checkAcyclic(const TreeEnsembleModel &M) {
  enum State : uint8_t { Unseen, OnPath, Done };
  std::vector<State> Seen(M.nodes.size(), Unseen);
  // Depth-first; each entry is a node and whether its children are pushed.
  std::vector<std::pair<int64_t, bool>> Stack;
  for (int64_t R : M.roots) {
    Stack.push_back({R, false});
    while (!Stack.empty()) {
      auto [Id, Expanded] = Stack.back();
      Stack.pop_back();
      State &S = Seen[(size_t)Id];
      if (Expanded) {
        S = Done;
        continue;
      }
      if (S == Done)
        continue;
      if (S == OnPath)
        fail("{}: the trees have a cycle through node {}", kTreeEnsembleOp, Id);
      S = OnPath;
      Stack.push_back({Id, true});
      const TreeEnsembleModel::Node &N = M.nodes[(size_t)Id];
      for (auto [Leaf, Child] : {std::pair{N.trueIsLeaf, N.trueId},
                                 std::pair{N.falseIsLeaf, N.falseId}})
        if (!Leaf)
          Stack.push_back({Child, false});
    }
  }
}

} // namespace

bool TreeEnsembleModel::goesTrue(const Node &N, double V) const {
  if (std::isnan(V) && N.missingTracksTrue)
    return true;
  switch (N.mode) {
  case Mode::Leq: return V <= N.split;
  case Mode::Lt: return V < N.split;
  case Mode::Gte: return V >= N.split;
  case Mode::Gt: return V > N.split;
  case Mode::Eq: return V == N.split;
  case Mode::Neq: return V != N.split;
  case Mode::Member:
    // NaN is in no set (and would compare equal to any in a search).
    return !std::isnan(V) &&
           std::binary_search(members.begin() + (ptrdiff_t)N.membersBegin,
                              members.begin() + (ptrdiff_t)N.membersEnd, V);
  }
  return false;
}

TreeEnsembleModel readTreeEnsemble(const Attrs &Given) {
  OpAttrs A(kTreeEnsembleOp, Given);
  TreeEnsembleModel M;

  M.numTargets = A.getInt("n_targets");
  if (M.numTargets < 1)
    fail("{}: attribute 'n_targets' must be at least 1, got {}",
         kTreeEnsembleOp, M.numTargets);
  const std::string &Agg = A.getString("aggregate_function");
  auto It = std::find_if(Aggregates.begin(), Aggregates.end(),
                         [&](const auto &P) { return P.first == Agg; });
  if (It == Aggregates.end())
    fail("{}: attribute 'aggregate_function' must be AVERAGE, SUM, MIN or "
         "MAX, got \"{}\"",
         kTreeEnsembleOp, Agg);
  M.aggregate = It->second;

  // Leaves.
  M.leafTargets = A.getInts("leaf_targetids");
  size_t NumLeaves = M.leafTargets.size();
  M.leafWeights = sized<double>(A, "leaf_weights", NumLeaves, "leaves");
  for (size_t I = 0; I < NumLeaves; ++I)
    if (M.leafTargets[I] < 0 || M.leafTargets[I] >= M.numTargets)
      fail("{}: leaf {} has target {}, outside [0, {})", kTreeEnsembleOp, I,
           M.leafTargets[I], M.numTargets);

  // Nodes.
  std::vector<int64_t> Features = A.getInts("nodes_featureids");
  size_t NumNodes = Features.size();
  const char *NodesWhat = "nodes";
  std::vector<double> Splits =
      sized<double>(A, "nodes_splits", NumNodes, NodesWhat);
  std::vector<int64_t> Modes =
      sized<int64_t>(A, "nodes_modes", NumNodes, NodesWhat);
  std::vector<int64_t> TrueIds =
      sized<int64_t>(A, "nodes_truenodeids", NumNodes, NodesWhat);
  std::vector<int64_t> TrueLeafs =
      sized<int64_t>(A, "nodes_trueleafs", NumNodes, NodesWhat);
  std::vector<int64_t> FalseIds =
      sized<int64_t>(A, "nodes_falsenodeids", NumNodes, NodesWhat);
  std::vector<int64_t> FalseLeafs =
      sized<int64_t>(A, "nodes_falseleafs", NumNodes, NodesWhat);
  std::vector<int64_t> Missing =
      A.has("nodes_missing_value_tracks_true")
          ? sized<int64_t>(A, "nodes_missing_value_tracks_true", NumNodes,
                           NodesWhat)
          : std::vector<int64_t>(NumNodes, 0);

  // Member sets, in node order; each ends at a NaN (the last one may not).
  std::vector<std::pair<size_t, size_t>> Sets;
  if (A.has("membership_values")) {
    M.members = A.getFloats("membership_values");
    size_t Begin = 0, Kept = 0;
    for (size_t I = 0; I <= M.members.size(); ++I) {
      bool End = I == M.members.size();
      if (!End && !std::isnan(M.members[I])) {
        M.members[Kept++] = M.members[I];
        continue;
      }
      if (!End || Kept > Begin) {
        std::sort(M.members.begin() + (ptrdiff_t)Begin,
                  M.members.begin() + (ptrdiff_t)Kept);
        Sets.push_back({Begin, Kept});
      }
      Begin = Kept;
    }
    M.members.resize(Kept);
  }

  auto CheckTarget = [&](size_t I, const char *Side, bool Leaf, int64_t Id) {
    size_t Limit = Leaf ? NumLeaves : NumNodes;
    if (Id < 0 || (size_t)Id >= Limit)
      fail("{}: node {}'s {} branch is {} {}, outside [0, {})", kTreeEnsembleOp,
           I, Side, Leaf ? "leaf" : "node", Id, Limit);
  };
  size_t NextSet = 0;
  for (size_t I = 0; I < NumNodes; ++I) {
    TreeEnsembleModel::Node N;
    N.feature = Features[I];
    if (N.feature < 0)
      fail("{}: node {} reads feature {}", kTreeEnsembleOp, I, N.feature);
    M.numFeatures = std::max(M.numFeatures, N.feature + 1);
    N.split = Splits[I];
    if (Modes[I] < 0 || Modes[I] > (int64_t)Mode::Member)
      fail("{}: node {} has mode {}, not one of 0 (LEQ) to 6 (MEMBER)",
           kTreeEnsembleOp, I, Modes[I]);
    N.mode = (Mode)Modes[I];
    N.missingTracksTrue =
        treeFlag("nodes_missing_value_tracks_true", I, Missing[I]);
    N.trueIsLeaf = treeFlag("nodes_trueleafs", I, TrueLeafs[I]);
    N.falseIsLeaf = treeFlag("nodes_falseleafs", I, FalseLeafs[I]);
    N.trueId = TrueIds[I];
    N.falseId = FalseIds[I];
    CheckTarget(I, "true", N.trueIsLeaf, N.trueId);
    CheckTarget(I, "false", N.falseIsLeaf, N.falseId);
    N.membersBegin = N.membersEnd = 0;
    if (N.mode == Mode::Member) {
      if (NextSet == Sets.size())
        fail("{}: attribute 'membership_values' has {} sets, fewer than the "
             "nodes of mode 6 (MEMBER)",
             kTreeEnsembleOp, Sets.size());
      std::tie(N.membersBegin, N.membersEnd) = Sets[NextSet++];
    }
    M.nodes.push_back(N);
  }
  if (NextSet != Sets.size())
    fail("{}: attribute 'membership_values' has {} sets for {} nodes of mode "
         "6 (MEMBER)",
         kTreeEnsembleOp, Sets.size(), NextSet);

  M.roots = A.getInts("tree_roots");
  if (M.roots.empty())
    fail("{}: attribute 'tree_roots' names no tree", kTreeEnsembleOp);
  for (int64_t R : M.roots)
    if (R < 0 || (size_t)R >= NumNodes)
      fail("{}: tree root {} is outside [0, {})", kTreeEnsembleOp, R, NumNodes);
  checkAcyclic(M);
  return M;
}

} // namespace rivet
