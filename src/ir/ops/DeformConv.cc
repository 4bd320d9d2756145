//===- DeformConv.cc - deform_conv ----------------------------------------===//
#include "ir/ops/RelationUtil.h"
#include "kernels/WindowGeometry.h"

namespace rivet::ir {
namespace {

/// Argument I's shape padded to Rank unknown dims when its rank is unknown;
/// an error naming What when its rank is not Rank.
std::vector<Dim> dimsOf(const TensorTypeNode &T, size_t I, size_t Rank,
                        const char *What) {
  if (!T.shape)
    return std::vector<Dim>(Rank, Dim::any());
  if (T.shape->size() != Rank)
    failArg(I, "deform_conv: {} must have rank {}, got {}", What, Rank,
            typeStr(T));
  return *T.shape;
}

// deform_conv(x[N, C, D...], w[M, C/group, k...], offset[N, G*prod(k)*r,
// O...], b[M] | [0], mask[N, G*prod(k), O...] | [0]) -> [N, M, O...].
Type deformConvRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "deform_conv";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 5);
  int64_t Group = OpAttrs(Op, A).getInt("group");
  int64_t OffsetGroup = OpAttrs(Op, A).getInt("offset_group");
  if (Group < 1 || OffsetGroup < 1)
    fail("{}: group and offset_group must be positive, got {} and {}", Op,
         Group, OffsetGroup);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  for (size_t I = 1; I < 5; ++I)
    requireSameDType(Op, X, tensorArg(Op, Args, I), I);
  std::optional<std::vector<int64_t>> KAttr = optInts(A, "kernel_shape");
  std::optional<size_t> Rank;
  for (size_t I : {0, 1, 2})
    if (const TensorTypeNode &T = tensorArg(Op, Args, I); T.shape)
      Rank = T.shape->size();
  if (!Rank && KAttr)
    Rank = KAttr->size() + 2;
  if (!Rank)
    return tensorTypeUnknownRank(X.dtype);
  if (*Rank < 3)
    fail("{}: the input must be [N, C, D1, ...], got rank {}", Op, *Rank);
  size_t R = *Rank - 2;
  std::vector<Dim> XS = dimsOf(X, 0, *Rank, "the input");
  std::vector<Dim> WS = dimsOf(tensorArg(Op, Args, 1), 1, *Rank, "the weight");
  std::vector<Dim> OS = dimsOf(tensorArg(Op, Args, 2), 2, *Rank, "the offsets");
  if (KAttr && KAttr->size() != R)
    fail("{}: attribute 'kernel_shape' must have {} entries, got {}", Op, R,
         KAttr->size());
  std::vector<int64_t> Strides = windowInts(Op, A, "strides", R, 1, 1);
  std::vector<int64_t> Dilations = windowInts(Op, A, "dilations", R, 1, 1);
  std::vector<int64_t> Pads = windowInts(Op, A, "pads", 2 * R, 0, 0);
  if (XS[1].isConst() && WS[1].isConst() && WS[1].value * Group != XS[1].value)
    fail("{}: the weight {} expects {} input channels (group {}), the input "
         "{} has {}",
         Op, typeStr(tensorArg(Op, Args, 1)), WS[1].value * Group, Group,
         typeStr(X), XS[1].value);
  std::vector<Dim> Out{XS[0], WS[0]};
  for (size_t I = 0; I < R; ++I) {
    int64_t K = KAttr                 ? (*KAttr)[I]
                : WS[I + 2].isConst() ? WS[I + 2].value
                                      : -1;
    Dim O = OS[I + 2];
    if (K >= 0 && XS[I + 2].isConst()) {
      int64_t V =
          constWindowAxis(Op, I, XS[I + 2].value, K, Strides[I], Dilations[I],
                          Pads[I], Pads[I + R], AutoPad::NotSet, false)
              .out;
      std::optional<Dim> M = mergeEqualDim(O, Dim::constant(V));
      if (!M)
        failArg(2,
                "{}: the offsets {} do not have the output extent {} along "
                "spatial axis {}",
                Op, typeStr(tensorArg(Op, Args, 2)), V, I);
      O = *M;
    }
    Out.push_back(O);
  }
  if (std::optional<Dim> N = mergeEqualDim(Out[0], OS[0]))
    Out[0] = *N;
  else
    fail("{}: the input and the offsets disagree on the batch size", Op);
  return makeTensor(Out, X.dtype);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "deform_conv",
    "Deformable convolution (ONNX DeformConv): conv whose window taps are\n"
    "moved by per-position offsets (bilinear sampling, zero outside) and\n"
    "scaled by an optional mask; empty b and mask are absent.",
    5, deformConvRel, FusionPattern::Opaque});

} // namespace rivet::ir
