//===- onnx_differential_test.cc - randomized ONNX differential testing ---===//
//
// Generates small random ONNX graphs (opset 18: chains and DAGs of the
// elementwise, comparison, Where, Reduce*, Cast, Slice, Gather, Split,
// Concat and layout operators, with edge-case attributes and inputs:
// INT64_MIN/MAX slice bounds, negative steps, out-of-range and negative
// Gather indices, constant or read from a graph input, Split sizes that do
// not add up), imports them as the `rivet run` path does and feeds them
// edge values (support/Differential.h). Every executor must agree with the
// reference interpreter. A node is kept when the graph with it imports and
// type-checks, otherwise the generator tries another.
//
// RIVET_DIFF_SEED picks the sequence (default fixed); RIVET_DIFF_ITERATIONS
// is the number of graphs (default 1,500, the same on every machine) and
// RIVET_DIFF_SECONDS a bound on the time (default 120 s). A failure prints
// the model (ModelProto::DebugString), the imported module and the case's
// seed.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Importer.h"
#include "ir/Printer.h"
#include "ir/Type.h"
#include "ir/TypeInference.h"
#include "support/Differential.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

using namespace rivet;
using namespace rivet::testing::diff;

namespace {

using TP = onnx::TensorProto;

constexpr int64_t I64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t I64Max = std::numeric_limits<int64_t>::max();

DType dtypeOf(int32_t T) {
  switch (T) {
  case TP::FLOAT: return DType::Float32;
  case TP::INT32: return DType::Int32;
  case TP::INT64: return DType::Int64;
  default: return DType::Bool;
  }
}
int32_t onnxTypeOf(DType T) {
  switch (T) {
  case DType::Float32: return TP::FLOAT;
  case DType::Int32: return TP::INT32;
  case DType::Int64: return TP::INT64;
  default: return TP::BOOL;
  }
}
bool isInt(int32_t T) { return T == TP::INT32 || T == TP::INT64; }

/// A value of the graph under construction, with its inferred type.
struct Val {
  std::string Name;
  int32_t Ty;
  std::vector<int64_t> Shape;
  /// Computed by a math function (or a float sum) that implementations may
  /// round differently in the last bit: a step function (Floor, a Cast to
  /// an integer, a comparison) of it is not a defined result, so the
  /// generator applies none.
  bool Inexact = false;
};

/// Whether node Op with a result of type Ty rounds differently from one
/// correct implementation to another.
bool roundsFreely(const std::string &Op, int32_t Ty) {
  return Op == "Exp" || Op == "Log" || Op == "Tanh" || Op == "Sigmoid" ||
         (Ty == TP::FLOAT && (Op == "ReduceSum" || Op == "ReduceMean"));
}

/// A graph input: data, or Gather indices into an axis of extent Extent.
struct Input {
  Val V;
  std::optional<int64_t> Extent;
};

struct Graph {
  onnx::ModelProto M;
  std::vector<Input> Inputs;
  std::vector<Val> Vals;         // usable values: inputs, then node outputs
  std::vector<std::string> Ends; // node outputs of non-static type
  int Counter = 0;

  Graph() {
    M.set_ir_version(8);
    auto *O = M.add_opset_import();
    O->set_domain("");
    O->set_version(18);
    M.mutable_graph()->set_name("generated");
  }
  onnx::GraphProto &g() { return *M.mutable_graph(); }
  std::string fresh(const char *Prefix) {
    return Prefix + std::to_string(Counter++);
  }
  void addInput(const Input &In) {
    auto *VI = g().add_input();
    VI->set_name(In.V.Name);
    auto *TT = VI->mutable_type()->mutable_tensor_type();
    TT->set_elem_type(In.V.Ty);
    auto *S = TT->mutable_shape();
    for (int64_t D : In.V.Shape)
      S->add_dim()->set_dim_value(D);
    Inputs.push_back(In);
  }
  std::string initInts(const std::vector<int64_t> &V, bool Scalar = false,
                       int32_t Ty = TP::INT64) {
    std::string Name = fresh("c");
    auto *T = g().add_initializer();
    T->set_name(Name);
    T->set_data_type(Ty);
    if (!Scalar)
      T->add_dims((int64_t)V.size());
    for (int64_t X : V)
      Ty == TP::INT64 ? T->add_int64_data(X) : T->add_int32_data((int32_t)X);
    return Name;
  }
  std::string initFloat(float F) {
    std::string Name = fresh("c");
    auto *T = g().add_initializer();
    T->set_name(Name);
    T->set_data_type(TP::FLOAT);
    T->add_float_data(F);
    return Name;
  }
  std::string initBool(bool B) {
    std::string Name = fresh("c");
    auto *T = g().add_initializer();
    T->set_name(Name);
    T->set_data_type(TP::BOOL);
    T->add_int32_data(B);
    return Name;
  }
};

/// A scalar initializer of type Ty that is sometimes an edge value.
std::string constantOf(Rng &R, Graph &G, int32_t Ty) {
  if (Ty == TP::FLOAT) {
    static const float F[] = {0.5f,
                              -2.0f,
                              0.0f,
                              -0.0f,
                              std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              1e30f};
    return G.initFloat(F[pick(R, 0, 7)]);
  }
  if (isInt(Ty)) {
    int64_t Big =
        Ty == TP::INT32 ? std::numeric_limits<int32_t>::max() : I64Max;
    const int64_t I[] = {1, -1, 0, 3, Big};
    return G.initInts({I[pick(R, 0, 4)]}, /*Scalar=*/true, Ty);
  }
  return G.initBool(chance(R, 0.5));
}

/// One node under construction: its op, inputs, attributes, outputs.
struct NodeSpec {
  onnx::NodeProto N;
  /// A graph input the node needs (Gather's data-valued indices).
  std::optional<Input> NewInput;
};

NodeSpec node(const std::string &Op, std::vector<std::string> Ins) {
  NodeSpec S;
  S.N.set_op_type(Op);
  for (const std::string &I : Ins)
    S.N.add_input(I);
  return S;
}
void attrInt(NodeSpec &S, const char *Name, int64_t V) {
  auto *A = S.N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(V);
}
void attrInts(NodeSpec &S, const char *Name, const std::vector<int64_t> &V) {
  auto *A = S.N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INTS);
  for (int64_t X : V)
    A->add_ints(X);
}

/// Distinct random axes of a rank-Rank value, some negative.
std::vector<int64_t> randomAxes(Rng &R, int64_t Rank, int64_t N) {
  std::vector<int64_t> All(Rank);
  for (int64_t I = 0; I < Rank; ++I)
    All[I] = I;
  std::shuffle(All.begin(), All.end(), R);
  All.resize(std::min(N, Rank));
  for (int64_t &A : All)
    if (chance(R, 0.3))
      A -= Rank;
  return All;
}

/// One random node on existing values, or nothing.
std::optional<NodeSpec> randomNode(Rng &R, Graph &G) {
  const Val &A = G.Vals[pick(R, 0, (int64_t)G.Vals.size() - 1)];
  // Prefer recent values so chains get deep.
  const Val &X = chance(R, 0.6) ? G.Vals.back() : A;
  const Val &Y = G.Vals[pick(R, 0, (int64_t)G.Vals.size() - 1)];
  const std::string &x = X.Name;
  int64_t Rank = (int64_t)X.Shape.size();
  auto randAxis = [&] { return Rank ? pick(R, -Rank, Rank - 1) : 0; };
  std::optional<NodeSpec> S;
  switch (pick(R, 0, 17)) {
  case 0: { // unary float
    static const char *const U[] = {"Relu",  "Sigmoid", "Exp",   "Log",
                                    "Sqrt",  "Abs",     "Neg",   "Tanh",
                                    "Floor", "Ceil",    "Round", "Sign"};
    if (X.Ty != TP::FLOAT)
      return std::nullopt;
    int64_t K = pick(R, 0, 11);
    if (X.Inexact && K >= 8) // Floor, Ceil, Round, Sign: steps
      return std::nullopt;
    S = node(U[K], {x});
    break;
  }
  case 1: { // unary integer
    if (!isInt(X.Ty))
      return std::nullopt;
    S = node(chance(R, 0.5) ? "Abs" : "Neg", {x});
    break;
  }
  case 2:
  case 3: { // binary, broadcasting with another value or a constant
    static const char *const B[] = {"Add", "Sub", "Mul", "Max", "Min", "Div"};
    if (X.Ty == TP::BOOL)
      return std::nullopt;
    int64_t K = pick(R, 0, 5);
    std::string Other =
        Y.Ty == X.Ty && chance(R, 0.7) ? Y.Name : constantOf(R, G, X.Ty);
    S = chance(R, 0.5) ? node(B[K], {x, Other}) : node(B[K], {Other, x});
    break;
  }
  case 4: { // comparison (Where takes its bool results)
    static const char *const C[] = {"Greater", "Less", "Equal"};
    if (X.Ty == TP::BOOL || X.Inexact || (Y.Ty == X.Ty && Y.Inexact))
      return std::nullopt;
    S = node(C[pick(R, 0, 2)],
             {x, Y.Ty == X.Ty ? Y.Name : constantOf(R, G, X.Ty)});
    break;
  }
  case 5: { // Where with a bool value as the condition
    if (X.Ty != TP::BOOL)
      return std::nullopt;
    const Val &Z = G.Vals[pick(R, 0, (int64_t)G.Vals.size() - 1)];
    std::string Other =
        Y.Ty == Z.Ty && chance(R, 0.7) ? Y.Name : constantOf(R, G, Z.Ty);
    S = node("Where", {x, Z.Name, Other});
    break;
  }
  case 6: { // Reduce*, axes an input (opset 18)
    static const char *const Red[] = {"ReduceSum", "ReduceMax", "ReduceMin",
                                      "ReduceMean"};
    int64_t K = pick(R, 0, 3);
    if (X.Ty == TP::BOOL)
      return std::nullopt;
    std::vector<int64_t> Axes = randomAxes(R, Rank, pick(R, 0, 2));
    bool Noop = chance(R, 0.2);
    if (Axes.empty() && chance(R, 0.5))
      S = node(Red[K], {x}); // no axes input
    else
      S = node(Red[K], {x, G.initInts(Axes)});
    if (chance(R, 0.5))
      attrInt(*S, "keepdims", pick(R, 0, 1));
    if (Noop || chance(R, 0.2))
      attrInt(*S, "noop_with_empty_axes", Noop);
    break;
  }
  case 7: { // Cast (NaN and out-of-range floats saturate to integers)
    static const int32_t To[] = {TP::FLOAT, TP::INT32, TP::INT64, TP::BOOL};
    int32_t T = To[pick(R, 0, 3)];
    if (X.Inexact && T != TP::FLOAT)
      return std::nullopt;
    S = node("Cast", {x});
    attrInt(*S, "to", T);
    break;
  }
  case 8:
  case 9: { // Slice with out-of-range, extreme and negative bounds
    if (Rank == 0)
      return std::nullopt;
    std::vector<int64_t> Axes = randomAxes(R, Rank, pick(R, 1, 2));
    std::vector<int64_t> Starts, Ends, Steps;
    for (int64_t Ax : Axes) {
      int64_t E = X.Shape[(Ax + Rank) % Rank];
      int64_t Step = chance(R, 0.3) ? -pick(R, 1, 2) : pick(R, 1, 3);
      int64_t B = pick(R, -E - 2, E + 2), End = pick(R, -E - 2, E + 2);
      if (chance(R, 0.15))
        End = Step > 0 ? I64Max : I64Min;
      if (chance(R, 0.1))
        B = Step > 0 ? I64Min : I64Max;
      Starts.push_back(B);
      Ends.push_back(End);
      Steps.push_back(Step);
    }
    bool AllUnit = std::all_of(Steps.begin(), Steps.end(),
                               [](int64_t V) { return V == 1; });
    std::vector<std::string> Ins = {x, G.initInts(Starts), G.initInts(Ends)};
    // Sometimes axes and steps left out: the first len(starts) axes, step 1
    // (the bounds were drawn for other axes; any bound is valid).
    if (!((int64_t)Axes.size() == Rank && AllUnit && chance(R, 0.3))) {
      Ins.push_back(G.initInts(Axes));
      if (!AllUnit || chance(R, 0.5))
        Ins.push_back(G.initInts(Steps));
    }
    S = node("Slice", Ins);
    break;
  }
  case 10:
  case 11: { // Gather: constant indices or a graph input of indices
    if (Rank == 0)
      return std::nullopt;
    int64_t Ax = randAxis();
    int64_t E = X.Shape[(Ax + Rank) % Rank];
    int32_t ITy = chance(R, 0.5) ? TP::INT64 : TP::INT32;
    std::vector<int64_t> IShape;
    for (int64_t I = 0, Rk = pick(R, 0, 2); I < Rk; ++I)
      IShape.push_back(pick(R, 0, 3));
    std::string Idx;
    std::optional<Input> NewInput;
    if (chance(R, 0.5)) {
      std::vector<int64_t> V;
      for (int64_t I = 0, N = numel(IShape); I < N; ++I) {
        bool Bad = E == 0 || chance(R, 0.05);
        V.push_back(
            Bad ? (chance(R, 0.5) ? pick(R, E, E + 2) : pick(R, -E - 2, -E - 1))
                : pick(R, -E, E - 1));
      }
      Idx = G.fresh("c");
      auto *T = G.g().add_initializer();
      T->set_name(Idx);
      T->set_data_type(ITy);
      for (int64_t D : IShape)
        T->add_dims(D);
      for (int64_t I : V)
        ITy == TP::INT64 ? T->add_int64_data(I) : T->add_int32_data((int32_t)I);
    } else {
      // Data-valued indices, some out of range (randomIndices).
      Idx = G.fresh("idx");
      NewInput = Input{Val{Idx, ITy, IShape}, E};
    }
    S = node("Gather", {x, Idx});
    S->NewInput = NewInput;
    attrInt(*S, "axis", Ax);
    break;
  }
  case 12: { // Split: a split input (sometimes not adding up) or num_outputs
    if (Rank == 0)
      return std::nullopt;
    int64_t Ax = randAxis();
    int64_t E = X.Shape[(Ax + Rank) % Rank];
    int64_t N = pick(R, 1, 3);
    if (chance(R, 0.3)) {
      if (E < N)
        return std::nullopt;
      S = node("Split", {x});
      attrInt(*S, "num_outputs", N);
    } else {
      std::vector<int64_t> Sizes;
      int64_t Left = E;
      for (int64_t I = 0; I + 1 < N; ++I) {
        Sizes.push_back(pick(R, 0, Left));
        Left -= Sizes.back();
      }
      Sizes.push_back(Left);
      if (chance(R, 0.15))
        Sizes[pick(R, 0, N - 1)] += chance(R, 0.5) ? 1 : -1;
      S = node("Split", {x, G.initInts(Sizes)});
    }
    attrInt(*S, "axis", Ax);
    for (int64_t I = 0; I < N; ++I)
      S->N.add_output(G.fresh("v"));
    break;
  }
  case 13: { // Concat with values of the same dtype and rank
    if (Rank == 0 || Y.Ty != X.Ty || Y.Shape.size() != X.Shape.size())
      return std::nullopt;
    S = chance(R, 0.3) ? node("Concat", {x, Y.Name, x})
                       : node("Concat", {x, Y.Name});
    attrInt(*S, "axis", randAxis());
    break;
  }
  case 14: { // Transpose (reversed axes or a random permutation)
    if (Rank < 2)
      return std::nullopt;
    S = node("Transpose", {x});
    if (chance(R, 0.7)) {
      std::vector<int64_t> Perm(Rank);
      for (int64_t I = 0; I < Rank; ++I)
        Perm[I] = I;
      std::shuffle(Perm.begin(), Perm.end(), R);
      attrInts(*S, "perm", Perm);
    }
    break;
  }
  case 15: { // Reshape (with -1 and 0) or Flatten
    if (chance(R, 0.3)) {
      S = node("Flatten", {x});
      attrInt(*S, "axis", pick(R, -Rank, Rank));
      break;
    }
    std::vector<int64_t> Shape;
    switch (pick(R, 0, 3)) {
    case 0: Shape = {-1}; break;
    case 1: Shape = {numel(X.Shape)}; break;
    case 2:
      if (Rank == 0)
        return std::nullopt;
      Shape = {-1, X.Shape.back()};
      break;
    default:
      if (Rank == 0)
        return std::nullopt;
      Shape = {0, -1}; // 0: the input's extent
    }
    S = node("Reshape", {x, G.initInts(Shape)});
    break;
  }
  case 16: { // Unsqueeze or Squeeze, axes an input
    if (chance(R, 0.5) || Rank == 0) {
      // Axes index the output, of rank Rank + len(axes).
      int64_t N = pick(R, 1, 2);
      std::vector<int64_t> Axes = randomAxes(R, Rank + N, N);
      S = node("Unsqueeze", {x, G.initInts(Axes)});
    } else {
      std::vector<int64_t> Ones;
      for (int64_t I = 0; I < Rank; ++I)
        if (X.Shape[I] == 1)
          Ones.push_back(chance(R, 0.5) ? I : I - Rank);
      if (Ones.empty() || chance(R, 0.3))
        S = node("Squeeze", {x});
      else
        S = node("Squeeze", {x, G.initInts(Ones)});
    }
    break;
  }
  default: { // Expand to a broadcast-compatible shape
    std::vector<int64_t> Shape;
    for (int64_t D : X.Shape)
      Shape.push_back(D == 1 ? pick(R, 0, 3) : chance(R, 0.3) ? 1 : D);
    if (chance(R, 0.4))
      Shape.insert(Shape.begin(), pick(R, 1, 3));
    S = node("Expand", {x, G.initInts(Shape)});
    break;
  }
  }
  if (S->N.output_size() == 0)
    S->N.add_output(G.fresh("v"));
  return S;
}

/// The graph's @main with Outs as the outputs, imported and type-checked.
ir::Module importGraph(Graph &G, const std::vector<std::string> &Outs) {
  G.g().clear_output();
  for (const std::string &O : Outs)
    G.g().add_output()->set_name(O);
  std::string Bytes = G.M.SerializeAsString();
  ir::Module M =
      frontend::importOnnxBytes(Bytes.data(), Bytes.size(), "", "<generated>");
  ir::inferTypes(M);
  return M;
}

/// The types of @main's outputs.
std::vector<ir::Type> outputTypes(const ir::Module &M) {
  const auto *F = M.function("main")->as<ir::FunctionNode>();
  ir::Type T = F->body->checkedType;
  if (const auto *Tu = T->as<ir::TupleTypeNode>())
    return Tu->fields;
  return {T};
}

/// Adds S to G when the graph with it imports and type-checks.
bool tryAdd(Graph &G, NodeSpec &S) {
  size_t InputListBefore = G.Inputs.size();
  if (S.NewInput)
    G.addInput(*S.NewInput);
  *G.g().add_node() = S.N;
  std::vector<std::string> Outs(S.N.output().begin(), S.N.output().end());
  std::vector<ir::Type> Types;
  try {
    Types = outputTypes(importGraph(G, Outs));
  } catch (const std::exception &) {
  }
  std::vector<Val> New;
  std::vector<std::string> Ends;
  bool Ok = Types.size() == Outs.size();
  for (size_t I = 0; Ok && I < Outs.size(); ++I) {
    const auto *T = Types[I]->as<ir::TensorTypeNode>();
    if (!T || (T->dtype != DType::Float32 && T->dtype != DType::Int32 &&
               T->dtype != DType::Int64 && T->dtype != DType::Bool)) {
      Ok = false;
      break;
    }
    if (!T->isStatic()) {
      Ends.push_back(Outs[I]); // a result only (e.g. a split_dyn)
      continue;
    }
    Val V{Outs[I], onnxTypeOf(T->dtype), {}};
    for (const ir::Dim &D : *T->shape)
      V.Shape.push_back(D.value);
    V.Inexact = roundsFreely(S.N.op_type(), V.Ty);
    for (const Val &U : G.Vals)
      for (const std::string &In : S.N.input())
        V.Inexact |= U.Inexact && U.Name == In;
    New.push_back(V);
  }
  if (!Ok) {
    G.g().mutable_node()->RemoveLast();
    if (S.NewInput) {
      G.g().mutable_input()->RemoveLast();
      G.Inputs.resize(InputListBefore);
    }
    return false;
  }
  for (Val &V : New)
    G.Vals.push_back(std::move(V));
  for (std::string &E : Ends)
    G.Ends.push_back(std::move(E));
  return true;
}

/// A random graph; its outputs are the node outputs no later node reads.
Graph randomGraph(Rng &R) {
  Graph G;
  int64_t NParams = pick(R, 1, 3);
  std::vector<int64_t> Base;
  for (int64_t I = 0, Rk = pick(R, 0, 3); I < Rk; ++I)
    Base.push_back(chance(R, 0.08) ? 0 : pick(R, 1, 4));
  static const int32_t Tys[] = {TP::FLOAT, TP::FLOAT, TP::INT32, TP::INT64,
                                TP::BOOL};
  for (int64_t I = 0; I < NParams; ++I) {
    Val V{"x" + std::to_string(I), Tys[pick(R, 0, 4)], Base};
    // Sometimes a broadcastable suffix of the shared shape.
    if (!Base.empty() && chance(R, 0.3))
      V.Shape.erase(V.Shape.begin(),
                    V.Shape.begin() + pick(R, 1, (int64_t)Base.size()));
    G.addInput({V, std::nullopt});
    G.Vals.push_back(V);
  }
  int64_t NOps = pick(R, 1, 8);
  for (int64_t Tries = 0; G.g().node_size() < NOps && Tries < 200; ++Tries) {
    std::optional<NodeSpec> S = randomNode(R, G);
    if (S)
      tryAdd(G, *S);
  }
  std::vector<std::string> Outs;
  auto Read = [&](const std::string &Name, int From) {
    for (int K = From; K < G.g().node_size(); ++K)
      for (const std::string &I : G.g().node(K).input())
        if (I == Name)
          return true;
    return false;
  };
  for (int K = 0; K < G.g().node_size(); ++K)
    for (const std::string &O : G.g().node(K).output())
      if (!Read(O, K + 1))
        Outs.push_back(O);
  if (Outs.empty()) // no node: the first input, through an Identity
    Outs.push_back(G.Vals.front().Name);
  G.g().clear_output();
  for (const std::string &O : Outs)
    G.g().add_output()->set_name(O);
  return G;
}

/// Gather indices into an extent E: mostly in [-E, E), some out of range
/// either way, some INT_MIN/MAX.
Tensor randomIndices(Rng &R, DType T, const std::vector<int64_t> &Shape,
                     int64_t E) {
  Tensor X = Tensor::empty(Shape, T);
  for (int64_t I = 0, N = X.numel(); I < N; ++I) {
    int64_t V;
    double P = std::uniform_real_distribution<double>(0, 1)(R);
    if (E > 0 && P < 0.85)
      V = pick(R, -E, E - 1);
    else if (P < 0.95)
      V = chance(R, 0.5) ? pick(R, E, E + 2) : pick(R, -E - 2, -E - 1);
    else
      V = chance(R, 0.5)
              ? (T == DType::Int32 ? std::numeric_limits<int32_t>::min()
                                   : I64Min)
              : (T == DType::Int32 ? std::numeric_limits<int32_t>::max()
                                   : I64Max);
    if (T == DType::Int32)
      X.data<int32_t>()[I] = (int32_t)V;
    else
      X.data<int64_t>()[I] = V;
  }
  return X;
}

TEST(OnnxDifferential, ExecutorsAgreeOnRandomGraphs) {
  Runner Run("onnx differential");
  Run.run(Settings::fromEnv(20240711, 1500, 120),
          [](uint64_t CaseSeed) -> std::optional<Case> {
            Rng R(CaseSeed);
            auto G = std::make_shared<Graph>(randomGraph(R));
            std::string Bytes = G->M.SerializeAsString();
            Case C;
            C.Seed = CaseSeed;
            C.M = frontend::importOnnxBytes(Bytes.data(), Bytes.size(), "",
                                            "<generated>");
            ir::inferTypes(C.M);
            for (const Input &In : G->Inputs)
              C.Inputs.push_back(
                  In.Extent ? randomIndices(R, dtypeOf(In.V.Ty), In.V.Shape,
                                            *In.Extent)
                            : randomInput(R, dtypeOf(In.V.Ty), In.V.Shape));
            ir::Module M = C.M;
            C.Text = [G, M] {
              return G->M.DebugString() + "\nimported:\n" + ir::printModule(M);
            };
            return C;
          });
}

} // namespace
