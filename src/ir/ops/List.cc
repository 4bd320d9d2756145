//===- List.cc - Operators on Lists of tensors ----------------------------===//
//
// ONNX sequences are prelude Lists. concat_list and split_to_list consume or
// produce a whole List in one kernel call (OpInfo::listArgument /
// listResult), so that stacking the outputs of an n-step loop costs O(n), not
// O(n^2). The List primitives (list_length, list_at, list_insert,
// list_erase: OpInfo::listPrimitive) have no kernel: each executor runs them
// on its own Lists, the interpreter on Cons cells in O(length)
// (ir/ListPrimitives.cc), the VM on arrays in O(1) for a length, an element,
// an append or dropping either end (vm/PackedList.h), so that a loop that
// builds a sequence step by step costs O(1) per step. Their operands and
// positions (ONNX's: negative ones count from the end) are stated once, in
// kernels/ListPrimitiveSpec.h.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"
#include "kernels/ListPrimitiveSpec.h"

namespace rivet::ir {
namespace {

/// The element type of a List[Tensor[...]] argument.
const TensorTypeNode *listElement(std::string_view Op, const Type &T) {
  auto *TC = T ? T->as<TypeCallNode>() : nullptr;
  if (!TC || TC->adt != "List" || TC->args.size() != 1)
    failArg(0, "{}: expected a List of tensors, got {}", Op, typeToString(T));
  if (!TC->args[0] || TC->args[0]->as<IncompleteTypeNode>())
    return nullptr;
  auto *E = TC->args[0]->as<TensorTypeNode>();
  if (!E)
    failArg(0, "{}: expected a List of tensors, got {}", Op, typeToString(T));
  return E;
}

// concat_list(l; axis, new_axis): concatenate (new_axis=0) or stack
// (new_axis=1) the elements of a non-empty list.
Type concatListRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("concat_list", A);
  checkArity("concat_list", Args, 1);
  if (!Args[0] || Args[0]->as<IncompleteTypeNode>())
    return nullptr;
  const TensorTypeNode *E = listElement("concat_list", Args[0]);
  if (!E)
    return nullptr;
  bool NewAxis = OpAttrs("concat_list", A).getInt("new_axis") != 0;
  int64_t Axis = OpAttrs("concat_list", A).getInt("axis");
  if (!E->shape)
    return tensorTypeUnknownRank(E->dtype);
  std::vector<Dim> Dims = *E->shape;
  int64_t Rank = (int64_t)Dims.size() + (NewAxis ? 1 : 0);
  if (Rank == 0)
    fail("concat_list: cannot concatenate scalars (use new_axis=1)");
  int64_t Ax = normalizeAxisFor("concat_list", Axis, Rank);
  if (NewAxis)
    Dims.insert(Dims.begin() + Ax, Dim::any());
  else
    Dims[(size_t)Ax] = Dim::any();
  return tensorType(std::move(Dims), E->dtype);
}

// split_to_list(x, split?; axis, keepdims): ONNX SplitToSequence.
Type splitToListRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("split_to_list", A);
  if (Args.size() != 1 && Args.size() != 2)
    fail("split_to_list: expected 1 or 2 arguments, got {}", Args.size());
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("split_to_list", Args, 0);
  OpAttrs OA("split_to_list", A);
  int64_t Axis = OA.getInt("axis");
  bool KeepDims = OA.getInt("keepdims") != 0;
  if (Args.size() == 2) {
    const TensorTypeNode &S = tensorArg("split_to_list", Args, 1);
    requireIndex("split_to_list", S, 1);
    KeepDims = true; // keepdims is ignored when split is given
  }
  if (!X.shape)
    return typeCall("List", {tensorTypeUnknownRank(X.dtype)});
  std::vector<Dim> Dims = *X.shape;
  int64_t Ax = normalizeAxisFor("split_to_list", Axis, (int64_t)Dims.size());
  if (KeepDims)
    Dims[(size_t)Ax] = Dim::any();
  else
    Dims.erase(Dims.begin() + Ax);
  return typeCall("List", {tensorType(std::move(Dims), X.dtype)});
}

/// The element type of argument I, a List of any element type (null while
/// undecided); throws naming Op when it is no List.
Type listArg(std::string_view Op, const std::vector<Type> &Args, size_t I) {
  auto *TC = Args[I] ? Args[I]->as<TypeCallNode>() : nullptr;
  if (!TC || TC->adt != "List" || TC->args.size() != 1)
    failArg(I, "{}: expected a List, got {}", Op, typeToString(Args[I]));
  const Type &E = TC->args[0];
  return E && !E->as<IncompleteTypeNode>() ? E : nullptr;
}

/// Argument I, a position: an int32 or int64 tensor of one element.
void checkPosition(std::string_view Op, const std::vector<Type> &Args,
                   size_t I) {
  const TensorTypeNode &P = tensorArg(Op, Args, I);
  requireIndex(Op, P, I);
  if (P.shape && P.shape->size() > 1)
    failArg(I, "{}: the position must be a scalar, got {}", Op, typeStr(P));
}

/// The least general tensor type of both A's and B's values (a List element
/// type that covers an old and a new element): differing dims become `?`,
/// differing ranks an unknown rank; the dtypes must agree.
Type joinElement(std::string_view Op, const TensorTypeNode &A,
                 const TensorTypeNode &B, size_t BArg) {
  if (A.dtype != B.dtype)
    failArg(BArg, "{}: a List of {} cannot hold a {} tensor", Op, typeStr(A),
            typeStr(B));
  if (!A.shape || !B.shape || A.shape->size() != B.shape->size())
    return tensorTypeUnknownRank(A.dtype);
  std::vector<Dim> Dims;
  for (size_t I = 0; I < A.shape->size(); ++I)
    Dims.push_back((*A.shape)[I] == (*B.shape)[I] ? (*A.shape)[I] : Dim::any());
  return tensorType(std::move(Dims), A.dtype);
}

// list_length(l): the number of elements, an int64 scalar.
Type listLengthRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("list_length", A);
  checkListOperands("list_length", Args.size());
  if (!Args[0] || Args[0]->as<IncompleteTypeNode>())
    return nullptr;
  listArg("list_length", Args, 0);
  return tensorType({}, DType::Int64);
}

// list_at(l, position): the element at position.
Type listAtRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("list_at", A);
  checkListOperands("list_at", Args.size());
  if (anyUndecided(Args))
    return nullptr;
  checkPosition("list_at", Args, 1);
  return listArg("list_at", Args, 0);
}

// list_insert(l, x, position?): l with tensor x appended, or inserted before
// the element at position.
Type listInsertRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("list_insert", A);
  checkListOperands("list_insert", Args.size());
  if (anyUndecided(Args))
    return nullptr;
  if (Args.size() == 3)
    checkPosition("list_insert", Args, 2);
  const TensorTypeNode &X = tensorArg("list_insert", Args, 1);
  Type E = listArg("list_insert", Args, 0);
  if (!E) // the element type of an empty List still to be decided
    return typeCall("List", {Args[1]});
  auto *ET = E->as<TensorTypeNode>();
  if (!ET)
    failArg(0, "list_insert: expected a List of tensors, got {}",
            typeToString(Args[0]));
  return typeCall("List", {joinElement("list_insert", *ET, X, 1)});
}

// list_erase(l, position?): l without its last element, or without the
// element at position.
Type listEraseRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("list_erase", A);
  checkListOperands("list_erase", Args.size());
  if (anyUndecided(Args))
    return nullptr;
  if (Args.size() == 2)
    checkPosition("list_erase", Args, 1);
  listArg("list_erase", Args, 0);
  return Args[0];
}

/// OpInfo::numInputs of List primitive Op: its operand count, or -1 when
/// its last operand may be left out.
int listOperandCount(std::string_view Op) {
  const ListPrimitiveSpec &S = *findListPrimitiveSpec(Op);
  return S.minOperands == S.maxOperands ? (int)S.minOperands : -1;
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "concat_list",
    "Concatenates (new_axis=0) or stacks (new_axis=1) the tensors of a "
    "non-empty List along axis.",
    1, concatListRel, FusionPattern::Opaque,
    /*listArgument=*/true});
RIVET_REGISTER_OP(OpInfo{
    "split_to_list",
    "Splits a tensor along axis into a List: into pieces of size 1 (dropped "
    "axis unless keepdims), or by the split input (a scalar size or sizes).",
    -1, splitToListRel, FusionPattern::Opaque, false,
    /*listResult=*/true});

RIVET_REGISTER_OP(listPrimitiveOp(OpInfo{
    "list_length",
    "The number of elements of a List, an int64 scalar (ONNX "
    "SequenceLength).",
    listOperandCount("list_length"), listLengthRel}));
RIVET_REGISTER_OP(listPrimitiveOp(OpInfo{
    "list_at",
    "The element of a List at a position (negative: from the end; ONNX "
    "SequenceAt).",
    listOperandCount("list_at"), listAtRel}));
RIVET_REGISTER_OP(listPrimitiveOp(OpInfo{
    "list_insert",
    "The List with a tensor appended, or inserted before the element at a "
    "position (negative: from the end; ONNX SequenceInsert).",
    listOperandCount("list_insert"), listInsertRel}));
RIVET_REGISTER_OP(listPrimitiveOp(OpInfo{
    "list_erase",
    "The List without its last element, or without the element at a "
    "position (negative: from the end; ONNX SequenceErase).",
    listOperandCount("list_erase"), listEraseRel}));

} // namespace rivet::ir
