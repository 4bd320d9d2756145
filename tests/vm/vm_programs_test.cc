//===- vm_programs_test.cc - Test programs on the VM vs the interpreter ---===//
//
// Every tests/programs/<name>/program.rvir is compiled with vm::compile and
// run by a VirtualMachine through the API (not the CLI) on its inputs; the
// result must agree with the reference interpreter and with the NumPy
// expected outputs (rtol 1e-4, atol 1e-5). A second run on the same VM, with
// its storage pool warm, must give the same result; so must an executable
// compiled without memory planning.
//
//===----------------------------------------------------------------------===//
#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Npy.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace rivet;

namespace {

const fs::path ProgramsDir = RIVET_SOURCE_DIR "/tests/programs";

/// Tensors of a result in `rivet run`'s order and naming: tuples flattened,
/// Some(x) as x, a List as output_<i>_<j>.
void flatten(const ir::Value &V,
             std::vector<std::pair<std::string, Tensor>> &Out, size_t &Index) {
  if (V.isTensor()) {
    Out.emplace_back(fmt::format("output_{}.npy", Index++), V.tensor());
  } else if (V.isTuple()) {
    for (const ir::Value &F : V.fields())
      flatten(F, Out, Index);
  } else if (V.isADT() && V.ctor()->adt == "Option") {
    if (!V.fields().empty())
      flatten(V.fields()[0], Out, Index);
    else
      ++Index;
  } else if (V.isADT() && V.ctor()->adt == "List") {
    size_t J = 0;
    const ir::Value *Cur = &V;
    while (Cur->isADT() && Cur->fields().size() == 2) {
      Out.emplace_back(fmt::format("output_{}_{}.npy", Index, J++),
                       Cur->fields()[0].tensor());
      Cur = &Cur->fields()[1];
    }
    ++Index;
  } else {
    ADD_FAILURE() << "unexpected result " << ir::valueToString(V);
  }
}

std::vector<std::pair<std::string, Tensor>> flatten(const ir::Value &V) {
  std::vector<std::pair<std::string, Tensor>> Out;
  size_t Index = 0;
  flatten(V, Out, Index);
  return Out;
}

std::vector<std::string> programNames() {
  std::vector<std::string> Names;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(ProgramsDir, EC))
    if (E.is_directory() && fs::exists(E.path() / "program.rvir"))
      Names.push_back(E.path().filename().string());
  std::sort(Names.begin(), Names.end());
  return Names;
}

std::string readFile(const fs::path &P) {
  std::ifstream In(P);
  std::stringstream SS;
  SS << In.rdbuf();
  return SS.str();
}

void expectSame(const std::vector<std::pair<std::string, Tensor>> &Got,
                const std::vector<std::pair<std::string, Tensor>> &Want,
                double Rtol, double Atol, const std::string &What) {
  ASSERT_EQ(Got.size(), Want.size()) << What;
  for (size_t I = 0; I < Got.size(); ++I) {
    EXPECT_EQ(Got[I].first, Want[I].first) << What;
    EXPECT_TRUE(allClose(Got[I].second, Want[I].second, Rtol, Atol))
        << What << ": " << Got[I].first << " is " << Got[I].second.typeString()
        << ", expected " << Want[I].second.typeString();
  }
}

class VmProgram : public ::testing::TestWithParam<std::string> {};

TEST_P(VmProgram, AgreesWithInterpreterAndNumPy) {
  fs::path Dir = ProgramsDir / GetParam();
  ir::Module M = ir::parseModule(readFile(Dir / "program.rvir"),
                                 (Dir / "program.rvir").string());
  ir::inferTypes(M);
  const auto *Main = M.function("main")->as<ir::FunctionNode>();
  std::vector<ir::Value> Args;
  for (const ir::Var &P : Main->params)
    Args.push_back(readNpy((Dir / "inputs" / (P->nameHint + ".npy")).string()));

  ir::Interpreter Interp(M);
  auto Reference = flatten(Interp.call("main", Args));

  std::vector<std::pair<std::string, Tensor>> Expected;
  for (const auto &[Name, T] : Reference)
    if (fs::exists(Dir / "expected" / Name))
      Expected.emplace_back(Name, readNpy((Dir / "expected" / Name).string()));
  size_t NumExpected = 0;
  for (const auto &E : fs::directory_iterator(Dir / "expected"))
    NumExpected += E.path().extension() == ".npy";
  ASSERT_EQ(Expected.size(), NumExpected) << "outputs named differently";

  for (bool Plan : {true, false}) {
    vm::CompileOptions Opts;
    Opts.planMemory = Plan;
    std::shared_ptr<vm::Executable> Exe = vm::compile(M, Opts);
    vm::VirtualMachine VM(Exe);
    for (int Run = 0; Run < 2; ++Run) {
      std::vector<vm::ObjectRef> Objs;
      for (const ir::Value &A : Args)
        Objs.push_back(vm::toObject(A, *Exe));
      vm::ObjectRef R = VM.invoke("main", std::move(Objs));
      auto Got = flatten(vm::toValue(R, *Exe, M));
      std::string What =
          fmt::format("{} (planMemory={}, run {})", GetParam(), Plan, Run);
      expectSame(Got, Reference, 1e-5, 1e-6, What + " vs interpreter");
      expectSame(Got, Expected, 1e-4, 1e-5, What + " vs NumPy");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, VmProgram,
                         ::testing::ValuesIn(programNames()),
                         [](const auto &Info) { return Info.param; });

} // namespace
