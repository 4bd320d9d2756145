//===- FuseConvChains.cc - A 1x1 conv call and the depthwise one after it ===//
//
// FuseConvChains: a dnnl.conv2d_nchwc_fused call of a 1x1 conv on NCHW16c
// whose result only a depthwise dnnl.conv2d_nchwc_fused call reads becomes,
// with that call, one dnnl.conv2d_nchwc_pw_dw call (ConvChain.h in
// src/kernels/dnnl): the wide tensor between them is never stored. Only
// the pairs the one pass pays for (PointwiseDepthwiseChoice: large 1x1
// results) are taken; the others stay two calls on the memory planner's
// buffers. Runs in the VM compiler after the fused groups became kernel
// calls (InlinePrimitives.h); the 1x1 call's binding, now unused, is left
// to DeadCodeElimination.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "ir/Origin.h"
#include "ir/Visitor.h"
#include "ir/transforms/Pass.h"
#include "ir/transforms/PassUtil.h"
#include "kernels/AttrSchema.h"
#include "kernels/cpu/ConvChain.h"

#include <unordered_map>

namespace rivet::vm::compiler {

namespace {

constexpr const char *kConvCall = "dnnl.conv2d_nchwc_fused";
/// The operator whose attributes (and schema defaults) kConvCall carries.
constexpr const char *kAnchorOp = "conv2d_nchwc";

/// References to each node from its parents (a node shared by two parents,
/// or a variable used twice, counts twice).
class ReferenceCounter : public ir::ExprVisitor {
public:
  std::unordered_map<const ir::ExprNode *, int> refs;

  void visitCall(const ir::CallNode &N) override {
    count(N.callee);
    for (const ir::Expr &A : N.args)
      count(A);
    ExprVisitor::visitCall(N);
  }
  void visitFunction(const ir::FunctionNode &N) override {
    count(N.body);
    ExprVisitor::visitFunction(N);
  }
  void visitLetBinding(const ir::LetNode &N) override {
    count(N.value);
    count(N.body);
    ExprVisitor::visitLetBinding(N);
  }
  void visitIf(const ir::IfNode &N) override {
    count(N.cond);
    count(N.thenBranch);
    count(N.elseBranch);
    ExprVisitor::visitIf(N);
  }
  void visitTuple(const ir::TupleNode &N) override {
    for (const ir::Expr &F : N.fields)
      count(F);
    ExprVisitor::visitTuple(N);
  }
  void visitTupleGetItem(const ir::TupleGetItemNode &N) override {
    count(N.tuple);
    ExprVisitor::visitTupleGetItem(N);
  }
  void visitMatch(const ir::MatchNode &N) override {
    count(N.data);
    for (const ir::Clause &C : N.clauses)
      count(C.rhs);
    ExprVisitor::visitMatch(N);
  }

private:
  void count(const ir::Expr &E) {
    if (E)
      ++refs[E.get()];
  }
};

/// The static shape of E's tensor type, or empty.
std::vector<int64_t> staticShape(const ir::Expr &E) {
  std::vector<int64_t> S;
  if (!ir::staticShapeOf(ir::tensorTypeOf(E), S))
    S.clear();
  return S;
}

bool attrIs(const Attrs &A, const char *Name, const std::string &Value) {
  return A.getString(Name, "") == Value;
}

/// Every value of attribute Name is Value (true when it is absent).
bool intsAre(const Attrs &A, const char *Name, int64_t Value) {
  for (int64_t X : A.getInts(Name, {}))
    if (X != Value)
      return false;
  return true;
}

/// C is a conv call on NCHW16c, undilated, with KernelLayout weights of a
/// static shape (into W).
bool isBlockedConvCall(const ir::CallNode &C, const char *KernelLayout,
                       std::vector<int64_t> &W) {
  const auto *Op = C.callee->as<ir::OpNode>();
  if (!Op || Op->name() != kConvCall || C.args.size() < 2)
    return false;
  W = staticShape(C.args[1]);
  return W.size() == 6 && attrIs(C.attrs, "data_layout", "NCHW16c") &&
         attrIs(C.attrs, "out_layout", "NCHW16c") &&
         attrIs(C.attrs, "kernel_layout", KernelLayout) &&
         intsAre(C.attrs, "dilations", 1);
}

/// A 1x1, stride-1, unpadded conv of group 1.
bool isPointwise(const ir::CallNode &C) {
  std::vector<int64_t> W;
  return isBlockedConvCall(C, "OIHW16i16o", W) && W[2] == 1 && W[3] == 1 &&
         OpAttrs(kAnchorOp, C.attrs).getInt("group") == 1 &&
         intsAre(C.attrs, "strides", 1) && intsAre(C.attrs, "pads", 0) &&
         (OpAttrs(kAnchorOp, C.attrs).getString("auto_pad") == "NOTSET" ||
          attrIs(C.attrs, "auto_pad", "VALID"));
}

/// A depthwise conv: one input channel per group, every channel a group.
bool isDepthwise(const ir::CallNode &C) {
  std::vector<int64_t> W;
  return isBlockedConvCall(C, "OIHW1i16o", W) && W[1] == 1 && W[4] == 1 &&
         OpAttrs(kAnchorOp, C.attrs).getInt("group") == W[0] * W[5];
}

class ChainFuser : public ir::ExprMutator {
public:
  ChainFuser(const ir::Expr &Fn) {
    ReferenceCounter R;
    R.visit(Fn);
    Refs = std::move(R.refs);
    // let-bound values, to see through a variable to the call it names.
    ir::postOrderVisit(Fn, [&](const ir::Expr &E) {
      if (const auto *L = E->as<ir::LetNode>())
        Bound[L->var.get()] = L->value;
    });
  }

  ir::Expr visitCall(const ir::CallNode &N, const ir::Expr &Self) override {
    if (!isDepthwise(N))
      return ExprMutator::visitCall(N, Self);
    // The depthwise conv's input: the 1x1 call itself, or a variable bound
    // to it, read by nothing else.
    ir::Expr In = N.args[0];
    if (refCount(In) != 1)
      return ExprMutator::visitCall(N, Self);
    if (const auto *V = In->as<ir::VarNode>()) {
      auto It = Bound.find(V);
      if (It == Bound.end() || refCount(It->second) != 1)
        return ExprMutator::visitCall(N, Self);
      In = It->second;
    }
    const auto *Pw = In->as<ir::CallNode>();
    if (!Pw || !isPointwise(*Pw) || !takes(In))
      return ExprMutator::visitCall(N, Self);
    std::vector<ir::Expr> Args;
    for (const ir::Expr &A : Pw->args)
      Args.push_back(mutate(A));
    for (size_t I = 1; I < N.args.size(); ++I)
      Args.push_back(mutate(N.args[I]));
    // The pair's kernel computes both convs (and what they covered).
    std::vector<std::string> Covers = ir::originsComputedBy(*Pw);
    for (std::string &O : ir::originsComputedBy(N))
      Covers.push_back(std::move(O));
    return ir::withCovers(
        ir::callOp(kPointwiseDepthwiseOp, std::move(Args),
                   pointwiseDepthwiseAttrs(Pw->attrs, (int64_t)Pw->args.size(),
                                           N.attrs)),
        std::move(Covers));
  }

private:
  /// Whether the choice (ConvChain.h) takes the pair whose 1x1 result is
  /// Mid: by its bytes per image where the extents after the first (the
  /// images) are constants, else at run time.
  static bool takes(const ir::Expr &Mid) {
    if (pointwiseDepthwiseChoice() == PointwiseDepthwiseChoice::Off)
      return false;
    ir::TensorTypeRef T = ir::tensorTypeOf(Mid);
    if (!T || !T->shape || T->shape->empty())
      return true;
    int64_t Bytes = (int64_t)sizeof(float);
    for (size_t I = 1; I < T->shape->size(); ++I) {
      if (!(*T->shape)[I].isConst())
        return true;
      Bytes *= (*T->shape)[I].value;
    }
    return pointwiseDepthwiseTakes(Bytes);
  }

  int refCount(const ir::Expr &E) const {
    auto It = Refs.find(E.get());
    return It == Refs.end() ? 0 : It->second;
  }

  std::unordered_map<const ir::ExprNode *, int> Refs;
  std::unordered_map<const ir::VarNode *, ir::Expr> Bound;
};

void fuseConvChainsPass(ir::Module &M, const ir::PassContext &) {
  ir::transformFunctions(
      M, [](const ir::Expr &F) { return ChainFuser(F).mutate(F); });
}

} // namespace

RIVET_REGISTER_PASS("FuseConvChains", 2,
                    "VM compiler, after fused groups became kernel calls: a "
                    "oneDNN 1x1 conv call read only by a depthwise conv call "
                    "and that call become one call (the wide tensor between "
                    "them is never stored).",
                    fuseConvChainsPass);

} // namespace rivet::vm::compiler
