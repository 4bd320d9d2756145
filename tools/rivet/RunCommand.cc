//===- RunCommand.cc - rivet run ------------------------------------------===//
//
// Runs @main of a model, program or .rvx executable on the VM (default) or
// the reference interpreter and writes output_<i>.npy files (and, with
// --save-inputs, the inputs it used as <name>.npy files).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Engine.h"
#include "Options.h"
#include "Program.h"

#include "kernels/Error.h"
#include "kernels/Npy.h"
#include "kernels/OutputFiles.h"
#include "vm/MainIO.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

namespace rivet::cli {

const char *const RunUsage =
    "usage: rivet run PROGRAM.rvir|MODEL.onnx|EXE.rvx [options]\n"
    "  --input NAME=FILE.npy   value of input NAME: an ONNX graph input, or a\n"
    "                          parameter of @main (repeatable)\n"
    "  --random-inputs         generate missing inputs (seeded, declared "
    "shape)\n"
    "  --seed N                seed for --random-inputs (default 0)\n"
    "  --shape NAME=AxB        shape of a generated input with dynamic dims\n"
    "  --executor vm|interp    the VM (default) or the reference interpreter;\n"
    "                          a .rvx file runs on the VM only\n"
    "  -O0 .. -O3              optimization level of the VM (default -O3)\n"
    "  --no-memory-plan        compile without the memory planner\n"
    "  --print-after PASS, --disable-pass PASS, --enable-pass PASS,\n"
    "  --time-passes           the pass flags of rivet compile --help\n"
    "  --codegen off|jit|so    native kernels for fused groups: none, JIT\n"
    "                          (default) or a shared object\n"
    "  --cpu NAME, --mattr +F,-G   target of the native code (default: host)\n"
    "  --target cpu|cuda       where fused kernels run (default cpu)\n"
    "  --input-shape NAME=AxB  compile for input NAME of this shape only\n"
    "  --max-call-depth N      nested (non-tail) calls allowed (default\n"
    "                          100000), the same on both executors\n"
    "  --threads N             intra-op threads (default: every core, or\n"
    "                          $RIVET_NUM_THREADS; 0: every core)\n"
    "  --output-dir DIR        where output_<i>.npy go (default .)\n"
    "  --save-inputs DIR       also write the inputs used (given or\n"
    "                          generated) as DIR/<input name>.npy, before\n"
    "                          running, to replay them with rivet-run\n";

static void writeOutputs(const std::vector<NamedOutput> &Outputs,
                         const std::vector<std::string> &OutputNames,
                         const std::filesystem::path &OutDir) {
  // The runtime's writer, shared with rivet-run: same files, same lines.
  for (const std::string &L :
       vm::writeMainOutputs(Outputs, OutputNames, OutDir.string()))
    std::printf("%s\n", L.c_str());
  if (Outputs.empty())
    std::printf("no outputs (the result has no tensors)\n");
}

/// The file stem of input Name: Name itself, with every byte other than a
/// letter, digit, '_', '-', ':' or a '.' that does not start it written as
/// %XX, so that any ONNX name ("images/0", "..") maps to one file in the
/// directory and back (a URL decoder reverses it).
static std::string inputFileStem(const std::string &Name) {
  std::string S;
  for (size_t I = 0; I < Name.size(); ++I) {
    unsigned char C = (unsigned char)Name[I];
    bool Plain = (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
                 (C >= '0' && C <= '9') || C == '_' || C == '-' || C == ':' ||
                 (C == '.' && I > 0);
    if (Plain)
      S += (char)C;
    else
      S += fmt::format("%{:02X}", (unsigned)C);
  }
  return S;
}

/// --save-inputs DIR: every input of @main as DIR/<name>.npy, all or none.
static void saveInputs(const std::vector<Tensor> &Inputs,
                       const std::vector<std::string> &Names,
                       const std::filesystem::path &Dir) {
  std::error_code EC;
  std::filesystem::create_directories(Dir, EC);
  if (EC)
    fail("cannot create input directory '{}': {}", Dir.string(), EC.message());
  OutputFiles Files;
  std::vector<std::string> Lines;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    std::string Name = I < Names.size() && !Names[I].empty()
                           ? Names[I]
                           : fmt::format("input_{}", I);
    std::string File = (Dir / (inputFileStem(Name) + ".npy")).string();
    std::vector<uint8_t> Bytes = npyBytes(Inputs[I]);
    Files.add(File, Bytes.data(), Bytes.size());
    Lines.push_back(fmt::format("input '{}': {} -> {}", Name,
                                Inputs[I].typeString(), File));
  }
  Files.commit();
  for (const std::string &L : Lines)
    std::printf("%s\n", L.c_str());
}

int runCommand(const std::vector<std::string> &ArgsIn) {
  std::vector<std::string> Args = ArgsIn;
  std::optional<int> Level = takeOptLevel(Args);
  std::vector<FlagSpec> Flags = inputFlags();
  Flags.push_back({"executor", true, false});
  Flags.push_back({"output-dir", true, false});
  Flags.push_back({"save-inputs", true, false});
  Flags.push_back(threadsFlag());
  Flags.push_back(maxCallDepthFlag());
  for (const FlagSpec &F : compileFlags())
    Flags.push_back(F);
  Flags.push_back({"help", false, false});
  ParsedArgs P = parseArgs(Args, Flags);
  if (P.has("help")) {
    std::fputs(RunUsage, stdout);
    return 0;
  }
  if (P.positional.size() != 1)
    throw UsageError(P.positional.empty()
                         ? "run: missing PROGRAM (a .rvir, .onnx or .rvx file)"
                         : "run: expected one PROGRAM, got several");
  ExecutorKind Kind = parseExecutor(P.get("executor", "vm"), "run");
  InputOptions Opts = inputOptionsFrom(P);
  std::filesystem::path OutDir = P.get("output-dir", ".");
  applyThreadsFlag(P);
  ExecutionLimits Limits = executionLimitsFrom(P);
  vm::CompileOptions CO = compileOptionsFrom(Level, P, vm::NativeCode::Jit);

  Program Prog = loadProgram(P.positional[0]);
  if (Kind == ExecutorKind::Interp && Prog.isExecutable())
    fail("{}: a .rvx file runs on the VM only (--executor vm)", Prog.path);
  std::vector<Tensor> Inputs = prepareProgramInputs(Prog, Opts);
  // Before compiling and running: a run that fails can be replayed too.
  if (P.has("save-inputs"))
    saveInputs(Inputs, Prog.inputNames, P.get("save-inputs", "."));
  if (Kind == ExecutorKind::VM) {
    compileProgram(Prog, CO);
    reportPassTimes(CO);
  }

  std::vector<NamedOutput> Outputs;
  runWithStack(BigStackBytes, [&] {
    Engine E(Prog, Kind, Limits);
    Outputs = E.run(Inputs);
  });
  writeOutputs(Outputs, Prog.outputNames, OutDir);
  return 0;
}

} // namespace rivet::cli
