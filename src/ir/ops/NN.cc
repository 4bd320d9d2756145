//===- NN.cc - Convolution, pooling and normalization operators -----------===//
//
// Type relations over [N, C, D1..Dn] inputs. Spatial output extents are
// computed when the input extent is a constant and are `?` otherwise; ranks,
// channel counts and attribute lengths are checked whenever they are known.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"
#include "kernels/WindowGeometry.h"

namespace rivet::ir {
namespace {

/// Window attributes of a conv or pool, with defaults for a spatial rank.
struct WindowAttrs {
  std::vector<int64_t> Strides, Dilations, Pads;
  std::string AutoPad = "NOTSET";
  bool Ceil = false;
};

WindowAttrs windowAttrs(std::string_view Op, const Attrs &A, size_t Rank) {
  WindowAttrs W;
  W.Strides = windowInts(Op, A, "strides", Rank, 1, 1);
  W.Dilations = windowInts(Op, A, "dilations", Rank, 1, 1);
  W.Pads = windowInts(Op, A, "pads", 2 * Rank, 0, 0);
  W.AutoPad = OpAttrs(Op, A).getString("auto_pad");
  if (W.AutoPad != "NOTSET" && W.AutoPad != "SAME_UPPER" &&
      W.AutoPad != "SAME_LOWER" && W.AutoPad != "VALID")
    fail("{}: unknown auto_pad '{}' (expected NOTSET, SAME_UPPER, SAME_LOWER "
         "or VALID)",
         Op, W.AutoPad);
  if (auto C = optInt(A, "ceil_mode")) {
    if (*C != 0 && *C != 1)
      fail("{}: attribute 'ceil_mode' must be 0 or 1, got {}", Op, *C);
    W.Ceil = *C == 1;
  }
  return W;
}

/// The output extent along spatial axis I (WindowGeometry.h, as the kernel).
Dim windowOut(std::string_view Op, const Dim &In, int64_t Kernel,
              const WindowAttrs &W, size_t I, size_t Rank) {
  if (!In.isConst() || Kernel < 1)
    return Dim::any();
  try {
    return Dim::constant(constWindowAxis(Op, I, In.value, Kernel, W.Strides[I],
                                         W.Dilations[I], W.Pads[I],
                                         W.Pads[I + Rank],
                                         *parseAutoPad(W.AutoPad), W.Ceil)
                             .out);
  } catch (const ArgError &) {
    throw;
  } catch (const Error &E) {
    throw ArgError(0, E.what()); // the input is too small for the window
  }
}

/// Checks x (argument 0) is [N, C, D1..Dn]; returns its rank or -1.
int64_t spatialRank(std::string_view Op, const TensorTypeNode &X) {
  if (!X.shape)
    return -1;
  if (X.shape->size() < 3)
    failArg(0, "{}: the input must have rank >= 3 ([N, C, D1, ...]), got {}",
            Op, typeStr(X));
  return (int64_t)X.shape->size();
}

//===----------------------------------------------------------------------===//
// conv, conv_integer, qlinear_conv
//===----------------------------------------------------------------------===//

/// Shared by the convolutions: x is argument XI, w argument WI.
Type convLike(std::string_view Op, const std::vector<Type> &Args, size_t XI,
              size_t WI, const Attrs &A, DType OutT) {
  const TensorTypeNode &X = tensorArg(Op, Args, XI);
  const TensorTypeNode &W = tensorArg(Op, Args, WI);
  int64_t Group = OpAttrs(Op, A).getInt("group");
  if (Group < 1)
    fail("{}: attribute 'group' must be >= 1, got {}", Op, Group);
  int64_t Rank = spatialRank(Op, X);
  if (W.shape) {
    if (W.shape->size() < 3)
      failArg(
          WI,
          "{}: the weight must have rank >= 3 ([M, C/group, k1, ...]), got {}",
          Op, typeStr(W));
    if (Rank >= 0 && (int64_t)W.shape->size() != Rank)
      failArg(WI, "{}: the weight {} must have the rank of the input {}", Op,
              typeStr(W), typeStr(X));
    Rank = (int64_t)W.shape->size();
  }
  std::optional<std::vector<int64_t>> KAttr = optInts(A, "kernel_shape");
  if (Rank < 0 && KAttr)
    Rank = (int64_t)KAttr->size() + 2;
  if (Rank < 0)
    return tensorTypeUnknownRank(OutT);
  size_t R = (size_t)Rank - 2;
  if (KAttr && KAttr->size() != R)
    fail("{}: attribute 'kernel_shape' must have {} entries, got {}", Op, R,
         KAttr->size());
  WindowAttrs WA = windowAttrs(Op, A, R);
  std::vector<Dim> XS = X.shape ? *X.shape : std::vector<Dim>(Rank, Dim::any());
  std::vector<Dim> WS = W.shape ? *W.shape : std::vector<Dim>(Rank, Dim::any());
  // Channels: x's C == w[1] * group; w[0] divisible by group.
  if (XS[1].isConst() && XS[1].value % Group != 0)
    failArg(XI, "{}: group {} does not divide the input channels of {}", Op,
            Group, typeStr(X));
  if (XS[1].isConst() && WS[1].isConst() && WS[1].value * Group != XS[1].value)
    failArg(WI,
            "{}: the weight {} expects {} input channels, the input {} has {} "
            "(group {})",
            Op, typeStr(W), WS[1].value * Group, typeStr(X), XS[1].value,
            Group);
  if (WS[0].isConst() && WS[0].value % Group != 0)
    failArg(WI, "{}: group {} does not divide the output channels of {}", Op,
            Group, typeStr(W));
  std::vector<Dim> Out{XS[0], WS[0]};
  for (size_t I = 0; I < R; ++I) {
    int64_t Kern = WS[I + 2].isConst() ? WS[I + 2].value : -1;
    if (KAttr) {
      if (Kern >= 0 && Kern != (*KAttr)[I])
        failArg(
            WI,
            "{}: attribute 'kernel_shape' ({}) does not match the weight {}",
            Op, fmt::join(*KAttr, ", "), typeStr(W));
      Kern = (*KAttr)[I];
    }
    Out.push_back(windowOut(Op, XS[I + 2], Kern, WA, I, R));
  }
  return makeTensor(Out, OutT);
}

/// A per-output-channel bias of type dtype/length M, argument BI.
void checkBiasArg(std::string_view Op, const std::vector<Type> &Args, size_t BI,
                  DType T, const Dim &M) {
  const TensorTypeNode &B = tensorArg(Op, Args, BI);
  if (B.dtype != T)
    failArg(BI, "{}: the bias must have dtype {}, got {}", Op, dtypeName(T),
            typeStr(B));
  if (B.shape && (B.shape->size() != 1 || !mergeEqualDim((*B.shape)[0], M)))
    failArg(BI, "{}: the bias must have shape ({},), got {}", Op, M.str(),
            typeStr(B));
}

Dim dimOr(const TensorTypeNode &T, size_t I) {
  return T.shape && T.shape->size() > I ? (*T.shape)[I] : Dim::any();
}

Type convRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("conv", A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("conv: expects 2 or 3 arguments (x, w[, b]), got {}", Args.size());
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("conv", Args, 0);
  requireFloat("conv", X, 0);
  requireSameDType("conv", X, tensorArg("conv", Args, 1), 1);
  if (Args.size() == 3)
    checkBiasArg("conv", Args, 2, X.dtype,
                 dimOr(tensorArg("conv", Args, 1), 0));
  return convLike("conv", Args, 0, 1, A, X.dtype);
}

Type convIntegerRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("conv_integer", A);
  if (Args.size() < 2 || Args.size() > 4)
    fail("conv_integer: expects 2 to 4 arguments (x, w[, x_zero_point[, "
         "w_zero_point]]), got {}",
         Args.size());
  if (anyUndecided(Args))
    return nullptr;
  for (size_t I = 0; I < Args.size(); ++I)
    require8Bit("conv_integer", tensorArg("conv_integer", Args, I), I);
  return convLike("conv_integer", Args, 0, 1, A, DType::Int32);
}

Type qlinearConvRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "qlinear_conv";
  validateOpAttrs(Op, A);
  if (Args.size() != 8 && Args.size() != 9)
    fail("{}: expects 8 or 9 arguments (x, x_scale, x_zero_point, w, w_scale, "
         "w_zero_point, y_scale, y_zero_point[, b]), got {}",
         Op, Args.size());
  if (anyUndecided(Args))
    return nullptr;
  for (size_t I : {0, 2, 3, 5, 7})
    require8Bit(Op, tensorArg(Op, Args, I), I);
  for (size_t I : {1, 4, 6})
    requireFloat(Op, tensorArg(Op, Args, I), I);
  if (Args.size() == 9)
    checkBiasArg(Op, Args, 8, DType::Int32, dimOr(tensorArg(Op, Args, 3), 0));
  return convLike(Op, Args, 0, 3, A, tensorArg(Op, Args, 7).dtype);
}

//===----------------------------------------------------------------------===//
// conv_transpose
//===----------------------------------------------------------------------===//

Type convTransposeRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "conv_transpose";
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (x, w[, b]), got {}", Op, Args.size());
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  const TensorTypeNode &W = tensorArg(Op, Args, 1);
  requireFloat(Op, X, 0);
  requireSameDType(Op, X, W, 1);
  int64_t Group = OpAttrs(Op, A).getInt("group");
  if (Group < 1)
    fail("{}: attribute 'group' must be >= 1, got {}", Op, Group);
  int64_t Rank = spatialRank(Op, X);
  if (W.shape) {
    if (W.shape->size() < 3 || (Rank >= 0 && (int64_t)W.shape->size() != Rank))
      failArg(1,
              "{}: the weight {} must be [C, M/group, k1, ...] with the rank "
              "of the input {}",
              Op, typeStr(W), typeStr(X));
    Rank = (int64_t)W.shape->size();
  }
  Dim M = Dim::any();
  if (W.shape && (*W.shape)[1].isConst())
    M = Dim::constant((*W.shape)[1].value * Group);
  if (Args.size() == 3)
    checkBiasArg(Op, Args, 2, X.dtype, M);
  if (Rank < 0)
    return tensorTypeUnknownRank(X.dtype);
  size_t R = (size_t)Rank - 2;
  std::vector<Dim> XS = X.shape ? *X.shape : std::vector<Dim>(Rank, Dim::any());
  std::vector<Dim> WS = W.shape ? *W.shape : std::vector<Dim>(Rank, Dim::any());
  if (!mergeEqualDim(XS[1], WS[0]))
    failArg(1,
            "{}: the weight {} must have the input channels of {} as its first "
            "dimension",
            Op, typeStr(W), typeStr(X));
  WindowAttrs WA = windowAttrs(Op, A, R);
  std::vector<int64_t> OutPad = windowInts(Op, A, "output_padding", R, 0, 0);
  std::optional<std::vector<int64_t>> KAttr = optInts(A, "kernel_shape");
  if (KAttr && KAttr->size() != R)
    fail("{}: attribute 'kernel_shape' must have {} entries, got {}", Op, R,
         KAttr->size());
  std::optional<std::vector<int64_t>> OutShape = optInts(A, "output_shape");
  if (OutShape && OutShape->size() == R + 2)
    OutShape->erase(OutShape->begin(), OutShape->begin() + 2);
  if (OutShape && OutShape->size() != R)
    fail("{}: attribute 'output_shape' must have {} entries, got {}", Op, R,
         OutShape->size());
  AutoPad Mode = *parseAutoPad(WA.AutoPad);
  bool Same = Mode == AutoPad::SameUpper || Mode == AutoPad::SameLower;
  std::vector<Dim> Out{XS[0], M};
  for (size_t I = 0; I < R; ++I) {
    if (OutShape) {
      Out.push_back(Dim::constant((*OutShape)[I]));
      continue;
    }
    const Dim &In = XS[I + 2];
    int64_t Kern =
        WS[I + 2].isConst() ? WS[I + 2].value : (KAttr ? (*KAttr)[I] : -1);
    // Under SAME the extent does not depend on the kernel.
    if (!In.isConst() || (Kern < 0 && !Same)) {
      Out.push_back(Dim::any());
      continue;
    }
    int64_t O =
        transposedWindowAxis(In.value, std::max<int64_t>(Kern, 1),
                             WA.Strides[I], WA.Dilations[I], OutPad[I],
                             WA.Pads[I], WA.Pads[I + R], Mode, std::nullopt)
            .out;
    if (O < 0)
      failArg(0,
              "{}: pads make the output extent negative along spatial axis {}",
              Op, I);
    Out.push_back(Dim::constant(O));
  }
  return makeTensor(Out, X.dtype);
}

//===----------------------------------------------------------------------===//
// Pools
//===----------------------------------------------------------------------===//

/// Shared by the windowed pools; the output has x's dtype.
std::vector<Dim> poolShape(std::string_view Op, const TensorTypeNode &X,
                           const Attrs &A, bool &Known) {
  std::vector<int64_t> Kernel = *optInts(A, "kernel_shape");
  int64_t Rank = spatialRank(Op, X);
  Known = Rank >= 0;
  if (Rank < 0)
    return {};
  size_t R = (size_t)Rank - 2;
  if (Kernel.size() != R)
    failArg(0,
            "{}: attribute 'kernel_shape' has {} entries but the input {} has "
            "{} spatial dimensions",
            Op, Kernel.size(), typeStr(X), R);
  for (int64_t K : Kernel)
    if (K < 1)
      fail("{}: attribute 'kernel_shape' has an invalid entry {}", Op, K);
  WindowAttrs WA = windowAttrs(Op, A, R);
  std::vector<Dim> Out{(*X.shape)[0], (*X.shape)[1]};
  for (size_t I = 0; I < R; ++I)
    Out.push_back(windowOut(Op, (*X.shape)[I + 2], Kernel[I], WA, I, R));
  return Out;
}

bool flagAttr(std::string_view Op, const Attrs &A, const std::string &Name) {
  int64_t V = OpAttrs(Op, A).getInt(Name);
  if (V != 0 && V != 1)
    fail("{}: attribute '{}' must be 0 or 1, got {}", Op, Name, V);
  return V == 1;
}

Type maxPoolRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "max_pool";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  bool WithIdx = flagAttr(Op, A, "with_indices");
  flagAttr(Op, A, "storage_order");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  if (!isFloat(X.dtype) && X.dtype != DType::Int8 && X.dtype != DType::UInt8)
    failArg(0, "{}: the input must have a float dtype, int8 or uint8, got {}",
            Op, typeStr(X));
  bool Known;
  std::vector<Dim> S = poolShape(Op, X, A, Known);
  Type Y = Known ? makeTensor(S, X.dtype) : tensorTypeUnknownRank(X.dtype);
  if (!WithIdx)
    return Y;
  Type I =
      Known ? makeTensor(S, DType::Int64) : tensorTypeUnknownRank(DType::Int64);
  return tupleType({Y, I});
}

template <OpName Name>
Type floatPoolRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  if (auto C = optInt(A, "count_include_pad"); C && *C != 0 && *C != 1)
    fail("{}: attribute 'count_include_pad' must be 0 or 1, got {}", Op, *C);
  if (auto P = optInt(A, "p"); P && *P < 1)
    fail("{}: attribute 'p' must be >= 1, got {}", Op, *P);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  bool Known;
  std::vector<Dim> S = poolShape(Op, X, A, Known);
  return Known ? makeTensor(S, X.dtype) : tensorTypeUnknownRank(X.dtype);
}

template <OpName Name>
Type globalPoolRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  if (spatialRank(Op, X) < 0)
    return tensorTypeUnknownRank(X.dtype);
  std::vector<Dim> S = *X.shape;
  for (size_t I = 2; I < S.size(); ++I)
    S[I] = Dim::constant(1);
  return makeTensor(S, X.dtype);
}

template <bool FromInput>
Type maxUnpoolRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = FromInput ? "max_unpool_to_shape" : "max_unpool";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, FromInput ? 3 : 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  const TensorTypeNode &Idx = tensorArg(Op, Args, 1);
  if (Idx.dtype != DType::Int64)
    failArg(1, "{}: the indices must be int64, got {}", Op, typeStr(Idx));
  if (FromInput)
    requireIndex(Op, tensorArg(Op, Args, 2), 2);
  int64_t Rank = spatialRank(Op, X);
  if (Rank < 0)
    return tensorTypeUnknownRank(X.dtype);
  size_t R = (size_t)Rank - 2;
  std::vector<int64_t> Kernel = *optInts(A, "kernel_shape");
  if (Kernel.size() != R)
    failArg(0,
            "{}: attribute 'kernel_shape' has {} entries but the input {} has "
            "{} spatial dimensions",
            Op, Kernel.size(), typeStr(X), R);
  std::vector<int64_t> S = windowInts(Op, A, "strides", R, 1, 1);
  std::vector<int64_t> P = windowInts(Op, A, "pads", 2 * R, 0, 0);
  std::vector<Dim> Out{(*X.shape)[0], (*X.shape)[1]};
  for (size_t I = 0; I < R; ++I) {
    const Dim &D = (*X.shape)[I + 2];
    Out.push_back(FromInput || !D.isConst()
                      ? Dim::any()
                      : Dim::constant((D.value - 1) * S[I] + Kernel[I] - P[I] -
                                      P[I + R]));
  }
  return makeTensor(Out, X.dtype);
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

/// Argument I is a float vector of length C.
void channelParam(std::string_view Op, const std::vector<Type> &Args, size_t I,
                  const Dim &C) {
  const TensorTypeNode &T = tensorArg(Op, Args, I);
  requireFloat(Op, T, I);
  if (T.shape && (T.shape->size() != 1 || !mergeEqualDim((*T.shape)[0], C)))
    failArg(I, "{}: expected a vector of the {} channels, got {}", Op, C.str(),
            typeStr(T));
}

Type batchNormRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "batch_norm";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 5);
  bool Training = flagAttr(Op, A, "training");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  if (X.shape && X.shape->size() < 2)
    failArg(0, "{}: the input must have rank >= 2 ([N, C, ...]), got {}", Op,
            typeStr(X));
  Dim C = dimOr(X, 1);
  for (size_t I = 1; I < 5; ++I)
    channelParam(Op, Args, I, C);
  Type Y = makeTensor(X.shape, X.dtype);
  if (!Training)
    return Y;
  return tupleType(
      {Y, makeTensor(std::vector<Dim>{C}, tensorArg(Op, Args, 3).dtype),
       makeTensor(std::vector<Dim>{C}, tensorArg(Op, Args, 4).dtype)});
}

Type instanceNormRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "instance_norm";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 3);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  spatialRank(Op, X);
  channelParam(Op, Args, 1, dimOr(X, 1));
  channelParam(Op, Args, 2, dimOr(X, 1));
  return makeTensor(X.shape, X.dtype);
}

/// The dtype of a normalization's statistics: attribute stash_type, an ONNX
/// TensorProto data type (1 float, 10 float16, 11 double, 16 bfloat16).
DType stashDType(std::string_view Op, const Attrs &A) {
  int64_t Stash = OpAttrs(Op, A).getInt("stash_type");
  switch (Stash) {
  case 1: return DType::Float32;
  case 10: return DType::Float16;
  case 11: return DType::Float64;
  case 16: return DType::BFloat16;
  default:
    fail("{}: unsupported stash_type {} (expected 1, 10, 11 or 16)", Op, Stash);
  }
}

Type layerNormRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "layer_norm";
  validateOpAttrs(Op, A);
  if (Args.size() != 2 && Args.size() != 3)
    fail("{}: expects 2 or 3 arguments (x, scale[, bias]), got {}", Op,
         Args.size());
  bool Stats = flagAttr(Op, A, "with_stats");
  DType SD = stashDType(Op, A);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  std::optional<int64_t> Axis;
  if (X.shape)
    Axis = normalizeAxisFor(Op, OpAttrs(Op, A).getInt("axis"),
                            (int64_t)X.shape->size());
  for (size_t I = 1; I < Args.size(); ++I) {
    const TensorTypeNode &P = tensorArg(Op, Args, I);
    requireFloat(Op, P, I);
    if (!X.shape || !P.shape)
      continue;
    size_t NormRank = X.shape->size() - (size_t)*Axis;
    bool Ok = P.shape->size() <= NormRank;
    for (size_t D = 0; Ok && D < P.shape->size(); ++D) {
      const Dim &E = (*P.shape)[P.shape->size() - 1 - D];
      const Dim &T = (*X.shape)[X.shape->size() - 1 - D];
      Ok = !(E.isConst() && E.value != 1 && T.isConst() && T.value != E.value);
    }
    if (!Ok)
      failArg(I,
              "{}: {} does not broadcast to the normalized dimensions of {} "
              "(axis {})",
              Op, typeStr(P), typeStr(X), *Axis);
  }
  Type Y = makeTensor(X.shape, X.dtype);
  if (!Stats)
    return Y;
  if (!X.shape)
    return tupleType({Y, tensorTypeUnknownRank(SD), tensorTypeUnknownRank(SD)});
  std::vector<Dim> S = *X.shape;
  for (size_t I = (size_t)*Axis; I < S.size(); ++I)
    S[I] = Dim::constant(1);
  return tupleType({Y, makeTensor(S, SD), makeTensor(S, SD)});
}

/// rms_norm(x, scale): scale broadcasts to x (ONNX's unidirectional
/// broadcasting); the result has x's type.
Type rmsNormRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "rms_norm";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 2);
  stashDType(Op, A);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  const TensorTypeNode &S = tensorArg(Op, Args, 1);
  requireFloat(Op, X, 0);
  requireFloat(Op, S, 1);
  if (X.shape)
    normalizeAxisFor(Op, OpAttrs(Op, A).getInt("axis"),
                     (int64_t)X.shape->size());
  if (X.shape && S.shape) {
    bool Ok = S.shape->size() <= X.shape->size();
    for (size_t D = 0; Ok && D < S.shape->size(); ++D) {
      const Dim &E = (*S.shape)[S.shape->size() - 1 - D];
      const Dim &T = (*X.shape)[X.shape->size() - 1 - D];
      Ok = !(E.isConst() && E.value != 1 && T.isConst() && T.value != E.value);
    }
    if (!Ok)
      failArg(1, "{}: the scale {} does not broadcast to x {}", Op, typeStr(S),
              typeStr(X));
  }
  return makeTensor(X.shape, X.dtype);
}

/// group_norm(x, scale, bias) over x[N, C, ...]: scale and bias have C
/// entries, or num_groups with per_group=1.
Type groupNormRel(const std::vector<Type> &Args, const Attrs &A) {
  const char *Op = "group_norm";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 3);
  stashDType(Op, A);
  int64_t G = OpAttrs(Op, A).getInt("num_groups");
  if (G < 1)
    fail("{}: attribute 'num_groups' must be >= 1, got {}", Op, G);
  bool PerGroup = flagAttr(Op, A, "per_group");
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  if (X.shape && X.shape->size() < 2)
    failArg(0, "{}: the input must have rank >= 2 ([N, C, ...]), got {}", Op,
            typeStr(X));
  Dim C = dimOr(X, 1);
  if (C.isConst() && C.value % G != 0)
    failArg(0, "{}: num_groups {} does not divide the channels of {}", Op, G,
            typeStr(X));
  Dim Len = PerGroup ? Dim::constant(G) : C;
  for (size_t I : {size_t(1), size_t(2)}) {
    const TensorTypeNode &P = tensorArg(Op, Args, I);
    requireSameDType(Op, X, P, I);
    if (P.shape && (P.shape->size() != 1 || !mergeEqualDim((*P.shape)[0], Len)))
      failArg(I, "{}: expected a vector of {} values (one per {}), got {}", Op,
              Len.str(), PerGroup ? "group" : "channel", typeStr(P));
  }
  return makeTensor(X.shape, X.dtype);
}

/// A relation for float operators whose output has the input's type.
template <OpName Name>
Type sameFloatRel(const std::vector<Type> &Args, const Attrs &A) {
  std::string_view Op = Name.view();
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireFloat(Op, X, 0);
  if (Op == "lrn") {
    // size is required; its absence is validateOpAttrs's to report.
    if (std::optional<int64_t> Size = optInt(A, "size"); Size && *Size < 1)
      fail("lrn: attribute 'size' must be >= 1, got {}", *Size);
    if (X.shape && X.shape->size() < 2)
      failArg(0, "lrn: the input must have rank >= 2 ([N, C, ...]), got {}",
              typeStr(X));
  }
  if (Op == "mean_variance_norm" && X.shape) {
    std::vector<int64_t> Axes = OpAttrs(Op, A).getInts("axes");
    for (int64_t Ax : Axes)
      normalizeAxisFor(Op, Ax, (int64_t)X.shape->size());
  }
  return makeTensor(X.shape, X.dtype);
}

constexpr auto OutFusable = FusionPattern::OutElementwiseFusable;
constexpr auto Opaque = FusionPattern::Opaque;

} // namespace

namespace {

/// conv's channels: axis 1 of the data and the result, axis 0 of the weights
/// w[M, C/group, k...], whose axis 1 is the data's channels with group 1.
std::optional<ChannelAxes> convChannelAxes(const Attrs &A, size_t WeightRank) {
  if (WeightRank < 3)
    return std::nullopt;
  return ChannelAxes{1, 0, OpAttrs("conv", A).getInt("group") == 1 ? 1 : -1,
                     true};
}

/// Info with channelwisePool set.
OpInfo channelwisePoolOp(OpInfo Info) {
  Info.channelwisePool = true;
  return Info;
}

} // namespace

RIVET_REGISTER_OP(weightedAnchorOp(
    OpInfo{
        "conv",
        "N-d convolution (ONNX Conv): x[N, C, D...] with w[M, C/group, k...], "
        "optional bias b[M]; strides, pads, dilations, groups, auto_pad.",
        -1, convRel, OutFusable},
    convChannelAxes));
RIVET_REGISTER_OP(OpInfo{
    "conv_integer",
    "Integer convolution (ONNX ConvInteger): 8-bit x and w minus optional zero "
    "points, accumulated to int32.",
    -1, convIntegerRel, Opaque});
RIVET_REGISTER_OP(OpInfo{
    "qlinear_conv",
    "Quantized convolution (ONNX QLinearConv): dequantize-free int "
    "accumulation, requantized to y_scale/y_zero_point.",
    -1, qlinearConvRel, Opaque});
RIVET_REGISTER_OP(OpInfo{
    "conv_transpose",
    "N-d transposed convolution (ONNX ConvTranspose): w[C, M/group, k...]; "
    "output_padding, output_shape, groups, dilations.",
    -1, convTransposeRel, OutFusable});
RIVET_REGISTER_OP(channelwisePoolOp(OpInfo{
    "max_pool",
    "N-d max pooling (ONNX MaxPool) with ceil_mode and dilations; with_indices "
    "also returns flattened int64 argmax indices.",
    1, maxPoolRel, OutFusable}));
RIVET_REGISTER_OP(channelwisePoolOp(OpInfo{
    "avg_pool",
    "N-d average pooling (ONNX AveragePool); count_include_pad counts padding "
    "in the divisor.",
    1, floatPoolRel<"avg_pool">, OutFusable}));
RIVET_REGISTER_OP(channelwisePoolOp(OpInfo{
    "lp_pool",
    "N-d Lp pooling (ONNX LpPool): (sum |x|^p)^(1/p) over each window.", 1,
    floatPoolRel<"lp_pool">, OutFusable}));
RIVET_REGISTER_OP(channelwisePoolOp(OpInfo{
    "global_avg_pool",
    "Mean over all spatial axes of x[N, C, D...], kept as extents of 1.", 1,
    globalPoolRel<"global_avg_pool">, OutFusable}));
RIVET_REGISTER_OP(channelwisePoolOp(OpInfo{
    "global_max_pool",
    "Maximum over all spatial axes of x[N, C, D...], kept as extents of 1.", 1,
    globalPoolRel<"global_max_pool">, OutFusable}));
RIVET_REGISTER_OP(OpInfo{
    "max_unpool",
    "Inverse of max_pool (ONNX MaxUnpool): scatters x to the flattened indices "
    "of a zero tensor of the default output shape.",
    2, maxUnpoolRel<false>, Opaque});
RIVET_REGISTER_OP(OpInfo{
    "max_unpool_to_shape",
    "max_unpool whose output shape is given as a run-time int64 tensor "
    "(data-dependent shape).",
    3, maxUnpoolRel<true>, Opaque});
RIVET_REGISTER_OP(OpInfo{
    "batch_norm",
    "Batch normalization over axis 1: (x - mean) / sqrt(var + eps) * scale + "
    "bias; training also returns updated running stats.",
    5, batchNormRel, OutFusable});
RIVET_REGISTER_OP(OpInfo{
    "instance_norm",
    "Instance normalization: per (n, c) over the spatial axes, then scale[c] "
    "and bias[c].",
    3, instanceNormRel, Opaque});
RIVET_REGISTER_OP(OpInfo{
    "layer_norm",
    "Layer normalization over axes [axis, rank) with broadcast scale and "
    "optional bias; with_stats also returns Mean and InvStdDev.",
    -1, layerNormRel, Opaque});
RIVET_REGISTER_OP(OpInfo{
    "rms_norm",
    "RMS normalization over axes [axis, rank): x / sqrt(mean(x^2) + epsilon) "
    "* scale, scale broadcast to x.",
    2, rmsNormRel, OutFusable});
RIVET_REGISTER_OP(OpInfo{
    "group_norm",
    "Group normalization of x[N, C, ...]: per (n, group of C/num_groups "
    "channels), then scale and bias per channel (or per group).",
    3, groupNormRel, Opaque});
RIVET_REGISTER_OP(OpInfo{
    "lrn",
    "Local response normalization across channels: x / (bias + alpha/size * "
    "sum of squares)^beta.",
    1, sameFloatRel<"lrn">, Opaque});
RIVET_REGISTER_OP(OpInfo{
    "mean_variance_norm",
    "Mean-variance normalization over the given axes: (x - mean) / (std + "
    "1e-9).",
    1, sameFloatRel<"mean_variance_norm">, Opaque});

} // namespace rivet::ir
