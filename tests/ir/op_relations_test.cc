//===- op_relations_test.cc - Type relations of the operators -------------===//

#include "support/RelationTest.h"

#include <limits>

using namespace rivet;
using namespace rivet::ir;
using namespace rivet::reltest;

namespace {

TEST(OpRelations, EveryOperatorOfTheTableIsRegistered) {
  const char *Ops[] = {
      "add",           "subtract",    "multiply",      "divide",
      "pow",           "maximum",     "minimum",       "negative",
      "abs",           "relu",        "exp",           "log",
      "tanh",          "sigmoid",     "sqrt",          "equal",
      "not_equal",     "less",        "less_equal",    "greater",
      "greater_equal", "logical_and", "logical_or",    "logical_xor",
      "logical_not",   "where",       "cast",          "dense",
      "matmul",        "reshape",     "transpose",     "concatenate",
      "stack",         "split",       "strided_slice", "take",
      "sum",           "mean",        "max",           "min",
      "argmax",        "argmin",      "softmax",       "shape_of",
      "zeros",         "ones",        "full",          "arange"};
  for (const char *Op : Ops) {
    const OpInfo *I = OpRegistry::global().find(Op);
    ASSERT_NE(I, nullptr) << Op;
    EXPECT_NE(I->relation, nullptr) << Op;
    EXPECT_FALSE(I->description.empty()) << Op;
  }
  EXPECT_EQ(OpRegistry::global().get("add").numInputs, 2);
  EXPECT_EQ(OpRegistry::global().get("concatenate").numInputs, -1);
  EXPECT_EQ(OpRegistry::global().get("zeros").numInputs, 0);
  EXPECT_EQ(OpRegistry::global().get("add").pattern, FusionPattern::Broadcast);
  EXPECT_EQ(OpRegistry::global().get("exp").pattern,
            FusionPattern::Elementwise);
  EXPECT_EQ(OpRegistry::global().get("dense").pattern,
            FusionPattern::OutElementwiseFusable);
  EXPECT_EQ(OpRegistry::global().get("reshape").pattern,
            FusionPattern::Injective);
  EXPECT_EQ(OpRegistry::global().get("sum").pattern, FusionPattern::CommReduce);
  EXPECT_EQ(OpRegistry::global().get("softmax").pattern, FusionPattern::Opaque);
  EXPECT_EQ(OpRegistry::global().get("arange").pattern, FusionPattern::Opaque);
  const OpInfo &Reshape = OpRegistry::global().get("reshape");
  ASSERT_EQ(Reshape.attrs().size(), 1u);
  EXPECT_EQ(Reshape.attrs()[0].name, "newshape");
  EXPECT_TRUE(Reshape.attrs()[0].required);
  EXPECT_EQ(Reshape.attrs()[0].kind, AttrSpec::Kind::Ints);
}

TEST(OpRelations, BroadcastKnownSymbolicAndUnknownDims) {
  EXPECT_EQ(rel("add", {f32({c(2), c(3)}), f32({c(3)})}),
            "Tensor[(2, 3), float32]");
  EXPECT_EQ(rel("add", {f32({c(2), c(1)}), f32({c(1), c(4)})}),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(rel("multiply", {f32({s("n"), c(3)}), f32({s("n"), c(3)})}),
            "Tensor[(n, 3), float32]");
  EXPECT_EQ(rel("add", {f32({s("n")}), f32({s("m")})}),
            "Tensor[(?,), float32]");
  EXPECT_EQ(rel("add", {f32({s("n")}), f32({c(5)})}), "Tensor[(5,), float32]");
  EXPECT_EQ(rel("add", {f32({s("n")}), f32({c(1)})}), "Tensor[(n,), float32]");
  EXPECT_EQ(rel("add", {f32({q(), c(3)}), f32({c(1), c(3)})}),
            "Tensor[(?, 3), float32]");
  EXPECT_EQ(rel("add", {f32({q()}), f32({c(4)})}), "Tensor[(4,), float32]");
  EXPECT_EQ(rel("add", {f32({q()}), f32({s("n")})}), "Tensor[(?,), float32]");
  EXPECT_EQ(rel("add", {f32({}), f32({c(7), c(2)})}),
            "Tensor[(7, 2), float32]");
  EXPECT_EQ(rel("add", {tensorTypeUnknownRank(DType::Float32), f32({c(2)})}),
            "Tensor[?, float32]");
  EXPECT_EQ(rel("less", {i64({c(2)}), i64({})}), "Tensor[(2,), bool]");
  EXPECT_EQ(rel("equal", {b8({c(2)}), b8({c(2)})}), "Tensor[(2,), bool]");
  EXPECT_EQ(rel("logical_and", {b8({c(2)}), b8({c(3), c(1)})}),
            "Tensor[(3, 2), bool]");
  EXPECT_EQ(rel("where", {b8({c(2), c(1)}), f32({c(3)}), f32({})}),
            "Tensor[(2, 3), float32]");
}

TEST(OpRelations, ElementwiseErrors) {
  EXPECT_REL_ERROR(relError("add", {f32({c(2), c(3)}), f32({c(4), c(3)})}),
                   "add: shapes cannot be broadcast (dimension 2 vs 4): "
                   "Tensor[(2, 3), float32] and Tensor[(4, 3), float32]");
  EXPECT_REL_ERROR(relError("add", {f32({c(2)}), i64({c(2)})}),
                   "add: dtypes differ (no implicit promotion)");
  EXPECT_REL_ERROR(relError("exp", {i64({c(2)})}),
                   "exp: expects a float tensor");
  EXPECT_REL_ERROR(relError("add", {b8({}), b8({})}),
                   "add: expects a numeric tensor");
  EXPECT_REL_ERROR(relError("logical_or", {f32({}), f32({})}),
                   "logical_or: expects a bool tensor");
  EXPECT_REL_ERROR(relError("where", {f32({}), f32({}), f32({})}),
                   "where: expects a bool tensor");
  EXPECT_REL_ERROR(relError("add", {f32({})}),
                   "add: expects 2 arguments, got 1");
  EXPECT_REL_ERROR(relError("add", {f32({}), tupleType({})}),
                   "add: expects a tensor");
  EXPECT_REL_ERROR(relError("relu", {f32({})}, Attrs{{"axis", int64_t(1)}}),
                   "relu: unknown attribute 'axis'");
}

TEST(OpRelations, IncompleteArgumentsAreUndecided) {
  EXPECT_EQ(rel("add", {incompleteType(), f32({c(2)})}), "null");
  EXPECT_EQ(rel("exp", {incompleteType()}), "null");
  EXPECT_EQ(rel("concatenate", {f32({c(1)}), incompleteType()}), "null");
  // Attributes are still checked.
  EXPECT_REL_ERROR(relError("reshape", {incompleteType()}),
                   "reshape: attribute 'newshape' is required");
}

TEST(OpRelations, Cast) {
  EXPECT_EQ(
      rel("cast", {f32({s("n")})}, Attrs{{"dtype", std::string("int32")}}),
      "Tensor[(n,), int32]");
  EXPECT_REL_ERROR(relError("cast", {f32({})}),
                   "cast: attribute 'dtype' is required");
  EXPECT_REL_ERROR(
      relError("cast", {f32({})}, Attrs{{"dtype", std::string("float7")}}),
      "cast: attribute 'dtype' names an unknown dtype 'float7'");
  EXPECT_REL_ERROR(relError("cast", {f32({})}, Attrs{{"dtype", int64_t(3)}}),
                   "cast: attribute 'dtype' must be of kind string, got int");
}

TEST(OpRelations, Linalg) {
  EXPECT_EQ(rel("dense", {f32({s("b"), c(4), c(8)}), f32({c(16), c(8)})}),
            "Tensor[(b, 4, 16), float32]");
  EXPECT_EQ(rel("dense", {f32({q(), q()}), f32({c(16), c(8)})}),
            "Tensor[(?, 16), float32]");
  EXPECT_REL_ERROR(relError("dense", {f32({c(2), c(3)}), f32({c(4), c(5)})}),
                   "dense: inner dimensions differ");
  EXPECT_REL_ERROR(relError("dense", {i64({c(2), c(3)}), i64({c(4), c(3)})}),
                   "dense: expects a float tensor");
  EXPECT_EQ(rel("matmul", {f32({c(2), c(3)}), f32({c(3), c(5)})}),
            "Tensor[(2, 5), float32]");
  EXPECT_EQ(rel("matmul", {f32({c(3)}), f32({c(3), c(5)})}),
            "Tensor[(5,), float32]");
  EXPECT_EQ(rel("matmul", {f32({c(2), c(3)}), f32({c(3)})}),
            "Tensor[(2,), float32]");
  EXPECT_EQ(rel("matmul", {f32({c(3)}), f32({c(3)})}), "Tensor[(), float32]");
  EXPECT_EQ(
      rel("matmul", {f32({c(7), c(1), c(2), c(3)}), f32({c(5), c(3), c(4)})}),
      "Tensor[(7, 5, 2, 4), float32]");
  EXPECT_EQ(rel("matmul", {f32({s("n"), q()}), f32({c(3), s("m")})}),
            "Tensor[(n, m), float32]");
  EXPECT_REL_ERROR(
      relError("matmul", {f32({c(2), c(3)}), f32({c(4), c(5)})}),
      "matmul: inner dimensions differ: Tensor[(2, 3), float32] and "
      "Tensor[(4, 5), float32]");
  EXPECT_REL_ERROR(
      relError("matmul", {f32({c(2), c(2), c(3)}), f32({c(4), c(3), c(5)})}),
      "matmul: batch dimensions cannot be broadcast");
  EXPECT_REL_ERROR(relError("matmul", {f32({}), f32({c(3)})}),
                   "matmul: operands must have rank >= 1");
}

TEST(OpRelations, Reshape) {
  auto NS = [](std::vector<int64_t> V) { return Attrs{{"newshape", V}}; };
  EXPECT_EQ(rel("reshape", {f32({c(2), c(3), c(4)})}, NS({6, -1})),
            "Tensor[(6, 4), float32]");
  EXPECT_EQ(rel("reshape", {f32({s("n"), c(3), c(4)})}, NS({0, -1})),
            "Tensor[(n, ?), float32]");
  EXPECT_EQ(rel("reshape", {f32({s("n"), c(3)})}, NS({0, 3, 1})),
            "Tensor[(n, 3, 1), float32]");
  EXPECT_EQ(rel("reshape", {tensorTypeUnknownRank(DType::Float32)}, NS({2, 0})),
            "Tensor[(2, ?), float32]");
  EXPECT_EQ(rel("reshape", {f32({c(1), c(1)})}, NS({})), "Tensor[(), float32]");
  EXPECT_REL_ERROR(
      relError("reshape", {f32({c(2), c(3)})}, NS({4, 2})),
      "reshape: cannot reshape Tensor[(2, 3), float32] (6 elements) into "
      "newshape (4, 2) (8 elements)");
  EXPECT_REL_ERROR(relError("reshape", {f32({c(2), c(3)})}, NS({4, -1})),
                   "do not divide evenly");
  EXPECT_REL_ERROR(relError("reshape", {f32({c(6)})}, NS({-1, -1})),
                   "reshape: attribute 'newshape' has more than one -1");
  EXPECT_REL_ERROR(relError("reshape", {f32({c(6)})}),
                   "reshape: attribute 'newshape' is required");
  EXPECT_REL_ERROR(relError("reshape", {f32({c(6)})}, NS({2, 0})),
                   "newshape[1] is 0");
}

TEST(OpRelations, Transpose) {
  EXPECT_EQ(rel("transpose", {f32({c(1), s("n"), c(3)})}),
            "Tensor[(3, n, 1), float32]");
  EXPECT_EQ(rel("transpose", {f32({c(1), s("n"), c(3)})},
                Attrs{{"axes", std::vector<int64_t>{0, 2, 1}}}),
            "Tensor[(1, 3, n), float32]");
  EXPECT_EQ(rel("transpose", {tensorTypeUnknownRank(DType::Float32)},
                Attrs{{"axes", std::vector<int64_t>{1, 0}}}),
            "Tensor[(?, ?), float32]");
  EXPECT_REL_ERROR(relError("transpose", {f32({c(1), c(2)})},
                            Attrs{{"axes", std::vector<int64_t>{0, 0}}}),
                   "is not a permutation");
  EXPECT_REL_ERROR(relError("transpose", {f32({c(1), c(2)})},
                            Attrs{{"axes", std::vector<int64_t>{0, 1, 2}}}),
                   "has 3 entries but the input");
}

TEST(OpRelations, ConcatenateAndStack) {
  EXPECT_EQ(rel("concatenate", {f32({c(1), c(3)}), f32({c(2), c(3)})}),
            "Tensor[(3, 3), float32]");
  EXPECT_EQ(rel("concatenate", {f32({q(), c(3)}), f32({c(2), c(3)})}),
            "Tensor[(?, 3), float32]");
  EXPECT_EQ(rel("concatenate", {f32({c(2), q()}), f32({c(2), c(3)})},
                Attrs{{"axis", int64_t(-1)}}),
            "Tensor[(2, ?), float32]");
  EXPECT_EQ(rel("concatenate", {f32({c(2), q()}), f32({c(3), s("n")})}),
            "Tensor[(5, n), float32]");
  EXPECT_EQ(rel("concatenate", {f32({s("n"), c(3)})}),
            "Tensor[(n, 3), float32]");
  EXPECT_EQ(rel("concatenate",
                {tensorTypeUnknownRank(DType::Float32), f32({c(2), c(3)})}),
            "Tensor[(?, 3), float32]");
  EXPECT_REL_ERROR(
      relError("concatenate", {f32({c(1), c(3)}), f32({c(1), c(4)})}),
      "concatenate: dimension 1 differs (only axis 0 may differ)");
  EXPECT_REL_ERROR(relError("concatenate", {f32({c(1), c(3)}), f32({c(1)})}),
                   "concatenate: ranks differ");
  EXPECT_REL_ERROR(relError("concatenate", {f32({c(1)}), i64({c(1)})}),
                   "concatenate: dtypes differ");
  EXPECT_REL_ERROR(relError("concatenate", {}),
                   "concatenate: expects at least one tensor");
  EXPECT_REL_ERROR(
      relError("concatenate", {f32({c(1)})}, Attrs{{"axis", int64_t(1)}}),
      "concatenate: axis 1 is out of range for a tensor of rank 1");

  EXPECT_EQ(
      rel("stack", {f32({c(2), c(3)}), f32({c(2), q()}), f32({c(2), c(3)})}),
      "Tensor[(3, 2, 3), float32]");
  EXPECT_EQ(rel("stack", {f32({c(2), c(3)}), f32({c(2), c(3)})},
                Attrs{{"axis", int64_t(-1)}}),
            "Tensor[(2, 3, 2), float32]");
  EXPECT_REL_ERROR(relError("stack", {f32({c(2)}), f32({c(3)})}),
                   "stack: shapes differ");
  EXPECT_REL_ERROR(
      relError("stack", {f32({c(2)})}, Attrs{{"axis", int64_t(2)}}),
      "stack: axis 2 is out of range");
}

TEST(OpRelations, Split) {
  EXPECT_EQ(
      rel("split", {f32({c(6), s("n")})}, Attrs{{"sections", int64_t(3)}}),
      "(Tensor[(2, n), float32], Tensor[(2, n), float32], Tensor[(2, n), "
      "float32])");
  EXPECT_EQ(rel("split", {f32({c(2), c(10)})},
                Attrs{{"axis", int64_t(1)},
                      {"indices", std::vector<int64_t>{3, 7, 20}}}),
            "(Tensor[(2, 3), float32], Tensor[(2, 4), float32], Tensor[(2, 3), "
            "float32], "
            "Tensor[(2, 0), float32])");
  EXPECT_EQ(rel("split", {f32({q()})}, Attrs{{"sections", int64_t(2)}}),
            "(Tensor[(?,), float32], Tensor[(?,), float32])");
  EXPECT_REL_ERROR(
      relError("split", {f32({c(5)})}, Attrs{{"sections", int64_t(2)}}),
      "split: 2 sections do not divide dimension 0");
  // uneven (ONNX Split-18): ceil(5 / 2) = 3, then the rest.
  EXPECT_EQ(rel("split", {f32({c(5)})},
                Attrs{{"sections", int64_t(2)}, {"uneven", int64_t(1)}}),
            "(Tensor[(3,), float32], Tensor[(2,), float32])");
  EXPECT_EQ(rel("split", {i64({c(4)})},
                Attrs{{"sections", int64_t(5)}, {"uneven", int64_t(1)}}),
            "(Tensor[(1,), int64], Tensor[(1,), int64], Tensor[(1,), int64], "
            "Tensor[(1,), int64], Tensor[(0,), int64])");
  EXPECT_REL_ERROR(relError("split", {f32({c(5)})},
                            Attrs{{"indices", std::vector<int64_t>{1}},
                                  {"uneven", int64_t(1)}}),
                   "'uneven' applies to 'sections'");
  EXPECT_REL_ERROR(
      relError("split", {f32({c(5)})}),
      "split: exactly one of the attributes 'sections' and 'indices'");
}

TEST(OpRelations, StridedSlice) {
  auto SL = [](std::vector<int64_t> B, std::vector<int64_t> E,
               std::vector<int64_t> St = {}, std::vector<int64_t> Ax = {}) {
    Attrs A{{"begin", B}, {"end", E}};
    if (!St.empty())
      A.set("strides", St);
    if (!Ax.empty())
      A.set("axes", Ax);
    return A;
  };
  EXPECT_EQ(rel("strided_slice", {f32({c(10), c(4)})}, SL({2}, {8})),
            "Tensor[(6, 4), float32]");
  EXPECT_EQ(rel("strided_slice", {f32({c(10), c(4)})}, SL({-3}, {1000})),
            "Tensor[(3, 4), float32]");
  EXPECT_EQ(rel("strided_slice", {f32({c(10), c(4)})}, SL({9}, {-11}, {-2})),
            "Tensor[(5, 4), float32]");
  EXPECT_EQ(
      rel("strided_slice", {f32({c(10), s("n")})}, SL({1}, {3}, {1}, {1})),
      "Tensor[(10, ?), float32]");
  EXPECT_EQ(rel("strided_slice", {f32({s("n"), c(4)})},
                SL({0}, {std::numeric_limits<int64_t>::max()})),
            "Tensor[(n, 4), float32]");
  EXPECT_REL_ERROR(relError("strided_slice", {f32({c(10)})}, SL({0}, {5}, {0})),
                   "strided_slice: a stride of 0 is not allowed");
  EXPECT_REL_ERROR(relError("strided_slice", {f32({c(10)})},
                            Attrs{{"begin", std::vector<int64_t>{0}}}),
                   "strided_slice: attribute 'end' is required");
}

TEST(OpRelations, Take) {
  EXPECT_EQ(rel("take", {f32({c(5), c(4), c(3)}), i64({s("k"), c(2)})},
                Attrs{{"axis", int64_t(1)}}),
            "Tensor[(5, k, 2, 3), float32]");
  EXPECT_EQ(rel("take", {f32({c(5), c(4)}), i64({c(7)})}),
            "Tensor[(7,), float32]");
  EXPECT_REL_ERROR(relError("take", {f32({c(5)}), f32({c(2)})}),
                   "take: expects an int32 or int64 index tensor");
  EXPECT_REL_ERROR(
      relError("take", {f32({c(5)}), i64({c(2)})}, Attrs{{"axis", int64_t(3)}}),
      "take: axis 3 is out of range");
}

TEST(OpRelations, Reductions) {
  EXPECT_EQ(rel("sum", {f32({c(2), s("n"), c(4)})}), "Tensor[(), float32]");
  EXPECT_EQ(rel("sum", {f32({c(2), s("n"), c(4)})},
                Attrs{{"axis", std::vector<int64_t>{1}}}),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(rel("mean", {f32({c(2), s("n"), c(4)})},
                Attrs{{"axis", std::vector<int64_t>{-1, 0}},
                      {"keepdims", int64_t(1)}}),
            "Tensor[(1, n, 1), float32]");
  EXPECT_EQ(rel("max", {tensorTypeUnknownRank(DType::Int64)}),
            "Tensor[(), int64]");
  EXPECT_EQ(rel("max", {tensorTypeUnknownRank(DType::Int64)},
                Attrs{{"axis", std::vector<int64_t>{0}}}),
            "Tensor[?, int64]");
  EXPECT_EQ(rel("argmax", {f32({c(2), c(5)})}, Attrs{{"axis", int64_t(1)}}),
            "Tensor[(2,), int64]");
  EXPECT_EQ(rel("argmin", {f32({c(2), c(5)})}, Attrs{{"keepdims", int64_t(1)}}),
            "Tensor[(1, 1), int64]");
  EXPECT_EQ(rel("softmax", {f32({s("n"), c(5)})}), "Tensor[(n, 5), float32]");
  EXPECT_REL_ERROR(
      relError("sum", {f32({c(2)})}, Attrs{{"axis", std::vector<int64_t>{1}}}),
      "sum: axis 1 is out of range for a tensor of rank 1");
  EXPECT_REL_ERROR(relError("sum", {f32({c(2), c(2)})},
                            Attrs{{"axis", std::vector<int64_t>{1, -1}}}),
                   "sum: attribute 'axis' names axis -1 twice");
  EXPECT_REL_ERROR(
      relError("sum", {f32({c(2)})}, Attrs{{"keepdims", int64_t(2)}}),
      "sum: attribute 'keepdims' must be 0 or 1");
  EXPECT_REL_ERROR(relError("softmax", {i64({c(2)})}),
                   "softmax: expects a float tensor");
  EXPECT_REL_ERROR(relError("sum", {f32({c(2)})}, Attrs{{"axis", int64_t(0)}}),
                   "sum: attribute 'axis' must be of kind ints, got int");
}

TEST(OpRelations, Creation) {
  EXPECT_EQ(rel("shape_of", {f32({s("n"), c(3)})}), "Tensor[(2,), int64]");
  EXPECT_EQ(rel("shape_of", {tensorTypeUnknownRank(DType::Bool)}),
            "Tensor[(?,), int64]");
  EXPECT_EQ(rel("zeros", {}, Attrs{{"shape", std::vector<int64_t>{2, 3}}}),
            "Tensor[(2, 3), float32]");
  EXPECT_EQ(rel("ones", {},
                Attrs{{"shape", std::vector<int64_t>{}},
                      {"dtype", std::string("int8")}}),
            "Tensor[(), int8]");
  EXPECT_EQ(rel("full", {i64({})}, Attrs{{"shape", std::vector<int64_t>{4}}}),
            "Tensor[(4,), int64]");
  EXPECT_EQ(rel("full", {i64({})},
                Attrs{{"shape", std::vector<int64_t>{4}},
                      {"dtype", std::string("float64")}}),
            "Tensor[(4,), float64]");
  EXPECT_EQ(rel("arange", {i64({}), i64({}), i64({})}), "Tensor[(?,), int64]");
  EXPECT_EQ(rel("arange", {f32({}), f32({}), f32({})},
                Attrs{{"dtype", std::string("float64")}}),
            "Tensor[(?,), float64]");
  EXPECT_REL_ERROR(relError("zeros", {}),
                   "zeros: attribute 'shape' is required");
  EXPECT_REL_ERROR(
      relError("zeros", {}, Attrs{{"shape", std::vector<int64_t>{-1}}}),
      "zeros: attribute 'shape' has a negative extent -1");
  EXPECT_REL_ERROR(relError("full", {i64({c(2)})},
                            Attrs{{"shape", std::vector<int64_t>{4}}}),
                   "full: the fill value must be a scalar");
  EXPECT_REL_ERROR(relError("arange", {i64({}), f32({}), i64({})}),
                   "arange: dtypes differ");
  EXPECT_REL_ERROR(relError("arange", {i64({c(3)}), i64({}), i64({})}),
                   "arange: start must be a scalar");
}

} // namespace
