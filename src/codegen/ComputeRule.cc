//===- ComputeRule.cc - The compute-rule registry and shared helpers ------===//

#include "codegen/ComputeRule.h"

#include <algorithm>
#include <map>

namespace rivet::codegen {

namespace {
std::map<std::string, ComputeRule, std::less<>> &ruleMap() {
  static std::map<std::string, ComputeRule, std::less<>> Rules;
  return Rules;
}
std::map<std::string, ShapeRule, std::less<>> &shapeRuleMap() {
  static std::map<std::string, ShapeRule, std::less<>> Rules;
  return Rules;
}
} // namespace

ComputeRuleRegistry &ComputeRuleRegistry::global() {
  static ComputeRuleRegistry R;
  return R;
}

void ComputeRuleRegistry::add(std::string Name, ComputeRule Rule) {
  RIVET_CHECK(ruleMap().emplace(Name, Rule).second,
              "compute rule '{}' registered twice", Name);
}

ComputeRule ComputeRuleRegistry::find(std::string_view Name) const {
  auto It = ruleMap().find(Name);
  return It == ruleMap().end() ? nullptr : It->second;
}

std::vector<std::string> ComputeRuleRegistry::names() const {
  std::vector<std::string> Out;
  for (auto &[Name, Rule] : ruleMap())
    Out.push_back(Name);
  return Out;
}

void ComputeRuleRegistry::addShapeRule(std::string Name, ShapeRule Rule) {
  RIVET_CHECK(shapeRuleMap().emplace(Name, Rule).second,
              "shape rule '{}' registered twice", Name);
}

ShapeRule ComputeRuleRegistry::findShapeRule(std::string_view Name) const {
  auto It = shapeRuleMap().find(Name);
  return It == shapeRuleMap().end() ? nullptr : It->second;
}

namespace {
thread_local RunTimeCheckScope *ActiveChecks = nullptr;
} // namespace

RunTimeCheckScope::RunTimeCheckScope() : Outer(ActiveChecks) {
  ActiveChecks = this;
}

RunTimeCheckScope::~RunTimeCheckScope() { ActiveChecks = Outer; }

void requireNonEmptyReduction(const std::string &Op,
                              const std::vector<LoopExpr> &Reduced,
                              const std::vector<LoopExpr> &Kept) {
  auto AllConst = [](const std::vector<LoopExpr> &V) {
    return std::all_of(V.begin(), V.end(),
                       [](const LoopExpr &E) { return E->isConst(); });
  };
  auto AnyZero = [](const std::vector<LoopExpr> &V) {
    return std::any_of(V.begin(), V.end(),
                       [](const LoopExpr &E) { return isIntConst(E, 0); });
  };
  // Decided statically: nothing is reduced over an empty result, or no
  // reduced extent can be 0.
  if (AnyZero(Kept))
    return;
  bool ReducedNonZero =
      std::all_of(Reduced.begin(), Reduced.end(), [](const LoopExpr &E) {
        return E->isConst() && E->intValue != 0;
      });
  if (ReducedNonZero)
    return;
  if (AllConst(Reduced) && AllConst(Kept))
    unsupported("{}: reduction over zero elements", Op);
  if (!ActiveChecks)
    unsupported("{}: a reduction that may be empty, outside lowering", Op);
  ActiveChecks->emptyReductions.push_back({Op, Reduced, Kept});
}

std::vector<LoopExpr> broadcastIndex(const TensorDesc &In,
                                     const TensorDesc &Out,
                                     const std::vector<LoopExpr> &OutIndices) {
  RIVET_CHECK(In.rank() <= Out.rank(), "broadcast of rank {} to rank {}",
              In.rank(), Out.rank());
  size_t Lead = Out.rank() - In.rank();
  std::vector<LoopExpr> Ix;
  for (size_t D = 0; D < In.rank(); ++D) {
    const LoopExpr &E = In.shape[D];
    const LoopExpr &O = Out.shape[Lead + D];
    const LoopExpr &I = OutIndices[Lead + D];
    if (sameExpr(E, O) || isIntConst(E, 1)) {
      Ix.push_back(isIntConst(E, 1) ? intConst(0) : I);
      continue;
    }
    if (ActiveChecks && !(E->isConst() && O->isConst()))
      ActiveChecks->broadcasts.push_back({O, E});
    if (E->isConst())
      Ix.push_back(I); // a static extent other than 1 equals the output's
    else
      Ix.push_back(select(compare(LoopOp::EQ, E, intConst(1)), intConst(0), I));
  }
  return Ix;
}

LoopExpr flattenIndex(const std::vector<LoopExpr> &Indices,
                      const std::vector<LoopExpr> &Shape) {
  LoopExpr Flat = intConst(0);
  for (size_t D = 0; D < Indices.size(); ++D)
    Flat = binary(LoopOp::Add, binary(LoopOp::Mul, Flat, Shape[D]), Indices[D]);
  return Flat;
}

std::vector<LoopExpr> unflattenIndex(LoopExpr Flat,
                                     const std::vector<LoopExpr> &Shape) {
  std::vector<LoopExpr> Ix(Shape.size());
  for (size_t D = Shape.size(); D-- > 0;) {
    if (D == 0) {
      Ix[D] = Flat;
      break;
    }
    Ix[D] = binary(LoopOp::Rem, Flat, Shape[D]);
    Flat = binary(LoopOp::Div, Flat, Shape[D]);
  }
  return Ix;
}

LoopExpr numElements(const std::vector<LoopExpr> &Shape) {
  LoopExpr N = intConst(1);
  for (const LoopExpr &E : Shape)
    N = binary(LoopOp::Mul, N, E);
  return N;
}

bool isCodegenDType(DType T) {
  return T != DType::Float16 && T != DType::BFloat16 && !isNarrow(T) &&
         !isString(T);
}

void requireCodegenDType(const std::string &Op, DType T) {
  if (!isCodegenDType(T))
    unsupported("{}: dtype {} has no generated code", Op, dtypeName(T));
}

} // namespace rivet::codegen
