//===- elementwise_import_test.cc - ONNX elementwise/activation import ----===//
//
// The translations the conformance suite does not reach: dynamic Clip
// bounds, legacy (opset 6) broadcasting and PRelu, Constant's list forms,
// Dropout's refusals and unsupported Cast targets.
//
//===----------------------------------------------------------------------===//
#include "OnnxTestUtil.h"
#include "frontend/onnx/Importer.h"
#include "ir/Interpreter.h"
#include "ir/TypeInference.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

using namespace rivet;

namespace {

using TP = onnx::TensorProto;

struct Builder {
  onnx::ModelProto M;
  onnx::GraphProto *G;
  explicit Builder(int64_t Opset) {
    M.set_ir_version(8);
    auto *O = M.add_opset_import();
    O->set_domain("");
    O->set_version(Opset);
    G = M.mutable_graph();
    G->set_name("test");
  }
  void value(onnx::ValueInfoProto *V, const std::string &Name, int32_t T,
             std::vector<int64_t> Dims) {
    V->set_name(Name);
    auto *TT = V->mutable_type()->mutable_tensor_type();
    TT->set_elem_type(T);
    auto *S = TT->mutable_shape();
    for (int64_t D : Dims)
      S->add_dim()->set_dim_value(D);
  }
  void input(const std::string &N, int32_t T, std::vector<int64_t> D) {
    value(G->add_input(), N, T, D);
  }
  void output(const std::string &N, int32_t T, std::vector<int64_t> D) {
    value(G->add_output(), N, T, D);
  }
  onnx::NodeProto *node(const std::string &Op, std::vector<std::string> Ins,
                        std::vector<std::string> Outs) {
    auto *N = G->add_node();
    N->set_op_type(Op);
    N->set_name(Op + "_node");
    for (auto &I : Ins)
      N->add_input(I);
    for (auto &O : Outs)
      N->add_output(O);
    return N;
  }
  void initF(const std::string &Name, std::vector<float> V,
             std::vector<int64_t> Dims) {
    auto *T = G->add_initializer();
    T->set_name(Name);
    T->set_data_type(TP::FLOAT);
    for (int64_t D : Dims)
      T->add_dims(D);
    for (float F : V)
      T->add_float_data(F);
  }
  void initB(const std::string &Name, bool V) {
    auto *T = G->add_initializer();
    T->set_name(Name);
    T->set_data_type(TP::BOOL);
    T->add_int32_data(V);
  }
  ir::Module import() { return test::importModel(M); }
  std::string importError() { return test::importModelError(M); }
};

void setInt(onnx::NodeProto *N, const std::string &Name, int64_t V) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(V);
}
void setFloats(onnx::NodeProto *N, const std::string &Name,
               std::vector<float> V) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::FLOATS);
  for (float F : V)
    A->add_floats(F);
}

Tensor f32(std::vector<float> V, Shape S) {
  return Tensor::fromVector<float>(V, S);
}

} // namespace

TEST(ElementwiseImport, ClipWithComputedAndConstantBounds) {
  Builder B(13);
  B.input("x", TP::FLOAT, {4});
  B.input("lo", TP::FLOAT, {});
  B.initF("hi", {2}, {});
  B.node("Clip", {"x", "lo", "hi"}, {"y"});
  B.output("y", TP::FLOAT, {4});
  ir::Module Mod = B.import();
  ir::Interpreter I(Mod);
  Tensor Y =
      I.call("main", {f32({-5, 0, 1, 9}, {4}), Tensor::scalar<float>(-1)})
          .tensor();
  EXPECT_TRUE(allClose(Y, f32({-1, 0, 1, 2}, {4})));
}

TEST(ElementwiseImport, LegacyBroadcastAndPRelu) {
  Builder B(6);
  B.input("a", TP::FLOAT, {2, 3, 2});
  B.input("b", TP::FLOAT, {3});
  B.initF("slope", {0.5f, 1, 2}, {3});
  auto *Add = B.node("Add", {"a", "b"}, {"s"});
  setInt(Add, "broadcast", 1);
  setInt(Add, "axis", 1);
  B.node("PRelu", {"s", "slope"}, {"y"});
  B.output("y", TP::FLOAT, {2, 3, 2});
  ir::Module Mod = B.import();
  ir::Interpreter I(Mod);
  std::vector<float> A(12, -1.0f);
  Tensor Y =
      I.call("main", {f32(A, {2, 3, 2}), f32({0, 0.5f, 3}, {3})}).tensor();
  // s = [-1, -0.5, 2] per channel; prelu scales negatives by the channel's
  // slope.
  EXPECT_TRUE(allClose(Y, f32({-0.5f, -0.5f, -0.5f, -0.5f, 2, 2, -0.5f, -0.5f,
                               -0.5f, -0.5f, 2, 2},
                              {2, 3, 2})));
}

TEST(ElementwiseImport, ConstantFloatsAndMeanOfThree) {
  Builder B(13);
  B.input("x", TP::FLOAT, {2});
  setFloats(B.node("Constant", {}, {"c"}), "value_floats", {3, 6});
  B.node("Mean", {"x", "c", "c"}, {"y"});
  B.output("y", TP::FLOAT, {2});
  ir::Module Mod = B.import();
  ir::Interpreter I(Mod);
  Tensor Y = I.call("main", {f32({0, 3}, {2})}).tensor();
  EXPECT_TRUE(allClose(Y, f32({2, 5}, {2})));
}

TEST(ElementwiseImport, Refusals) {
  {
    Builder B(13);
    B.input("x", TP::FLOAT, {2});
    B.initF("r", {0.5f}, {});
    B.initB("t", true);
    B.node("Dropout", {"x", "r", "t"}, {"y"});
    B.output("y", TP::FLOAT, {2});
    std::string E = B.importError();
    EXPECT_NE(E.find("(Dropout, opset 13): training mode with ratio 0.5 drops "
                     "at random"),
              std::string::npos)
        << E;
  }
  {
    Builder B(13);
    B.input("x", TP::FLOAT, {2});
    setInt(B.node("Cast", {"x"}, {"y"}), "to", TP::COMPLEX64);
    B.output("y", TP::FLOAT, {2});
    std::string E = B.importError();
    EXPECT_NE(E.find("(Cast, opset 13): attribute 'to': unsupported element "
                     "type COMPLEX64"),
              std::string::npos)
        << E;
  }
  {
    Builder B(13);
    B.input("x", TP::FLOAT, {2});
    auto *N = B.node("Constant", {}, {"y"});
    auto *A = N->add_attribute();
    A->set_name("value_string");
    A->set_type(onnx::AttributeProto::STRING);
    A->set_s("hi");
    B.output("y", TP::FLOAT, {2});
    std::string E = B.importError();
    EXPECT_NE(
        E.find(
            "(Constant, opset 13): attribute 'value_string' is not supported"),
        std::string::npos)
        << E;
  }
}
