//===- indexing_relations_test.cc - Relations of the ONNX shape/index ops -===//
//
// Type relations of the indexing operators (gather/scatter, one_hot,
// compress, nonzero, reverse_sequence) and of the shape operators added for
// ONNX (squeeze, unsqueeze, flatten, expand, tile, pad, depth_to_space, the
// *_dyn variants, size, shape_of windows, constant_of_shape, eye_like,
// trilu): known dims are computed and checked, '?' and symbols propagate.
//
//===----------------------------------------------------------------------===//

#include "support/RelationTest.h"

using namespace rivet;
using namespace rivet::ir;
using namespace rivet::reltest;

namespace {

using Ints = std::vector<int64_t>;

} // namespace

TEST(IndexingRelations, EveryNewOperatorIsRegistered) {
  for (const char *Op : {"reshape_dyn",
                         "slice_dyn",
                         "split_dyn",
                         "squeeze",
                         "squeeze_dyn",
                         "unsqueeze",
                         "unsqueeze_dyn",
                         "flatten",
                         "expand",
                         "expand_dyn",
                         "tile",
                         "tile_dyn",
                         "pad",
                         "pad_dyn",
                         "depth_to_space",
                         "space_to_depth",
                         "size",
                         "constant_of_shape",
                         "eye_like",
                         "trilu",
                         "gather_elements",
                         "gather_nd",
                         "scatter_elements",
                         "scatter_nd",
                         "one_hot",
                         "one_hot_dyn",
                         "compress",
                         "nonzero",
                         "reverse_sequence"}) {
    const OpInfo *I = OpRegistry::global().find(Op);
    ASSERT_NE(I, nullptr) << Op;
    EXPECT_FALSE(I->description.empty()) << Op;
  }
  EXPECT_EQ(OpRegistry::global().get("expand").pattern,
            FusionPattern::Broadcast);
  EXPECT_EQ(OpRegistry::global().get("nonzero").pattern, FusionPattern::Opaque);
}

TEST(IndexingRelations, GatherScatter) {
  EXPECT_EQ(rel("gather_elements", {f32({c(3), s("n")}), i64({c(2), q()})},
                {{"axis", int64_t(1)}}),
            "Tensor[(2, ?), float32]");
  EXPECT_REL_ERROR(
      relError("gather_elements", {f32({c(3)}), i64({c(2), c(1)})}),
      "must have the rank of data");
  EXPECT_REL_ERROR(relError("gather_elements", {f32({c(3)}), i64({c(2)})},
                            {{"axis", int64_t(1)}}),
                   "out of range");
  EXPECT_EQ(rel("gather_nd", {f32({c(2), c(3), c(4)}), i64({s("k"), c(2)})}),
            "Tensor[(k, 4), float32]");
  EXPECT_EQ(rel("gather_nd", {f32({c(2), c(3), c(4)}), i64({q(), c(1)})},
                {{"batch_dims", int64_t(1)}}),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(rel("gather_nd", {f32({c(2)}), i64({c(2), q()})}),
            "Tensor[?, float32]");
  EXPECT_REL_ERROR(relError("gather_nd", {f32({c(2)}), i64({c(1), c(2)})}),
                   "must be in [1, 1]");
  EXPECT_EQ(rel("scatter_elements",
                {f32({c(3), q()}), i64({c(1), c(2)}), f32({c(1), c(2)})},
                {{"reduction", std::string("max")}}),
            "Tensor[(3, ?), float32]");
  EXPECT_REL_ERROR(
      relError("scatter_elements", {f32({c(3)}), i64({c(1)}), i64({c(1)})}),
      "dtypes differ");
  EXPECT_REL_ERROR(relError("scatter_elements",
                            {f32({c(3)}), i64({c(1)}), f32({c(1)})},
                            {{"reduction", std::string("sub")}}),
                   "reduction");
  EXPECT_EQ(rel("scatter_nd",
                {f32({c(4), c(5)}), i64({c(2), c(1)}), f32({c(2), c(5)})}),
            "Tensor[(4, 5), float32]");
  EXPECT_REL_ERROR(relError("scatter_nd", {f32({c(4), c(5)}), i64({c(2), c(1)}),
                                           f32({c(2)})}),
                   "must have rank 2");
}

TEST(IndexingRelations, OneHotCompressNonzeroReverse) {
  Type Vals = f32({c(2)});
  EXPECT_EQ(
      rel("one_hot", {i64({c(2), s("n")}), Vals}, {{"depth", int64_t(5)}}),
      "Tensor[(2, n, 5), float32]");
  EXPECT_EQ(rel("one_hot", {i64({c(2)}), Vals},
                {{"depth", int64_t(5)}, {"axis", int64_t(0)}}),
            "Tensor[(5, 2), float32]");
  EXPECT_EQ(rel("one_hot_dyn", {i64({c(2)}), i64({}), Vals}),
            "Tensor[(2, ?), float32]");
  EXPECT_REL_ERROR(
      relError("one_hot", {i64({c(2)}), f32({c(3)})}, {{"depth", int64_t(5)}}),
      "values must be [off, on]");
  EXPECT_EQ(
      rel("compress", {f32({c(3), c(4)}), b8({q()})}, {{"axis", int64_t(1)}}),
      "Tensor[(3, ?), float32]");
  EXPECT_EQ(rel("compress", {f32({c(3), c(4)}), b8({c(3)})}),
            "Tensor[(?,), float32]");
  EXPECT_REL_ERROR(relError("compress", {f32({c(3)}), i64({c(3)})}), "bool");
  EXPECT_EQ(rel("nonzero", {f32({c(3), q()})}), "Tensor[(2, ?), int64]");
  EXPECT_EQ(rel("nonzero", {unknown()}), "Tensor[(?, ?), int64]");
  EXPECT_EQ(rel("reverse_sequence", {f32({s("t"), c(4)}), i64({c(4)})}),
            "Tensor[(t, 4), float32]");
  EXPECT_REL_ERROR(
      relError("reverse_sequence", {f32({c(3), c(4)}), i64({c(3)})}),
      "one entry per batch");
}

TEST(IndexingRelations, ShapeOps) {
  EXPECT_EQ(
      rel("squeeze", {f32({c(1), s("n"), c(1)})}, {{"axes", Ints{0, -1}}}),
      "Tensor[(n,), float32]");
  EXPECT_EQ(rel("squeeze", {f32({c(1), c(3), c(1)})}), "Tensor[(3,), float32]");
  EXPECT_EQ(rel("squeeze", {f32({c(1), q()})}), "Tensor[?, float32]");
  EXPECT_REL_ERROR(relError("squeeze", {f32({c(2)})}, {{"axes", Ints{0}}}),
                   "cannot squeeze axis 0");
  EXPECT_EQ(rel("squeeze_dyn", {f32({c(1), c(3), c(1)}), i64({c(2)})}),
            "Tensor[(?,), float32]");
  EXPECT_EQ(rel("unsqueeze", {f32({s("n"), c(3)})}, {{"axes", Ints{0, -1}}}),
            "Tensor[(1, n, 3, 1), float32]");
  EXPECT_REL_ERROR(relError("unsqueeze", {f32({c(3)})}, {{"axes", Ints{2}}}),
                   "unsqueeze");
  EXPECT_EQ(rel("flatten", {f32({c(2), c(3), c(4)})}),
            "Tensor[(2, 12), float32]");
  EXPECT_EQ(
      rel("flatten", {f32({s("b"), c(3), c(4)})}, {{"axis", int64_t(-2)}}),
      "Tensor[(b, 12), float32]");
  EXPECT_EQ(rel("flatten", {f32({c(2), q()})}, {{"axis", int64_t(0)}}),
            "Tensor[(1, ?), float32]");
  EXPECT_EQ(rel("expand", {f32({c(3), c(1)})}, {{"shape", Ints{2, 1, 6}}}),
            "Tensor[(2, 3, 6), float32]");
  EXPECT_REL_ERROR(relError("expand", {f32({c(3)})}, {{"shape", Ints{2}}}),
                   "expand");
  EXPECT_EQ(rel("expand_dyn", {f32({c(3), c(1)}), i64({c(3)})}),
            "Tensor[(?, 3, ?), float32]");
  EXPECT_EQ(rel("tile", {f32({c(2), s("n")})}, {{"repeats", Ints{3, 1}}}),
            "Tensor[(6, n), float32]");
  EXPECT_REL_ERROR(relError("tile", {f32({c(2)})}, {{"repeats", Ints{3, 1}}}),
                   "has 2 entries");
  EXPECT_EQ(rel("pad", {f32({c(2), s("n")})}, {{"pads", Ints{1, 0, 2, 0}}}),
            "Tensor[(5, n), float32]");
  EXPECT_EQ(rel("pad", {f32({c(2), s("n")})},
                {{"pads", Ints{1, 1}}, {"axes", Ints{1}}}),
            "Tensor[(2, ?), float32]");
  EXPECT_REL_ERROR(
      relError("pad", {f32({c(2)})},
               {{"pads", Ints{1, 1}}, {"mode", std::string("torus")}}),
      "mode");
  EXPECT_EQ(rel("pad", {f32({c(2)})},
                {{"pads", Ints{1, 1}}, {"mode", std::string("wrap")}}),
            "Tensor[(4,), float32]");
  EXPECT_EQ(rel("pad_dyn", {f32({c(2), c(3)}), i64({c(4)}), f32({})}),
            "Tensor[(?, ?), float32]");
  EXPECT_REL_ERROR(relError("pad_dyn", {f32({c(2)}), i64({c(2)}), i64({})}),
                   "dtype");
  EXPECT_EQ(rel("depth_to_space", {f32({c(1), c(8), c(2), s("w")})},
                {{"blocksize", int64_t(2)}}),
            "Tensor[(1, 2, 4, ?), float32]");
  EXPECT_EQ(rel("space_to_depth", {f32({c(1), c(3), c(4), c(6)})},
                {{"blocksize", int64_t(2)}}),
            "Tensor[(1, 12, 2, 3), float32]");
  EXPECT_REL_ERROR(relError("depth_to_space", {f32({c(1), c(6), c(2), c(2)})},
                            {{"blocksize", int64_t(2)}}),
                   "not divisible by 4");
  EXPECT_EQ(rel("reshape_dyn", {f32({c(6)}), i64({c(2)})}),
            "Tensor[(?, ?), float32]");
  EXPECT_EQ(rel("reshape_dyn", {f32({c(6)}), i64({q()})}),
            "Tensor[?, float32]");
  EXPECT_REL_ERROR(relError("reshape_dyn", {f32({c(6)}), f32({c(2)})}), "int");
  EXPECT_EQ(rel("slice_dyn", {f32({c(6), s("n")}), i64({c(1)}), i64({c(1)})}),
            "Tensor[(?, ?), float32]");
  EXPECT_EQ(rel("split_dyn", {f32({c(6), c(2)}), i64({c(2)})},
                {{"num_outputs", int64_t(2)}}),
            "(Tensor[(?, 2), float32], Tensor[(?, 2), float32])");
  EXPECT_EQ(rel("squeeze", {incompleteType()}), "null");
}

TEST(IndexingRelations, CreationOps) {
  EXPECT_EQ(rel("size", {f32({s("n"), c(3)})}), "Tensor[(), int64]");
  EXPECT_EQ(rel("shape_of", {f32({c(2), c(3), c(4)})},
                {{"start", int64_t(-2)}, {"end", int64_t(10)}}),
            "Tensor[(2,), int64]");
  EXPECT_EQ(rel("shape_of", {f32({c(2), c(3), c(4)})},
                {{"start", int64_t(2)}, {"end", int64_t(1)}}),
            "Tensor[(0,), int64]");
  EXPECT_EQ(rel("constant_of_shape", {i64({c(3)})},
                {{"value", Tensor::scalar<int32_t>(1)}}),
            "Tensor[(?, ?, ?), int32]");
  EXPECT_EQ(rel("constant_of_shape", {i64({q()})}), "Tensor[?, float32]");
  EXPECT_REL_ERROR(relError("constant_of_shape", {f32({c(3)})}), "int");
  EXPECT_EQ(rel("eye_like", {i64({c(2), s("n")})},
                {{"dtype", std::string("float32")}}),
            "Tensor[(2, n), float32]");
  EXPECT_REL_ERROR(relError("eye_like", {f32({c(2)})}), "must be 2-D");
  EXPECT_EQ(
      rel("trilu", {f32({c(2), c(3), c(3)}), i64({})}, {{"upper", int64_t(0)}}),
      "Tensor[(2, 3, 3), float32]");
  EXPECT_REL_ERROR(relError("trilu", {f32({c(3)})}), "rank >= 2");
  EXPECT_REL_ERROR(
      relError("trilu", {f32({c(3), c(3)})}, {{"upper", int64_t(2)}}),
      "must be 0 or 1");
}
