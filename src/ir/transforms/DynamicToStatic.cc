//===- DynamicToStatic.cc - Data-dependent operators become static --------===//
//
// A data-dependent operator whose shape-deciding inputs are known at compile
// time becomes its static counterpart (ir/ops/StaticForms.h), so the types
// see its output shape. Constants are folded first (shape_of of a statically
// shaped tensor, arithmetic on shapes), and the two steps repeat: a new
// static shape can make the next shape computation constant.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/TypeInference.h"
#include "ir/ops/StaticForms.h"
#include "ir/transforms/FoldConstant.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"

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

void dynamicToStaticPass(Module &M, const PassContext &) {
  for (int Round = 0; Round < kMaxRounds; ++Round) {
    Module Folded = M;
    transformFunctions(Folded,
                       [&](const Expr &F) { return foldConstants(F, M); });
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
