//===- DominatorTree.cc - Post-dominators with Boost.Graph ----------------===//
#include "ir/transforms/DominatorTree.h"

#include "kernels/Error.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dominator_tree.hpp>

namespace rivet::ir {

/// Post-dominators are the dominators of the reversed graph rooted at a
/// virtual exit, which Lengauer-Tarjan computes in near-linear time.
std::vector<int64_t>
immediatePostDominators(const std::vector<std::vector<size_t>> &Successors,
                        const std::vector<bool> &LeavesGraph) {
  using Graph =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
  size_t N = Successors.size();
  RIVET_CHECK(LeavesGraph.size() == N,
              "immediatePostDominators: {} nodes but {} exit flags", N,
              LeavesGraph.size());
  const size_t Exit = N;
  Graph Reversed(N + 1);
  for (size_t U = 0; U < N; ++U) {
    for (size_t V : Successors[U]) {
      RIVET_CHECK(V < N, "immediatePostDominators: edge to node {} of {}", V,
                  N);
      boost::add_edge(V, U, Reversed);
    }
    if (Successors[U].empty() || LeavesGraph[U])
      boost::add_edge(Exit, U, Reversed);
  }
  std::vector<Vertex> IDom(N + 1, boost::graph_traits<Graph>::null_vertex());
  auto DomMap = boost::make_iterator_property_map(
      IDom.begin(), boost::get(boost::vertex_index, Reversed));
  boost::lengauer_tarjan_dominator_tree(Reversed, boost::vertex(Exit, Reversed),
                                        DomMap);
  std::vector<int64_t> Result(N, -1);
  for (size_t U = 0; U < N; ++U) {
    // A node that cannot reach the exit (a cycle; dataflow graphs have none)
    // has no post-dominator at all; treat it like one that leaves the graph.
    Vertex D = IDom[U];
    if (D != boost::graph_traits<Graph>::null_vertex() && D != Exit)
      Result[U] = (int64_t)D;
  }
  return Result;
}

} // namespace rivet::ir
