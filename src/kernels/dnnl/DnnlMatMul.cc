//===- DnnlMatMul.cc - matmul, dense and gemm on oneDNN -------------------===//
//
// All three are oneDNN's matmul primitive over plain (possibly transposed,
// via strides) operands: its AVX2/AVX-512 GEMM wants no weight reorder, so
// nothing is copied. Dense flattens x's leading dims into M; gemm's alpha is
// an output scale and beta * c a sum post-op over c pre-broadcast into out.
//
//===----------------------------------------------------------------------===//
#include "kernels/dnnl/DnnlAnchors.h"

#include "kernels/dnnl/DnnlConfig.h"
#include "kernels/dnnl/DnnlContext.h"

#include <fmt/format.h>

namespace rivet {

using namespace dnnlctx;
using dnnl::memory;

namespace {

std::string descKey(const memory::desc &D) {
  return fmt::format(
      "{}/{}", fmt::join(D.dims(), "x"),
      fmt::join(
          memory::dims(D.data.format_desc.blocking.strides,
                       D.data.format_desc.blocking.strides + D.data.ndims),
          ","));
}

/// One matmul call: Dst = post(Alpha * Src @ Wts + Bias). The descriptors
/// say how the tensors' buffers are viewed.
bool runMatMul(const Tensor &Src, const memory::desc &SrcD, const Tensor &Wts,
               const memory::desc &WtsD, const Tensor *Bias,
               const memory::desc &BiasD, Tensor &Out, const memory::desc &DstD,
               float Alpha, const PostOpPlan &Plan) {
  memory::dims SrcDims = SrcD.dims();
  WorkScope Scope(SrcDims.empty() ? 0 : (int64_t)Out.numel() * SrcDims.back());
  std::string Key =
      fmt::format("matmul|{}|{}|{}|{}|a{}|{}", descKey(SrcD), descKey(WtsD),
                  Bias ? descKey(BiasD) : "-", descKey(DstD), Alpha, Plan.key);
  auto Prim = findPrimitive(Key, [&] {
    dnnl::primitive_attr Attr = baseAttr();
    Attr.set_post_ops(Plan.ops);
    if (Alpha != 1.f)
      Attr.set_output_scales(0, {Alpha});
    dnnl::matmul::desc D = Bias ? dnnl::matmul::desc(SrcD, WtsD, BiasD, DstD)
                                : dnnl::matmul::desc(SrcD, WtsD, DstD);
    dnnl::matmul::primitive_desc PD(D, Attr, engine());
    CachedPrimitive C;
    C.prim = dnnl::matmul(PD);
    C.scratchpad = PD.scratchpad_desc();
    return C;
  });
  if (!Prim->prim)
    return false;
  try {
    dnnl::stream &S = threadStream();
    std::unordered_map<int, memory> Args{{DNNL_ARG_SRC, wrap(Src, SrcD)},
                                         {DNNL_ARG_WEIGHTS, wrap(Wts, WtsD)},
                                         {DNNL_ARG_DST, wrap(Out, DstD)}};
    if (Bias)
      Args[DNNL_ARG_BIAS] = wrap(*Bias, BiasD);
    addPostOpArgs(Plan, Args);
    executePrimitive(*Prim, std::move(Args));
    S.wait();
  } catch (const dnnl::error &) {
    return false; // the reference kernel overwrites all of Out
  }
  return true;
}

bool anyEmpty(std::initializer_list<const Tensor *> Ts) {
  for (const Tensor *T : Ts)
    if (T && T->numel() == 0)
      return true;
  return false;
}

} // namespace

bool dnnlMatMul(const Tensor &A, const Tensor &B, const PostOps &Post,
                Tensor &Out) {
  if (!dnnlEnabled() || !allFloat32({&A, &B, &Out}) || A.rank() < 1 ||
      B.rank() < 1 || anyEmpty({&A, &B, &Out}))
    return false;
  Shape SA = A.shape(), SB = B.shape();
  bool AVec = SA.size() == 1, BVec = SB.size() == 1;
  if (AVec)
    SA.insert(SA.begin(), 1);
  if (BVec)
    SB.push_back(1);
  size_t R = std::max(SA.size(), SB.size());
  if (R > DNNL_MAX_NDIMS)
    return false;
  SA.insert(SA.begin(), R - SA.size(), 1);
  SB.insert(SB.begin(), R - SB.size(), 1);
  int64_t M = SA[R - 2], K = SA[R - 1], N = SB[R - 1];
  if (SB[R - 2] != K)
    return false;
  Shape Dst(R);
  for (size_t I = 0; I + 2 < R; ++I) {
    if (SA[I] != SB[I] && SA[I] != 1 && SB[I] != 1)
      return false;
    Dst[I] = SA[I] == 1 ? SB[I] : SA[I];
  }
  Dst[R - 2] = M;
  Dst[R - 1] = N;
  // The logical output drops the unit axes of vector operands and may have
  // fewer batch axes than R - 2.
  std::vector<int> OutToDst;
  size_t OutBatch = (size_t)Out.rank() - (AVec ? 0 : 1) - (BVec ? 0 : 1);
  for (size_t I = 0; I < OutBatch; ++I)
    OutToDst.push_back((int)(R - 2 - OutBatch + I));
  if (!AVec)
    OutToDst.push_back((int)R - 2);
  if (!BVec)
    OutToDst.push_back((int)R - 1);
  if (numElements(Dst) != Out.numel())
    return false;
  std::optional<PostOpPlan> Plan =
      planPostOps(Post, Out.shape(), toDims(Dst), OutToDst);
  if (!Plan)
    return false;
  return runMatMul(A, plainDesc(toDims(SA)), B, plainDesc(toDims(SB)), nullptr,
                   memory::desc(), Out, plainDesc(toDims(Dst)), 1.f, *Plan);
}

bool dnnlDense(const Tensor &X, const Tensor &W, const Tensor *Bias,
               const PostOps &Post, Tensor &Out) {
  if (!dnnlEnabled() || !allFloat32({&X, &W, Bias, &Out}) || X.rank() < 1 ||
      W.rank() != 2 || anyEmpty({&X, &W, &Out}))
    return false;
  int64_t K = X.shape().back(), N = W.shape()[0];
  if (W.shape()[1] != K ||
      (Bias && (Bias->rank() != 1 || Bias->shape()[0] != N)))
    return false;
  int64_t M = X.numel() / K;
  std::vector<int> OutToDst(Out.shape().size(), 0);
  OutToDst.back() = 1;
  std::optional<PostOpPlan> Plan =
      planPostOps(Post, Out.shape(), {M, N}, OutToDst);
  if (!Plan)
    return false;
  // w is [N, K] row-major, i.e. [K, N] with strides (1, K).
  return runMatMul(X, plainDesc({M, K}), W, stridedDesc({K, N}, {1, K}), Bias,
                   plainDesc({1, N}), Out, plainDesc({M, N}), 1.f, *Plan);
}

bool dnnlGemm(const Tensor &A, const Tensor &B, const Tensor *C, bool TransA,
              bool TransB, double Alpha, double Beta, Tensor &Out) {
  if (!dnnlEnabled() || !allFloat32({&A, &B, C, &Out}) || A.rank() != 2 ||
      B.rank() != 2 || Out.rank() != 2 || anyEmpty({&A, &B, &Out}))
    return false;
  int64_t M = Out.shape()[0], N = Out.shape()[1];
  int64_t K = A.shape()[TransA ? 0 : 1];
  if (C && C->rank() > 2)
    return false;
  PostOpPlan Plan;
  if (C) {
    // out = c broadcast to [M, N]; the sum post-op adds beta * out.
    Shape SC = C->shape();
    SC.insert(SC.begin(), 2 - SC.size(), 1);
    if ((SC[0] != 1 && SC[0] != M) || (SC[1] != 1 && SC[1] != N))
      return false;
    const float *PC = C->data<float>();
    float *PO = Out.data<float>();
    int64_t RS = SC[0] == 1 ? 0 : SC[1], CS = SC[1] == 1 ? 0 : 1;
    for (int64_t I = 0; I < M; ++I)
      for (int64_t J = 0; J < N; ++J)
        PO[I * N + J] = PC[I * RS + J * CS];
    Plan.ops.append_sum((float)Beta);
    Plan.key = fmt::format("sum{};", (float)Beta);
  }
  memory::desc AD =
      TransA ? stridedDesc({M, K}, {1, M}) : stridedDesc({M, K}, {K, 1});
  memory::desc BD =
      TransB ? stridedDesc({K, N}, {1, K}) : stridedDesc({K, N}, {N, 1});
  return runMatMul(A, AD, B, BD, nullptr, memory::desc(), Out,
                   plainDesc({M, N}), (float)Alpha, Plan);
}

} // namespace rivet
