//===- fuse_conv_chains_test.cc - A 1x1 conv call and the depthwise one ---===//
//
// FuseConvChains in the VM compiler: a blocked 1x1 conv whose result only a
// depthwise conv reads becomes one dnnl.conv2d_nchwc_pw_dw call, and the VM
// then computes what the interpreter does; a 1x1 result read elsewhere
// too, a second conv that is not depthwise, and --disable-pass keep the
// two calls.
//
//===----------------------------------------------------------------------===//
#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "kernels/DnnlConfig.h"
#include "kernels/Random.h"
#include "kernels/cpu/ConvChain.h"
#include "kernels/cpu/PointwiseDepthwiseConv.h"
#include "vm/Object.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"

#include <gtest/gtest.h>

#include <set>

using namespace rivet;
using namespace rivet::vm;

namespace {

/// An inverted residual block's first half on NCHW16c, as AlterOpLayout
/// leaves it: 1x1 conv + bias + relu6, then a 3x3 depthwise conv (stride
/// Stride) + bias + relu6; Tail is the result (it may read %e as well).
std::string block(const std::string &Tail, int Stride = 1,
                  const std::string &Second = "dw") {
  std::string Conv2 =
      Second == "dw"
          ? "group=32, data_layout=\"NCHW16c\", kernel_layout=\"OIHW1i16o\""
          : "data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\"";
  std::string W2 = Second == "dw" ? "Tensor[(2, 1, 3, 3, 1, 16), float32]"
                                  : "Tensor[(2, 2, 3, 3, 16, 16), float32]";
  return R"(
def @main(%x: Tensor[(1, 1, 13, 11, 16), float32], %w1: Tensor[(2, 1, 1, 1, 16, 16), float32], %b1: Tensor[(2, 1, 1, 16), float32], %w2: )" +
         W2 + R"(, %b2: Tensor[(2, 1, 1, 16), float32]) {
  let %c = conv2d_nchwc(%x, %w1, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  let %e = clip(add(%c, %b1), min=0.0, max=6.0);
  let %d = conv2d_nchwc(%e, %w2, pads=[1, 1, 1, 1], strides=[)" +
         std::to_string(Stride) + ", " + std::to_string(Stride) + "], " +
         Conv2 + R"(, out_layout="NCHW16c");
  let %y = clip(add(%d, %b2), min=0.0, max=6.0);
  )" + Tail +
         R"(
}
)";
}

size_t chainCalls(const Executable &E) {
  size_t N = 0;
  for (const VMFunction &F : E.functions)
    for (const Instruction &I : F.code)
      N += I.op == Opcode::InvokeKernel &&
           E.kernels[I.c].op == kPointwiseDepthwiseOp;
  return N;
}

/// Compiles Text at -O3 (builtin kernels for what is not an anchor), runs
/// it on random inputs and compares every output with the interpreter's;
/// returns the executable's chain calls.
size_t compileAndCompare(const std::string &Text,
                         std::set<std::string> Disabled = {}) {
  ir::Module M = ir::parseModule(Text);
  CompileOptions Opts;
  Opts.codegen.mode = NativeCode::Off;
  Opts.passes.disabled = std::move(Disabled);
  std::shared_ptr<Executable> Exe = compile(M, Opts);
  std::vector<ir::Value> Args;
  std::vector<ObjectRef> VmArgs;
  std::vector<Shape> Shapes = {{1, 1, 13, 11, 16},
                               {2, 1, 1, 1, 16, 16},
                               {2, 1, 1, 16},
                               Text.find("OIHW1i16o") != std::string::npos
                                   ? Shape{2, 1, 3, 3, 1, 16}
                                   : Shape{2, 2, 3, 3, 16, 16},
                               {2, 1, 1, 16}};
  for (size_t I = 0; I < Shapes.size(); ++I) {
    Tensor T = randomTensor(Shapes[I], DType::Float32, 300 + I);
    Args.push_back(T);
    VmArgs.push_back(makeTensor(T));
  }
  ir::Value Want;
  {
    DnnlDisabledScope Off;
    Want = ir::Interpreter(M).call("main", Args);
  }
  VirtualMachine VM(Exe);
  ObjectRef Got = VM.invoke("main", VmArgs);
  std::vector<Tensor> W, G;
  if (Want.isTensor()) {
    W.push_back(Want.tensor());
    G.push_back(asTensor(Got, "result"));
  } else {
    for (const ir::Value &F : Want.fields())
      W.push_back(F.tensor());
    const auto *Tuple = static_cast<const ADTObj *>(Got.get());
    EXPECT_EQ(Got->kind, ObjectKind::ADT);
    for (const ObjectRef &F : Tuple->fields)
      G.push_back(asTensor(F, "field"));
  }
  EXPECT_EQ(W.size(), G.size());
  for (size_t I = 0; I < W.size() && I < G.size(); ++I)
    EXPECT_TRUE(allClose(G[I], W[I], 1e-4, 1e-4)) << "output " << I;
  return chainCalls(*Exe);
}

/// The images here are small: the pass and the kernel take them only when
/// told to (PointwiseDepthwiseChoice::Always), so that what keeps two calls
/// in the tests below is the pairs' structure, not their size.
struct AlwaysOnePass {
  PointwiseDepthwiseChoice Saved = pointwiseDepthwiseChoice();
  AlwaysOnePass() {
    setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice::Always);
  }
  ~AlwaysOnePass() { setPointwiseDepthwiseChoice(Saved); }
};

bool fusedKernelRuns() {
  return dnnlEnabled() && __builtin_cpu_supports("avx512f");
}

TEST(FuseConvChains, PointwiseThenDepthwiseBecomeOneCall) {
  if (!dnnlEnabled())
    GTEST_SKIP() << "oneDNN is disabled: no anchor calls to fuse";
  AlwaysOnePass Scope;
  for (int Stride : {1, 2}) {
    int64_t Before = pointwiseDepthwiseCalls();
    EXPECT_EQ(compileAndCompare(block("%y", Stride)), 1u) << Stride;
    EXPECT_EQ(pointwiseDepthwiseCalls(), Before + (fusedKernelRuns() ? 1 : 0));
  }
}

TEST(FuseConvChains, KeepsTheTwoCallsWhereTheyMustStay) {
  if (!dnnlEnabled())
    GTEST_SKIP() << "oneDNN is disabled: no anchor calls to fuse";
  AlwaysOnePass Scope;
  // The 1x1 conv's result is read by the depthwise conv and returned.
  EXPECT_EQ(compileAndCompare(block("(%y, %e)")), 0u);
  // The second conv is not depthwise.
  EXPECT_EQ(compileAndCompare(block("%y", 1, "dense")), 0u);
  // The pass is disabled.
  EXPECT_EQ(compileAndCompare(block("%y"), {"FuseConvChains"}), 0u);
  // By default (Auto) pairs this small stay two calls.
  setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice::Auto);
  EXPECT_EQ(compileAndCompare(block("%y")), 0u);
}

} // namespace
