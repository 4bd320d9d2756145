//===- GraphImporter.cc - ONNX graphs to IR let-chains --------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxTensor.h"
#include "ir/Origin.h"

#include <algorithm>
#include <optional>
#include <set>

namespace rivet::frontend {

ir::Var GraphImporter::makeVar(std::string_view OnnxName, ir::Type T) {
  std::string Name;
  for (char C : OnnxName)
    Name += (std::isalnum((unsigned char)C) || C == '_') ? C : '_';
  if (Name.empty() || std::isdigit((unsigned char)Name[0]))
    Name = "v" + Name;
  return ir::var(std::move(Name), std::move(T));
}

ir::Expr GraphImporter::lookup(const std::string &Name) const {
  for (const GraphImporter *G = this; G; G = G->Parent) {
    auto It = G->Values.find(Name);
    if (It != G->Values.end())
      return It->second;
  }
  return nullptr;
}

ir::Type GraphImporter::declaredType(const std::string &Name) const {
  for (const GraphImporter *G = this; G; G = G->Parent) {
    auto It = G->Declared.find(Name);
    if (It != G->Declared.end())
      return It->second;
  }
  return nullptr;
}

ir::Type GraphImporter::withoutExporterSymbols(const ir::Type &T) const {
  const auto *TT = T->as<ir::TensorTypeNode>();
  if (!TT || !TT->shape)
    return T;
  bool Changed = false;
  std::vector<ir::Dim> Dims = *TT->shape;
  for (ir::Dim &D : Dims)
    if (D.isSymbol() && !InterfaceSymbols.count(D.name)) {
      D = ir::Dim::any();
      Changed = true;
    }
  return Changed ? ir::tensorType(std::move(Dims), TT->dtype) : T;
}

ir::Expr GraphImporter::bind(ir::Expr E, std::string_view Hint, ir::Type T) {
  if (!T && (E->as<ir::VarNode>() || E->as<ir::ConstantNode>()))
    return E;
  ir::Var V = makeVar(Hint, std::move(T));
  Bindings.emplace_back(V, std::move(E));
  return V;
}

void GraphImporter::define(const std::string &Name, ir::Expr E) {
  if (Name.empty())
    return;
  if (Values.count(Name))
    fail("{}: value '{}' is defined twice (the graph is not in SSA form)",
         State.what, Name);
  Values[Name] = std::move(E);
}

ir::Expr GraphImporter::importGraph(
    const onnx::GraphProto &G, const std::vector<ir::Expr> &Inputs,
    const std::function<ir::Expr(std::vector<ir::Expr>)> &Finish) {
  std::string GraphName =
      G.name().empty() ? "graph" : "graph '" + G.name() + "'";
  std::set<std::string> InputNames;
  for (const auto &VI : G.input())
    if (!InputNames.insert(VI.name()).second)
      fail("{}: {} declares input '{}' twice", State.what, GraphName,
           VI.name());
  // The main graph's inputs and outputs are the model's interface: their
  // symbols are the user's names; any other symbol is the exporter's.
  auto Declare = [&](const onnx::ValueInfoProto &VI, bool Interface) {
    if (!VI.has_type())
      return;
    ir::Type T = typeFromProto(VI.type(), State.what + ": " + VI.name());
    if (!T)
      return;
    if (Interface)
      if (const auto *TT = T->as<ir::TensorTypeNode>(); TT && TT->shape)
        for (const ir::Dim &D : *TT->shape)
          if (D.isSymbol())
            InterfaceSymbols.insert(D.name);
    Declared[VI.name()] = Interface ? T : withoutExporterSymbols(T);
  };
  if (Parent)
    InterfaceSymbols = Parent->InterfaceSymbols;
  for (const auto &VI : G.input())
    Declare(VI, !Parent);
  for (const auto &VI : G.value_info())
    Declare(VI, false);
  for (const auto &VI : G.output())
    Declare(VI, !Parent);

  // Initializers first: a graph input with the same name is overridden by
  // the caller only when it is also listed in Inputs (handled below).
  for (const auto &Init : G.initializer())
    define(Init.name(),
           ir::constant(tensorFromProto(Init, State.modelDir,
                                        State.what + ": initializer '" +
                                            Init.name() + "'")));
  size_t NextInput = 0;
  for (const auto &In : G.input()) {
    if (Values.count(In.name()))
      continue; // an initializer with a default value: a constant here
    if (NextInput >= Inputs.size())
      fail("{}: {} has more inputs than were provided ({})", State.what,
           GraphName, Inputs.size());
    Values[In.name()] = Inputs[NextInput++];
  }
  if (NextInput != Inputs.size())
    fail("{}: {} declares {} inputs, {} were provided", State.what, GraphName,
         NextInput, Inputs.size());

  for (const auto &N : G.node())
    importNode(N);

  std::vector<ir::Expr> Outputs;
  for (const auto &Out : G.output()) {
    ir::Expr E = lookup(Out.name());
    if (!E)
      fail("{}: output '{}' of {} is never computed", State.what, Out.name(),
           GraphName);
    Outputs.push_back(E);
  }
  ir::Expr Body = Finish(std::move(Outputs));
  for (auto It = Bindings.rbegin(); It != Bindings.rend(); ++It)
    Body = ir::let(It->first, It->second, Body);
  return Body;
}

void GraphImporter::importNode(const onnx::NodeProto &N) {
  std::string_view Domain = canonicalOnnxDomain(N.domain());
  auto Imported = State.opsets.find(Domain);
  int64_t Opset = Imported == State.opsets.end() ? 0 : Imported->second;
  NodeContext C(*this, N, Domain, Opset);
  const OnnxDomainRange *Range = findOnnxDomain(Domain);
  if (!Range) {
    std::string Known;
    for (const OnnxDomainRange &D : kOnnxDomains)
      Known += (Known.empty() ? "" : ", ") + std::string(D.name);
    C.error("operator domain '{}' is not supported (Rivet reads {})", Domain,
            Known);
  }
  if (!Opset)
    C.error("the model does not import domain '{}' (its opset_import has no "
            "entry for it)",
            Domain);
  if (Opset < Range->minVersion || Opset > Range->maxVersion)
    C.error("{} opset {} is not supported (Rivet reads opsets {} to {})",
            Domain, Opset, Range->minVersion, Range->maxVersion);
  const OnnxConverter *Conv =
      ConverterRegistry::global().find(Domain, N.op_type(), Opset);
  if (!Conv)
    C.error("unsupported operator");
  // Its calls come from this node: its name, or its first output's
  // (unique in the model) when it has none. A node with subgraphs (If,
  // Loop, Scan) makes only control flow around its bodies' nodes, which
  // have origins of their own: its counters and conditions get none.
  bool HasSubgraphs = std::any_of(
      N.attribute().begin(), N.attribute().end(),
      [](const auto &A) { return A.has_g() || A.graphs_size() > 0; });
  std::optional<ir::OriginScope> Scope;
  if (HasSubgraphs)
    Scope.emplace(ir::OriginScope::None{});
  else
    Scope.emplace(!N.name().empty()     ? N.name()
                  : N.output_size() > 0 ? N.output(0)
                                        : N.op_type());
  std::vector<ir::Expr> Outs = Conv->convert(C);
  if (size_t I = C.firstUnconsideredInput(); I < C.numInputs())
    C.error("input {} ('{}') is not an input of {} at opset {} (the operator "
            "has fewer inputs); it would be ignored",
            I, N.input((int)I), N.op_type(), Opset);
  if (Outs.size() < (size_t)N.output_size()) {
    // Trailing outputs the converter does not produce must be unused.
    for (int I = (int)Outs.size(); I < N.output_size(); ++I)
      if (!N.output(I).empty())
        C.error("output {} ('{}') is not supported", I, N.output(I));
  }
  for (int I = 0; I < N.output_size(); ++I) {
    const std::string &Name = N.output(I);
    if (Name.empty())
      continue;
    if (!Outs[I])
      C.error("output {} ('{}') is not supported", I, Name);
    ir::Expr E = Outs[I];
    if (!E->as<ir::VarNode>() && !E->as<ir::ConstantNode>()) {
      ir::Var V = makeVar(Name, declaredType(Name));
      Bindings.emplace_back(V, E);
      E = V;
    }
    define(Name, E);
  }
}

} // namespace rivet::frontend
