//===- AnchorSelection.cc - One oneDNN call for anchor + tail -------------===//
#include "vm/compiler/AnchorSelection.h"

#include "ir/Op.h"
#include "ir/transforms/Pass.h"
#include "kernels/dnnl/PostOps.h"

#include <algorithm>
#include <functional>
#include <set>

namespace rivet::vm::compiler {

using namespace ir;

namespace {

/// The call's operator name, or empty when E is not an operator call.
std::string opName(const Expr &E) {
  const auto *C = E->as<CallNode>();
  if (!C)
    return {};
  const auto *O = C->callee->as<OpNode>();
  return O ? O->name() : std::string();
}

const TensorTypeNode *tensorType(const Expr &E) {
  return E->checkedType ? E->checkedType->as<TensorTypeNode>() : nullptr;
}

/// True when an operand of type T broadcasts to Out without growing it
/// (NumPy alignment from the right; an extent must be 1 or Out's).
bool broadcastsInto(const TensorTypeNode &T, const TensorTypeNode &Out) {
  if (!T.shape || !Out.shape || T.shape->size() > Out.shape->size())
    return false;
  size_t Pad = Out.shape->size() - T.shape->size();
  for (size_t I = 0; I < T.shape->size(); ++I) {
    const Dim &D = (*T.shape)[I];
    if (!(D.isConst() && D.value == 1) && !(D == (*Out.shape)[I + Pad]))
      return false;
    if (D.isAny())
      return false;
  }
  return true;
}

/// Anchor operators and the attributes whose meaning the fused kernel
/// knows (anything else, e.g. a layout, disqualifies the call).
const std::set<std::string> *anchorAttrNames(const std::string &Op) {
  static const std::set<std::string> Conv = {
      "strides", "pads", "dilations", "group", "auto_pad", "kernel_shape"};
  static const std::set<std::string> BlockedConv = {
      "strides",      "pads",        "dilations",     "group",     "auto_pad",
      "kernel_shape", "data_layout", "kernel_layout", "out_layout"};
  static const std::set<std::string> None;
  if (Op == "conv")
    return &Conv;
  if (Op == "conv2d_nchwc")
    return &BlockedConv;
  if (Op == "matmul" || Op == "dense")
    return &None;
  return nullptr;
}

/// Multiply-adds below which a static dense/matmul is not worth a oneDNN
/// call (measured: a 256x16 by 16x16 matmul ran ~3x faster generated).
constexpr int64_t kMinAnchorWork = 1 << 16;
/// The same for the static extents of a matmul with dynamic ones.
constexpr int64_t kMinAnchorRowWork = 1 << 12;

} // namespace

bool isSmallAnchor(const CallNode &AC, bool Gpu) {
  // A small matmul costs less as a generated loop nest than the fixed cost
  // of a oneDNN call (primitive lookup, memory objects, stream). With
  // dynamic extents the static part of the work decides: a few rows of a
  // small matrix each (an RNN step's batch, a short sequence).
  const auto *Op = AC.callee->as<OpNode>();
  if (!Op || (Op->name() != "matmul" && Op->name() != "dense") ||
      AC.args.empty() || !AC.checkedType)
    return false;
  const auto *OutT = AC.checkedType->as<TensorTypeNode>();
  if (!OutT || !OutT->shape || AC.args.size() < 2)
    return false;
  // The reduction extent: x's last, or the weight's (dense: [N, K]; matmul:
  // [..., K, N]) where x's is not known (a loop's state).
  auto Extent = [](const TensorTypeNode *T, int64_t FromEnd) -> Dim {
    if (!T || !T->shape || (int64_t)T->shape->size() < FromEnd)
      return Dim::any();
    return (*T->shape)[T->shape->size() - (size_t)FromEnd];
  };
  Dim K = Extent(tensorType(AC.args[0]), 1);
  if (!K.isConst())
    K = Extent(tensorType(AC.args[1]), Op->name() == "dense" ? 1 : 2);
  if (!K.isConst())
    return false;
  int64_t Work = K.value;
  for (const Dim &D : *OutT->shape)
    if (D.isConst())
      Work *= D.value;
  if (Gpu && !OutT->isStatic())
    return false;
  return Work < (OutT->isStatic() ? kMinAnchorWork : kMinAnchorRowWork);
}

bool isAnchorOperator(const std::string &Op) {
  return anchorAttrNames(Op) != nullptr || Op == "batch_matmul";
}

std::optional<AnchorCall> selectAnchor(const Expr &FnE,
                                       const std::vector<Expr> &CallArgs) {
  if (!FnE || !isPrimitiveFunction(FnE))
    return std::nullopt;
  const auto &Fn = *FnE->as<FunctionNode>();
  // The body as a list of steps in evaluation order, each named by the node
  // its consumer refers to: the let's variable, or the call itself when it is
  // nested in another call (FuseOps keeps the importer's `add(conv(..), b)`).
  std::vector<std::pair<const ExprNode *, Expr>> Steps;
  std::function<void(const Expr &, const ExprNode *)> AddStep =
      [&](const Expr &V, const ExprNode *Name) {
        if (const auto *C = V->as<CallNode>())
          for (const Expr &A : C->args)
            if (A->as<CallNode>())
              AddStep(A, A.get());
        Steps.push_back({Name, V});
      };
  Expr E = Fn.body;
  while (const auto *L = E->as<LetNode>()) {
    AddStep(L->value, L->var.get());
    E = L->body;
  }
  if (Steps.empty() || E.get() != Steps.back().first)
    AddStep(E, nullptr);
  // Leaves are the function's parameters and constants: an argument
  // computed inside the group would need a kernel of its own.
  auto IsLeaf = [&](const Expr &A) {
    if (A->as<ConstantNode>())
      return true;
    return std::any_of(Fn.params.begin(), Fn.params.end(),
                       [&](const Var &P) { return P.get() == A.get(); });
  };

  // The anchor.
  std::string Anchor = opName(Steps[0].second);
  const std::set<std::string> *Allowed = anchorAttrNames(Anchor);
  if (!Allowed)
    return std::nullopt;
  const auto &AC = *Steps[0].second->as<CallNode>();
  for (const auto &[Name, V] : AC.attrs.items())
    if (!Allowed->count(Name))
      return std::nullopt;
  bool IsConv = Anchor == "conv" || Anchor == "conv2d_nchwc";
  size_t MaxArgs = IsConv ? 3 : 2;
  if (AC.args.size() < 2 || AC.args.size() > MaxArgs ||
      !std::all_of(AC.args.begin(), AC.args.end(), IsLeaf))
    return std::nullopt;
  const TensorTypeNode *OutT = tensorType(Steps[0].second);
  if (!OutT || OutT->dtype != DType::Float32 || !OutT->shape)
    return std::nullopt;
  for (const Expr &A : AC.args) {
    const TensorTypeNode *T = tensorType(A);
    if (!T || T->dtype != DType::Float32)
      return std::nullopt;
  }
  if (isSmallAnchor(AC))
    return std::nullopt;

  AnchorCall R;
  R.kernel = "dnnl." + Anchor + "_fused";
  R.attrs = AC.attrs;
  R.args = AC.args;
  // The weight is constant when it is a Constant here or at the call site.
  bool ConstantWeights = AC.args[1]->as<ConstantNode>() != nullptr;
  for (size_t I = 0; I < Fn.params.size() && I < CallArgs.size(); ++I)
    if (Fn.params[I].get() == AC.args[1].get() &&
        CallArgs.size() == Fn.params.size())
      ConstantWeights = CallArgs[I]->as<ConstantNode>() != nullptr;
  if (ConstantWeights)
    R.attrs.set("weights_constant", int64_t(1));

  // The tail: each step consumes the previous step's value exactly once.
  PostOps Post;
  const ExprNode *Prev = Steps[0].first;
  for (size_t I = 1; I < Steps.size(); ++I) {
    const Expr &V = Steps[I].second;
    PostOp::Kind K;
    if (!Prev || !postOpKindOf(opName(V), K))
      return std::nullopt;
    const auto &C = *V->as<CallNode>();
    for (const auto &[Name, Val] : C.attrs.items())
      if (K != PostOp::Kind::Clip || (Name != "min" && Name != "max"))
        return std::nullopt;
    auto IsPrev = [&](const Expr &A) { return A.get() == Prev; };
    PostOp P = makePostOp(K, C.attrs);
    if (P.isBinary()) {
      if (C.args.size() != 2 || IsPrev(C.args[0]) == IsPrev(C.args[1]))
        return std::nullopt;
      const Expr &Other = IsPrev(C.args[0]) ? C.args[1] : C.args[0];
      const TensorTypeNode *T = tensorType(Other);
      if (!IsLeaf(Other) || !T || T->dtype != DType::Float32 ||
          !broadcastsInto(*T, *OutT))
        return std::nullopt;
      R.args.push_back(Other);
    } else if (C.args.size() != 1 || !IsPrev(C.args[0])) {
      return std::nullopt;
    }
    Post.push_back(std::move(P));
    Prev = Steps[I].first;
  }
  encodePostOps(Post, R.attrs);
  return R;
}

} // namespace rivet::vm::compiler
