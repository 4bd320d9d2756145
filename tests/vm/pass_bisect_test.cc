//===- pass_bisect_test.cc - The first step after which results diverge ---===//
//
// A deliberately wrong pass, registered only here and inserted into the
// pipeline (PassContext::pipeline), turns every add into subtract: pass
// bisection must name exactly that step, in binary and in linear search,
// and its diff must show the change. A correct pipeline diverges nowhere.
// The compiler's own steps (anchor selection, codegen) are steps too, and
// skipping them really compiles without them. Also: the step limit of
// runPasses, and the line diff against `diff -u`'s format.
//
//===----------------------------------------------------------------------===//
#include "vm/compiler/PassBisect.h"

#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/TypeInference.h"
#include "ir/Visitor.h"
#include "kernels/DnnlConfig.h"
#include "support/Executors.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/ValueConversion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace rivet;
using namespace rivet::ir;

namespace {

/// The wrong pass: add becomes subtract (observable, and type-correct, so
/// only the results tell).
void wrongAddToSubtract(Module &M, const PassContext &) {
  struct Rewrite : ExprMutator {
    Expr visitOp(const OpNode &N, const Expr &Self) override {
      return N.name() == "add" ? op("subtract") : Self;
    }
  };
  transformFunctions(M, [](const Expr &F) { return Rewrite().mutate(F); });
}
RIVET_REGISTER_PASS("TestWrongAddToSubtract", 0,
                    "Test only: rewrites add into subtract (wrong).",
                    wrongAddToSubtract);

/// A pass that fails: @main returns a variable it never binds.
void danglingVariable(Module &M, const PassContext &) {
  const auto &Fn = *M.function("main")->as<FunctionNode>();
  M.addFunction("main",
                function(Fn.params, var("dangling", Fn.retType), Fn.retType));
}
RIVET_REGISTER_PASS("TestDanglingVariable", 0,
                    "Test only: leaves a free variable (the verifier or "
                    "lowering rejects it).",
                    danglingVariable);

const char *Program = R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  let %a = add(%x, %y);
  let %b = multiply(%a, %x);
  relu(add(%b, %y))
}
)";

Module parseTyped(const std::string &Text) {
  Module M = parseModule(Text, "<test>");
  inferTypes(M);
  return M;
}

std::vector<Tensor> inputs() {
  return {Tensor::fromVector<float>({1, -2, 3, 0.5f, 4, -1}, {2, 3}),
          Tensor::fromVector<float>({2, 1, -1, 3, 0.25f, 2}, {2, 3})};
}

/// The check rivet check makes, in short: every output within 1e-5 + 1e-4
/// |ref| of the reference interpreter's.
vm::StepCheck referenceCheck(const Module &M, std::vector<Tensor> In) {
  std::vector<Tensor> Want = rivet::testing::runOnInterpreter(M, In);
  return [=, &M](const std::shared_ptr<vm::Executable> &Exe) {
    vm::VirtualMachine VM(Exe);
    std::vector<vm::ObjectRef> Args;
    for (const Tensor &T : In)
      Args.push_back(vm::makeTensor(T));
    std::vector<Tensor> Got;
    rivet::testing::flattenValue(
        vm::toValue(VM.invoke("main", std::move(Args)), *Exe, M), Got);
    vm::StepVerdict V;
    if (Got.size() != Want.size()) {
      V.ok = false;
      V.note = "output count";
      return V;
    }
    for (size_t I = 0; I < Want.size(); ++I) {
      if (Got[I].shape() != Want[I].shape()) {
        V.ok = false;
        V.note = "shape";
        continue;
      }
      for (int64_t E = 0; E < Want[I].numel(); ++E) {
        double G = Got[I].elementAsDouble(E), W = Want[I].elementAsDouble(E);
        double D = std::fabs(G - W);
        V.maxAbsErr = std::max(V.maxAbsErr, D);
        if (!(D <= 1e-5 + 1e-4 * std::fabs(W)))
          V.ok = false;
      }
    }
    return V;
  };
}

/// The default pipeline with Pass inserted after the first After.
std::vector<std::string> pipelineWith(const std::string &Pass,
                                      const std::string &After) {
  std::vector<std::string> P = defaultPipeline();
  auto It = std::find(P.begin(), P.end(), After);
  EXPECT_NE(It, P.end());
  P.insert(It + 1, Pass);
  return P;
}

vm::CompileOptions options(vm::NativeCode Codegen, int Level = 3) {
  vm::CompileOptions O;
  O.optLevel = Level;
  O.codegen.mode = Codegen;
  return O;
}

size_t indexOf(const std::vector<std::string> &Steps, const std::string &S) {
  return std::find(Steps.begin(), Steps.end(), S) - Steps.begin() + 1;
}

bool contains(const std::string &S, const std::string &Part) {
  return S.find(Part) != std::string::npos;
}

TEST(PassBisect, ACorrectPipelineDivergesNowhere) {
  Module M = parseTyped(Program);
  vm::BisectReport R = vm::bisectPasses(M, options(vm::NativeCode::Jit),
                                        referenceCheck(M, inputs()));
  EXPECT_TRUE(R.ok);
  EXPECT_EQ(R.firstBad, 0u);
  EXPECT_FALSE(R.baselineDiverges);
  ASSERT_EQ(R.probes.size(), 1u); // the full compilation only
  EXPECT_EQ(R.probes[0].steps, -1);
  // The pipeline's passes at -O3, then the compiler's own steps.
  ASSERT_GE(R.steps.size(), 4u);
  EXPECT_EQ(R.steps.front(), "SimplifyInference");
  size_t Fuse = indexOf(R.steps, "FuseOps");
  EXPECT_EQ(R.steps.at(Fuse), vm::AnchorSelectionStep);
  EXPECT_EQ(R.steps.at(Fuse + 1), vm::CodegenStep);
  // Without codegen there is no codegen step.
  vm::BisectReport Off = vm::bisectPasses(M, options(vm::NativeCode::Off),
                                          referenceCheck(M, inputs()));
  EXPECT_EQ(Off.steps.size() + 1, R.steps.size());
  EXPECT_EQ(indexOf(Off.steps, vm::CodegenStep), Off.steps.size() + 1);
}

TEST(PassBisect, NamesTheWrongPassAndShowsItsDiff) {
  Module M = parseTyped(Program);
  for (vm::NativeCode Mode : {vm::NativeCode::Off, vm::NativeCode::Jit})
    for (bool Linear : {false, true}) {
      SCOPED_TRACE(std::string(Linear ? "linear" : "binary") +
                   (Mode == vm::NativeCode::Jit ? ", jit" : ", codegen off"));
      vm::CompileOptions O = options(Mode);
      O.passes.pipeline =
          pipelineWith("TestWrongAddToSubtract", "FoldScaleAxis");
      vm::BisectOptions BO;
      BO.linear = Linear;
      BO.diff = true;
      vm::BisectReport R =
          vm::bisectPasses(M, O, referenceCheck(M, inputs()), BO);
      EXPECT_FALSE(R.ok);
      EXPECT_FALSE(R.baselineDiverges);
      size_t Wrong = indexOf(R.steps, "TestWrongAddToSubtract");
      ASSERT_LE(Wrong, R.steps.size());
      EXPECT_EQ(R.firstBad, Wrong);
      EXPECT_TRUE(R.lastGood.ok);
      EXPECT_FALSE(R.firstBadVerdict.ok);
      EXPECT_GT(R.firstBadVerdict.maxAbsErr, 1.0);
      // Confirmed: the prefix without the step agrees, the one with it
      // does not (both were checked).
      bool SawGood = false, SawBad = false;
      for (const vm::BisectProbe &P : R.probes) {
        SawGood |= P.steps == (int)Wrong - 1 && P.verdict.ok;
        SawBad |= P.steps == (int)Wrong && !P.verdict.ok;
      }
      EXPECT_TRUE(SawGood && SawBad);
      if (Linear) {
        EXPECT_EQ(R.probes.size(), Wrong + 2); // all, none, 1..Wrong
      }
      // The diff: this step's change and nothing else.
      std::string Header = "--- before step " + std::to_string(Wrong) +
                           " (TestWrongAddToSubtract)\n+++ after step " +
                           std::to_string(Wrong) +
                           " (TestWrongAddToSubtract)\n";
      EXPECT_EQ(R.diff.rfind(Header, 0), 0u) << R.diff;
      EXPECT_TRUE(contains(R.diff, "\n-  let %a")) << R.diff;
      EXPECT_TRUE(contains(R.diff, "\n+  let %a")) << R.diff;
      EXPECT_TRUE(contains(R.diff, "= subtract(%x, %y)")) << R.diff;
      EXPECT_TRUE(contains(R.diff, "= add(%x, %y)")) << R.diff;
      // Every added line is the rewrite: no add is left or new.
      for (size_t At = R.diff.find("\n+"); At != std::string::npos;
           At = R.diff.find("\n+", At + 1)) {
        std::string Line = R.diff.substr(At, R.diff.find('\n', At + 1) - At);
        EXPECT_TRUE(Line.rfind("\n+++ ", 0) == 0 || !contains(Line, "add("))
            << R.diff;
      }
    }
}

TEST(PassBisect, SeveralWrongStepsBlameTheFirst) {
  // Wrong twice (second and last step of the pipeline): the second one
  // finds no add left; both searches name the first.
  Module M = parseTyped(Program);
  vm::CompileOptions O = options(vm::NativeCode::Off);
  O.passes.pipeline =
      pipelineWith("TestWrongAddToSubtract", "SimplifyInference");
  O.passes.pipeline.push_back("TestWrongAddToSubtract");
  for (bool Linear : {false, true}) {
    vm::BisectOptions BO;
    BO.linear = Linear;
    vm::BisectReport R =
        vm::bisectPasses(M, O, referenceCheck(M, inputs()), BO);
    EXPECT_EQ(R.firstBad, 2u) << (Linear ? "linear" : "binary");
    EXPECT_EQ(R.steps.at(1), "TestWrongAddToSubtract");
  }
}

TEST(PassBisect, AStepThatFailsToCompileIsTheCulprit) {
  Module M = parseTyped(Program);
  vm::CompileOptions O = options(vm::NativeCode::Off);
  O.passes.pipeline = pipelineWith("TestDanglingVariable", "FoldConstant");
  vm::BisectOptions BO;
  BO.diff = true;
  vm::BisectReport R = vm::bisectPasses(M, O, referenceCheck(M, inputs()), BO);
  size_t Bad = indexOf(R.steps, "TestDanglingVariable");
  ASSERT_LE(Bad, R.steps.size());
  EXPECT_EQ(R.firstBad, Bad);
  EXPECT_TRUE(contains(R.firstBadVerdict.note, "compile error"))
      << R.firstBadVerdict.note;
  // Its module does not type-check; the diff shows it anyway.
  EXPECT_TRUE(contains(R.diff, "%dangling")) << R.diff << R.diffError;
}

TEST(PassBisect, ADivergenceWithoutStepsBlamesNoStep) {
  Module M = parseTyped(Program);
  vm::BisectReport R =
      vm::bisectPasses(M, options(vm::NativeCode::Off),
                       [](const std::shared_ptr<vm::Executable> &) {
                         vm::StepVerdict V;
                         V.ok = false;
                         return V;
                       });
  EXPECT_FALSE(R.ok);
  EXPECT_TRUE(R.baselineDiverges);
  EXPECT_EQ(R.firstBad, 0u);
  EXPECT_EQ(R.probes.size(), 2u);
}

bool hasKernel(const vm::Executable &Exe,
               bool (*Match)(const vm::KernelEntry &)) {
  return std::any_of(Exe.kernels.begin(), Exe.kernels.end(), Match);
}

TEST(PassBisect, SkippedCompilerStepsCompileWithoutThem) {
  // A check that fails when the program has what a step makes finds that
  // step: skipping it must remove it.
  const char *Dense = R"(
def @main(%x: Tensor[(16, 64), float32], %w: Tensor[(32, 64), float32], %b: Tensor[(32,), float32]) -> Tensor[(16, 32), float32] {
  let %d = dense(%x, %w);
  let %e = add(%d, %b);
  let %f = relu(%e);
  multiply(%f, %f)
}
)";
  Module M = parseTyped(Dense);
  auto Fails = [](bool (*Match)(const vm::KernelEntry &)) {
    return [Match](const std::shared_ptr<vm::Executable> &Exe) {
      vm::StepVerdict V;
      V.ok = !hasKernel(*Exe, Match);
      return V;
    };
  };
  vm::BisectReport R = vm::bisectPasses(
      M, options(vm::NativeCode::Jit), Fails([](const vm::KernelEntry &K) {
        return K.kind == vm::KernelEntry::Kind::Native;
      }));
  ASSERT_TRUE(R.firstBad) << "no native kernel in the full compilation";
  EXPECT_EQ(R.steps.at(R.firstBad - 1), vm::CodegenStep);

  if (!dnnlEnabled())
    GTEST_SKIP() << "oneDNN is disabled: no library kernels";
  R = vm::bisectPasses(M, options(vm::NativeCode::Off),
                       Fails([](const vm::KernelEntry &K) {
                         return K.op.rfind("dnnl.", 0) == 0;
                       }));
  ASSERT_TRUE(R.firstBad) << "no library kernel in the full compilation";
  EXPECT_EQ(R.steps.at(R.firstBad - 1), vm::AnchorSelectionStep);
  // At -O0 (no fusion) the library kernels are the step's too.
  R = vm::bisectPasses(M, options(vm::NativeCode::Off, 0),
                       Fails([](const vm::KernelEntry &K) {
                         return K.op.rfind("dnnl.", 0) == 0;
                       }));
  ASSERT_TRUE(R.firstBad) << "no library kernel at -O0";
  EXPECT_EQ(R.steps.at(R.firstBad - 1), vm::AnchorSelectionStep);
}

TEST(PassBisect, TheLimitSkipsLaterPassesAndListsThemAll) {
  Module M = parseTyped(Program);
  PassContext Ctx;
  Ctx.optLevel = 0;
  Ctx.bisectLimit = 1;
  std::vector<std::string> Seen;
  Ctx.stepObserver = [&](size_t Step, const std::string &Name,
                         const Module &Before, const Module &After) {
    Seen.push_back(std::to_string(Step) + " " + Name);
    EXPECT_TRUE(contains(printModule(Before), "add("));
    EXPECT_FALSE(contains(printModule(After), "add("));
  };
  Module A = M;
  runPasses(A, {"TestWrongAddToSubtract", "TestDanglingVariable"}, Ctx);
  EXPECT_EQ(Seen, std::vector<std::string>{"1 TestWrongAddToSubtract"});
  EXPECT_EQ(Ctx.steps, (std::vector<std::string>{"TestWrongAddToSubtract",
                                                 "TestDanglingVariable"}));
  Ctx.steps.clear();
  Ctx.bisectLimit = 0;
  Module B = M;
  runPasses(B, {"TestWrongAddToSubtract"}, Ctx);
  EXPECT_EQ(printModule(B), printModule(M));
  EXPECT_EQ(Ctx.steps.size(), 1u);
}

TEST(PassBisect, PrintStepShowsTheModuleAroundAStep) {
  Module M = parseTyped(Program);
  vm::CompileOptions O = options(vm::NativeCode::Off);
  O.passes.pipeline = pipelineWith("TestWrongAddToSubtract", "FoldScaleAxis");
  std::vector<std::string> Steps;
  {
    vm::CompileOptions Full = O;
    vm::compile(M, Full);
    Steps = Full.passes.steps;
  }
  size_t K = indexOf(Steps, "TestWrongAddToSubtract");
  auto Printed = vm::printStep(M, O, K);
  ASSERT_TRUE(Printed);
  EXPECT_TRUE(contains(Printed->first, "add(%x, %y)"));
  EXPECT_TRUE(contains(Printed->second, "subtract(%x, %y)"));
  EXPECT_FALSE(vm::printStep(M, O, Steps.size() + 1));
}

// Expected outputs written as GNU `diff -u` writes them.
TEST(UnifiedDiff, MatchesDiffU) {
  EXPECT_EQ(vm::unifiedDiff("a\nb\n", "a\nb\n", "x", "y"), "");
  EXPECT_EQ(vm::unifiedDiff("a\nb\nc\n", "a\nB\nc\n", "x", "y"),
            "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  // Insertion into an empty text, deletion of everything.
  EXPECT_EQ(vm::unifiedDiff("", "a\n", "x", "y"),
            "--- x\n+++ y\n@@ -0,0 +1 @@\n+a\n");
  EXPECT_EQ(vm::unifiedDiff("a\nb\n", "", "x", "y"),
            "--- x\n+++ y\n@@ -1,2 +0,0 @@\n-a\n-b\n");
  // Two changes far apart: two hunks with three lines of context each.
  std::string Old, New;
  for (int I = 1; I <= 20; ++I) {
    Old += std::to_string(I) + "\n";
    New += (I == 2 ? "two" : I == 15 ? "fifteen" : std::to_string(I)) + "\n";
  }
  EXPECT_EQ(vm::unifiedDiff(Old, New, "x", "y"),
            "--- x\n+++ y\n"
            "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
            "@@ -12,7 +12,7 @@\n 12\n 13\n 14\n-15\n+fifteen\n 16\n 17\n 18\n");
  // Closer than twice the context: one hunk.
  EXPECT_EQ(vm::unifiedDiff("1\n2\n3\n4\n5\n6\n7\n8\n9\n",
                            "1\nX\n3\n4\n5\n6\n7\nY\n9\n", "x", "y"),
            "--- x\n+++ y\n@@ -1,9 +1,9 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n 7\n"
            "-8\n+Y\n 9\n");
  // An empty range after the start names the line before it.
  EXPECT_EQ(vm::unifiedDiff("1\n2\n3\n4\n5\n6\n7\n8\n",
                            "1\n2\n3\n4\n5\n6\n7\n8\nnew\n", "x", "y"),
            "--- x\n+++ y\n@@ -6,3 +6,4 @@\n 6\n 7\n 8\n+new\n");
}

TEST(UnifiedDiff, IsAMinimalEditScript) {
  // Lines moved and repeated: a minimal diff keeps the longest common
  // subsequence (4 lines here: b a b a).
  std::string A = "a\nb\nc\na\nb\nb\na\n", B = "c\nb\na\nb\na\nc\nx\ny\n";
  std::string D = vm::unifiedDiff(A, B, "x", "y", 100);
  size_t Kept = 0, Removed = 0, Added = 0;
  for (size_t At = D.find("@@\n") + 3; At < D.size();) {
    size_t End = D.find('\n', At);
    char C = D[At];
    Kept += C == ' ', Removed += C == '-', Added += C == '+';
    At = End + 1;
  }
  EXPECT_EQ(Kept, 4u) << D;
  EXPECT_EQ(Removed, 7u - Kept) << D;
  EXPECT_EQ(Added, 8u - Kept) << D;
}

TEST(UnifiedDiff, RandomTextsRoundTripWithMinimalDiffs) {
  // Texts over three distinct lines (many repeats): the diff with all of
  // the text as context rebuilds both texts, and keeps as many lines as
  // their longest common subsequence (dynamic programming).
  std::mt19937 Rng(27);
  for (int Case = 0; Case < 2000; ++Case) {
    std::vector<std::string> A, B;
    for (auto *L : {&A, &B})
      for (int I = 0, N = (int)(Rng() % 24); I < N; ++I)
        L->push_back(std::string(1, (char)('a' + Rng() % 3)));
    std::string TA, TB;
    for (auto &L : A)
      TA += L + "\n";
    for (auto &L : B)
      TB += L + "\n";
    std::string D = vm::unifiedDiff(TA, TB, "x", "y", 1000);
    std::vector<std::vector<size_t>> Lcs(A.size() + 1,
                                         std::vector<size_t>(B.size() + 1));
    for (size_t I = A.size(); I-- > 0;)
      for (size_t J = B.size(); J-- > 0;)
        Lcs[I][J] = A[I] == B[J] ? Lcs[I + 1][J + 1] + 1
                                 : std::max(Lcs[I + 1][J], Lcs[I][J + 1]);
    if (TA == TB) {
      EXPECT_EQ(D, "");
      continue;
    }
    std::string Old, New;
    size_t Kept = 0;
    size_t At = D.find("@@\n");
    ASSERT_NE(At, std::string::npos) << D;
    for (At += 3; At < D.size();) {
      size_t End = D.find('\n', At);
      std::string Line = D.substr(At + 1, End - At - 1) + "\n";
      if (D[At] != '+')
        Old += Line;
      if (D[At] != '-')
        New += Line;
      Kept += D[At] == ' ';
      At = End + 1;
    }
    ASSERT_EQ(Old, TA) << D;
    ASSERT_EQ(New, TB) << D;
    ASSERT_EQ(Kept, Lcs[0][0]) << TA << "--\n" << TB << "--\n" << D;
  }
}

} // namespace
