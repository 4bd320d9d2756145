//===- DumpCommand.cc - rivet dump ----------------------------------------===//
#include "Commands.h"
#include "Inputs.h"
#include "Options.h"

#include "ir/Printer.h"

#include <fmt/format.h>

#include <cstdio>

namespace rivet::cli {

const char *const DumpUsage =
    "usage: rivet dump PROGRAM.rvir|MODEL.onnx [--ir]\n"
    "  --ir                    the imported or parsed, type-checked IR (default)\n";

int dumpCommand(const std::vector<std::string> &Args) {
  ParsedArgs P = parseArgs(Args, {{"ir", false, false}, {"help", false, false}});
  if (P.has("help")) {
    std::fputs(DumpUsage, stdout);
    return 0;
  }
  if (P.positional.size() != 1)
    throw UsageError(P.positional.empty()
                         ? "dump: missing PROGRAM (a .rvir or .onnx file)"
                         : "dump: expected one PROGRAM, got several");
  LoadedModel L = loadModel(P.positional[0]);
  const ir::Module &M = L.module;
  // The inferred signature of every global, then the module itself.
  std::string Out;
  if (L.isOnnx) {
    // Which ONNX names @main's parameters and results stand for.
    Out += "// ONNX inputs: ";
    for (size_t I = 0; I < L.inputNames.size(); ++I)
      Out += fmt::format("{}'{}'", I ? ", " : "", L.inputNames[I]);
    Out += "\n// ONNX outputs: ";
    for (size_t I = 0; I < L.outputNames.size(); ++I)
      Out += fmt::format("{}'{}'", I ? ", " : "", L.outputNames[I]);
    Out += "\n";
  }
  for (const std::string &Name : M.functionNames()) {
    if (ir::isPreludeName(Name))
      continue; // the printer leaves the prelude out too
    const ir::Expr &Fn = M.function(Name);
    if (Fn->checkedType)
      Out += fmt::format("// @{}: {}\n", Name, ir::typeToString(Fn->checkedType));
  }
  Out += ir::printModule(M);
  std::fputs(Out.c_str(), stdout);
  if (!Out.empty() && Out.back() != '\n')
    std::fputc('\n', stdout);
  return 0;
}

} // namespace rivet::cli
