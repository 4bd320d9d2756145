//===- Indexing.cc - Gather, scatter and index-producing operators --------===//
//
// gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot(_dyn),
// compress, nonzero and reverse_sequence. Index values are checked by the
// kernels; the relations check dtypes, ranks and the known extents.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

// Shared by gather_elements and scatter_elements: indices has data's rank.
void checkElementsArgs(std::string_view Op, const TensorTypeNode &Data,
                       const TensorTypeNode &Idx, int64_t Axis) {
  requireIndex(Op, Idx, 1);
  if (!Data.shape)
    return;
  int64_t Rank = (int64_t)Data.shape->size();
  if (Rank == 0)
    failArg(0, "{}: data must have rank >= 1, got {}", Op, typeStr(Data));
  normalizeAxisFor(Op, Axis, Rank);
  if (Idx.shape && (int64_t)Idx.shape->size() != Rank)
    failArg(1, "{}: indices {} must have the rank of data {}", Op, typeStr(Idx),
            typeStr(Data));
}

// gather_elements(data, indices; axis): the result has the indices' shape.
Type gatherElementsRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("gather_elements", A);
  checkArity("gather_elements", Args, 2);
  int64_t Axis = OpAttrs("gather_elements", A).getInt("axis");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("gather_elements", Args, 0);
  const TensorTypeNode &Idx = tensorArg("gather_elements", Args, 1);
  checkElementsArgs("gather_elements", X, Idx, Axis);
  return makeTensor(Idx.shape, X.dtype);
}

// gather_nd(data, indices; batch_dims):
// indices.shape[:-1] ++ data.shape[batch_dims + indices.shape[-1]:].
Type gatherNdRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("gather_nd", A);
  checkArity("gather_nd", Args, 2);
  int64_t B = OpAttrs("gather_nd", A).getInt("batch_dims");
  if (B < 0)
    fail("gather_nd: attribute 'batch_dims' must be non-negative, got {}", B);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("gather_nd", Args, 0);
  const TensorTypeNode &Idx = tensorArg("gather_nd", Args, 1);
  requireIndex("gather_nd", Idx, 1);
  if (!X.shape || !Idx.shape)
    return tensorTypeUnknownRank(X.dtype);
  int64_t R = (int64_t)X.shape->size(), Q = (int64_t)Idx.shape->size();
  if (Q < 1)
    failArg(1, "gather_nd: indices must have rank >= 1, got {}", typeStr(Idx));
  if (B >= std::min(R, Q))
    fail("gather_nd: batch_dims {} must be less than the ranks of data {} and "
         "indices {}",
         B, typeStr(X), typeStr(Idx));
  const Dim &Last = Idx.shape->back();
  if (!Last.isConst())
    return tensorTypeUnknownRank(X.dtype);
  if (Last.value < 1 || Last.value > R - B)
    failArg(1,
            "gather_nd: the last extent of indices {} must be in [1, {}] "
            "for data {}",
            typeStr(Idx), R - B, typeStr(X));
  std::vector<Dim> Out(Idx.shape->begin(), Idx.shape->end() - 1);
  for (int64_t I = 0; I < B; ++I) {
    std::optional<Dim> M = mergeEqualDim(Out[I], (*X.shape)[I]);
    if (!M)
      failArg(1, "gather_nd: batch dimension {} differs: {} and {}", I,
              typeStr(X), typeStr(Idx));
    Out[I] = *M;
  }
  Out.insert(Out.end(), X.shape->begin() + B + Last.value, X.shape->end());
  return makeTensor(Out, X.dtype);
}

void checkReduction(std::string_view Op, const Attrs &A) {
  std::string R = OpAttrs(Op, A).getString("reduction");
  if (R != "none" && R != "add" && R != "mul" && R != "max" && R != "min")
    fail("{}: attribute 'reduction' must be none, add, mul, max or min, got "
         "'{}'",
         Op, R);
}

// scatter_elements(data, indices, updates; axis, reduction): data's type.
Type scatterElementsRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("scatter_elements", A);
  checkArity("scatter_elements", Args, 3);
  checkReduction("scatter_elements", A);
  int64_t Axis = OpAttrs("scatter_elements", A).getInt("axis");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("scatter_elements", Args, 0);
  const TensorTypeNode &Idx = tensorArg("scatter_elements", Args, 1);
  const TensorTypeNode &U = tensorArg("scatter_elements", Args, 2);
  checkElementsArgs("scatter_elements", X, Idx, Axis);
  requireSameDType("scatter_elements", X, U, 2);
  if (Idx.shape && U.shape) {
    bool Ok = Idx.shape->size() == U.shape->size();
    for (size_t I = 0; Ok && I < Idx.shape->size(); ++I)
      Ok = mergeEqualDim((*Idx.shape)[I], (*U.shape)[I]).has_value();
    if (!Ok)
      failArg(2,
              "scatter_elements: updates {} must have the shape of indices {}",
              typeStr(U), typeStr(Idx));
  }
  return makeTensor(X.shape, X.dtype);
}

// scatter_nd(data, indices, updates; reduction): data's type.
Type scatterNdRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("scatter_nd", A);
  checkArity("scatter_nd", Args, 3);
  checkReduction("scatter_nd", A);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("scatter_nd", Args, 0);
  const TensorTypeNode &Idx = tensorArg("scatter_nd", Args, 1);
  const TensorTypeNode &U = tensorArg("scatter_nd", Args, 2);
  requireIndex("scatter_nd", Idx, 1);
  requireSameDType("scatter_nd", X, U, 2);
  if (X.shape && Idx.shape && U.shape && Idx.shape->size() >= 1 &&
      Idx.shape->back().isConst()) {
    int64_t K = Idx.shape->back().value, R = (int64_t)X.shape->size();
    if (K < 1 || K > R)
      failArg(1, "scatter_nd: the last extent of indices {} must be in [1, {}]",
              typeStr(Idx), R);
    size_t Expected = Idx.shape->size() - 1 + (size_t)(R - K);
    if (U.shape->size() != Expected)
      failArg(2,
              "scatter_nd: updates {} must have rank {} for data {} and "
              "indices {}",
              typeStr(U), Expected, typeStr(X), typeStr(Idx));
  }
  return makeTensor(X.shape, X.dtype);
}

// one_hot(indices, values; depth, axis): a new axis of extent depth.
Type oneHotCommon(std::string_view Op, const TensorTypeNode &Idx,
                  const TensorTypeNode &V, size_t ValuesArg, Dim Depth,
                  int64_t Axis) {
  requireNumeric(Op, Idx, 0);
  if (V.shape && (V.shape->size() != 1 ||
                  ((*V.shape)[0].isConst() && (*V.shape)[0].value != 2)))
    failArg(ValuesArg, "{}: values must be [off, on] (shape (2,)), got {}", Op,
            typeStr(V));
  if (!Idx.shape)
    return tensorTypeUnknownRank(V.dtype);
  int64_t R = (int64_t)Idx.shape->size() + 1;
  int64_t Ax = normalizeAxisFor(Op, Axis, R);
  std::vector<Dim> Out = *Idx.shape;
  Out.insert(Out.begin() + Ax, Depth);
  return makeTensor(Out, V.dtype);
}

Type oneHotRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("one_hot", A);
  checkArity("one_hot", Args, 2);
  int64_t Depth = *optInt(A, "depth");
  if (Depth < 1)
    fail("one_hot: attribute 'depth' must be positive, got {}", Depth);
  if (anyUndecided(Args))
    return nullptr;
  return oneHotCommon("one_hot", tensorArg("one_hot", Args, 0),
                      tensorArg("one_hot", Args, 1), 1, Dim::constant(Depth),
                      OpAttrs("one_hot", A).getInt("axis"));
}

Type oneHotDynRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("one_hot_dyn", A);
  checkArity("one_hot_dyn", Args, 3);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &D = tensorArg("one_hot_dyn", Args, 1);
  requireNumeric("one_hot_dyn", D, 1);
  if (D.shape && D.shape->size() > 1)
    failArg(1, "one_hot_dyn: depth must be a scalar, got {}", typeStr(D));
  return oneHotCommon("one_hot_dyn", tensorArg("one_hot_dyn", Args, 0),
                      tensorArg("one_hot_dyn", Args, 2), 2, Dim::any(),
                      OpAttrs("one_hot_dyn", A).getInt("axis"));
}

// compress(x, condition; axis?): the selected extent is data-dependent.
Type compressRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("compress", A);
  checkArity("compress", Args, 2);
  std::optional<int64_t> Axis = optInt(A, "axis");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("compress", Args, 0);
  const TensorTypeNode &C = tensorArg("compress", Args, 1);
  requireBool("compress", C, 1);
  if (C.shape && C.shape->size() != 1)
    failArg(1, "compress: condition must be 1-D, got {}", typeStr(C));
  if (!Axis)
    return tensorType({Dim::any()}, X.dtype);
  if (!X.shape)
    return tensorTypeUnknownRank(X.dtype);
  int64_t Ax = normalizeAxisFor("compress", *Axis, (int64_t)X.shape->size());
  std::vector<Dim> Out = *X.shape;
  Out[Ax] = Dim::any();
  return makeTensor(Out, X.dtype);
}

// nonzero(x): int64 (rank, number of non-zeros).
Type nonzeroRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("nonzero", A);
  checkArity("nonzero", Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("nonzero", Args, 0);
  Dim R = X.shape ? Dim::constant((int64_t)X.shape->size()) : Dim::any();
  return tensorType({R, Dim::any()}, DType::Int64);
}

Type reverseSequenceRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("reverse_sequence", A);
  checkArity("reverse_sequence", Args, 2);
  OpAttrs OA("reverse_sequence", A);
  int64_t BAx = OA.getInt("batch_axis");
  int64_t TAx = OA.getInt("time_axis");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("reverse_sequence", Args, 0);
  const TensorTypeNode &L = tensorArg("reverse_sequence", Args, 1);
  requireIndex("reverse_sequence", L, 1);
  if (L.shape && L.shape->size() != 1)
    failArg(1, "reverse_sequence: sequence_lens must be 1-D, got {}",
            typeStr(L));
  if (X.shape) {
    int64_t R = (int64_t)X.shape->size();
    if (R < 2)
      failArg(0, "reverse_sequence: the input must have rank >= 2, got {}",
              typeStr(X));
    int64_t B = normalizeAxisFor("reverse_sequence", BAx, R);
    int64_t T = normalizeAxisFor("reverse_sequence", TAx, R);
    if (B == T)
      fail(
          "reverse_sequence: batch_axis and time_axis must differ, both are {}",
          B);
    if (L.shape && !mergeEqualDim((*L.shape)[0], (*X.shape)[B]))
      failArg(1,
              "reverse_sequence: sequence_lens {} needs one entry per batch "
              "of {}",
              typeStr(L), typeStr(X));
  }
  return makeTensor(X.shape, X.dtype);
}

constexpr auto Inj = FusionPattern::Injective;

} // namespace

RIVET_REGISTER_OP(OpInfo{"gather_elements",
                         "out[i][j][k] = data[index][j][k] (axis 0), index = "
                         "indices[i][j][k]: ONNX GatherElements.",
                         2, gatherElementsRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "gather_nd",
    "Gathers slices of data addressed by the index tuples in the "
    "last axis of indices (ONNX GatherND).",
    2, gatherNdRel, Inj});
RIVET_REGISTER_OP(OpInfo{"scatter_elements",
                         "A copy of data with updates written (or reduced) at "
                         "indices along an axis (ONNX ScatterElements).",
                         3, scatterElementsRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "scatter_nd",
    "A copy of data with update slices written (or reduced) at "
    "the index tuples (ONNX ScatterND).",
    3, scatterNdRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "one_hot",
    "values[1] where the new axis equals the index, values[0] "
    "elsewhere (ONNX OneHot, constant depth).",
    2, oneHotRel, Inj});
RIVET_REGISTER_OP(OpInfo{
    "one_hot_dyn",
    "ONNX OneHot with depth as a scalar tensor; the new axis "
    "has a data-dependent extent.",
    3, oneHotDynRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "compress",
    "Keeps the slices along axis (or elements of the flattened "
    "input) where condition is true.",
    2, compressRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "nonzero",
    "Indices of the non-zero elements, one column per element: "
    "int64 (rank, count).",
    1, nonzeroRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{"reverse_sequence",
                         "Reverses the first sequence_lens[b] entries along "
                         "time_axis for each batch b.",
                         2, reverseSequenceRel, Inj});

} // namespace rivet::ir
