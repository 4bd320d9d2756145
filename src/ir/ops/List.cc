//===- List.cc - Operators on Lists of tensors ----------------------------===//
//
// ONNX sequences are prelude Lists; these operators consume or produce a
// whole List in one kernel call (OpInfo::listArgument / listResult), so that
// stacking the outputs of an n-step loop costs O(n), not O(n^2).
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

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

} // namespace rivet::ir
