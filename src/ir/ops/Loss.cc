//===- Loss.cc - nll_loss and softmax_cross_entropy_loss
//-------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

/// Checks input [N, C, d...], target [N, d...], weight [C]; returns the
/// type of the loss.
template <OpName Name>
Type lossType(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments, got {}", Op, Args.size());
  std::string R = OpAttrs(Op, A).getString("reduction");
  if (R != "none" && R != "sum" && R != "mean")
    fail("{}: attribute 'reduction' must be none, sum or mean, got '{}'", Op,
         R);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  const TensorTypeNode &T = tensorArg(Op, Args, 1);
  requireFloat(Op, X, 0);
  requireIndex(Op, T, 1);
  if (X.shape && X.shape->size() < 2)
    failArg(0, "{}: expects an input of shape [N, C, ...], got {}", Op,
            typeStr(X));
  if (X.shape && T.shape && T.shape->size() + 1 != X.shape->size())
    failArg(1, "{}: target {} must have rank {} for input {}", Op, typeStr(T),
            X.shape->size() - 1, typeStr(X));
  std::optional<std::vector<Dim>> L;
  if (X.shape) {
    L = *X.shape;
    L->erase(L->begin() + 1);
    if (T.shape)
      for (size_t I = 0; I < L->size(); ++I) {
        std::optional<Dim> M = mergeEqualDim((*L)[I], (*T.shape)[I]);
        if (!M)
          failArg(1, "{}: target {} does not match input {}", Op, typeStr(T),
                  typeStr(X));
        (*L)[I] = *M;
      }
  } else {
    L = T.shape;
  }
  if (Args.size() == 3) {
    const TensorTypeNode &W = tensorArg(Op, Args, 2);
    requireSameDType(Op, X, W, 2);
    if (W.shape && W.shape->size() != 1)
      failArg(2, "{}: weight must be 1-D, got {}", Op, typeStr(W));
    if (W.shape && X.shape && !mergeEqualDim((*W.shape)[0], (*X.shape)[1]))
      failArg(2, "{}: weight {} does not match the classes of input {}", Op,
              typeStr(W), typeStr(X));
  }
  if (R != "none")
    L = std::vector<Dim>{};
  return makeTensor(L, X.dtype);
}

Type nllRel(const std::vector<Type> &Args, const Attrs &A) {
  return lossType<"nll_loss">(Args, A);
}

Type sceRel(const std::vector<Type> &Args, const Attrs &A) {
  Type L = lossType<"softmax_cross_entropy_loss">(Args, A);
  if (!L)
    return nullptr;
  const TensorTypeNode &X = *Args[0]->as<TensorTypeNode>();
  return tupleType({L, makeTensor(X.shape, X.dtype)});
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "nll_loss",
    "Negative log-likelihood of log-probabilities [N, C, ...] at int targets.\n"
    "Optional class weights, ignore_index and reduction as in ONNX.",
    -1, nllRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "softmax_cross_entropy_loss",
    "nll_loss of log_softmax(scores, axis 1); returns (loss, log_prob).\n"
    "Optional class weights, ignore_index and reduction as in ONNX.",
    -1, sceRel, FusionPattern::Opaque});

} // namespace rivet::ir
