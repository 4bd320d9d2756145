//===- List.cc - Kernels of the operators on Lists of tensors -------------===//
//
// The executors pass a List's elements as the inputs of concat_list and turn
// the outputs of split_to_list into a List.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

namespace rivet::kernels {
namespace {

const KernelInfo &joinKernel(const Attrs &A) {
  bool NewAxis = attrInt("concat_list", A, "new_axis") != 0;
  return KernelRegistry::global().get(NewAxis ? "stack" : "concatenate");
}

/// concat_list delegates to concatenate/stack with the same axis.
Attrs joinAttrs(const Attrs &A) {
  return Attrs{{"axis", attrInt("concat_list", A, "axis")}};
}

std::vector<TensorMeta> concatListShape(const std::vector<Tensor> &In,
                                        const Attrs &A) {
  if (In.empty())
    fail("concat_list: the list is empty");
  return withOp("concat_list",
                [&] { return joinKernel(A).shapeFn(In, joinAttrs(A)); });
}

void concatListKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                      const Attrs &A) {
  withOp("concat_list", [&] { joinKernel(A).kernel(In, Out, joinAttrs(A)); });
}

/// Whether the joined list's bytes are its elements' bytes in order: no
/// extent of the result before the joined axis exceeds 1.
bool concatListJoinsBytes(const std::vector<Tensor> &In, const Attrs &A) {
  bool NewAxis = attrInt("concat_list", A, "new_axis") != 0;
  int64_t Rank = In[0].rank();
  int64_t Axis = normalizeAxis(attrInt("concat_list", A, "axis"),
                               NewAxis ? Rank + 1 : Rank);
  for (int64_t I = 0; I < Axis; ++I)
    if (In[0].dim(I) != 1)
      return false;
  return true;
}

/// The sizes of the pieces along the axis of extent Extent.
std::vector<int64_t> pieceSizes(const std::vector<Tensor> &In, int64_t Extent) {
  if (In.size() < 2)
    return std::vector<int64_t>((size_t)Extent, 1);
  const Tensor &S = In[1];
  if (S.rank() == 0) {
    int64_t Size = S.elementAsInt(0);
    if (Size <= 0)
      fail("split_to_list: split size must be positive, got {}", Size);
    std::vector<int64_t> R;
    for (int64_t Done = 0; Done < Extent; Done += Size)
      R.push_back(std::min(Size, Extent - Done));
    return R;
  }
  std::vector<int64_t> R = S.toIntVector();
  int64_t Sum = 0;
  for (int64_t V : R) {
    if (V < 0)
      fail("split_to_list: negative split size {}", V);
    Sum += V;
  }
  if (Sum != Extent)
    fail("split_to_list: split sizes add up to {}, the axis has extent {}", Sum,
         Extent);
  return R;
}

std::vector<TensorMeta> splitToListShape(const std::vector<Tensor> &In,
                                         const Attrs &A) {
  if (In.size() != 1 && In.size() != 2)
    fail("split_to_list: expected 1 or 2 inputs, got {}", In.size());
  const Tensor &X = In[0];
  if (X.rank() == 0)
    fail("split_to_list: cannot split a scalar");
  int64_t Axis = normalizeAxis(attrInt("split_to_list", A, "axis"), X.rank());
  bool KeepDims = In.size() == 2 || attrInt("split_to_list", A, "keepdims");
  std::vector<TensorMeta> R;
  for (int64_t Size : pieceSizes(In, X.dim(Axis))) {
    Shape S = X.shape();
    if (KeepDims)
      S[(size_t)Axis] = Size;
    else
      S.erase(S.begin() + Axis);
    R.push_back({S, X.dtype()});
  }
  return R;
}

void splitToListKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                       const Attrs &A) {
  const Tensor &X = In[0];
  int64_t Axis = normalizeAxis(attrInt("split_to_list", A, "axis"), X.rank());
  int64_t Outer = 1, Inner = (int64_t)dtypeSize(X.dtype());
  for (int64_t I = 0; I < Axis; ++I)
    Outer *= X.dim(I);
  for (int64_t I = Axis + 1; I < X.rank(); ++I)
    Inner *= X.dim(I);
  int64_t Extent = X.dim(Axis);
  const char *Src = static_cast<const char *>(X.rawData());
  std::vector<int64_t> Sizes = pieceSizes(In, Extent);
  int64_t Offset = 0;
  for (size_t P = 0; P < Out.size(); ++P) {
    int64_t Size = Sizes[P];
    char *Dst = static_cast<char *>(Out[P].rawData());
    for (int64_t B = 0; B < Outer; ++B)
      std::memcpy(Dst + B * Size * Inner, Src + (B * Extent + Offset) * Inner,
                  (size_t)(Size * Inner));
    Offset += Size;
  }
}

} // namespace

RIVET_REGISTER_JOIN_KERNEL("concat_list", concatListKernel, concatListShape,
                           concatListJoinsBytes);
RIVET_REGISTER_KERNEL("split_to_list", splitToListKernel, splitToListShape,
                      true);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS("concat_list",
                     {{"axis", AttrKind::Int, false, "the axis", 0},
                      {"new_axis", AttrKind::Int, false,
                       "1: stack along a new axis", 0}});
RIVET_REGISTER_ATTRS("split_to_list",
                     {{"axis", AttrKind::Int, false, "the axis", 0},
                      {"keepdims", AttrKind::Int, false, "keep the split axis",
                       1}});

} // namespace rivet::kernels
