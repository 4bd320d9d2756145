//===- SimplifyExpr.cc - Folds chains of shape and dtype operators --------===//
//
// Rewrites that the types prove: reshape-like chains (reshape, flatten,
// squeeze, unsqueeze) become one reshape, transpose chains one transpose,
// cast chains through a lossless intermediate dtype one cast; and operators
// that change nothing (a reshape, expand or tile to the same shape, a full
// slice with step 1, a zero pad, a cast to the same dtype, an identity
// permutation) become their input; a layout_transform that moves no element
// (NCHW to NCHW1c, NCHW16c to NCHW at 1 x 1) becomes a reshape, which the
// VM runs as a view. The bindings left unused go in DeadCodeElimination.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"
#include "kernels/Layout.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <unordered_map>

namespace rivet::ir {
namespace {

using Ints = std::vector<int64_t>;

/// A view of argument 0 (OpInfo::viewOfFirstArg) whose shape its attributes
/// fix: reshape, flatten, squeeze, unsqueeze. The _dyn forms, which take the
/// shape as a tensor, are DynamicToStatic's to turn into these.
bool isReshapeLike(const OpInfo &Info) {
  return Info.viewOfFirstArg && Info.numInputs == 1;
}

/// Bits of an integer's magnitude / a float's significand.
int precisionBits(DType T) {
  switch (T) {
  case DType::Float16: return 11;
  case DType::BFloat16: return 8;
  case DType::Float32: return 24;
  case DType::Float64: return 53;
  default: return (int)dtypeSize(T) * 8 - (isSigned(T) ? 1 : 0);
  }
}

/// True when every value of From converts to To and back exactly, so a
/// cast through To is the same as a direct cast.
bool isLosslessCast(DType From, DType To) {
  if (From == To)
    return true;
  if (isNarrow(From) || isNarrow(To))
    return false; // rare enough not to reason about
  if (From == DType::Bool)
    return true;
  if (To == DType::Bool)
    return false;
  if (isFloat(From)) {
    if (!isFloat(To))
      return false;
    if (From == DType::Float16 && To == DType::BFloat16)
      return false; // bfloat16 has fewer significand bits
    if (From == DType::BFloat16 && To == DType::Float16)
      return false; // float16 has a smaller exponent range
    return dtypeSize(To) >= dtypeSize(From);
  }
  if (isFloat(To))
    return precisionBits(From) <= precisionBits(To);
  // Integers: a wider type that holds every value (an unsigned source needs a
  // strictly wider signed one; a signed source never fits an unsigned one).
  if (isSigned(From) && !isSigned(To))
    return false;
  return precisionBits(To) >= precisionBits(From) &&
         dtypeSize(To) >= dtypeSize(From);
}

class ExprSimplifier : public DefinitionMutator {
public:
  Expr visitCall(const CallNode &N, const Expr &Self) override {
    Expr New = DefinitionMutator::visitCall(N, Self);
    const std::string &Name = calledOpName(New);
    if (Name.empty() || New->as<CallNode>()->args.empty())
      return New;
    const CallNode &C = *New->as<CallNode>();
    if (Expr R = simplify(Name, C, tensorTypeOf(Self)))
      return R;
    return New;
  }

private:
  /// The operator call that computes E (through a let-bound variable): one
  /// of Op, or any reshape-like one for "<reshape-like>", with one argument.
  const CallNode *unaryProducer(const Expr &E, const std::string &Op) {
    Expr P = definition(E);
    if (!P)
      return nullptr;
    const std::string &Name = calledOpName(P);
    if (Name.empty())
      return nullptr;
    const auto *C = P->as<CallNode>();
    if (Name != Op && !(Op == "<reshape-like>" &&
                        isReshapeLike(*C->callee->as<OpNode>()->info)))
      return nullptr;
    return C->args.size() == 1 ? C : nullptr;
  }

  static bool sameType(const TensorTypeRef &A, const TensorTypeRef &B) {
    return A && B && A->dtype == B->dtype && sameKnownShape(A, B);
  }

  Expr simplify(const std::string &Name, const CallNode &C,
                const TensorTypeRef &Out) {
    const Expr &X = C.args[0];
    TensorTypeRef In = tensorTypeOf(X);
    const OpInfo &Info = *C.callee->as<OpNode>()->info;
    if (isReshapeLike(Info))
      return reshapeChain(Name, C, In, Out);
    if (Name == "transpose")
      return transposeChain(C, In);
    if (Name == "cast" || Name == "cast_like")
      return castChain(Name, C, In);
    if (Info.identityWhenTypeKept)
      return sameType(In, Out) ? X : nullptr;
    if (Name == "strided_slice") {
      Ints Strides = C.attrs.getInts("strides", {});
      bool Unit = std::all_of(Strides.begin(), Strides.end(),
                              [](int64_t S) { return S == 1; });
      return Unit && sameType(In, Out) ? X : nullptr;
    }
    if (Name == "layout_transform") {
      Expr R = layoutAsReshape(C, In, Out);
      if (!R)
        return nullptr;
      Expr Merged = reshapeChain("reshape", *R->as<CallNode>(), In, Out);
      return Merged ? Merged : R;
    }
    if (Name == "pad") {
      Ints Pads = C.attrs.getInts("pads");
      bool Zero = std::all_of(Pads.begin(), Pads.end(),
                              [](int64_t P) { return P == 0; });
      return Zero ? X : nullptr;
    }
    return nullptr;
  }

  /// A piece of a layout's memory order: the digits of primal axis Primal
  /// that one of its axes holds (Whole: all of them; Outer / Inner: the
  /// quotient / remainder by Factor).
  struct Piece {
    enum class Part { Whole, Outer, Inner } part;
    char primal;
    int64_t factor;
    bool operator==(const Piece &O) const {
      return part == O.part && primal == O.primal && factor == O.factor;
    }
  };

  /// The pieces of a tensor of Shape in layout L, in memory order, without
  /// the axes of extent 1 (they order nothing); nothing when Shape does not
  /// match L.
  static std::optional<std::vector<Piece>>
  memoryOrder(const Layout &L, const std::vector<Dim> &Shape) {
    if (Shape.size() != L.rank())
      return std::nullopt;
    std::vector<Piece> Order;
    for (size_t I = 0; I < L.rank(); ++I) {
      const LayoutAxis &A = L.Axes[I];
      char P = A.Primal; // upper case for a block too
      int Other = A.Factor == 0 ? L.BlockPos[P - 'A'] : L.PrimalPos[P - 'A'];
      auto IsUnit = [&](int Pos) {
        return Shape[(size_t)Pos].isConst() && Shape[(size_t)Pos].value == 1;
      };
      if (IsUnit((int)I))
        continue;
      Piece X{Piece::Part::Whole, P, 0};
      // A primal axis with a block holds the quotient, the block the
      // remainder, unless the other one has extent 1.
      if (Other >= 0 && !IsUnit(Other)) {
        X.factor = L.BlockOf[P - 'A'];
        X.part = A.Factor == 0 ? Piece::Part::Outer : Piece::Part::Inner;
      }
      // A quotient followed by its remainder is the whole axis.
      if (X.part == Piece::Part::Inner && !Order.empty() &&
          Order.back().primal == P && Order.back().part == Piece::Part::Outer) {
        Order.back() = Piece{Piece::Part::Whole, P, 0};
        continue;
      }
      Order.push_back(X);
    }
    return Order;
  }

  /// layout_transform(x) as reshape(x) when the two layouts hold x's
  /// elements in the same order. A dynamic extent of the result is copied
  /// (newshape 0) from the same position of x's, or, once, inferred (-1).
  Expr layoutAsReshape(const CallNode &C, const TensorTypeRef &In,
                       const TensorTypeRef &Out) {
    if (!In || !In->shape || !Out || !Out->shape ||
        !C.attrs.has("src_layout") || !C.attrs.has("dst_layout"))
      return nullptr;
    Layout Src, Dst;
    try {
      Src = parseLayout("layout_transform", C.attrs.getString("src_layout"));
      Dst = parseLayout("layout_transform", C.attrs.getString("dst_layout"));
    } catch (const std::exception &) {
      return nullptr; // type inference reports it
    }
    std::optional<std::vector<Piece>> From = memoryOrder(Src, *In->shape),
                                      To = memoryOrder(Dst, *Out->shape);
    if (!From || !To || *From != *To)
      return nullptr;
    Ints NewShape;
    bool Inferred = false;
    for (size_t I = 0; I < Out->shape->size(); ++I) {
      const Dim &D = (*Out->shape)[I];
      if (D.isConst()) {
        if (D.value == 0)
          return nullptr; // newshape's 0 would copy x's extent
        NewShape.push_back(D.value);
      } else if (I < In->shape->size() && D.isSymbol() &&
                 (*In->shape)[I] == D) {
        NewShape.push_back(0);
      } else if (!Inferred) {
        NewShape.push_back(-1);
        Inferred = true;
      } else {
        return nullptr;
      }
    }
    return callOp("reshape", {C.args[0]}, Attrs{{"newshape", NewShape}});
  }

  Expr reshapeChain(const std::string &Name, const CallNode &C,
                    const TensorTypeRef &In, const TensorTypeRef &Out) {
    if (sameType(In, Out))
      return C.args[0];
    const CallNode *P = unaryProducer(C.args[0], "<reshape-like>");
    if (!P)
      return nullptr;
    const Expr &Y = P->args[0];
    TensorTypeRef YT = tensorTypeOf(Y);
    if (sameType(YT, Out))
      return Y;
    // newshape's 0 would copy Y's extent, not be one: a result with an
    // empty axis keeps its chain (empty tensors cost nothing to reshape).
    Ints Static;
    if (staticShapeOf(Out, Static) &&
        std::find(Static.begin(), Static.end(), 0) == Static.end())
      return callOp("reshape", {Y}, Attrs{{"newshape", Static}});
    // A newshape without 0s does not depend on the input's extents.
    if (Name == "reshape") {
      Ints New = C.attrs.getInts("newshape");
      if (std::find(New.begin(), New.end(), 0) == New.end())
        return callOp("reshape", {Y}, C.attrs);
    }
    return nullptr;
  }

  /// The permutation of a transpose (default: reversed axes); empty when the
  /// rank is unknown.
  static Ints permutation(const CallNode &C, const TensorTypeRef &In) {
    if (C.attrs.has("axes")) {
      Ints P = C.attrs.getInts("axes");
      if (In && In->shape)
        for (int64_t &A : P)
          if (A < 0)
            A += (int64_t)In->shape->size();
      return P;
    }
    if (!In || !In->shape)
      return {};
    Ints P(In->shape->size());
    std::iota(P.rbegin(), P.rend(), 0);
    return P;
  }

  static bool isIdentity(const Ints &P) {
    for (size_t I = 0; I < P.size(); ++I)
      if (P[I] != (int64_t)I)
        return false;
    return true;
  }

  Expr transposeChain(const CallNode &C, const TensorTypeRef &In) {
    Ints P2 = permutation(C, In);
    if (P2.empty() || !In || !In->shape || P2.size() != In->shape->size())
      return nullptr;
    if (isIdentity(P2))
      return C.args[0];
    const CallNode *P = unaryProducer(C.args[0], "transpose");
    if (!P)
      return nullptr;
    const Expr &Y = P->args[0];
    Ints P1 = permutation(*P, tensorTypeOf(Y));
    if (P1.size() != P2.size())
      return nullptr;
    // out[i] = mid[P2[i]] = y[P1[P2[i]]].
    Ints Composed(P2.size());
    for (size_t I = 0; I < P2.size(); ++I) {
      if (P2[I] < 0 || P2[I] >= (int64_t)P1.size())
        return nullptr;
      Composed[I] = P1[P2[I]];
    }
    if (isIdentity(Composed))
      return Y;
    return callOp("transpose", {Y}, Attrs{{"axes", Composed}});
  }

  Expr castChain(const std::string &Name, const CallNode &C,
                 const TensorTypeRef &In) {
    if (!In)
      return nullptr;
    DType To;
    if (Name == "cast") {
      To = parseDType(C.attrs.getString("dtype"));
    } else {
      TensorTypeRef Target =
          C.args.size() == 2 ? tensorTypeOf(C.args[1]) : nullptr;
      if (!Target)
        return nullptr;
      To = Target->dtype;
    }
    if (In->dtype == To)
      return C.args[0];
    if (Name != "cast")
      return nullptr;
    const CallNode *P = unaryProducer(C.args[0], "cast");
    if (!P)
      return nullptr;
    const Expr &Y = P->args[0];
    TensorTypeRef YT = tensorTypeOf(Y);
    if (!YT || !isLosslessCast(YT->dtype, In->dtype))
      return nullptr;
    if (YT->dtype == To)
      return Y;
    return callOp("cast", {Y}, C.attrs);
  }
};

void simplifyExprPass(Module &M, const PassContext &) {
  transformFunctions(M,
                     [](const Expr &F) { return ExprSimplifier().mutate(F); });
}

} // namespace

/// SimplifyExpr: merges chains of reshapes, transposes and casts, and drops
/// shape and dtype operators that the types prove to change nothing.
RIVET_REGISTER_PASS("SimplifyExpr", 2,
                    "Merges reshape/transpose/cast chains and drops no-op "
                    "shape and dtype operators.",
                    simplifyExprPass);

} // namespace rivet::ir
