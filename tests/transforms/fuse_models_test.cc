//===- fuse_models_test.cc - FuseOps on real models -----------------------===//
//
// ResNet-18 and MobileNetV2 (generated into ~/.cache/rivet/models by
// tools/models/export_all.py --large-only; skipped when absent) through the
// -O3 pipeline: every activation and residual add ends in a conv's (or the
// classifier's) group and no batch norm is left. The committed models
// compile at -O0 and -O3 and must give the same VM results.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Importer.h"
#include "ir/Interpreter.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "ir/transforms/Pass.h"
#include "kernels/Npy.h"
#include "support/ModelData.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;
using namespace rivet;
using namespace rivet::ir;

namespace {

fs::path largeModelPath(const std::string &Name) {
  const char *Home = std::getenv("HOME");
  return fs::path(Home ? Home : "/root") / ".cache/rivet/models" / Name /
         "model.onnx";
}

const std::string &calleeOpName(const Expr &E) {
  static const std::string None;
  const auto *C = E->as<CallNode>();
  const auto *O = C ? C->callee->as<OpNode>() : nullptr;
  return O ? O->name() : None;
}

/// The operator names called in E (nested primitives included).
std::multiset<std::string> opsIn(const Expr &E) {
  std::multiset<std::string> Names;
  postOrderVisit(E, [&](const Expr &X) {
    if (!calleeOpName(X).empty())
      Names.insert(calleeOpName(X));
  });
  return Names;
}

void checkFusedModel(const std::string &Name) {
  fs::path Path = largeModelPath(Name);
  if (!fs::exists(Path))
    GTEST_SKIP() << Path << " is absent (tools/models/export_all.py "
                 << "--large-only generates it)";
  Module M = frontend::importOnnxFile(Path.string());
  PassContext Ctx;
  Ctx.optLevel = 3;
  optimize(M, Ctx);

  const Expr &Main = M.function("main");
  std::multiset<std::string> All = opsIn(Main);
  EXPECT_EQ(All.count("batch_norm"), 0u) << printModule(M);

  const std::set<std::string> Anchors = {"conv", "conv2d_nchwc", "dense", "gemm", "matmul"};
  const std::set<std::string> MustBeAnchored = {"relu", "clip", "add"};
  size_t Groups = 0, Anchored = 0, TailOps = 0;
  postOrderVisit(Main, [&](const Expr &E) {
    if (!isPrimitiveFunction(E))
      return;
    ++Groups;
    std::multiset<std::string> Ops = opsIn(E->as<FunctionNode>()->body);
    bool HasAnchor = std::any_of(
        Ops.begin(), Ops.end(), [&](auto &N) { return Anchors.count(N) != 0; });
    Anchored += HasAnchor;
    for (const std::string &Op : Ops)
      if (MustBeAnchored.count(Op)) {
        ++TailOps;
        EXPECT_TRUE(HasAnchor) << Op << " is in a group without a conv:\n"
                               << printExpr(E);
      }
  });
  // Every operator call is inside some primitive function.
  size_t Outside = All.size();
  postOrderVisit(Main, [&](const Expr &E) {
    if (isPrimitiveFunction(E))
      Outside -= opsIn(E->as<FunctionNode>()->body).size();
  });
  EXPECT_EQ(Outside, 0u);
  EXPECT_GT(TailOps, 0u);
  EXPECT_GT(Anchored, 0u);
  EXPECT_EQ(All.count("relu") + All.count("clip") + All.count("add"), TailOps);
  std::cout << Name << ": " << All.size() << " operator calls in " << Groups
            << " groups, " << Anchored << " with an anchor\n";
}

TEST(FuseModels, ResNet18ActivationsAndResidualsJoinConvGroups) {
  checkFusedModel("resnet18");
}

TEST(FuseModels, MobileNetV2ActivationsAndResidualsJoinConvGroups) {
  checkFusedModel("mobilenet_v2");
}

//===--- -O0 against -O3 on the VM --------------------------------------===//

const fs::path ModelsDir = RIVET_SOURCE_DIR "/tests/models";

void flatten(const Value &V, std::vector<Tensor> &Out) {
  if (V.isTensor()) {
    Out.push_back(V.tensor());
  } else if (V.isTuple()) {
    for (const Value &F : V.fields())
      flatten(F, Out);
  } else if (V.isADT() && V.ctor()->adt == "Option" && !V.fields().empty()) {
    flatten(V.fields()[0], Out);
  } else {
    ADD_FAILURE() << "unexpected model output " << valueToString(V);
  }
}

class FuseDifferential : public ::testing::TestWithParam<std::string> {};

TEST_P(FuseDifferential, O0AndO3AgreeOnTheVM) {
  fs::path Dir = ModelsDir / GetParam();
  Module M = frontend::importOnnxFile((Dir / "model.onnx").string());
  frontend::OnnxSignature Sig = frontend::onnxSignature(M);
  vm::CompileOptions O0, O3;
  O0.optLevel = 0;
  O3.optLevel = 3;
  std::shared_ptr<vm::Executable> Exe0 = vm::compile(M, O0);
  std::shared_ptr<vm::Executable> Exe3 = vm::compile(M, O3);
  vm::VirtualMachine VM0(Exe0), VM3(Exe3);
  // The VM expands primitive functions again until codegen; the interpreter
  // runs the fused module as it is.
  Module Fused = M;
  PassContext Ctx;
  Ctx.optLevel = 3;
  optimize(Fused, Ctx);
  Interpreter FusedInterp(Fused);

  std::vector<fs::path> Sets = test::modelDataSets(Dir);
  ASSERT_FALSE(Sets.empty());
  for (const fs::path &Set : Sets) {
    SCOPED_TRACE(Set.string());
    std::vector<vm::ObjectRef> In0, In3;
    std::vector<Value> Args;
    for (const std::string &In : Sig.inputs) {
      Tensor T = readNpy((Set / "inputs" / (In + ".npy")).string());
      In0.push_back(vm::makeTensor(T));
      In3.push_back(vm::makeTensor(T));
      Args.push_back(T);
    }
    std::vector<Tensor> Got0, Got3, GotFused;
    flatten(vm::toValue(VM0.invoke("main", std::move(In0)), *Exe0, M), Got0);
    flatten(vm::toValue(VM3.invoke("main", std::move(In3)), *Exe3, M), Got3);
    flatten(FusedInterp.call("main", Args), GotFused);
    ASSERT_EQ(Got0.size(), Got3.size());
    ASSERT_EQ(Got0.size(), GotFused.size());
    for (size_t I = 0; I < Got0.size(); ++I) {
      EXPECT_TRUE(allClose(Got3[I], Got0[I], 1e-5, 1e-5))
          << "output " << I << ": -O3 " << Got3[I].typeString() << " vs -O0 "
          << Got0[I].typeString();
      EXPECT_TRUE(allClose(GotFused[I], Got0[I], 1e-5, 1e-5))
          << "output " << I << ": fused module on the interpreter vs -O0";
      Tensor Want = readNpy(
          (Set / "expected" / fmt::format("output_{}.npy", I)).string());
      EXPECT_TRUE(allClose(Got3[I], Want, 1e-4, 1e-4))
          << "output " << I << ": -O3 vs PyTorch";
    }
  }
}

// transformer and lstm are the ones the issue names; branch (If) and
// rnn_loop (Loop) put control flow in the way of fusion; resblock's convs
// fuse with their bias, residual and relu (Winograd at -O3).
INSTANTIATE_TEST_SUITE_P(Models, FuseDifferential,
                         ::testing::Values("transformer", "lstm", "branch",
                                           "rnn_loop", "resblock"),
                         [](const auto &Info) { return Info.param; });

} // namespace
