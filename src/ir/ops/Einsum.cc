//===- Einsum.cc - einsum and det -----------------------------------------===//
#include "ir/ops/RelationUtil.h"

#include <cctype>
#include <map>

namespace rivet::ir {
namespace {

/// One term of an equation: its letters and the position of its ellipsis.
struct Term {
  std::vector<char> Letters;
  int Ellipsis = -1;
};

Term parseTerm(const std::string &T) {
  Term R;
  for (size_t I = 0; I < T.size(); ++I) {
    if (T.compare(I, 3, "...") == 0) {
      if (R.Ellipsis >= 0)
        fail("einsum: more than one ellipsis in term '{}'", T);
      R.Ellipsis = (int)R.Letters.size();
      I += 2;
    } else if (std::isalpha((unsigned char)T[I])) {
      R.Letters.push_back(T[I]);
    } else {
      fail("einsum: invalid character '{}' in the equation", T[I]);
    }
  }
  return R;
}

// einsum(operands..., equation): the output dims are those of its labels;
// ellipsis dims are broadcast (unknown unless equal or 1).
Type einsumRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("einsum", A);
  std::string Eq, Raw = *optString(A, "equation");
  for (char Ch : Raw)
    if (Ch != ' ')
      Eq += Ch;
  size_t Arrow = Eq.find("->");
  std::string Lhs = Eq.substr(0, Arrow);
  std::vector<Term> Terms;
  for (size_t Start = 0;;) {
    size_t C = Lhs.find(',', Start);
    Terms.push_back(
        parseTerm(Lhs.substr(Start, C == std::string::npos ? C : C - Start)));
    if (C == std::string::npos)
      break;
    Start = C + 1;
  }
  if (Terms.size() != Args.size())
    fail("einsum: the equation '{}' has {} operands, got {} arguments", Eq,
         Terms.size(), Args.size());
  if (anyUndecided(Args))
    return nullptr;
  std::map<char, Dim> Size;
  std::map<char, int> Count;
  std::optional<std::vector<Dim>> Ell = std::vector<Dim>{};
  DType T = tensorArg("einsum", Args, 0).dtype;
  for (size_t K = 0; K < Args.size(); ++K) {
    const TensorTypeNode &X = tensorArg("einsum", Args, K);
    requireNumeric("einsum", X, K);
    if (K > 0)
      requireSameDType("einsum", tensorArg("einsum", Args, 0), X, K);
    const Term &Tm = Terms[K];
    for (char L : Tm.Letters)
      Count[L]++;
    if (!X.shape) {
      if (Tm.Ellipsis >= 0)
        Ell.reset();
      continue;
    }
    int64_t R = (int64_t)X.shape->size(), NL = (int64_t)Tm.Letters.size();
    if (R < NL || (Tm.Ellipsis < 0 && R != NL))
      failArg(K,
              "einsum: operand {} of type {} does not match the equation '{}'",
              K, typeStr(X), Eq);
    int64_t NEll = R - NL;
    for (int64_t D = 0, Li = 0; D < R; ++D) {
      bool InEll =
          Tm.Ellipsis >= 0 && D >= Tm.Ellipsis && D < Tm.Ellipsis + NEll;
      const Dim &Dd = (*X.shape)[D];
      if (InEll) {
        if (!Ell)
          continue;
        // Right-align this operand's ellipsis dims against the others'.
        int64_t Pos = D - Tm.Ellipsis, Len = (int64_t)Ell->size();
        if (NEll > Len) {
          Ell->insert(Ell->begin(), NEll - Len, Dim::constant(1));
          Len = NEll;
        }
        Dim &E = (*Ell)[Len - NEll + Pos];
        std::optional<Dim> B = broadcastDim(E, Dd);
        if (!B)
          failArg(K, "einsum: ellipsis dimensions of {} do not broadcast",
                  typeStr(X));
        E = *B;
        continue;
      }
      char L = Tm.Letters[Li++];
      auto It = Size.find(L);
      if (It == Size.end()) {
        Size[L] = Dd;
      } else {
        std::optional<Dim> M = mergeEqualDim(It->second, Dd);
        if (!M)
          failArg(K, "einsum: label '{}' has extents {} and {}", L,
                  It->second.str(), Dd.str());
        It->second = *M;
      }
    }
  }
  Term Out;
  if (Arrow != std::string::npos) {
    Out = parseTerm(Eq.substr(Arrow + 2));
    for (char L : Out.Letters)
      if (!Count.count(L))
        fail("einsum: output label '{}' is not in any input", L);
  } else {
    Out.Ellipsis = 0;
    for (auto [L, N] : Count)
      if (N == 1)
        Out.Letters.push_back(L);
  }
  if (Out.Ellipsis >= 0 && !Ell)
    return makeTensor(std::nullopt, T);
  std::vector<Dim> Dims;
  for (size_t I = 0; I <= Out.Letters.size(); ++I) {
    if ((int)I == Out.Ellipsis)
      Dims.insert(Dims.end(), Ell->begin(), Ell->end());
    if (I < Out.Letters.size()) {
      auto It = Size.find(Out.Letters[I]);
      Dims.push_back(It == Size.end() ? Dim::any() : It->second);
    }
  }
  return makeTensor(Dims, T);
}

// det(x: [..., M, M] float) -> [...].
Type detRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("det", A);
  checkArity("det", Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg("det", Args, 0);
  requireFloat("det", X, 0);
  if (!X.shape)
    return makeTensor(std::nullopt, X.dtype);
  size_t R = X.shape->size();
  if (R < 2 || !mergeEqualDim((*X.shape)[R - 1], (*X.shape)[R - 2]))
    failArg(0, "det: expects square matrices [..., M, M], got {}", typeStr(X));
  return makeTensor(std::vector<Dim>(X.shape->begin(), X.shape->end() - 2),
                    X.dtype);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "einsum",
    "Einstein summation over the operands as the equation says.\n"
    "Ellipsis, implicit output, reductions and repeated (diagonal) labels as "
    "in ONNX.",
    -1, einsumRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "det",
    "Determinant of each square matrix in the last two axes.\n"
    "LU factorization with partial pivoting.",
    1, detRel, FusionPattern::Opaque});

} // namespace rivet::ir
