//===- label_encoder_import_test.cc - ONNX LabelEncoder, opsets 1 to 4 ----===//
//
// The translations the ONNX test suite does not reach: opset 1's
// classes_strings in both directions, float keys with NaN, and opset 4's
// tensors of other dtypes (the values' dtype is the result's).
//
//===----------------------------------------------------------------------===//
#include "OnnxTestUtil.h"
#include "frontend/onnx/Importer.h"
#include "ir/Interpreter.h"
#include "ir/TypeInference.h"
#include "kernels/StringTable.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace rivet;

namespace {

using Strings = std::vector<std::string>;

/// A model of one LabelEncoder (ai.onnx.ml opset Opset) from x of ONNX
/// element type In to y of Out, both [3]; Attrs adds its attributes.
template <typename F>
onnx::ModelProto encoderModel(int64_t Opset, int32_t In, int32_t Out,
                              F &&Attrs) {
  onnx::ModelProto M;
  M.set_ir_version(8);
  for (auto [Domain, Version] :
       {std::pair<const char *, int64_t>{"", 13}, {"ai.onnx.ml", Opset}}) {
    auto *O = M.add_opset_import();
    O->set_domain(Domain);
    O->set_version(Version);
  }
  auto *G = M.mutable_graph();
  G->set_name("test");
  auto valueInfo = [](onnx::ValueInfoProto *V, const char *Name, int32_t T) {
    V->set_name(Name);
    auto *TT = V->mutable_type()->mutable_tensor_type();
    TT->set_elem_type(T);
    TT->mutable_shape()->add_dim()->set_dim_value(3);
  };
  valueInfo(G->add_input(), "x", In);
  valueInfo(G->add_output(), "y", Out);
  auto *N = G->add_node();
  N->set_op_type("LabelEncoder");
  N->set_domain("ai.onnx.ml");
  N->set_name("encoder");
  N->add_input("x");
  N->add_output("y");
  Attrs(*N);
  return M;
}

onnx::AttributeProto *attr(onnx::NodeProto &N, const std::string &Name,
                           onnx::AttributeProto::AttributeType T) {
  auto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(T);
  return A;
}

void strings(onnx::NodeProto &N, const std::string &Name, const Strings &V) {
  auto *A = attr(N, Name, onnx::AttributeProto::STRINGS);
  for (const std::string &S : V)
    A->add_strings(S);
}

ir::Value run(const onnx::ModelProto &M, Tensor X) {
  ir::Module Mod = test::importModel(M);
  ir::Interpreter I(Mod);
  return I.call("main", {ir::Value(std::move(X))});
}

std::string importError(const onnx::ModelProto &M) {
  try {
    run(M, Tensor::empty({3}, DType::String));
  } catch (const Error &E) {
    return E.what();
  }
  return "<no error>";
}

Tensor stringTensor(const Strings &V) {
  return rivet::stringTensor(V, {(int64_t)V.size()});
}
Strings texts(const Tensor &T) { return stringValues(T); }

TEST(LabelEncoderImport, Opset1MapsStringsToTheirIndex) {
  auto M = encoderModel(1, onnx::TensorProto::STRING, onnx::TensorProto::INT64,
                        [](onnx::NodeProto &N) {
                          strings(N, "classes_strings", {"x", "y"});
                        });
  Tensor R = run(M, stringTensor({"y", "z", "x"})).tensor();
  EXPECT_EQ(R.toIntVector(), (std::vector<int64_t>{1, -1, 0}));
}

TEST(LabelEncoderImport, Opset1MapsIndicesToStrings) {
  auto M = encoderModel(
      1, onnx::TensorProto::INT64, onnx::TensorProto::STRING,
      [](onnx::NodeProto &N) {
        strings(N, "classes_strings", {"x", "y"});
        attr(N, "default_string", onnx::AttributeProto::STRING)->set_s("?");
      });
  Tensor R = run(M, Tensor::fromVector<int64_t>({1, 0, 5}, {3})).tensor();
  EXPECT_EQ(texts(R), (Strings{"y", "x", "?"}));
}

TEST(LabelEncoderImport, FloatKeysMatchNaN) {
  auto M = encoderModel(
      2, onnx::TensorProto::FLOAT, onnx::TensorProto::STRING,
      [](onnx::NodeProto &N) {
        auto *K = attr(N, "keys_floats", onnx::AttributeProto::FLOATS);
        K->add_floats(2.5f);
        K->add_floats(std::numeric_limits<float>::quiet_NaN());
        strings(N, "values_strings", {"two and a half", "not a number"});
      });
  Tensor R = run(M, Tensor::fromVector<float>({std::nanf(""), 2.5f, 1.0f}, {3}))
                 .tensor();
  EXPECT_EQ(texts(R), (Strings{"not a number", "two and a half", "_Unused"}));
}

TEST(LabelEncoderImport, Opset4TensorsGiveTheValuesDType) {
  auto M = encoderModel(
      4, onnx::TensorProto::DOUBLE, onnx::TensorProto::INT32,
      [](onnx::NodeProto &N) {
        auto *K =
            attr(N, "keys_tensor", onnx::AttributeProto::TENSOR)->mutable_t();
        K->set_data_type(onnx::TensorProto::DOUBLE);
        K->add_dims(2);
        K->add_double_data(0.1);
        K->add_double_data(-4.0);
        auto *V =
            attr(N, "values_tensor", onnx::AttributeProto::TENSOR)->mutable_t();
        V->set_data_type(onnx::TensorProto::INT32);
        V->add_dims(2);
        V->add_int32_data(100000);
        V->add_int32_data(-7);
        auto *D = attr(N, "default_tensor", onnx::AttributeProto::TENSOR)
                      ->mutable_t();
        D->set_data_type(onnx::TensorProto::INT32);
        D->add_dims(1);
        D->add_int32_data(3);
      });
  Tensor R = run(M, Tensor::fromVector<double>({-4.0, 0.1, 0.2}, {3})).tensor();
  EXPECT_EQ(R.dtype(), DType::Int32);
  EXPECT_EQ(R.toIntVector(), (std::vector<int64_t>{-7, 100000, 3}));
}

TEST(LabelEncoderImport, OneListOfKeysIsRequired) {
  auto M = encoderModel(
      2, onnx::TensorProto::STRING, onnx::TensorProto::INT64,
      [](onnx::NodeProto &N) {
        strings(N, "keys_strings", {"a"});
        attr(N, "keys_int64s", onnx::AttributeProto::INTS)->add_ints(1);
        attr(N, "values_int64s", onnx::AttributeProto::INTS)->add_ints(1);
      });
  std::string E = importError(M);
  EXPECT_NE(E.find("node 'encoder' (LabelEncoder, ai.onnx.ml opset 2): "
                   "expects exactly one of the attributes keys_strings, "
                   "keys_int64s, keys_floats and keys_tensor, got "
                   "keys_strings, keys_int64s"),
            std::string::npos)
      << E;
}

} // namespace
