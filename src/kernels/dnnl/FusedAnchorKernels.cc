//===- FusedAnchorKernels.cc - One kernel for anchor + elementwise tail ---===//
//
// dnnl.conv_fused(x, w[, b], operands...), its blocked form
// dnnl.conv2d_nchwc_fused, dnnl.matmul_fused(a, b, operands...) and
// dnnl.dense_fused(x, w, operands...): the anchor with the
// anchor operator's own attributes plus a post-op list (PostOps.h), so that
// the VM runs a whole fused group with one call. When oneDNN cannot do the
// case, the anchor's reference kernel runs and the post-ops follow one by
// one, so the result never depends on oneDNN being available.
//
//===----------------------------------------------------------------------===//
#include "kernels/AttrSchema.h"
#include "kernels/Kernel.h"
#include "kernels/Layout.h"
#include "kernels/WindowGeometry.h"
#include "kernels/cpu/ConvChain.h"
#include "kernels/cpu/PointwiseDepthwiseConv.h"
#include "kernels/dnnl/DnnlAnchors.h"

#include <algorithm>

namespace rivet {
namespace {

constexpr const char *ConstantWeightsAttr = "weights_constant";

/// The anchor's own attributes (without post-ops and the constant flag).
Attrs anchorAttrs(const Attrs &A) {
  Attrs Base = withoutPostOpAttrs(A), R;
  for (const auto &[Name, V] : Base.items())
    if (Name != ConstantWeightsAttr)
      R.set(Name, V);
  return R;
}

/// Splits a fused kernel's inputs into the anchor's and the post-op
/// operands; the anchor takes between MinArgs and MaxArgs inputs. Returns
/// the anchor's inputs: In itself when there are no operands (no copy),
/// else Anchor filled.
const std::vector<Tensor> &
splitInputs(const char *Op, const std::vector<Tensor> &In, const Attrs &A,
            size_t MinArgs, size_t MaxArgs, std::vector<Tensor> &Anchor,
            std::vector<Tensor> &Operands) {
  size_t NOps = (size_t)countPostOpOperands(A);
  if (In.size() < NOps + MinArgs || In.size() > NOps + MaxArgs)
    fail("{}: expected {} to {} anchor inputs plus {} post-op operands, got "
         "{} inputs",
         Op, MinArgs, MaxArgs, NOps, In.size());
  if (NOps == 0)
    return In;
  size_t NAnchor = In.size() - NOps;
  Anchor.assign(In.begin(), In.begin() + (long)NAnchor);
  Operands.assign(In.begin() + (long)NAnchor, In.end());
  return Anchor;
}

/// The anchor's output shape, then a check that no operand broadcasts it to
/// something larger (a post-op keeps the anchor's shape).
std::vector<TensorMeta> fusedShape(const char *Op, const KernelInfo &K,
                                   const std::vector<Tensor> &In,
                                   const Attrs &A, size_t MinArgs,
                                   size_t MaxArgs, bool ReadsOwnAttrs) {
  std::vector<Tensor> AnchorCopy, Operands;
  const std::vector<Tensor> &Anchor =
      splitInputs(Op, In, A, MinArgs, MaxArgs, AnchorCopy, Operands);
  // Called before every dynamic-shape call: skip the copy of the attributes
  // when the anchor's shape function reads only its own.
  std::vector<TensorMeta> R =
      ReadsOwnAttrs ? K.shapeFn(Anchor, A) : K.shapeFn(Anchor, anchorAttrs(A));
  PostOps P = decodePostOps(A, Operands);
  for (const PostOp &Op1 : P) {
    if (!Op1.isBinary())
      continue;
    if (Op1.operand.dtype() != R[0].dtype)
      fail("{}: post-op {} operand has dtype {}, the anchor's output {}", Op,
           postOpName(Op1.kind), dtypeName(Op1.operand.dtype()),
           dtypeName(R[0].dtype));
    Shape B;
    try {
      B = broadcastShapes(R[0].shape, Op1.operand.shape());
    } catch (const Error &) {
      B.clear();
    }
    if (B != R[0].shape)
      fail("{}: post-op {} operand {} does not broadcast to the anchor's "
           "output {}",
           Op, postOpName(Op1.kind), shapeToString(Op1.operand.shape()),
           shapeToString(R[0].shape));
  }
  return R;
}

/// Reference path: the anchor's kernel, then the post-ops one by one.
void fusedReference(const KernelInfo &K, const std::vector<Tensor> &Anchor,
                    const Attrs &A, const PostOps &P, Tensor &Out) {
  std::vector<Tensor> Outs{Out};
  K.kernel(Anchor, Outs, anchorAttrs(A));
  applyPostOpsReference(Out, P);
}

/// Explicit conv geometry from the conv attributes (auto_pad resolved by
/// WindowGeometry.h, as in the reference kernel). The R spatial
/// axes of X, W and Out are 2..R+1 (also in the blocked layouts). Anchor
/// is the operator whose attributes A are (conv or conv2d_nchwc): its
/// schema gives the defaults.
ConvParams convParams(const char *Anchor, const Shape &X, const Shape &W,
                      const Shape &Out, const Attrs &A, size_t R) {
  ConvParams P;
  // The window's default steps and pads depend on the rank: not schema
  // defaults.
  P.strides = A.getInts("strides", std::vector<int64_t>(R, 1));
  P.dilations = A.getInts("dilations", std::vector<int64_t>(R, 1));
  std::vector<int64_t> Pads = A.getInts("pads", std::vector<int64_t>(2 * R, 0));
  OpAttrs Conv(Anchor, A);
  P.group = Conv.getInt("group");
  P.constantWeights = A.getInt(ConstantWeightsAttr, 0) != 0;
  std::optional<AutoPad> Mode = parseAutoPad(Conv.getString("auto_pad"));
  if (Pads.size() != 2 * R || !Mode)
    return P; // the shape function already rejected it
  P.padBegin.assign(Pads.begin(), Pads.begin() + (long)R);
  P.padEnd.assign(Pads.begin() + (long)R, Pads.end());
  for (size_t I = 0; I < R && I < P.strides.size() && I < P.dilations.size();
       ++I) {
    WindowAxis<ConstArith> G = windowAxis<ConstArith>(
        X[I + 2], W[I + 2], P.strides[I], P.dilations[I], P.padBegin[I],
        P.padEnd[I], *Mode, /*Ceil=*/false);
    P.padBegin[I] = G.padBegin;
    P.padEnd[I] = G.padEnd;
  }
  return P;
}

bool convDnnl(const std::vector<Tensor> &X, const Attrs &A, const PostOps &P,
              Tensor &Out) {
  const Tensor *Bias = X.size() == 3 ? &X[2] : nullptr;
  if (X[0].rank() < 3)
    return false;
  return dnnlConv(X[0], X[1], Bias,
                  convParams("conv", X[0].shape(), X[1].shape(), Out.shape(), A,
                             (size_t)X[0].rank() - 2),
                  P, Out);
}

bool convNchwcDnnl(const std::vector<Tensor> &X, const Attrs &A,
                   const PostOps &P, Tensor &Out) {
  const Tensor *Bias = X.size() == 3 ? &X[2] : nullptr;
  const BlockedConvLayouts &Ls = parseBlockedConvLayouts(
      "dnnl.conv2d_nchwc_fused", A.getString("data_layout"),
      A.getString("kernel_layout"), A.getString("out_layout"));
  BlockedConvLayout L{Ls.Data.BlockOf['C' - 'A'], Ls.Kernel.BlockOf['I' - 'A'],
                      Ls.Out.BlockOf['C' - 'A']};
  if (X[0].rank() != 5)
    return false;
  return dnnlConvBlocked(
      X[0], X[1], Bias,
      convParams("conv2d_nchwc", X[0].shape(), X[1].shape(), Out.shape(), A, 2),
      L, P, Out);
}

bool matmulDnnl(const std::vector<Tensor> &X, const Attrs &, const PostOps &P,
                Tensor &Out) {
  return dnnlMatMul(X[0], X[1], P, Out);
}

bool denseDnnl(const std::vector<Tensor> &X, const Attrs &A, const PostOps &P,
               Tensor &Out) {
  return dnnlDense(X[0], X[1], nullptr, P, Out,
                   A.getInt(ConstantWeightsAttr, 0) != 0);
}

/// A fused anchor operator: the anchor it computes, the anchor's arity and
/// its DNNL primitive.
struct FusedAnchor {
  const char *Op, *AnchorOp;
  size_t MinArgs, MaxArgs;
  /// Runs the anchor and the post-ops with DNNL; false when DNNL cannot.
  bool (*RunDnnl)(const std::vector<Tensor> &Anchor, const Attrs &A,
                  const PostOps &P, Tensor &Out);
  /// The anchor's shape function ignores attributes it does not know (the
  /// post-ops' may be left in). matmul's and dense's read none.
  bool ShapeReadsOwnAttrs;
};

/// The anchor operator's registered kernel, looked up once (by name, under
/// the registry's lock, it cost a string map search per call).
template <const FusedAnchor &F> const KernelInfo &anchorKernel() {
  static const KernelInfo &K = KernelRegistry::global().get(F.AnchorOp);
  return K;
}

constexpr FusedAnchor ConvFused{"dnnl.conv_fused", "conv", 2, 3,
                                convDnnl,          true};
constexpr FusedAnchor ConvNchwcFused{
    "dnnl.conv2d_nchwc_fused", "conv2d_nchwc", 2, 3, convNchwcDnnl, true};
constexpr FusedAnchor MatMulFused{"dnnl.matmul_fused", "matmul", 2, 2,
                                  matmulDnnl,          true};
constexpr FusedAnchor DenseFused{"dnnl.dense_fused", "dense", 2, 2,
                                 denseDnnl,          true};

template <const FusedAnchor &F>
std::vector<TensorMeta> fusedAnchorShape(const std::vector<Tensor> &In,
                                         const Attrs &A) {
  return fusedShape(F.Op, anchorKernel<F>(), In, A, F.MinArgs, F.MaxArgs,
                    F.ShapeReadsOwnAttrs);
}

/// Splits In into the anchor's inputs and the post-op operands, then runs
/// DNNL or, when it cannot, the reference path.
template <const FusedAnchor &F>
void fusedAnchorKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                       const Attrs &A) {
  std::vector<Tensor> AnchorCopy, Operands;
  const std::vector<Tensor> &Anchor =
      splitInputs(F.Op, In, A, F.MinArgs, F.MaxArgs, AnchorCopy, Operands);
  PostOps P = decodePostOps(A, Operands);
  if (!F.RunDnnl(Anchor, A, P, Out[0]))
    fusedReference(anchorKernel<F>(), Anchor, A, P, Out[0]);
}

/// A dnnl.conv2d_nchwc_pw_dw call's two calls (ConvChain.h): the 1x1
/// conv's inputs and attributes, the depthwise conv's inputs (its first,
/// the 1x1 conv's result, a meta tensor of its shape) and attributes.
struct ConvChainCalls {
  std::vector<Tensor> first, second;
  Attrs firstAttrs, secondAttrs;
};

ConvChainCalls convChainCalls(const std::vector<Tensor> &In, const Attrs &A) {
  ConvChainCalls C;
  int64_t N1 = 0;
  if (!splitPointwiseDepthwiseAttrs(A, C.firstAttrs, N1, C.secondAttrs) ||
      N1 < 2 || (size_t)N1 + 1 > In.size())
    fail("{}: expected the 1x1 conv's inputs ('pw_inputs' of them), then "
         "the depthwise conv's weights and operands; got {} inputs",
         kPointwiseDepthwiseOp, In.size());
  C.first.assign(In.begin(), In.begin() + N1);
  std::vector<TensorMeta> Mid =
      fusedAnchorShape<ConvNchwcFused>(C.first, C.firstAttrs);
  C.second.push_back(Tensor::meta(Mid[0].shape, Mid[0].dtype));
  C.second.insert(C.second.end(), In.begin() + N1, In.end());
  return C;
}

std::vector<TensorMeta> convChainShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  ConvChainCalls C = convChainCalls(In, A);
  return fusedAnchorShape<ConvNchwcFused>(C.second, C.secondAttrs);
}

/// Whether a call's layouts are NCHW16c with 16-channel weight blocks of
/// KernelInputBlock input channels.
bool blocked16(const Attrs &A, int64_t KernelInputBlock) {
  const BlockedConvLayouts &Ls = parseBlockedConvLayouts(
      kPointwiseDepthwiseOp, A.getString("data_layout"),
      A.getString("kernel_layout"), A.getString("out_layout"));
  return Ls.Data.BlockOf['C' - 'A'] == 16 && Ls.Out.BlockOf['C' - 'A'] == 16 &&
         Ls.Kernel.BlockOf['I' - 'A'] == KernelInputBlock;
}

/// The chain in one pass (pointwiseDepthwiseBlocked), when it takes it.
bool convChainFused(const ConvChainCalls &C, Tensor &Out) {
  if (!blocked16(C.firstAttrs, 16) || !blocked16(C.secondAttrs, 1))
    return false;
  std::vector<Tensor> Copy1, Ops1, Copy2, Ops2;
  const std::vector<Tensor> &X1 = splitInputs(kPointwiseDepthwiseOp, C.first,
                                              C.firstAttrs, 2, 3, Copy1, Ops1);
  const std::vector<Tensor> &X2 = splitInputs(kPointwiseDepthwiseOp, C.second,
                                              C.secondAttrs, 2, 3, Copy2, Ops2);
  if (X1[0].rank() != 5 || X2[0].rank() != 5 || X1[1].rank() != 6 ||
      X2[1].rank() != 6)
    return false;
  const Shape &Mid = X2[0].shape();
  return pointwiseDepthwiseBlocked(
      X1[0], X1[1], X1.size() == 3 ? &X1[2] : nullptr,
      convParams("conv2d_nchwc", X1[0].shape(), X1[1].shape(), Mid,
                 C.firstAttrs, 2),
      decodePostOps(C.firstAttrs, Ops1), X2[1],
      X2.size() == 3 ? &X2[2] : nullptr,
      convParams("conv2d_nchwc", Mid, X2[1].shape(), Out.shape(), C.secondAttrs,
                 2),
      decodePostOps(C.secondAttrs, Ops2), Out);
}

/// The 1x1 conv's result when the two calls run apart: a buffer this
/// thread keeps for the next call (a fresh one per call, above 16 MiB, was
/// a page-faulting allocation each time), so that the pairs the one pass
/// leaves to oneDNN cost what two calls on a planned buffer do.
Tensor chainIntermediate(const Shape &S, DType T) {
  constexpr size_t kMaxKept = 16 << 20;
  thread_local std::shared_ptr<Storage> Kept;
  size_t Bytes = (size_t)numElements(S) * dtypeSize(T);
  if (Bytes > kMaxKept)
    return Tensor::empty(S, T);
  // A buffer still referenced (a result a caller kept) is not reused.
  if (!Kept || Kept->size() < Bytes || Kept.use_count() > 1)
    Kept = Storage::allocate(std::max(Bytes, Kept ? Kept->size() : 0));
  return Tensor(Kept, 0, S, T);
}

/// The chain in one pass, or else its two calls one after the other.
void convChainKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  ConvChainCalls C = convChainCalls(In, A);
  if (convChainFused(C, Out[0]))
    return;
  std::vector<Tensor> Mid{
      chainIntermediate(C.second[0].shape(), C.second[0].dtype())};
  fusedAnchorKernel<ConvNchwcFused>(C.first, Mid, C.firstAttrs);
  C.second[0] = Mid[0];
  fusedAnchorKernel<ConvNchwcFused>(C.second, Out, C.secondAttrs);
}

} // namespace

RIVET_REGISTER_KERNEL(kPointwiseDepthwiseOp, convChainKernel, convChainShape,
                      false);
RIVET_REGISTER_KERNEL(ConvFused.Op, fusedAnchorKernel<ConvFused>,
                      fusedAnchorShape<ConvFused>, false);
RIVET_REGISTER_KERNEL(ConvNchwcFused.Op, fusedAnchorKernel<ConvNchwcFused>,
                      fusedAnchorShape<ConvNchwcFused>, false);
RIVET_REGISTER_KERNEL(MatMulFused.Op, fusedAnchorKernel<MatMulFused>,
                      fusedAnchorShape<MatMulFused>, false);
RIVET_REGISTER_KERNEL(DenseFused.Op, fusedAnchorKernel<DenseFused>,
                      fusedAnchorShape<DenseFused>, false);

} // namespace rivet
