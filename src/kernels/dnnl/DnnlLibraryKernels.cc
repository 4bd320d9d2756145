//===- DnnlLibraryKernels.cc - oneDNN in place of the anchor operators ----===//
//
// Library kernels (KernelInfo::libraryFor) of conv, conv2d_nchwc, dense,
// matmul, gemm and layout_transform: the VM compiler calls them in the
// operators' place at every opt level; the reference interpreter never
// does, so its plain C++ kernels (ops/NN.cc, ops/Linalg.cc, ops/Layout.cc)
// are an oracle that shares nothing with oneDNN, and differential tests
// catch a oneDNN bug or a wrong set-up of it. Each runs oneDNN where it
// takes the case and the operator's reference kernel where it declines
// (another dtype, a case it cannot express, RIVET_DISABLE_DNNL).
//
//===----------------------------------------------------------------------===//
#include "kernels/AttrSchema.h"
#include "kernels/Kernel.h"
#include "kernels/Layout.h"
#include "kernels/dnnl/DnnlAnchors.h"

namespace rivet {
namespace {

/// An operator with a library kernel here. Run computes it on oneDNN into
/// the preallocated Out, or returns false.
struct DnnlOp {
  const char *Name, *Op;
  bool (*Run)(const std::vector<Tensor> &In, const Attrs &A, Tensor &Out);
};

/// Op's reference kernel, looked up once.
template <const DnnlOp &D> const KernelInfo &reference() {
  static const KernelInfo &K = KernelRegistry::global().get(D.Op);
  return K;
}

template <const DnnlOp &D>
std::vector<TensorMeta> dnnlOpShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  return reference<D>().shapeFn(In, A);
}

template <const DnnlOp &D>
void dnnlOpKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  if (!D.Run(In, A, Out[0]))
    reference<D>().kernel(In, Out, A);
}

/// The anchors the VM also fuses with a tail run as their fused kernel
/// (FusedAnchorKernels.cc) with no post-ops, so that how each calls oneDNN
/// is said once, there. That kernel runs the anchor's reference kernel
/// itself where oneDNN declines, so this never does.
template <const char *Fused>
bool viaFused(const std::vector<Tensor> &In, const Attrs &A, Tensor &Out) {
  static const KernelInfo &K = KernelRegistry::global().get(Fused);
  std::vector<Tensor> Outs{Out};
  K.kernel(In, Outs, A);
  return true;
}

constexpr char ConvFusedName[] = "dnnl.conv_fused",
               ConvNchwcFusedName[] = "dnnl.conv2d_nchwc_fused",
               DenseFusedName[] = "dnnl.dense_fused",
               MatMulFusedName[] = "dnnl.matmul_fused";

bool gemmDnnl(const std::vector<Tensor> &In, const Attrs &A, Tensor &Out) {
  OpAttrs G("gemm", A);
  return dnnlGemm(In[0], In[1], In.size() == 3 ? &In[2] : nullptr,
                  G.getInt("trans_a") != 0, G.getInt("trans_b") != 0,
                  G.getFloat("alpha"), G.getFloat("beta"), Out);
}

/// A change of channel blocking between NCHW and NCHW{b}c on oneDNN's
/// reorders (DnnlLayout.cc says why); any other layout change declines.
bool layoutTransformDnnl(const std::vector<Tensor> &In, const Attrs &A,
                         Tensor &Out) {
  const char *Op = "layout_transform";
  Layout Src = parseLayout(Op, A.getString("src_layout"));
  Layout Dst = parseLayout(Op, A.getString("dst_layout"));
  auto IsNchwFamily = [](const Layout &L) {
    return hasAxes(L, "NCHW") || hasAxes(L, "NCHWc");
  };
  constexpr int C = 'C' - 'A';
  return IsNchwFamily(Src) && IsNchwFamily(Dst) &&
         Src.BlockOf[C] != Dst.BlockOf[C] &&
         dnnlReblockChannels(In[0], Src.BlockOf[C], Dst.BlockOf[C], Out);
}

constexpr DnnlOp Conv{"dnnl.conv", "conv", viaFused<ConvFusedName>};
constexpr DnnlOp ConvNchwc{"dnnl.conv2d_nchwc", "conv2d_nchwc",
                           viaFused<ConvNchwcFusedName>};
constexpr DnnlOp Dense{"dnnl.dense", "dense", viaFused<DenseFusedName>};
constexpr DnnlOp MatMul{"dnnl.matmul", "matmul", viaFused<MatMulFusedName>};
constexpr DnnlOp Gemm{"dnnl.gemm", "gemm", gemmDnnl};
constexpr DnnlOp LayoutTransform{"dnnl.layout_transform", "layout_transform",
                                 layoutTransformDnnl};

} // namespace

#define RIVET_REGISTER_DNNL_OP(D)                                              \
  RIVET_REGISTER_LIBRARY_KERNEL(D.Name, D.Op, dnnlOpKernel<D>, dnnlOpShape<D>)
RIVET_REGISTER_DNNL_OP(Conv);
RIVET_REGISTER_DNNL_OP(ConvNchwc);
RIVET_REGISTER_DNNL_OP(Dense);
RIVET_REGISTER_DNNL_OP(MatMul);
RIVET_REGISTER_DNNL_OP(Gemm);
RIVET_REGISTER_DNNL_OP(LayoutTransform);
#undef RIVET_REGISTER_DNNL_OP

} // namespace rivet
