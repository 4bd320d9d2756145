//===- anchor_selection_test.cc - Anchor + tail to one fused kernel -------===//
//
// Parses a @main whose body calls one Primitive function literal (as FuseOps
// writes them), selects the anchor kernel, and for accepted groups runs the
// kernel on random inputs against the interpreter on the original function.
//
//===----------------------------------------------------------------------===//
#include "vm/compiler/AnchorSelection.h"

#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/DnnlConfig.h"
#include "kernels/Kernel.h"
#include "kernels/Random.h"

#include <gtest/gtest.h>

namespace rivet::vm::compiler {
namespace {

using namespace ir;

struct Parsed {
  Module M;
  Expr Fn;                  // the Primitive function literal
  std::vector<Expr> Actual; // its call's arguments (@main's parameters)
};

Parsed parseMain(const std::string &Text) {
  Parsed P{parseModule(Text), nullptr, {}};
  inferTypes(P.M);
  const auto *Main = P.M.function("main")->as<FunctionNode>();
  const auto *Call = Main->body->as<CallNode>();
  EXPECT_TRUE(Call) << "@main's body must be the primitive call";
  if (Call) {
    P.Fn = Call->callee;
    P.Actual = Call->args;
  }
  return P;
}

std::optional<AnchorCall> select(const std::string &Text) {
  return selectAnchor(parseMain(Text).Fn);
}

/// The selected kernel on random inputs equals the interpreter on @main.
void expectKernelMatchesInterpreter(const std::string &Text) {
  Parsed P = parseMain(Text);
  std::optional<AnchorCall> A = selectAnchor(P.Fn);
  ASSERT_TRUE(A);
  const auto &Main = *P.M.function("main")->as<FunctionNode>();
  const auto &Fn = *P.Fn->as<FunctionNode>();
  std::vector<Value> MainArgs;
  std::vector<Tensor> ParamValues;
  for (size_t I = 0; I < Main.params.size(); ++I) {
    const auto *T = Main.params[I]->checkedType->as<TensorTypeNode>();
    Shape S;
    for (const Dim &D : *T->shape)
      S.push_back(D.value);
    ParamValues.push_back(randomTensor(S, T->dtype, 100 + I));
    MainArgs.push_back(ParamValues.back());
  }
  // Kernel inputs: a parameter of the literal is the @main parameter passed
  // at its position; a constant is its value.
  std::vector<Tensor> In;
  for (const Expr &E : A->args) {
    if (const auto *C = E->as<ConstantNode>()) {
      In.push_back(C->value);
      continue;
    }
    size_t I = 0;
    while (I < Fn.params.size() && Fn.params[I].get() != E.get())
      ++I;
    ASSERT_LT(I, Fn.params.size()) << "argument is neither param nor const";
    const Expr &Actual = P.Actual[I];
    if (const auto *C = Actual->as<ConstantNode>()) {
      In.push_back(C->value);
      continue;
    }
    size_t J = 0;
    while (J < Main.params.size() && Main.params[J].get() != Actual.get())
      ++J;
    ASSERT_LT(J, Main.params.size());
    In.push_back(ParamValues[J]);
  }
  Tensor Expected;
  {
    DnnlDisabledScope Off;
    Interpreter Interp(P.M);
    Expected = Interp.call("main", MainArgs).tensor();
  }
  std::vector<Tensor> Got =
      invokeKernel(KernelRegistry::global().get(A->kernel), In, A->attrs);
  ASSERT_EQ(Got.size(), 1u);
  EXPECT_EQ(Got[0].typeString(), Expected.typeString());
  EXPECT_TRUE(allClose(Got[0], Expected, 1e-4, 1e-4));
}

const char *ConvAddRelu = R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32], %b: Tensor[(1, 4, 1, 1), float32]) {
  fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32], %p2: Tensor[(1, 4, 1, 1), float32], Primitive=1) {
    let %c = conv(%p0, %p1, pads=[1, 1, 1, 1]);
    let %a = add(%c, %p2);
    relu(%a)
  }(%x, %w, %b)
}
)";

TEST(AnchorSelection, ConvAddRelu) {
  Parsed P = parseMain(ConvAddRelu);
  std::optional<AnchorCall> A = selectAnchor(P.Fn);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kernel, "dnnl.conv_fused");
  const auto &Fn = *P.Fn->as<FunctionNode>();
  ASSERT_EQ(A->args.size(), 3u);
  for (size_t I = 0; I < 3; ++I)
    EXPECT_EQ(A->args[I].get(), Fn.params[I].get());
  EXPECT_EQ(A->attrs.getStrings("post_ops"),
            (std::vector<std::string>{"add", "relu"}));
  EXPECT_EQ(A->attrs.getInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_FALSE(A->attrs.has("weights_constant"));
  expectKernelMatchesInterpreter(ConvAddRelu);
}

// AlterOpLayout's blocked conv with its per-channel add (CHW8c) and a
// residual of the blocked output's shape.
const char *BlockedConvAddAddRelu = R"(
def @main(%x: Tensor[(1, 2, 6, 6, 8), float32], %w: Tensor[(3, 2, 3, 3, 8, 8), float32], %b: Tensor[(3, 1, 1, 8), float32], %r: Tensor[(1, 3, 6, 6, 8), float32]) {
  fn (%p0: Tensor[(1, 2, 6, 6, 8), float32], %p1: Tensor[(3, 2, 3, 3, 8, 8), float32], %p2: Tensor[(3, 1, 1, 8), float32], %p3: Tensor[(1, 3, 6, 6, 8), float32], Primitive=1) {
    let %c = conv2d_nchwc(%p0, %p1, pads=[1, 1, 1, 1], data_layout="NCHW8c", kernel_layout="OIHW8i8o", out_layout="NCHW8c");
    let %a = add(%c, %p2);
    let %s = add(%a, %p3);
    relu(%s)
  }(%x, %w, %b, %r)
}
)";

TEST(AnchorSelection, BlockedConvTail) {
  Parsed P = parseMain(BlockedConvAddAddRelu);
  std::optional<AnchorCall> A = selectAnchor(P.Fn);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kernel, "dnnl.conv2d_nchwc_fused");
  EXPECT_EQ(A->args.size(), 4u);
  EXPECT_EQ(A->attrs.getString("kernel_layout"), "OIHW8i8o");
  EXPECT_EQ(A->attrs.getStrings("post_ops"),
            (std::vector<std::string>{"add", "add", "relu"}));
  expectKernelMatchesInterpreter(BlockedConvAddAddRelu);
}

TEST(AnchorSelection, WeightBoundToConstantAtCallSite) {
  std::string Values;
  for (int I = 0; I < 4 * 3 * 3 * 3; ++I)
    Values += fmt::format("{}{:.2f}", I ? ", " : "", (I % 7) * 0.25 - 0.75);
  std::string Text = fmt::format(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %b: Tensor[(1, 4, 1, 1), float32]) {{
  fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32], %p2: Tensor[(1, 4, 1, 1), float32], Primitive=1) {{
    let %c = conv(%p0, %p1, pads=[1, 1, 1, 1]);
    let %a = add(%c, %p2);
    relu(%a)
  }}(%x, const[(4, 3, 3, 3), float32]([{}]), %b)
}}
)",
                                 Values);
  Parsed P = parseMain(Text);
  std::optional<AnchorCall> Without = selectAnchor(P.Fn);
  ASSERT_TRUE(Without);
  EXPECT_FALSE(Without->attrs.has("weights_constant"));
  std::optional<AnchorCall> With = selectAnchor(P.Fn, P.Actual);
  ASSERT_TRUE(With);
  EXPECT_EQ(With->attrs.getInt("weights_constant"), 1);
  // An activation bound to a constant does not make the weight constant.
  std::vector<Expr> Swapped = P.Actual;
  std::swap(Swapped[0], Swapped[1]);
  EXPECT_FALSE(selectAnchor(P.Fn, Swapped)->attrs.has("weights_constant"));
  expectKernelMatchesInterpreter(Text);
}

TEST(AnchorSelection, ConvBiasConstantWeightsClip) {
  const char *Text = R"(
def @main(%x: Tensor[(1, 2, 5, 5), float32], %s: Tensor[(2, 1, 1), float32]) {
  fn (%p0: Tensor[(1, 2, 5, 5), float32], %p1: Tensor[(2, 1, 1), float32], Primitive=1) {
    let %c = conv(%p0, const[(2, 1, 3, 3), float32]([1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -3, -4, -5, -6, -7, -8, -9]), const[(2,), float32]([0.5, -0.5]), group=2, strides=[2, 2]);
    let %m = multiply(%p1, %c);
    clip(%m, min=0.0, max=6.0)
  }(%x, %s)
}
)";
  std::optional<AnchorCall> A = select(Text);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kernel, "dnnl.conv_fused");
  ASSERT_EQ(A->args.size(), 4u); // x, w, b, multiplier
  EXPECT_TRUE(A->args[1]->as<ConstantNode>());
  EXPECT_EQ(A->attrs.getInt("weights_constant"), 1);
  EXPECT_EQ(A->attrs.getStrings("post_ops"),
            (std::vector<std::string>{"multiply", "clip"}));
  EXPECT_EQ(A->attrs.getFloats("post_op_hi")[1], 6.0);
  expectKernelMatchesInterpreter(Text);
}

TEST(AnchorSelection, MatMulAndDenseTails) {
  const char *MatMul = R"(
def @main(%a: Tensor[(2, 64, 32), float32], %b: Tensor[(32, 32), float32], %c: Tensor[(32,), float32]) {
  fn (%p0: Tensor[(2, 64, 32), float32], %p1: Tensor[(32, 32), float32], %p2: Tensor[(32,), float32], Primitive=1) {
    let %m = matmul(%p0, %p1);
    let %s = add(%p2, %m);
    let %t = tanh(%s);
    sigmoid(%t)
  }(%a, %b, %c)
}
)";
  std::optional<AnchorCall> A = select(MatMul);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kernel, "dnnl.matmul_fused");
  EXPECT_EQ(A->attrs.getStrings("post_ops"),
            (std::vector<std::string>{"add", "tanh", "sigmoid"}));
  expectKernelMatchesInterpreter(MatMul);

  const char *Dense = R"(
def @main(%x: Tensor[(64, 32), float32], %w: Tensor[(32, 32), float32]) {
  fn (%p0: Tensor[(64, 32), float32], %p1: Tensor[(32, 32), float32], Primitive=1) {
    let %d = dense(%p0, %p1);
    relu(%d)
  }(%x, %w)
}
)";
  A = select(Dense);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->kernel, "dnnl.dense_fused");
  expectKernelMatchesInterpreter(Dense);
}

TEST(AnchorSelection, AnchorAlone) {
  const char *Text = R"(
def @main(%a: Tensor[(64, 32), float32], %b: Tensor[(32, 32), float32]) {
  fn (%p0: Tensor[(64, 32), float32], %p1: Tensor[(32, 32), float32], Primitive=1) {
    matmul(%p0, %p1)
  }(%a, %b)
}
)";
  std::optional<AnchorCall> A = select(Text);
  ASSERT_TRUE(A);
  EXPECT_TRUE(A->attrs.getStrings("post_ops").empty());
  expectKernelMatchesInterpreter(Text);
}

TEST(AnchorSelection, SmallStaticMatMulsAreLeftToCodegen) {
  // 3x4 by 4x5: less work than a oneDNN call costs.
  EXPECT_FALSE(select(R"(
def @main(%a: Tensor[(3, 4), float32], %b: Tensor[(4, 5), float32]) {
  fn (%p0: Tensor[(3, 4), float32], %p1: Tensor[(4, 5), float32], Primitive=1) {
    matmul(%p0, %p1)
  }(%a, %b)
}
)"));
  // The same with a dynamic batch: rows this small stay generated too.
  EXPECT_FALSE(select(R"(
def @main(%a: Tensor[(n, 3, 4), float32], %b: Tensor[(4, 5), float32]) {
  fn (%p0: Tensor[(n, 3, 4), float32], %p1: Tensor[(4, 5), float32], Primitive=1) {
    matmul(%p0, %p1)
  }(%a, %b)
}
)"));
  // Rows of 64x64 multiply-adds each: oneDNN, whatever the batch.
  EXPECT_TRUE(select(R"(
def @main(%a: Tensor[(n, 64), float32], %b: Tensor[(64, 64), float32]) {
  fn (%p0: Tensor[(n, 64), float32], %p1: Tensor[(64, 64), float32], Primitive=1) {
    matmul(%p0, %p1)
  }(%a, %b)
}
)"));
}

TEST(AnchorSelection, RejectsWhatOneKernelCannotDo) {
  // A tail operator that is not a post-op.
  EXPECT_FALSE(select(R"(
def @main(%a: Tensor[(64, 32), float32], %b: Tensor[(32, 32), float32]) {
  fn (%p0: Tensor[(64, 32), float32], %p1: Tensor[(32, 32), float32], Primitive=1) {
    let %m = matmul(%p0, %p1);
    exp(%m)
  }(%a, %b)
}
)"));
  // An operand computed inside the group.
  EXPECT_FALSE(select(R"(
def @main(%a: Tensor[(64, 32), float32], %b: Tensor[(32, 32), float32], %c: Tensor[(32,), float32]) {
  fn (%p0: Tensor[(64, 32), float32], %p1: Tensor[(32, 32), float32], %p2: Tensor[(32,), float32], Primitive=1) {
    let %m = matmul(%p0, %p1);
    let %r = relu(%p2);
    add(%m, %r)
  }(%a, %b, %c)
}
)"));
  // The anchor's value used twice.
  EXPECT_FALSE(select(R"(
def @main(%a: Tensor[(64, 32), float32], %b: Tensor[(32, 32), float32]) {
  fn (%p0: Tensor[(64, 32), float32], %p1: Tensor[(32, 32), float32], Primitive=1) {
    let %m = matmul(%p0, %p1);
    multiply(%m, %m)
  }(%a, %b)
}
)"));
  // An operand that would grow the output.
  EXPECT_FALSE(select(R"(
def @main(%a: Tensor[(64, 32), float32], %b: Tensor[(32, 32), float32], %c: Tensor[(2, 64, 32), float32]) {
  fn (%p0: Tensor[(64, 32), float32], %p1: Tensor[(32, 32), float32], %p2: Tensor[(2, 64, 32), float32], Primitive=1) {
    let %m = matmul(%p0, %p1);
    add(%m, %p2)
  }(%a, %b, %c)
}
)"));
  // Not float32.
  EXPECT_FALSE(select(R"(
def @main(%a: Tensor[(64, 32), float64], %b: Tensor[(32, 32), float64]) {
  fn (%p0: Tensor[(64, 32), float64], %p1: Tensor[(32, 32), float64], Primitive=1) {
    let %m = matmul(%p0, %p1);
    relu(%m)
  }(%a, %b)
}
)"));
  // No anchor: an elementwise group.
  EXPECT_FALSE(select(R"(
def @main(%a: Tensor[(64, 32), float32], %b: Tensor[(64, 32), float32]) {
  fn (%p0: Tensor[(64, 32), float32], %p1: Tensor[(64, 32), float32], Primitive=1) {
    let %s = add(%p0, %p1);
    relu(%s)
  }(%a, %b)
}
)"));
  // Not a Primitive function.
  EXPECT_FALSE(select(R"(
def @main(%a: Tensor[(64, 32), float32], %b: Tensor[(32, 32), float32]) {
  fn (%p0: Tensor[(64, 32), float32], %p1: Tensor[(32, 32), float32]) {
    matmul(%p0, %p1)
  }(%a, %b)
}
)"));
}

} // namespace
} // namespace rivet::vm::compiler
