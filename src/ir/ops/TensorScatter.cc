//===- TensorScatter.cc - KV-cache update ---------------------------------===//
//
// tensor_scatter (ONNX TensorScatter-24): the cache past[B, ..., M, ...]
// with update[B, ..., L, ...] (L <= M along axis) written at sequence
// positions write_indices[b] + 0..L-1 of each batch entry b (0 without
// write_indices); mode "circular" takes the positions modulo M.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

Type tensorScatterRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "tensor_scatter";
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (past_cache, update[, "
         "write_indices]), got {}",
         Op, Args.size());
  OpAttrs OA(Op, A);
  std::string Mode = OA.getString("mode");
  if (Mode != "linear" && Mode != "circular")
    fail("{}: attribute 'mode' must be \"linear\" or \"circular\", got \"{}\"",
         Op, Mode);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &Past = tensorArg(Op, Args, 0);
  const TensorTypeNode &Upd = tensorArg(Op, Args, 1);
  requireSameDType(Op, Past, Upd, 1);
  if (Past.shape && Upd.shape) {
    const std::vector<Dim> &P = *Past.shape, &U = *Upd.shape;
    if (P.size() != U.size())
      failArg(1, "{}: the update {} must have the rank of the cache {}", Op,
              typeStr(Upd), typeStr(Past));
    int64_t Axis = normalizeAxisFor(Op, OA.getInt("axis"), (int64_t)P.size());
    if (Axis == 0)
      fail("{}: axis must not be the batch axis 0", Op);
    for (size_t I = 0; I < P.size(); ++I) {
      bool Ok = (int64_t)I == Axis ? !(P[I].isConst() && U[I].isConst() &&
                                       U[I].value > P[I].value)
                                   : mergeEqualDim(P[I], U[I]).has_value();
      if (!Ok)
        failArg(1,
                "{}: the update {} must match the cache {} except along axis "
                "{}, where it must not be longer",
                Op, typeStr(Upd), typeStr(Past), Axis);
    }
  }
  if (Args.size() == 3) {
    const TensorTypeNode &W = tensorArg(Op, Args, 2);
    Dim B = Past.shape && !Past.shape->empty() ? (*Past.shape)[0] : Dim::any();
    if (W.dtype != DType::Int64 ||
        (W.shape && (W.shape->size() != 1 || !mergeEqualDim((*W.shape)[0], B))))
      failArg(2, "{}: write_indices must be int64 [batch], got {}", Op,
              typeStr(W));
  }
  return std::make_shared<TensorTypeNode>(Past.shape, Past.dtype);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "tensor_scatter",
    "KV-cache update (ONNX TensorScatter): past_cache with update written "
    "along axis at write_indices[b] + i for each batch entry b (positions "
    "modulo the cache length in mode circular).",
    -1, tensorScatterRel, FusionPattern::Opaque});

} // namespace rivet::ir
