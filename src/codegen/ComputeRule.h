//===- ComputeRule.h - Per-operator compute rules for codegen ---*- C++ -*-===//
//
// A compute rule says what one operator computes at one output index, as a
// loop-IR expression over its arguments read at other indices (TVM's
// compute). Lowering a fused group inlines each producer's rule into its
// consumer, so the group becomes one loop nest with no intermediate buffers.
// Each rule is registered once, in the rules file of its operator's family:
//   RIVET_REGISTER_COMPUTE_RULE("add", addRule);
// A rule throws Unsupported for a case it does not handle (a dtype, an
// attribute value); the group then stays on the builtin kernels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/LoopIR.h"
#include "kernels/AttrSchema.h"
#include "kernels/Attrs.h"
#include "kernels/Error.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rivet::codegen {

/// A case codegen does not handle; caught by lowerPrimitive, never escapes.
class Unsupported : public Error {
public:
  explicit Unsupported(const std::string &Msg) : Error(Msg) {}
};

template <typename... Args>
[[noreturn]] void unsupported(fmt::format_string<Args...> Fmt, Args &&...A) {
  throw Unsupported(fmt::format(Fmt, std::forward<Args>(A)...));
}

/// The dtype and extents (int64 loop-IR expressions) of a tensor.
struct TensorDesc {
  DType dtype = DType::Float32;
  std::vector<LoopExpr> shape;
  size_t rank() const { return shape.size(); }
};

/// How a reduction combines values.
enum class ReduceCombiner : uint8_t { Sum, Prod, Max, Min };

/// What a rule sees of its operator call.
class ComputeContext {
public:
  virtual ~ComputeContext() = default;
  virtual const std::string &opName() const = 0;
  virtual const Attrs &attrs() const = 0;
  /// The attributes with the operator's schema defaults.
  OpAttrs opAttrs() const { return OpAttrs(opName(), attrs()); }
  virtual size_t numInputs() const = 0;
  virtual const TensorDesc &input(size_t I) const = 0;
  virtual const TensorDesc &output() const = 0;
  /// The value of argument I at Indices (one int64 expression per axis).
  virtual LoopExpr read(size_t I, const std::vector<LoopExpr> &Indices) = 0;
  /// Accumulates Body(vars) over the loop nest [0, Extents) with C, starting
  /// from Init (dtype T), into a scalar local; returns the local's value.
  virtual LoopExpr
  reduce(ReduceCombiner C, LoopExpr Init, const std::vector<LoopExpr> &Extents,
         const std::function<LoopExpr(const std::vector<LoopExpr> &Vars)>
             &Body) = 0;
  /// Whether the rule may write the group's output itself, along Axis: true
  /// only when this call is the group's result evaluated at the output loop
  /// index (not inside another operator's read) and Axis is the innermost
  /// output axis, so that a top-level reduction over Axis runs once per
  /// output row, before the loop over that row. A softmax then stores each
  /// exp once, from inside its sum, and divides the stored values.
  virtual bool canStoreResult(size_t Axis) const = 0;
  /// Stores Value as the output at Indices (the output index with Axis at a
  /// reduction variable); only from inside a reduction's Body, and only
  /// when canStoreResult(Axis). The store runs before the accumulation.
  virtual void storeResult(const std::vector<LoopExpr> &Indices,
                           LoopExpr Value) = 0;
  /// The output's value at Indices, as stored by storeResult.
  virtual LoopExpr readResult(const std::vector<LoopExpr> &Indices) = 0;
};

/// Returns the operator's value at the output index OutIndices.
using ComputeRule = LoopExpr (*)(ComputeContext &Ctx,
                                 const std::vector<LoopExpr> &OutIndices);
/// Returns the extents of the operator's result from its arguments', for
/// operators whose type leaves extents unknown over symbolic arguments (a
/// convolution's spatial extents); lowering uses it for values inside a group.
using ShapeRule = std::vector<LoopExpr> (*)(
    const Attrs &A, const std::vector<TensorDesc> &Inputs);

class ComputeRuleRegistry {
public:
  static ComputeRuleRegistry &global();
  void add(std::string Name, ComputeRule Rule);
  /// Null when the operator has no rule.
  ComputeRule find(std::string_view Name) const;
  std::vector<std::string> names() const;
  void addShapeRule(std::string Name, ShapeRule Rule);
  /// Null when the operator has no shape rule.
  ShapeRule findShapeRule(std::string_view Name) const;
};

namespace detail {
struct ComputeRuleRegistrar {
  ComputeRuleRegistrar(const char *Name, ComputeRule Rule) {
    ComputeRuleRegistry::global().add(Name, Rule);
  }
};
struct ShapeRuleRegistrar {
  ShapeRuleRegistrar(const char *Name, ShapeRule Rule) {
    ComputeRuleRegistry::global().addShapeRule(Name, Rule);
  }
};
} // namespace detail

// Helpers shared by the rule files.

/// The index into an argument of shape In that NumPy broadcasting maps the
/// output index OutIndices (of shape Out) to: leading axes drop, an extent-1
/// axis reads index 0, and an extent not known to equal the output's reads
/// index 0 at run time when it is 1. Each such extent is recorded with the
/// output's in the innermost RunTimeCheckScope of this thread: the read
/// stays in bounds only when the two broadcast together.
std::vector<LoopExpr> broadcastIndex(const TensorDesc &In,
                                     const TensorDesc &Out,
                                     const std::vector<LoopExpr> &OutIndices);

/// A reduction that has no identity (max, min, argmax, an integer mean):
/// an error when an extent of Reduced is 0 while every extent of Kept (the
/// operator's result) is positive, as the reference kernel reports it.
struct EmptyReductionCheck {
  std::string op;
  std::vector<LoopExpr> reduced, kept;
};
/// Records that the operator of Ctx reduces over Reduced to a result of
/// extents Kept and has no value for an empty reduction. Decided at once
/// when the extents are constants (Unsupported for an empty reduction: the
/// builtin kernel reports it); else recorded in the innermost
/// RunTimeCheckScope, for the kernel's caller to check before each call.
void requireNonEmptyReduction(const std::string &Op,
                              const std::vector<LoopExpr> &Reduced,
                              const std::vector<LoopExpr> &Kept);

/// While alive, collects (on its thread) what the generated code assumes
/// of its run-time extents and does not check itself; lowering hands the
/// conditions to the kernel's caller, which checks them before every call.
class RunTimeCheckScope {
public:
  RunTimeCheckScope();
  ~RunTimeCheckScope();
  RunTimeCheckScope(const RunTimeCheckScope &) = delete;
  RunTimeCheckScope &operator=(const RunTimeCheckScope &) = delete;
  /// Extents that broadcastIndex reads assume broadcast together: {output
  /// extent, argument extent}.
  std::vector<std::vector<LoopExpr>> broadcasts;
  std::vector<EmptyReductionCheck> emptyReductions;

private:
  RunTimeCheckScope *Outer;
};

/// The row-major flat offset of Indices in Shape, and its inverse.
LoopExpr flattenIndex(const std::vector<LoopExpr> &Indices,
                      const std::vector<LoopExpr> &Shape);
std::vector<LoopExpr> unflattenIndex(LoopExpr Flat,
                                     const std::vector<LoopExpr> &Shape);
/// Product of the extents.
LoopExpr numElements(const std::vector<LoopExpr> &Shape);
/// V converted to To as the reference kernels do (kernels/ElementConvert.h):
/// float -> integer gives 0 for NaN and saturates beyond the target's range,
/// where a bare fptosi/fptoui (LoopIR's cast) gives poison (INT_MIN on x86).
LoopExpr convertLikeKernels(LoopExpr V, DType To);
/// The dtypes codegen computes in (bool, integers, float32/float64).
bool isCodegenDType(DType T);
/// Throws Unsupported unless T is a codegen dtype.
void requireCodegenDType(const std::string &Op, DType T);

} // namespace rivet::codegen

#define RIVET_CRULE_CONCAT2(A, B) A##B
#define RIVET_CRULE_CONCAT(A, B) RIVET_CRULE_CONCAT2(A, B)
/// RIVET_REGISTER_COMPUTE_RULE("add", addRule);
#define RIVET_REGISTER_COMPUTE_RULE(Name, Rule)                                \
  static ::rivet::codegen::detail::ComputeRuleRegistrar RIVET_CRULE_CONCAT(    \
      RivetComputeRule_, __COUNTER__)(Name, Rule)
/// RIVET_REGISTER_SHAPE_RULE("conv", convShape);
#define RIVET_REGISTER_SHAPE_RULE(Name, Rule)                                  \
  static ::rivet::codegen::detail::ShapeRuleRegistrar RIVET_CRULE_CONCAT(      \
      RivetShapeRule_, __COUNTER__)(Name, Rule)
