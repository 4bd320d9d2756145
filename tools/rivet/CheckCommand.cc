//===- CheckCommand.cc - rivet check --------------------------------------===//
//
// Differential check: runs the reference interpreter and the VM on the same
// inputs and prints, per output, the max absolute and relative error and
// PASS/FAIL; exit 0 when every output is within tolerance, 1 otherwise.
// With --expected DIR the VM is also compared with given .npy outputs.
//
// With --bisect-passes: which compilation step first makes them disagree.
//
//===----------------------------------------------------------------------===//
#include "BisectPasses.h"
#include "Commands.h"
#include "Engine.h"
#include "Localize.h"
#include "Options.h"
#include "Program.h"
#include "TensorComparison.h"

#include "kernels/Error.h"
#include "kernels/Npy.h"
#include "kernels/StringTable.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

namespace rivet::cli {

const char *const CheckUsage =
    "usage: rivet check PROGRAM.rvir|MODEL.onnx [options]\n"
    "  --input NAME=FILE.npy   value of input NAME (repeatable)\n"
    "  --random-inputs         generate missing inputs (seeded, declared "
    "shape)\n"
    "  --seed N                seed for --random-inputs (default 0)\n"
    "  --shape NAME=AxB        shape of a generated input with dynamic dims\n"
    "  --rtol R --atol A       tolerance: |vm - ref| <= A + R * |ref|\n"
    "                          (default 1e-4 and 1e-5)\n"
    "  --expected DIR          also compare the VM with DIR/output_<i>.npy\n"
    "                          (e.g. PyTorch's outputs), same tolerance\n"
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
    "  --localize              compare every operator's value, not only the\n"
    "                          outputs, and report on stderr where the VM\n"
    "                          first diverges (origin: ONNX node or .rvir\n"
    "                          line:column; which run; whether its inputs\n"
    "                          still agreed) and the largest divergences\n"
    "  --json                  with --localize or --bisect-passes: the report\n"
    "                          as JSON on stdout (the text on stderr)\n"
    "  --worst N               with --localize: rows of the table (default "
    "10)\n"
    "  --inject-fault ORIGIN[:SCALE]   with --localize: perturb, in the VM\n"
    "                          only, the first output of the kernel that\n"
    "                          computes ORIGIN (by SCALE x its magnitude,\n"
    "                          default 1e-2), to see the report name it\n"
    "  --bisect-passes         find the first compilation step (each pass\n"
    "                          that runs, then anchor selection and codegen)\n"
    "                          after which the VM diverges: compiles with the\n"
    "                          first K steps only, binary search over K\n"
    "  --bisect-linear         with --bisect-passes: try K = 0, 1, 2, ...\n"
    "  --print-diff            with --bisect-passes: that step's IR diff\n";

namespace {

double parseTolerance(const std::string &Text, const std::string &Flag) {
  try {
    size_t Used = 0;
    double V = std::stod(Text, &Used);
    if (Used == Text.size() && V >= 0 && std::isfinite(V))
      return V;
  } catch (const std::exception &) {
  }
  throw UsageError(fmt::format(
      "option '--{}' expects a non-negative number, got '{}'", Flag, Text));
}

} // namespace

int checkCommand(const std::vector<std::string> &ArgsIn) {
  std::vector<std::string> Args = ArgsIn;
  std::optional<int> Level = takeOptLevel(Args);
  std::vector<FlagSpec> Flags = inputFlags();
  Flags.push_back({"rtol", true, false});
  Flags.push_back({"atol", true, false});
  Flags.push_back({"expected", true, false});
  Flags.push_back({"localize", false, false});
  Flags.push_back({"json", false, false});
  Flags.push_back({"worst", true, false});
  Flags.push_back({"inject-fault", true, false});
  Flags.push_back({"bisect-passes", false, false});
  Flags.push_back({"bisect-linear", false, false});
  Flags.push_back({"print-diff", false, false});
  Flags.push_back(threadsFlag());
  Flags.push_back(maxCallDepthFlag());
  for (const FlagSpec &F : compileFlags())
    Flags.push_back(F);
  Flags.push_back({"help", false, false});
  ParsedArgs P = parseArgs(Args, Flags);
  if (P.has("help")) {
    std::fputs(CheckUsage, stdout);
    return 0;
  }
  if (P.positional.size() != 1)
    throw UsageError(P.positional.empty()
                         ? "check: missing PROGRAM (a .rvir or .onnx file)"
                         : "check: expected one PROGRAM, got several");
  double Rtol = parseTolerance(P.get("rtol", "1e-4"), "rtol");
  double Atol = parseTolerance(P.get("atol", "1e-5"), "atol");
  InputOptions Opts = inputOptionsFrom(P);
  applyThreadsFlag(P);
  ExecutionLimits Limits = executionLimitsFrom(P);
  vm::CompileOptions CO = compileOptionsFrom(Level, P, vm::NativeCode::Jit);
  if (isRvxPath(P.positional[0]))
    fail("{}: check compares the VM with the reference interpreter, which "
         "needs the model (.onnx or .rvir), not a .rvx file",
         P.positional[0]);

  if (P.has("expected")) {
    std::error_code EC;
    if (!std::filesystem::is_directory(P.get("expected", ""), EC))
      fail("check: --expected {}: not a directory", P.get("expected", ""));
  }
  bool Localize = P.has("localize");
  bool Bisect = P.has("bisect-passes");
  if (Localize && Bisect)
    throw UsageError("check: --localize and --bisect-passes do not combine");
  for (const char *F : {"worst", "inject-fault"})
    if (P.has(F) && !Localize)
      throw UsageError(
          fmt::format("check: --{} is an option of --localize", F));
  for (const char *F : {"bisect-linear", "print-diff"})
    if (P.has(F) && !Bisect)
      throw UsageError(
          fmt::format("check: --{} is an option of --bisect-passes", F));
  if (P.has("json") && !Localize && !Bisect)
    throw UsageError(
        "check: --json is an option of --localize and --bisect-passes");
  if (Bisect && P.has("expected"))
    throw UsageError("check: --expected is not an option of --bisect-passes");
  Program Prog = loadProgram(P.positional[0]);
  std::vector<Tensor> Inputs = prepareProgramInputs(Prog, Opts);
  if (Bisect) {
    BisectCheckOptions BO;
    BO.rtol = Rtol, BO.atol = Atol;
    BO.linear = P.has("bisect-linear");
    BO.printDiff = P.has("print-diff");
    BO.json = P.has("json");
    return bisectPassesCheck(Prog, Inputs, CO, Limits, BO);
  }
  compileProgram(Prog, CO);
  reportPassTimes(CO);

  if (Localize) {
    LocalizeOptions LO;
    LO.rtol = Rtol, LO.atol = Atol;
    if (P.has("worst"))
      LO.worst = (size_t)parseUnsigned(P.get("worst", ""), "worst");
    if (P.has("inject-fault"))
      parseFaultSpec(P.get("inject-fault", ""), Prog, LO);
    LocalizeReport R = localizeDivergence(Prog, Inputs, Limits, LO);
    std::fputs(localizeText(R).c_str(), stderr);
    if (P.has("json"))
      std::fputs(localizeJson(R).c_str(), stdout);
    return R.ok ? 0 : 1;
  }

  std::vector<NamedOutput> Ref, Vm;
  runWithStack(BigStackBytes, [&] {
    Engine R(Prog, ExecutorKind::Interp, Limits);
    Ref = R.run(Inputs);
    Engine V(Prog, ExecutorKind::VM, Limits);
    Vm = V.run(Inputs);
  });

  std::printf("%s: reference interpreter vs VM (-O%d), rtol %g, atol %g\n",
              Prog.path.c_str(), CO.optLevel, Rtol, Atol);
  bool AllPass = true;
  if (Ref.size() != Vm.size()) {
    std::printf("FAIL: the reference gives %zu outputs, the VM %zu\n",
                Ref.size(), Vm.size());
    AllPass = false;
  }
  for (size_t I = 0; I < Ref.size() && I < Vm.size(); ++I) {
    const NamedOutput &R = Ref[I];
    std::string Label = R.name();
    if (R.result < Prog.outputNames.size())
      Label += fmt::format(" ('{}')", Prog.outputNames[R.result]);
    Comparison C;
    if (Vm[I].name() != R.name()) {
      C.pass = false;
      C.note = fmt::format("the VM's output is {}", Vm[I].name());
    } else {
      C = compareTensors(Vm[I].tensor, R.tensor, Rtol, Atol);
    }
    AllPass &= C.pass;
    std::string Type =
        R.tensor.defined() ? R.tensor.typeString() : std::string("none");
    std::printf("%-28s %-24s max abs %-11.4g max rel %-11.4g %s%s\n",
                Label.c_str(), Type.c_str(), C.maxAbs, C.maxRel,
                C.pass ? "PASS" : "FAIL",
                C.note.empty() ? "" : (" (" + C.note + ")").c_str());
    if (!P.has("expected") || !R.tensor.defined())
      continue;
    // The VM against a third opinion, e.g. the framework the model came from.
    std::filesystem::path File =
        std::filesystem::path(P.get("expected", ".")) / (R.name() + ".npy");
    Comparison X;
    if (!std::filesystem::exists(File)) {
      X.pass = false;
      X.note = "no such file";
    } else {
      X = compareTensors(Vm[I].tensor, readNpy(File.string()), Rtol, Atol);
    }
    AllPass &= X.pass;
    std::printf("  vs %-49s max abs %-11.4g max rel %-11.4g %s%s\n",
                File.string().c_str(), X.maxAbs, X.maxRel,
                X.pass ? "PASS" : "FAIL",
                X.note.empty() ? "" : (" (" + X.note + ")").c_str());
  }
  std::printf("%s\n", AllPass ? "PASS" : "FAIL");
  return AllPass ? 0 : 1;
}

} // namespace rivet::cli
