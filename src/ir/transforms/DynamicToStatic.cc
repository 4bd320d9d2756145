//===- DynamicToStatic.cc - Data-dependent operators become static --------===//
//
// A data-dependent operator whose shape-deciding inputs are known at compile
// time becomes its static counterpart (ir/ops/StaticForms.h), so the types
// see its output shape. Constants are folded first (shape_of of a statically
// shaped tensor, a static element of a partly dynamic shape, arithmetic on
// shapes), and the two steps repeat: a new static shape can make the next
// shape computation constant.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/TypeInference.h"
#include "ir/ops/StaticForms.h"
#include "ir/transforms/FoldConstant.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"

#include <algorithm>

namespace rivet::ir {
namespace {

/// Rounds of folding and conversion; each round follows one more step of a
/// chain of shape computations (long chains are rare).
constexpr int kMaxRounds = 16;

class StaticConverter : public BindingMutator {
public:
  int Converted = 0;

  Expr visitCall(const CallNode &N, const Expr &Self) override {
    Expr New = BindingMutator::visitCall(N, Self);
    Expr S = staticFormOf(New);
    if (!S || !acceptedByRelation(S))
      return New;
    ++Converted;
    return S;
  }

private:
  /// The static operator's type relation accepts the call: a constant it
  /// cannot take (a bad shape, say) stays in the dynamic form, whose kernel
  /// reports it at run time.
  static bool acceptedByRelation(const Expr &S) {
    const auto *C = S->as<CallNode>();
    const auto *O = C ? C->callee->as<OpNode>() : nullptr;
    if (!O)
      return true; // an argument itself (dyn_reduce with no axes)
    std::vector<Type> Args;
    for (const Expr &A : C->args) {
      TensorTypeRef T = tensorTypeOf(A);
      if (!T)
        return false;
      Args.push_back(T);
    }
    try {
      return O->info->relation(Args, C->attrs) != nullptr;
    } catch (const Error &) {
      return false;
    }
  }
};

/// take(shape_of(x), i) with a constant index i at which x's extent is
/// static becomes that extent (shaped as i). ONNX reads dimensions as
/// Gather(Shape(x), i) (torch's chunk, view, size), and a dimension it
/// reads is often static where another (the batch) is not: the slices of a
/// chunk then become static and fuse.
class ShapeElementFolder : public DefinitionMutator {
public:
  Expr visitCall(const CallNode &N, const Expr &Self) override {
    Expr New = DefinitionMutator::visitCall(N, Self);
    const CallNode *Take = producer(New, "take");
    if (!Take || Take->args.size() != 2 || Take->attrs.getInt("axis", 0) != 0)
      return New;
    const CallNode *Of = producer(Take->args[0], "shape_of");
    const auto *Index = Take->args[1]->as<ConstantNode>();
    if (!Of || Of->args.size() != 1 || !Index || Index->value.numel() != 1 ||
        Index->value.rank() > 1 ||
        (Index->value.dtype() != DType::Int64 &&
         Index->value.dtype() != DType::Int32))
      return New;
    TensorTypeRef T = tensorTypeOf(Of->args[0]);
    if (!T || !T->shape)
      return New;
    const std::vector<Dim> &Dims = *T->shape;
    int64_t R = (int64_t)Dims.size();
    // The window shape_of reads (as foldShapeQuery and the kernel clamp it).
    auto Clamp = [R](int64_t I) {
      return std::clamp<int64_t>(I < 0 ? I + R : I, 0, R);
    };
    int64_t Start = Clamp(Of->attrs.getInt("start", 0));
    int64_t End = std::max(Start, Clamp(Of->attrs.getInt("end", R)));
    int64_t I = (int64_t)Index->value.elementAsDouble(0);
    if (I < 0)
      I += End - Start;
    if (I < 0 || I >= End - Start || !Dims[Start + I].isConst())
      return New; // out of range: the kernel reports it
    int64_t Extent = Dims[Start + I].value;
    return constant(Index->value.rank() == 0
                        ? Tensor::scalar<int64_t>(Extent)
                        : Tensor::fromVector<int64_t>({Extent}, {1}));
  }
};

void dynamicToStaticPass(Module &M, const PassContext &) {
  for (int Round = 0; Round < kMaxRounds; ++Round) {
    Module Folded = M;
    transformFunctions(Folded, [&](const Expr &F) {
      Expr Elements = ShapeElementFolder().mutate(foldConstants(F, M));
      return foldConstants(Elements, M);
    });
    inferTypes(Folded);
    int Converted = 0;
    transformFunctions(Folded, [&](const Expr &F) {
      StaticConverter Conv;
      Expr R = Conv.mutate(F);
      Converted += Conv.Converted;
      return R;
    });
    // Nothing became static: keep the module as it was (folding alone is
    // FoldConstant's business).
    if (!Converted)
      return;
    inferTypes(Folded);
    M = std::move(Folded);
  }
}

} // namespace

/// DynamicToStatic: a data-dependent operator whose shape inputs are known at
/// compile time becomes its static counterpart.
RIVET_REGISTER_PASS("DynamicToStatic", 2,
                    "Turns data-dependent operators with compile-time shape "
                    "inputs into their static forms.",
                    dynamicToStaticPass);

} // namespace rivet::ir
