//===- main.cc - The rivet command-line tool ------------------------------===//
//
// Dispatches to a subcommand. Exit codes: 0 success, 1 a rivet::Error (bad
// program, bad input; printed as "error: ..."), 2 a usage error.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Options.h"

#include "kernels/Error.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

using namespace rivet::cli;

static const char *const MainUsage =
    "usage: rivet COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  compile PROGRAM.rvir|MODEL.onnx -o OUT.rvx [-O0..-O3]\n"
    "                   [--codegen off|so] [--cpu NAME] [--mattr +F,-G]\n"
    "                   compile to a .rvx executable\n"
    "  run PROGRAM.rvir|MODEL.onnx|EXE.rvx [--input NAME=FILE.npy ...]\n"
    "                   [--output-dir DIR]\n"
    "                   [--random-inputs [--seed N]] [--shape NAME=AxB]\n"
    "                   [--executor vm|interp] [-O0..-O3] [--threads N]\n"
    "                   [--codegen off|jit|so] [--cpu NAME] [--mattr +F,-G]\n"
    "                   run the model and write output_<i>.npy\n"
    "  check PROGRAM.rvir|MODEL.onnx [--input ...] [--random-inputs]\n"
    "                   [--rtol R --atol A] [--threads N] [--target cpu|cuda]\n"
    "                   [--localize [--worst N] [--inject-fault ORIGIN[:S]]]\n"
    "                   [--bisect-passes [--print-diff]] [--json]\n"
    "                   compare the VM with the reference interpreter; name\n"
    "                   the first diverging operator or compiler step\n"
    "  bench PROGRAM.rvir|MODEL.onnx|EXE.rvx [--input ...]\n"
    "                   [--warmup N --repeat N] [--threads N]\n"
    "                   [--concurrency C] [--profile] [--trace FILE.json]\n"
    "                   [--executor vm|interp]\n"
    "                   time @main; prints one JSON object\n"
    "  dump PROGRAM.rvir|MODEL.onnx|EXE.rvx\n"
    "                   [--ir|--optimized|--fused|--bytecode] [-O0..-O3]\n"
    "                   [--dot] [--origins]\n"
    "                   print the IR (as imported, optimized, or fused) or\n"
    "                   the bytecode; --dot: a Graphviz picture\n"
    "  ops [--markdown] list the IR operators and the ONNX operators (with\n"
    "                   opsets) the frontend translates\n"
    "  help [COMMAND]   show this help or a command's options\n";

static int help(const std::vector<std::string> &Args) {
  if (Args.empty()) {
    std::fputs(MainUsage, stdout);
    return 0;
  }
  if (Args[0] == "run") {
    std::fputs(RunUsage, stdout);
    return 0;
  }
  if (Args[0] == "dump") {
    std::fputs(DumpUsage, stdout);
    return 0;
  }
  if (Args[0] == "ops") {
    std::fputs(OpsUsage, stdout);
    return 0;
  }
  if (Args[0] == "compile") {
    std::fputs(CompileUsage, stdout);
    return 0;
  }
  if (Args[0] == "check") {
    std::fputs(CheckUsage, stdout);
    return 0;
  }
  if (Args[0] == "bench") {
    std::fputs(BenchUsage, stdout);
    return 0;
  }
  throw UsageError("help: unknown command '" + Args[0] + "'");
}

int main(int Argc, char **Argv) {
  std::vector<std::string> Args(Argv + 1, Argv + Argc);
  if (Args.empty()) {
    std::fputs(MainUsage, stderr);
    return 2;
  }
  std::string Cmd = Args[0];
  std::vector<std::string> Rest(Args.begin() + 1, Args.end());
  try {
    if (Cmd == "help" || Cmd == "--help" || Cmd == "-h")
      return help(Rest);
    if (Cmd == "run")
      return runCommand(Rest);
    if (Cmd == "dump")
      return dumpCommand(Rest);
    if (Cmd == "ops")
      return opsCommand(Rest);
    if (Cmd == "compile")
      return compileCommand(Rest);
    if (Cmd == "check")
      return checkCommand(Rest);
    if (Cmd == "bench")
      return benchCommand(Rest);
    throw UsageError("unknown command '" + Cmd + "'");
  } catch (const UsageError &E) {
    std::fprintf(stderr, "rivet: %s\n\n%s", E.what(), MainUsage);
    return 2;
  } catch (const rivet::Error &E) {
    std::fprintf(stderr, "error: %s\n", E.what());
    return 1;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "error: out of memory\n");
    return 1;
  } catch (const std::exception &E) {
    std::fprintf(stderr, "error: internal error: %s\n", E.what());
    return 1;
  }
}
