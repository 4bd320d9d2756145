//===- Linalg.cc - Linear algebra operators -------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

Type makeTensor(const std::optional<std::vector<Dim>> &Shape, DType T) {
  return std::make_shared<TensorTypeNode>(Shape, T);
}

// dense(x[..., K], w[N, K]) -> [..., N] = x @ w^T.
Type denseRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("dense", A);
  checkArity("dense", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("dense", Args, 0);
  const TensorTypeNode &W = tensorArg("dense", Args, 1);
  requireFloat("dense", X, 0);
  requireSameDType("dense", X, W, 1);
  if (X.shape && X.shape->empty())
    failArg(0, "dense: the input must have rank >= 1, got {}", typeStr(X));
  if (W.shape && W.shape->size() != 2)
    failArg(1, "dense: the weight must have rank 2 ([N, K]), got {}", typeStr(W));
  if (!X.shape)
    return tensorTypeUnknownRank(X.dtype);
  Dim N = W.shape ? (*W.shape)[0] : Dim::any();
  if (W.shape && !mergeEqualDim(X.shape->back(), (*W.shape)[1]))
    fail("dense: inner dimensions differ: {} and {}", typeStr(X), typeStr(W));
  std::vector<Dim> Out(X.shape->begin(), X.shape->end() - 1);
  Out.push_back(N);
  return makeTensor(Out, X.dtype);
}

// NumPy matmul: 1-D operands are promoted (a: prepend 1, b: append 1) and
// the added dimension removed; batch dimensions broadcast.
Type matmulRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("matmul", A);
  checkArity("matmul", Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &L = tensorArg("matmul", Args, 0);
  const TensorTypeNode &R = tensorArg("matmul", Args, 1);
  requireNumeric("matmul", L, 0);
  requireSameDType("matmul", L, R, 1);
  if (L.shape && L.shape->empty())
    failArg(0, "matmul: operands must have rank >= 1, got {}", typeStr(L));
  if (R.shape && R.shape->empty())
    failArg(1, "matmul: operands must have rank >= 1, got {}", typeStr(R));
  if (!L.shape || !R.shape)
    return tensorTypeUnknownRank(L.dtype);
  std::vector<Dim> SA = *L.shape, SB = *R.shape;
  bool VecA = SA.size() == 1, VecB = SB.size() == 1;
  if (VecA)
    SA.insert(SA.begin(), Dim::constant(1));
  if (VecB)
    SB.push_back(Dim::constant(1));
  const Dim &KA = SA.back(), &KB = SB[SB.size() - 2];
  if (!mergeEqualDim(KA, KB))
    fail("matmul: inner dimensions differ: {} and {}", typeStr(L), typeStr(R));
  // Batch dims: everything but the last two, broadcast.
  auto BatchA = std::make_shared<TensorTypeNode>(
      std::vector<Dim>(SA.begin(), SA.end() - 2), L.dtype);
  auto BatchB = std::make_shared<TensorTypeNode>(
      std::vector<Dim>(SB.begin(), SB.end() - 2), R.dtype);
  std::vector<Dim> Out;
  try {
    Out = *broadcastArgs("matmul", {BatchA.get(), BatchB.get()});
  } catch (const Error &) {
    fail("matmul: batch dimensions cannot be broadcast: {} and {}", typeStr(L),
         typeStr(R));
  }
  if (!VecA)
    Out.push_back(SA[SA.size() - 2]);
  if (!VecB)
    Out.push_back(SB.back());
  return makeTensor(Out, L.dtype);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{"dense", "Fully connected layer: x[..., K] @ w[N, K]^T.", 2,
                         {}, denseRel, FusionPattern::OutElementwiseFusable});
RIVET_REGISTER_OP(OpInfo{"matmul",
                         "NumPy matrix product with 1-D promotion and batch "
                         "broadcasting.",
                         2, {}, matmulRel, FusionPattern::OutElementwiseFusable});

} // namespace rivet::ir
