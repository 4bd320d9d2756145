//===- DumpCommand.cc - rivet dump ----------------------------------------===//
//
// Prints a program's type-checked IR (--ir), the IR after the optimization
// pipeline without fusion (--optimized) or with it (--fused, with a summary
// of the fused groups), or its disassembled bytecode (--bytecode; with
// inputs, also the VM pool's peak after one run). --dot draws the IR of
// --ir, --optimized or --fused as a Graphviz graph instead (DotGraph.h).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "DotGraph.h"
#include "Engine.h"
#include "Inputs.h"
#include "Options.h"
#include "Program.h"

#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "ir/transforms/Pass.h"
#include "kernels/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

namespace rivet::cli {

const char *const DumpUsage =
    "usage: rivet dump PROGRAM.rvir|MODEL.onnx|EXE.rvx "
    "[--ir|--optimized|--fused|--bytecode] [--dot]\n"
    "  --ir                    the imported or parsed, type-checked IR "
    "(default\n"
    "                          for .rvir and .onnx)\n"
    "  --optimized             the IR after the passes of the opt level, "
    "without\n"
    "                          FuseOps\n"
    "  --fused                 the IR after every pass, FuseOps included, "
    "and a\n"
    "                          list of the fused groups\n"
    "  --bytecode              the compiled bytecode, one instruction per "
    "line\n"
    "                          (the only view of a .rvx file)\n"
    "  --dot                   Graphviz instead of text (with --ir, the\n"
    "                          default, --optimized or --fused): @main's\n"
    "                          dataflow, fused groups and Loop/If bodies\n"
    "                          as clusters (render: dot -Tsvg)\n"
    "  --origins               every origin of the imported program (ONNX\n"
    "                          node, or .rvir line:column) and its\n"
    "                          operators, one per line (what check\n"
    "                          --localize names and --inject-fault takes)\n"
    "  -O0 .. -O3              optimization level (default -O3)\n"
    "  --no-memory-plan        compile without the memory planner\n"
    "  --print-after PASS, --disable-pass PASS, --enable-pass PASS,\n"
    "  --time-passes           the pass flags of rivet compile --help\n"
    "  --input-shape NAME=AxB  compile for input NAME of this shape only\n"
    "  --codegen off|jit|so, --cpu NAME, --mattr +F,-G   native code of\n"
    "                          --bytecode (default so, as compile)\n"
    "  --peak-memory           with --bytecode: run once and print the VM\n"
    "                          pool's peak bytes in use (needs the inputs:\n"
    "                          --input NAME=FILE.npy, --random-inputs,\n"
    "                          --seed N, --shape NAME=AxB)\n";

/// One comment line per fused group: its operators in order, each with
/// its origin (ir/Origin.h) when it has one.
static std::string describeFusedGroups(const ir::Module &M) {
  std::vector<std::string> Lines;
  for (const std::string &Name : M.functionNames()) {
    if (ir::isPreludeName(Name))
      continue;
    ir::postOrderVisit(M.function(Name), [&](const ir::Expr &E) {
      if (!ir::isPrimitiveFunction(E))
        return;
      std::string Ops;
      ir::postOrderVisit(
          E->as<ir::FunctionNode>()->body, [&](const ir::Expr &In) {
            const auto *C = In->as<ir::CallNode>();
            const auto *O = C ? C->callee->as<ir::OpNode>() : nullptr;
            if (O)
              Ops += (Ops.empty() ? "" : ", ") + O->name() +
                     (C->origin.empty() ? "" : " <" + C->origin + ">");
          });
      Lines.push_back(fmt::format("//   in @{}: {}\n", Name, Ops));
    });
  }
  std::string Out = fmt::format("// {} fused groups\n", Lines.size());
  for (const std::string &L : Lines)
    Out += L;
  return Out;
}

/// --origins: "ORIGIN<tab>op, op" per origin, in the order of the first
/// call from it.
static std::string describeOrigins(const ir::Module &M) {
  std::vector<std::string> Order;
  std::map<std::string, std::vector<std::string>> Ops;
  for (const std::string &Name : M.functionNames()) {
    if (ir::isPreludeName(Name))
      continue;
    ir::postOrderVisit(M.function(Name), [&](const ir::Expr &E) {
      const auto *C = E->as<ir::CallNode>();
      const auto *O = C ? C->callee->as<ir::OpNode>() : nullptr;
      if (!O || C->origin.empty())
        return;
      auto [It, New] = Ops.try_emplace(C->origin);
      if (New)
        Order.push_back(C->origin);
      if (std::find(It->second.begin(), It->second.end(), O->name()) ==
          It->second.end())
        It->second.push_back(O->name());
    });
  }
  std::string Out;
  for (const std::string &Origin : Order) {
    std::string List;
    for (const std::string &Op : Ops[Origin])
      List += (List.empty() ? "" : ", ") + Op;
    Out += Origin + "\t" + List + "\n";
  }
  return Out;
}

/// --bytecode: the disassembly, then the peak of one run when asked.
static int dumpBytecode(const std::string &Path, std::optional<int> Level,
                        const ParsedArgs &P) {
  Program Prog = loadProgram(Path);
  // What `rivet compile` would write (a shared object), unless told.
  vm::CompileOptions CO =
      compileOptionsFrom(Level, P, vm::NativeCode::SharedObject);
  std::shared_ptr<vm::Executable> Exe = compileProgram(Prog, CO);
  reportPassTimes(CO);
  std::string Out = Exe->disassemble();
  if (!Out.empty() && Out.back() != '\n')
    Out += '\n';
  // Why fused groups stay on builtin kernels: the first thing to look at
  // when a model is slower than expected. Only known when compiled here.
  if (!Exe->nativeRefusals.empty()) {
    Out += "\nfused groups left to builtin kernels:\n";
    for (const std::string &R : Exe->nativeRefusals)
      Out += "  " + R + "\n";
  }
  std::fputs(Out.c_str(), stdout);
  if (!P.has("peak-memory"))
    return 0;
  std::vector<Tensor> Inputs = prepareProgramInputs(Prog, inputOptionsFrom(P));
  size_t Peak = 0, Pooled = 0;
  runWithStack(BigStackBytes, [&] {
    Engine E(Prog, ExecutorKind::VM, ExecutionLimits{});
    E.runDiscard(Inputs);
    Peak = E.machine()->peakBytesInUse();
    Pooled = E.machine()->pooledBytes();
  });
  std::printf("// peak storage in use after one run: %zu bytes (%zu pooled, "
              "memory plan %s)\n",
              Peak, Pooled, CO.planMemory ? "on" : "off");
  return 0;
}

int dumpCommand(const std::vector<std::string> &ArgsIn) {
  std::vector<std::string> Args = ArgsIn;
  std::optional<int> Level = takeOptLevel(Args);
  std::vector<FlagSpec> Flags = inputFlags();
  for (const FlagSpec &F : compileFlags())
    Flags.push_back(F);
  for (const char *F : {"ir", "optimized", "fused", "bytecode", "origins",
                        "dot", "peak-memory", "help"})
    Flags.push_back({F, false, false});
  ParsedArgs P = parseArgs(Args, Flags);
  if (P.has("help")) {
    std::fputs(DumpUsage, stdout);
    return 0;
  }
  if (P.positional.size() != 1)
    throw UsageError(P.positional.empty()
                         ? "dump: missing PROGRAM (a .rvir, .onnx or .rvx file)"
                         : "dump: expected one PROGRAM, got several");
  if (P.has("ir") + P.has("optimized") + P.has("fused") + P.has("bytecode") +
          P.has("origins") >
      1)
    throw UsageError("dump: give one of --ir, --optimized, --fused, "
                     "--bytecode and --origins");
  bool Rvx = isRvxPath(P.positional[0]);
  if (P.has("dot") && (P.has("bytecode") || P.has("origins") || Rvx))
    throw UsageError("dump: --dot draws the IR (--ir, --optimized or "
                     "--fused), not bytecode or origins");
  if (Rvx &&
      (P.has("ir") || P.has("optimized") || P.has("fused") || P.has("origins")))
    fail("{}: a .rvx file holds bytecode only; use --bytecode (or dump the "
         "model it was compiled from with --ir)",
         P.positional[0]);
  if (P.has("peak-memory") && !(P.has("bytecode") || Rvx))
    throw UsageError("dump: --peak-memory goes with --bytecode");
  if (P.has("bytecode") || Rvx)
    return dumpBytecode(P.positional[0], Level, P);
  LoadedModel L = loadModel(P.positional[0]);
  ir::Module &M = L.module;
  if (P.has("origins")) {
    std::fputs(describeOrigins(M).c_str(), stdout);
    return 0;
  }
  std::string Groups;
  if (P.has("optimized") || P.has("fused")) {
    vm::CompileOptions CO = compileOptionsFrom(Level, P, vm::NativeCode::Jit);
    ir::PassContext Ctx = CO.passes;
    Ctx.optLevel = CO.optLevel;
    if (P.has("optimized"))
      Ctx.disabled.insert("FuseOps");
    {
      CompileProgress Progress(Ctx, nullptr);
      ir::optimize(M, Ctx);
    }
    CO.passes.timings = Ctx.timings;
    reportPassTimes(CO);
    if (P.has("fused"))
      Groups = describeFusedGroups(M);
  }
  if (P.has("dot")) {
    // "rnn_loop/model.onnx": model files are often all called model.onnx.
    std::filesystem::path Path(P.positional[0]);
    std::string Title = fmt::format(
        "{} @main{}",
        (Path.parent_path().filename() / Path.filename()).generic_string(),
        P.has("fused")       ? fmt::format(", fused, -O{}", Level.value_or(3))
        : P.has("optimized") ? fmt::format(", -O{}", Level.value_or(3))
                             : "");
    std::fputs(moduleToDot(M, Title).c_str(), stdout);
    return 0;
  }
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
      Out +=
          fmt::format("// @{}: {}\n", Name, ir::typeToString(Fn->checkedType));
  }
  Out += Groups;
  Out += ir::printModule(M);
  std::fputs(Out.c_str(), stdout);
  if (!Out.empty() && Out.back() != '\n')
    std::fputc('\n', stdout);
  return 0;
}

} // namespace rivet::cli
