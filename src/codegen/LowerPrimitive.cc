//===- LowerPrimitive.cc - Fused primitive function -> loop kernel --------===//

#include "codegen/LowerPrimitive.h"
#include "codegen/CollapseLoops.h"
#include "codegen/ReductionInterchange.h"
#include "codegen/StreamingStores.h"

#include "codegen/ComputeRule.h"
#include "ir/Op.h"
#include "ir/Printer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

namespace rivet::codegen {
namespace {

using Ix = std::vector<LoopExpr>;

class Lowering;

/// The ComputeContext of one operator call inside the group.
class CallContext final : public ComputeContext {
public:
  CallContext(Lowering &L, const ir::CallNode &Call, std::string Name,
              std::vector<TensorDesc> Inputs, TensorDesc Output, bool IsResult)
      : L(L), Call(Call), Name(std::move(Name)), Inputs(std::move(Inputs)),
        Output(std::move(Output)), IsResult(IsResult) {}
  const std::string &opName() const override { return Name; }
  const Attrs &attrs() const override { return Call.attrs; }
  size_t numInputs() const override { return Inputs.size(); }
  const TensorDesc &input(size_t I) const override { return Inputs.at(I); }
  const TensorDesc &output() const override { return Output; }
  LoopExpr read(size_t I, const Ix &Indices) override;
  LoopExpr reduce(ReduceCombiner C, LoopExpr Init, const Ix &Extents,
                  const std::function<LoopExpr(const Ix &Vars)> &Body) override;
  bool canStoreResult(size_t Axis) const override;
  void storeResult(const Ix &Indices, LoopExpr Value) override;
  LoopExpr readResult(const Ix &Indices) override;

private:
  Lowering &L;
  const ir::CallNode &Call;
  std::string Name;
  std::vector<TensorDesc> Inputs;
  TensorDesc Output;
  /// The call is the group's result, evaluated at the output loop index.
  bool IsResult;
};

class Lowering {
public:
  Lowering(const ir::FunctionNode &Fn, std::string Name,
           const LoweringOptions &Opts)
      : Fn(Fn), Opts(Opts) {
    K.kernel.name = std::move(Name);
  }

  LoweredKernel run() {
    // Buffers: the parameters, then the output.
    for (size_t I = 0; I < Fn.params.size(); ++I) {
      const ir::Var &P = Fn.params[I];
      TensorDesc D = paramDesc(*P, I);
      Params[P.get()] = I;
      K.kernel.buffers.push_back(
          {P->nameHint.empty() ? fmt::format("p{}", I) : P->nameHint, D.dtype,
           D.shape, false});
    }
    collectLets(Fn.body);
    OutBuffer = Fn.params.size();
    TensorDesc Out = descOf(Result, /*IsOutput=*/true);
    K.kernel.buffers.push_back({"out", Out.dtype, Out.shape, true});

    // The output nest: loop variables 0..rank-1 are the output axes.
    OutRank = Out.rank();
    for (size_t D = 0; D < Out.rank(); ++D)
      OutIx.push_back(loopVar(newVar(), fmt::format("i{}", D)));
    LoopExpr V = cast(valueAt(Result, OutIx), Out.dtype);
    requireEveryOperatorRead();
    // The parallel candidate: the outermost axis not statically 1.
    ParallelDepth = Out.rank();
    for (size_t D = 0; D < Out.rank() && Opts.parallel; ++D)
      if (!isIntConst(Out.shape[D], 1)) {
        ParallelDepth = D;
        break;
      }
    K.kernel.body = assemble(0, Out, OutIx, V);
    interchangeReductions(K.kernel);
    if (Opts.collapse)
      collapseElementwiseNest(K.kernel);
    annotate(K.kernel.body);
    markStreamingStores(K.kernel);
    RIVET_CHECK(K.sizeSources.size() == K.kernel.sizeParams.size(),
                "size parameter without a source");
    return std::move(K);
  }

  // Used by CallContext.
  LoopExpr valueAt(const ir::Expr &E, const Ix &Indices);
  LoopExpr compute(const ir::Expr &E, const Ix &Indices);
  LoopExpr reduce(ReduceCombiner C, LoopExpr Init, const Ix &Extents,
                  const std::function<LoopExpr(const Ix &Vars)> &Body);
  bool canStoreResult(bool IsResult, size_t Axis) const {
    return IsResult && Axis + 1 == OutRank;
  }
  void storeResult(const Ix &Indices, LoopExpr Value) {
    // Only the outermost reduction of the result's own rule: its body runs
    // once per element of the row, before the row's loop.
    RIVET_CHECK(ReduceScopes.size() == 1,
                "codegen: storeResult outside a top-level reduction");
    const LoopBuffer &Out = K.kernel.buffers.at(OutBuffer);
    ReduceScopes.back()->push_back(
        store((int)OutBuffer, Indices, cast(std::move(Value), Out.dtype)));
  }
  LoopExpr readResult(const Ix &Indices) {
    return load((int)OutBuffer, K.kernel.buffers.at(OutBuffer).dtype, Indices);
  }

private:
  const ir::FunctionNode &Fn;
  const LoweringOptions &Opts;
  LoweredKernel K;
  size_t OutBuffer = 0;
  ir::Expr Result;
  std::unordered_map<const ir::VarNode *, size_t> Params;
  std::unordered_map<const ir::VarNode *, ir::Expr> Lets;
  std::unordered_map<const ir::ExprNode *, TensorDesc> Descs;
  std::map<std::string, int> SymbolParams;
  /// Statements of top-level reductions, by the output depth they need.
  std::map<size_t, std::vector<LoopStmt>> Pending;
  std::unordered_map<int, size_t> LocalDepth;
  /// Bodies of the reductions being built (nested reductions go inside).
  std::vector<std::vector<LoopStmt> *> ReduceScopes;
  size_t OutRank = 0;
  /// The output loop variables.
  Ix OutIx;
  /// How many compute rules are being evaluated (0: none, the group's
  /// result is next).
  int RuleDepth = 0;
  /// The output axis whose loop may be parallel (OutRank: none).
  size_t ParallelDepth = 0;
  /// The values computed so far, by value of the group, for valueAt: a
  /// value read several times at the same index (x * sigmoid(x) reads x
  /// twice) is computed once and its expression shared; computed per read,
  /// a chain of such layers doubles per layer. An entry holds only in the
  /// reduction body it was computed in (it may read that body's locals).
  struct Computed {
    int scope;
    Ix indices;
    LoopExpr value;
  };
  std::unordered_map<const ir::ExprNode *, std::vector<Computed>> Values;
  /// The reduction bodies being built, as ids (0: outside any reduction).
  std::vector<int> ScopeIds{0};
  int NumScopes = 1;

  int newVar() { return K.kernel.numLoopVars++; }

  int newLocal(DType T) {
    K.kernel.locals.push_back(T);
    return (int)K.kernel.locals.size() - 1;
  }

  int newParam(const std::string &Name, size_t Buffer, size_t Axis) {
    int Id = (int)K.kernel.sizeParams.size();
    K.kernel.sizeParams.push_back(Name);
    K.sizeSources.push_back({Buffer, Axis});
    return Id;
  }

  /// The loop-IR extent of D, or null for an unknown extent.
  LoopExpr dimExpr(const ir::Dim &D, size_t Buffer, size_t Axis,
                   bool BindUnknown) {
    if (D.isConst())
      return intConst(D.value);
    if (D.isSymbol()) {
      auto It = SymbolParams.find(D.name);
      if (It == SymbolParams.end()) {
        // A symbol first seen here is bound only where a buffer has it.
        if (!BindUnknown)
          return nullptr;
        It = SymbolParams.emplace(D.name, newParam(D.name, Buffer, Axis)).first;
      }
      return sizeParam(It->second, D.name);
    }
    if (!BindUnknown)
      return nullptr;
    std::string Name = fmt::format("d{}_{}", Buffer, Axis);
    return sizeParam(newParam(Name, Buffer, Axis), Name);
  }

  static const ir::TensorTypeNode &tensorTypeOf(const ir::Type &T,
                                                const std::string &What) {
    const auto *TT = T ? T->as<ir::TensorTypeNode>() : nullptr;
    if (!TT)
      unsupported("{} is not a tensor{}", What,
                  T ? " (" + ir::typeToString(T) + ")" : "");
    if (!TT->hasKnownRank())
      unsupported("{} has an unknown rank", What);
    requireCodegenDType(What, TT->dtype);
    return *TT;
  }

  TensorDesc paramDesc(const ir::VarNode &P, size_t Index) {
    const ir::Type &T = P.checkedType ? P.checkedType : P.typeAnnotation;
    const auto &TT = tensorTypeOf(T, "parameter %" + P.nameHint);
    TensorDesc D{TT.dtype, {}};
    for (size_t A = 0; A < TT.shape->size(); ++A)
      D.shape.push_back(dimExpr((*TT.shape)[A], Index, A, true));
    Descs[&P] = D;
    return D;
  }

  void collectLets(const ir::Expr &Body) {
    ir::Expr E = Body;
    while (const auto *L = E->as<ir::LetNode>()) {
      Lets[L->var.get()] = L->value;
      E = L->body;
    }
    Result = E;
  }

  /// An operator no output element reads (an extent of 0 on the way) would
  /// never run in the kernel, nor report its errors (an out-of-range take):
  /// such a group stays on the builtin kernels, which run every operator as
  /// the reference does.
  void requireEveryOperatorRead() const {
    for (ir::Expr E = Fn.body; const auto *L = E->as<ir::LetNode>();
         E = L->body)
      if (const auto *C = L->value->as<ir::CallNode>())
        if (!Values.count(L->value.get()))
          unsupported("{} is never read (an empty extent in the group)",
                      C->callee->as<ir::OpNode>()
                          ? C->callee->as<ir::OpNode>()->name()
                          : std::string("a call"));
  }

  ir::Expr resolve(const ir::Expr &E) const {
    ir::Expr R = E;
    while (const auto *V = R->as<ir::VarNode>()) {
      auto It = Lets.find(V);
      if (It == Lets.end())
        break;
      R = It->second;
    }
    return R;
  }

  /// The dtype and extents of a value of the group.
  TensorDesc descOf(const ir::Expr &E0, bool IsOutput = false) {
    ir::Expr E = resolve(E0);
    auto It = Descs.find(E.get());
    if (It != Descs.end())
      return It->second;
    const auto &TT = tensorTypeOf(E->checkedType, "a value of the group");
    TensorDesc D{TT.dtype, {}};
    const auto *C = E->as<ir::CallNode>();
    const auto *Op = C ? C->callee->as<ir::OpNode>() : nullptr;
    std::vector<LoopExpr> Derived;
    for (size_t A = 0; A < TT.shape->size(); ++A) {
      LoopExpr X = dimExpr((*TT.shape)[A], OutBuffer, A, false);
      if (!X && Op) {
        if (Derived.empty())
          Derived = deriveShape(*C, Op->name(), *Op->info, TT.shape->size());
        if (A < Derived.size())
          X = Derived[A];
      }
      if (!X && IsOutput)
        X = dimExpr((*TT.shape)[A], OutBuffer, A, true);
      if (!X)
        unsupported("an unknown extent inside the group ({})",
                    ir::typeToString(E->checkedType));
      D.shape.push_back(X);
    }
    Descs[E.get()] = D;
    return D;
  }

  /// The extents of an operator's result computed from its arguments'
  /// (for the extents its type leaves unknown); empty when this operator's
  /// extents are not derived here.
  std::vector<LoopExpr> deriveShape(const ir::CallNode &C,
                                    const std::string &Name,
                                    const ir::OpInfo &Info, size_t Rank) {
    std::vector<LoopExpr> Out;
    auto In = [&](size_t I) { return descOf(C.args.at(I)); };
    static const std::set<std::string> Reductions = {
        "sum",     "mean",    "max",     "min",         "prod",
        "l1_norm", "l2_norm", "log_sum", "log_sum_exp", "sum_square"};
    // Elementwise and broadcast results take their arguments' extents
    // (expand's come from its attribute instead); operators with a shape
    // rule (the anchors) compute theirs.
    if (ShapeRule Shape = ComputeRuleRegistry::global().findShapeRule(Name)) {
      std::vector<TensorDesc> Args;
      for (const ir::Expr &A : C.args)
        Args.push_back(descOf(A));
      Out = Shape(C.attrs, Args);
    } else if (Name != "expand" &&
               (Info.pattern == ir::FusionPattern::Elementwise ||
                Info.pattern == ir::FusionPattern::Broadcast)) {
      for (size_t A = 0; A < Rank; ++A)
        Out.push_back(broadcastExtent(C, Rank, A));
    } else if (Name == "softmax" || Name == "log_softmax") {
      Out = In(0).shape;
    } else if (Name == "transpose") {
      TensorDesc X = In(0);
      std::vector<int64_t> Axes;
      for (size_t D = 0; D < X.rank(); ++D)
        Axes.push_back((int64_t)(X.rank() - 1 - D));
      Axes = C.attrs.getInts("axes", Axes);
      for (int64_t A : Axes)
        Out.push_back(X.shape.at((size_t)(A < 0 ? A + (int64_t)X.rank() : A)));
    } else if (Name == "reshape") {
      TensorDesc X = In(0);
      std::vector<int64_t> New = C.attrs.getInts("newshape");
      LoopExpr Known = intConst(1);
      int Infer = -1;
      for (size_t D = 0; D < New.size(); ++D) {
        LoopExpr E = New[D] == 0 && D < X.rank() ? X.shape[D]
                     : New[D] > 0                ? intConst(New[D])
                                                 : nullptr;
        if (!E)
          Infer = (int)D;
        else
          Known = binary(LoopOp::Mul, Known, E);
        Out.push_back(E);
      }
      if (Infer >= 0)
        Out[(size_t)Infer] = binary(LoopOp::Div, numElements(X.shape),
                                    binary(LoopOp::Max, Known, intConst(1)));
    } else if (Reductions.count(Name)) {
      TensorDesc X = In(0);
      int64_t R = (int64_t)X.rank();
      OpAttrs OA(Name, C.attrs);
      std::vector<int64_t> Axes = OA.getInts("axis");
      bool Keep = OA.getInt("keepdims") != 0;
      std::vector<bool> Reduced((size_t)R, Axes.empty());
      for (int64_t A : Axes)
        if (A >= -R && A < R)
          Reduced[(size_t)(A < 0 ? A + R : A)] = true;
      for (size_t D = 0; D < (size_t)R; ++D)
        if (!Reduced[D])
          Out.push_back(X.shape[D]);
        else if (Keep)
          Out.push_back(intConst(1));
    }
    if (Out.size() != Rank)
      return {};
    return Out;
  }

  /// The extent of axis A of a broadcast operator's result, from its
  /// arguments' extents (NumPy: an extent-1 argument takes the other's).
  LoopExpr broadcastExtent(const ir::CallNode &C, size_t Rank, size_t A) {
    LoopExpr R;
    for (const ir::Expr &Arg : C.args) {
      TensorDesc D = descOf(Arg);
      if (D.rank() < Rank - A)
        continue; // the argument has no such axis
      LoopExpr X = D.shape[D.rank() - (Rank - A)];
      if (!R)
        R = X;
      else if (isIntConst(X, 1) || sameExpr(X, R))
        continue;
      else if (isIntConst(R, 1))
        R = X;
      else
        R = select(compare(LoopOp::EQ, R, intConst(1)), X, R);
    }
    return R ? R : intConst(1);
  }

  /// Places top-level reduction statements at the shallowest output depth
  /// where every loop variable and local they read is defined.
  void addPending(std::vector<LoopStmt> Stmts, const std::vector<int> &Locals) {
    LoopUses U;
    U.stmts(Stmts);
    size_t Depth = 0;
    for (int V : U.vars)
      if ((size_t)V < OutRank)
        Depth = std::max(Depth, (size_t)V + 1);
    for (int Lc : U.locals) {
      auto It = LocalDepth.find(Lc);
      if (It != LocalDepth.end())
        Depth = std::max(Depth, It->second);
    }
    for (int Lc : Locals)
      LocalDepth[Lc] = Depth;
    auto &Dst = Pending[Depth];
    Dst.insert(Dst.end(), Stmts.begin(), Stmts.end());
  }

  std::vector<LoopStmt> assemble(size_t Depth, const TensorDesc &Out,
                                 const Ix &OutIx, const LoopExpr &V) {
    std::vector<LoopStmt> Body;
    auto It = Pending.find(Depth);
    if (It != Pending.end())
      Body = It->second;
    if (Depth == Out.rank()) {
      Body.push_back(store((int)OutBuffer, OutIx, V));
      return Body;
    }
    std::vector<LoopStmt> Inner = assemble(Depth + 1, Out, OutIx, V);
    LoopKind Kind = LoopKind::Serial;
    if (Depth == ParallelDepth) {
      // Only output loops are parallel: every iteration writes its own
      // elements, and reductions run inside an iteration.
      LoopExpr Work = binary(LoopOp::Mul, Out.shape[Depth], loopWork(Inner));
      if (!Work->isConst() || Work->intValue >= Opts.minParallelWork)
        Kind = LoopKind::Parallel;
    }
    Body.push_back(forLoop(OutIx[Depth]->id, OutIx[Depth]->name,
                           Out.shape[Depth], Kind, std::move(Inner)));
    return Body;
  }

  /// Innermost serial loops (no loop inside) become vectorized. Returns
  /// whether Body holds a loop.
  static bool annotate(std::vector<LoopStmt> &Body) {
    bool HasLoop = false;
    for (LoopStmt &S : Body) {
      if (S->kind != LoopStmtKind::For)
        continue;
      HasLoop = true;
      auto N = std::make_shared<LoopStmtNode>(*S);
      bool Inner = annotate(N->body);
      if (!Inner && N->loopKind == LoopKind::Serial)
        N->loopKind = LoopKind::Vectorized;
      S = N;
    }
    return HasLoop;
  }
};

LoopExpr CallContext::read(size_t I, const Ix &Indices) {
  RIVET_CHECK(I < Call.args.size(), "{}: argument {} of {}", Name, I,
              Call.args.size());
  RIVET_CHECK(Indices.size() == Inputs[I].rank(),
              "{}: {} indices for argument {} of rank {}", Name, Indices.size(),
              I, Inputs[I].rank());
  return L.valueAt(Call.args[I], Indices);
}

LoopExpr CallContext::reduce(ReduceCombiner C, LoopExpr Init, const Ix &Extents,
                             const std::function<LoopExpr(const Ix &)> &Body) {
  return L.reduce(C, std::move(Init), Extents, Body);
}

bool CallContext::canStoreResult(size_t Axis) const {
  return L.canStoreResult(IsResult, Axis);
}

void CallContext::storeResult(const Ix &Indices, LoopExpr Value) {
  RIVET_CHECK(IsResult, "{}: storeResult of a value that is not the result",
              Name);
  L.storeResult(Indices, std::move(Value));
}

LoopExpr CallContext::readResult(const Ix &Indices) {
  RIVET_CHECK(IsResult, "{}: readResult of a value that is not the result",
              Name);
  return L.readResult(Indices);
}

LoopExpr Lowering::reduce(ReduceCombiner C, LoopExpr Init, const Ix &Extents,
                          const std::function<LoopExpr(const Ix &)> &Body) {
  DType T = Init->dtype;
  int Local = newLocal(T);
  Ix Vars;
  for (size_t I = 0; I < Extents.size(); ++I)
    Vars.push_back(
        loopVar(newVar(), fmt::format("r{}", K.kernel.numLoopVars - 1)));
  std::vector<LoopStmt> Inner;
  ReduceScopes.push_back(&Inner);
  ScopeIds.push_back(NumScopes++);
  LoopExpr X = cast(Body(Vars), T);
  ScopeIds.pop_back();
  ReduceScopes.pop_back();
  LoopExpr Acc = localRef(Local, T);
  LoopOp Op = C == ReduceCombiner::Sum    ? LoopOp::Add
              : C == ReduceCombiner::Prod ? LoopOp::Mul
              : C == ReduceCombiner::Max  ? LoopOp::Max
                                          : LoopOp::Min;
  bool Reassoc = C == ReduceCombiner::Sum || C == ReduceCombiner::Prod;
  std::vector<int> Accs{Local};
  // Float max/min propagate NaN, which LLVM vectorizes only as a reduction
  // without NaNs: NaNs are counted out (an or-reduction of isnan), the
  // maximum is taken over the other values (NaN read as Init, which never
  // changes it), and a NaN seen makes the result NaN after the nest.
  bool TrackNaN = (C == ReduceCombiner::Max || C == ReduceCombiner::Min) &&
                  isFloat(T) && Init->isConst() &&
                  !std::isnan(Init->floatValue);
  int SawNaN = -1;
  if (TrackNaN) {
    SawNaN = newLocal(DType::Bool);
    Accs.push_back(SawNaN);
    LoopExpr IsNan = unary(LoopOp::IsNan, X);
    Inner.push_back(assignLocal(Local, binary(Op, Acc, select(IsNan, Init, X)),
                                false, /*NanFree=*/true));
    Inner.push_back(assignLocal(
        SawNaN, binary(LoopOp::Or, localRef(SawNaN, DType::Bool), IsNan),
        true));
  } else {
    Inner.push_back(assignLocal(Local, binary(Op, Acc, X), Reassoc));
  }
  std::vector<LoopStmt> Nest = std::move(Inner);
  for (size_t I = Extents.size(); I-- > 0;)
    Nest = {forLoop(Vars[I]->id, Vars[I]->name, Extents[I], LoopKind::Serial,
                    std::move(Nest))};
  Nest.insert(Nest.begin(), declareLocal(Local, Init));
  if (TrackNaN) {
    Nest.insert(Nest.begin() + 1,
                declareLocal(SawNaN, intConst(0, DType::Bool)));
    Nest.push_back(assignLocal(
        Local, select(localRef(SawNaN, DType::Bool), floatConst(NAN, T), Acc),
        false));
  }
  if (!ReduceScopes.empty()) {
    auto &Dst = *ReduceScopes.back();
    Dst.insert(Dst.end(), Nest.begin(), Nest.end());
  } else {
    addPending(std::move(Nest), Accs);
  }
  return Acc;
}

LoopExpr Lowering::valueAt(const ir::Expr &E0, const Ix &Indices) {
  ir::Expr E = resolve(E0);
  auto SameIndices = [&](const Computed &C) {
    return C.scope == ScopeIds.back() &&
           std::equal(Indices.begin(), Indices.end(), C.indices.begin(),
                      C.indices.end(), sameExpr);
  };
  std::vector<Computed> &Known = Values[E.get()];
  for (const Computed &C : Known)
    if (SameIndices(C))
      return C.value;
  LoopExpr V = compute(E, Indices);
  Values[E.get()].push_back({ScopeIds.back(), Indices, V});
  return V;
}

LoopExpr Lowering::compute(const ir::Expr &E, const Ix &Indices) {
  if (const auto *V = E->as<ir::VarNode>()) {
    auto It = Params.find(V);
    if (It == Params.end())
      unsupported("a free variable %{} in the group", V->nameHint);
    return load((int)It->second, Descs[V].dtype, Indices);
  }
  if (const auto *C = E->as<ir::ConstantNode>()) {
    const Tensor &T = C->value;
    requireCodegenDType("a constant", T.dtype());
    if (T.numel() != 1)
      unsupported("a non-scalar constant of shape {} in the group",
                  shapeToString(T.shape()));
    return isFloat(T.dtype()) ? floatConst(T.elementAsDouble(0), T.dtype())
                              : intConst(T.elementAsInt(0), T.dtype());
  }
  const auto *C = E->as<ir::CallNode>();
  const auto *Op = C ? C->callee->as<ir::OpNode>() : nullptr;
  if (!Op)
    unsupported("a {} inside the group",
                C ? "call of a non-operator" : "non-call expression");
  ComputeRule Rule = ComputeRuleRegistry::global().find(Op->name());
  if (!Rule)
    unsupported("operator '{}' has no compute rule", Op->name());
  std::vector<TensorDesc> In;
  for (const ir::Expr &A : C->args)
    In.push_back(descOf(A));
  bool IsResult =
      RuleDepth == 0 && E == resolve(Result) &&
      Indices.size() == OutIx.size() &&
      std::equal(Indices.begin(), Indices.end(), OutIx.begin(), sameExpr);
  CallContext Ctx(*this, *C, Op->name(), std::move(In), descOf(E), IsResult);
  ++RuleDepth;
  LoopExpr V = Rule(Ctx, Indices);
  --RuleDepth;
  return V;
}

} // namespace

LoweringResult lowerPrimitive(const ir::Expr &FnExpr, const std::string &Name,
                              const LoweringOptions &Opts) {
  LoweringResult R;
  const auto *Fn = FnExpr ? FnExpr->as<ir::FunctionNode>() : nullptr;
  if (!Fn) {
    R.unsupported = "not a function literal";
    return R;
  }
  try {
    RunTimeCheckScope Checks;
    Lowering L(*Fn, Name, Opts);
    R.lowered = L.run();
    R.lowered->broadcastChecks = std::move(Checks.broadcasts);
    R.lowered->emptyReductionChecks = std::move(Checks.emptyReductions);
  } catch (const Unsupported &E) {
    R.unsupported = E.what();
  } catch (const Error &E) {
    // Malformed attributes and the like: the builtin kernel reports them.
    R.unsupported = std::string("codegen: ") + E.what();
  }
  return R;
}

namespace {
bool collectBroadcastOperands(const LoopExpr &E, std::vector<LoopExpr> &Out) {
  if (E->kind == LoopExprKind::Const || E->kind == LoopExprKind::SizeParam) {
    Out.push_back(E);
    return true;
  }
  // select(eq(A, 1), B, A): broadcastExtent's form.
  if (E->kind != LoopExprKind::Op || E->op != LoopOp::Select)
    return false;
  const LoopExpr &Cond = E->args[0];
  if (Cond->kind != LoopExprKind::Op || Cond->op != LoopOp::EQ ||
      !isIntConst(Cond->args[1], 1) || !sameExpr(Cond->args[0], E->args[2]))
    return false;
  return collectBroadcastOperands(E->args[2], Out) &&
         collectBroadcastOperands(E->args[1], Out);
}
} // namespace

std::optional<std::vector<LoopExpr>> broadcastOperands(const LoopExpr &E) {
  std::vector<LoopExpr> Out;
  if (!collectBroadcastOperands(E, Out))
    return std::nullopt;
  return Out;
}

std::vector<int64_t>
sizeParamValues(const LoweredKernel &K,
                const std::vector<std::vector<int64_t>> &BufferShapes) {
  std::vector<int64_t> Values;
  for (const SizeParamSource &S : K.sizeSources) {
    RIVET_CHECK(S.buffer < BufferShapes.size() &&
                    S.axis < BufferShapes[S.buffer].size(),
                "kernel {}: no extent for buffer {} axis {}", K.kernel.name,
                S.buffer, S.axis);
    Values.push_back(BufferShapes[S.buffer][S.axis]);
  }
  return Values;
}

} // namespace rivet::codegen
