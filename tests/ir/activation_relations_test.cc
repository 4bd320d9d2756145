//===- activation_relations_test.cc - Relations of activations and the ----===//
//===- extended elementwise operators -------------------------------------===//

#include "support/RelationTest.h"

using namespace rivet;
using namespace rivet::ir;
using namespace rivet::reltest;

TEST(ActivationRelations, Registered) {
  for (const char *Op : {"elu",
                         "selu",
                         "celu",
                         "leaky_relu",
                         "hard_sigmoid",
                         "hard_swish",
                         "thresholded_relu",
                         "shrink",
                         "softplus",
                         "softsign",
                         "clip",
                         "prelu",
                         "dropout",
                         "ceil",
                         "floor",
                         "round",
                         "reciprocal",
                         "erf",
                         "sin",
                         "cos",
                         "tan",
                         "asin",
                         "acos",
                         "atan",
                         "sinh",
                         "cosh",
                         "asinh",
                         "acosh",
                         "atanh",
                         "sign",
                         "isnan",
                         "isinf",
                         "mod",
                         "left_shift",
                         "right_shift",
                         "cast_like",
                         "legacy_broadcast",
                         "full_like"}) {
    const OpInfo *I = OpRegistry::global().find(Op);
    ASSERT_NE(I, nullptr) << Op;
    EXPECT_NE(I->relation, nullptr) << Op;
    EXPECT_FALSE(I->description.empty()) << Op;
  }
}

TEST(ActivationRelations, UnaryKeepPartialShapes) {
  EXPECT_EQ(rel("elu", {f32({s("n"), q(), c(3)})}, Attrs{{"alpha", 0.5}}),
            "Tensor[(n, ?, 3), float32]");
  EXPECT_EQ(rel("softplus", {tensorTypeUnknownRank(DType::Float64)}),
            "Tensor[?, float64]");
  EXPECT_EQ(rel("clip", {i64({c(2)})}, Attrs{{"min", 0.0}}),
            "Tensor[(2,), int64]");
  EXPECT_EQ(rel("shrink", {i32({q()})}), "Tensor[(?,), int32]");
  EXPECT_EQ(rel("hard_sigmoid", {incompleteType()}), "null");
  EXPECT_EQ(rel("sin", {f16({c(4)})}), "Tensor[(4,), float16]");
  EXPECT_EQ(rel("sign", {i32({c(4)})}), "Tensor[(4,), int32]");
  EXPECT_EQ(rel("isnan", {f32({s("n")})}), "Tensor[(n,), bool]");
  EXPECT_EQ(rel("isinf", {f32({c(2)})}, Attrs{{"detect_negative", int64_t(0)}}),
            "Tensor[(2,), bool]");
}

TEST(ActivationRelations, UnaryErrors) {
  EXPECT_REL_ERROR(relError("elu", {i64({c(2)})}),
                   "elu: expects a float tensor");
  EXPECT_REL_ERROR(relError("clip", {b8({c(2)})}),
                   "clip: expects a numeric tensor");
  EXPECT_REL_ERROR(relError("selu", {f32({})}, Attrs{{"beta", 1.0}}), "selu");
  EXPECT_REL_ERROR(
      relError("leaky_relu", {f32({})}, Attrs{{"alpha", std::string("x")}}),
      "alpha");
  EXPECT_REL_ERROR(relError("round", {i64({c(1)})}),
                   "round: expects a float tensor");
  EXPECT_REL_ERROR(relError("isinf", {f32({})}, Attrs{{"detect", int64_t(1)}}),
                   "detect");
}

TEST(ActivationRelations, PRelu) {
  EXPECT_EQ(rel("prelu", {f32({c(2), c(3), c(4)}), f32({c(3), c(1)})}),
            "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(rel("prelu", {f32({s("n"), q()}), f32({c(1)})}),
            "Tensor[(n, ?), float32]");
  EXPECT_REL_ERROR(relError("prelu", {f32({c(2), c(3)}), f32({c(4)})}),
                   "prelu");
  EXPECT_REL_ERROR(relError("prelu", {f32({c(3)}), f32({c(2), c(3)})}),
                   "prelu: slope Tensor[(2, 3), float32] has a higher rank");
  EXPECT_REL_ERROR(relError("prelu", {f32({c(1), c(3)}), f32({c(2), c(3)})}),
                   "does not broadcast to x");
  EXPECT_REL_ERROR(relError("prelu", {f32({c(3)}), i64({c(3)})}), "prelu");
}

TEST(ActivationRelations, Dropout) {
  EXPECT_EQ(rel("dropout", {f32({s("n"), c(3)}), f32({}), b8({})}),
            "(Tensor[(n, 3), float32], Tensor[(n, 3), bool])");
  EXPECT_REL_ERROR(relError("dropout", {f32({c(3)}), f32({c(2)}), b8({})}),
                   "dropout: expects a scalar");
  EXPECT_REL_ERROR(relError("dropout", {f32({c(3)}), f32({}), f32({})}),
                   "dropout: expects a bool tensor");
}

TEST(ElementwiseExtRelations, BinaryOps) {
  EXPECT_EQ(
      rel("mod", {i64({c(2), c(1)}), i64({c(3)})}, Attrs{{"fmod", int64_t(1)}}),
      "Tensor[(2, 3), int64]");
  EXPECT_REL_ERROR(relError("mod", {i64({c(2)}), i32({c(2)})}), "mod");
  EXPECT_REL_ERROR(relError("mod", {b8({c(2)}), b8({c(2)})}),
                   "mod: expects a numeric tensor");
  EXPECT_EQ(rel("left_shift", {u8({s("n")}), u8({c(1)})}),
            "Tensor[(n,), uint8]");
  EXPECT_REL_ERROR(relError("right_shift", {f32({c(1)}), f32({c(1)})}),
                   "right_shift: expects an integer tensor");
  // pow: exponent of another numeric dtype, result in the base's.
  EXPECT_EQ(rel("pow", {i32({c(3)}), f32({c(2), c(1)})}),
            "Tensor[(2, 3), int32]");
  EXPECT_EQ(rel("pow", {f32({q()}), i64({})}), "Tensor[(?,), float32]");
  EXPECT_REL_ERROR(relError("pow", {f32({c(2)}), b8({c(2)})}),
                   "pow: expects a numeric tensor");
  EXPECT_REL_ERROR(relError("pow", {f32({c(2)}), f32({c(3)})}), "pow");
}

TEST(ElementwiseExtRelations, CastLikeLegacyBroadcastFullLike) {
  EXPECT_EQ(rel("cast_like", {f32({s("n")}), i64({c(7)})}),
            "Tensor[(n,), int64]");
  EXPECT_EQ(rel("legacy_broadcast", {f32({c(3)}), f32({c(2), c(3), q()})},
                Attrs{{"axis", int64_t(1)}}),
            "Tensor[(1, 3, 1), float32]");
  EXPECT_EQ(rel("legacy_broadcast",
                {f32({s("k"), c(4)}), f32({c(2), q(), q()})},
                Attrs{{"axis", int64_t(-2)}}),
            "Tensor[(1, k, 4), float32]");
  EXPECT_EQ(rel("legacy_broadcast",
                {f32({c(3)}), tensorTypeUnknownRank(DType::Float32)},
                Attrs{{"axis", int64_t(1)}}),
            "Tensor[?, float32]");
  EXPECT_REL_ERROR(relError("legacy_broadcast",
                            {f32({c(3), c(2)}), f32({c(2), c(3)})},
                            Attrs{{"axis", int64_t(1)}}),
                   "legacy_broadcast: axis 1 does not fit");
  EXPECT_REL_ERROR(relError("legacy_broadcast", {f32({c(3)}), f32({c(3)})}),
                   "axis");
  EXPECT_EQ(rel("full_like", {f32({s("n"), c(2)})},
                Attrs{{"value", 1.0}, {"dtype", std::string("bool")}}),
            "Tensor[(n, 2), bool]");
  EXPECT_EQ(rel("full_like", {i32({c(2)})}, Attrs{{"value", 0.0}}),
            "Tensor[(2,), int32]");
  EXPECT_REL_ERROR(relError("full_like", {i32({c(2)})}), "value");
}
