//===- Image.cc - resize, grid_sample, roi_align, non_max_suppression -----===//
#include "ir/ops/RelationUtil.h"

#include <cmath>
#include <numeric>

namespace rivet::ir {
namespace {

Type makeTensor(const std::optional<std::vector<Dim>> &Shape, DType T) {
  return std::make_shared<TensorTypeNode>(Shape, T);
}

std::optional<std::vector<double>> optFloats(const Attrs &A,
                                             const std::string &Name) {
  if (!A.has(Name))
    return std::nullopt;
  return A.getFloats(Name);
}

void checkOneOf(std::string_view Op, const Attrs &A, const std::string &Name,
                std::initializer_list<const char *> Allowed) {
  std::optional<std::string> V = optString(A, Name);
  if (!V)
    return;
  for (const char *S : Allowed)
    if (*V == S)
      return;
  std::string List;
  for (const char *S : Allowed)
    List += (List.empty() ? "" : ", ") + std::string(S);
  fail("{}: attribute '{}' is '{}', expected one of {}", Op, Name, *V, List);
}

void checkResizeAttrs(std::string_view Op, const Attrs &A) {
  checkOneOf(Op, A, "mode", {"nearest", "linear", "cubic"});
  checkOneOf(Op, A, "coordinate_transformation_mode",
             {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
              "tf_half_pixel_for_nn", "tf_crop_and_resize",
              "half_pixel_symmetric"});
  checkOneOf(Op, A, "nearest_mode",
             {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  checkOneOf(Op, A, "keep_aspect_ratio_policy",
             {"stretch", "not_larger", "not_smaller"});
}

/// The normalized resized axes (all axes when 'axes' is absent).
std::vector<int64_t> resizeAxes(std::string_view Op, const Attrs &A,
                                int64_t Rank) {
  std::vector<int64_t> Axes = OpAttrs(Op, A).getInts("axes");
  if (Axes.empty()) {
    Axes.resize((size_t)Rank);
    std::iota(Axes.begin(), Axes.end(), 0);
  }
  std::vector<bool> Seen((size_t)Rank, false);
  for (int64_t &Ax : Axes) {
    Ax = normalizeAxisFor(Op, Ax, Rank);
    if (Seen[(size_t)Ax])
      fail("{}: axis {} appears twice in 'axes'", Op, Ax);
    Seen[(size_t)Ax] = true;
  }
  return Axes;
}

// resize(x; scales | sizes, roi, mode, ...): ONNX Resize with static
// scales or sizes. Known extents are computed, the others stay unknown.
Type resizeRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("resize", A);
  checkArity("resize", Args, 1);
  checkResizeAttrs("resize", A);
  auto Scales = optFloats(A, "scales");
  auto Sizes = optInts(A, "sizes");
  if (Scales.has_value() == Sizes.has_value())
    fail("resize: exactly one of the attributes 'scales' and 'sizes' must be "
         "given");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("resize", Args, 0);
  requireNumeric("resize", X, 0);
  if (!X.shape)
    return tensorTypeUnknownRank(X.dtype);
  int64_t R = (int64_t)X.shape->size();
  if (R == 0)
    failArg(0, "resize: the input must have rank >= 1, got {}", typeStr(X));
  std::vector<int64_t> Axes = resizeAxes("resize", A, R);
  size_t N = Scales ? Scales->size() : Sizes->size();
  if (N != Axes.size())
    fail("resize: '{}' has {} values, expected {} (one per resized axis of {})",
         Scales ? "scales" : "sizes", N, Axes.size(), typeStr(X));
  std::vector<Dim> Out = *X.shape;
  std::string Policy =
      OpAttrs("resize", A).getString("keep_aspect_ratio_policy");
  if (Scales) {
    for (size_t I = 0; I < N; ++I) {
      double S = (*Scales)[I];
      if (!(S > 0))
        fail("resize: scales must be positive, got {}", S);
      Dim &D = Out[(size_t)Axes[I]];
      // A scale of exactly 1 keeps any extent, symbolic ones included.
      if (S != 1)
        D = D.isConst()
                ? Dim::constant((int64_t)std::floor(S * (double)D.value))
                : Dim::any();
    }
  } else if (Policy == "stretch") {
    for (size_t I = 0; I < N; ++I) {
      if ((*Sizes)[I] < 0)
        fail("resize: sizes must be non-negative, got {}", (*Sizes)[I]);
      Out[(size_t)Axes[I]] = Dim::constant((*Sizes)[I]);
    }
  } else {
    // One common scale over the resized axes: known only when all are.
    bool Known = true;
    double S = Policy == "not_smaller" ? 0.0 : INFINITY;
    for (size_t I = 0; I < N; ++I) {
      const Dim &D = (*X.shape)[(size_t)Axes[I]];
      if (!D.isConst() || D.value == 0) {
        Known = false;
        continue;
      }
      double Ratio = (double)(*Sizes)[I] / (double)D.value;
      S = Policy == "not_smaller" ? std::max(S, Ratio) : std::min(S, Ratio);
    }
    for (size_t I = 0; I < N; ++I) {
      Dim &D = Out[(size_t)Axes[I]];
      D = Known ? Dim::constant((int64_t)std::floor(S * (double)D.value + 0.5))
                : Dim::any();
    }
  }
  return makeTensor(Out, X.dtype);
}

// resize_dynamic(x, roi, scales, sizes): the resized extents are values.
Type resizeDynamicRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("resize_dynamic", A);
  checkArity("resize_dynamic", Args, 4);
  checkResizeAttrs("resize_dynamic", A);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("resize_dynamic", Args, 0);
  requireNumeric("resize_dynamic", X, 0);
  const char *Names[] = {"x", "roi", "scales", "sizes"};
  for (size_t I = 1; I < 4; ++I) {
    const TensorTypeNode &T = tensorArg("resize_dynamic", Args, I);
    if (T.shape && T.shape->size() != 1)
      failArg(I, "resize_dynamic: '{}' must be 1-D, got {}", Names[I],
              typeStr(T));
  }
  if (!X.shape)
    return tensorTypeUnknownRank(X.dtype);
  int64_t R = (int64_t)X.shape->size();
  if (R == 0)
    failArg(0, "resize_dynamic: the input must have rank >= 1, got {}",
            typeStr(X));
  std::vector<Dim> Out = *X.shape;
  for (int64_t Ax : resizeAxes("resize_dynamic", A, R))
    Out[(size_t)Ax] = Dim::any();
  return makeTensor(Out, X.dtype);
}

// grid_sample(x[N, C, H, W], grid[N, Ho, Wo, 2]) -> [N, C, Ho, Wo].
Type gridSampleRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("grid_sample", A);
  checkArity("grid_sample", Args, 2);
  checkOneOf("grid_sample", A, "mode",
             {"bilinear", "nearest", "bicubic", "linear", "cubic"});
  checkOneOf("grid_sample", A, "padding_mode",
             {"zeros", "border", "reflection"});
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("grid_sample", Args, 0);
  const TensorTypeNode &G = tensorArg("grid_sample", Args, 1);
  requireFloat("grid_sample", X, 0);
  requireSameDType("grid_sample", X, G, 1);
  if (X.shape && X.shape->size() != 4)
    failArg(0, "grid_sample: the input must be [N, C, H, W], got {}",
            typeStr(X));
  if (G.shape && G.shape->size() != 4)
    failArg(1, "grid_sample: the grid must be [N, H_out, W_out, 2], got {}",
            typeStr(G));
  if (G.shape && (*G.shape)[3].isConst() && (*G.shape)[3].value != 2)
    failArg(1, "grid_sample: the grid's last dimension must be 2, got {}",
            typeStr(G));
  Dim N = Dim::any(), C = Dim::any(), HO = Dim::any(), WO = Dim::any();
  if (X.shape) {
    N = (*X.shape)[0];
    C = (*X.shape)[1];
  }
  if (G.shape) {
    std::optional<Dim> M = mergeEqualDim(N, (*G.shape)[0]);
    if (!M)
      fail("grid_sample: batch sizes differ: {} and {}", typeStr(X),
           typeStr(G));
    N = *M;
    HO = (*G.shape)[1];
    WO = (*G.shape)[2];
  }
  return makeTensor(std::vector<Dim>{N, C, HO, WO}, X.dtype);
}

// roi_align(x[N, C, H, W], rois[R, 4], batch_indices[R]) -> [R, C, oh, ow].
Type roiAlignRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("roi_align", A);
  checkArity("roi_align", Args, 3);
  checkOneOf("roi_align", A, "mode", {"avg", "max"});
  checkOneOf("roi_align", A, "coordinate_transformation_mode",
             {"half_pixel", "output_half_pixel"});
  int64_t OH = OpAttrs("roi_align", A).getInt("output_height");
  int64_t OW = OpAttrs("roi_align", A).getInt("output_width");
  if (OH <= 0 || OW <= 0)
    fail("roi_align: output_height and output_width must be positive, got {} "
         "and {}",
         OH, OW);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("roi_align", Args, 0);
  const TensorTypeNode &Rois = tensorArg("roi_align", Args, 1);
  const TensorTypeNode &Idx = tensorArg("roi_align", Args, 2);
  requireFloat("roi_align", X, 0);
  requireSameDType("roi_align", X, Rois, 1);
  requireIndex("roi_align", Idx, 2);
  if (X.shape && X.shape->size() != 4)
    failArg(0, "roi_align: the input must be [N, C, H, W], got {}", typeStr(X));
  if (Rois.shape && (Rois.shape->size() != 2 || ((*Rois.shape)[1].isConst() &&
                                                 (*Rois.shape)[1].value != 4)))
    failArg(1, "roi_align: rois must be [R, 4], got {}", typeStr(Rois));
  if (Idx.shape && Idx.shape->size() != 1)
    failArg(2, "roi_align: batch_indices must be [R], got {}", typeStr(Idx));
  Dim R = Rois.shape ? (*Rois.shape)[0] : Dim::any();
  if (Idx.shape) {
    std::optional<Dim> M = mergeEqualDim(R, (*Idx.shape)[0]);
    if (!M)
      fail("roi_align: rois and batch_indices disagree on the number of rois: "
           "{} and {}",
           typeStr(Rois), typeStr(Idx));
    R = *M;
  }
  Dim C = X.shape ? (*X.shape)[1] : Dim::any();
  return makeTensor(
      std::vector<Dim>{R, C, Dim::constant(OH), Dim::constant(OW)}, X.dtype);
}

// non_max_suppression(boxes, scores, max_output, iou, score_threshold):
// [?, 3] int64 selected (batch, class, box) triples.
Type nmsRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("non_max_suppression", A);
  checkArity("non_max_suppression", Args, 5);
  int64_t Center = OpAttrs("non_max_suppression", A).getInt("center_point_box");
  if (Center != 0 && Center != 1)
    fail("non_max_suppression: center_point_box must be 0 or 1, got {}",
         Center);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &B = tensorArg("non_max_suppression", Args, 0);
  const TensorTypeNode &S = tensorArg("non_max_suppression", Args, 1);
  requireFloat("non_max_suppression", B, 0);
  requireFloat("non_max_suppression", S, 1);
  if (B.shape && (B.shape->size() != 3 ||
                  ((*B.shape)[2].isConst() && (*B.shape)[2].value != 4)))
    failArg(0, "non_max_suppression: boxes must be [B, S, 4], got {}",
            typeStr(B));
  if (S.shape && S.shape->size() != 3)
    failArg(1, "non_max_suppression: scores must be [B, C, S], got {}",
            typeStr(S));
  if (B.shape && S.shape &&
      (!mergeEqualDim((*B.shape)[0], (*S.shape)[0]) ||
       !mergeEqualDim((*B.shape)[1], (*S.shape)[2])))
    fail("non_max_suppression: boxes {} and scores {} disagree on batch or "
         "box count",
         typeStr(B), typeStr(S));
  tensorArg("non_max_suppression", Args, 2);
  tensorArg("non_max_suppression", Args, 3);
  tensorArg("non_max_suppression", Args, 4);
  return tensorType({Dim::any(), Dim::constant(3)}, DType::Int64);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "resize",
    "ONNX Resize with constant scales or sizes: nearest, linear or cubic "
    "interpolation\nunder every coordinate transformation mode.",
    1, resizeRel, FusionPattern::Injective});
RIVET_REGISTER_OP(OpInfo{
    "resize_dynamic",
    "ONNX Resize whose roi, scales and sizes are tensors (zero elements: "
    "absent);\nthe output extents are data-dependent.",
    4, resizeDynamicRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "grid_sample",
    "Samples x[N, C, H, W] at the normalized grid[N, Ho, Wo, 2] locations\n"
    "(bilinear, nearest or bicubic; zeros, border or reflection padding).",
    2, gridSampleRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "roi_align",
    "RoI Align: average or max of bilinear samples per output bin of each\n"
    "region of interest (ONNX RoiAlign).",
    3, roiAlignRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "non_max_suppression",
    "Greedy per-class non-maximum suppression; selected (batch, class, box)\n"
    "indices, a data-dependent count. Empty optional inputs mean absent.",
    5, nmsRel, FusionPattern::Opaque});

} // namespace rivet::ir
