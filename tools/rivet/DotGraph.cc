//===- DotGraph.cc - A module as a Graphviz picture -----------------------===//
#include "DotGraph.h"

#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "ir/transforms/Pass.h"
#include "kernels/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace rivet::cli {

namespace {

/// A DOT quoted string: quotes and backslashes escaped, line breaks as \n,
/// control characters and bytes that are not UTF-8 as '?' (ONNX names may
/// hold anything; dot rejects or mangles such bytes).
std::string quote(const std::string &S) {
  std::string Q = "\"";
  for (size_t I = 0; I < S.size();) {
    unsigned char C = (unsigned char)S[I];
    if (C == '\n') {
      Q += "\\n";
      ++I;
      continue;
    }
    if (C == '"' || C == '\\') {
      Q += '\\';
      Q += (char)C;
      ++I;
      continue;
    }
    if (C < 0x80) {
      Q += C < 0x20 || C == 0x7f ? '?' : (char)C;
      ++I;
      continue;
    }
    size_t Len = C >= 0xf5   ? 0
                 : C >= 0xf0 ? 4
                 : C >= 0xe0 ? 3
                 : C >= 0xc2 ? 2
                             : 0;
    bool Ok = Len && I + Len <= S.size();
    for (size_t K = 1; Ok && K < Len; ++K)
      Ok = ((unsigned char)S[I + K] & 0xc0) == 0x80;
    if (!Ok) {
      Q += '?';
      ++I;
      continue;
    }
    Q.append(S, I, Len);
    I += Len;
  }
  return Q + "\"";
}

/// S cut to about N characters, so that no label dwarfs the graph.
std::string shorten(const std::string &S, size_t N = 60) {
  return S.size() <= N ? S : S.substr(0, N - 3) + "...";
}

/// A type as a label line: "(batch, 8), float32" for a tensor.
std::string typeText(const ir::Type &T) {
  if (!T)
    return "";
  std::string S = ir::typeToString(T);
  if (S.rfind("Tensor[", 0) == 0 && S.back() == ']')
    S = S.substr(7, S.size() - 8);
  return shorten(S);
}

std::string patternText(const ir::Pattern &P) {
  if (!P)
    return "_";
  std::string Fields;
  for (const ir::Pattern &C : P->children)
    Fields += (Fields.empty() ? "" : ", ") + patternText(C);
  switch (P->kind) {
  case ir::PatternKind::Wildcard: return "_";
  case ir::PatternKind::Var: return "%" + P->var->nameHint;
  case ir::PatternKind::Constructor:
    return P->ctor->name + (P->children.empty() ? "" : "(" + Fields + ")");
  case ir::PatternKind::Tuple: return "(" + Fields + ")";
  }
  return "_";
}

// Cluster and node styles, by what they stand for.
constexpr const char *FusedStyle =
    "style=\"filled,rounded\"; fillcolor=\"#fdf3d0\"; color=\"#c9a227\"";
constexpr const char *LoopStyle = "style=rounded; color=\"#1565c0\"";
constexpr const char *FunctionStyle = "style=rounded; color=\"#757575\"";
constexpr const char *IfStyle = "style=rounded; color=\"#2e7d32\"";
constexpr const char *BranchStyle = "style=dashed; color=\"#2e7d32\"";

/// The graph nodes a value comes from. A tuple built in view keeps its
/// fields apart (nodes is then their union), so that a projection of it
/// draws from one field only.
struct ValueNodes {
  std::vector<size_t> nodes;
  std::vector<ValueNodes> fields;

  void merge(const ValueNodes &O) {
    for (size_t N : O.nodes)
      if (std::find(nodes.begin(), nodes.end(), N) == nodes.end())
        nodes.push_back(N);
  }
};

/// Walks @main (then the global functions it reaches) once, writing each
/// node into the cluster open where it is met; the edges are written last,
/// at the top level, so that an edge never moves a node into a cluster.
class DotBuilder : public ir::ExprVisitor {
public:
  explicit DotBuilder(const ir::Module &M) : M(M) {}
  std::string build(const std::string &Title);

protected:
  // Variables take their binding's value (eval), so visitVar has nothing
  // to do; an Op or a Constructor is drawn where it is called.
  void visitGlobalVar(const ir::GlobalVarNode &N) override;
  void visitConstant(const ir::ConstantNode &N) override;
  void visitCall(const ir::CallNode &N) override;
  void visitFunction(const ir::FunctionNode &N) override;
  void visitLet(const ir::LetNode &N) override;
  void visitLetBinding(const ir::LetNode &N) override;
  void visitIf(const ir::IfNode &N) override;
  void visitTuple(const ir::TupleNode &N) override;
  void visitTupleGetItem(const ir::TupleGetItemNode &N) override;
  void visitMatch(const ir::MatchNode &N) override;

private:
  /// A function drawn as a cluster: the node its calls point at (its first
  /// parameter's) and the cluster.
  struct Drawn {
    size_t entry, cluster;
  };

  ValueNodes eval(const ir::Expr &E);
  size_t newNode() { return NumNodes++; }
  size_t newCluster() { return NumClusters++; }
  void declare(size_t Id, const std::string &Label, const std::string &Attrs);
  size_t addNode(const std::string &Label, const std::string &Attrs = "") {
    size_t Id = newNode();
    declare(Id, Label, Attrs);
    return Id;
  }
  void addEdge(size_t From, size_t To, const std::string &Attrs = "");
  void addEdges(const ValueNodes &From, size_t To) {
    for (size_t N : From.nodes)
      addEdge(N, To);
  }
  void openCluster(size_t Id, const std::string &Label,
                   const std::string &Attrs);
  void closeCluster();
  void line(const std::string &S) {
    Body.append(2 * (Open.size() + 1), ' ');
    Body += S;
    Body += '\n';
  }
  void drawFunction(const ir::FunctionNode &F, const std::string &Label,
                    const Drawn &D, const char *Style);
  /// Global Name's drawing (queued to be drawn after @main), or null for
  /// @main and the prelude, which are not drawn.
  const Drawn *global(const std::string &Name);
  void bindPattern(const ir::Pattern &P, const ValueNodes &V);

  const ir::Module &M;
  std::string Body, Edges;
  std::vector<size_t> Open; // the clusters being written, innermost last
  size_t NumNodes = 0, NumClusters = 0, NumFused = 0;
  std::unordered_map<const ir::ExprNode *, ValueNodes> Values;
  std::unordered_map<const ir::VarNode *, ValueNodes> Bindings;
  std::unordered_map<const ir::VarNode *, Drawn> Locals;
  std::map<std::string, Drawn> Globals;
  std::deque<std::string> Pending;
  std::set<std::pair<size_t, size_t>> EdgeSet;
};

ValueNodes DotBuilder::eval(const ir::Expr &E) {
  if (!E)
    return {};
  visit(E);
  if (const auto *V = E->as<ir::VarNode>()) {
    auto It = Bindings.find(V);
    return It == Bindings.end() ? ValueNodes{} : It->second;
  }
  auto It = Values.find(E.get());
  return It == Values.end() ? ValueNodes{} : It->second;
}

void DotBuilder::declare(size_t Id, const std::string &Label,
                         const std::string &Attrs) {
  line(fmt::format("n{} [label={}{}{}];", Id, quote(Label),
                   Attrs.empty() ? "" : ", ", Attrs));
}

void DotBuilder::addEdge(size_t From, size_t To, const std::string &Attrs) {
  if (!EdgeSet.insert({From, To}).second)
    return;
  Edges +=
      fmt::format("  n{} -> n{}{}{}{};\n", From, To, Attrs.empty() ? "" : " [",
                  Attrs, Attrs.empty() ? "" : "]");
}

void DotBuilder::openCluster(size_t Id, const std::string &Label,
                             const std::string &Attrs) {
  line(fmt::format("subgraph cluster_{} {{", Id));
  Open.push_back(Id);
  line(fmt::format("label={}; {};", quote(Label), Attrs));
}

void DotBuilder::closeCluster() {
  Open.pop_back();
  line("}");
}

const DotBuilder::Drawn *DotBuilder::global(const std::string &Name) {
  if (Name == "main" || ir::isPreludeName(Name) || !M.hasFunction(Name) ||
      !M.function(Name)->as<ir::FunctionNode>())
    return nullptr;
  auto [It, New] = Globals.try_emplace(Name, Drawn{newNode(), newCluster()});
  if (New)
    Pending.push_back(Name);
  return &It->second;
}

/// F as a cluster: a node per parameter, the body, and a return node fed
/// by the body's value.
void DotBuilder::drawFunction(const ir::FunctionNode &F,
                              const std::string &Label, const Drawn &D,
                              const char *Style) {
  openCluster(D.cluster, Label, Style);
  if (F.params.empty())
    declare(D.entry, "()", "shape=ellipse");
  for (size_t I = 0; I < F.params.size(); ++I) {
    const ir::Var &P = F.params[I];
    size_t Id = I == 0 ? D.entry : newNode();
    const ir::Type &T = P->checkedType ? P->checkedType : P->typeAnnotation;
    std::string Type = typeText(T);
    declare(Id, "%" + P->nameHint + (Type.empty() ? "" : "\n" + Type),
            "shape=ellipse");
    Bindings[P.get()] = ValueNodes{{Id}, {}};
  }
  size_t Return = newNode();
  ValueNodes R = eval(F.body);
  declare(Return, "return", "shape=plaintext");
  addEdges(R, Return);
  closeCluster();
}

void DotBuilder::visitGlobalVar(const ir::GlobalVarNode &N) {
  // A global function passed as a value: its drawing stands for it.
  if (const Drawn *D = global(N.name))
    Values[&N] = ValueNodes{{D->entry}, {}};
}

void DotBuilder::visitConstant(const ir::ConstantNode &N) {
  // Scalars (loop counters, epsilons) would only clutter the picture.
  if (!N.value.defined() || numElements(N.value.shape()) <= 1)
    return;
  Values[&N] =
      ValueNodes{{addNode("const " + typeText(N.checkedType),
                          "shape=note, fillcolor=\"#eeeeee\", fontsize=8")},
                 {}};
}

void DotBuilder::visitCall(const ir::CallNode &N) {
  if (const auto *Fn = N.callee->as<ir::FunctionNode>()) {
    // A function literal called in place (a fused group, FuseOps' output):
    // its parameters are the arguments, its value its body's.
    std::vector<ValueNodes> Args;
    for (const ir::Expr &A : N.args)
      Args.push_back(eval(A));
    Visited.insert(N.callee.get());
    for (size_t I = 0; I < Fn->params.size() && I < Args.size(); ++I)
      Bindings[Fn->params[I].get()] = Args[I];
    bool Fused = ir::isPrimitiveFunction(N.callee);
    openCluster(newCluster(),
                Fused ? fmt::format("fused group {}", ++NumFused) : "fn",
                Fused ? FusedStyle : FunctionStyle);
    Values[&N] = eval(Fn->body);
    closeCluster();
    return;
  }
  std::vector<ValueNodes> Args;
  for (const ir::Expr &A : N.args)
    Args.push_back(eval(A));
  std::string Type = typeText(N.checkedType);
  std::string Label, Attrs;
  const Drawn *Target = nullptr;
  std::optional<ValueNodes> Closure;
  if (const auto *Op = N.callee->as<ir::OpNode>()) {
    Label = Op->name();
    std::string Origins;
    for (const std::string &O : N.covers)
      Origins += (Origins.empty() ? "" : ", ") + O;
    if (Origins.empty())
      Origins = N.origin;
    if (!Origins.empty())
      Label += "\n<" + shorten(Origins) + ">";
  } else if (const auto *C = N.callee->as<ir::ConstructorNode>()) {
    Label = C->name;
    Attrs = "shape=ellipse";
  } else if (const auto *G = N.callee->as<ir::GlobalVarNode>()) {
    Label = "call @" + G->name;
    Attrs = "shape=cds";
    Target = global(G->name);
  } else {
    const auto *V = N.callee->as<ir::VarNode>();
    auto It = V ? Locals.find(V) : Locals.end();
    Label = "call " + (V ? "%" + V->nameHint : std::string("closure"));
    Attrs = "shape=cds";
    if (It != Locals.end())
      Target = &It->second;
    else // a closure from elsewhere: where it comes from feeds the call
      Closure = eval(N.callee);
  }
  size_t Id = addNode(Type.empty() ? Label : Label + "\n" + Type, Attrs);
  for (const ValueNodes &A : Args)
    addEdges(A, Id);
  if (Closure)
    for (size_t From : Closure->nodes)
      addEdge(From, Id, "style=dotted");
  if (Target) {
    // A call from inside the function (a loop's next iteration) points
    // back without bending the layout; one from outside enters its cluster.
    bool Inside =
        std::find(Open.begin(), Open.end(), Target->cluster) != Open.end();
    addEdge(Id, Target->entry,
            Inside ? "style=dashed, color=\"#1565c0\", constraint=false"
                   : fmt::format("style=dashed, color=\"#1565c0\", "
                                 "lhead=cluster_{}",
                                 Target->cluster));
  }
  Values[&N] = ValueNodes{{Id}, {}};
}

void DotBuilder::visitFunction(const ir::FunctionNode &N) {
  // A function value that is not called in place (a closure passed on).
  Drawn D{newNode(), newCluster()};
  drawFunction(N, "fn", D, FunctionStyle);
  Values[&N] = ValueNodes{{D.entry}, {}};
}

void DotBuilder::visitLet(const ir::LetNode &N) {
  ExprVisitor::visitLet(N); // the chain, iteratively
  const ir::LetNode *Last = &N;
  while (Last->body && Last->body->kind == ir::ExprKind::Let)
    Last = Last->body->as<ir::LetNode>();
  Values[&N] = eval(Last->body);
}

void DotBuilder::visitLetBinding(const ir::LetNode &N) {
  const auto *Fn = N.value ? N.value->as<ir::FunctionNode>() : nullptr;
  if (!Fn) {
    Bindings[N.var.get()] = eval(N.value);
    return;
  }
  // A local function (an imported Loop's or Scan's body calls itself):
  // its name is bound before its body is drawn.
  Drawn D{newNode(), newCluster()};
  Locals[N.var.get()] = D;
  Bindings[N.var.get()] = ValueNodes{{D.entry}, {}};
  Visited.insert(N.value.get());
  std::vector<ir::Var> Free = ir::freeVars(N.value);
  bool Recursive = std::find(Free.begin(), Free.end(), N.var) != Free.end();
  drawFunction(*Fn, (Recursive ? "loop %" : "fn %") + N.var->nameHint, D,
               Recursive ? LoopStyle : FunctionStyle);
}

void DotBuilder::visitIf(const ir::IfNode &N) {
  ValueNodes Cond = eval(N.cond);
  openCluster(newCluster(), "if", IfStyle);
  size_t Test = addNode("if", "shape=diamond");
  addEdges(Cond, Test);
  ValueNodes R;
  for (const auto &[Label, Branch] :
       {std::pair<const char *, const ir::Expr *>{"then", &N.thenBranch},
        {"else", &N.elseBranch}}) {
    openCluster(newCluster(), Label, BranchStyle);
    // A point where the branch begins, for the edge from the test.
    size_t Entry = addNode("", "shape=point, width=0.06");
    addEdge(Test, Entry, fmt::format("label={}, style=dashed", quote(Label)));
    R.merge(eval(*Branch));
    closeCluster();
  }
  closeCluster();
  Values[&N] = R;
}

void DotBuilder::visitTuple(const ir::TupleNode &N) {
  ValueNodes T;
  for (const ir::Expr &F : N.fields) {
    T.fields.push_back(eval(F));
    T.merge(T.fields.back());
  }
  Values[&N] = std::move(T);
}

void DotBuilder::visitTupleGetItem(const ir::TupleGetItemNode &N) {
  ValueNodes T = eval(N.tuple);
  Values[&N] = N.index >= 0 && (size_t)N.index < T.fields.size()
                   ? T.fields[(size_t)N.index]
                   : T;
}

void DotBuilder::bindPattern(const ir::Pattern &P, const ValueNodes &V) {
  if (!P)
    return;
  if (P->kind == ir::PatternKind::Var)
    Bindings[P->var.get()] = V;
  for (size_t I = 0; I < P->children.size(); ++I)
    bindPattern(P->children[I],
                P->kind == ir::PatternKind::Tuple && I < V.fields.size()
                    ? V.fields[I]
                    : V);
}

void DotBuilder::visitMatch(const ir::MatchNode &N) {
  ValueNodes Data = eval(N.data);
  openCluster(newCluster(), "match", IfStyle);
  size_t Test = addNode("match", "shape=diamond");
  addEdges(Data, Test);
  ValueNodes R;
  for (const ir::Clause &C : N.clauses) {
    std::string Label = shorten(patternText(C.lhs));
    openCluster(newCluster(), Label, BranchStyle);
    size_t Entry = addNode("", "shape=point, width=0.06");
    addEdge(Test, Entry, fmt::format("label={}, style=dashed", quote(Label)));
    bindPattern(C.lhs, Data);
    R.merge(eval(C.rhs));
    closeCluster();
  }
  closeCluster();
  Values[&N] = R;
}

std::string DotBuilder::build(const std::string &Title) {
  const auto *Main = M.hasFunction("main")
                         ? M.function("main")->as<ir::FunctionNode>()
                         : nullptr;
  if (!Main)
    fail("dump --dot: the module has no @main function");
  std::vector<std::string> InputNames, OutputNames;
  if (Main->attrs.has("input_names"))
    InputNames = Main->attrs.getStrings("input_names");
  if (Main->attrs.has("output_names"))
    OutputNames = Main->attrs.getStrings("output_names");
  // @main's parameters are the graph's inputs, named as the user knows them.
  for (size_t I = 0; I < Main->params.size(); ++I) {
    const ir::Var &P = Main->params[I];
    std::string Name = InputNames.size() == Main->params.size()
                           ? InputNames[I]
                           : "%" + P->nameHint;
    const ir::Type &T = P->checkedType ? P->checkedType : P->typeAnnotation;
    std::string Type = typeText(T);
    Bindings[P.get()] =
        ValueNodes{{addNode(Type.empty() ? Name : Name + "\n" + Type,
                            "shape=invhouse, fillcolor=\"#e3f2fd\"")},
                   {}};
  }
  ValueNodes R = eval(Main->body);
  // One output node per result (an ONNX graph's outputs by name).
  const char *OutputStyle = "shape=house, fillcolor=\"#e8f5e9\"";
  if (R.fields.size() > 1 && R.fields.size() == OutputNames.size()) {
    for (size_t I = 0; I < R.fields.size(); ++I)
      addEdges(R.fields[I], addNode(OutputNames[I], OutputStyle));
  } else {
    addEdges(R, addNode(OutputNames.size() == 1 ? OutputNames[0] : "output",
                        OutputStyle));
  }
  while (!Pending.empty()) {
    std::string Name = Pending.front();
    Pending.pop_front();
    drawFunction(*M.function(Name)->as<ir::FunctionNode>(), "@" + Name,
                 Globals.at(Name), FunctionStyle);
  }
  std::string Out = "digraph rivet {\n";
  Out += fmt::format("  graph [compound=true, rankdir=TB, fontname=Helvetica, "
                     "fontsize=11, labelloc=t, label={}];\n",
                     quote(Title));
  Out += "  node [shape=box, style=\"rounded,filled\", fillcolor=white, "
         "fontname=Helvetica, fontsize=10];\n";
  Out += "  edge [fontname=Helvetica, fontsize=8, arrowsize=0.6];\n";
  Out += Body;
  Out += Edges;
  Out += "}\n";
  return Out;
}

} // namespace

std::string moduleToDot(const ir::Module &M, const std::string &Title) {
  return DotBuilder(M).build(Title);
}

} // namespace rivet::cli
