//===- Pass.cc - Pass registry, pipeline and verifier ---------------------===//
#include "ir/transforms/Pass.h"

#include "ir/Printer.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"

#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace rivet::ir {

namespace {
struct RegistryData {
  std::mutex M;
  std::map<std::string, PassInfo> Passes;
};
RegistryData &registryData() {
  static RegistryData D;
  return D;
}
} // namespace

PassRegistry &PassRegistry::global() {
  static PassRegistry R;
  return R;
}

void PassRegistry::add(PassInfo Info) {
  auto &D = registryData();
  std::lock_guard<std::mutex> L(D.M);
  RIVET_CHECK(Info.run, "pass '{}' has no function", Info.name);
  RIVET_CHECK(!D.Passes.count(Info.name), "pass '{}' registered twice",
              Info.name);
  D.Passes.emplace(Info.name, std::move(Info));
}

const PassInfo *PassRegistry::find(const std::string &Name) const {
  auto &D = registryData();
  std::lock_guard<std::mutex> L(D.M);
  auto It = D.Passes.find(Name);
  return It == D.Passes.end() ? nullptr : &It->second;
}

std::vector<std::string> PassRegistry::names() const {
  auto &D = registryData();
  std::lock_guard<std::mutex> L(D.M);
  std::vector<std::string> Out;
  for (auto &[N, _] : D.Passes)
    Out.push_back(N);
  return Out;
}

const PassInfo &PassRegistry::get(const std::string &Name) const {
  if (const PassInfo *P = find(Name))
    return *P;
  std::string Known;
  for (auto &N : names())
    Known += (Known.empty() ? "" : ", ") + N;
  fail("unknown pass '{}' (known passes: {})", Name, Known);
}

bool PassContext::isEnabled(const PassInfo &P) const {
  if (disabled.count(P.name))
    return false;
  return enabled.count(P.name) || optLevel >= P.optLevel;
}

bool PassContext::shouldRunStep(const std::string &Name) const {
  steps.push_back(Name);
  return bisectLimit < 0 || steps.size() <= (size_t)bisectLimit;
}

const std::vector<std::string> &defaultPipeline() {
  // TVM's opt-level table decides which of these run; the order is fixed:
  // inference-only ops first, then shape facts (so later passes see static
  // shapes), then algebra that produces new constants to fold, layout last,
  // cleanup, and fusion at the very end (it consumes the final graph).
  static const std::vector<std::string> Pipeline = {
      "SimplifyInference",
      "SimplifyExpr",
      "DynamicToStatic",
      "FoldConstant",
      "EliminateCommonSubexpr",
      "CombineParallelConv2D",
      "CombineParallelDense",
      "FoldScaleAxis",
      "FoldConstant",
      "CanonicalizeOps",
      "FuseAttention",
      "FuseLstmStack",
      "FuseLayerNorm",
      "AlterOpLayout",
      "FoldConstant",
      "SimplifyExpr",
      "DeadCodeElimination",
      "ResolveShapeValues",
      "FuseOps",
  };
  return Pipeline;
}

void runPasses(Module &M, const std::vector<std::string> &Passes,
               const PassContext &Ctx) {
  std::ostream &Print = Ctx.printStream ? *Ctx.printStream : std::cerr;
  // Every pipeline, the default one included, names registered passes only:
  // an unknown name is a typo, not a pass to skip. Checked before any runs.
  std::vector<const PassInfo *> Infos;
  for (const std::string &Name : Passes)
    Infos.push_back(&PassRegistry::global().get(Name));
  size_t Steps = 0, Step = 0;
  for (const PassInfo *P : Infos)
    Steps += Ctx.isEnabled(*P);
  for (const PassInfo *P : Infos) {
    const std::string &Name = P->name;
    if (!Ctx.isEnabled(*P) || !Ctx.shouldRunStep(Name))
      continue;
    std::optional<Module> Before; // nodes are shared: a cheap copy
    if (Ctx.stepObserver)
      Before = M;
    ++Step;
    if (Ctx.progress)
      Ctx.progress(Step, Steps, Name, -1);
    auto Start = std::chrono::steady_clock::now();
    try {
      P->run(M, Ctx);
      inferTypes(M);
      if (Ctx.verifyEach)
        verifyModule(M);
    } catch (const Error &E) {
      // What the failing pass made is what a bisection's diff shows; a
      // module too broken to print shows nothing.
      if (Before)
        try {
          Ctx.stepObserver(Ctx.steps.size(), Name, *Before, M);
        } catch (const std::exception &) {
        }
      fail("in pass {}: {}", Name, E.what());
    }
    std::chrono::duration<double, std::milli> D =
        std::chrono::steady_clock::now() - Start;
    if (Ctx.timePasses)
      Ctx.timings.push_back(
          {Name, D.count(),
           std::chrono::duration<double, std::milli>(Start.time_since_epoch())
               .count()});
    if (Ctx.progress)
      Ctx.progress(Step, Steps, Name, D.count() / 1e3);
    if (Ctx.printAfter.count(Name) || Ctx.printAfter.count("all"))
      Print << "// after " << Name << "\n" << printModule(M) << "\n";
    if (Before)
      Ctx.stepObserver(Ctx.steps.size(), Name, *Before, M);
  }
}

void optimize(Module &M, const PassContext &Ctx) {
  // Asking for a pass that does not exist is a typo, not a no-op; disabling
  // one is harmless (the CLI checks its users' spellings).
  for (const std::string &Name : Ctx.enabled)
    PassRegistry::global().get(Name);
  runPasses(M, Ctx.pipeline.empty() ? defaultPipeline() : Ctx.pipeline, Ctx);
}

void transformFunctions(Module &M,
                        const std::function<Expr(const Expr &Fn)> &F) {
  for (const std::string &Name : M.functionNames()) {
    const Expr &Old = M.function(Name);
    Expr New = F(Old);
    if (New != Old)
      M.addFunction(Name, std::move(New));
  }
}

bool isPrimitiveFunction(const Expr &E) {
  const auto *Fn = E ? E->as<FunctionNode>() : nullptr;
  return Fn && Fn->attrs.has(kPrimitiveAttr) &&
         Fn->attrs.getInt(kPrimitiveAttr, 0) != 0;
}

namespace {

/// Checks scoping: each Var is bound at one site and used only inside it.
/// Iterative over let chains (imported graphs are long chains).
class ScopeChecker {
public:
  ScopeChecker(const Module &M, std::string Where)
      : M(M), Where(std::move(Where)) {}

  void check(const Expr &E) {
    if (!E)
      problem("a null expression");
    switch (E->kind) {
    case ExprKind::Var: {
      const auto *V = E->as<VarNode>();
      if (!InScope.count(V))
        problem("variable %" + V->nameHint + " is used outside its scope");
      return;
    }
    case ExprKind::GlobalVar: {
      const auto &G = *E->as<GlobalVarNode>();
      if (!M.hasFunction(G.name))
        problem("@" + G.name + " is not a function of the module");
      return;
    }
    case ExprKind::Constant:
    case ExprKind::Op:
    case ExprKind::Constructor: return;
    case ExprKind::Call: {
      const auto &C = *E->as<CallNode>();
      check(C.callee);
      for (auto &A : C.args)
        check(A);
      return;
    }
    case ExprKind::Function: {
      const auto &F = *E->as<FunctionNode>();
      for (auto &P : F.params)
        bind(P, &F);
      check(F.body);
      for (auto &P : F.params)
        unbind(P);
      return;
    }
    case ExprKind::Let: {
      std::vector<const LetNode *> Chain;
      Expr Cur = E;
      while (Cur && Cur->kind == ExprKind::Let) {
        const auto &L = *Cur->as<LetNode>();
        bool Recursive = L.value && L.value->kind == ExprKind::Function;
        if (Recursive)
          bind(L.var, &L);
        check(L.value);
        if (!Recursive)
          bind(L.var, &L);
        Chain.push_back(&L);
        Cur = L.body;
      }
      check(Cur);
      for (auto It = Chain.rbegin(); It != Chain.rend(); ++It)
        unbind((*It)->var);
      return;
    }
    case ExprKind::If: {
      const auto &I = *E->as<IfNode>();
      check(I.cond);
      check(I.thenBranch);
      check(I.elseBranch);
      return;
    }
    case ExprKind::Tuple:
      for (auto &F : E->as<TupleNode>()->fields)
        check(F);
      return;
    case ExprKind::TupleGetItem:
      check(E->as<TupleGetItemNode>()->tuple);
      return;
    case ExprKind::Match: {
      const auto &Mt = *E->as<MatchNode>();
      check(Mt.data);
      for (auto &C : Mt.clauses) {
        std::vector<Var> Bound;
        bindPattern(C.lhs, Bound);
        check(C.rhs);
        for (auto &V : Bound)
          unbind(V);
      }
      return;
    }
    }
  }

private:
  [[noreturn]] void problem(const std::string &What) {
    fail("malformed IR in {}: {}", Where, What);
  }
  /// Site is the binding node; a subtree shared by two parents is walked
  /// twice and rebinds at the same site, which is fine.
  void bind(const Var &V, const void *Site) {
    auto [It, New] = BindingSite.emplace(V.get(), Site);
    if (!New && It->second != Site)
      problem("variable %" + V->nameHint + " is bound more than once");
    InScope.insert(V.get());
  }
  void unbind(const Var &V) { InScope.erase(V.get()); }
  void bindPattern(const Pattern &P, std::vector<Var> &Bound) {
    if (!P)
      problem("a null pattern");
    if (P->kind == PatternKind::Var) {
      bind(P->var, P.get());
      Bound.push_back(P->var);
    }
    if (P->kind == PatternKind::Constructor &&
        (!P->ctor || !M.findConstructor(P->ctor->name)))
      problem("a pattern names an unknown constructor");
    for (auto &C : P->children)
      bindPattern(C, Bound);
  }

  const Module &M;
  std::string Where;
  std::unordered_set<const VarNode *> InScope;
  std::unordered_map<const VarNode *, const void *> BindingSite;
};

} // namespace

void verifyModule(Module &M) {
  for (const std::string &Name : M.functionNames()) {
    const Expr &Fn = M.function(Name);
    if (!Fn || Fn->kind != ExprKind::Function)
      fail("malformed IR: @{} is not a function", Name);
    ScopeChecker(M, "@" + Name).check(Fn);
  }
  inferTypes(M);
}

} // namespace rivet::ir
