//===- onnx_domains_import_test.cc - Domains other than ai.onnx ----------===//
//
// The importer looks a node's converter up by its domain and the version the
// model imports of that domain; unknown domains and versions are errors that
// name the node. The operators of ai.onnx.ml and ai.onnx.preview.training
// are checked here on values computed by hand (or, for the optimizers, by
// ONNX's reference implementation) where the ONNX test suite does not reach:
// T > 0, integer Binarizer, every TreeEnsemble mode and aggregate.
//
//===----------------------------------------------------------------------===//
#include "OnnxTestUtil.h"
#include "frontend/onnx/Converter.h"
#include "frontend/onnx/Importer.h"
#include "ir/Interpreter.h"
#include "ir/TypeInference.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace rivet;

namespace {

constexpr const char *kMl = "ai.onnx.ml";
constexpr const char *kTraining = "ai.onnx.preview.training";

/// A model importing each (domain, version) of Opsets.
onnx::ModelProto newModel(std::vector<std::pair<std::string, int64_t>> Opsets) {
  onnx::ModelProto M;
  M.set_ir_version(8);
  for (auto &[Domain, Version] : Opsets) {
    auto *O = M.add_opset_import();
    O->set_domain(Domain);
    O->set_version(Version);
  }
  M.mutable_graph()->set_name("test");
  return M;
}

void valueInfo(onnx::ValueInfoProto *V, const std::string &Name,
               int32_t ElemType, const std::vector<int64_t> &Dims) {
  V->set_name(Name);
  auto *T = V->mutable_type()->mutable_tensor_type();
  T->set_elem_type(ElemType);
  auto *S = T->mutable_shape();
  for (int64_t D : Dims)
    S->add_dim()->set_dim_value(D);
}

onnx::NodeProto *addNode(onnx::ModelProto &M, const std::string &Domain,
                         const std::string &Op, std::vector<std::string> Ins,
                         std::vector<std::string> Outs,
                         const std::string &Name = "the_node") {
  auto *N = M.mutable_graph()->add_node();
  N->set_op_type(Op);
  N->set_domain(Domain);
  N->set_name(Name);
  for (auto &I : Ins)
    N->add_input(I);
  for (auto &O : Outs)
    N->add_output(O);
  return N;
}

void input(onnx::ModelProto &M, const std::string &Name, int32_t ElemType,
           const std::vector<int64_t> &Dims) {
  valueInfo(M.mutable_graph()->add_input(), Name, ElemType, Dims);
}
void output(onnx::ModelProto &M, const std::string &Name, int32_t ElemType,
            const std::vector<int64_t> &Dims) {
  valueInfo(M.mutable_graph()->add_output(), Name, ElemType, Dims);
}

void attrFloat(onnx::NodeProto *N, const std::string &Name, float V) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::FLOAT);
  A->set_f(V);
}
void attrInt(onnx::NodeProto *N, const std::string &Name, int64_t V) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(V);
}
void attrString(onnx::NodeProto *N, const std::string &Name,
                const std::string &V) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::STRING);
  A->set_s(V);
}
void attrInts(onnx::NodeProto *N, const std::string &Name,
              const std::vector<int64_t> &V) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INTS);
  for (int64_t X : V)
    A->add_ints(X);
}
/// A 1-D float tensor attribute (TreeEnsemble's splits, weights, sets).
void attrFloatTensor(onnx::NodeProto *N, const std::string &Name,
                     const std::vector<float> &V) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::TENSOR);
  auto *T = A->mutable_t();
  T->set_data_type(onnx::TensorProto::FLOAT);
  T->add_dims((int64_t)V.size());
  for (float X : V)
    T->add_float_data(X);
}
/// A 1-D uint8 tensor attribute (TreeEnsemble's nodes_modes).
void attrModes(onnx::NodeProto *N, const std::vector<int32_t> &V) {
  auto *A = N->add_attribute();
  A->set_name("nodes_modes");
  A->set_type(onnx::AttributeProto::TENSOR);
  auto *T = A->mutable_t();
  T->set_data_type(onnx::TensorProto::UINT8);
  T->add_dims((int64_t)V.size());
  for (int32_t X : V)
    T->add_int32_data(X);
}

ir::Module import(const onnx::ModelProto &M) { return test::importModel(M); }
std::string importError(const onnx::ModelProto &M) {
  return test::importModelError(M);
}

ir::Value run(const onnx::ModelProto &M, std::vector<ir::Value> Args) {
  ir::Module Mod = import(M);
  ir::Interpreter I(Mod);
  return I.call("main", std::move(Args));
}

Tensor floats(std::vector<float> V, Shape Sh) {
  return Tensor::fromVector<float>(V, Sh);
}

/// A model of one Binarizer (threshold 0.5) over x: float32[3] in domain
/// NodeDomain, importing Opsets.
onnx::ModelProto
binarizerModel(const std::string &NodeDomain,
               std::vector<std::pair<std::string, int64_t>> Opsets) {
  onnx::ModelProto M = newModel(std::move(Opsets));
  input(M, "x", onnx::TensorProto::FLOAT, {3});
  attrFloat(addNode(M, NodeDomain, "Binarizer", {"x"}, {"y"}), "threshold",
            0.5f);
  output(M, "y", onnx::TensorProto::FLOAT, {3});
  return M;
}

} // namespace

//===----------------------------------------------------------------------===//
// Domains
//===----------------------------------------------------------------------===//

TEST(OnnxDomains, RegistryIsKeyedByDomainOpAndDomainOpset) {
  const auto &R = frontend::ConverterRegistry::global();
  EXPECT_NE(R.find(kMl, "TreeEnsemble", 5), nullptr);
  // Introduced at ai.onnx.ml opset 5; the ai.onnx opset does not matter.
  EXPECT_EQ(R.find(kMl, "TreeEnsemble", 4), nullptr);
  EXPECT_EQ(R.find("ai.onnx", "TreeEnsemble", 25), nullptr);
  EXPECT_EQ(R.find(kMl, "Relu", 5), nullptr);
  EXPECT_NE(R.find("ai.onnx", "Relu", 13), nullptr);
  const frontend::OnnxConverter *Adam = R.find(kTraining, "Adam", 1);
  ASSERT_NE(Adam, nullptr);
  EXPECT_EQ(Adam->domain, kTraining);
  EXPECT_EQ(Adam->sinceVersion, 1);
}

TEST(OnnxDomains, OperatorListNamesDomains) {
  bool SawMl = false, SawRelu = false;
  for (const frontend::OnnxOpVersion &V : frontend::onnxOperatorVersions()) {
    SawMl |= V.domain == kMl && V.opType == "Binarizer";
    SawRelu |= V.domain == "ai.onnx" && V.opType == "Relu";
  }
  EXPECT_TRUE(SawMl);
  EXPECT_TRUE(SawRelu);
  std::vector<frontend::OnnxDomainVersions> D = frontend::onnxDomains();
  ASSERT_GE(D.size(), 3u);
  EXPECT_EQ(D[0].name, "ai.onnx");
}

TEST(OnnxDomains, NodesOfAnImportedDomainAreRead) {
  // ai.onnx.ml is imported beside ai.onnx (as sklearn-onnx writes models).
  onnx::ModelProto M = binarizerModel(kMl, {{"", 13}, {kMl, 1}});
  ir::Value R = run(M, {floats({0.2f, 0.5f, 0.7f}, {3})});
  EXPECT_TRUE(allClose(R.tensor(), floats({0, 0, 1}, {3})));
}

TEST(OnnxDomains, AnOperatorIsLookedUpInItsNodesDomain) {
  // Binarizer exists in ai.onnx.ml only.
  std::string E = importError(binarizerModel("", {{"", 13}, {kMl, 1}}));
  EXPECT_NE(E.find("node 'the_node' (Binarizer, opset 13): unsupported "
                   "operator"),
            std::string::npos)
      << E;
}

TEST(OnnxDomains, TheDomainsOpsetPicksTheTranslation) {
  // TreeEnsemble is ai.onnx.ml opset 5: a model importing opset 3 of it
  // (and the newest ai.onnx) does not have it.
  onnx::ModelProto M = newModel({{"", 25}, {kMl, 3}});
  input(M, "x", onnx::TensorProto::FLOAT, {1, 1});
  addNode(M, kMl, "TreeEnsemble", {"x"}, {"y"});
  output(M, "y", onnx::TensorProto::FLOAT, {1, 1});
  std::string E = importError(M);
  EXPECT_NE(E.find("node 'the_node' (TreeEnsemble, ai.onnx.ml opset 3): "
                   "unsupported operator"),
            std::string::npos)
      << E;
}

TEST(OnnxDomains, UnknownDomainNamesNodeOpDomainAndVersion) {
  onnx::ModelProto M = binarizerModel("com.example", {{"com.example", 2}});
  std::string E = importError(M);
  EXPECT_NE(E.find("node 'the_node' (Binarizer, com.example opset 2): "
                   "operator domain 'com.example' is not supported (Rivet "
                   "reads ai.onnx, ai.onnx.ml, ai.onnx.preview.training)"),
            std::string::npos)
      << E;
  // A domain the model imports but no node uses is no error.
  onnx::ModelProto Unused = binarizerModel(kMl, {{kMl, 1}, {"com.example", 2}});
  EXPECT_EQ(importError(Unused), "<no error>");
}

TEST(OnnxDomains, UnsupportedDomainVersionIsAnError) {
  std::string E = importError(binarizerModel(kMl, {{kMl, 6}}));
  EXPECT_NE(E.find("node 'the_node' (Binarizer, ai.onnx.ml opset 6): "
                   "ai.onnx.ml opset 6 is not supported (Rivet reads opsets "
                   "1 to 5)"),
            std::string::npos)
      << E;
  std::string T = importError(binarizerModel(kTraining, {{kTraining, 2}}));
  EXPECT_NE(T.find("ai.onnx.preview.training opset 2 is not supported "
                   "(Rivet reads opsets 1 to 1)"),
            std::string::npos)
      << T;
}

TEST(OnnxDomains, DomainNotImportedIsAnError) {
  std::string E = importError(binarizerModel(kMl, {{"", 13}}));
  EXPECT_NE(E.find("node 'the_node' (Binarizer, ai.onnx.ml not imported): "
                   "the model does not import domain 'ai.onnx.ml'"),
            std::string::npos)
      << E;
}

TEST(OnnxDomains, ConflictingVersionsOfADomainAreAnError) {
  // "" and "ai.onnx" are one domain.
  std::string E =
      importError(binarizerModel(kMl, {{"", 13}, {"ai.onnx", 14}, {kMl, 1}}));
  EXPECT_NE(E.find("operator set 'ai.onnx' is imported at versions 13 and 14"),
            std::string::npos)
      << E;
}

//===----------------------------------------------------------------------===//
// ai.onnx.ml
//===----------------------------------------------------------------------===//

TEST(OnnxMl, BinarizerOnIntegersComparesWithTheExactThreshold) {
  onnx::ModelProto M = newModel({{kMl, 1}});
  input(M, "x", onnx::TensorProto::INT64, {4});
  attrFloat(addNode(M, kMl, "Binarizer", {"x"}, {"y"}), "threshold", -1.5f);
  output(M, "y", onnx::TensorProto::INT64, {4});
  ir::Value R = run(M, {Tensor::fromVector<int64_t>({-3, -2, -1, 4}, {4})});
  EXPECT_TRUE(
      allClose(R.tensor(), Tensor::fromVector<int64_t>({0, 0, 1, 1}, {4})));
}

TEST(OnnxMl, ArrayFeatureExtractorOfAVectorGivesOneRow) {
  onnx::ModelProto M = newModel({{kMl, 1}});
  input(M, "x", onnx::TensorProto::FLOAT, {4});
  input(M, "i", onnx::TensorProto::INT64, {1, 2});
  addNode(M, kMl, "ArrayFeatureExtractor", {"x", "i"}, {"y"});
  output(M, "y", onnx::TensorProto::FLOAT, {1, 2});
  ir::Value R = run(M, {floats({10, 11, 12, 13}, {4}),
                        Tensor::fromVector<int64_t>({3, 0}, {1, 2})});
  EXPECT_TRUE(allClose(R.tensor(), floats({13, 10}, {1, 2})));

  onnx::ModelProto M3 = newModel({{kMl, 1}});
  input(M3, "x", onnx::TensorProto::FLOAT, {2, 1, 3});
  input(M3, "i", onnx::TensorProto::INT64, {1});
  addNode(M3, kMl, "ArrayFeatureExtractor", {"x", "i"}, {"y"});
  output(M3, "y", onnx::TensorProto::FLOAT, {2, 1, 1});
  ir::Value R3 = run(M3, {floats({1, 2, 3, 4, 5, 6}, {2, 1, 3}),
                          Tensor::fromVector<int64_t>({2}, {1})});
  EXPECT_TRUE(allClose(R3.tensor(), floats({3, 6}, {2, 1, 1})));
}

TEST(OnnxMl, ScalerOffsetsAndScalesEachFeatureInFloat32) {
  onnx::ModelProto M = newModel({{kMl, 1}});
  input(M, "x", onnx::TensorProto::INT64, {2, 2});
  auto *N = addNode(M, kMl, "Scaler", {"x"}, {"y"});
  onnx::AttributeProto *Offset = N->add_attribute();
  Offset->set_name("offset");
  Offset->set_type(onnx::AttributeProto::FLOATS);
  Offset->add_floats(1);
  Offset->add_floats(2);
  onnx::AttributeProto *Scale = N->add_attribute();
  Scale->set_name("scale");
  Scale->set_type(onnx::AttributeProto::FLOATS);
  Scale->add_floats(2);
  Scale->add_floats(0.5f);
  output(M, "y", onnx::TensorProto::FLOAT, {2, 2});
  ir::Value R = run(M, {Tensor::fromVector<int64_t>({1, 2, 3, 4}, {2, 2})});
  EXPECT_TRUE(allClose(R.tensor(), floats({0, 0, 4, 1}, {2, 2})));
}

TEST(OnnxMl, NormalizerDividesEachRowUnlessTheDivisorIsZero) {
  struct Case {
    const char *Norm;
    std::vector<float> Expected;
  } Cases[] = {
      {"MAX", {0.5f, -2, 1, 0, 0, 0}},
      {"L1", {1 / 7.f, -4 / 7.f, 2 / 7.f, 0, 0, 0}},
      {"L2",
       {1 / std::sqrt(21.f), -4 / std::sqrt(21.f), 2 / std::sqrt(21.f), 0, 0,
        0}},
  };
  for (const Case &C : Cases) {
    onnx::ModelProto M = newModel({{kMl, 1}});
    input(M, "x", onnx::TensorProto::FLOAT, {2, 3});
    attrString(addNode(M, kMl, "Normalizer", {"x"}, {"y"}), "norm", C.Norm);
    output(M, "y", onnx::TensorProto::FLOAT, {2, 3});
    ir::Value R = run(M, {floats({1, -4, 2, 0, 0, 0}, {2, 3})});
    EXPECT_TRUE(allClose(R.tensor(), floats(C.Expected, {2, 3}))) << C.Norm;
  }
}

TEST(OnnxMl, LinearRegressorHasOneRowPerSample) {
  auto Model = [](std::vector<int64_t> XDims, const char *Post) {
    onnx::ModelProto M = newModel({{kMl, 1}});
    input(M, "x", onnx::TensorProto::FLOAT, XDims);
    auto *N = addNode(M, kMl, "LinearRegressor", {"x"}, {"y"});
    attrInt(N, "targets", 2);
    onnx::AttributeProto *Coef = N->add_attribute();
    Coef->set_name("coefficients");
    Coef->set_type(onnx::AttributeProto::FLOATS);
    for (float V : {1, 0, 1, 0, 1, 0})
      Coef->add_floats(V);
    onnx::AttributeProto *Icpt = N->add_attribute();
    Icpt->set_name("intercepts");
    Icpt->set_type(onnx::AttributeProto::FLOATS);
    Icpt->add_floats(10);
    Icpt->add_floats(20);
    attrString(N, "post_transform", Post);
    output(M, "y", onnx::TensorProto::FLOAT, {XDims.size() == 1 ? 1 : 2, 2});
    return M;
  };
  ir::Value R =
      run(Model({2, 3}, "NONE"), {floats({1, 2, 3, 4, 5, 6}, {2, 3})});
  EXPECT_TRUE(allClose(R.tensor(), floats({14, 22, 20, 25}, {2, 2})));
  // One sample as a vector: scores 14 and 22, softmax over the targets.
  ir::Value S = run(Model({3}, "SOFTMAX"), {floats({1, 2, 3}, {3})});
  float E = std::exp(-8.f);
  EXPECT_TRUE(allClose(S.tensor(), floats({E / (1 + E), 1 / (1 + E)}, {1, 2})));
}

TEST(OnnxMl, ImputerReplacesPerFeature) {
  onnx::ModelProto M = newModel({{kMl, 1}});
  input(M, "x", onnx::TensorProto::FLOAT, {2, 2});
  auto *N = addNode(M, kMl, "Imputer", {"x"}, {"y"});
  onnx::AttributeProto *Values = N->add_attribute();
  Values->set_name("imputed_value_floats");
  Values->set_type(onnx::AttributeProto::FLOATS);
  Values->add_floats(7);
  Values->add_floats(8);
  attrFloat(N, "replaced_value_float", std::numeric_limits<float>::quiet_NaN());
  output(M, "y", onnx::TensorProto::FLOAT, {2, 2});
  float NaN = std::numeric_limits<float>::quiet_NaN();
  ir::Value R = run(M, {floats({1, NaN, NaN, 4}, {2, 2})});
  EXPECT_TRUE(allClose(R.tensor(), floats({1, 8, 7, 4}, {2, 2})));

  onnx::ModelProto I = newModel({{kMl, 1}});
  input(I, "x", onnx::TensorProto::INT64, {2, 2});
  auto *NI = addNode(I, kMl, "Imputer", {"x"}, {"y"});
  attrInts(NI, "imputed_value_int64s", {0});
  attrInt(NI, "replaced_value_int64", -1);
  output(I, "y", onnx::TensorProto::INT64, {2, 2});
  ir::Value RI = run(I, {Tensor::fromVector<int64_t>({-1, 2, 3, -1}, {2, 2})});
  EXPECT_TRUE(
      allClose(RI.tensor(), Tensor::fromVector<int64_t>({0, 2, 3, 0}, {2, 2})));
}

namespace {

/// Three trees over x[N, 2], two targets; leaf L has weight L + 1.
///   tree 0: x0 < 0.5 ? (x1 >= 2, NaN true ? leaf 1 : leaf 2) : leaf 0
///   tree 1: x1 != 1 ? leaf 3 : (x0 == 3 ? leaf 4 : leaf 5)
///   tree 2: a lone leaf (node 4's branches are both leaf 6)
/// Leaves 0, 2, 4 go to target 0; leaves 1, 3, 5, 6 to target 1.
onnx::ModelProto treeModel(int64_t Aggregate, int64_t Post = 0) {
  onnx::ModelProto M = newModel({{"", 21}, {kMl, 5}});
  input(M, "x", onnx::TensorProto::FLOAT, {4, 2});
  auto *N = addNode(M, kMl, "TreeEnsemble", {"x"}, {"y"});
  attrInt(N, "n_targets", 2);
  attrInt(N, "aggregate_function", Aggregate);
  attrInt(N, "post_transform", Post);
  attrInts(N, "tree_roots", {0, 2, 4});
  attrInts(N, "nodes_featureids", {0, 1, 1, 0, 0});
  attrModes(N, {1, 2, 5, 4, 0});
  attrFloatTensor(N, "nodes_splits", {0.5f, 2.0f, 1.0f, 3.0f, 0.0f});
  attrInts(N, "nodes_truenodeids", {1, 1, 3, 4, 6});
  attrInts(N, "nodes_trueleafs", {0, 1, 1, 1, 1});
  attrInts(N, "nodes_falsenodeids", {0, 2, 3, 5, 6});
  attrInts(N, "nodes_falseleafs", {1, 1, 0, 1, 1});
  attrInts(N, "nodes_missing_value_tracks_true", {0, 1, 0, 0, 0});
  attrInts(N, "leaf_targetids", {0, 1, 0, 1, 0, 1, 1});
  attrFloatTensor(N, "leaf_weights", {1, 2, 3, 4, 5, 6, 7});
  output(M, "y", onnx::TensorProto::FLOAT, {4, 2});
  return M;
}

/// Rows: (0, 3) reaches leaves 1, 3, 6; (0, NaN) the same (NaN takes the
/// true branch of node 1 as the node says, and NaN != 1); (3, 1) leaves 0,
/// 4, 6; (1, 1) leaves 0, 5, 6.
Tensor treeInput() {
  float NaN = std::numeric_limits<float>::quiet_NaN();
  return floats({0, 3, 0, NaN, 3, 1, 1, 1}, {4, 2});
}

} // namespace

TEST(OnnxMl, TreeEnsembleModesAndAggregates) {
  const float Max = std::numeric_limits<float>::max();
  struct Case {
    int64_t Aggregate;
    std::vector<float> Expected;
  } Cases[] = {
      {1, {0, 13, 0, 13, 6, 7, 1, 13}},                               // SUM
      {0, {0, 13.f / 3, 0, 13.f / 3, 2, 7.f / 3, 1.f / 3, 13.f / 3}}, // AVERAGE
      {2, {Max, 2, Max, 2, 1, 7, 1, 6}},                              // MIN
      {3, {-Max, 7, -Max, 7, 5, 7, 1, 7}},                            // MAX
  };
  for (const Case &C : Cases) {
    ir::Value R = run(treeModel(C.Aggregate), {treeInput()});
    EXPECT_TRUE(allClose(R.tensor(), floats(C.Expected, {4, 2})))
        << "aggregate_function " << C.Aggregate;
  }
}

TEST(OnnxMl, TreeEnsemblePostTransforms) {
  ir::Value L = run(treeModel(1, /*LOGISTIC*/ 2), {treeInput()});
  std::vector<float> Sum = {0, 13, 0, 13, 6, 7, 1, 13};
  std::vector<float> Logistic, Softmax;
  for (float V : Sum)
    Logistic.push_back(1 / (1 + std::exp(-V)));
  EXPECT_TRUE(allClose(L.tensor(), floats(Logistic, {4, 2})));
  ir::Value S = run(treeModel(1, /*SOFTMAX*/ 1), {treeInput()});
  for (size_t I = 0; I < Sum.size(); I += 2) {
    float E0 = std::exp(Sum[I]), E1 = std::exp(Sum[I + 1]);
    Softmax.push_back(E0 / (E0 + E1));
    Softmax.push_back(E1 / (E0 + E1));
  }
  EXPECT_TRUE(allClose(S.tensor(), floats(Softmax, {4, 2})));
  std::string E = importError(treeModel(1, /*PROBIT*/ 4));
  EXPECT_NE(E.find("post_transform PROBIT is not supported"), std::string::npos)
      << E;
}

TEST(OnnxMl, TreeEnsembleMemberSetsFollowNodeOrder) {
  // Node 0: x0 in {1, 2} ? leaf 0 : node 1; node 1: x0 in {3} ? leaf 1 :
  // leaf 2.
  onnx::ModelProto M = newModel({{kMl, 5}});
  input(M, "x", onnx::TensorProto::FLOAT, {4, 1});
  auto *N = addNode(M, kMl, "TreeEnsemble", {"x"}, {"y"});
  attrInt(N, "n_targets", 1);
  attrInts(N, "tree_roots", {0});
  attrInts(N, "nodes_featureids", {0, 0});
  attrModes(N, {6, 6});
  attrFloatTensor(N, "nodes_splits", {0, 0});
  attrInts(N, "nodes_truenodeids", {0, 1});
  attrInts(N, "nodes_trueleafs", {1, 1});
  attrInts(N, "nodes_falsenodeids", {1, 2});
  attrInts(N, "nodes_falseleafs", {0, 1});
  float NaN = std::numeric_limits<float>::quiet_NaN();
  attrFloatTensor(N, "membership_values", {2, 1, NaN, 3, NaN});
  attrInts(N, "leaf_targetids", {0, 0, 0});
  attrFloatTensor(N, "leaf_weights", {10, 20, 30});
  output(M, "y", onnx::TensorProto::FLOAT, {4, 1});
  ir::Value R = run(M, {floats({1, 2, 3, NaN}, {4, 1})});
  EXPECT_TRUE(allClose(R.tensor(), floats({10, 10, 20, 30}, {4, 1})));
}

TEST(OnnxMl, MalformedTreeEnsemblesAreErrors) {
  auto WithInts = [](const std::string &Name, std::vector<int64_t> V) {
    onnx::ModelProto M = treeModel(1);
    auto *N = M.mutable_graph()->mutable_node(0);
    for (auto &A : *N->mutable_attribute())
      if (A.name() == Name) {
        A.clear_ints();
        for (int64_t X : V)
          A.add_ints(X);
      }
    return importError(M);
  };
  // Node 1's true branch to node 1 itself.
  std::string Cycle = WithInts("nodes_trueleafs", {0, 0, 1, 1, 1});
  EXPECT_NE(Cycle.find("cycle"), std::string::npos) << Cycle;
  std::string Leaf = WithInts("nodes_truenodeids", {1, 9, 3, 4, 6});
  EXPECT_NE(Leaf.find("node 1's true branch is leaf 9, outside [0, 7)"),
            std::string::npos)
      << Leaf;
  std::string Feature = WithInts("nodes_featureids", {0, 2, 1, 0, 0});
  EXPECT_NE(Feature.find("the trees read feature 2, x has 2 features"),
            std::string::npos)
      << Feature;
  std::string Target = WithInts("leaf_targetids", {0, 1, 0, 1, 0, 1, 2});
  EXPECT_NE(Target.find("leaf 6 has target 2, outside [0, 2)"),
            std::string::npos)
      << Target;
  std::string Length = WithInts("nodes_trueleafs", {0, 1});
  EXPECT_NE(Length.find("'nodes_trueleafs' has 2 entries for 5 nodes"),
            std::string::npos)
      << Length;
}

//===----------------------------------------------------------------------===//
// ai.onnx.preview.training (expected values: ONNX 1.20.1's reference)
//===----------------------------------------------------------------------===//

namespace {

/// One optimizer node over R, T and one tensor of 2 with its gradient and
/// accumulators; outputs out0, out1, ...
onnx::ModelProto optimizerModel(const std::string &Op, size_t Accumulators,
                                size_t Outputs) {
  onnx::ModelProto M = newModel({{kTraining, 1}});
  input(M, "R", onnx::TensorProto::FLOAT, {});
  input(M, "T", onnx::TensorProto::INT64, {});
  std::vector<std::string> Ins = {"R", "T", "X", "G"};
  for (size_t I = 0; I < Accumulators; ++I)
    Ins.push_back("A" + std::to_string(I));
  for (size_t I = 2; I < Ins.size(); ++I)
    input(M, Ins[I], onnx::TensorProto::FLOAT, {2});
  std::vector<std::string> Outs;
  for (size_t I = 0; I < Outputs; ++I) {
    Outs.push_back("out" + std::to_string(I));
    output(M, Outs.back(), onnx::TensorProto::FLOAT, {2});
  }
  addNode(M, kTraining, Op, Ins, Outs);
  return M;
}

std::vector<ir::Value> optimizerArgs(std::vector<float> Accumulator2 = {}) {
  std::vector<ir::Value> Args = {
      Tensor::scalar<float>(0.1f), Tensor::scalar<int64_t>(3),
      floats({1.2f, 2.8f}, {2}), floats({-0.94f, -2.5f}, {2})};
  Args.push_back(floats({1.7f, 3.6f}, {2}));
  if (!Accumulator2.empty())
    Args.push_back(floats(Accumulator2, {2}));
  return Args;
}

void expectOutputs(const ir::Value &R,
                   const std::vector<std::vector<float>> &Expected) {
  ASSERT_EQ(R.fields().size(), Expected.size());
  for (size_t I = 0; I < Expected.size(); ++I)
    EXPECT_TRUE(allClose(R.fields()[I].tensor(), floats(Expected[I], {2})))
        << "output " << I;
}

} // namespace

TEST(OnnxTraining, AdamCorrectsTheLearningRateAfterTheFirstUpdate) {
  onnx::ModelProto M = optimizerModel("Adam", 2, 3);
  auto *N = M.mutable_graph()->mutable_node(0);
  attrFloat(N, "alpha", 0.95f);
  attrFloat(N, "beta", 0.1f);
  attrFloat(N, "epsilon", 1e-7f);
  attrFloat(N, "norm_coefficient", 0.001f);
  attrFloat(N, "norm_coefficient_post", 0.01f);
  expectOutputs(run(M, optimizerArgs({0.1f, 0.1f})),
                {{-0.02586429752409458f, 1.8078712224960327f},
                 {1.568060040473938f, 3.295139789581299f},
                 {0.8032107949256897f, 5.622406959533691f}});
}

TEST(OnnxTraining, MomentumScalesTheGradientAfterTheFirstUpdate) {
  onnx::ModelProto M = optimizerModel("Momentum", 1, 2);
  auto *N = M.mutable_graph()->mutable_node(0);
  attrFloat(N, "alpha", 0.95f);
  attrFloat(N, "beta", 0.1f);
  attrFloat(N, "norm_coefficient", 0.001f);
  attrString(N, "mode", "standard");
  expectOutputs(run(M, optimizerArgs()),
                {{1.0478880405426025f, 2.4829719066619873f},
                 {1.5211200714111328f, 3.1702797412872314f}});

  onnx::ModelProto Bad = optimizerModel("Momentum", 1, 2);
  auto *B = Bad.mutable_graph()->mutable_node(0);
  attrFloat(B, "alpha", 0.95f);
  attrFloat(B, "beta", 0.1f);
  attrFloat(B, "norm_coefficient", 0.001f);
  attrString(B, "mode", "heavy_ball");
  std::string E = importError(Bad);
  EXPECT_NE(E.find("attribute 'mode' must be \"standard\" or \"nesterov\""),
            std::string::npos)
      << E;
}

TEST(OnnxTraining, AdagradDecaysTheLearningRate) {
  onnx::ModelProto M = optimizerModel("Adagrad", 1, 2);
  auto *N = M.mutable_graph()->mutable_node(0);
  attrFloat(N, "decay_factor", 0.1f);
  attrFloat(N, "epsilon", 1e-5f);
  attrFloat(N, "norm_coefficient", 0.001f);
  std::vector<ir::Value> Args = optimizerArgs();
  Args[4] = floats({0.1f, 0.1f}, {2}); // H
  expectOutputs(run(M, Args), {{1.2728978395462036f, 2.8763132095336914f},
                               {0.9813454151153564f, 6.336007595062256f}});
}

TEST(OnnxTraining, InputsMustComeInGroups) {
  onnx::ModelProto M = optimizerModel("Adam", 1, 2); // X, G, V but no H
  std::string E = importError(M);
  EXPECT_NE(E.find("expects R, T and 4 inputs per optimized tensor, got 5 "
                   "inputs"),
            std::string::npos)
      << E;
}
