//===- GraphImporter.h - ONNX graphs to IR let-chains -----------*- C++ -*-===//
//
// Translates the nodes of one ONNX graph, in order, into let bindings. A
// subgraph (the body of Loop, If or Scan) gets its own GraphImporter whose
// parent is the enclosing graph's, so it can read values of outer scopes;
// the IR closure that contains it captures them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/onnx/Converter.h"
#include "ir/Module.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace rivet::frontend {

/// State shared by all graphs of one model.
struct ImportState {
  /// The version the model imports of each domain (canonical names).
  std::map<std::string, int64_t, std::less<>> opsets;
  std::string modelDir;
  std::string what; // the model, for messages
  ir::Module *module = nullptr;
};

class GraphImporter {
public:
  GraphImporter(ImportState &S, const GraphImporter *Parent)
      : State(S), Parent(Parent) {}

  /// Translates G with its formal inputs bound to Inputs (vars or other
  /// expressions) and returns the let-chain ending in Finish(outputs).
  ir::Expr
  importGraph(const onnx::GraphProto &G, const std::vector<ir::Expr> &Inputs,
              const std::function<ir::Expr(std::vector<ir::Expr>)> &Finish);

  /// The value named Name in this graph or an enclosing one; null if none.
  ir::Expr lookup(const std::string &Name) const;
  /// The declared type (graph input/output or value_info) of Name, or null.
  ir::Type declaredType(const std::string &Name) const;
  /// Binds E under a fresh let var named after Hint and returns the var.
  ir::Expr bind(ir::Expr E, std::string_view Hint, ir::Type T = nullptr);
  ImportState &state() const { return State; }
  /// A let-bound variable whose name is valid in the text format.
  static ir::Var makeVar(std::string_view OnnxName, ir::Type T = nullptr);

private:
  void importNode(const onnx::NodeProto &N);
  void define(const std::string &Name, ir::Expr E);
  /// T with each symbolic extent that is not one of InterfaceSymbols unknown
  /// (`?`). An exporter names the extents of intermediate values afresh
  /// (torch: `ArgMax_output_0_dim_0`, `Loop_dim_1`) where type inference
  /// knows them to be an input's (`batch`); kept, a fresh symbol joined with
  /// the inferred one made a loop's state `?`, and a fused group with an
  /// unknown extent cannot be generated.
  ir::Type withoutExporterSymbols(const ir::Type &T) const;

  ImportState &State;
  const GraphImporter *Parent;
  std::map<std::string, ir::Expr> Values;
  std::map<std::string, ir::Type> Declared;
  /// The symbolic extents the model's own inputs and outputs declare (the
  /// user's dynamic axes); any other symbol in a declared type is the
  /// exporter's.
  std::set<std::string> InterfaceSymbols;
  std::vector<std::pair<ir::Var, ir::Expr>> Bindings;
};

} // namespace rivet::frontend
