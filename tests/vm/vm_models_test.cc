//===- vm_models_test.cc - Committed ONNX models on the VM ----------------===//
//
// Each committed model under tests/models/<name>/ (model.onnx and
// test_data_set_<k>/{inputs,expected}) is imported and compiled ONCE; all
// its data sets (different sequence lengths for the dynamic models) then run
// through that one executable on one VirtualMachine, through the API. Every
// output must agree with the reference interpreter and with PyTorch's
// expected outputs (rtol 1e-4, atol 1e-4).
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Importer.h"
#include "ir/Interpreter.h"
#include "kernels/Npy.h"
#include "support/ModelData.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;
using namespace rivet;

namespace {

const fs::path ModelsDir = RIVET_SOURCE_DIR "/tests/models";

void flatten(const ir::Value &V, std::vector<Tensor> &Out) {
  if (V.isTensor()) {
    Out.push_back(V.tensor());
  } else if (V.isTuple()) {
    for (const ir::Value &F : V.fields())
      flatten(F, Out);
  } else if (V.isADT() && V.ctor()->adt == "Option" && !V.fields().empty()) {
    flatten(V.fields()[0], Out);
  } else {
    ADD_FAILURE() << "unexpected model output " << ir::valueToString(V);
  }
}

std::vector<std::string> modelNames() {
  std::vector<std::string> R;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(ModelsDir, EC))
    if (E.is_directory() && fs::exists(E.path() / "model.onnx"))
      R.push_back(E.path().filename().string());
  std::sort(R.begin(), R.end());
  return R;
}

class VmModel : public ::testing::TestWithParam<std::string> {};

TEST_P(VmModel, AllDataSetsThroughOneExecutable) {
  fs::path Dir = ModelsDir / GetParam();
  ir::Module M = frontend::importOnnxFile((Dir / "model.onnx").string());
  frontend::OnnxSignature Sig = frontend::onnxSignature(M);
  std::shared_ptr<vm::Executable> Exe = vm::compile(M);
  ASSERT_EQ(Exe->mainParams.size(), Sig.inputs.size());
  for (size_t I = 0; I < Sig.inputs.size(); ++I)
    EXPECT_EQ(Exe->mainParams[I].name, Sig.inputs[I]);
  vm::VirtualMachine VM(Exe);
  ir::Interpreter Interp(M);

  std::vector<fs::path> Sets = test::modelDataSets(Dir);
  ASSERT_FALSE(Sets.empty());
  for (const fs::path &Set : Sets) {
    SCOPED_TRACE(Set.string());
    std::vector<ir::Value> Args;
    std::vector<vm::ObjectRef> Objs;
    for (const std::string &In : Sig.inputs) {
      Tensor T = readNpy((Set / "inputs" / (In + ".npy")).string());
      Args.push_back(T);
      Objs.push_back(vm::makeTensor(T));
    }
    std::vector<Tensor> Ref, Got;
    flatten(Interp.call("main", Args), Ref);
    flatten(vm::toValue(VM.invoke("main", std::move(Objs)), *Exe, M), Got);
    ASSERT_EQ(Got.size(), Ref.size());
    for (size_t I = 0; I < Got.size(); ++I) {
      EXPECT_TRUE(allClose(Got[I], Ref[I], 1e-5, 1e-5))
          << "output " << I << ": VM " << Got[I].typeString()
          << " vs interpreter " << Ref[I].typeString();
      fs::path E = Set / "expected" / fmt::format("output_{}.npy", I);
      ASSERT_TRUE(fs::exists(E)) << E;
      Tensor Want = readNpy(E.string());
      EXPECT_TRUE(allClose(Got[I], Want, 1e-4, 1e-4))
          << "output " << I << ": VM " << Got[I].typeString() << " vs PyTorch "
          << Want.typeString();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, VmModel, ::testing::ValuesIn(modelNames()),
                         [](const auto &Info) { return Info.param; });

} // namespace
