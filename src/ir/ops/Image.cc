//===- Image.cc - Resampling, sampling grids, col2im, roi_align, NMS ------===//
#include "ir/ops/RelationUtil.h"

#include <cmath>
#include <numeric>

namespace rivet::ir {
namespace {

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

// grid_sample(x[N, C, D1..Dr], grid[N, O1..Or, r]) -> [N, C, O1..Or].
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
  if (X.shape && X.shape->size() < 3)
    failArg(0, "grid_sample: the input must be [N, C, D1, ..., Dr], got {}",
            typeStr(X));
  if (G.shape && G.shape->size() < 3)
    failArg(1, "grid_sample: the grid must be [N, O1, ..., Or, r], got {}",
            typeStr(G));
  if (X.shape && G.shape && X.shape->size() != G.shape->size())
    fail("grid_sample: the input {} and the grid {} must have the same rank",
         typeStr(X), typeStr(G));
  std::optional<size_t> Rank;
  if (X.shape)
    Rank = X.shape->size();
  else if (G.shape)
    Rank = G.shape->size();
  if (!Rank)
    return tensorTypeUnknownRank(X.dtype);
  int64_t R = (int64_t)*Rank - 2;
  if (G.shape && G.shape->back().isConst() && G.shape->back().value != R)
    failArg(1,
            "grid_sample: the grid's last dimension must be {} (one "
            "coordinate per spatial axis), got {}",
            R, typeStr(G));
  std::vector<Dim> Out(*Rank, Dim::any());
  if (X.shape) {
    Out[0] = (*X.shape)[0];
    Out[1] = (*X.shape)[1];
  }
  if (G.shape) {
    std::optional<Dim> M = mergeEqualDim(Out[0], (*G.shape)[0]);
    if (!M)
      fail("grid_sample: batch sizes differ: {} and {}", typeStr(X),
           typeStr(G));
    Out[0] = *M;
    std::copy(G.shape->begin() + 1, G.shape->end() - 1, Out.begin() + 2);
  }
  return makeTensor(Out, X.dtype);
}

/// The length of a 1-D integer argument that holds a shape (nullopt when
/// unknown).
std::optional<int64_t> shapeArgLength(std::string_view Op,
                                      const std::vector<Type> &Args, size_t I,
                                      const char *Name) {
  const TensorTypeNode &T = tensorArg(Op, Args, I);
  requireIndex(Op, T, I);
  if (!T.shape)
    return std::nullopt;
  if (T.shape->size() != 1)
    failArg(I, "{}: '{}' must be 1-D, got {}", Op, Name, typeStr(T));
  const Dim &D = (*T.shape)[0];
  return D.isConst() ? std::optional<int64_t>(D.value) : std::nullopt;
}

// affine_grid(theta[N, r, r + 1], size[r + 2]) -> [N, D1..Dr, r]; the
// extents are size's values.
Type affineGridRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "affine_grid";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &Theta = tensorArg(Op, Args, 0);
  requireFloat(Op, Theta, 0);
  std::optional<int64_t> Len = shapeArgLength(Op, Args, 1, "size");
  std::optional<int64_t> R;
  Dim N = Dim::any();
  if (Theta.shape) {
    const std::vector<Dim> &T = *Theta.shape;
    if (T.size() != 3 ||
        (T[1].isConst() && T[1].value != 2 && T[1].value != 3) ||
        (T[1].isConst() && T[2].isConst() && T[2].value != T[1].value + 1))
      failArg(0, "{}: theta must be [N, 2, 3] or [N, 3, 4], got {}", Op,
              typeStr(Theta));
    N = T[0];
    if (T[1].isConst())
      R = T[1].value;
  }
  if (Len && ((R && *Len != *R + 2) || (*Len != 4 && *Len != 5)))
    failArg(1,
            "{}: size must have {} entries (N, C and the spatial extents), "
            "got {}",
            Op, R ? fmt::format("{}", *R + 2) : std::string("4 or 5"), *Len);
  if (!R && Len)
    R = *Len - 2;
  if (!R)
    return tensorTypeUnknownRank(Theta.dtype);
  std::vector<Dim> Out((size_t)*R + 2, Dim::any());
  Out.front() = N;
  Out.back() = Dim::constant(*R);
  return makeTensor(Out, Theta.dtype);
}

// col2im(x[N, C * prod(block), L], image_shape[r], block_shape[r]) ->
// [N, C, image_shape...]: the extents are the shape arguments' values.
Type col2imRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "col2im";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 3);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireNumeric(Op, X, 0);
  if (X.shape && X.shape->size() != 3)
    failArg(0, "{}: the input must be [N, C * prod(block_shape), L], got {}",
            Op, typeStr(X));
  std::optional<int64_t> R = shapeArgLength(Op, Args, 1, "image_shape");
  std::optional<int64_t> RB = shapeArgLength(Op, Args, 2, "block_shape");
  if (R && RB && *R != *RB)
    fail("{}: image_shape has {} entries but block_shape {}", Op, *R, *RB);
  if (!R)
    R = RB;
  if (!R)
    return tensorTypeUnknownRank(X.dtype);
  std::vector<Dim> Out((size_t)*R + 2, Dim::any());
  if (X.shape)
    Out[0] = (*X.shape)[0];
  return makeTensor(Out, X.dtype);
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
    "Samples x[N, C, D1, ..., Dr] at the normalized grid[N, O1, ..., Or, r]\n"
    "locations (innermost axis first): linear, nearest or cubic; zeros,\n"
    "border or reflection padding.",
    2, gridSampleRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "affine_grid",
    "Sampling grid [N, D1, ..., Dr, r] of theta[N, r, r + 1] applied to the\n"
    "normalized positions of a size[r + 2] image, r = 2 or 3 (ONNX\n"
    "AffineGrid); the extents are size's values.",
    2, affineGridRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "col2im",
    "Sums column blocks x[N, C * prod(block_shape), L] back into an image\n"
    "[N, C, image_shape...] (ONNX Col2Im); the extents are the values of\n"
    "image_shape.",
    3, col2imRel, FusionPattern::Opaque});
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
