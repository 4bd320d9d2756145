//===- onnx_import_test.cc - The ONNX importer: control flow and errors ---===//
//
// Models are built here with the ONNX protobuf classes, imported, and run by
// the reference interpreter; results are checked against values computed by
// hand. Bad models must give rivet::Error naming what is wrong.
//
//===----------------------------------------------------------------------===//
#include "OnnxTestUtil.h"
#include "frontend/onnx/Importer.h"
#include "ir/Interpreter.h"
#include "ir/Printer.h"
#include "ir/TypeInference.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace rivet;

namespace {

/// Small builder over GraphProto.
struct GraphBuilder {
  onnx::GraphProto *G;

  void input(const std::string &Name, int32_t ElemType,
             std::vector<std::string> Dims) {
    valueInfo(G->add_input(), Name, ElemType, Dims);
  }
  void output(const std::string &Name, int32_t ElemType,
              std::vector<std::string> Dims) {
    valueInfo(G->add_output(), Name, ElemType, Dims);
  }
  static void valueInfo(onnx::ValueInfoProto *V, const std::string &Name,
                        int32_t ElemType,
                        const std::vector<std::string> &Dims) {
    V->set_name(Name);
    auto *T = V->mutable_type()->mutable_tensor_type();
    T->set_elem_type(ElemType);
    auto *S = T->mutable_shape();
    for (const std::string &D : Dims) {
      auto *Dim = S->add_dim();
      if (!D.empty() && std::isdigit((unsigned char)D[0]))
        Dim->set_dim_value(std::stoll(D));
      else if (D != "?")
        Dim->set_dim_param(D);
    }
  }
  onnx::NodeProto *node(const std::string &Op, std::vector<std::string> Ins,
                        std::vector<std::string> Outs,
                        const std::string &Name = "") {
    auto *N = G->add_node();
    N->set_op_type(Op);
    N->set_name(Name.empty() ? Op + "_" + std::to_string(G->node_size())
                             : Name);
    for (auto &I : Ins)
      N->add_input(I);
    for (auto &O : Outs)
      N->add_output(O);
    return N;
  }
  void constant(const std::string &Name, int64_t V) {
    auto *T = G->add_initializer();
    T->set_name(Name);
    T->set_data_type(onnx::TensorProto::INT64);
    T->add_int64_data(V);
  }
  void constantF(const std::string &Name, float V) {
    auto *T = G->add_initializer();
    T->set_name(Name);
    T->set_data_type(onnx::TensorProto::FLOAT);
    T->add_float_data(V);
  }
};

onnx::ModelProto newModel(int64_t Opset = 13) {
  onnx::ModelProto M;
  M.set_ir_version(8);
  auto *O = M.add_opset_import();
  O->set_domain("");
  O->set_version(Opset);
  M.mutable_graph()->set_name("test");
  return M;
}

ir::Module import(const onnx::ModelProto &M) { return test::importModel(M); }
std::string importError(const onnx::ModelProto &M) {
  return test::importModelError(M);
}

onnx::AttributeProto *graphAttr(onnx::NodeProto *N, const std::string &Name) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::GRAPH);
  return A;
}

/// Loop body: (i, cond, acc) -> (cond, acc + x * i, acc) — a scan output too.
void buildSumLoopBody(onnx::GraphProto *B, const std::string &Outer) {
  GraphBuilder Body{B};
  Body.input("i", onnx::TensorProto::INT64, {});
  Body.input("c", onnx::TensorProto::BOOL, {});
  Body.input("acc", onnx::TensorProto::FLOAT, {"?"});
  Body.node("Cast", {"i"}, {"i_f"})->add_attribute()->set_name("to");
  Body.G->mutable_node(0)->mutable_attribute(0)->set_type(
      onnx::AttributeProto::INT);
  Body.G->mutable_node(0)->mutable_attribute(0)->set_i(
      onnx::TensorProto::FLOAT);
  Body.node("Mul", {Outer, "i_f"}, {"xi"});
  Body.node("Add", {"acc", "xi"}, {"acc_out"});
  Body.node("Identity", {"c"}, {"c_out"});
  Body.output("c_out", onnx::TensorProto::BOOL, {});
  Body.output("acc_out", onnx::TensorProto::FLOAT, {"?"});
  Body.output("xi", onnx::TensorProto::FLOAT, {"?"});
}

} // namespace

TEST(OnnxImport, LoopWithScanOutputReadsOuterScope) {
  onnx::ModelProto M = newModel();
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"n"});
  G.input("trips", onnx::TensorProto::INT64, {});
  G.input("cond", onnx::TensorProto::BOOL, {});
  auto *L = G.node("Loop", {"trips", "cond", "x"}, {"sum", "scan"}, "the_loop");
  buildSumLoopBody(graphAttr(L, "body")->mutable_g(), "x");
  G.output("sum", onnx::TensorProto::FLOAT, {"n"});
  G.output("scan", onnx::TensorProto::FLOAT, {"?", "n"});

  ir::Module Mod = import(M);
  ir::Interpreter I(Mod);
  ir::Value R =
      I.call("main", {Tensor::fromVector<float>({1, 2}, {2}),
                      Tensor::scalar<int64_t>(4), Tensor::scalar<bool>(true)});
  // sum = x + x*(0+1+2+3) = 7x; scan rows = x*i for i = 0..3.
  const Tensor &Sum = R.fields()[0].tensor();
  EXPECT_TRUE(allClose(Sum, Tensor::fromVector<float>({7, 14}, {2})));
  const Tensor &Scan = R.fields()[1].tensor();
  EXPECT_TRUE(allClose(
      Scan, Tensor::fromVector<float>({0, 0, 1, 2, 2, 4, 3, 6}, {4, 2})));
}

TEST(OnnxImport, NestedLoopAndIfInsideLoop) {
  // Outer loop over i < 3; inner loop over j < 2 adds 1 each step; an If in
  // the outer body adds 10 when the inner result exceeds 3.
  onnx::ModelProto M = newModel();
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {});
  G.constant("three", 3);
  G.constant("two", 2);
  G.constantF("one", 1.0f);
  G.constantF("ten", 10.0f);
  G.constantF("limit", 3.0f);
  auto *Outer = G.node("Loop", {"three", "", "x"}, {"y"}, "outer");
  GraphBuilder OB{graphAttr(Outer, "body")->mutable_g()};
  OB.input("i", onnx::TensorProto::INT64, {});
  OB.input("c", onnx::TensorProto::BOOL, {});
  OB.input("v", onnx::TensorProto::FLOAT, {});
  auto *Inner = OB.node("Loop", {"two", "", "v"}, {"w"}, "inner");
  GraphBuilder IB{graphAttr(Inner, "body")->mutable_g()};
  IB.input("j", onnx::TensorProto::INT64, {});
  IB.input("c2", onnx::TensorProto::BOOL, {});
  IB.input("u", onnx::TensorProto::FLOAT, {});
  IB.node("Add", {"u", "one"}, {"u2"});
  IB.node("Identity", {"c2"}, {"c2_out"});
  IB.output("c2_out", onnx::TensorProto::BOOL, {});
  IB.output("u2", onnx::TensorProto::FLOAT, {});
  OB.node("Greater", {"w", "limit"}, {"big"});
  auto *If = OB.node("If", {"big"}, {"z"}, "branch");
  GraphBuilder TB{graphAttr(If, "then_branch")->mutable_g()};
  TB.node("Add", {"w", "ten"}, {"t"});
  TB.output("t", onnx::TensorProto::FLOAT, {});
  GraphBuilder EB{graphAttr(If, "else_branch")->mutable_g()};
  EB.node("Identity", {"w"}, {"e"});
  EB.output("e", onnx::TensorProto::FLOAT, {});
  OB.node("Identity", {"c"}, {"c_out"});
  OB.output("c_out", onnx::TensorProto::BOOL, {});
  OB.output("z", onnx::TensorProto::FLOAT, {});
  G.output("y", onnx::TensorProto::FLOAT, {});

  ir::Module Mod = import(M);
  ir::Interpreter I(Mod);
  // x=0: 0 -> 2 -> 4 (+10 = 14) -> 16 (+10 = 26)
  ir::Value R = I.call("main", {Tensor::scalar<float>(0)});
  EXPECT_FLOAT_EQ(R.tensor().data<float>()[0], 26.0f);
  // The text form of the imported module parses back (round trip).
  EXPECT_FALSE(ir::printModule(Mod).empty());
}

TEST(OnnxImport, LoopOfAMillionIterationsRunsInConstantStack) {
  onnx::ModelProto M = newModel();
  GraphBuilder G{M.mutable_graph()};
  G.input("trips", onnx::TensorProto::INT64, {});
  G.constantF("one", 1.0f);
  G.constantF("zero", 0.0f);
  auto *L = G.node("Loop", {"trips", "", "zero"}, {"count"});
  GraphBuilder B{graphAttr(L, "body")->mutable_g()};
  B.input("i", onnx::TensorProto::INT64, {});
  B.input("c", onnx::TensorProto::BOOL, {});
  B.input("v", onnx::TensorProto::FLOAT, {});
  B.node("Add", {"v", "one"}, {"v2"});
  B.node("Identity", {"c"}, {"c_out"});
  B.output("c_out", onnx::TensorProto::BOOL, {});
  B.output("v2", onnx::TensorProto::FLOAT, {});
  G.output("count", onnx::TensorProto::FLOAT, {});
  ir::Module Mod = import(M);
  ir::Interpreter I(Mod);
  ir::Value R = I.call("main", {Tensor::scalar<int64_t>(1000000)});
  EXPECT_FLOAT_EQ(R.tensor().data<float>()[0], 1e6f);
}

/// An Elman-style loop as torch exports it: the body declares its state
/// input (batch, 3) but names the new state's extents afresh (batch, fresh),
/// and so does the Loop's output. InitDims is the initial value's declared
/// type, BodyDims the body's state input.
onnx::ModelProto stateLoop(std::vector<std::string> InitDims,
                           std::vector<std::string> BodyDims) {
  onnx::ModelProto M = newModel();
  GraphBuilder G{M.mutable_graph()};
  G.input("h0", onnx::TensorProto::FLOAT, InitDims);
  G.input("trips", onnx::TensorProto::INT64, {});
  auto *W = M.mutable_graph()->add_initializer();
  W->set_name("w");
  W->set_data_type(onnx::TensorProto::FLOAT);
  W->add_dims(3);
  W->add_dims(3);
  for (int I = 0; I < 9; ++I)
    W->add_float_data(I % 4 == 0 ? 0.5f : 0.0f); // 0.5 * identity
  auto *L = G.node("Loop", {"trips", "", "h0"}, {"h_final"});
  GraphBuilder B{graphAttr(L, "body")->mutable_g()};
  B.input("i", onnx::TensorProto::INT64, {});
  B.input("c", onnx::TensorProto::BOOL, {});
  B.input("h", onnx::TensorProto::FLOAT, BodyDims);
  B.node("MatMul", {"h", "w"}, {"hw"});
  B.node("Tanh", {"hw"}, {"h_next"});
  B.node("Identity", {"c"}, {"c_out"});
  B.output("c_out", onnx::TensorProto::BOOL, {});
  B.output("h_next", onnx::TensorProto::FLOAT, {"batch", "fresh_dim_1"});
  G.output("h_final", onnx::TensorProto::FLOAT, {"batch", "fresh_dim_1"});
  return M;
}

std::string mainResultType(const ir::Module &Mod) {
  const ir::Type &T = Mod.function("main")->checkedType;
  return ir::typeToString(T->as<ir::FuncTypeNode>()->ret);
}

TEST(OnnxImport, LoopStateKeepsTheBodysConstantExtents) {
  // Joined with the body result's fresh symbol, the state's second extent
  // would be unknown; the body's declaration keeps it 3 (and the matmul's
  // reduction extent static).
  ir::Module Mod = import(stateLoop({"batch", "3"}, {"batch", "3"}));
  EXPECT_EQ(mainResultType(Mod), "Tensor[(batch, 3), float32]");
  std::string Text = ir::printModule(Mod);
  EXPECT_NE(Text.find("%h: Tensor[(batch, 3), float32]"), std::string::npos)
      << Text;
  // Two steps of h = tanh(0.5 h).
  ir::Interpreter I(Mod);
  std::vector<float> H = {1, -2, 0.5f, 3, 0, -1};
  ir::Value R = I.call("main", {Tensor::fromVector<float>(H, {2, 3}),
                                Tensor::scalar<int64_t>(2)});
  for (float &V : H)
    V = std::tanh(0.5f * std::tanh(0.5f * V));
  EXPECT_TRUE(allClose(R.tensor(), Tensor::fromVector<float>(H, {2, 3})));
}

TEST(OnnxImport, ExporterSymbolsOfIntermediatesAreUnknownExtents) {
  // value_info names y's first extent afresh where inference knows it is
  // the input's `batch`: the annotation keeps the constant and says `?`
  // for the rest, and the variable's type is (batch, 3).
  onnx::ModelProto M = newModel();
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"batch", "3"});
  G.node("Relu", {"x"}, {"y"});
  G.node("Neg", {"y"}, {"z"});
  GraphBuilder::valueInfo(M.mutable_graph()->add_value_info(), "y",
                          onnx::TensorProto::FLOAT, {"Relu_dim_0", "3"});
  G.output("z", onnx::TensorProto::FLOAT, {"batch", "3"});
  ir::Module Mod = import(M);
  std::string Text = ir::printModule(Mod);
  EXPECT_NE(Text.find("%y: Tensor[(?, 3), float32]"), std::string::npos)
      << Text;
  EXPECT_EQ(Text.find("Relu_dim_0"), std::string::npos) << Text;
  EXPECT_EQ(mainResultType(Mod), "Tensor[(batch, 3), float32]");
}

TEST(OnnxImport, LoopStateDeclarationsThatFixNothingAreNotTrusted) {
  // A body declaration without a constant, or one that contradicts the
  // initial value's, leaves the state's type to inference.
  for (const auto &[Init, Body] : std::vector<
           std::pair<std::vector<std::string>, std::vector<std::string>>>{
           {{"batch", "3"}, {"batch", "n"}},
           {{"batch", "3"}, {"batch", "?"}},
           {{"batch", "3"}, {"batch", "4"}}}) {
    ir::Module Mod = import(stateLoop(Init, Body));
    EXPECT_EQ(mainResultType(Mod), "Tensor[(batch, fresh_dim_1), float32]")
        << Body[1];
  }
}

TEST(OnnxImport, UnknownOperatorNamesOpNodeAndOpset) {
  onnx::ModelProto M = newModel(13);
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"2"});
  G.node("FrobnicateV2", {"x"}, {"y"}, "frob_node");
  G.output("y", onnx::TensorProto::FLOAT, {"2"});
  std::string E = importError(M);
  EXPECT_NE(E.find("FrobnicateV2"), std::string::npos) << E;
  EXPECT_NE(E.find("frob_node"), std::string::npos) << E;
  EXPECT_NE(E.find("opset 13"), std::string::npos) << E;
  EXPECT_NE(E.find("unsupported operator"), std::string::npos) << E;
}

TEST(OnnxImport, UnsupportedOpsetAndDomain) {
  onnx::ModelProto M = newModel(99);
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"2"});
  G.node("Relu", {"x"}, {"y"});
  G.output("y", onnx::TensorProto::FLOAT, {"2"});
  EXPECT_NE(importError(M).find("opset 99 is not supported"),
            std::string::npos);

  onnx::ModelProto D = newModel(13);
  GraphBuilder DG{D.mutable_graph()};
  DG.input("x", onnx::TensorProto::FLOAT, {"2"});
  DG.node("Relu", {"x"}, {"y"})->set_domain("com.example");
  DG.output("y", onnx::TensorProto::FLOAT, {"2"});
  EXPECT_NE(importError(D).find("domain 'com.example'"), std::string::npos);
}

TEST(OnnxImport, ShapeContradictingDeclaredTypeIsAnError) {
  onnx::ModelProto M = newModel(13);
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"2", "3"});
  G.node("Relu", {"x"}, {"y"});
  G.output("y", onnx::TensorProto::FLOAT, {"3", "2"}); // wrong
  std::string E = importError(M);
  EXPECT_NE(E.find("type error"), std::string::npos) << E;
}

TEST(OnnxImport, MalformedFilesAreErrors) {
  EXPECT_THROW(frontend::importOnnxFile("/nonexistent/model.onnx"), Error);
  std::string Garbage = "this is not a protobuf \xff\xff\xff\xff";
  EXPECT_THROW(
      frontend::importOnnxBytes(Garbage.data(), Garbage.size(), "", "g"),
      Error);
  // Every truncation of a real model either imports or fails with Error.
  onnx::ModelProto M = newModel();
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"2"});
  G.constantF("one", 1.0f);
  G.node("Add", {"x", "one"}, {"y"});
  G.output("y", onnx::TensorProto::FLOAT, {"2"});
  std::string Bytes = M.SerializeAsString();
  for (size_t N = 0; N < Bytes.size(); ++N) {
    try {
      ir::Module Mod =
          frontend::importOnnxBytes(Bytes.data(), N, "", "truncated.onnx");
      ir::inferTypes(Mod);
    } catch (const Error &) {
    }
  }
}

TEST(OnnxImport, InitializerDataMustMatchItsShape) {
  onnx::ModelProto M = newModel();
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"2"});
  auto *T = M.mutable_graph()->add_initializer();
  T->set_name("w");
  T->set_data_type(onnx::TensorProto::FLOAT);
  T->add_dims(1000000000);
  T->add_dims(1000000000); // 10^18 elements with no data
  G.node("Add", {"x", "w"}, {"y"});
  G.output("y", onnx::TensorProto::FLOAT, {"2"});
  std::string E = importError(M);
  EXPECT_NE(E.find("initializer 'w'"), std::string::npos) << E;
}

// Issue 23, item 7: models the ONNX checker rejects are refused, not read
// with a guess.
TEST(OnnxImport, MalformedDeclarationsAreErrors) {
  auto Relu = [](onnx::ModelProto &M) {
    GraphBuilder G{M.mutable_graph()};
    G.input("x", onnx::TensorProto::FLOAT, {"2"});
    G.node("Relu", {"x"}, {"y"});
    G.output("y", onnx::TensorProto::FLOAT, {"2"});
    return G;
  };
  onnx::ModelProto Ok = newModel();
  Relu(Ok);
  EXPECT_EQ(importError(Ok), "<no error>");

  onnx::ModelProto NoOpset = Ok;
  NoOpset.clear_opset_import();
  EXPECT_NE(importError(NoOpset).find("imports no operator set"),
            std::string::npos);
  onnx::ModelProto Negative = newModel(-3);
  Relu(Negative);
  EXPECT_NE(importError(Negative).find("imported at version -3"),
            std::string::npos);

  onnx::ModelProto Twice = Ok;
  GraphBuilder{Twice.mutable_graph()}.input("x", onnx::TensorProto::FLOAT,
                                            {"2"});
  EXPECT_NE(importError(Twice).find("declares input 'x' twice"),
            std::string::npos);

  onnx::ModelProto NegDim = Ok;
  NegDim.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(-2);
  EXPECT_NE(importError(NegDim).find("declared dimension -2 is negative"),
            std::string::npos);
}

namespace {
/// Loop(trips, cond, x) whose body passes cond through (or, with
/// ComputedCond, recomputes it as i < 100) and stacks x as its scan output.
onnx::ModelProto stackingLoop(bool ComputedCond) {
  onnx::ModelProto M = newModel();
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"2", "3"});
  G.input("trips", onnx::TensorProto::INT64, {});
  G.input("cond", onnx::TensorProto::BOOL, {});
  auto *L = G.node("Loop", {"trips", "cond", "x"}, {"y", "s"}, "stack");
  GraphBuilder Body{graphAttr(L, "body")->mutable_g()};
  Body.input("i", onnx::TensorProto::INT64, {});
  Body.input("c", onnx::TensorProto::BOOL, {});
  Body.input("v", onnx::TensorProto::FLOAT, {"2", "3"});
  if (ComputedCond) {
    Body.constant("limit", 100);
    Body.node("Less", {"i", "limit"}, {"c_out"});
  } else {
    Body.node("Identity", {"c"}, {"c_out"});
  }
  Body.node("Identity", {"v"}, {"v_out"});
  Body.node("Identity", {"v"}, {"scan"});
  Body.output("c_out", onnx::TensorProto::BOOL, {});
  Body.output("v_out", onnx::TensorProto::FLOAT, {"2", "3"});
  Body.output("scan", onnx::TensorProto::FLOAT, {"2", "3"});
  G.output("y", onnx::TensorProto::FLOAT, {"2", "3"});
  G.output("s", onnx::TensorProto::FLOAT, {"?", "2", "3"});
  return M;
}
} // namespace

TEST(OnnxImport, LoopThatCannotStackItsScanOutputsFailsBeforeItsFirstStep) {
  // The loop runs exactly `trips` times (its condition passes through), so
  // its scan output will hold trips x 24 bytes: checked before it starts.
  ir::Module Mod = import(stackingLoop(false));
  EXPECT_NE(ir::printModule(Mod).find("require_memory("), std::string::npos)
      << ir::printModule(Mod);
  ir::Interpreter I(Mod);
  Tensor X = Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  ir::Value R = I.call(
      "main", {X, Tensor::scalar<int64_t>(3), Tensor::scalar<bool>(true)});
  EXPECT_EQ(R.fields()[1].tensor().shape(), (Shape{3, 2, 3}));
  try {
    I.call("main", {X, Tensor::scalar<int64_t>(int64_t(1) << 60),
                    Tensor::scalar<bool>(true)});
    ADD_FAILURE() << "a loop stacking 2^60 x 24 bytes started";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("out of memory: the scan outputs of "
                                         "Loop 'stack' would take "
                                         "1152921504606846976 x 24 bytes"),
              std::string::npos)
        << E.what();
  }
  // A condition false at the start runs no step: nothing to refuse.
  try {
    I.call("main", {X, Tensor::scalar<int64_t>(int64_t(1) << 60),
                    Tensor::scalar<bool>(false)});
  } catch (const Error &E) {
    EXPECT_EQ(std::string(E.what()).find("out of memory"), std::string::npos)
        << E.what();
  }
}

TEST(OnnxImport, LoopWhoseBodyDecidesWhenToStopIsNotCheckedAhead) {
  // The body may stop the loop early: its trip count is not a bound on what
  // it stacks, so no check is made before it starts.
  ir::Module Mod = import(stackingLoop(true));
  EXPECT_EQ(ir::printModule(Mod).find("require_memory("), std::string::npos)
      << ir::printModule(Mod);
  ir::Interpreter I(Mod);
  Tensor X = Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  ir::Value R = I.call("main", {X, Tensor::scalar<int64_t>(int64_t(1) << 60),
                                Tensor::scalar<bool>(true)});
  EXPECT_EQ(R.fields()[1].tensor().shape(), (Shape{101, 2, 3}));
}

namespace {
/// If(c) nested Depth deep in then-branches; the innermost then-branch
/// yields x, every else-branch -x.
onnx::ModelProto nestedIfs(int Depth) {
  onnx::ModelProto M = newModel();
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"2"});
  G.input("c", onnx::TensorProto::BOOL, {});
  onnx::GraphProto *Level = M.mutable_graph();
  for (int D = 0; D < Depth; ++D) {
    GraphBuilder L{Level};
    std::string Y = "y" + std::to_string(D);
    auto *If = L.node("If", {"c"}, {Y});
    if (D > 0)
      L.output(Y, onnx::TensorProto::FLOAT, {"2"});
    GraphBuilder Else{graphAttr(If, "else_branch")->mutable_g()};
    Else.node("Neg", {"x"}, {"e" + std::to_string(D)});
    Else.output("e" + std::to_string(D), onnx::TensorProto::FLOAT, {"2"});
    Level = graphAttr(If, "then_branch")->mutable_g();
  }
  GraphBuilder Inner{Level};
  Inner.node("Identity", {"x"}, {"inner"});
  Inner.output("inner", onnx::TensorProto::FLOAT, {"2"});
  G.output("y0", onnx::TensorProto::FLOAT, {"2"});
  return M;
}
} // namespace

TEST(OnnxImport, DeeplyNestedSubgraphsImportUpToAStatedLimit) {
  // Protobuf's default limit (100 nested messages) stopped at about 33
  // nested Ifs with "protobuf parse failed".
  ir::Module Mod = import(nestedIfs(120));
  ir::Interpreter I(Mod);
  ir::Value R = I.call("main", {Tensor::fromVector<float>({1, 2}, {2}),
                                Tensor::scalar<bool>(true)});
  EXPECT_TRUE(allClose(R.tensor(), Tensor::fromVector<float>({1, 2}, {2})));
  EXPECT_NE(importError(nestedIfs(520))
                .find("nests subgraphs (If, Loop, Scan bodies) more than 1500 "
                      "protobuf messages deep"),
            std::string::npos)
      << importError(nestedIfs(520));
}

TEST(OnnxImport, AnInputTheOperatorDoesNotHaveIsAnError) {
  // Relu has one input: a second would be ignored without a word.
  onnx::ModelProto M = newModel();
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"2"});
  G.input("extra", onnx::TensorProto::FLOAT, {"2"});
  G.node("Relu", {"x", "extra"}, {"y"}, "relu");
  G.output("y", onnx::TensorProto::FLOAT, {"2"});
  EXPECT_NE(
      importError(M).find("node 'relu' (Relu, opset 13): input 1 "
                          "('extra') is not an input of Relu at opset 13"),
      std::string::npos)
      << importError(M);
  // An empty name is an absent optional input, not an extra one.
  M.mutable_graph()->mutable_node(0)->set_input(1, "");
  EXPECT_EQ(importError(M), "<no error>");
}

//===----------------------------------------------------------------------===//
// Opsets 19 to 25: the newest opset, narrow element types, Cast's saturate
//===----------------------------------------------------------------------===//

TEST(OnnxImport, ReadsOpsetsThrough25AndRefuses26) {
  for (int64_t Opset : {19, 23, 25}) {
    onnx::ModelProto M = newModel(Opset);
    GraphBuilder G{M.mutable_graph()};
    G.input("x", onnx::TensorProto::FLOAT, {"2"});
    G.node("Relu", {"x"}, {"y"});
    G.output("y", onnx::TensorProto::FLOAT, {"2"});
    EXPECT_EQ(importError(M), "<no error>") << "opset " << Opset;
  }
  onnx::ModelProto M = newModel(26);
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"2"});
  G.node("Relu", {"x"}, {"y"});
  G.output("y", onnx::TensorProto::FLOAT, {"2"});
  std::string E = importError(M);
  EXPECT_NE(E.find("opset 26 is not supported (Rivet reads opsets 1 to 25)"),
            std::string::npos)
      << E;
}

/// A model computing Cast(x: float32 -> To) with the given saturate.
onnx::ModelProto castModel(int32_t To, int64_t Saturate, int64_t Opset = 19) {
  onnx::ModelProto M = newModel(Opset);
  GraphBuilder G{M.mutable_graph()};
  G.input("x", onnx::TensorProto::FLOAT, {"3"});
  auto *N = G.node("Cast", {"x"}, {"y"}, "cast");
  auto *A = N->add_attribute();
  A->set_name("to");
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(To);
  auto *S = N->add_attribute();
  S->set_name("saturate");
  S->set_type(onnx::AttributeProto::INT);
  S->set_i(Saturate);
  G.output("y", To, {"3"});
  return M;
}

TEST(OnnxImport, CastToFloat8SaturatesUnlessToldNot) {
  constexpr int32_t kFloat8E4M3FN = 17, kFloat8E5M2 = 19;
  Tensor X = Tensor::fromVector<float>({1.0f, 1e6f, -1e6f}, {3});
  auto run = [&](int32_t To, int64_t Saturate) {
    ir::Module Mod = import(castModel(To, Saturate));
    ir::Interpreter I(Mod);
    return I.call("main", {ir::Value(X)}).tensor();
  };
  Tensor Sat = run(kFloat8E4M3FN, 1);
  EXPECT_EQ(Sat.dtype(), DType::Float8E4M3FN);
  EXPECT_EQ(Sat.toDoubleVector(), (std::vector<double>{1, 448, -448}));
  // saturate=0: out of range is NaN for e4m3fn (no infinity), inf for e5m2.
  std::vector<double> NoSat = run(kFloat8E4M3FN, 0).toDoubleVector();
  EXPECT_EQ(NoSat[0], 1.0);
  EXPECT_TRUE(std::isnan(NoSat[1]) && std::isnan(NoSat[2]));
  std::vector<double> Inf = run(kFloat8E5M2, 0).toDoubleVector();
  EXPECT_TRUE(std::isinf(Inf[1]) && Inf[1] > 0);
  EXPECT_TRUE(std::isinf(Inf[2]) && Inf[2] < 0);
}

TEST(OnnxImport, PackedInt4InitializersAreCheckedAndUnpacked) {
  constexpr int32_t kInt4 = 22;
  onnx::ModelProto M = newModel(21);
  GraphBuilder G{M.mutable_graph()};
  auto *T = M.mutable_graph()->add_initializer();
  T->set_name("w");
  T->set_data_type(kInt4);
  T->add_dims(3);
  T->set_raw_data(std::string("\x87\x0f", 2)); // 7, -8 | -1, (pad)
  auto *N = G.node("Cast", {"w"}, {"y"}, "cast");
  auto *A = N->add_attribute();
  A->set_name("to");
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(onnx::TensorProto::INT8);
  G.output("y", onnx::TensorProto::INT8, {"3"});
  ir::Module Mod = import(M);
  ir::Interpreter I(Mod);
  EXPECT_EQ(I.call("main", {}).tensor().toIntVector(),
            (std::vector<int64_t>{7, -8, -1}));
  // Three int4 values need two bytes, not three.
  T->set_raw_data(std::string("\x87\x0f\x00", 3));
  std::string E = importError(M);
  EXPECT_NE(E.find("has 3 bytes of data, but (3,) of int4 needs 2"),
            std::string::npos)
      << E;
}

TEST(OnnxImport, MalformedStringTensorsAreClearErrors) {
  auto model = [](auto Fill) {
    onnx::ModelProto M = newModel(20);
    GraphBuilder G{M.mutable_graph()};
    auto *T = M.mutable_graph()->add_initializer();
    T->set_name("s");
    T->set_data_type(onnx::TensorProto::STRING);
    T->add_dims(2);
    Fill(*T);
    G.node("Identity", {"s"}, {"y"});
    G.output("y", onnx::TensorProto::STRING, {"2"});
    return M;
  };
  onnx::ModelProto Good = model([](onnx::TensorProto &T) {
    T.add_string_data("a");
    T.add_string_data("b");
  });
  EXPECT_EQ(importError(Good), "<no error>");
  std::string Short = importError(
      model([](onnx::TensorProto &T) { T.add_string_data("only one"); }));
  EXPECT_NE(Short.find("has 1 strings, but its shape (2,) needs 2"),
            std::string::npos)
      << Short;
  std::string Raw = importError(
      model([](onnx::TensorProto &T) { T.set_raw_data("abcdefgh"); }));
  EXPECT_NE(Raw.find("a string tensor keeps its values in string_data"),
            std::string::npos)
      << Raw;
}
