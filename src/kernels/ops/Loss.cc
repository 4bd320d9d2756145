//===- Loss.cc - nll_loss and softmax_cross_entropy_loss ------------------===//
//
// Both follow ONNX: input [N, C, d1, ...] (scores or log-probabilities),
// integer target [N, d1, ...], optional weight [C]; reduction none/sum/mean
// (mean divides by the summed weights of the targets that are not
// ignore_index). softmax_cross_entropy_loss also returns log_softmax(scores)
// over axis 1. Arithmetic in double.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <cmath>

namespace rivet::kernels {
namespace {

enum class Reduction { None, Sum, Mean };

Reduction reductionAttr(const char *Op, const Attrs &A) {
  std::string R = attrString(Op, A, "reduction");
  if (R == "none")
    return Reduction::None;
  if (R == "sum")
    return Reduction::Sum;
  if (R == "mean")
    return Reduction::Mean;
  fail("{}: attribute 'reduction' must be none, sum or mean, got '{}'", Op, R);
}

/// Checks the inputs; returns the shape of the unreduced loss ([N, d...]).
Shape checkLossInputs(const char *Op, const std::vector<Tensor> &In) {
  if (In.size() != 2 && In.size() != 3)
    fail("{}: expected 2 or 3 inputs, got {}", Op, In.size());
  const Tensor &X = In[0], &T = In[1];
  checkDType(Op, "input", X.dtype(), DTypeClass::Float);
  checkDType(Op, "target", T.dtype(), DTypeClass::Index);
  if (X.rank() < 2)
    fail("{}: input must have shape [N, C, ...], got {}", Op,
         shapeToString(X.shape()));
  Shape L = X.shape();
  L.erase(L.begin() + 1);
  if (T.shape() != L)
    fail("{}: target shape {} does not match input shape {} (expected {})", Op,
         shapeToString(T.shape()), shapeToString(X.shape()), shapeToString(L));
  if (In.size() == 3) {
    checkSameDType(Op, "input", X, "weight", In[2]);
    if (In[2].shape() != Shape{X.shape()[1]})
      fail("{}: weight must have shape ({},), got {}", Op, X.shape()[1],
           shapeToString(In[2].shape()));
  }
  return L;
}

/// Negative log-likelihood of LogP (double, [N, C, D] flattened) into Out.
void nllCompute(const char *Op, const std::vector<double> &LogP,
                const Shape &XShape, const std::vector<Tensor> &In,
                const Attrs &A, Tensor &Out) {
  Reduction R = reductionAttr(Op, A);
  std::optional<int64_t> Ignore;
  if (A.has("ignore_index"))
    Ignore = attrInt(Op, A, "ignore_index");
  int64_t N = XShape[0], C = XShape[1];
  int64_t D = prodRange(XShape, 2, XShape.size());
  std::vector<double> W;
  if (In.size() == 3)
    W = In[2].toDoubleVector();
  std::vector<int64_t> T = In[1].toIntVector();
  std::vector<double> Loss((size_t)(N * D));
  double Sum = 0, WSum = 0;
  for (int64_t Ni = 0; Ni < N; ++Ni)
    for (int64_t Di = 0; Di < D; ++Di) {
      int64_t Pos = Ni * D + Di, Cls = T[Pos];
      if (Ignore && Cls == *Ignore) {
        Loss[Pos] = 0;
        continue;
      }
      if (Cls < 0 || Cls >= C)
        fail("{}: target {} at position {} is out of range for {} classes", Op,
             Cls, Pos, C);
      double Wt = W.empty() ? 1.0 : W[Cls];
      Loss[Pos] = -LogP[(Ni * C + Cls) * D + Di] * Wt;
      Sum += Loss[Pos];
      WSum += Wt;
    }
  dispatchDType(Out.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E *PO = Out.data<E>();
    if (R == Reduction::None) {
      for (size_t I = 0; I < Loss.size(); ++I)
        PO[I] = convertElement<E>(Loss[I]);
    } else {
      PO[0] = convertElement<E>(R == Reduction::Sum ? Sum : Sum / WSum);
    }
  });
}

std::vector<TensorMeta> nllShape(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  Shape L = checkLossInputs("nll_loss", In);
  Reduction R = reductionAttr("nll_loss", A);
  return {{R == Reduction::None ? L : Shape{}, In[0].dtype()}};
}

void nllKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  nllCompute("nll_loss", In[0].toDoubleVector(), In[0].shape(), In, A, Out[0]);
}

std::vector<TensorMeta> sceShape(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  Shape L = checkLossInputs("softmax_cross_entropy_loss", In);
  Reduction R = reductionAttr("softmax_cross_entropy_loss", A);
  return {{R == Reduction::None ? L : Shape{}, In[0].dtype()},
          {In[0].shape(), In[0].dtype()}};
}

void sceKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  const Tensor &X = In[0];
  int64_t N = X.shape()[0], C = X.shape()[1];
  int64_t D = prodRange(X.shape(), 2, X.shape().size());
  std::vector<double> V = X.toDoubleVector();
  // log_softmax over the class axis, stabilized by the maximum.
  for (int64_t Ni = 0; Ni < N; ++Ni)
    for (int64_t Di = 0; Di < D; ++Di) {
      double Max = -INFINITY, Sum = 0;
      for (int64_t Ci = 0; Ci < C; ++Ci)
        Max = std::fmax(Max, V[(Ni * C + Ci) * D + Di]);
      for (int64_t Ci = 0; Ci < C; ++Ci)
        Sum += std::exp(V[(Ni * C + Ci) * D + Di] - Max);
      double LogSum = std::log(Sum);
      for (int64_t Ci = 0; Ci < C; ++Ci) {
        double &E = V[(Ni * C + Ci) * D + Di];
        E = E - Max - LogSum;
      }
    }
  nllCompute("softmax_cross_entropy_loss", V, X.shape(), In, A, Out[0]);
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E *PO = Out[1].data<E>();
    for (size_t I = 0; I < V.size(); ++I)
      PO[I] = convertElement<E>(V[I]);
  });
}

} // namespace

RIVET_REGISTER_KERNEL("nll_loss", nllKernel, nllShape, false);
RIVET_REGISTER_KERNEL("softmax_cross_entropy_loss", sceKernel, sceShape, false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

namespace {
const std::vector<AttrSpec> LossAttrs = {
    {"reduction", AttrKind::String, false, "none, sum or mean", "mean"},
    {"ignore_index", AttrKind::Int, false,
     "targets with this value contribute nothing (absent: none)"}};
} // namespace
RIVET_REGISTER_ATTRS("nll_loss", LossAttrs);
RIVET_REGISTER_ATTRS("softmax_cross_entropy_loss", LossAttrs);

} // namespace rivet::kernels
