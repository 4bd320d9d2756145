//===- CompileCommand.cc - rivet compile ----------------------------------===//
//
// Compiles an ONNX model or .rvir program to a .rvx executable
// (docs/executable-format.md) that `rivet run` loads without the compiler.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Options.h"
#include "Program.h"

#include "kernels/Error.h"
#include "kernels/OutputFiles.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

namespace rivet::cli {

const char *const CompileUsage =
    "usage: rivet compile PROGRAM.rvir|MODEL.onnx -o OUT.rvx [options]\n"
    "  -o, --output OUT.rvx    the executable to write\n"
    "  -O0 .. -O3              optimization level (default -O3)\n"
    "  --target cpu            the target (only cpu so far)\n"
    "  --no-memory-plan        one storage per tensor (no planner)\n"
    "  --print-after PASS      print the module after PASS ('all': after "
    "each);\n"
    "                          repeatable\n"
    "  --disable-pass PASS     never run PASS (repeatable)\n"
    "  --enable-pass PASS      run PASS whatever the level (repeatable)\n"
    "  --time-passes           print each pass's time to stderr\n"
    "  --codegen off|jit|so    native kernels for fused groups: none, or a\n"
    "                          shared object in the .rvx (default so; jit\n"
    "                          executables cannot be saved)\n"
    "  --cpu NAME              target CPU of the native code (default: the\n"
    "                          host's), e.g. skylake-avx512, x86-64-v3\n"
    "  --mattr +F,-G           target features added or removed (LLVM names)\n"
    "  --target cpu|cuda       where fused kernels run (default cpu)\n"
    "  --input-shape NAME=AxB  for input NAME of this shape only: its\n"
    "                          symbolic extents become constants (no shape\n"
    "                          functions, one memory arena); other shapes are\n"
    "                          rejected when the executable runs; repeatable\n";

int compileCommand(const std::vector<std::string> &ArgsIn) {
  std::vector<std::string> Args = ArgsIn;
  std::optional<int> Level = takeOptLevel(Args);
  // "-o OUT" is the one short flag: spell it --output for the parser.
  for (std::string &A : Args)
    if (A == "-o")
      A = "--output";
  std::vector<FlagSpec> Flags = compileFlags();
  Flags.push_back({"output", true, false});
  Flags.push_back({"help", false, false});
  ParsedArgs P = parseArgs(Args, Flags);
  if (P.has("help")) {
    std::fputs(CompileUsage, stdout);
    return 0;
  }
  if (P.positional.size() != 1)
    throw UsageError(P.positional.empty()
                         ? "compile: missing PROGRAM (a .rvir or .onnx file)"
                         : "compile: expected one PROGRAM, got several");
  if (!P.has("output"))
    throw UsageError("compile: missing -o OUT.rvx");
  std::string Out = P.get("output", "");
  if (isRvxPath(P.positional[0]))
    fail("{}: already an executable; compile takes a .onnx or .rvir file",
         P.positional[0]);

  vm::CompileOptions Opts =
      compileOptionsFrom(Level, P, vm::NativeCode::SharedObject);
  if (Opts.codegen.mode == vm::NativeCode::Jit)
    throw UsageError("compile: --codegen jit code lives in this process only "
                     "and cannot be saved; use --codegen so or off");
  // Refused before compiling: a device or FIFO must not be replaced by a
  // regular file, nor the model by its executable.
  checkOutputTarget(Out);
  if (sameFile(Out, P.positional[0]))
    fail("compile: -o {} is the input program itself; refusing to overwrite "
         "it",
         Out);
  Program Prog = loadProgram(P.positional[0]);
  std::shared_ptr<vm::Executable> Exe = compileProgram(Prog, Opts);
  reportPassTimes(Opts);
  Exe->save(Out);
  size_t Instrs = 0;
  for (const vm::VMFunction &F : Exe->functions)
    Instrs += F.code.size();
  std::printf("%s: %zu functions, %zu instructions, %zu kernels, %zu "
              "constants (-O%d%s, codegen %s, target %s) -> %s (%ju bytes)\n",
              Prog.path.c_str(), Exe->functions.size(), Instrs,
              Exe->kernels.size(), Exe->constants.size(), Opts.optLevel,
              Opts.planMemory ? "" : ", no memory plan",
              codegenName(Opts.codegen.mode), Exe->needsGpu() ? "cuda" : "cpu",
              Out.c_str(), (uintmax_t)std::filesystem::file_size(Out));
  return 0;
}

} // namespace rivet::cli
