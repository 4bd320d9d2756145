//===- split_slices_test.cc - split fuses as strided slices ---------------===//
//
// CanonicalizeOps rewrites a split of static pieces into strided_slice calls
// (which fuse with their consumers, unlike the tuple-producing split). The
// programs here run on the reference interpreter (unoptimized) and on the
// VM at -O0..-O3 with the same results; a split whose pieces are not known
// until run time (and so is not rewritten) fails with the kernel's error on
// every executor; and after the pipeline the slices sit in their
// consumers' fused groups, compiled to one native kernel each.
//
//===----------------------------------------------------------------------===//
#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "ir/Visitor.h"
#include "ir/transforms/Pass.h"
#include "kernels/Error.h"
#include "kernels/Random.h"
#include "support/Executors.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"

#include <gtest/gtest.h>

#include <map>

using namespace rivet;
using namespace rivet::ir;

namespace {

std::vector<Tensor> onInterpreter(const Module &M,
                                  const std::vector<Tensor> &In) {
  return rivet::testing::runOnInterpreter(M, In);
}

std::vector<Tensor> onVM(const Module &M, int Level,
                         const std::vector<Tensor> &In) {
  return rivet::testing::runOnVM(M, Level, vm::NativeCode::Jit, In);
}

template <typename Fn> std::string errorOf(Fn F) {
  try {
    F();
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

Module typed(const std::string &Text) {
  Module M = parseModule(Text);
  inferTypes(M);
  return M;
}

// Pieces of every kind: equal sections, NumPy split points (negative,
// clamped, out of order: an empty piece), a computed input (bound before
// the slices), a negative axis, the whole tuple used as a value, a split
// inside a branch, and one piece left unused.
const char *const Program = R"(
def @main(%x: Tensor[(4, 6), float32], %c: Tensor[(), bool]) {
  let %a = split(%x, axis=1, sections=3);
  let %b = split(%x, axis=-1, indices=[-4, 9, 1]);
  let %d = split(add(%x, 1f32), axis=0, sections=2);
  let %e = if (%c) {
    let %p = split(multiply(%x, %x), axis=0, indices=[1]);
    add(%p.1, 2f32)
  } else {
    %d.1
  };
  let %whole = split(%x, axis=0, sections=4);
  (sigmoid(%a.0), tanh(%a.2), %b.0, %b.1, %b.2, exp(%b.3), relu(%d.0), %e,
   %whole)
}
)";

TEST(SplitSlices, InterpreterAndVMAgreeAtEveryLevel) {
  Module M = typed(Program);
  for (bool C : {true, false}) {
    std::vector<Tensor> In = {randomTensor({4, 6}, DType::Float32, 3),
                              Tensor::scalar<bool>(C)};
    std::vector<Tensor> Want = onInterpreter(M, In);
    ASSERT_EQ(Want.size(), 12u);
    EXPECT_EQ(Want[4].shape(), (Shape{4, 0})); // the empty piece
    for (int Level = 0; Level <= 3; ++Level) {
      SCOPED_TRACE(::testing::Message() << "-O" << Level << ", c=" << C);
      std::vector<Tensor> Got = onVM(M, Level, In);
      ASSERT_EQ(Got.size(), Want.size());
      for (size_t I = 0; I < Want.size(); ++I) {
        EXPECT_EQ(Got[I].shape(), Want[I].shape()) << "output " << I;
        EXPECT_TRUE(allClose(Got[I], Want[I], 1e-6, 1e-6)) << "output " << I;
      }
    }
  }
}

TEST(SplitSlices, UnevenSplitKnownOnlyAtRunTimeFailsAlikeEverywhere) {
  // The extent is unknown to the compiler: the split stays and its kernel
  // reports the uneven sections, on every executor.
  Module M = typed(R"(
def @main(%x: Tensor[(?, 2), float32]) {
  let %s = split(%x, axis=0, sections=3);
  relu(%s.0)
}
)");
  std::vector<Tensor> In = {randomTensor({4, 2}, DType::Float32, 1)};
  const std::string Want =
      "split: axis 0 of extent 4 cannot be split into 3 equal sections";
  std::string E = errorOf([&] { onInterpreter(M, In); });
  EXPECT_NE(E.find(Want), std::string::npos) << E;
  for (int Level = 0; Level <= 3; ++Level) {
    E = errorOf([&] { onVM(M, Level, In); });
    EXPECT_NE(E.find(Want), std::string::npos) << "-O" << Level << ": " << E;
  }
  // The same program on an extent the sections divide runs.
  In = {randomTensor({6, 2}, DType::Float32, 1)};
  std::vector<Tensor> Ref = onInterpreter(M, In);
  for (int Level = 0; Level <= 3; ++Level)
    EXPECT_TRUE(allClose(onVM(M, Level, In)[0], Ref[0], 0, 0));
}

TEST(SplitSlices, UnevenStaticSplitIsATypeError) {
  // Statically known to be uneven: rejected before any executor runs it,
  // as before the rewrite.
  Module M = parseModule(R"(
def @main(%x: Tensor[(4, 2), float32]) { split(%x, axis=0, sections=3).0 }
)");
  std::string E = errorOf([&] { inferTypes(M); });
  EXPECT_NE(E.find("3 sections do not divide dimension 0"), std::string::npos)
      << E;
}

/// The operators each fused (Primitive) function calls, and those called
/// outside any.
struct Groups : ExprVisitor {
  std::vector<std::multiset<std::string>> Fused;
  std::multiset<std::string> Outside;
  std::multiset<std::string> *Cur = &Outside;
  void visitFunction(const FunctionNode &N) override {
    if (!N.attrs.has(kPrimitiveAttr))
      return ExprVisitor::visitFunction(N);
    Fused.emplace_back();
    std::multiset<std::string> *Saved = Cur;
    Cur = &Fused.back();
    ExprVisitor::visitFunction(N);
    Cur = Saved;
  }
  void visitCall(const CallNode &N) override {
    if (const auto *O = N.callee->as<OpNode>())
      Cur->insert(O->name());
    ExprVisitor::visitCall(N);
  }
};

// A Tree-LSTM cell's gates: one split, each piece into its nonlinearity.
const char *const Gates = R"(
def @main(%x: Tensor[(1, 8), float32], %w: Tensor[(8, 24), float32]) {
  let %g = split(matmul(%x, %w), axis=1, sections=3);
  (sigmoid(%g.0), tanh(%g.1), relu(%g.2))
}
)";

TEST(SplitSlices, SlicesFuseWithTheirConsumers) {
  Module M = typed(Gates);
  PassContext Ctx;
  Ctx.optLevel = 3;
  optimize(M, Ctx);
  Groups G;
  G.visit(M.function("main"));
  EXPECT_EQ(G.Outside.count("split") + G.Outside.count("strided_slice"), 0u);
  size_t Sliced = 0;
  for (const auto &Ops : G.Fused) {
    EXPECT_EQ(Ops.count("split"), 0u);
    if (Ops.count("strided_slice")) {
      ++Sliced;
      EXPECT_EQ(Ops.size(), 2u) << "a slice with its one consumer";
    }
  }
  EXPECT_EQ(Sliced, 3u);

  // Compiled: each group one generated kernel, no split or slice left to a
  // builtin kernel.
  vm::CompileOptions O;
  O.codegen.mode = vm::NativeCode::Jit;
  std::shared_ptr<vm::Executable> Exe = vm::compile(typed(Gates), O);
  std::map<std::string, int> Builtins;
  int Native = 0;
  for (const vm::KernelEntry &K : Exe->kernels) {
    if (K.kind == vm::KernelEntry::Kind::Native)
      ++Native;
    else
      ++Builtins[K.op];
  }
  EXPECT_EQ(Builtins.count("split"), 0u);
  EXPECT_EQ(Builtins.count("strided_slice"), 0u);
  EXPECT_GE(Native, 3);
}

} // namespace
