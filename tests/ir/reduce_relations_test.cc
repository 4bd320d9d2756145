//===- reduce_relations_test.cc - Relations of reductions, search, loss, einsum
//-===//

#include "support/RelationTest.h"

using namespace rivet;
using namespace rivet::ir;
using namespace rivet::reltest;

namespace {

using Ints = std::vector<int64_t>;

} // namespace

TEST(ReduceRelations, Registered) {
  for (const char *Op :
       {"prod", "l1_norm", "l2_norm", "log_sum", "log_sum_exp", "sum_square",
        "dyn_reduce", "log_softmax", "hardmax", "cumsum", "topk", "dyn_topk",
        "unique", "einsum", "det", "nll_loss", "softmax_cross_entropy_loss"}) {
    const OpInfo *I = OpRegistry::global().find(Op);
    ASSERT_NE(I, nullptr) << Op;
    EXPECT_FALSE(I->description.empty()) << Op;
  }
  EXPECT_EQ(OpRegistry::global().get("prod").pattern,
            FusionPattern::CommReduce);
  EXPECT_EQ(OpRegistry::global().get("einsum").numInputs, -1);
}

TEST(ReduceRelations, StaticReductions) {
  Type X = f32({c(2), s("n"), c(4)});
  EXPECT_EQ(rel("prod", {X}, {{"axis", Ints{1}}, {"keepdims", int64_t(1)}}),
            "Tensor[(2, 1, 4), float32]");
  EXPECT_EQ(rel("log_sum_exp", {X}, {{"axis", Ints{-1, 0}}}),
            "Tensor[(n,), float32]");
  EXPECT_EQ(rel("max", {b8({c(3)})}), "Tensor[(), bool]");
  EXPECT_REL_ERROR(relError("l2_norm", {b8({c(3)})}),
                   "l2_norm: expects a numeric tensor");
  EXPECT_REL_ERROR(relError("sum_square", {X}, {{"axis", Ints{3}}}),
                   "sum_square: axis 3 is out of range");
}

TEST(ReduceRelations, DynReduce) {
  Type X = f32({c(2), c(1), s("n")});
  Attrs A{{"reduction", std::string("mean")}, {"keepdims", int64_t(1)}};
  EXPECT_EQ(rel("dyn_reduce", {X, i64({c(1)})}, A),
            "Tensor[(?, 1, ?), float32]");
  EXPECT_EQ(
      rel("dyn_reduce", {X, i64({q()})}, {{"reduction", std::string("sum")}}),
      "Tensor[?, float32]");
  EXPECT_REL_ERROR(relError("dyn_reduce", {X, f32({c(1)})}, A),
                   "int32 or int64");
  EXPECT_REL_ERROR(relError("dyn_reduce", {X, i64({c(1)})},
                            {{"reduction", std::string("x")}}),
                   "dyn_reduce: unknown reduction 'x'");
  EXPECT_REL_ERROR(relError("dyn_reduce", {X, i64({c(1)})}),
                   "'reduction' is required");
  EXPECT_EQ(
      rel("dyn_reduce", {X, i64({c(1)})},
          {{"reduction", std::string("max")}, {"empty_identity", int64_t(1)}}),
      "Tensor[?, float32]");
  EXPECT_REL_ERROR(relError("dyn_reduce", {X, i64({c(1)})},
                            {{"reduction", std::string("sum")},
                             {"empty_identity", int64_t(1)}}),
                   "empty_identity applies to max and min, not sum");
  EXPECT_REL_ERROR(relError("sum", {X}, {{"empty_identity", int64_t(1)}}),
                   "empty_identity");
}

TEST(ReduceRelations, ArgAndSoft) {
  EXPECT_EQ(rel("argmax", {f32({c(2), c(5)})},
                {{"axis", int64_t(1)}, {"select_last_index", int64_t(1)}}),
            "Tensor[(2,), int64]");
  EXPECT_EQ(rel("hardmax", {f32({s("n"), c(5)})}), "Tensor[(n, 5), float32]");
  EXPECT_EQ(rel("log_softmax", {f32({c(2), c(5)})},
                {{"axis", int64_t(2)}, {"coerce_2d", int64_t(1)}}),
            "Tensor[(2, 5), float32]");
  EXPECT_REL_ERROR(
      relError("log_softmax", {f32({c(2), c(5)})}, {{"axis", int64_t(2)}}),
      "log_softmax: axis 2 is out of range");
  EXPECT_REL_ERROR(relError("hardmax", {i64({c(2)})}),
                   "hardmax: expects a float tensor");
}

TEST(ReduceRelations, CumSum) {
  Type X = i64({s("n"), c(3)});
  EXPECT_EQ(rel("cumsum", {X}, {{"axis", int64_t(1)}}),
            "Tensor[(n, 3), int64]");
  EXPECT_EQ(rel("cumsum", {X, tensorType({}, DType::Int32)}),
            "Tensor[(n, 3), int64]");
  EXPECT_REL_ERROR(relError("cumsum", {X}), "needs the attribute 'axis'");
  EXPECT_REL_ERROR(relError("cumsum", {X, i64({c(2)})}),
                   "the axis must be a scalar");
  EXPECT_REL_ERROR(relError("cumsum", {X}, {{"axis", int64_t(2)}}),
                   "axis 2 is out of range");
}

TEST(ReduceRelations, TopKUnique) {
  Type X = f32({s("b"), c(10)});
  EXPECT_EQ(rel("topk", {X}, {{"k", int64_t(3)}}),
            "(Tensor[(b, 3), float32], Tensor[(b, 3), int64])");
  EXPECT_EQ(rel("dyn_topk", {X, i64({c(1)})}, {{"axis", int64_t(1)}}),
            "(Tensor[(b, ?), float32], Tensor[(b, ?), int64])");
  EXPECT_REL_ERROR(relError("topk", {X}, {{"k", int64_t(11)}}),
                   "k = 11 exceeds the extent 10");
  EXPECT_EQ(rel("unique", {f32({c(2), c(3)})}),
            "(Tensor[(?,), float32], Tensor[(?,), int64], Tensor[(6,), int64], "
            "Tensor[(?,), int64])");
  EXPECT_EQ(
      rel("unique", {X}, {{"axis", int64_t(0)}}),
      "(Tensor[(?, 10), float32], Tensor[(?,), int64], Tensor[(b,), int64], "
      "Tensor[(?,), int64])");
}

TEST(ReduceRelations, EinsumDet) {
  auto E = [](const char *Eq) { return Attrs{{"equation", std::string(Eq)}}; };
  EXPECT_EQ(rel("einsum", {f32({s("b"), c(2), c(3)}), f32({q(), c(3), c(4)})},
                E("bij,bjk->bik")),
            "Tensor[(b, 2, 4), float32]");
  EXPECT_EQ(rel("einsum", {f32({c(5), c(2), c(2)})}, E("...ii->...i")),
            "Tensor[(5, 2), float32]");
  EXPECT_EQ(rel("einsum", {f32({c(2), c(3)})}, E("ba")),
            "Tensor[(3, 2), float32]");
  EXPECT_REL_ERROR(
      relError("einsum", {f32({c(2), c(3)}), f32({c(4), c(5)})}, E("ij,jk")),
      "label 'j' has extents 3 and 4");
  EXPECT_REL_ERROR(relError("einsum", {f32({c(2)})}, E("ij")),
                   "does not match the equation");
  EXPECT_EQ(rel("det", {f32({s("b"), c(3), c(3)})}), "Tensor[(b,), float32]");
  EXPECT_REL_ERROR(relError("det", {f32({c(3), c(2)})}),
                   "det: expects square matrices");
}

TEST(ReduceRelations, Losses) {
  Type X = f32({s("n"), c(5), c(7)});
  Type T = i64({q(), c(7)});
  EXPECT_EQ(rel("nll_loss", {X, T}, {{"reduction", std::string("none")}}),
            "Tensor[(n, 7), float32]");
  EXPECT_EQ(rel("nll_loss", {X, T, f32({c(5)})}), "Tensor[(), float32]");
  EXPECT_EQ(rel("softmax_cross_entropy_loss", {X, T},
                {{"ignore_index", int64_t(-1)}}),
            "(Tensor[(), float32], Tensor[(n, 5, 7), float32])");
  EXPECT_REL_ERROR(relError("nll_loss", {X, i64({c(7)})}), "must have rank 2");
  EXPECT_REL_ERROR(relError("nll_loss", {X, T, f32({c(4)})}),
                   "does not match the classes");
  EXPECT_REL_ERROR(relError("nll_loss", {X, f32({q(), c(7)})}),
                   "int32 or int64");
}
