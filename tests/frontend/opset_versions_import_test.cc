//===- opset_versions_import_test.cc - Converters that changed by opset ---===//
//
// The image and data-movement operators whose meaning changed between ONNX
// opsets, each at both versions: Split-13/18 (uneven num_outputs), DFT-17/20
// (the axis became an input), ReduceMax/Min-18/20 (empty reductions),
// Pad-18/19 (wrap), GridSample-16/20 (mode names), Resize-13/18
// (antialias), and CenterCropPad with and without known extents. Models are
// built with the ONNX protobuf classes and run by the reference interpreter.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Importer.h"
#include "ir/Interpreter.h"
#include "ir/TypeInference.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace rivet;

namespace {

using TP = onnx::TensorProto;
using Ints = std::vector<int64_t>;

/// A one-node model. Inputs are graph inputs (a dim of -1 is unnamed and
/// unknown) or, given with init(), constant initializers; "" skips an
/// optional input.
struct OneNode {
  onnx::ModelProto M;
  onnx::NodeProto *N;

  OneNode(const std::string &Op, int64_t Opset, size_t Outputs = 1) {
    M.set_ir_version(10);
    auto *O = M.add_opset_import();
    O->set_domain("");
    O->set_version(Opset);
    M.mutable_graph()->set_name("test");
    N = M.mutable_graph()->add_node();
    N->set_op_type(Op);
    for (size_t I = 0; I < Outputs; ++I) {
      std::string Name = "y" + std::to_string(I);
      N->add_output(Name);
      M.mutable_graph()->add_output()->set_name(Name);
    }
  }
  void input(const std::string &Name, int32_t Type, const Ints &Dims) {
    N->add_input(Name);
    if (Name.empty())
      return;
    auto *T = M.mutable_graph()->add_input();
    T->set_name(Name);
    auto *TT = T->mutable_type()->mutable_tensor_type();
    TT->set_elem_type(Type);
    for (int64_t D : Dims)
      if (D >= 0)
        TT->mutable_shape()->add_dim()->set_dim_value(D);
      else
        TT->mutable_shape()->add_dim();
  }
  void init(const std::string &Name, const Ints &Values, const Ints &Dims) {
    N->add_input(Name);
    auto *T = M.mutable_graph()->add_initializer();
    T->set_name(Name);
    T->set_data_type(TP::INT64);
    for (int64_t D : Dims)
      T->add_dims(D);
    for (int64_t V : Values)
      T->add_int64_data(V);
  }
  onnx::AttributeProto *attr(const std::string &Name,
                             onnx::AttributeProto::AttributeType Type) {
    auto *A = N->add_attribute();
    A->set_name(Name);
    A->set_type(Type);
    return A;
  }
  void attr(const std::string &Name, int64_t V) {
    attr(Name, onnx::AttributeProto::INT)->set_i(V);
  }
  void attr(const std::string &Name, const std::string &V) {
    attr(Name, onnx::AttributeProto::STRING)->set_s(V);
  }
  void attr(const std::string &Name, const Ints &V) {
    auto *A = attr(Name, onnx::AttributeProto::INTS);
    for (int64_t X : V)
      A->add_ints(X);
  }
  std::vector<Tensor> run(const std::vector<Tensor> &In) const {
    std::string Bytes = M.SerializeAsString();
    ir::Module Mod =
        frontend::importOnnxBytes(Bytes.data(), Bytes.size(), "", "test.onnx");
    ir::inferTypes(Mod);
    ir::Interpreter I(Mod);
    ir::Value V = I.call("main", std::vector<ir::Value>(In.begin(), In.end()));
    if (!V.isTuple())
      return {V.tensor()};
    std::vector<Tensor> R;
    for (const ir::Value &F : V.fields())
      R.push_back(F.tensor());
    return R;
  }
};

Tensor f32(std::vector<float> V, Shape S) { return Tensor::fromVector(V, S); }
Tensor i64(Ints V, Shape S) { return Tensor::fromVector(V, S); }

Tensor iotaF(Shape S) {
  Tensor T = Tensor::empty(S, DType::Float32);
  for (int64_t I = 0; I < T.numel(); ++I)
    T.data<float>()[I] = (float)I;
  return T;
}

void expectNear(const Tensor &A, const Tensor &B, double Tol = 1e-5) {
  ASSERT_EQ(A.shape(), B.shape());
  for (int64_t I = 0; I < A.numel(); ++I)
    EXPECT_NEAR(A.elementAsDouble(I), B.elementAsDouble(I), Tol) << "at " << I;
}

} // namespace

// Split-18's num_outputs allows a smaller last part; Split-13's equal parts
// must divide the extent.
TEST(OpsetVersionsImport, SplitUnevenFrom18) {
  auto Model = [](int64_t Opset) {
    OneNode S("Split", Opset, 4);
    S.input("x", TP::FLOAT, {7});
    if (Opset >= 18)
      S.attr("num_outputs", int64_t(4));
    return S;
  };
  std::vector<Tensor> P = Model(18).run({iotaF({7})});
  ASSERT_EQ(P.size(), 4u);
  EXPECT_EQ(P[0].shape(), (Shape{2}));
  EXPECT_EQ(P[3].toDoubleVector(), (std::vector<double>{6}));
  EXPECT_THROW(Model(13).run({iotaF({7})}), Error);
  // An extent known only at run time.
  OneNode D("Split", 18, 3);
  D.input("x", TP::FLOAT, {-1});
  D.attr("num_outputs", int64_t(3));
  P = D.run({iotaF({4})});
  ASSERT_EQ(P.size(), 3u);
  EXPECT_EQ(P[1].toDoubleVector(), (std::vector<double>{2, 3}));
  EXPECT_EQ(P[2].shape(), (Shape{0}));
}

// DFT-17 takes the axis as an attribute (default 1), DFT-20 as an input
// (default -2), constant or computed.
TEST(OpsetVersionsImport, DftAxisAttributeThenInput) {
  Tensor X = iotaF({2, 3, 4, 1});
  OneNode A17("DFT", 17);
  A17.input("x", TP::FLOAT, {2, 3, 4, 1});
  A17.attr("axis", int64_t(2));
  Tensor Want = A17.run({X})[0];
  EXPECT_EQ(Want.shape(), (Shape{2, 3, 4, 2}));
  OneNode Default20("DFT", 20);
  Default20.input("x", TP::FLOAT, {2, 3, 4, 1});
  expectNear(Default20.run({X})[0], Want);
  OneNode Const20("DFT", 20);
  Const20.input("x", TP::FLOAT, {2, 3, 4, 1});
  Const20.input("", TP::INT64, {});
  Const20.init("axis", {-2}, {});
  expectNear(Const20.run({X})[0], Want);
  OneNode Input20("DFT", 20);
  Input20.input("x", TP::FLOAT, {2, 3, 4, 1});
  Input20.input("", TP::INT64, {});
  Input20.input("axis", TP::INT64, {});
  Input20.attr("inverse", int64_t(1));
  OneNode Inverse17("DFT", 17);
  Inverse17.input("x", TP::FLOAT, {2, 3, 4, 1});
  Inverse17.attr("axis", int64_t(1));
  Inverse17.attr("inverse", int64_t(1));
  expectNear(Input20.run({X, i64({1}, {})})[0], Inverse17.run({X})[0]);
  // DFT-17 has no axis input.
  OneNode Bad("DFT", 17);
  Bad.input("x", TP::FLOAT, {2, 3, 4, 1});
  Bad.input("", TP::INT64, {});
  Bad.init("axis", {1}, {});
  EXPECT_THROW(Bad.run({X}), Error);
}

// ReduceMax/ReduceMin-20 give the identity over no elements (-inf, +inf, the
// dtype's extremes); before, it is an error.
TEST(OpsetVersionsImport, ReduceMaxMinEmptySetFrom20) {
  auto Model = [](const char *Op, int64_t Opset, int32_t Type) {
    OneNode R(Op, Opset);
    R.input("x", Type, {2, 0});
    R.init("axes", {1}, {1});
    R.attr("keepdims", int64_t(0));
    return R;
  };
  Tensor Empty = Tensor::empty({2, 0}, DType::Float32);
  Tensor Y = Model("ReduceMax", 20, TP::FLOAT).run({Empty})[0];
  ASSERT_EQ(Y.shape(), (Shape{2}));
  EXPECT_EQ(Y.elementAsDouble(0), -INFINITY);
  EXPECT_EQ(
      Model("ReduceMin", 20, TP::FLOAT).run({Empty})[0].elementAsDouble(1),
      INFINITY);
  Tensor I = Tensor::empty({2, 0}, DType::Int32);
  EXPECT_EQ(Model("ReduceMin", 20, TP::INT32).run({I})[0].elementAsInt(0),
            std::numeric_limits<int32_t>::max());
  EXPECT_THROW(Model("ReduceMax", 18, TP::FLOAT).run({Empty}), Error);
}

// Pad-19 adds the 'wrap' mode.
TEST(OpsetVersionsImport, PadWrapFrom19) {
  auto Model = [](int64_t Opset) {
    OneNode P("Pad", Opset);
    P.input("x", TP::FLOAT, {3});
    P.init("pads", {2, 1}, {2});
    P.attr("mode", std::string("wrap"));
    return P;
  };
  // np.pad([0, 1, 2], (2, 1), 'wrap') = [1 2 0 1 2 0]
  EXPECT_EQ(Model(19).run({iotaF({3})})[0].toDoubleVector(),
            (std::vector<double>{1, 2, 0, 1, 2, 0}));
  EXPECT_THROW(Model(18).run({iotaF({3})}), Error);
}

// A computed pads input with constant axes and no constant_value (as
// CenterCropPad's function body writes it) pads with 0.
TEST(OpsetVersionsImport, PadComputedPadsWithAxesAndDefaultValue) {
  OneNode P("Pad", 18);
  P.input("x", TP::INT32, {2, 2});
  P.input("pads", TP::INT64, {2});
  P.input("", TP::FLOAT, {});
  P.init("axes", {-1}, {1});
  Tensor X = Tensor::fromVector<int32_t>({1, 2, 3, 4}, {2, 2});
  Tensor Y = P.run({X, i64({1, 0}, {2})})[0];
  EXPECT_EQ(Y.dtype(), DType::Int32);
  EXPECT_EQ(Y.toIntVector(), (Ints{0, 1, 2, 0, 3, 4}));
}

// GridSample-16 names the modes bilinear/bicubic, GridSample-20
// linear/cubic, and takes any number of spatial axes.
TEST(OpsetVersionsImport, GridSampleModeNames) {
  auto Model = [](int64_t Opset, const char *Mode, Ints X, Ints G) {
    OneNode S("GridSample", Opset);
    S.input("x", TP::FLOAT, X);
    S.input("grid", TP::FLOAT, G);
    S.attr("mode", std::string(Mode));
    S.attr("align_corners", int64_t(1));
    return S;
  };
  Tensor X = iotaF({1, 1, 2, 2});
  Tensor G = f32({-1, -1, 0.5f, 0.25f}, {1, 1, 2, 2});
  Tensor Y16 = Model(16, "bicubic", {1, 1, 2, 2}, {1, 1, 2, 2}).run({X, G})[0];
  expectNear(Model(20, "cubic", {1, 1, 2, 2}, {1, 1, 2, 2}).run({X, G})[0],
             Y16);
  EXPECT_THROW(Model(20, "bilinear", {1, 1, 2, 2}, {1, 1, 2, 2}).run({X, G}),
               Error);
  EXPECT_THROW(Model(16, "linear", {1, 1, 2, 2}, {1, 1, 2, 2}).run({X, G}),
               Error);
  // Volumetric: a depth of 1 at z = -1 samples the 2-D image.
  Tensor G3 = f32({-1, -1, -1, 0.5f, 0.25f, -1}, {1, 1, 2, 3});
  Tensor Y3 =
      Model(20, "linear", {1, 1, 1, 2, 2}, {1, 1, 1, 2, 3})
          .run({iotaF({1, 1, 1, 2, 2}), G3.reshape({1, 1, 1, 2, 3})})[0];
  Tensor Y2 = Model(16, "bilinear", {1, 1, 2, 2}, {1, 1, 2, 2}).run({X, G})[0];
  expectNear(Y3.reshape({1, 1, 1, 2}), Y2);
}

// Resize-18 reads antialias; before opset 18 there is no such attribute.
TEST(OpsetVersionsImport, ResizeAntialiasFrom18) {
  auto Model = [](int64_t Opset, bool Antialias) {
    OneNode R("Resize", Opset);
    R.input("x", TP::FLOAT, {1, 8});
    R.input("", TP::FLOAT, {});
    R.input("", TP::FLOAT, {});
    R.init("sizes", {1, 4}, {2});
    R.attr("mode", std::string("linear"));
    if (Antialias)
      R.attr("antialias", int64_t(1));
    return R;
  };
  Tensor X = iotaF({1, 8});
  // onnx.reference: [0.625, 2.5, 4.5, 6.375]; without antialias 0.5 + 2 i.
  expectNear(Model(18, true).run({X})[0],
             f32({0.625f, 2.5f, 4.5f, 6.375f}, {1, 4}));
  expectNear(Model(18, false).run({X})[0],
             f32({0.5f, 2.5f, 4.5f, 6.5f}, {1, 4}));
}

// CenterCropPad with a constant target and known extents (pad and slice)
// and with a computed one (the function body on run-time extents).
TEST(OpsetVersionsImport, CenterCropPadStaticAndDynamic) {
  Tensor X = iotaF({3, 5});
  // Rows padded 3 -> 4 (the extra row at the end), columns cropped 5 -> 2
  // starting at (5 - 2) / 2 = 1.
  Tensor Want = f32({1, 2, 6, 7, 11, 12, 0, 0}, {4, 2});
  OneNode Static("CenterCropPad", 18);
  Static.input("x", TP::FLOAT, {3, 5});
  Static.init("shape", {4, 2}, {2});
  expectNear(Static.run({X})[0], Want);
  OneNode Dynamic("CenterCropPad", 18);
  Dynamic.input("x", TP::FLOAT, {-1, -1});
  Dynamic.input("shape", TP::INT64, {2});
  expectNear(Dynamic.run({X, i64({4, 2}, {2})})[0], Want);
  OneNode Axes("CenterCropPad", 18);
  Axes.input("x", TP::FLOAT, {-1, -1});
  Axes.input("shape", TP::INT64, {1});
  Axes.attr("axes", Ints{-1});
  expectNear(Axes.run({X, i64({2}, {1})})[0],
             f32({1, 2, 6, 7, 11, 12}, {3, 2}));
}
