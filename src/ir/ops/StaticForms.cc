//===- StaticForms.cc - Static operators for dynamic calls ----------------===//
#include "ir/ops/StaticForms.h"

#include "ir/Op.h"
#include "kernels/AttrSchema.h"

#include <optional>

namespace rivet::ir {
namespace {

using Ints = std::vector<int64_t>;

const Tensor *constantArg(const CallNode &C, size_t I) {
  if (I >= C.args.size())
    return nullptr;
  const auto *K = C.args[I]->as<ConstantNode>();
  return K ? &K->value : nullptr;
}

/// A constant 1-D (or scalar) integer argument as int64s.
std::optional<Ints> constantInts(const CallNode &C, size_t I) {
  const Tensor *T = constantArg(C, I);
  if (!T || !isInteger(T->dtype()) || T->rank() > 1)
    return std::nullopt;
  return T->toIntVector();
}

/// A constant one-element argument; Empty is set for a zero-element one
/// (how the dynamic operators spell an absent optional input).
const Tensor *constantScalar(const CallNode &C, size_t I, bool &Empty) {
  const Tensor *T = constantArg(C, I);
  Empty = T && T->numel() == 0;
  return T && T->numel() == 1 ? T : nullptr;
}

Attrs with(Attrs A, const std::string &Name, AttrValue V) {
  A.set(Name, std::move(V));
  return A;
}

Expr reshapeDyn(const CallNode &C) {
  std::optional<Ints> Shape = constantInts(C, 1);
  if (!Shape)
    return nullptr;
  // With allowzero a 0 is a literal extent, which `reshape` cannot express.
  if (OpAttrs("reshape_dyn", C.attrs).getInt("allowzero") != 0)
    for (int64_t D : *Shape)
      if (D == 0)
        return nullptr;
  return callOp("reshape", {C.args[0]}, Attrs{{"newshape", *Shape}});
}

/// squeeze_dyn, unsqueeze_dyn, expand_dyn, tile_dyn: one int list input.
Expr listToAttr(const CallNode &C, const char *Op, const char *Attr) {
  std::optional<Ints> V = constantInts(C, 1);
  if (!V)
    return nullptr;
  return callOp(Op, {C.args[0]}, Attrs{{Attr, *V}});
}

Expr sliceDyn(const CallNode &C) {
  std::optional<Ints> Starts = constantInts(C, 1), Ends = constantInts(C, 2);
  if (!Starts || !Ends)
    return nullptr;
  Attrs A{{"begin", *Starts}, {"end", *Ends}};
  if (C.args.size() > 3) {
    std::optional<Ints> Axes = constantInts(C, 3);
    if (!Axes)
      return nullptr;
    A.set("axes", *Axes);
  }
  if (C.args.size() > 4) {
    std::optional<Ints> Steps = constantInts(C, 4);
    if (!Steps)
      return nullptr;
    A.set("strides", *Steps);
  }
  return callOp("strided_slice", {C.args[0]}, A);
}

Expr padDyn(const CallNode &C) {
  std::optional<Ints> Pads = constantInts(C, 1);
  if (!Pads)
    return nullptr;
  Attrs A{{"pads", *Pads},
          {"mode", OpAttrs("pad_dyn", C.attrs).getString("mode")}};
  if (C.args.size() > 2) {
    bool Empty;
    const Tensor *V = constantScalar(C, 2, Empty);
    if (!V)
      return nullptr;
    A.set("value", V->elementAsDouble(0));
  }
  if (C.args.size() > 3) {
    std::optional<Ints> Axes = constantInts(C, 3);
    if (!Axes)
      return nullptr;
    A.set("axes", *Axes);
  }
  return callOp("pad", {C.args[0]}, A);
}

Expr splitDyn(const CallNode &C) {
  std::optional<Ints> Sizes = constantInts(C, 1);
  if (!Sizes || Sizes->empty() || !C.attrs.has("num_outputs") ||
      (int64_t)Sizes->size() != C.attrs.getInt("num_outputs"))
    return nullptr;
  // split's last part is the remainder: the sizes must add up to the extent,
  // which split_dyn checks at run time and the type must prove here.
  const auto *T = C.args[0]->checkedType
                      ? C.args[0]->checkedType->as<TensorTypeNode>()
                      : nullptr;
  int64_t Axis = OpAttrs("split_dyn", C.attrs).getInt("axis");
  if (!T || !T->shape)
    return nullptr;
  int64_t Rank = (int64_t)T->shape->size();
  if (Axis < -Rank || Axis >= Rank)
    return nullptr;
  const Dim &D = (*T->shape)[Axis < 0 ? Axis + Rank : Axis];
  Ints Points;
  int64_t Sum = 0;
  for (size_t I = 0; I < Sizes->size(); ++I) {
    if ((*Sizes)[I] < 0)
      return nullptr;
    Sum += (*Sizes)[I];
    if (I + 1 < Sizes->size())
      Points.push_back(Sum);
  }
  if (!D.isConst() || D.value != Sum)
    return nullptr;
  return callOp("split", {C.args[0]},
                Attrs{{"axis", Axis}, {"indices", Points}});
}

Expr oneHotDyn(const CallNode &C) {
  bool Empty;
  const Tensor *Depth = constantScalar(C, 1, Empty);
  if (!Depth)
    return nullptr;
  double D = Depth->elementAsDouble(0);
  if (!(D >= 1 && D < 1e15))
    return nullptr;
  return callOp("one_hot", {C.args[0], C.args[2]},
                with(C.attrs, "depth", (int64_t)D));
}

Expr dynTopK(const CallNode &C) {
  bool Empty;
  const Tensor *K = constantScalar(C, 1, Empty);
  if (!K || !isInteger(K->dtype()))
    return nullptr;
  return callOp("topk", {C.args[0]}, with(C.attrs, "k", K->elementAsInt(0)));
}

Expr dynReduce(const CallNode &C) {
  std::optional<Ints> Axes = constantInts(C, 1);
  if (!Axes)
    return nullptr;
  // Empty axes with noop_with_empty_axes: the input itself.
  OpAttrs OA("dyn_reduce", C.attrs);
  if (Axes->empty() && OA.getInt("noop_with_empty_axes") != 0)
    return C.args[0];
  Attrs A{{"axis", *Axes}, {"keepdims", OA.getInt("keepdims")}};
  if (OA.getInt("empty_identity") != 0)
    A.set("empty_identity", int64_t(1));
  return callOp(OA.getString("reduction"), {C.args[0]}, A);
}

Expr resizeDynamic(const CallNode &C) {
  const Tensor *Roi = constantArg(C, 1), *Scales = constantArg(C, 2),
               *Sizes = constantArg(C, 3);
  if (!Roi || !Scales || !Sizes ||
      (Scales->numel() == 0) == (Sizes->numel() == 0))
    return nullptr;
  if (Sizes->numel() > 0 && !isInteger(Sizes->dtype()))
    return nullptr;
  Attrs A = C.attrs;
  if (Scales->numel() > 0)
    A.set("scales", Scales->toDoubleVector());
  if (Sizes->numel() > 0)
    A.set("sizes", Sizes->toIntVector());
  if (Roi->numel() > 0)
    A.set("roi", Roi->toDoubleVector());
  return callOp("resize", {C.args[0]}, A);
}

Expr dftDynamic(const CallNode &C) {
  bool Empty;
  const Tensor *Len = constantScalar(C, 1, Empty);
  if (!Len && !Empty)
    return nullptr;
  Attrs A = C.attrs;
  if (Len) {
    if (!isInteger(Len->dtype()))
      return nullptr;
    A.set("dft_length", Len->elementAsInt(0));
  }
  // An axis argument (DFT-20) overrides the attribute.
  if (C.args.size() > 2) {
    const Tensor *Axis = constantScalar(C, 2, Empty);
    if (!Axis && !Empty)
      return nullptr;
    if (Axis) {
      if (!isInteger(Axis->dtype()))
        return nullptr;
      A.set("axis", Axis->elementAsInt(0));
    }
  }
  return callOp("dft", {C.args[0]}, A);
}

Expr stftDynamic(const CallNode &C) {
  bool StepEmpty, LenEmpty;
  const Tensor *Step = constantScalar(C, 1, StepEmpty);
  const Tensor *Len = constantScalar(C, 3, LenEmpty);
  if (!Step || (!Len && !LenEmpty))
    return nullptr;
  Attrs A = with(C.attrs, "frame_step", Step->elementAsInt(0));
  if (Len)
    A.set("frame_length", Len->elementAsInt(0));
  return callOp("stft", {C.args[0], C.args[2]}, A);
}

Expr windowDynamic(const CallNode &C, const std::string &Static) {
  bool Empty;
  const Tensor *Size = constantScalar(C, 0, Empty);
  if (!Size || !isInteger(Size->dtype()))
    return nullptr;
  return callOp(Static, {}, with(C.attrs, "size", Size->elementAsInt(0)));
}

Expr melDynamic(const CallNode &C) {
  static const char *Names[] = {"num_mel_bins", "dft_length", "sample_rate",
                                "lower_edge_hertz", "upper_edge_hertz"};
  Attrs A = C.attrs;
  for (size_t I = 0; I < 5; ++I) {
    bool Empty;
    const Tensor *V = constantScalar(C, I, Empty);
    if (!V)
      return nullptr;
    if (I < 3)
      A.set(Names[I], V->elementAsInt(0));
    else
      A.set(Names[I], V->elementAsDouble(0));
  }
  return callOp("mel_weight_matrix", {}, A);
}

/// max_unpool_to_shape to a constant shape that max_unpool's default output
/// shape (computed from x's static type) equals.
Expr maxUnpoolToShape(const CallNode &C) {
  std::optional<Ints> Given = constantInts(C, 2);
  const auto *T = C.args[0]->checkedType
                      ? C.args[0]->checkedType->as<TensorTypeNode>()
                      : nullptr;
  if (!Given || !T || !T->isStatic() || T->shape->size() < 3)
    return nullptr;
  const std::vector<Dim> &X = *T->shape;
  size_t R = X.size() - 2;
  Ints K = C.attrs.getInts("kernel_shape");
  Ints S = C.attrs.getInts("strides", Ints(R, 1));
  Ints P = C.attrs.getInts("pads", Ints(2 * R, 0));
  if (K.size() != R || S.size() != R || P.size() != 2 * R)
    return nullptr;
  Ints Default{X[0].value, X[1].value};
  for (size_t D = 0; D < R; ++D)
    Default.push_back((X[D + 2].value - 1) * S[D] + K[D] - P[D] - P[D + R]);
  if (*Given != Default)
    return nullptr;
  return callOp("max_unpool", {C.args[0], C.args[1]}, C.attrs);
}

} // namespace

Expr staticFormOf(const Expr &Call) {
  const auto *C = Call ? Call->as<CallNode>() : nullptr;
  const auto *O = C ? C->callee->as<OpNode>() : nullptr;
  if (!O)
    return nullptr;
  const std::string &N = O->name();
  if (N == "reshape_dyn")
    return reshapeDyn(*C);
  if (N == "squeeze_dyn")
    return listToAttr(*C, "squeeze", "axes");
  if (N == "unsqueeze_dyn")
    return listToAttr(*C, "unsqueeze", "axes");
  if (N == "expand_dyn")
    return listToAttr(*C, "expand", "shape");
  if (N == "tile_dyn")
    return listToAttr(*C, "tile", "repeats");
  if (N == "slice_dyn")
    return sliceDyn(*C);
  if (N == "pad_dyn")
    return padDyn(*C);
  if (N == "split_dyn")
    return splitDyn(*C);
  if (N == "one_hot_dyn")
    return oneHotDyn(*C);
  if (N == "dyn_topk")
    return dynTopK(*C);
  if (N == "dyn_reduce")
    return dynReduce(*C);
  if (N == "resize_dynamic")
    return resizeDynamic(*C);
  if (N == "dft_dynamic")
    return dftDynamic(*C);
  if (N == "stft_dynamic")
    return stftDynamic(*C);
  if (N == "mel_weight_matrix_dynamic")
    return melDynamic(*C);
  if (N == "max_unpool_to_shape")
    return maxUnpoolToShape(*C);
  static const std::string WindowSuffix = "_window_dynamic";
  if (N.size() > WindowSuffix.size() &&
      N.compare(N.size() - WindowSuffix.size(), WindowSuffix.size(),
                WindowSuffix) == 0)
    return windowDynamic(*C, N.substr(0, N.size() - 8)); // drop "_dynamic"
  return nullptr;
}

} // namespace rivet::ir
