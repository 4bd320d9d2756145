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
#include "kernels/Kernel.h"

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
    return !Op.listArgument && !Op.listResult && !isRandomOp(Op.name);
  }

  /// The value of a call on constants, or the call itself when evaluation
  /// fails (the error belongs to run time) or the result is too large.
  Expr evaluate(const Expr &Call) {
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

  /// shape_of/size/dim_size of a tensor whose type has a static shape: the
  /// kernel only reads the shape, so a meta tensor stands for the argument.
  Expr foldShapeQuery(const CallNode &C, const CallNode &Orig) {
    if (C.args.size() != 1)
      return nullptr;
    TensorTypeRef T = tensorTypeOf(Orig.args[0]);
    if (!T)
      T = tensorTypeOf(C.args[0]);
    Shape Sh;
    if (!staticShapeOf(T, Sh))
      return nullptr;
    const KernelInfo *K =
        KernelRegistry::global().find(C.callee->as<OpNode>()->name());
    if (!K)
      return nullptr;
    try {
      std::vector<Tensor> Out =
          invokeKernel(*K, {Tensor::meta(Sh, T->dtype)}, C.attrs);
      if (Out.size() != 1)
        return nullptr;
      return constant(Out[0]);
    } catch (const Error &) {
      return nullptr;
    }
  }

  Interpreter Interp;
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
