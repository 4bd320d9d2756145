//===- BenchCommand.cc - rivet bench --------------------------------------===//
//
// Times @main on the VM (default) or the reference interpreter with random
// (or given) inputs and prints one JSON object. Runs at least --repeat times
// and for at least --min-time seconds, after --warmup untimed runs. Kernels
// use --threads N intra-op threads; with --concurrency C, C threads each run
// their own engine (VMs share the one executable) and every run's latency
// counts. --profile times each InvokeKernel instruction during the timed
// runs (two clock reads per kernel call) and reports them per run. --serve
// keeps the engine and times one batch per line read on stdin, so that a
// driver can interleave other engines' batches with Rivet's in short rounds.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Engine.h"
#include "Options.h"
#include "Program.h"

#include "kernels/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

namespace rivet::cli {

const char *const BenchUsage =
    "usage: rivet bench PROGRAM.rvir|MODEL.onnx|EXE.rvx [options]\n"
    "  --input NAME=FILE.npy   value of input NAME (repeatable); missing\n"
    "                          inputs are random (seeded, declared shape)\n"
    "  --seed N --shape NAME=AxB   as for run\n"
    "  --warmup N              untimed runs first (default 3)\n"
    "  --repeat N              at least N timed runs (default 10)\n"
    "  --min-time S            and at least S seconds of them (default 0.5)\n"
    "  --max-call-depth N      nested (non-tail) calls allowed (default\n"
    "                          100000), the same on both executors\n"
    "  --threads N             intra-op threads (default: every core, or\n"
    "                          $RIVET_NUM_THREADS; 0: every core)\n"
    "  --concurrency C         C threads, one engine each (default 1)\n"
    "  --executor vm|interp    the VM (default) or the reference interpreter\n"
    "  -O0 .. -O3              optimization level of the VM (default -O3)\n"
    "  --no-memory-plan        compile without the memory planner\n"
    "  --print-after PASS, --disable-pass PASS, --enable-pass PASS,\n"
    "  --time-passes           the pass flags of rivet compile --help\n"
    "  --codegen off|jit|so    native kernels for fused groups: none, JIT\n"
    "                          (default) or a shared object\n"
    "  --cpu NAME, --mattr +F,-G   target of the native code (default: host)\n"
    "  --target cpu|cuda       where fused kernels run (default cpu)\n"
    "  --input-shape NAME=AxB  compile for input NAME of this shape only\n"
    "  --profile               VM: time every kernel call of the timed runs\n"
    "                          (adds a \"profile\" array, slowest first, and\n"
    "                          a table of the 25 slowest on stderr)\n"
    "  --serve                 after the warmup, time one batch (--repeat,\n"
    "                          --min-time) per line read on stdin and print\n"
    "                          a JSON line for each, until end of input\n";

namespace {

using Clock = std::chrono::steady_clock;

/// Runs E on Inputs at least Repeat times and for at least MinTime
/// seconds, appending each run's latency (ms) to Millis.
void timeRuns(Engine &E, const std::vector<Tensor> &Inputs, uint64_t Repeat,
              double MinTime, std::vector<double> &Millis) {
  size_t First = Millis.size();
  Clock::time_point Start = Clock::now();
  while (Millis.size() - First < Repeat ||
         std::chrono::duration<double>(Clock::now() - Start).count() <
             MinTime) {
    Clock::time_point T0 = Clock::now();
    E.runDiscard(Inputs);
    Millis.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - T0).count());
    if (Millis.size() - First >= 10000000)
      break;
  }
}

/// "median_ms", "min_ms", "max_ms", "mean_ms" and "stddev_ms" of the
/// latencies (at least one), as JSON members.
std::string latencyJson(std::vector<double> All) {
  std::sort(All.begin(), All.end());
  size_t N = All.size();
  double Median = N % 2 ? All[N / 2] : (All[N / 2 - 1] + All[N / 2]) / 2;
  double Mean = std::accumulate(All.begin(), All.end(), 0.0) / (double)N;
  double Var = 0;
  for (double X : All)
    Var += (X - Mean) * (X - Mean);
  double Stddev = N > 1 ? std::sqrt(Var / (double)(N - 1)) : 0.0;
  return fmt::format("\"median_ms\": {:.6f}, \"min_ms\": {:.6f}, "
                     "\"max_ms\": {:.6f}, \"mean_ms\": {:.6f}, "
                     "\"stddev_ms\": {:.6f}",
                     Median, All.front(), All.back(), Mean, Stddev);
}

/// --serve: one engine, warmed up, times a batch per line of stdin and
/// prints {"batch": I, "repeat": N, "median_ms": ...} for each.
void serveBatches(const Program &Prog, ExecutorKind Kind,
                  const ExecutionLimits &Limits,
                  const std::vector<Tensor> &Inputs, uint64_t Warmup,
                  uint64_t Repeat, double MinTime) {
  runWithStack(BigStackBytes, [&] {
    Engine E(Prog, Kind, Limits);
    for (uint64_t I = 0; I < Warmup; ++I)
      E.runDiscard(Inputs);
    std::string Line;
    for (uint64_t Batch = 0; std::getline(std::cin, Line); ++Batch) {
      std::vector<double> Millis;
      timeRuns(E, Inputs, Repeat, MinTime, Millis);
      std::string J = fmt::format("{{\"batch\": {}, \"repeat\": {}, {}}}\n",
                                  Batch, Millis.size(), latencyJson(Millis));
      std::fputs(J.c_str(), stdout);
      std::fflush(stdout);
    }
  });
}

struct ThreadResult {
  std::vector<double> millis;
  uint64_t instructions = 0;
  size_t peakBytes = 0, pooledBytes = 0;
  std::vector<vm::VirtualMachine::KernelTime> kernelTimes; // --profile
  std::exception_ptr error;
};

/// The engines' kernel times merged per instruction, per run (Runs in
/// all), slowest first, as a JSON array; the 25 slowest also go to stderr
/// as a table.
std::string profileJson(const std::vector<ThreadResult> &Results,
                        const vm::Executable &Exe, size_t Runs) {
  std::map<std::pair<uint32_t, uint32_t>, vm::VirtualMachine::KernelTime> ByPc;
  double Total = 0;
  for (const ThreadResult &R : Results)
    for (const vm::VirtualMachine::KernelTime &T : R.kernelTimes) {
      vm::VirtualMachine::KernelTime &M = ByPc[{T.function, T.pc}];
      if (M.calls == 0)
        M = T;
      else {
        M.seconds += T.seconds;
        M.calls += T.calls;
      }
      Total += T.seconds;
    }
  std::vector<vm::VirtualMachine::KernelTime> Sorted;
  for (auto &[Pc, T] : ByPc)
    Sorted.push_back(T);
  std::stable_sort(
      Sorted.begin(), Sorted.end(),
      [](const auto &A, const auto &B) { return A.seconds > B.seconds; });
  double PerRun = 1e3 / (double)std::max<size_t>(Runs, 1);
  fmt::print(stderr, "{:>9} {:>6} {:>6}  {:<28} {}\n", "ms/run", "share",
             "calls", "instruction", "kernel (inputs)");
  std::string J = "[";
  for (size_t I = 0; I < Sorted.size(); ++I) {
    const vm::VirtualMachine::KernelTime &T = Sorted[I];
    const std::string &Fn = Exe.functions[T.function].name;
    double Share = Total > 0 ? T.seconds / Total : 0;
    J += fmt::format("{}{{\"function\": {}, \"pc\": {}, \"kernel\": {}, "
                     "\"inputs\": {}, \"calls_per_run\": {:.2f}, "
                     "\"ms_per_run\": {:.6f}, \"share\": {:.4f}}}",
                     I ? ", " : "", jsonString(Fn), T.pc, jsonString(T.kernel),
                     jsonString(T.inputs), (double)T.calls * PerRun / 1e3,
                     T.seconds * PerRun, Share);
    if (I < 25)
      fmt::print(stderr, "{:>9.4f} {:>5.1f}% {:>6.1f}  {:<28} {} ({})\n",
                 T.seconds * PerRun, 100 * Share,
                 (double)T.calls * PerRun / 1e3, fmt::format("{}:{}", Fn, T.pc),
                 T.kernel, T.inputs);
  }
  fmt::print(stderr, "{:>9.4f}   in {} kernel instructions\n", Total * PerRun,
             Sorted.size());
  return J + "]";
}

} // namespace

int benchCommand(const std::vector<std::string> &ArgsIn) {
  std::vector<std::string> Args = ArgsIn;
  std::optional<int> Level = takeOptLevel(Args);
  std::vector<FlagSpec> Flags = inputFlags();
  for (const char *F :
       {"warmup", "repeat", "min-time", "concurrency", "executor"})
    Flags.push_back({F, true, false});
  for (const FlagSpec &F : compileFlags())
    Flags.push_back(F);
  Flags.push_back(threadsFlag());
  Flags.push_back(maxCallDepthFlag());
  Flags.push_back({"profile", false, false});
  Flags.push_back({"serve", false, false});
  Flags.push_back({"help", false, false});
  ParsedArgs P = parseArgs(Args, Flags);
  if (P.has("help")) {
    std::fputs(BenchUsage, stdout);
    return 0;
  }
  if (P.positional.size() != 1)
    throw UsageError(P.positional.empty()
                         ? "bench: missing PROGRAM (a .rvir, .onnx or .rvx "
                           "file)"
                         : "bench: expected one PROGRAM, got several");
  ExecutorKind Kind = parseExecutor(P.get("executor", "vm"), "bench");
  uint64_t Warmup = parseUnsigned(P.get("warmup", "3"), "warmup");
  uint64_t Repeat =
      std::max<uint64_t>(1, parseUnsigned(P.get("repeat", "10"), "repeat"));
  uint64_t Concurrency =
      parseUnsigned(P.get("concurrency", "1"), "concurrency");
  if (Concurrency < 1 || Concurrency > 256)
    throw UsageError("option '--concurrency' expects 1 to 256");
  double MinTime = 0.5;
  {
    std::string T = P.get("min-time", "0.5");
    char *End = nullptr;
    MinTime = std::strtod(T.c_str(), &End);
    if (T.empty() || *End || !(MinTime >= 0) || MinTime > 3600)
      throw UsageError(fmt::format(
          "option '--min-time' expects seconds (0 to 3600), got '{}'", T));
  }
  InputOptions Opts = inputOptionsFrom(P);
  int IntraOpThreads = applyThreadsFlag(P);
  ExecutionLimits Limits = executionLimitsFrom(P);
  vm::CompileOptions CO = compileOptionsFrom(Level, P, vm::NativeCode::Jit);
  Opts.random = true; // bench generates whatever is not given
  bool Profile = P.has("profile");
  if (Profile && Kind != ExecutorKind::VM)
    throw UsageError("option '--profile' times the VM's kernels (--executor "
                     "vm)");

  bool Serve = P.has("serve");
  if (Serve && (Profile || Concurrency != 1))
    throw UsageError("option '--serve' times one engine: it takes neither "
                     "--profile nor --concurrency");

  Program Prog = loadProgram(P.positional[0]);
  if (Kind == ExecutorKind::Interp && Prog.isExecutable())
    fail("{}: a .rvx file runs on the VM only (--executor vm)", Prog.path);
  std::vector<Tensor> Inputs = prepareProgramInputs(Prog, Opts);
  if (Kind == ExecutorKind::VM)
    compileProgram(Prog, CO);
  reportPassTimes(CO);
  if (Serve) {
    serveBatches(Prog, Kind, Limits, Inputs, Warmup, Repeat, MinTime);
    return 0;
  }

  std::vector<ThreadResult> Results(Concurrency);
  auto Body = [&](ThreadResult &R) {
    runWithStack(BigStackBytes, [&] {
      Engine E(Prog, Kind, Limits);
      for (uint64_t I = 0; I < Warmup; ++I)
        E.runDiscard(Inputs);
      uint64_t Before = E.machine() ? E.machine()->instructionCount() : 0;
      if (E.machine()) {
        E.machine()->resetPeak();
        E.machine()->setProfiling(Profile);
      }
      timeRuns(E, Inputs, Repeat, MinTime, R.millis);
      if (vm::VirtualMachine *VM = E.machine()) {
        R.instructions = VM->instructionCount() - Before;
        R.peakBytes = VM->peakBytesInUse();
        R.pooledBytes = VM->pooledBytes();
        R.kernelTimes = VM->kernelTimes();
        VM->setProfiling(false);
      }
    });
  };
  Clock::time_point WallStart = Clock::now();
  if (Concurrency == 1) {
    Body(Results[0]);
  } else {
    std::vector<std::thread> Pool;
    for (ThreadResult &R : Results)
      Pool.emplace_back([&Body, &R] {
        try {
          Body(R);
        } catch (...) {
          R.error = std::current_exception();
        }
      });
    for (std::thread &T : Pool)
      T.join();
    for (ThreadResult &R : Results)
      if (R.error)
        std::rethrow_exception(R.error);
  }
  double WallS =
      std::chrono::duration<double>(Clock::now() - WallStart).count();

  std::vector<double> All;
  uint64_t Instructions = 0;
  size_t Peak = 0, Pooled = 0;
  for (const ThreadResult &R : Results) {
    All.insert(All.end(), R.millis.begin(), R.millis.end());
    Instructions += R.instructions;
    Peak = std::max(Peak, R.peakBytes);
    Pooled = std::max(Pooled, R.pooledBytes);
  }
  size_t N = All.size();

  std::string J = "{";
  J += fmt::format("\"model\": {}, ", jsonString(Prog.path));
  J += fmt::format("\"executor\": \"{}\", ", executorName(Kind));
  // Every timed run ends with main's result on the host, which waits for
  // the GPU: the times are GPU times too.
  J += fmt::format("\"device\": \"{}\", ",
                   Kind == ExecutorKind::VM && Prog.exe && Prog.exe->needsGpu()
                       ? "cuda"
                       : "cpu");
  if (Kind == ExecutorKind::VM && !Prog.isExecutable())
    J += fmt::format("\"opt_level\": {}, \"memory_plan\": {}, "
                     "\"codegen\": \"{}\", ",
                     CO.optLevel, CO.planMemory ? "true" : "false",
                     codegenName(CO.codegen.mode));
  J += fmt::format("\"threads\": {}, \"concurrency\": {}, \"warmup\": {}, "
                   "\"repeat\": {}, ",
                   IntraOpThreads, Concurrency, Warmup, N);
  J += latencyJson(std::move(All));
  J += fmt::format(", \"total_s\": {:.3f}", WallS);
  if (Kind == ExecutorKind::VM)
    J += fmt::format(", \"instructions_per_run\": {:.1f}, "
                     "\"peak_bytes_in_use\": {}, \"pooled_bytes\": {}",
                     (double)Instructions / (double)N, Peak, Pooled);
  if (Profile)
    J += ", \"profile\": " + profileJson(Results, *Prog.exe, N);
  J += "}\n";
  std::fputs(J.c_str(), stdout);
  return 0;
}

} // namespace rivet::cli
