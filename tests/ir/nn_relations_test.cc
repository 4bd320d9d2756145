//===- nn_relations_test.cc - Relations of the NN/linalg/quantize ops
//------===//

#include "support/RelationTest.h"

using namespace rivet;
using namespace rivet::ir;
using namespace rivet::reltest;

namespace {

Attrs window(std::vector<int64_t> Strides, std::vector<int64_t> Pads) {
  Attrs A;
  A.set("strides", Strides);
  A.set("pads", Pads);
  return A;
}

} // namespace

TEST(NNRelations, EveryOperatorIsRegisteredWithADescription) {
  for (const char *Op : {"conv",
                         "conv_integer",
                         "qlinear_conv",
                         "conv_transpose",
                         "max_pool",
                         "avg_pool",
                         "lp_pool",
                         "global_avg_pool",
                         "global_max_pool",
                         "max_unpool",
                         "max_unpool_to_shape",
                         "batch_norm",
                         "instance_norm",
                         "layer_norm",
                         "lrn",
                         "mean_variance_norm",
                         "gemm",
                         "matmul_integer",
                         "qlinear_matmul",
                         "quantize_linear",
                         "dequantize_linear",
                         "dynamic_quantize_linear"}) {
    const OpInfo *I = OpRegistry::global().find(Op);
    ASSERT_NE(I, nullptr) << Op;
    EXPECT_NE(I->relation, nullptr) << Op;
    EXPECT_FALSE(I->description.empty()) << Op;
  }
}

TEST(NNRelations, ConvShapes) {
  Type X = f32({s("n"), c(3), c(224), q()});
  Type W = f32({c(64), c(3), c(7), c(7)});
  EXPECT_EQ(rel("conv", {X, W}, window({2, 2}, {3, 3, 3, 3})),
            "Tensor[(n, 64, 112, ?), float32]");
  EXPECT_EQ(rel("conv", {X, W, f32({c(64)})}),
            "Tensor[(n, 64, 218, ?), float32]");
  Attrs Same;
  Same.set("auto_pad", std::string("SAME_UPPER"));
  Same.set("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(rel("conv", {f32({c(1), c(3), c(5), c(6)}), W}, Same),
            "Tensor[(1, 64, 3, 3), float32]");
  // Unknown ranks: the weight's rank decides; both unknown: unknown rank.
  EXPECT_EQ(rel("conv", {tensorTypeUnknownRank(DType::Float32), W}),
            "Tensor[(?, 64, ?, ?), float32]");
  EXPECT_EQ(rel("conv", {tensorTypeUnknownRank(DType::Float32),
                         tensorTypeUnknownRank(DType::Float32)}),
            "Tensor[?, float32]");
  // Grouped 1-D.
  Attrs G;
  G.set("group", int64_t(2));
  EXPECT_EQ(rel("conv", {f32({c(1), c(4), c(10)}), f32({c(6), c(2), c(3)})}, G),
            "Tensor[(1, 6, 8), float32]");
  EXPECT_EQ(rel("conv", {incompleteType(), W}), "null");
  EXPECT_EQ(rel("conv_integer",
                {u8({c(1), c(1), c(3), c(3)}), u8({c(1), c(1), c(2), c(2)})}),
            "Tensor[(1, 1, 2, 2), int32]");
}

TEST(NNRelations, ConvErrors) {
  Type X = f32({c(1), c(3), c(8), c(8)});
  EXPECT_REL_ERROR(
      relError("conv", {X, f32({c(4), c(2), c(3), c(3)})}),
      "conv: the weight Tensor[(4, 2, 3, 3), float32] expects 2 input "
      "channels, the input Tensor[(1, 3, 8, 8), float32] has 3");
  EXPECT_REL_ERROR(
      relError("conv", {f32({c(1), c(3)}), f32({c(4), c(3), c(3)})}),
      "conv: the input must have rank >= 3");
  EXPECT_REL_ERROR(
      relError("conv", {X, f32({c(4), c(3), c(3), c(3)}), f32({c(5)})}),
      "conv: the bias must have shape (4,)");
  EXPECT_REL_ERROR(
      relError("conv", {X, f32({c(4), c(3), c(9), c(3)})}),
      "conv: the window (9 with dilation 1) is larger than the padded input");
  EXPECT_REL_ERROR(relError("conv", {X, f32({c(4), c(3), c(3), c(3)})},
                            window({1}, {0, 0, 0, 0})),
                   "conv: attribute 'strides' must have 2 entries");
  Attrs Bad;
  Bad.set("auto_pad", std::string("SAME"));
  EXPECT_REL_ERROR(relError("conv", {X, f32({c(4), c(3), c(3), c(3)})}, Bad),
                   "conv: unknown auto_pad 'SAME'");
  Attrs Unknown;
  Unknown.set("padding", int64_t(1));
  EXPECT_REL_ERROR(
      relError("conv", {X, f32({c(4), c(3), c(3), c(3)})}, Unknown),
      "conv: unknown attribute 'padding'");
  EXPECT_REL_ERROR(
      relError("conv", {tensorType({c(1), c(3), c(8)}, DType::Int32),
                        tensorType({c(1), c(3), c(3)}, DType::Int32)}),
      "conv");
}

TEST(NNRelations, ConvTranspose) {
  Type X = f32({c(1), c(1), c(3), s("w")});
  Type W = f32({c(1), c(2), c(3), c(3)});
  EXPECT_EQ(rel("conv_transpose", {X, W}), "Tensor[(1, 2, 5, ?), float32]");
  EXPECT_EQ(rel("conv_transpose", {X, W}, window({3, 2}, {1, 0, 1, 0})),
            "Tensor[(1, 2, 7, ?), float32]");
  Attrs OS;
  OS.set("output_shape", std::vector<int64_t>{10, 8});
  EXPECT_EQ(rel("conv_transpose", {X, W}, OS),
            "Tensor[(1, 2, 10, 8), float32]");
  EXPECT_REL_ERROR(
      relError("conv_transpose", {X, f32({c(2), c(2), c(3), c(3)})}),
      "conv_transpose: the weight");
}

TEST(NNRelations, Pools) {
  Type X = f32({c(1), c(3), c(32), q()});
  Attrs A;
  A.set("kernel_shape", std::vector<int64_t>{3, 3});
  A.set("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(rel("max_pool", {X}, A), "Tensor[(1, 3, 15, ?), float32]");
  A.set("ceil_mode", int64_t(1));
  EXPECT_EQ(rel("avg_pool", {X}, A), "Tensor[(1, 3, 16, ?), float32]");
  A.set("with_indices", int64_t(1));
  EXPECT_EQ(rel("max_pool", {X}, A),
            "(Tensor[(1, 3, 16, ?), float32], Tensor[(1, 3, 16, ?), int64])");
  EXPECT_EQ(rel("global_avg_pool", {X}), "Tensor[(1, 3, 1, 1), float32]");
  EXPECT_EQ(rel("max_pool", {u8({c(1), c(1), c(4)})},
                [] {
                  Attrs K;
                  K.set("kernel_shape", std::vector<int64_t>{2});
                  return K;
                }()),
            "Tensor[(1, 1, 3), uint8]");
  Attrs NoKernel;
  EXPECT_REL_ERROR(relError("max_pool", {X}, NoKernel),
                   "max_pool: attribute 'kernel_shape' is required");
  Attrs K1;
  K1.set("kernel_shape", std::vector<int64_t>{2});
  EXPECT_REL_ERROR(
      relError("avg_pool", {X}, K1),
      "avg_pool: attribute 'kernel_shape' has 1 entries but the input");
  EXPECT_REL_ERROR(relError("avg_pool", {u8({c(1), c(1), c(4)})}, K1),
                   "avg_pool");
  Attrs U;
  U.set("kernel_shape", std::vector<int64_t>{2, 2});
  U.set("strides", std::vector<int64_t>{2, 2});
  EXPECT_EQ(rel("max_unpool",
                {f32({c(1), c(1), c(2), c(2)}), i64({c(1), c(1), c(2), c(2)})},
                U),
            "Tensor[(1, 1, 4, 4), float32]");
  EXPECT_EQ(rel("max_unpool_to_shape",
                {f32({c(1), c(1), c(2), c(2)}), i64({c(1), c(1), c(2), c(2)}),
                 i64({c(4)})},
                U),
            "Tensor[(1, 1, ?, ?), float32]");
}

TEST(NNRelations, Normalizations) {
  Type X = f32({s("n"), c(4), q()});
  Type P = f32({c(4)});
  EXPECT_EQ(rel("batch_norm", {X, P, P, P, P}), "Tensor[(n, 4, ?), float32]");
  Attrs T;
  T.set("training", int64_t(1));
  EXPECT_EQ(rel("batch_norm", {X, P, P, P, P}, T),
            "(Tensor[(n, 4, ?), float32], Tensor[(4,), float32], Tensor[(4,), "
            "float32])");
  EXPECT_REL_ERROR(relError("batch_norm", {X, f32({c(3)}), P, P, P}),
                   "batch_norm: expected a vector of the 4 channels");
  EXPECT_EQ(rel("instance_norm", {X, P, P}), "Tensor[(n, 4, ?), float32]");
  Attrs L;
  L.set("axis", int64_t(1));
  L.set("with_stats", int64_t(1));
  EXPECT_EQ(rel("layer_norm", {X, f32({c(4), c(1)})}, L),
            "(Tensor[(n, 4, ?), float32], Tensor[(n, 1, 1), float32], "
            "Tensor[(n, 1, 1), float32])");
  EXPECT_EQ(rel("layer_norm", {X, f32({c(1)}), f32({q()})}),
            "Tensor[(n, 4, ?), float32]");
  EXPECT_REL_ERROR(relError("layer_norm", {X, f32({c(3), c(1)})}, L),
                   "layer_norm: Tensor[(3, 1), float32] does not broadcast");
  Attrs Size;
  Size.set("size", int64_t(3));
  EXPECT_EQ(rel("lrn", {X}, Size), "Tensor[(n, 4, ?), float32]");
  EXPECT_REL_ERROR(relError("lrn", {X}), "lrn: attribute 'size' is required");
  EXPECT_EQ(rel("mean_variance_norm", {f32({c(1), c(2), c(3), c(4)})}),
            "Tensor[(1, 2, 3, 4), float32]");
}

TEST(NNRelations, GemmAndIntegerMatmuls) {
  Attrs T;
  T.set("trans_a", int64_t(1));
  EXPECT_EQ(
      rel("gemm", {f32({c(3), s("m")}), f32({c(3), c(5)}), f32({c(5)})}, T),
      "Tensor[(m, 5), float32]");
  EXPECT_EQ(rel("gemm", {f32({c(2), c(3)}), f32({c(3), q()})}),
            "Tensor[(2, ?), float32]");
  EXPECT_REL_ERROR(relError("gemm", {f32({c(2), c(3)}), f32({c(2), c(5)})}),
                   "gemm: inner dimensions differ");
  EXPECT_REL_ERROR(
      relError("gemm", {f32({c(2), c(3)}), f32({c(3), c(5)}), f32({c(3)})}),
      "gemm: Tensor[(3,), float32] cannot be broadcast to the result (2, 5)");
  EXPECT_EQ(rel("matmul_integer", {u8({c(2), c(3)}), i8({c(3), c(4)})}),
            "Tensor[(2, 4), int32]");
  EXPECT_EQ(rel("qlinear_matmul",
                {u8({c(2), c(3)}), f32({}), u8({}), i8({c(3), c(4)}), f32({}),
                 i8({}), f32({}), i8({})}),
            "Tensor[(2, 4), int8]");
  EXPECT_REL_ERROR(
      relError("matmul_integer", {f32({c(2), c(3)}), u8({c(3), c(4)})}),
      "matmul_integer: argument must be uint8 or int8");
}

TEST(NNRelations, Quantize) {
  Type X = f32({c(2), c(3), q()});
  EXPECT_EQ(rel("quantize_linear", {X, f32({})}), "Tensor[(2, 3, ?), uint8]");
  EXPECT_EQ(rel("quantize_linear", {X, f32({c(3)}), i8({c(3)})}),
            "Tensor[(2, 3, ?), int8]");
  EXPECT_REL_ERROR(
      relError("quantize_linear", {X, f32({c(4)})}),
      "quantize_linear: the scale Tensor[(4,), float32] does not match axis 1");
  EXPECT_EQ(rel("dequantize_linear", {u8({c(2)}), f32({}), u8({})}),
            "Tensor[(2,), float32]");
  EXPECT_REL_ERROR(
      relError("dequantize_linear", {X, f32({})}),
      "dequantize_linear: cannot dequantize Tensor[(2, 3, ?), float32]");
  EXPECT_EQ(
      rel("dynamic_quantize_linear", {X}),
      "(Tensor[(2, 3, ?), uint8], Tensor[(), float32], Tensor[(), uint8])");
}
