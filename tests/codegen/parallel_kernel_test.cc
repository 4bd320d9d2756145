// Parallel loops of generated kernels: lowering marks the outermost output
// loop parallel when the work may be large, the backend outlines its body
// into chunks run by RivetKernelRuntime::parallelFor with a Grain derived
// from the work per iteration; results equal the interpreter at 1, 2 and 4
// threads, for static and symbolic extents, rank 1 and higher, with
// reductions inside the group, and with chunks run in any order.

#include "codegen/CodegenTestUtil.h"
#include "kernels/Threading.h"

#include <algorithm>

using namespace rivet;
using namespace rivet::test;

namespace {

bool isParallel(const codegen::LoweredKernel &L) {
  return codegen::printLoopKernel(L.kernel).find(" parallel {") !=
         std::string::npos;
}

/// Restores the default thread count when a test ends.
struct ThreadsGuard {
  ~ThreadsGuard() { setNumThreads(0); }
};

/// Lowers the case, checks that it has a parallel loop, and compares it
/// with the interpreter at 1, 2 and 4 threads.
void expectParallelMatches(const std::vector<std::string> &Types,
                           const std::string &Body,
                           const std::vector<SizeMap> &Sizes,
                           double Rtol = 1e-5, double Atol = 1e-6) {
  codegen::LoweredKernel L = lowerOrFail(parsePrimitive(Types, Body), "probe");
  EXPECT_TRUE(isParallel(L)) << codegen::printLoopKernel(L.kernel);
  ThreadsGuard Guard;
  for (int T : {1, 2, 4}) {
    SCOPED_TRACE(fmt::format("{} thread(s)", T));
    setNumThreads(T);
    expectKernelMatches(Types, Body, Sizes, Rtol, Atol);
  }
}

const char *kChain = "let %a = multiply(%p0, 2.0);\n"
                     "let %b = add(%a, 1.0);\n"
                     "let %s = sigmoid(%b);\n"
                     "multiply(%s, %p0)";

TEST(ParallelKernel, Rank1Static) {
  expectParallelMatches({"Tensor[(100003), float32]"}, kChain, {{}});
}

TEST(ParallelKernel, Rank1Symbolic) {
  expectParallelMatches({"Tensor[(n), float32]"}, kChain,
                        {{{"n", 1}}, {{"n", 17}}, {{"n", 100003}}});
}

TEST(ParallelKernel, Rank2StaticWithBroadcast) {
  expectParallelMatches(
      {"Tensor[(300, 257), float32]", "Tensor[(257), float32]"},
      "let %a = add(%p0, %p1);\nrelu(%a)", {{}});
}

TEST(ParallelKernel, Rank3SymbolicAfterAUnitAxis) {
  // The unit axis stays serial: the parallel loop is the next one, inside
  // it, and reads the outer loop's variable from the closure.
  std::vector<std::string> Types = {"Tensor[(1, n, 64), float32]",
                                    "Tensor[(64), float32]"};
  std::string Body = "let %a = add(%p0, %p1);\ntanh(%a)";
  codegen::LoweredKernel L = lowerOrFail(parsePrimitive(Types, Body), "unit");
  std::string Text = codegen::printLoopKernel(L.kernel);
  EXPECT_NE(Text.find("for i1 in [0, n) parallel"), std::string::npos) << Text;
  expectParallelMatches(Types, Body, {{{"n", 1}}, {{"n", 3}}, {{"n", 2000}}},
                        1e-5, 1e-6);
}

TEST(ParallelKernel, SoftmaxOverTheLastAxisSymbolic) {
  expectParallelMatches(
      {"Tensor[(n, m), float32]"},
      "let %s = softmax(%p0, axis=1);\n"
      "multiply(%s, 3.0)",
      {{{"n", 1}, {"m", 1}}, {{"n", 5}, {"m", 7}}, {{"n", 700}, {"m", 129}}},
      1e-5, 1e-6);
}

TEST(ParallelKernel, SoftmaxOverTheLastAxisStatic) {
  expectParallelMatches({"Tensor[(512, 100), float64]"},
                        "let %s = softmax(%p0, axis=1);\nsqrt(%s)", {{}}, 1e-9,
                        1e-12);
}

TEST(ParallelKernel, WholeTensorReductionFeedsTheParallelLoop) {
  // The maximum is computed once, before the parallel loop, and reaches
  // every chunk through the closure.
  expectParallelMatches({"Tensor[(n), float32]"},
                        "let %m = max(%p0, axis=[0], keepdims=1);\n"
                        "let %e = subtract(%p0, %m);\n"
                        "exp(%e)",
                        {{{"n", 1}}, {{"n", 9}}, {{"n", 70001}}}, 1e-5, 1e-6);
}

TEST(ParallelKernel, IntegersAndBools) {
  expectParallelMatches({"Tensor[(n, 300), int64]", "Tensor[(300), int64]"},
                        "let %m = greater(%p0, %p1);\n"
                        "let %a = add(%p0, %p1);\n"
                        "let %w = where(%m, %a, %p1);\n"
                        "multiply(%w, 3i64)",
                        {{{"n", 2}}, {{"n", 1000}}});
}

TEST(ParallelKernel, SmallStaticKernelsStaySerial) {
  codegen::LoweredKernel L = lowerOrFail(
      parsePrimitive({"Tensor[(4, 8), float32]"}, "sigmoid(%p0)"), "small");
  EXPECT_FALSE(isParallel(L)) << codegen::printLoopKernel(L.kernel);
  // Unit axes are never the parallel loop.
  L = lowerOrFail(parsePrimitive({"Tensor[(1, 1), float32]"}, "sigmoid(%p0)"),
                  "unit");
  EXPECT_FALSE(isParallel(L)) << codegen::printLoopKernel(L.kernel);
}

TEST(ParallelKernel, ParallelCanBeTurnedOff) {
  ir::Module M = parsePrimitive({"Tensor[(n, m), float32]"}, "exp(%p0)");
  codegen::LoweringOptions Opts;
  Opts.parallel = false;
  codegen::LoweringResult R =
      codegen::lowerPrimitive(primitiveOf(M), "off", Opts);
  ASSERT_TRUE(R.ok()) << R.unsupported;
  EXPECT_FALSE(isParallel(*R.lowered));
}

TEST(ParallelKernel, ChunksAreVectorizedAndCallTheRuntime) {
  codegen::LoweredKernel L = lowerOrFail(
      parsePrimitive({"Tensor[(n), float32]"}, kChain), "par_chain");
  std::string Raw = codegen::emitLLVMIR(L.kernel, {}, /*Optimize=*/false);
  EXPECT_NE(Raw.find("define internal void @par_chain.par0(ptr"),
            std::string::npos)
      << Raw;
  EXPECT_NE(Raw.find("%parallel_for = load ptr"), std::string::npos) << Raw;
  std::string IR = codegen::emitLLVMIR(L.kernel);
  EXPECT_NE(IR.find(" x float>"), std::string::npos) << IR;
  EXPECT_EQ(IR.find("fast "), std::string::npos);
}

//===----------------------------------------------------------------------===//
// A runtime that records the calls and runs the chunks of Grain iterations
// serially, the last first: chunk boundaries and order must not matter.
//===----------------------------------------------------------------------===//

struct ParallelCall {
  int64_t n, grain, chunks;
};
std::vector<ParallelCall> Calls;

void reverseChunks(int64_t N, int64_t Grain, void *Closure,
                   RivetParallelBody Body) {
  int64_t G = std::max<int64_t>(Grain, 1), Chunks = 0;
  for (int64_t End = N; End > 0; ++Chunks) {
    int64_t Begin = (End - 1) / G * G;
    Body(Closure, Begin, End);
    End = Begin;
  }
  Calls.push_back({N, Grain, Chunks});
}

const RivetKernelRuntime kReverseChunks{reverseChunks};

/// The parallel loop of a lowered kernel (the first one, depth first).
const codegen::LoopStmtNode *
parallelLoop(const std::vector<codegen::LoopStmt> &Body) {
  for (const codegen::LoopStmt &S : Body)
    if (S->kind == codegen::LoopStmtKind::For) {
      if (S->loopKind == codegen::LoopKind::Parallel)
        return S.get();
      if (const codegen::LoopStmtNode *P = parallelLoop(S->body))
        return P;
    }
  return nullptr;
}

int64_t ceilDiv(int64_t A, int64_t B) { return (A + B - 1) / B; }

TEST(ParallelKernel, GrainMakesChunksOfEnoughWork) {
  std::vector<std::string> Types = {"Tensor[(n, m), float32]",
                                    "Tensor[(m), float32]"};
  std::string Body = "let %a = add(%p0, %p1);\nrelu(%a)";
  ir::Module M = parsePrimitive(Types, Body);
  codegen::LoweredKernel L = lowerOrFail(M, "grain_rows");
  const codegen::LoopStmtNode *P = parallelLoop(L.kernel.body);
  ASSERT_TRUE(P) << codegen::printLoopKernel(L.kernel);
  // One row: m times the (static) work of an element.
  ASSERT_EQ(P->body.size(), 1u);
  codegen::LoopExpr PerElement = codegen::loopWork(P->body[0]->body);
  ASSERT_TRUE(PerElement->isConst());
  ASSERT_GT(PerElement->intValue, 1);
  RivetKernelFn Fn = testJit().compile(L.kernel);
  const RivetKernelRuntime *Saved = testRuntime();
  testRuntime() = &kReverseChunks;
  for (auto [N, Mv] : std::vector<std::pair<int64_t, int64_t>>{
           {1000, 40}, {37, 5000}, {3, 1}}) {
    Calls.clear();
    expectRunMatchesInterpreter(M, L, Fn, {{"n", N}, {"m", Mv}}, 7);
    ASSERT_EQ(Calls.size(), 1u);
    EXPECT_EQ(Calls[0].n, N);
    EXPECT_EQ(Calls[0].grain,
              ceilDiv(codegen::kParallelChunkWork, Mv * PerElement->intValue));
    EXPECT_EQ(Calls[0].chunks, ceilDiv(N, Calls[0].grain));
  }
  testRuntime() = Saved;
}

TEST(ParallelKernel, StaticGrainOfARank1Kernel) {
  ir::Module M = parsePrimitive({"Tensor[(100003), float32]"}, kChain);
  codegen::LoweredKernel L = lowerOrFail(M, "grain_flat");
  const codegen::LoopStmtNode *P = parallelLoop(L.kernel.body);
  ASSERT_TRUE(P);
  int64_t Work = codegen::loopWork(P->body)->intValue;
  RivetKernelFn Fn = testJit().compile(L.kernel);
  const RivetKernelRuntime *Saved = testRuntime();
  testRuntime() = &kReverseChunks;
  Calls.clear();
  expectRunMatchesInterpreter(M, L, Fn, {}, 3);
  testRuntime() = Saved;
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[0].n, 100003);
  EXPECT_EQ(Calls[0].grain, ceilDiv(codegen::kParallelChunkWork, Work));
  EXPECT_GT(Calls[0].chunks, 2);
}

} // namespace
