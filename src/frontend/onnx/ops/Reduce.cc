//===- Reduce.cc - ONNX reductions, arg-reductions, softmax, CumSum -------===//
//
// Reduce*: axes are an attribute before opset 13 (ReduceSum) / 18 (the
// others) and an optional input after; a constant axes input becomes the
// static operator's attribute, a computed one dyn_reduce. ONNX's keepdims
// defaults to 1 and is always passed explicitly.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxHelpers.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

/// One ONNX Reduce* operator: its IR operator and the opset where axes
/// became an input.
template <size_t N> struct IrName {
  constexpr IrName(const char (&S)[N]) { std::copy_n(S, N, Value); }
  char Value[N];
};

/// EmptyIdentity: an empty ReduceMax/ReduceMin gives -inf/+inf (the
/// dtype's extreme values), as opset 20's reference does; before, an error.
template <IrName Name, bool AxesInput, bool EmptyIdentity = false>
std::vector<Expr> convertReduce(NodeContext &C) {
  const std::string Op(Name.Value);
  Expr X = C.input(0);
  int64_t Keep = C.attrInt("keepdims", 1);
  if (Keep != 0 && Keep != 1)
    C.error("attribute 'keepdims' must be 0 or 1, got {}", Keep);
  int64_t Noop = 0;
  std::vector<int64_t> Axes;
  Attrs Extra;
  if (EmptyIdentity)
    Extra.set("empty_identity", int64_t(1));
  if (AxesInput) {
    Noop = C.attrInt("noop_with_empty_axes", 0);
    if (Noop != 0 && Noop != 1)
      C.error("attribute 'noop_with_empty_axes' must be 0 or 1, got {}", Noop);
    if (C.hasAttr("axes"))
      C.error("'axes' is an input since this opset, not an attribute");
    if (C.hasInput(1)) {
      std::optional<Tensor> T = C.constantInput(1);
      if (!T) {
        Attrs A = Extra;
        A.set("reduction", Op);
        A.set("keepdims", Keep);
        A.set("noop_with_empty_axes", Noop);
        return {ir::callOp("dyn_reduce", {X, C.input(1)}, A)};
      }
      if (T->rank() > 1)
        C.error("input 'axes' must be 1-D, got shape {}",
                shapeToString(T->shape()));
      if (!isInteger(T->dtype()))
        C.error("input 'axes' must be an integer tensor, got {}",
                dtypeName(T->dtype()));
      Axes = T->toIntVector();
    }
  } else {
    Axes = C.attrInts("axes", {});
  }
  // noop_with_empty_axes: the input passes through unchanged.
  if (Axes.empty() && Noop)
    return {X};
  Attrs A = Extra;
  A.set("axis", Axes);
  A.set("keepdims", Keep);
  return {ir::callOp(Op, {X}, A)};
}

template <IrName Name> std::vector<Expr> convertArg(NodeContext &C) {
  Attrs A{{"axis", C.attrInt("axis", 0)},
          {"keepdims", C.attrInt("keepdims", 1)},
          {"select_last_index", C.attrInt("select_last_index", 0)}};
  return {ir::callOp(Name.Value, {C.input(0)}, std::move(A))};
}

/// Softmax, LogSoftmax, Hardmax: before opset 13 the input is coerced to 2-D
/// at 'axis' (default 1); from 13 on, 'axis' (default -1) is the one axis.
template <IrName Name, bool Coerce>
std::vector<Expr> convertSoft(NodeContext &C) {
  Attrs A{{"axis", C.attrInt("axis", Coerce ? 1 : -1)},
          {"coerce_2d", int64_t(Coerce ? 1 : 0)}};
  return {ir::callOp(Name.Value, {C.input(0)}, std::move(A))};
}

std::vector<Expr> convertCumSum(NodeContext &C) {
  int64_t Exclusive = C.attrInt("exclusive", 0);
  int64_t Reverse = C.attrInt("reverse", 0);
  if (std::optional<Tensor> Ax = C.constantInput(1)) {
    if (Ax->numel() != 1 || Ax->rank() > 1 || !isInteger(Ax->dtype()))
      C.error("input 'axis' must be an integer scalar, got {}",
              Ax->typeString());
    return {ir::callOp("cumsum", {C.input(0)},
                       Attrs{{"axis", Ax->elementAsInt(0)},
                             {"exclusive", Exclusive},
                             {"reverse", Reverse}})};
  }
  return {ir::callOp("cumsum", {C.input(0), C.input(1)},
                     Attrs{{"exclusive", Exclusive}, {"reverse", Reverse}})};
}

} // namespace

RIVET_REGISTER_ONNX_OP("ReduceSum", 1, (convertReduce<"sum", false>));
RIVET_REGISTER_ONNX_OP("ReduceSum", 13, (convertReduce<"sum", true>));
RIVET_REGISTER_ONNX_OP("ReduceMean", 1, (convertReduce<"mean", false>));
RIVET_REGISTER_ONNX_OP("ReduceMean", 18, (convertReduce<"mean", true>));
RIVET_REGISTER_ONNX_OP("ReduceMax", 1, (convertReduce<"max", false>));
RIVET_REGISTER_ONNX_OP("ReduceMax", 18, (convertReduce<"max", true>));
RIVET_REGISTER_ONNX_OP("ReduceMax", 20, (convertReduce<"max", true, true>));
RIVET_REGISTER_ONNX_OP("ReduceMin", 1, (convertReduce<"min", false>));
RIVET_REGISTER_ONNX_OP("ReduceMin", 18, (convertReduce<"min", true>));
RIVET_REGISTER_ONNX_OP("ReduceMin", 20, (convertReduce<"min", true, true>));
RIVET_REGISTER_ONNX_OP("ReduceProd", 1, (convertReduce<"prod", false>));
RIVET_REGISTER_ONNX_OP("ReduceProd", 18, (convertReduce<"prod", true>));
RIVET_REGISTER_ONNX_OP("ReduceL1", 1, (convertReduce<"l1_norm", false>));
RIVET_REGISTER_ONNX_OP("ReduceL1", 18, (convertReduce<"l1_norm", true>));
RIVET_REGISTER_ONNX_OP("ReduceL2", 1, (convertReduce<"l2_norm", false>));
RIVET_REGISTER_ONNX_OP("ReduceL2", 18, (convertReduce<"l2_norm", true>));
RIVET_REGISTER_ONNX_OP("ReduceLogSum", 1, (convertReduce<"log_sum", false>));
RIVET_REGISTER_ONNX_OP("ReduceLogSum", 18, (convertReduce<"log_sum", true>));
RIVET_REGISTER_ONNX_OP("ReduceLogSumExp", 1,
                       (convertReduce<"log_sum_exp", false>));
RIVET_REGISTER_ONNX_OP("ReduceLogSumExp", 18,
                       (convertReduce<"log_sum_exp", true>));
RIVET_REGISTER_ONNX_OP("ReduceSumSquare", 1,
                       (convertReduce<"sum_square", false>));
RIVET_REGISTER_ONNX_OP("ReduceSumSquare", 18,
                       (convertReduce<"sum_square", true>));
RIVET_REGISTER_ONNX_OP("ArgMax", 1, convertArg<"argmax">);
RIVET_REGISTER_ONNX_OP("ArgMin", 1, convertArg<"argmin">);
RIVET_REGISTER_ONNX_OP("Softmax", 1, (convertSoft<"softmax", true>));
RIVET_REGISTER_ONNX_OP("Softmax", 13, (convertSoft<"softmax", false>));
RIVET_REGISTER_ONNX_OP("LogSoftmax", 1, (convertSoft<"log_softmax", true>));
RIVET_REGISTER_ONNX_OP("LogSoftmax", 13, (convertSoft<"log_softmax", false>));
RIVET_REGISTER_ONNX_OP("Hardmax", 1, (convertSoft<"hardmax", true>));
RIVET_REGISTER_ONNX_OP("Hardmax", 13, (convertSoft<"hardmax", false>));
RIVET_REGISTER_ONNX_OP("CumSum", 11, convertCumSum);

} // namespace rivet::frontend

// Einsum and Det: generalized contractions, translated 1:1.
namespace rivet::frontend {
namespace {

std::vector<ir::Expr> convertEinsum(NodeContext &C) {
  std::vector<ir::Expr> In;
  for (size_t I = 0; I < C.numInputs(); ++I)
    In.push_back(C.input(I));
  return {ir::callOp("einsum", std::move(In),
                     Attrs{{"equation", C.attrString("equation")}})};
}

std::vector<ir::Expr> convertDet(NodeContext &C) {
  return {ir::callOp("det", {C.input(0)})};
}

} // namespace

RIVET_REGISTER_ONNX_OP("Einsum", 12, convertEinsum);
RIVET_REGISTER_ONNX_OP("Det", 11, convertDet);

} // namespace rivet::frontend
