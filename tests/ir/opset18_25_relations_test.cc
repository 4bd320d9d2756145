//===- opset18_25_relations_test.cc - Relations of the opset 18-25 ops ----===//
//
// bitwise_*, rms_norm, group_norm, rotary_embedding, tensor_scatter and the
// random operators (ONNX opsets 18 to 25).
//
//===----------------------------------------------------------------------===//

#include "support/RelationTest.h"

using namespace rivet;
using namespace rivet::ir;
using namespace rivet::reltest;

namespace {

Attrs attrs(std::initializer_list<std::pair<const std::string, int64_t>> L) {
  Attrs A;
  for (auto &[K, V] : L)
    A.set(K, V);
  return A;
}

} // namespace

TEST(Opset18To25Relations, BitwiseTakeIntegersOnly) {
  EXPECT_EQ(rel("bitwise_and", {i32({c(2), c(3)}), i32({c(3)})}),
            "Tensor[(2, 3), int32]");
  EXPECT_EQ(rel("bitwise_xor", {u8({s("n"), c(1)}), u8({c(4)})}),
            "Tensor[(n, 4), uint8]");
  EXPECT_EQ(rel("bitwise_not", {i64({s("n")})}), "Tensor[(n,), int64]");
  EXPECT_REL_ERROR(relError("bitwise_or", {f32({c(2)}), f32({c(2)})}),
                   "integer");
  EXPECT_REL_ERROR(relError("bitwise_not", {b8({c(2)})}), "integer");
  EXPECT_REL_ERROR(relError("bitwise_and", {i32({c(2)}), i64({c(2)})}),
                   "dtype");
  EXPECT_NE(OpRegistry::global().get("bitwise_and").keepsZero, nullptr);
  EXPECT_EQ(OpRegistry::global().get("bitwise_not").keepsZero, nullptr);
}

TEST(Opset18To25Relations, RmsNormScaleBroadcastsToX) {
  EXPECT_EQ(rel("rms_norm", {f32({s("n"), c(3), c(4)}), f32({c(4)})}),
            "Tensor[(n, 3, 4), float32]");
  // The scale may span axes before axis (unidirectional broadcasting).
  EXPECT_EQ(rel("rms_norm", {f32({c(2), c(3), c(4)}), f32({c(3), c(1)})}),
            "Tensor[(2, 3, 4), float32]");
  // Another float dtype for the scale (ONNX's V).
  EXPECT_EQ(rel("rms_norm", {f16({c(2), c(4)}), f32({c(4)})}),
            "Tensor[(2, 4), float16]");
  EXPECT_REL_ERROR(relError("rms_norm", {f32({c(2), c(4)}), f32({c(5)})}),
                   "does not broadcast");
  EXPECT_REL_ERROR(relError("rms_norm", {f32({c(4)}), f32({c(2), c(4)})}),
                   "does not broadcast");
  EXPECT_REL_ERROR(relError("rms_norm", {f32({c(2), c(4)}), f32({c(4)})},
                            attrs({{"axis", 2}})),
                   "axis");
  EXPECT_REL_ERROR(relError("rms_norm", {f32({c(2), c(4)}), f32({c(4)})},
                            attrs({{"stash_type", 7}})),
                   "stash_type");
  EXPECT_REL_ERROR(relError("rms_norm", {i32({c(4)}), f32({c(4)})}), "float");
}

// GroupNormalization-21 has per-channel scale and bias, -18 per-group ones
// (per_group=1).
TEST(Opset18To25Relations, GroupNormPerChannelOrPerGroup) {
  Type X = f32({s("n"), c(4), c(3), c(3)});
  EXPECT_EQ(rel("group_norm", {X, f32({c(4)}), f32({c(4)})},
                attrs({{"num_groups", 2}})),
            "Tensor[(n, 4, 3, 3), float32]");
  EXPECT_EQ(rel("group_norm", {X, f32({c(2)}), f32({c(2)})},
                attrs({{"num_groups", 2}, {"per_group", 1}})),
            "Tensor[(n, 4, 3, 3), float32]");
  EXPECT_REL_ERROR(relError("group_norm", {X, f32({c(2)}), f32({c(2)})},
                            attrs({{"num_groups", 2}})),
                   "one per channel");
  EXPECT_REL_ERROR(relError("group_norm", {X, f32({c(4)}), f32({c(4)})},
                            attrs({{"num_groups", 2}, {"per_group", 1}})),
                   "one per group");
  EXPECT_REL_ERROR(relError("group_norm", {X, f32({c(4)}), f32({c(4)})},
                            attrs({{"num_groups", 3}})),
                   "does not divide");
  EXPECT_REL_ERROR(relError("group_norm", {X, f16({c(4)}), f16({c(4)})},
                            attrs({{"num_groups", 2}})),
                   "dtype");
  EXPECT_REL_ERROR(
      relError("group_norm", {X, f32({c(4)}), f32({c(4)})}, Attrs{}),
      "num_groups");
}

TEST(Opset18To25Relations, RotaryEmbeddingShapes) {
  Type X4 = f32({c(2), c(4), s("s"), c(8)});
  Type Pos = i64({c(2), s("s")});
  EXPECT_EQ(rel("rotary_embedding",
                {X4, f32({c(50), c(4)}), f32({c(50), c(4)}), Pos}),
            "Tensor[(2, 4, s, 8), float32]");
  // Partial rotation: caches of rotary_embedding_dim / 2.
  EXPECT_EQ(rel("rotary_embedding",
                {X4, f32({c(50), c(2)}), f32({c(50), c(2)}), Pos},
                attrs({{"rotary_embedding_dim", 4}, {"interleaved", 1}})),
            "Tensor[(2, 4, s, 8), float32]");
  // Without position ids the caches are [B, S, rot / 2].
  EXPECT_EQ(rel("rotary_embedding",
                {X4, f32({c(2), s("s"), c(4)}), f32({c(2), s("s"), c(4)})}),
            "Tensor[(2, 4, s, 8), float32]");
  // 3-D: [B, S, num_heads * head_size].
  EXPECT_EQ(rel("rotary_embedding",
                {f32({c(2), c(3), c(32)}), f32({c(50), c(4)}),
                 f32({c(50), c(4)}), i64({c(2), c(3)})},
                attrs({{"num_heads", 4}})),
            "Tensor[(2, 3, 32), float32]");
  EXPECT_REL_ERROR(relError("rotary_embedding",
                            {f32({c(2), c(3), c(32)}), f32({c(50), c(4)}),
                             f32({c(50), c(4)}), i64({c(2), c(3)})}),
                   "num_heads");
  EXPECT_REL_ERROR(relError("rotary_embedding",
                            {X4, f32({c(50), c(3)}), f32({c(50), c(3)}), Pos}),
                   "rotary_embedding_dim / 2");
  EXPECT_REL_ERROR(
      relError("rotary_embedding",
               {X4, f32({c(50), c(4)}), f32({c(50), c(4)}), i32({c(2), c(3)})}),
      "int64");
  EXPECT_REL_ERROR(relError("rotary_embedding",
                            {X4, f32({c(50), c(8)}), f32({c(50), c(8)}), Pos},
                            attrs({{"rotary_embedding_dim", 16}})),
                   "does not fit");
}

TEST(Opset18To25Relations, TensorScatterKeepsTheCacheType) {
  Type Past = f32({c(2), c(1), c(4), c(5)});
  EXPECT_EQ(rel("tensor_scatter",
                {Past, f32({c(2), c(1), s("l"), c(5)}), i64({c(2)})}),
            "Tensor[(2, 1, 4, 5), float32]");
  EXPECT_EQ(rel("tensor_scatter", {i8({c(3), c(4)}), i8({c(3), c(2)})},
                attrs({{"axis", 1}})),
            "Tensor[(3, 4), int8]");
  EXPECT_REL_ERROR(
      relError("tensor_scatter", {Past, f32({c(2), c(1), c(5), c(5)})}),
      "must not be longer");
  EXPECT_REL_ERROR(
      relError("tensor_scatter", {Past, f32({c(2), c(2), c(1), c(5)})}),
      "must match");
  EXPECT_REL_ERROR(relError("tensor_scatter",
                            {Past, f32({c(2), c(1), c(1), c(5)}), i64({c(3)})}),
                   "write_indices");
  EXPECT_REL_ERROR(relError("tensor_scatter",
                            {Past, f32({c(2), c(1), c(4), c(5)})},
                            attrs({{"axis", 0}})),
                   "batch axis");
  Attrs Mode;
  Mode.set("mode", std::string("ring"));
  EXPECT_REL_ERROR(
      relError("tensor_scatter", {Past, f32({c(2), c(1), c(1), c(5)})}, Mode),
      "mode");
}

TEST(Opset18To25Relations, RandomOperatorsAreRunTimeOnlyFloats) {
  Attrs Shape;
  Shape.set("shape", std::vector<int64_t>{2, 3});
  EXPECT_EQ(rel("random_uniform", {}, Shape), "Tensor[(2, 3), float32]");
  Shape.set("dtype", std::string("float64"));
  EXPECT_EQ(rel("random_normal", {}, Shape), "Tensor[(2, 3), float64]");
  Shape.set("dtype", std::string("int32"));
  EXPECT_REL_ERROR(relError("random_normal", {}, Shape), "float dtype");
  EXPECT_EQ(rel("random_uniform_like", {f16({s("n")})}),
            "Tensor[(n,), float16]");
  EXPECT_REL_ERROR(relError("random_normal_like", {i32({c(2)})}),
                   "float dtype");
  Attrs To;
  To.set("dtype", std::string("float64"));
  EXPECT_EQ(rel("random_uniform_like", {i32({c(2)})}, To),
            "Tensor[(2,), float64]");
  for (const char *Op : {"random_uniform", "random_normal",
                         "random_uniform_like", "random_normal_like"})
    EXPECT_TRUE(OpRegistry::global().get(Op).runTimeOnly) << Op;
}
