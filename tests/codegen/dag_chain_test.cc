// Fused chains whose operators read their producer more than once (relu's
// select reads its argument twice, SiLU's x * sigmoid(x) reads x in both
// factors) give loop-IR expressions that share subexpressions. Lowering,
// the kernel passes, printing and LLVM emission treat them as DAGs, so a
// chain's kernel grows linearly with its length: as a tree it doubled per
// op (a 24-op chain took seconds and gigabytes, a 256-op one never ended).
// Each kernel here is one fused group (FuseOps fuses up to 256 calls) and
// agrees with the reference interpreter.

#include "codegen/CodegenTestUtil.h"

using namespace rivet;
using namespace rivet::test;

namespace {

/// The expressions of Body's statements.
void collectRoots(const std::vector<codegen::LoopStmt> &Body,
                  std::vector<codegen::LoopExpr> &Roots) {
  for (const codegen::LoopStmt &S : Body) {
    if (S->extent)
      Roots.push_back(S->extent);
    if (S->value)
      Roots.push_back(S->value);
    Roots.insert(Roots.end(), S->indices.begin(), S->indices.end());
    collectRoots(S->body, Roots);
  }
}

/// The distinct loop-IR expression nodes (by pointer) of K.
size_t kernelNodes(const codegen::LoopKernel &K) {
  std::vector<codegen::LoopExpr> Roots;
  collectRoots(K.body, Roots);
  return codegen::countNodes(Roots);
}

/// let %v0 = Layer(%p0); let %v1 = Layer(%v0); ... %v{N-1}, where Layer
/// maps the name of its argument to the calls of one layer.
std::string
chain(int N,
      const std::function<std::string(const std::string &, int)> &Layer) {
  std::string Body, Prev = "%p0";
  for (int I = 0; I < N; ++I) {
    Body += Layer(Prev, I);
    Prev = fmt::format("%v{}", I);
  }
  return Body + Prev;
}

std::string unaryChain(const std::string &Op, int N) {
  return chain(N, [&](const std::string &X, int I) {
    return fmt::format("let %v{} = {}({});\n", I, Op, X);
  });
}

std::string siluChain(int N) {
  return chain(N, [](const std::string &X, int I) {
    return fmt::format("let %s{0} = sigmoid({1});\nlet %v{0} = multiply({1}, "
                       "%s{0});\n",
                       I, X);
  });
}

/// Lowers Body over one float32 parameter, checks that the kernel has at
/// most NodesPerOp nodes per operator call, prints linearly, and that the
/// compiled kernel agrees with the interpreter.
void expectLinearKernel(const std::string &Body, size_t Ops,
                        size_t NodesPerOp) {
  std::vector<std::string> Types{"Tensor[(n, 33), float32]"};
  ir::Module M = parsePrimitive(Types, Body);
  codegen::LoweredKernel L = lowerOrFail(M, uniqueKernelName("chain"));
  ASSERT_FALSE(L.kernel.name.empty());
  size_t Nodes = kernelNodes(L.kernel);
  testing::Test::RecordProperty("loop_ir_nodes", (int)Nodes);
  EXPECT_LE(Nodes, NodesPerOp * Ops) << Nodes << " nodes for " << Ops << " ops";
  // The text names the shared subexpressions instead of repeating them.
  std::string Text = codegen::printLoopKernel(L.kernel);
  EXPECT_LE(Text.size(), 120 * Ops) << Text.substr(0, 4000);
  RivetKernelFn Fn = testJit().compile(L.kernel);
  uint64_t Seed = 7;
  for (int64_t N : {1, 5, 16})
    expectRunMatchesInterpreter(M, L, Fn, {{"n", N}}, Seed++, 1e-4, 1e-5);
}

TEST(CodegenDag, ReluChainOf256IsLinear) {
  expectLinearKernel(unaryChain("relu", 256), 256, 6);
}

TEST(CodegenDag, SigmoidChainOf64IsLinear) {
  expectLinearKernel(unaryChain("sigmoid", 64), 64, 12);
}

TEST(CodegenDag, SiluChainOf64LayersIsLinear) {
  // 128 calls: x is read by the sigmoid and by the product.
  expectLinearKernel(siluChain(64), 128, 8);
}

TEST(CodegenDag, SharedSubexpressionsAreComparedOnce) {
  // Two equal chains built apart: structural equality compares each pair
  // of shared nodes once.
  auto Build = [] {
    codegen::LoopExpr X =
        codegen::load(0, DType::Float32, {codegen::loopVar(0, "i0")});
    for (int I = 0; I < 200; ++I)
      X = codegen::binary(codegen::LoopOp::Add, X, X);
    return X;
  };
  codegen::LoopExpr A = Build(), B = Build();
  EXPECT_TRUE(codegen::sameExpr(A, B));
  EXPECT_EQ(codegen::countNodes({A}), 202u);
  EXPECT_LE(codegen::printLoopExpr(A).size(), 200u * 40);
}

} // namespace
