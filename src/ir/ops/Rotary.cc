//===- Rotary.cc - Rotary positional embedding ----------------------------===//
//
// rotary_embedding (ONNX RotaryEmbedding-23): x is [B, H, S, D] or, with
// num_heads, [B, S, H * D]; the first rotary_embedding_dim entries of each
// head are rotated by the angles of the token's position, read from cos and
// sin caches [max_position, rot / 2] at position_ids [B, S], or from caches
// [B, S, rot / 2] when there are no position ids.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

/// The dims of T when known, else nullopt.
const std::vector<Dim> *dimsOf(const TensorTypeNode &T) {
  return T.shape ? &*T.shape : nullptr;
}

/// Dim I of Dims, ? when the shape is unknown.
Dim dimAt(const std::vector<Dim> *Dims, size_t I) {
  return Dims ? (*Dims)[I] : Dim::any();
}

Type rotaryRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "rotary_embedding";
  validateOpAttrs(Op, A);
  if (Args.size() != 3 && Args.size() != 4)
    fail("{}: expects 3 or 4 arguments (x, cos_cache, sin_cache[, "
         "position_ids]), got {}",
         Op, Args.size());
  OpAttrs OA(Op, A);
  int64_t Heads = OA.getInt("num_heads"),
          Rot = OA.getInt("rotary_embedding_dim");
  if (Heads < 0 || Rot < 0 || Rot % 2 != 0)
    fail("{}: num_heads ({}) must be >= 0 and rotary_embedding_dim ({}) even "
         "and >= 0",
         Op, Heads, Rot);
  if (OA.getInt("interleaved") != 0 && OA.getInt("interleaved") != 1)
    fail("{}: attribute 'interleaved' must be 0 or 1, got {}", Op,
         OA.getInt("interleaved"));
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  for (size_t I : {size_t(1), size_t(2)})
    requireSameDType(Op, X, tensorArg(Op, Args, I), I);
  const std::vector<Dim> *XS = dimsOf(X);
  if (XS && XS->size() != 3 && XS->size() != 4)
    failArg(0, "{}: x must be [B, H, S, D] or [B, S, hidden], got {}", Op,
            typeStr(X));
  if (XS && XS->size() == 3 && Heads == 0)
    failArg(0, "{}: a 3-D x {} needs attribute 'num_heads'", Op, typeStr(X));
  // The head size, where known.
  Dim D = Dim::any();
  if (XS && XS->size() == 4)
    D = (*XS)[3];
  else if (XS && (*XS)[2].isConst()) {
    if ((*XS)[2].value % Heads != 0)
      failArg(0, "{}: num_heads {} does not divide the hidden size of {}", Op,
              Heads, typeStr(X));
    D = Dim::constant((*XS)[2].value / Heads);
  }
  if (D.isConst() && (Rot > D.value || (Rot == 0 && D.value % 2 != 0)))
    failArg(0,
            "{}: rotary_embedding_dim {} does not fit the head size {} (or "
            "the head size is odd)",
            Op, Rot, D.value);
  Dim Half = Rot > 0       ? Dim::constant(Rot / 2)
             : D.isConst() ? Dim::constant(D.value / 2)
                           : Dim::any();
  // Batch and sequence extents of x, for the caches and position ids.
  Dim B = dimAt(XS, 0), S = dimAt(XS, XS && XS->size() == 4 ? 2 : 1);
  bool WithIds = Args.size() == 4;
  if (WithIds) {
    const TensorTypeNode &P = tensorArg(Op, Args, 3);
    if (P.dtype != DType::Int64)
      failArg(3, "{}: position_ids must be int64, got {}", Op, typeStr(P));
    if (P.shape && (P.shape->size() != 2 || !mergeEqualDim((*P.shape)[0], B) ||
                    !mergeEqualDim((*P.shape)[1], S)))
      failArg(3, "{}: position_ids must be [B, S] of x {}, got {}", Op,
              typeStr(X), typeStr(P));
  }
  for (size_t I : {size_t(1), size_t(2)}) {
    const TensorTypeNode &Cache = tensorArg(Op, Args, I);
    if (!Cache.shape)
      continue;
    const std::vector<Dim> &CS = *Cache.shape;
    bool Ok = WithIds ? CS.size() == 2
                      : CS.size() == 3 && mergeEqualDim(CS[0], B) &&
                            mergeEqualDim(CS[1], S);
    if (!Ok || !mergeEqualDim(CS.back(), Half))
      failArg(I,
              "{}: the cache must be {} with a last extent of "
              "rotary_embedding_dim / 2 ({}), got {}",
              Op, WithIds ? "[max_position, rot / 2]" : "[B, S, rot / 2]",
              Half.str(), typeStr(Cache));
  }
  return std::make_shared<TensorTypeNode>(X.shape, X.dtype);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "rotary_embedding",
    "Rotary positional embedding (ONNX RotaryEmbedding): rotates the first "
    "rotary_embedding_dim entries of each head of x [B, H, S, D] (or [B, S, "
    "H*D] with num_heads) by cos/sin caches, at position_ids when given.",
    -1, rotaryRel, FusionPattern::Opaque});

} // namespace rivet::ir
