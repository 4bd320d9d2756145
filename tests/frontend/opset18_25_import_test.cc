//===- opset18_25_import_test.cc - Converters of opsets 18 to 25 ----------===//
//
// What the ONNX backend tests leave out: GroupNormalization-18 (per-group
// scale and bias) against -21, Swish with alpha != 1, Bernoulli (random, so
// only its certain cases) and seeded RandomUniformLike. Models are built with
// the ONNX protobuf classes and run by the reference interpreter.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Importer.h"
#include "ir/Interpreter.h"
#include "ir/TypeInference.h"
#include "kernels/Random.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cmath>

using namespace rivet;

namespace {

using TP = onnx::TensorProto;

/// A one-node model: inputs (name, type, dims), one output y.
struct OneNode {
  onnx::ModelProto M;
  onnx::NodeProto *N;

  OneNode(const std::string &Op, int64_t Opset,
          std::vector<std::tuple<std::string, int32_t, std::vector<int64_t>>>
              Inputs,
          int32_t OutType) {
    M.set_ir_version(10);
    auto *O = M.add_opset_import();
    O->set_domain("");
    O->set_version(Opset);
    auto *G = M.mutable_graph();
    G->set_name("test");
    N = G->add_node();
    N->set_op_type(Op);
    for (auto &[Name, Type, Dims] : Inputs) {
      N->add_input(Name);
      auto *T = G->add_input();
      T->set_name(Name);
      auto *TT = T->mutable_type()->mutable_tensor_type();
      TT->set_elem_type(Type);
      for (int64_t D : Dims)
        TT->mutable_shape()->add_dim()->set_dim_value(D);
    }
    N->add_output("y");
    auto *Y = G->add_output();
    Y->set_name("y");
    Y->mutable_type()->mutable_tensor_type()->set_elem_type(OutType);
  }
  void attr(const std::string &Name, int64_t V) {
    auto *A = N->add_attribute();
    A->set_name(Name);
    A->set_type(onnx::AttributeProto::INT);
    A->set_i(V);
  }
  void attrF(const std::string &Name, float V) {
    auto *A = N->add_attribute();
    A->set_name(Name);
    A->set_type(onnx::AttributeProto::FLOAT);
    A->set_f(V);
  }
  Tensor run(const std::vector<Tensor> &In) const {
    std::string Bytes = M.SerializeAsString();
    ir::Module Mod =
        frontend::importOnnxBytes(Bytes.data(), Bytes.size(), "", "test.onnx");
    ir::inferTypes(Mod);
    ir::Interpreter I(Mod);
    return I.call("main", std::vector<ir::Value>(In.begin(), In.end()))
        .tensor();
  }
};

} // namespace

TEST(Opset18To25Import, GroupNormalization18ScalesPerGroup) {
  Tensor X = randomTensor({2, 4, 3}, DType::Float32, 4);
  auto model = [](int64_t Opset, int64_t ParamLen) {
    OneNode G("GroupNormalization", Opset,
              {{"x", TP::FLOAT, {2, 4, 3}},
               {"scale", TP::FLOAT, {ParamLen}},
               {"bias", TP::FLOAT, {ParamLen}}},
              TP::FLOAT);
    G.attr("num_groups", 2);
    G.attrF("epsilon", 1e-3f);
    return G;
  };
  Tensor Y18 = model(18, 2).run({X, Tensor::fromVector<float>({2, -1}, {2}),
                                 Tensor::fromVector<float>({0.5f, 3}, {2})});
  Tensor Y21 =
      model(21, 4).run({X, Tensor::fromVector<float>({2, 2, -1, -1}, {4}),
                        Tensor::fromVector<float>({0.5f, 0.5f, 3, 3}, {4})});
  EXPECT_TRUE(allClose(Y18, Y21, 1e-6, 1e-6));
  // Opset 21 refuses per-group parameters (2 groups of 4 channels).
  EXPECT_THROW(model(21, 2).run({X, Tensor::fromVector<float>({2, -1}, {2}),
                                 Tensor::fromVector<float>({0.5f, 3}, {2})}),
               Error);
}

TEST(Opset18To25Import, SwishWithAlpha) {
  OneNode S("Swish", 24, {{"x", TP::FLOAT, {4}}}, TP::FLOAT);
  S.attrF("alpha", 0.5f);
  std::vector<float> X = {-3, -0.5f, 0, 2};
  Tensor Y = S.run({Tensor::fromVector(X, {4})});
  for (size_t I = 0; I < X.size(); ++I)
    EXPECT_NEAR(Y.elementAsDouble((int64_t)I),
                X[I] / (1 + std::exp(-0.5 * X[I])), 1e-6);
}

// Random, but certain for p = 0 and p = 1: the draw is in [0, 1).
TEST(Opset18To25Import, BernoulliAtCertainProbabilities) {
  OneNode B("Bernoulli", 22, {{"p", TP::FLOAT, {6}}}, TP::INT32);
  B.attr("dtype", TP::INT32);
  Tensor Y = B.run({Tensor::fromVector<float>({0, 1, 1, 0, 0, 1}, {6})});
  ASSERT_EQ(Y.dtype(), DType::Int32);
  EXPECT_EQ(Y.toDoubleVector(), (std::vector<double>{0, 1, 1, 0, 0, 1}));
  OneNode Same("Bernoulli", 15, {{"p", TP::DOUBLE, {2}}}, TP::DOUBLE);
  EXPECT_EQ(Same.run({Tensor::fromVector<double>({1, 0}, {2})}).dtype(),
            DType::Float64);
}

TEST(Opset18To25Import, SeededRandomUniformLikeRepeats) {
  OneNode R("RandomUniformLike", 22, {{"x", TP::INT64, {50}}}, TP::DOUBLE);
  R.attr("dtype", TP::DOUBLE);
  R.attrF("low", 1);
  R.attrF("high", 2);
  R.attrF("seed", 3);
  Tensor X = Tensor::empty({50}, DType::Int64);
  Tensor A = R.run({X}), B = R.run({X});
  ASSERT_EQ(A.dtype(), DType::Float64);
  EXPECT_EQ(A.toDoubleVector(), B.toDoubleVector());
  for (double V : A.toDoubleVector()) {
    EXPECT_GE(V, 1);
    EXPECT_LT(V, 2);
  }
}
