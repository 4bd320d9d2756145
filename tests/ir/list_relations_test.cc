//===- list_relations_test.cc - Relations of the List primitives ----------===//
//
// Type relations of list_length, list_at, list_insert and list_erase: the
// element type of a List, positions that are one integer, and the element
// type a List gets from the tensors inserted into it (the least general
// type of all of them, so that a loop-carried sequence of growing tensors
// has `?` dims).
//
//===----------------------------------------------------------------------===//
#include "kernels/ListPrimitiveSpec.h"
#include "support/RelationTest.h"

using namespace rivet;
using namespace rivet::ir;
using namespace rivet::reltest;

namespace {

Type listOf(Type E) { return typeCall("List", {std::move(E)}); }
Type undecidedList() { return listOf(incompleteType()); }

} // namespace

TEST(ListRelations, EveryPrimitiveIsRegisteredAsOne) {
  // kernels/ListPrimitiveSpec.h lists them; the registry has each.
  std::vector<std::string> Names;
  for (const ListPrimitiveSpec &S : kListPrimitives) {
    Names.emplace_back(S.name);
    const OpInfo &Op = OpRegistry::global().get(std::string(S.name));
    EXPECT_TRUE(Op.listPrimitive) << S.name;
    EXPECT_EQ(Op.numInputs,
              S.minOperands == S.maxOperands ? (int)S.minOperands : -1)
        << S.name;
  }
  EXPECT_EQ(Names, (std::vector<std::string>{"list_length", "list_at",
                                             "list_insert", "list_erase"}));
  EXPECT_FALSE(OpRegistry::global().get("concat_list").listPrimitive);
}

TEST(ListRelations, LengthAndElement) {
  Type L = listOf(f32({q(), c(8)}));
  EXPECT_EQ(rel("list_length", {L}), "Tensor[(), int64]");
  EXPECT_EQ(rel("list_length", {undecidedList()}), "Tensor[(), int64]");
  EXPECT_EQ(rel("list_at", {L, i64({})}), "Tensor[(?, 8), float32]");
  EXPECT_EQ(rel("list_at", {L, i32({c(1)})}), "Tensor[(?, 8), float32]");
  EXPECT_EQ(rel("list_at", {undecidedList(), i64({})}), "null");
  EXPECT_REL_ERROR(relError("list_at", {L, f32({})}), "int32 or int64");
  EXPECT_REL_ERROR(relError("list_at", {L, i64({c(2), c(1)})}),
                   "the position must be a scalar");
  EXPECT_REL_ERROR(relError("list_length", {f32({c(2)})}), "expected a List");
}

TEST(ListRelations, InsertJoinsTheElementTypes) {
  // Equal dims stay; differing ones become ?; differing ranks unknown.
  EXPECT_EQ(rel("list_insert", {listOf(f32({c(1), c(8)})), f32({c(2), c(8)})}),
            "List[Tensor[(?, 8), float32]]");
  EXPECT_EQ(rel("list_insert",
                {listOf(f32({s("n"), c(8)})), f32({s("n"), c(8)}), i64({})}),
            "List[Tensor[(n, 8), float32]]");
  EXPECT_EQ(rel("list_insert", {listOf(f32({c(3)})), f32({c(1), c(3)})}),
            "List[Tensor[?, float32]]");
  EXPECT_EQ(rel("list_insert", {listOf(unknown()), f32({c(2)})}),
            "List[Tensor[?, float32]]");
  // An empty List whose element type is not decided yet takes the tensor's.
  EXPECT_EQ(rel("list_insert", {undecidedList(), f32({c(2)})}),
            "List[Tensor[(2,), float32]]");
  EXPECT_REL_ERROR(relError("list_insert", {listOf(f32({c(2)})), i64({c(2)})}),
                   "cannot hold");
  EXPECT_REL_ERROR(
      relError("list_insert", {listOf(f32({c(2)})), f32({c(2)}), f32({})}),
      "int32 or int64");
  EXPECT_REL_ERROR(relError("list_insert", {listOf(f32({c(2)}))}),
                   "expected 2 or 3 operands");
}

TEST(ListRelations, EraseKeepsTheListType) {
  Type L = listOf(f32({q()}));
  EXPECT_EQ(rel("list_erase", {L}), "List[Tensor[(?,), float32]]");
  EXPECT_EQ(rel("list_erase", {L, i32({})}), "List[Tensor[(?,), float32]]");
  EXPECT_REL_ERROR(relError("list_erase", {L, i64({}), i64({})}),
                   "expected 1 or 2 operands");
}
