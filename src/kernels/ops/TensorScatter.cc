//===- TensorScatter.cc - KV-cache update kernel --------------------------===//
//
// tensor_scatter copies the cache, then each run of update along axis (the
// elements past axis are contiguous in both) to its sequence position. Any
// dtype: elements are moved, not computed with.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

namespace rivet::kernels {
namespace {

constexpr const char *TensorScatterOp = "tensor_scatter";

/// Validates the inputs; returns the normalized axis.
int64_t scatterAxis(const std::vector<Tensor> &In, const Attrs &A) {
  if (In.size() != 2 && In.size() != 3)
    fail("{}: expected 2 or 3 inputs (past_cache, update[, write_indices]), "
         "got {}",
         TensorScatterOp, In.size());
  const Tensor &Past = In[0], &Upd = In[1];
  checkSameDType(TensorScatterOp, "past_cache", Past, "update", Upd);
  std::string Mode = attrString(TensorScatterOp, A, "mode");
  if (Mode != "linear" && Mode != "circular")
    fail("{}: attribute 'mode' must be \"linear\" or \"circular\", got \"{}\"",
         TensorScatterOp, Mode);
  int64_t Axis =
      opAxis(TensorScatterOp, attrInt(TensorScatterOp, A, "axis"), Past.rank());
  if (Axis == 0)
    fail("{}: axis must not be the batch axis 0", TensorScatterOp);
  bool Ok = Upd.rank() == Past.rank();
  for (int64_t I = 0; Ok && I < Past.rank(); ++I)
    Ok = I == Axis ? Upd.shape()[I] <= Past.shape()[I]
                   : Upd.shape()[I] == Past.shape()[I];
  if (!Ok)
    fail("{}: update {} must match past_cache {} except along axis {}, where "
         "it must not be longer",
         TensorScatterOp, shapeToString(Upd.shape()),
         shapeToString(Past.shape()), Axis);
  if (In.size() == 3 && (In[2].dtype() != DType::Int64 ||
                         In[2].shape() != Shape{Past.shape()[0]}))
    fail("{}: input 'write_indices' must be int64 ({},), got {}",
         TensorScatterOp, Past.shape()[0], In[2].typeString());
  return Axis;
}

std::vector<TensorMeta> scatterShape(const std::vector<Tensor> &In,
                                     const Attrs &A) {
  scatterAxis(In, A);
  return {{In[0].shape(), In[0].dtype()}};
}

void scatterKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                   const Attrs &A) {
  const Tensor &Past = In[0], &Upd = In[1];
  size_t Axis = (size_t)scatterAxis(In, A);
  bool Circular = attrString(TensorScatterOp, A, "mode") == "circular";
  const Shape &PS = Past.shape();
  int64_t B = PS[0], Max = PS[Axis], Len = Upd.shape()[Axis];
  // Per batch entry, Outer runs of the sequence axis, each of Len (update)
  // or Max (cache) rows of Inner elements.
  int64_t Outer = prodRange(PS, 1, Axis),
          Inner = prodRange(PS, Axis + 1, PS.size());
  size_t ESize = dtypeSize(Past.dtype());
  size_t RowBytes = (size_t)Inner * ESize;
  if (Past.nbytes())
    std::memcpy(Out[0].rawData(), Past.rawData(), Past.nbytes());
  const char *U = static_cast<const char *>(Upd.rawData());
  char *Y = static_cast<char *>(Out[0].rawData());
  for (int64_t Bi = 0; Bi < B; ++Bi) {
    int64_t Start = In.size() == 3 ? In[2].data<int64_t>()[Bi] : 0;
    for (int64_t L = 0; L < Len; ++L) {
      int64_t Pos = Start + L;
      if (Circular)
        Pos = ((Pos % Max) + Max) % Max;
      else if (Pos < 0 || Pos >= Max)
        fail("{}: write position {} (write index {} + {}) of batch entry {} "
             "is outside the cache of {} positions",
             TensorScatterOp, Pos, Start, L, Bi, Max);
      for (int64_t O = 0; O < Outer; ++O) {
        int64_t Run = Bi * Outer + O;
        std::memcpy(Y + (size_t)((Run * Max + Pos) * Inner) * ESize,
                    U + (size_t)((Run * Len + L) * Inner) * ESize, RowBytes);
      }
    }
  }
}

} // namespace

RIVET_REGISTER_KERNEL("tensor_scatter", scatterKernel, scatterShape, false);

RIVET_REGISTER_ATTRS(
    "tensor_scatter",
    {{"axis", AttrKind::Int, false, "the sequence axis (not 0, the batch)", -2},
     {"mode", AttrKind::String, false,
      "linear: positions must fit the cache; circular: modulo its length",
      "linear"}});

} // namespace rivet::kernels
