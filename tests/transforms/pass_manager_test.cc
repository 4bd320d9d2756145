//===- pass_manager_test.cc - Registry, context, pipeline, verifier -------===//
#include "support/PassTest.h"

#include "ir/Visitor.h"
#include "kernels/Error.h"

using namespace rivet;
using namespace rivet::ir;

namespace {

/// A test pass: rewrites add into subtract (observable and cheap).
void addToSubtract(Module &M, const PassContext &) {
  struct Rewrite : ExprMutator {
    Expr visitOp(const OpNode &N, const Expr &Self) override {
      return N.name() == "add" ? op("subtract") : Self;
    }
  };
  transformFunctions(M, [](const Expr &F) { return Rewrite().mutate(F); });
}
RIVET_REGISTER_PASS("TestAddToSubtract", 2, "Rewrites add into subtract.",
                    addToSubtract);

/// A broken pass: makes @main use a variable it never binds.
void breakScoping(Module &M, const PassContext &) {
  const auto &Fn = *M.function("main")->as<FunctionNode>();
  M.addFunction("main",
                function(Fn.params, var("dangling", Fn.retType), Fn.retType));
}
RIVET_REGISTER_PASS("TestBreakScoping", 9, "Leaves a free variable.",
                    breakScoping);

const char *Program = R"(
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  add(%x, %x)
}
)";

TEST(PassManager, OptLevelDecidesWhetherAPassRuns) {
  Module M = test::parseTyped(Program);
  PassContext Ctx;
  Ctx.optLevel = 1;
  Module M1 = M;
  runPasses(M1, {"TestAddToSubtract"}, Ctx);
  EXPECT_TRUE(structuralEqual(M1, M));
  Ctx.optLevel = 2;
  runPasses(M1, {"TestAddToSubtract"}, Ctx);
  EXPECT_FALSE(structuralEqual(M1, M));
  EXPECT_NE(printModule(M1).find("subtract"), std::string::npos);
}

TEST(PassManager, EnableAndDisableOverrideTheLevel) {
  Module M = test::parseTyped(Program);
  PassContext Ctx;
  Ctx.optLevel = 0;
  Ctx.enabled.insert("TestAddToSubtract");
  Module A = M;
  runPasses(A, {"TestAddToSubtract"}, Ctx);
  EXPECT_NE(printModule(A).find("subtract"), std::string::npos);

  Ctx.optLevel = 3;
  Ctx.enabled.clear();
  Ctx.disabled.insert("TestAddToSubtract");
  Module B = M;
  runPasses(B, {"TestAddToSubtract"}, Ctx);
  EXPECT_TRUE(structuralEqual(B, M));
}

TEST(PassManager, UnknownPassNamesAreErrors) {
  Module M = test::parseTyped(Program);
  PassContext Ctx;
  Ctx.enabled.insert("NoSuchPass");
  try {
    optimize(M, Ctx);
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("unknown pass 'NoSuchPass'"),
              std::string::npos)
        << E.what();
  }
}

TEST(PassManager, PrintAfterAndTiming) {
  Module M = test::parseTyped(Program);
  std::ostringstream Out;
  PassContext Ctx;
  Ctx.printStream = &Out;
  Ctx.printAfter.insert("TestAddToSubtract");
  Ctx.timePasses = true;
  runPasses(M, {"TestAddToSubtract"}, Ctx);
  EXPECT_NE(Out.str().find("// after TestAddToSubtract"), std::string::npos);
  EXPECT_NE(Out.str().find("subtract(%x, %x)"), std::string::npos) << Out.str();
  ASSERT_EQ(Ctx.timings.size(), 1u);
  EXPECT_EQ(Ctx.timings[0].pass, "TestAddToSubtract");
  EXPECT_GE(Ctx.timings[0].milliseconds, 0.0);
}

TEST(PassManager, VerifierNamesTheBrokenPass) {
  Module M = test::parseTyped(Program);
  PassContext Ctx;
  Ctx.enabled.insert("TestBreakScoping");
  Ctx.verifyEach = true;
  try {
    runPasses(M, {"TestBreakScoping"}, Ctx);
    FAIL() << "expected an error";
  } catch (const Error &E) {
    std::string Msg = E.what();
    EXPECT_NE(Msg.find("in pass TestBreakScoping"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("%dangling"), std::string::npos) << Msg;
  }
}

TEST(PassManager, VerifierRejectsADoubleBinding) {
  Module M = test::parseTyped(Program);
  Var X = var("x", nullptr);
  Expr Body = let(X, constant(Tensor::scalar(1.0f)),
                  let(X, constant(Tensor::scalar(2.0f)), X));
  M.addFunction("twice", function({}, Body));
  EXPECT_THROW(verifyModule(M), Error);
}

TEST(PassManager, VerifierAcceptsWellFormedPrograms) {
  Module M = test::parseTyped(R"(
def @main(%x: Tensor[(3,), float32], %n: Tensor[(), int64]) {
  let %loop = fn (%i: Tensor[(), int64], %acc: Tensor[(3,), float32]) {
    if (less(%i, %n)) { %loop(add(%i, 1), add(%acc, %x)) } else { %acc }
  };
  let %l = Cons(%x, Nil);
  let %h = match (%l) { Cons(%y, _) => %y, Nil => %x };
  (%loop(0, %x), %h)
}
)");
  EXPECT_NO_THROW(verifyModule(M));
}

TEST(PassManager, DefaultPipelineFollowsTheOptLevelTable) {
  const auto &P = defaultPipeline();
  auto Has = [&](const char *N) {
    return std::find(P.begin(), P.end(), N) != P.end();
  };
  for (const char *N :
       {"SimplifyInference", "FuseOps", "FoldConstant", "FoldScaleAxis",
        "AlterOpLayout", "CanonicalizeOps", "CombineParallelConv2D",
        "CombineParallelDense", "DeadCodeElimination", "EliminateCommonSubexpr",
        "SimplifyExpr", "DynamicToStatic"})
    EXPECT_TRUE(Has(N)) << N;
  EXPECT_EQ(P.back(), "FuseOps");
}

TEST(PassManager, DefaultPipelineNamesRegisteredPasses) {
  for (const std::string &N : defaultPipeline())
    EXPECT_NE(PassRegistry::global().find(N), nullptr) << N;
}

TEST(PassManager, UnknownPassInAPipelineIsAnError) {
  Module M = test::parseTyped(Program);
  Module Before = M;
  PassContext Ctx;
  try {
    runPasses(M, {"TestAddToSubtract", "NoSuchPass"}, Ctx);
    FAIL() << "expected an error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("unknown pass 'NoSuchPass'"),
              std::string::npos)
        << E.what();
  }
  // The names are checked before any pass runs.
  EXPECT_TRUE(structuralEqual(M, Before));
}

} // namespace
