//===- ResolveShapeValues.cc - The extents a dynamic reshape receives -----===//
//
// Exporters reshape with shapes computed from a tensor's own extents: torch
// writes x.view(seq, batch, 64) as
//
//   reshape_dyn(x, concatenate(unsqueeze(take(shape_of(src), 0)),
//                              unsqueeze(take(shape_of(src), 1)), [64]))
//
// The shape is not a constant, so reshape_dyn's result was all '?', and
// everything after it lost the extents: a residual add of (seq, batch, 64)
// and (?, ?, ?) broadcast at run time and could not join its anchor. This
// pass evaluates such shapes over the types' extents (constants and
// symbols): shape_of, take at a constant index, unsqueeze, concatenate,
// multiply of constants, integer constants; a value it cannot follow whose
// type has a constant length contributes that many unknown entries. Where
// some entry is proved, the call records the extents ("dims"), which
// reshape_dyn's relation gives its result. The values computed at run time
// are unchanged.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/TypeInference.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"
#include "ir/transforms/PatternUtil.h"
#include "kernels/ReshapeDims.h"

#include <algorithm>
#include <optional>

namespace rivet::ir {
namespace {

using pattern::asOpCall;

/// What an integer tensor of rank 0 or 1 holds, entry by entry.
struct ShapeValue {
  std::vector<Dim> entries;
  bool scalar = false;
};

/// Deep enough for any exporter's shape arithmetic; deeper is unknown.
constexpr int kMaxDepth = 16;
/// Rounds of the pass at most (each learns from the last one's types).
constexpr int kMaxRounds = 16;

class ShapeEvaluator {
public:
  explicit ShapeEvaluator(const pattern::Dataflow &Flow) : Flow(Flow) {}

  std::optional<ShapeValue> valueOf(const Expr &E, int Depth = 0) const {
    if (Depth > kMaxDepth)
      return std::nullopt;
    const Expr &V = Flow.resolve(E);
    if (const Tensor *T = Flow.constantOf(V))
      return constantValue(*T);
    if (std::optional<ShapeValue> R = computed(V, Depth))
      return R;
    // Unknown entries, as many as the type says.
    const TensorTypeNode *T = pattern::rankedTensorType(E);
    if (!T || !isInteger(T->dtype) || T->shape->size() > 1)
      return std::nullopt;
    if (T->shape->empty())
      return ShapeValue{{Dim::any()}, true};
    const Dim &L = (*T->shape)[0];
    if (!L.isConst())
      return std::nullopt;
    return ShapeValue{std::vector<Dim>((size_t)L.value, Dim::any()), false};
  }

private:
  const pattern::Dataflow &Flow;

  static std::optional<ShapeValue> constantValue(const Tensor &T) {
    if (!isInteger(T.dtype()) || T.rank() > 1)
      return std::nullopt;
    ShapeValue R;
    R.scalar = T.rank() == 0;
    for (int64_t X : T.toIntVector())
      R.entries.push_back(Dim::constant(X));
    return R;
  }

  std::optional<ShapeValue> computed(const Expr &V, int Depth) const {
    if (const CallNode *C = asOpCall(V, "shape_of")) {
      const TensorTypeNode *X = pattern::rankedTensorType(C->args[0]);
      if (!X || C->args.size() != 1 || !C->attrs.items().empty())
        return std::nullopt;
      return ShapeValue{*X->shape, false};
    }
    if (const CallNode *C = asOpCall(V, "take"))
      return taken(*C, Depth);
    if (const CallNode *C = asOpCall(V, "unsqueeze")) {
      std::optional<ShapeValue> X = valueOf(C->args[0], Depth + 1);
      std::vector<int64_t> Axes = C->attrs.getInts("axes", {});
      if (!X || !X->scalar || Axes.size() != 1 ||
          (Axes[0] != 0 && Axes[0] != -1))
        return std::nullopt;
      return ShapeValue{X->entries, false};
    }
    if (const CallNode *C = asOpCall(V, "concatenate")) {
      if (C->attrs.getInt("axis", 0) != 0)
        return std::nullopt;
      ShapeValue R;
      for (const Expr &A : C->args) {
        std::optional<ShapeValue> X = valueOf(A, Depth + 1);
        if (!X || X->scalar)
          return std::nullopt;
        R.entries.insert(R.entries.end(), X->entries.begin(), X->entries.end());
      }
      return R;
    }
    if (const CallNode *C = asOpCall(V, "multiply"))
      return product(*C, Depth);
    return std::nullopt;
  }

  /// take(v, i, axis=0) at a constant index i.
  std::optional<ShapeValue> taken(const CallNode &C, int Depth) const {
    if (C.args.size() != 2 || C.attrs.getInt("axis", 0) != 0)
      return std::nullopt;
    const Tensor *I = Flow.constantOf(C.args[1]);
    std::optional<ShapeValue> X = valueOf(C.args[0], Depth + 1);
    if (!I || !isInteger(I->dtype()) || I->rank() > 1 || !X || X->scalar)
      return std::nullopt;
    const int64_t N = (int64_t)X->entries.size();
    ShapeValue R;
    R.scalar = I->rank() == 0;
    for (int64_t K : I->toIntVector()) {
      if (K < -N || K >= N)
        return std::nullopt; // the kernel refuses it
      R.entries.push_back(X->entries[(size_t)(K < 0 ? K + N : K)]);
    }
    return R;
  }

  /// Entries multiplied where both are constants (x * 1 is x).
  std::optional<ShapeValue> product(const CallNode &C, int Depth) const {
    if (C.args.size() != 2)
      return std::nullopt;
    std::optional<ShapeValue> A = valueOf(C.args[0], Depth + 1),
                              B = valueOf(C.args[1], Depth + 1);
    if (!A || !B)
      return std::nullopt;
    // One side broadcasts when it has one entry.
    size_t N = std::max(A->entries.size(), B->entries.size());
    auto At = [&](const ShapeValue &X, size_t K) -> const Dim & {
      return X.entries[X.entries.size() == 1 ? 0 : K];
    };
    if ((A->entries.size() != N && A->entries.size() != 1) ||
        (B->entries.size() != N && B->entries.size() != 1))
      return std::nullopt;
    ShapeValue R;
    R.scalar = A->scalar && B->scalar;
    for (size_t K = 0; K < N; ++K) {
      const Dim &X = At(*A, K), &Y = At(*B, K);
      if (X.isConst() && Y.isConst())
        R.entries.push_back(Dim::constant(X.value * Y.value));
      else if (X.isConst() && X.value == 1)
        R.entries.push_back(Y);
      else if (Y.isConst() && Y.value == 1)
        R.entries.push_back(X);
      else
        R.entries.push_back(Dim::any());
    }
    return R;
  }
};

/// The extents reshape_dyn(X, shape) gives for the shape's entries: a
/// positive constant or a symbol is itself; 0 is X's extent there (without
/// allowzero) or 0; -1 and anything unknown stay '?'.
std::vector<Dim> reshapedDims(const std::vector<Dim> &Shape,
                              const TensorTypeNode *X, bool AllowZero) {
  std::vector<Dim> Out;
  for (size_t K = 0; K < Shape.size(); ++K) {
    const Dim &D = Shape[K];
    if (D.isSymbol() || (D.isConst() && D.value > 0))
      Out.push_back(D);
    else if (D.isConst() && D.value == 0)
      Out.push_back(AllowZero                   ? Dim::constant(0)
                    : X && K < X->shape->size() ? (*X->shape)[K]
                                                : Dim::any());
    else
      Out.push_back(Dim::any());
  }
  return Out;
}

class ShapeResolver : public pattern::NonPrimitiveMutator {
public:
  explicit ShapeResolver(const Expr &Fn) : Flow(Fn), Eval(Flow) {}

  Expr visitCall(const CallNode &N, const Expr &Self) override {
    Expr New = ExprMutator::visitCall(N, Self);
    const CallNode *C = asOpCall(New, "reshape_dyn");
    if (!C || C->args.size() != 2)
      return New;
    // The evaluator reads this function's bindings: the original
    // arguments, which the mutator has only rebuilt.
    std::optional<ShapeValue> S = Eval.valueOf(N.args[1]);
    if (!S || S->scalar)
      return New;
    std::vector<Dim> Dims =
        reshapedDims(S->entries, pattern::rankedTensorType(N.args[0]),
                     C->attrs.getInt("allowzero", 0) != 0);
    if (std::all_of(Dims.begin(), Dims.end(),
                    [](const Dim &D) { return D.isAny(); }))
      return New;
    std::vector<std::string> Names;
    for (const Dim &D : Dims)
      // (A symbol spelled like an extent or '?' would read back as one.)
      Names.push_back(D.isSymbol() && !reshape_dims::isSymbolName(D.name)
                          ? reshape_dims::kUnknown
                          : D.str());
    // A later round (the types inferred again) may prove more.
    if (C->attrs.has("dims") && C->attrs.getStrings("dims") == Names)
      return New;
    Attrs A = C->attrs;
    A.set("dims", Names);
    ++Resolved;
    return callOp("reshape_dyn", C->args, A);
  }

  int Resolved = 0;

private:
  pattern::Dataflow Flow;
  ShapeEvaluator Eval;
};

/// Rounds until none resolves more: a reshape's new extents reach the
/// shapes computed from its result (a second layer's) only once the types
/// are inferred again.
void resolveShapeValuesPass(Module &M, const PassContext &) {
  for (int Round = 0; Round < kMaxRounds; ++Round) {
    int Resolved = 0;
    transformFunctions(M, [&](const Expr &F) {
      ShapeResolver R(F);
      Expr Out = R.mutate(F);
      Resolved += R.Resolved;
      return Out;
    });
    if (!Resolved)
      return;
    inferTypes(M);
  }
}

} // namespace

/// ResolveShapeValues: a dynamic reshape whose shape is computed from
/// extents the types know records them, and its result has them.
RIVET_REGISTER_PASS("ResolveShapeValues", 2,
                    "Gives a dynamic reshape the extents its computed shape "
                    "provably holds (constants and symbols).",
                    resolveShapeValuesPass);

} // namespace rivet::ir
