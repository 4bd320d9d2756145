//===- Einsum.cc - einsum and det -----------------------------------------===//
//
// einsum parses the equation into one label list per operand (an ellipsis
// becomes labels of its own, right-aligned and broadcast across operands),
// then walks every combination of output and summed labels; a label
// repeated within one operand reads its diagonal (summed strides). det
// factors each matrix by LU with partial pivoting in double.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace rivet::kernels {
namespace {

/// Labels are letters ('a'..'z', 'A'..'Z'); ellipsis dimensions get labels
/// from 256 on (256 + position from the left of the broadcast ellipsis).
struct EinsumPlan {
  std::vector<std::vector<int>> In; // labels of each operand
  std::vector<int> Out;             // labels of the output
  std::map<int, int64_t> Size;      // extent of each label
};

/// Splits "ab...,c->a" into terms; Arrow tells whether "->" was present.
void splitEquation(const std::string &Eq, std::vector<std::string> &Terms,
                   std::string &Out, bool &Arrow) {
  std::string S;
  for (char Ch : Eq)
    if (Ch != ' ')
      S += Ch;
  size_t A = S.find("->");
  Arrow = A != std::string::npos;
  std::string Lhs = Arrow ? S.substr(0, A) : S;
  Out = Arrow ? S.substr(A + 2) : "";
  Terms.clear();
  size_t Start = 0;
  for (;;) {
    size_t C = Lhs.find(',', Start);
    Terms.push_back(Lhs.substr(Start, C == std::string::npos ? C : C - Start));
    if (C == std::string::npos)
      break;
    Start = C + 1;
  }
}

/// Letters of a term and where its ellipsis is (-1: none).
std::vector<int> termLetters(const std::string &T, int &Ellipsis) {
  std::vector<int> L;
  Ellipsis = -1;
  for (size_t I = 0; I < T.size(); ++I) {
    if (T.compare(I, 3, "...") == 0) {
      if (Ellipsis >= 0)
        fail("einsum: more than one ellipsis in term '{}'", T);
      Ellipsis = (int)L.size();
      I += 2;
      continue;
    }
    if (!std::isalpha((unsigned char)T[I]))
      fail("einsum: invalid character '{}' in the equation", T[I]);
    L.push_back((unsigned char)T[I]);
  }
  return L;
}

EinsumPlan planEinsum(const std::string &Eq, const std::vector<Shape> &Shapes) {
  std::vector<std::string> Terms;
  std::string OutTerm;
  bool Arrow;
  splitEquation(Eq, Terms, OutTerm, Arrow);
  if (Terms.size() != Shapes.size())
    fail("einsum: the equation '{}' has {} operands, got {} inputs", Eq,
         Terms.size(), Shapes.size());
  EinsumPlan P;
  int64_t EllRank = 0;
  std::vector<std::pair<int, int64_t>> EllDims; // per operand: pos, count
  std::map<int, int> Count;
  for (size_t K = 0; K < Terms.size(); ++K) {
    int E;
    std::vector<int> L = termLetters(Terms[K], E);
    int64_t R = (int64_t)Shapes[K].size();
    int64_t NEll = R - (int64_t)L.size();
    if (NEll < 0 || (E < 0 && NEll != 0))
      fail("einsum: term '{}' does not match operand {} of rank {}", Terms[K],
           K, R);
    EllRank = std::max(EllRank, NEll);
    EllDims.push_back({E, NEll});
    P.In.push_back(L);
  }
  // Expand ellipses (right-aligned) and collect extents.
  for (size_t K = 0; K < Terms.size(); ++K) {
    auto [E, NEll] = EllDims[K];
    std::vector<int> L = P.In[K];
    if (E >= 0) {
      std::vector<int> Ell;
      for (int64_t J = 0; J < NEll; ++J)
        Ell.push_back(256 + (int)(EllRank - NEll + J));
      L.insert(L.begin() + E, Ell.begin(), Ell.end());
    }
    for (size_t D = 0; D < L.size(); ++D) {
      int64_t Ext = Shapes[K][D];
      auto It = P.Size.find(L[D]);
      if (It == P.Size.end() || It->second == 1)
        P.Size[L[D]] = Ext;
      else if (Ext != It->second && !(L[D] >= 256 && Ext == 1))
        fail("einsum: label '{}' has extents {} and {}",
             L[D] >= 256 ? std::string("...") : std::string(1, (char)L[D]),
             It->second, Ext);
      if (L[D] < 256)
        Count[L[D]]++;
    }
    P.In[K] = L;
  }
  std::vector<int> EllLabels;
  for (int64_t J = 0; J < EllRank; ++J)
    EllLabels.push_back(256 + (int)J);
  if (Arrow) {
    int E;
    std::vector<int> L = termLetters(OutTerm, E);
    for (int Lb : L) {
      if (!Count.count(Lb))
        fail("einsum: output label '{}' is not in any input", (char)Lb);
      if (std::count(L.begin(), L.end(), Lb) > 1)
        fail("einsum: output label '{}' appears twice", (char)Lb);
    }
    // Without an ellipsis in the output, ellipsis dims are summed.
    if (E >= 0)
      L.insert(L.begin() + E, EllLabels.begin(), EllLabels.end());
    P.Out = L;
  } else {
    // Implicit output: ellipsis dims, then labels seen once, alphabetically.
    P.Out = EllLabels;
    for (auto [Lb, N] : Count)
      if (N == 1)
        P.Out.push_back(Lb);
  }
  return P;
}

std::vector<TensorMeta> einsumShape(const std::vector<Tensor> &In,
                                    const Attrs &A) {
  if (In.empty())
    fail("einsum: expected at least one input");
  std::string Eq = withOp("einsum", [&] { return A.getString("equation"); });
  std::vector<Shape> Shapes;
  for (size_t I = 0; I < In.size(); ++I) {
    checkDType("einsum", "inputs", In[I].dtype(), DTypeClass::Numeric);
    if (I > 0)
      checkSameDType("einsum", "inputs[0]", In[0], "inputs[i]", In[I]);
    Shapes.push_back(In[I].shape());
  }
  EinsumPlan P = planEinsum(Eq, Shapes);
  Shape Out;
  for (int L : P.Out)
    Out.push_back(P.Size[L]);
  return {{Out, In[0].dtype()}};
}

void einsumKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                  const Attrs &A) {
  std::vector<Shape> Shapes;
  for (const Tensor &T : In)
    Shapes.push_back(T.shape());
  EinsumPlan P = planEinsum(A.getString("equation"), Shapes);
  // All labels: output first, then the summed ones.
  std::vector<int> Labels = P.Out;
  for (auto [L, Ext] : P.Size)
    if (std::find(Labels.begin(), Labels.end(), L) == Labels.end())
      Labels.push_back(L);
  size_t NL = Labels.size(), NOut = P.Out.size();
  std::vector<int64_t> Ext(NL);
  for (size_t I = 0; I < NL; ++I)
    Ext[I] = P.Size[Labels[I]];
  // Strides[k][l]: step of operand k per unit of label l (0 if absent or
  // broadcast; summed for a repeated label, which reads the diagonal).
  std::vector<std::vector<int64_t>> Strides(In.size(),
                                            std::vector<int64_t>(NL, 0));
  for (size_t K = 0; K < In.size(); ++K) {
    std::vector<int64_t> C = contiguousStrides(In[K].shape());
    for (size_t D = 0; D < P.In[K].size(); ++D) {
      if (In[K].shape()[D] == 1 && P.Size[P.In[K][D]] != 1)
        continue;
      size_t L =
          std::find(Labels.begin(), Labels.end(), P.In[K][D]) - Labels.begin();
      Strides[K][L] += C[D];
    }
  }
  int64_t OutTotal = 1, SumTotal = 1;
  for (size_t I = 0; I < NL; ++I)
    (I < NOut ? OutTotal : SumTotal) *= Ext[I];
  dispatchDType(Out[0].dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    if constexpr (elemInClass<E>(DTypeClass::Numeric)) {
      using Acc = std::conditional_t<std::is_integral_v<E>, int64_t, double>;
      std::vector<const E *> Ptr;
      for (const Tensor &T : In)
        Ptr.push_back(T.data<E>());
      E *PO = Out[0].data<E>();
      std::vector<int64_t> Idx(NL, 0);
      for (int64_t O = 0; O < OutTotal; ++O) {
        // Idx[0..NOut) holds the output index; reset the summed ones.
        for (size_t I = NOut; I < NL; ++I)
          Idx[I] = 0;
        Acc S = 0;
        for (int64_t R = 0; R < SumTotal; ++R) {
          Acc Prod = 1;
          for (size_t K = 0; K < In.size(); ++K) {
            int64_t Off = 0;
            for (size_t I = 0; I < NL; ++I)
              Off += Idx[I] * Strides[K][I];
            Prod = Prod * Acc(ComputeT<E>(Ptr[K][Off]));
          }
          S += Prod;
          for (size_t I = NL; I-- > NOut;) {
            if (++Idx[I] < Ext[I])
              break;
            Idx[I] = 0;
          }
        }
        PO[O] = convertElement<E>(S);
        for (size_t I = NOut; I-- > 0;) {
          if (++Idx[I] < Ext[I])
            break;
          Idx[I] = 0;
        }
      }
    }
  });
}

//===----------------------------------------------------------------------===//
// det
//===----------------------------------------------------------------------===//

std::vector<TensorMeta> detShape(const std::vector<Tensor> &In,
                                 const Attrs &A) {
  checkArity("det", In, 1);
  checkDType("det", "x", In[0].dtype(), DTypeClass::Float);
  const Shape &S = In[0].shape();
  if (S.size() < 2 || S[S.size() - 1] != S[S.size() - 2])
    fail("det: expects square matrices [..., M, M], got {}", shapeToString(S));
  return {{Shape(S.begin(), S.end() - 2), In[0].dtype()}};
}

void detKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A) {
  const Tensor &X = In[0];
  int64_t M = X.shape().back();
  int64_t Batch = prodRange(X.shape(), 0, X.shape().size() - 2);
  std::vector<double> V = X.toDoubleVector();
  dispatchDType(X.dtype(), [&](auto Tag) {
    using E = decltype(Tag);
    E *PO = Out[0].data<E>();
    for (int64_t B = 0; B < Batch; ++B) {
      double *Mat = V.data() + B * M * M;
      double Det = 1;
      for (int64_t C = 0; C < M; ++C) {
        int64_t Piv = C;
        for (int64_t R = C + 1; R < M; ++R)
          if (std::fabs(Mat[R * M + C]) > std::fabs(Mat[Piv * M + C]))
            Piv = R;
        if (Mat[Piv * M + C] == 0) {
          Det = 0;
          break;
        }
        if (Piv != C) {
          for (int64_t J = 0; J < M; ++J)
            std::swap(Mat[Piv * M + J], Mat[C * M + J]);
          Det = -Det;
        }
        double D = Mat[C * M + C];
        Det *= D;
        for (int64_t R = C + 1; R < M; ++R) {
          double F = Mat[R * M + C] / D;
          for (int64_t J = C; J < M; ++J)
            Mat[R * M + J] -= F * Mat[C * M + J];
        }
      }
      PO[B] = convertElement<E>(Det);
    }
  });
}

} // namespace

RIVET_REGISTER_KERNEL("einsum", einsumKernel, einsumShape, false);
RIVET_REGISTER_KERNEL("det", detKernel, detShape, false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS("einsum", {{"equation", AttrKind::String, true,
                                 "e.g. 'bij,bjk->bik'"}});

} // namespace rivet::kernels
