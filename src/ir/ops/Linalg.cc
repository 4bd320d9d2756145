//===- Linalg.cc - Linear algebra operators -------------------------------===//
//
// dense, matmul (NumPy semantics), gemm and the integer/quantized matmuls.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

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
    failArg(1, "dense: the weight must have rank 2 ([N, K]), got {}",
            typeStr(W));
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

// gemm(a, b[, c]) -> [M, N] = alpha * op(a) @ op(b) + beta * c.
Type gemmRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "gemm";
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (a, b[, c]), got {}", Op, Args.size());
  bool TA = OpAttrs(Op, A).getInt("trans_a") != 0;
  bool TB = OpAttrs(Op, A).getInt("trans_b") != 0;
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &L = tensorArg(Op, Args, 0);
  const TensorTypeNode &R = tensorArg(Op, Args, 1);
  requireNumeric(Op, L, 0);
  requireSameDType(Op, L, R, 1);
  if (L.shape && L.shape->size() != 2)
    failArg(0, "{}: operands must have rank 2, got {}", Op, typeStr(L));
  if (R.shape && R.shape->size() != 2)
    failArg(1, "{}: operands must have rank 2, got {}", Op, typeStr(R));
  Dim M = L.shape ? (*L.shape)[TA ? 1 : 0] : Dim::any();
  Dim KA = L.shape ? (*L.shape)[TA ? 0 : 1] : Dim::any();
  Dim KB = R.shape ? (*R.shape)[TB ? 1 : 0] : Dim::any();
  Dim N = R.shape ? (*R.shape)[TB ? 0 : 1] : Dim::any();
  if (!mergeEqualDim(KA, KB))
    fail("{}: inner dimensions differ: {} (trans_a={}) and {} (trans_b={})", Op,
         typeStr(L), (int)TA, typeStr(R), (int)TB);
  if (Args.size() == 3) {
    const TensorTypeNode &C = tensorArg(Op, Args, 2);
    requireSameDType(Op, L, C, 2);
    if (C.shape) {
      const std::vector<Dim> &S = *C.shape;
      bool Ok = S.size() <= 2;
      Dim Target[2] = {M, N};
      for (size_t D = 0; Ok && D < S.size(); ++D) {
        const Dim &E = S[S.size() - 1 - D], &T = Target[1 - D];
        Ok =
            !(E.isConst() && E.value != 1 && T.isConst() && T.value != E.value);
      }
      if (!Ok)
        failArg(2, "{}: {} cannot be broadcast to the result ({}, {})", Op,
                typeStr(C), M.str(), N.str());
    }
  }
  return makeTensor(std::vector<Dim>{M, N}, L.dtype);
}

/// matmul's shape rule on a and b (b seen with a's dtype, since uint8 x int8
/// is allowed), with result dtype OutT.
Type integerMatmulShape(const Type &A, const TensorTypeNode &B, DType OutT) {
  const TensorTypeNode &L = *A->as<TensorTypeNode>();
  Type T = matmulRel({A, makeTensor(B.shape, L.dtype)}, {});
  return makeTensor(T->as<TensorTypeNode>()->shape, OutT);
}

Type matmulIntegerRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "matmul_integer";
  validateOpAttrs(Op, A);
  if (Args.size() < 2 || Args.size() > 4)
    fail("{}: expects 2 to 4 arguments (a, b[, a_zero_point[, b_zero_point]]), "
         "got {}",
         Op, Args.size());
  if (anyUndecided(Args))
    return nullptr;
  for (size_t I = 0; I < Args.size(); ++I)
    require8Bit(Op, tensorArg(Op, Args, I), I);
  return integerMatmulShape(Args[0], tensorArg(Op, Args, 1), DType::Int32);
}

Type qlinearMatmulRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "qlinear_matmul";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 8);
  if (anyUndecided(Args))
    return nullptr;
  for (size_t I : {0, 2, 3, 5, 7})
    require8Bit(Op, tensorArg(Op, Args, I), I);
  for (size_t I : {1, 4, 6})
    requireFloat(Op, tensorArg(Op, Args, I), I);
  return integerMatmulShape(Args[0], tensorArg(Op, Args, 3),
                            tensorArg(Op, Args, 7).dtype);
}

/// dense: x[..., K] @ w[N, K]^T.
std::optional<ChannelAxes> denseChannelAxes(const Attrs &, size_t WeightRank) {
  if (WeightRank != 2)
    return std::nullopt;
  return ChannelAxes{-1, 0, 1, false};
}

/// matmul with a matrix w[K, N]; batched weights have no one channel axis.
std::optional<ChannelAxes> matmulChannelAxes(const Attrs &, size_t WeightRank) {
  if (WeightRank != 2)
    return std::nullopt;
  return ChannelAxes{-1, 1, 0, false};
}

/// gemm: b[K, N], or b[N, K] with trans_b; a may be transposed (trans_a), so
/// its channels are not given.
std::optional<ChannelAxes> gemmChannelAxes(const Attrs &A, size_t WeightRank) {
  if (WeightRank != 2)
    return std::nullopt;
  return ChannelAxes{-1, OpAttrs("gemm", A).getInt("trans_b") == 0 ? 1u : 0u,
                     -1, false};
}

} // namespace

RIVET_REGISTER_OP(weightedAnchorOp(
    OpInfo{"dense", "Fully connected layer: x[..., K] @ w[N, K]^T.", 2,
           denseRel, FusionPattern::OutElementwiseFusable},
    denseChannelAxes));
RIVET_REGISTER_OP(
    weightedAnchorOp(OpInfo{"matmul",
                            "NumPy matrix product with 1-D promotion and batch "
                            "broadcasting.",
                            2, matmulRel, FusionPattern::OutElementwiseFusable},
                     matmulChannelAxes));
RIVET_REGISTER_OP(weightedAnchorOp(
    OpInfo{
        "gemm",
        "General matrix product (ONNX Gemm): alpha * op(a) @ op(b) + beta * c, "
        "c broadcast to [M, N].",
        -1, gemmRel, FusionPattern::OutElementwiseFusable},
    gemmChannelAxes));
RIVET_REGISTER_OP(OpInfo{
    "matmul_integer",
    "Integer matmul (ONNX MatMulInteger): 8-bit a and b minus optional zero "
    "points, NumPy matmul accumulated to int32.",
    -1, matmulIntegerRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "qlinear_matmul",
    "Quantized matmul (ONNX QLinearMatMul): integer matmul of zero-shifted "
    "operands, requantized to y_scale/y_zero_point.",
    8, qlinearMatmulRel, FusionPattern::Opaque});

} // namespace rivet::ir
