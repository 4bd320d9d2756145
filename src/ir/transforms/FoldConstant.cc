//===- FoldConstant.cc - Evaluates constant subexpressions ----------------===//
//
// FoldConstant: replaces operator calls on constants by their values, computed
// with the reference interpreter's kernels, and shape queries of statically
// shaped tensors by constants.
//
//===----------------------------------------------------------------------===//
#include "ir/transforms/FoldConstant.h"

#include "ir/Interpreter.h"
#include "ir/Op.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"
#include "kernels/AttrSchema.h"

#include <algorithm>
#include <optional>

namespace rivet::ir {
namespace {

/// A constant or a tuple (possibly nested) of constants.
bool isConstantValue(const Expr &E) {
  if (E->kind == ExprKind::Constant)
    return true;
  if (const auto *T = E->as<TupleNode>()) {
    for (const Expr &F : T->fields)
      if (!isConstantValue(F))
        return false;
    return true;
  }
  return false;
}

/// The expression for an evaluated value: constants and tuples of them, or
/// null for anything else (closures, ADTs).
Expr valueToExpr(const Value &V, size_t &Bytes) {
  if (V.isTensor()) {
    if (!V.tensor().hasData())
      return nullptr;
    Bytes += V.tensor().nbytes();
    return constant(V.tensor());
  }
  if (!V.isTuple())
    return nullptr;
  std::vector<Expr> Fields;
  for (const Value &F : V.fields()) {
    Expr FE = valueToExpr(F, Bytes);
    if (!FE)
      return nullptr;
    Fields.push_back(std::move(FE));
  }
  return tuple(std::move(Fields));
}

/// Bytes of a statically shaped tensor type (or of every field of a tuple),
/// nullopt when some extent is not a constant.
std::optional<size_t> staticBytes(const Type &T) {
  if (!T)
    return std::nullopt;
  if (const auto *TT = T->as<TensorTypeNode>()) {
    if (!TT->isStatic())
      return std::nullopt;
    size_t N = dtypeSize(TT->dtype);
    for (const Dim &D : *TT->shape)
      N *= (size_t)D.value;
    return N;
  }
  if (const auto *Tup = T->as<TupleTypeNode>()) {
    size_t N = 0;
    for (const Type &F : Tup->fields) {
      std::optional<size_t> B = staticBytes(F);
      if (!B)
        return std::nullopt;
      N += *B;
    }
    return N;
  }
  return std::nullopt;
}

class ConstantFolder : public BindingMutator {
public:
  explicit ConstantFolder(const Module &M) : Interp(M) {}

  Expr visitCall(const CallNode &N, const Expr &Self) override {
    Expr New = BindingMutator::visitCall(N, Self);
    const auto *C = New->as<CallNode>();
    const auto *O = C ? C->callee->as<OpNode>() : nullptr;
    if (!O)
      return New;
    const std::string &Name = O->name();
    if (Name == "shape_of" || Name == "size" || Name == "dim_size")
      if (Expr F = foldShapeQuery(*C, N))
        return F;
    if (!foldable(*O->info))
      return New;
    for (const Expr &A : C->args)
      if (!isConstantValue(A))
        return New;
    // Known to be too big before computing it?
    if (std::optional<size_t> B = staticBytes(N.checkedType))
      if (*B > kMaxFoldedBytes)
        return New;
    return evaluate(New);
  }

  Expr visitTupleGetItem(const TupleGetItemNode &N, const Expr &Self) override {
    Expr T = mutate(N.tuple);
    if (const auto *Tup = T->as<TupleNode>())
      if (N.index >= 0 && N.index < (int64_t)Tup->fields.size() &&
          isConstantValue(Tup->fields[N.index]))
        return Tup->fields[N.index];
    return T == N.tuple ? Self : tupleGetItem(T, N.index);
  }

protected:
  Binding visitBinding(const Var &V, const Expr &Value) override {
    // Constants (and tuples of them, so that their projections fold) take
    // the place of the variable.
    return {Value, isAtom(Value) || isConstantValue(Value)};
  }

private:
  static bool foldable(const OpInfo &Op) {
    return !Op.listArgument && !Op.listResult && !Op.listPrimitive &&
           !Op.runTimeOnly;
  }

  /// The value of a call on constants, or the call itself when evaluation
  /// fails (the error belongs to run time) or the result is too large.
  Expr evaluate(const Expr &Call) {
    // The interpreter caches per call node address: keep the node alive so
    // that no later call reuses its address.
    Evaluated.push_back(Call);
    Value V;
    try {
      V = Interp.eval(Call);
    } catch (const Error &) {
      return Call;
    }
    size_t Bytes = 0;
    Expr R = valueToExpr(V, Bytes);
    if (!R || Bytes > kMaxFoldedBytes)
      return Call;
    return R;
  }

  /// shape_of/size/dim_size of a tensor whose type knows the extents asked
  /// for (as the kernels in kernels/ops/Creation.cc compute them).
  static Expr foldShapeQuery(const CallNode &C, const CallNode &Orig) {
    if (C.args.size() != 1)
      return nullptr;
    TensorTypeRef T = tensorTypeOf(Orig.args[0]);
    if (!T)
      T = tensorTypeOf(C.args[0]);
    if (!T || !T->shape)
      return nullptr;
    const std::vector<Dim> &Dims = *T->shape;
    int64_t R = (int64_t)Dims.size();
    auto Window = [&](int64_t From, int64_t To) -> std::optional<Shape> {
      Shape Out;
      for (int64_t I = From; I < To; ++I) {
        if (!Dims[I].isConst())
          return std::nullopt;
        Out.push_back(Dims[I].value);
      }
      return Out;
    };
    const std::string &Name = C.callee->as<OpNode>()->name();
    try {
      if (Name == "shape_of") {
        auto Clamp = [R](int64_t I) {
          return std::clamp<int64_t>(I < 0 ? I + R : I, 0, R);
        };
        int64_t Start = Clamp(OpAttrs("shape_of", C.attrs).getInt("start"));
        // An absent end is the rank, which the schema cannot know.
        int64_t End = std::max(Start, Clamp(C.attrs.getInt("end", R)));
        std::optional<Shape> S = Window(Start, End);
        if (!S)
          return nullptr;
        return constant(Tensor::fromVector<int64_t>(*S, {(int64_t)S->size()}));
      }
      if (Name == "size") {
        std::optional<Shape> S = Window(0, R);
        return S ? constant(Tensor::scalar<int64_t>(numElements(*S))) : nullptr;
      }
      int64_t Axis = C.attrs.getInt("axis");
      if (Axis < -R || Axis >= R)
        return nullptr; // the relation reports it
      std::optional<Shape> S =
          Window(Axis < 0 ? Axis + R : Axis, (Axis < 0 ? Axis + R : Axis) + 1);
      return S ? constant(Tensor::scalar<int64_t>((*S)[0])) : nullptr;
    } catch (const Error &) {
      return nullptr;
    }
  }

  Interpreter Interp;
  std::vector<Expr> Evaluated;
};

void foldConstantPass(Module &M, const PassContext &) {
  transformFunctions(M, [&](const Expr &F) { return foldConstants(F, M); });
}

} // namespace

Expr foldConstants(const Expr &E, const Module &M) {
  return ConstantFolder(M).mutate(E);
}

/// FoldConstant: evaluates operator calls whose arguments are all constants,
/// and shape queries of statically shaped tensors, at compile time.
RIVET_REGISTER_PASS("FoldConstant", 2,
                    "Evaluates constant subexpressions and static shape "
                    "queries at compile time.",
                    foldConstantPass);

} // namespace rivet::ir
