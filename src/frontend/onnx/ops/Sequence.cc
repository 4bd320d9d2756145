//===- Sequence.cc - ONNX sequences and optionals -------------------------===//
//
// A sequence is a prelude List; an optional is a prelude Option. The
// sequence operators become the List primitives (list_length, list_at,
// list_insert, list_erase; ir/ops/List.cc), which take ONNX's positions as
// they are (negative: from the end) and which the VM runs in O(1) for a
// length, an element or an append, so that a Loop that builds a sequence
// costs O(1) per iteration.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"
#include "frontend/onnx/OnnxTensor.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

Expr int64Const(int64_t V) { return ir::constant(Tensor::scalar<int64_t>(V)); }

std::vector<Expr> convertSequenceEmpty(NodeContext &C) {
  DType DT = dtypeFromOnnx(
      (int32_t)C.attrInt("dtype", onnx::TensorProto::FLOAT), C.where());
  ir::Type T = ir::typeCall("List", {ir::tensorTypeUnknownRank(DT)});
  return {C.bind(C.construct("Nil", {}), "empty_seq", T)};
}
RIVET_REGISTER_ONNX_OP("SequenceEmpty", 11, convertSequenceEmpty);

/// The inputs appended one by one to an empty List: an array in the VM.
std::vector<Expr> convertSequenceConstruct(NodeContext &C) {
  if (C.numInputs() == 0)
    C.error("needs at least one input");
  Expr L = C.construct("Nil", {});
  for (size_t I = 0; I < C.numInputs(); ++I)
    L = ir::callOp("list_insert", {L, C.input(I)});
  return {L};
}
RIVET_REGISTER_ONNX_OP("SequenceConstruct", 11, convertSequenceConstruct);

std::vector<Expr> convertSequenceLength(NodeContext &C) {
  return {ir::callOp("list_length", {C.input(0)})};
}
RIVET_REGISTER_ONNX_OP("SequenceLength", 11, convertSequenceLength);

std::vector<Expr> convertSequenceAt(NodeContext &C) {
  return {ir::callOp("list_at", {C.input(0), C.input(1)})};
}
RIVET_REGISTER_ONNX_OP("SequenceAt", 11, convertSequenceAt);

/// Without a position the tensor is appended.
std::vector<Expr> convertSequenceInsert(NodeContext &C) {
  std::vector<Expr> Args = {C.input(0), C.input(1)};
  if (C.hasInput(2))
    Args.push_back(C.input(2));
  return {ir::callOp("list_insert", Args)};
}
RIVET_REGISTER_ONNX_OP("SequenceInsert", 11, convertSequenceInsert);

/// Without a position the last element is erased.
std::vector<Expr> convertSequenceErase(NodeContext &C) {
  std::vector<Expr> Args = {C.input(0)};
  if (C.hasInput(1))
    Args.push_back(C.input(1));
  return {ir::callOp("list_erase", Args)};
}
RIVET_REGISTER_ONNX_OP("SequenceErase", 11, convertSequenceErase);

std::vector<Expr> convertSplitToSequence(NodeContext &C) {
  std::vector<Expr> Args = {C.input(0)};
  if (C.hasInput(1))
    Args.push_back(C.input(1));
  return {ir::callOp("split_to_list", Args,
                     Attrs{{"axis", C.attrInt("axis", 0)},
                           {"keepdims", C.attrInt("keepdims", 1)}})};
}
RIVET_REGISTER_ONNX_OP("SplitToSequence", 11, convertSplitToSequence);

std::vector<Expr> convertConcatFromSequence(NodeContext &C) {
  return {ir::callOp("concat_list", {C.input(0)},
                     Attrs{{"axis", C.attrInt("axis")},
                           {"new_axis", C.attrInt("new_axis", 0)}})};
}
RIVET_REGISTER_ONNX_OP("ConcatFromSequence", 11, convertConcatFromSequence);

/// SequenceMap(seq, extra...) applies the body to each element; an extra
/// input that is a sequence contributes its i-th element, a tensor itself.
///   let %map = fn (%i, %acc...) {
///     if (i < list_length(seq)) {
///       <body>; %map(i + 1, list_insert(acc, out)...)
///     } else { (acc...) }
///   };
std::vector<Expr> convertSequenceMap(NodeContext &C) {
  const onnx::GraphProto &Body = C.attrGraph("body");
  size_t NumIn = C.numInputs(), K = C.numOutputs();
  if ((size_t)Body.input_size() != NumIn || (size_t)Body.output_size() != K)
    C.error("the body has {} inputs and {} outputs; the node has {} and {}",
            Body.input_size(), Body.output_size(), NumIn, K);
  std::vector<Expr> Ins;
  std::vector<bool> IsSeq;
  for (size_t J = 0; J < NumIn; ++J) {
    Ins.push_back(C.bind(C.input(J), "map_in"));
    ir::Type T = C.declaredInputType(J);
    bool Seq = J == 0;
    if (J > 0) {
      if (!T)
        C.error("cannot tell whether input {} ('{}') is a sequence: it has "
                "no declared type",
                J, C.node().input((int)J));
      auto *TC = T->as<ir::TypeCallNode>();
      Seq = TC && TC->adt == "List";
    }
    IsSeq.push_back(Seq);
  }
  Expr Len = C.bind(ir::callOp("list_length", {Ins[0]}), "len");
  ir::Var I = ir::var("i", ir::scalarType(DType::Int64));
  std::vector<ir::Var> Accs;
  for (size_t O = 0; O < K; ++O)
    Accs.push_back(ir::var("acc" + std::to_string(O)));
  ir::Var Map = ir::var("seq_map");

  std::vector<Expr> BodyIns;
  for (size_t J = 0; J < NumIn; ++J)
    BodyIns.push_back(IsSeq[J] ? ir::callOp("list_at", {Ins[J], I}) : Ins[J]);
  GraphImporter Sub(C.graph().state(), &C.graph());
  Expr Continue = Sub.importGraph(Body, BodyIns, [&](std::vector<Expr> Outs) {
    std::vector<Expr> Args = {ir::callOp("add", {I, int64Const(1)})};
    for (size_t O = 0; O < K; ++O)
      Args.push_back(ir::callOp("list_insert", {Accs[O], Outs[O]}));
    return ir::call(Map, Args);
  });
  std::vector<Expr> Results(Accs.begin(), Accs.end());
  std::vector<ir::Var> Params = {I};
  Params.insert(Params.end(), Accs.begin(), Accs.end());
  Expr Fn = ir::function(Params, ir::ifThenElse(ir::callOp("less", {I, Len}),
                                                Continue, ir::tuple(Results)));
  std::vector<Expr> Init = {int64Const(0)};
  for (size_t O = 0; O < K; ++O)
    Init.push_back(C.construct("Nil", {}));
  return C.bindTuple(ir::let(Map, Fn, ir::call(Map, Init)), K);
}
RIVET_REGISTER_ONNX_OP("SequenceMap", 17, convertSequenceMap);

/// The `type` attribute of Optional (a TypeProto).
ir::Type optionalElementType(NodeContext &C) {
  for (const auto &A : C.node().attribute())
    if (A.name() == "type" && A.has_tp())
      if (ir::Type T = typeFromProto(A.tp(), C.where()))
        return T;
  C.error("an empty Optional needs the attribute 'type'");
}

std::vector<Expr> convertOptional(NodeContext &C) {
  if (C.hasInput(0))
    return {C.construct("Some", {C.input(0)})};
  ir::Type T = ir::typeCall("Option", {optionalElementType(C)});
  return {C.bind(C.construct("None", {}), "none", T)};
}
RIVET_REGISTER_ONNX_OP("Optional", 15, convertOptional);

/// True when input I is declared as an Option (opset 18 also accepts plain
/// tensors and sequences, which are always "present").
bool isOptional(NodeContext &C, size_t I) {
  ir::Type T = C.declaredInputType(I);
  auto *TC = T ? T->as<ir::TypeCallNode>() : nullptr;
  return !T || (TC && TC->adt == "Option");
}

std::vector<Expr> convertOptionalHasElement(NodeContext &C) {
  if (!C.hasInput(0))
    return {ir::constant(Tensor::scalar<bool>(false))};
  if (!isOptional(C, 0))
    return {ir::constant(Tensor::scalar<bool>(true))};
  ir::Module &M = C.module();
  std::vector<ir::Clause> Clauses = {
      {ir::PatternNode::constructor(M.findConstructor("Some"),
                                    {ir::PatternNode::wildcard()}),
       ir::constant(Tensor::scalar<bool>(true))},
      {ir::PatternNode::wildcard(), ir::constant(Tensor::scalar<bool>(false))}};
  return {ir::match(C.input(0), Clauses)};
}
RIVET_REGISTER_ONNX_OP("OptionalHasElement", 15, convertOptionalHasElement);

std::vector<Expr> convertOptionalGetElement(NodeContext &C) {
  if (!isOptional(C, 0))
    return {C.input(0)};
  ir::Var V = ir::var("value");
  std::vector<ir::Clause> Clauses = {
      {ir::PatternNode::constructor(C.module().findConstructor("Some"),
                                    {ir::PatternNode::bind(V)}),
       V}};
  return {ir::match(C.input(0), Clauses)};
}
RIVET_REGISTER_ONNX_OP("OptionalGetElement", 15, convertOptionalGetElement);

} // namespace
} // namespace rivet::frontend
