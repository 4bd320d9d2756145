//===- resolve_shape_values_test.cc - ResolveShapeValues ------------------===//
#include "support/PassTest.h"

#include "ir/Expr.h"
#include "ir/Type.h"
#include "kernels/Error.h"
#include "kernels/Kernel.h"

using namespace rivet;

namespace {

TEST(ResolveShapeValues, TorchsViewsKeepTheirExtents) {
  ir::Module After = test::expectTransformFiles(
      {"ResolveShapeValues"}, "ResolveShapeValues", "torch_views");
  // The residual add's operands now have one type, and so has its result.
  const auto &Fn = *After.function("main")->as<ir::FunctionNode>();
  const auto *Ret = Fn.body->checkedType->as<ir::TupleTypeNode>();
  ASSERT_NE(Ret, nullptr);
  const auto *Y = Ret->fields[0]->as<ir::TensorTypeNode>();
  ASSERT_NE(Y, nullptr);
  EXPECT_EQ(*Y->shape, (std::vector<ir::Dim>{ir::Dim::symbol("seq"),
                                             ir::Dim::symbol("batch"),
                                             ir::Dim::constant(64)}));
}

TEST(ResolveShapeValues, ARecordedExtentIsCheckedAtRunTime) {
  // A proof the shape contradicts (a compiler bug) stops the call with an
  // error naming the extent, not a tensor of another shape.
  Attrs A;
  A.set("dims", std::vector<std::string>{"2", "?"});
  std::vector<Tensor> In = {Tensor::zeros({3, 4}, DType::Float32),
                            Tensor::fromVector<int64_t>({4, 3}, {2})};
  const KernelInfo &K = KernelRegistry::global().get("reshape_dyn");
  EXPECT_THROW(K.shapeFn(In, A), Error);
  A.set("dims", std::vector<std::string>{"4", "?"});
  EXPECT_EQ(K.shapeFn(In, A)[0].shape, (Shape{4, 3}));
}

TEST(ResolveShapeValues, MalformedDimsAreRefused) {
  for (const char *Text :
       {"def @main(%x: Tensor[(3, 4), float32], %s: Tensor[(2,), int64]) {\n"
        "  reshape_dyn(%x, %s, dims=[\"4\"])\n}\n",
        "def @main(%x: Tensor[(3, 4), float32], %s: Tensor[(2,), int64]) {\n"
        "  reshape_dyn(%x, %s, dims=[\"4\", \"-3\"])\n}\n"})
    EXPECT_THROW(test::parseTyped(Text, "malformed"), Error) << Text;
}

} // namespace
