//===- RunCommand.cc - rivet run ------------------------------------------===//
#include "Commands.h"
#include "Inputs.h"
#include "Options.h"

#include "ir/Interpreter.h"
#include "kernels/Error.h"
#include "kernels/Npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace rivet::cli {

const char *const RunUsage =
    "usage: rivet run PROGRAM.rvir|MODEL.onnx [options]\n"
    "  --input NAME=FILE.npy   value of input NAME: an ONNX graph input, or a\n"
    "                          parameter of @main (repeatable)\n"
    "  --random-inputs         generate missing inputs (seeded, declared shape)\n"
    "  --seed N                seed for --random-inputs (default 0)\n"
    "  --shape NAME=AxB        shape of a generated input with dynamic dims\n"
    "  --executor interp       the reference interpreter (the only one so far)\n"
    "  --output-dir DIR        where output_<i>.npy go (default .)\n";

// Interpreted programs may recurse deeply outside tail position (e.g. @map on
// a long list); give them a large stack, reserved lazily by the OS.
static constexpr size_t InterpreterStackBytes = size_t(512) << 20;

int runCommand(const std::vector<std::string> &Args) {
  ParsedArgs P = parseArgs(Args, {{"input", true, true},
                                  {"random-inputs", false, false},
                                  {"seed", true, false},
                                  {"shape", true, true},
                                  {"executor", true, false},
                                  {"output-dir", true, false},
                                  {"help", false, false}});
  if (P.has("help")) {
    std::fputs(RunUsage, stdout);
    return 0;
  }
  if (P.positional.size() != 1)
    throw UsageError(P.positional.empty()
                         ? "run: missing PROGRAM (a .rvir or .onnx file)"
                         : "run: expected one PROGRAM, got several");
  std::string Executor = P.get("executor", "interp");
  if (Executor != "interp")
    throw UsageError(fmt::format(
        "run: unknown executor '{}' (available: interp)", Executor));

  InputOptions Opts;
  for (const std::string &A : P.all("input")) {
    auto [Name, File] = splitAssignment(A, "input");
    if (!Opts.files.emplace(Name, File).second)
      throw UsageError(fmt::format("input '{}' given more than once", Name));
  }
  for (const std::string &A : P.all("shape")) {
    auto [Name, Spec] = splitAssignment(A, "shape");
    Opts.shapes[Name] = parseShapeSpec(Spec, Name);
  }
  Opts.random = P.has("random-inputs");
  if (P.has("seed"))
    Opts.seed = parseUnsigned(P.get("seed", "0"), "seed");
  std::filesystem::path OutDir = P.get("output-dir", ".");

  LoadedModel L = loadModel(P.positional[0]);
  const ir::Module &M = L.module;
  const auto *Main = M.function("main")->as<ir::FunctionNode>();
  std::vector<Tensor> Inputs = prepareInputs(*Main, Opts, L.inputNames);

  ir::Value Result;
  runWithStack(InterpreterStackBytes, [&] {
    ir::Interpreter Interp(M);
    std::vector<ir::Value> Values(Inputs.begin(), Inputs.end());
    Result = Interp.call("main", std::move(Values));
  });

  std::vector<NamedOutput> Outputs =
      flattenOutputs(Result, std::max<size_t>(L.outputNames.size(), 1));
  std::error_code EC;
  std::filesystem::create_directories(OutDir, EC);
  if (EC)
    fail("cannot create output directory '{}': {}", OutDir.string(),
         EC.message());
  for (const NamedOutput &O : Outputs) {
    // "output_1 (ONNX output 'y'): ..." names the graph output it came from.
    std::string Label = O.name;
    if (O.result < L.outputNames.size())
      Label += fmt::format(" (ONNX output '{}')", L.outputNames[O.result]);
    if (!O.tensor.defined()) {
      std::printf("%s: none (empty optional, not written)\n", Label.c_str());
      continue;
    }
    std::filesystem::path File = OutDir / (O.name + ".npy");
    writeNpy(File.string(), O.tensor);
    std::printf("%s: %s -> %s\n", Label.c_str(),
                O.tensor.typeString().c_str(), File.string().c_str());
  }
  if (Outputs.empty())
    std::printf("no outputs (the result is %s)\n",
                ir::valueToString(Result).c_str());
  return 0;
}

} // namespace rivet::cli
