//===- main.cc - rivet-run: the deployment runner -------------------------===//
//
// Runs a .rvx executable with the runtime library alone (no compiler, no
// LLVM, no ONNX): loads it, checks the .npy inputs against @main's
// parameters, runs @main on a VirtualMachine and writes output_<i>.npy
// files like `rivet run`, or times it (--bench). It is what ships with
// librivet_runtime to a machine that only runs models, e.g. the GPU check
// bundle (tools/scripts/gpu-check.sh). Every error is one "error:" line on
// stderr and exit code 1, never a crash.
//
//===----------------------------------------------------------------------===//
#include "rivet/Options.h"

#include "kernels/Error.h"
#include "kernels/Threading.h"
#include "vm/Executable.h"
#include "vm/MainIO.h"
#include "vm/VirtualMachine.h"
#include "vm/cuda/Gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <vector>

using namespace rivet;
using rivet::cli::FlagSpec;
using rivet::cli::jsonString;
using rivet::cli::ParsedArgs;
using rivet::cli::UsageError;

static const char *const Usage =
    "usage: rivet-run EXE.rvx [options]\n"
    "  --input NAME=FILE.npy   value of input NAME of @main (repeatable;\n"
    "                          every input must be given)\n"
    "  --output-dir DIR        where output_<i>.npy go (default .; with\n"
    "                          --bench, outputs are written only when given)\n"
    "  --threads N             intra-op threads of CPU kernels (default:\n"
    "                          every core, or $RIVET_NUM_THREADS; 0: every "
    "core)\n"
    "  --repeat N              run @main N times, writing the outputs of\n"
    "                          the last (checks what repeated runs reuse:\n"
    "                          CUDA graphs are captured on the second run\n"
    "                          and replayed from the third)\n"
    "  --bench N               time N runs of @main after the warmup and\n"
    "                          print their median, min and mean\n"
    "  --warmup W              untimed runs before them (default 3)\n"
    "  --device-resident       with --bench on a CUDA executable: inputs\n"
    "                          uploaded once and results left on the GPU,\n"
    "                          so the times are the GPU's work alone\n"
    "  --cuda-graphs on|off    replay repeated runs of GPU work as CUDA\n"
    "                          graphs (default on, or $RIVET_CUDA_GRAPHS)\n"
    "  --json                  print one JSON line instead of text (the\n"
    "                          timings, the device, the files written)\n";

/// Where the executable's kernels run, for the reports of --bench and --json.
static const char *exeDevice(const vm::Executable &Exe) {
  return Exe.needsGpu() ? "cuda" : "cpu";
}

namespace {

using Clock = std::chrono::steady_clock;

double millisSince(Clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
}

struct Options {
  std::string exe;
  std::map<std::string, std::string> inputs; // name -> .npy file
  std::string outputDir = ".";
  bool outputDirGiven = false;
  uint64_t benchRuns = 0; // 0: run (repeat times) and write the outputs
  uint64_t repeat = 1;
  uint64_t warmup = 3;
  bool deviceResident = false;
  std::optional<bool> cudaGraphs;
  bool json = false;
  std::optional<uint64_t> threads;
};

uint64_t countFlag(const ParsedArgs &P, const std::string &Flag, uint64_t Min,
                   uint64_t Max) {
  uint64_t N = cli::parseUnsigned(P.get(Flag, ""), Flag);
  if (N < Min || N > Max)
    throw UsageError(fmt::format("option '--{}' expects {} to {}, got {}", Flag,
                                 Min, Max, N));
  return N;
}

/// Parses the command line; nullopt for --help (usage printed).
std::optional<Options> parseOptions(const std::vector<std::string> &Args) {
  std::vector<FlagSpec> Flags = {{"input", true, true},
                                 {"output-dir", true, false},
                                 {"threads", true, false},
                                 {"bench", true, false},
                                 {"warmup", true, false},
                                 {"json", false, false},
                                 {"device-resident", false, false},
                                 {"cuda-graphs", true, false},
                                 {"repeat", true, false},
                                 {"help", false, false}};
  ParsedArgs P = cli::parseArgs(Args, Flags);
  if (P.has("help")) {
    std::fputs(Usage, stdout);
    return std::nullopt;
  }
  if (P.positional.size() != 1)
    throw UsageError(P.positional.empty()
                         ? "missing EXE.rvx"
                         : "expected one EXE.rvx, got several");
  Options O;
  O.exe = P.positional[0];
  for (const std::string &A : P.all("input")) {
    auto [Name, File] = cli::splitAssignment(A, "input");
    if (!O.inputs.emplace(Name, File).second)
      throw UsageError(fmt::format("input '{}' given more than once", Name));
  }
  O.outputDirGiven = P.has("output-dir");
  O.outputDir = P.get("output-dir", ".");
  if (P.has("threads"))
    O.threads = countFlag(P, "threads", 0, 1024);
  if (P.has("bench"))
    O.benchRuns = countFlag(P, "bench", 1, 10000000);
  if (P.has("repeat")) {
    if (P.has("bench"))
      throw UsageError("option '--repeat' does not go with --bench");
    O.repeat = countFlag(P, "repeat", 1, 1000000);
  }
  O.deviceResident = P.has("device-resident");
  if (O.deviceResident && !P.has("bench"))
    throw UsageError("option '--device-resident' needs --bench N");
  if (P.has("warmup")) {
    if (!P.has("bench"))
      throw UsageError("option '--warmup' needs --bench N");
    O.warmup = countFlag(P, "warmup", 0, 10000000);
  }
  O.json = P.has("json");
  if (P.has("cuda-graphs")) {
    std::string G = P.get("cuda-graphs", "");
    if (G != "on" && G != "off")
      throw UsageError(
          fmt::format("option '--cuda-graphs' expects on or off, got '{}'", G));
    O.cudaGraphs = G == "on";
  }
  return O;
}

/// Writes the result's outputs; returns the files written and prints the
/// per-output lines unless Quiet.
std::vector<std::string> writeOutputs(const vm::ObjectRef &Result,
                                      const vm::Executable &Exe,
                                      const std::string &Dir, bool Quiet) {
  size_t NumResults = std::max<size_t>(Exe.outputNames.size(), 1);
  std::vector<vm::OutputTensor> Outs =
      vm::flattenMainResult(Result, Exe, NumResults);
  std::vector<std::string> Lines =
      vm::writeMainOutputs(Outs, Exe.outputNames, Dir);
  std::vector<std::string> Files;
  for (const vm::OutputTensor &O : Outs)
    if (O.tensor.defined())
      Files.push_back(
          (std::filesystem::path(Dir) / (O.name() + ".npy")).string());
  if (!Quiet) {
    for (const std::string &L : Lines)
      std::printf("%s\n", L.c_str());
    if (Outs.empty())
      std::printf("no outputs (the result has no tensors)\n");
  }
  return Files;
}

int run(const std::vector<std::string> &Args) {
  std::optional<Options> Parsed = parseOptions(Args);
  if (!Parsed)
    return 0;
  const Options &O = *Parsed;
  if (O.threads)
    setNumThreads((int)*O.threads); // 0: one per hardware thread

  Clock::time_point T0 = Clock::now();
  std::shared_ptr<vm::Executable> Exe = vm::Executable::load(O.exe);
  std::vector<Tensor> Inputs = vm::readMainInputs(*Exe, O.inputs);
  // The VM sets up the executable's device code (if any) here, so that
  // load_ms counts it and the first run does not.
  vm::VirtualMachine VM(Exe);
  double LoadMs = millisSince(T0);
  const char *Device = exeDevice(*Exe);
  if (O.cudaGraphs && Exe->needsGpu())
    vm::cuda::Gpu::get().setGraphsEnabled(*O.cudaGraphs);
  bool Graphs = Exe->needsGpu() && vm::cuda::Gpu::get().graphsEnabled();

  std::vector<vm::ObjectRef> Args0;
  for (const Tensor &T : Inputs)
    Args0.push_back(vm::makeTensor(T));

  auto GraphLaunchesSoFar = [&]() -> size_t {
    return Exe->needsGpu() ? vm::cuda::Gpu::get().graphLaunches() : 0;
  };
  if (O.benchRuns == 0) {
    vm::ObjectRef R;
    double RunMs = 0;
    for (uint64_t I = 0; I < O.repeat; ++I) {
      R = nullptr; // the previous results die before the next run
      Clock::time_point T1 = Clock::now();
      R = VM.invoke("main", Args0);
      RunMs = millisSince(T1);
    }
    std::vector<std::string> Files = writeOutputs(R, *Exe, O.outputDir, O.json);
    if (O.json) {
      std::string J = fmt::format(
          "{{\"exe\": {}, \"device\": \"{}\", \"threads\": {}, "
          "\"load_ms\": {:.3f}, \"run_ms\": {:.3f}, \"runs\": {}, "
          "\"cuda_graphs\": {}, \"graph_launches\": {}, \"outputs\": [",
          jsonString(O.exe), Device, numThreads(), LoadMs, RunMs, O.repeat,
          Graphs ? "true" : "false", GraphLaunchesSoFar());
      for (size_t I = 0; I < Files.size(); ++I)
        J += (I ? ", " : "") + jsonString(Files[I]);
      std::printf("%s]}\n", J.c_str());
    }
    return 0;
  }

  // The outputs of a benchmark come from its first (untimed) run.
  uint64_t Warm = 0;
  if (O.outputDirGiven) {
    writeOutputs(VM.invoke("main", Args0), *Exe, O.outputDir, O.json);
    ++Warm;
  }
  if (O.deviceResident) {
    if (!Exe->needsGpu())
      throw UsageError("--device-resident needs a CUDA executable");
    for (vm::ObjectRef &A : Args0)
      A = VM.onDevice(A, Device::CUDA);
    VM.setResultsToHost(false);
  }
  for (; Warm < O.warmup; ++Warm)
    VM.invoke("main", Args0);
  size_t GraphLaunches0 = GraphLaunchesSoFar();
  std::vector<double> Ms;
  Ms.reserve(O.benchRuns);
  for (uint64_t I = 0; I < O.benchRuns; ++I) {
    // invoke returns main's result on the host, so a GPU run is complete;
    // a device-resident one is waited for.
    VM.synchronize();
    Clock::time_point T1 = Clock::now();
    VM.invoke("main", Args0);
    VM.synchronize();
    Ms.push_back(millisSince(T1));
  }
  double Mean = 0;
  for (double M : Ms)
    Mean += M;
  Mean /= (double)Ms.size();
  std::sort(Ms.begin(), Ms.end());
  size_t N = Ms.size();
  double Median = N % 2 ? Ms[N / 2] : (Ms[N / 2 - 1] + Ms[N / 2]) / 2;
  // Graph replays during the timed runs (0 without graphs).
  size_t GraphLaunches = GraphLaunchesSoFar() - GraphLaunches0;
  if (O.json)
    std::printf("{\"exe\": %s, \"median_ms\": %.6f, \"min_ms\": %.6f, "
                "\"mean_ms\": %.6f, \"max_ms\": %.6f, \"runs\": %zu, "
                "\"warmup\": %llu, \"device\": \"%s\", \"threads\": %d, "
                "\"load_ms\": %.3f, \"device_resident\": %s, "
                "\"cuda_graphs\": %s, \"graph_launches\": %zu}\n",
                jsonString(O.exe).c_str(), Median, Ms.front(), Mean, Ms.back(),
                N, (unsigned long long)O.warmup, Device, numThreads(), LoadMs,
                O.deviceResident ? "true" : "false", Graphs ? "true" : "false",
                GraphLaunches);
  else
    std::printf("%s: %zu runs after %llu warmup (%s, intra-op threads %d): "
                "median %.3f ms, min %.3f ms, mean %.3f ms (load %.1f ms)\n",
                O.exe.c_str(), N, (unsigned long long)O.warmup, Device,
                numThreads(), Median, Ms.front(), Mean, LoadMs);
  return 0;
}

} // namespace

int main(int Argc, char **Argv) {
  std::vector<std::string> Args(Argv + 1, Argv + Argc);
  try {
    if (Args.empty())
      throw UsageError("missing EXE.rvx");
    return run(Args);
  } catch (const UsageError &E) {
    std::fprintf(stderr, "error: %s (see rivet-run --help)\n", E.what());
  } catch (const Error &E) {
    std::fprintf(stderr, "error: %s\n", E.what());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "error: out of memory\n");
  } catch (const std::exception &E) {
    std::fprintf(stderr, "error: internal error: %s\n", E.what());
  } catch (...) {
    std::fprintf(stderr, "error: internal error (unknown exception)\n");
  }
  return 1;
}
