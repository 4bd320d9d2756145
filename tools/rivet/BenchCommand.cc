//===- BenchCommand.cc - rivet bench --------------------------------------===//
//
// Times @main on the VM (default) or the reference interpreter with random
// (or given) inputs and prints one JSON object. Runs at least --repeat times
// and for at least --min-time seconds, after --warmup untimed runs. Kernels
// use --threads N intra-op threads; with --concurrency C, C threads each run
// their own engine (VMs share the one executable) and every run's latency
// counts. --profile times each InvokeKernel instruction during the timed
// runs (two clock reads per kernel call) and reports them per run; --trace
// FILE also records each call (when, operand types, the pool's bytes in
// use) and writes a Chrome trace with the runs, the calls and, with
// --time-passes, the compile's passes. --serve keeps the engine and times
// one batch per line read on stdin, so that a driver can interleave other
// engines' batches with Rivet's in short rounds.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Engine.h"
#include "Options.h"
#include "Program.h"

#include "kernels/Error.h"
#include "vm/TensorArena.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
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
    "  --trace FILE.json       VM: write a Chrome trace (Perfetto,\n"
    "                          chrome://tracing) of the timed runs: every\n"
    "                          kernel call with its origin, shapes and\n"
    "                          bytes, the pool's bytes in use, and the\n"
    "                          compile's passes with --time-passes\n"
    "  --trace-limit N         kernel calls the trace keeps (default\n"
    "                          100000; later ones are counted, not kept)\n"
    "  --serve                 after the warmup, time one batch (--repeat,\n"
    "                          --min-time) per line read on stdin and print\n"
    "                          a JSON line for each, until end of input\n";

namespace {

using Clock = std::chrono::steady_clock;

/// A timed run's start and duration, for the trace.
struct RunSpan {
  Clock::time_point start;
  double millis;
};

/// Runs E on Inputs at least Repeat times and for at least MinTime
/// seconds, appending each run's latency (ms) to Millis, and the first
/// MaxSpans runs' spans to Spans.
void timeRuns(Engine &E, const std::vector<Tensor> &Inputs, uint64_t Repeat,
              double MinTime, std::vector<double> &Millis,
              std::vector<RunSpan> *Spans = nullptr, size_t MaxSpans = 0) {
  size_t First = Millis.size();
  Clock::time_point Start = Clock::now();
  while (Millis.size() - First < Repeat ||
         std::chrono::duration<double>(Clock::now() - Start).count() <
             MinTime) {
    Clock::time_point T0 = Clock::now();
    E.runDiscard(Inputs);
    Millis.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - T0).count());
    if (Spans && Spans->size() < MaxSpans)
      Spans->push_back({T0, Millis.back()});
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
  // --trace: the runs, the calls and their signatures, the calls past the
  // limit, and the names of the kernel-table entries.
  std::vector<RunSpan> runs;
  std::vector<vm::VirtualMachine::TracedCall> calls;
  std::vector<vm::VirtualMachine::CallSignature> signatures;
  uint64_t droppedCalls = 0;
  std::vector<std::string> kernelNames;
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

/// When the trace's compiler thread was busy (load and compile).
struct CompileSpans {
  Clock::time_point loadStart, loadEnd, compileStart, compileEnd;
  bool compiled = false; // a .rvx file is not compiled
};

int64_t nanosOf(Clock::time_point T) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             T.time_since_epoch())
      .count();
}

std::string jsonStrings(const std::vector<std::string> &Items) {
  std::string J = "[";
  for (size_t I = 0; I < Items.size(); ++I)
    J += (I ? ", " : "") + jsonString(Items[I]);
  return J + "]";
}

/// Writes the Chrome trace (JSON object format) of a bench to Path: names
/// for the process and its threads (tid 0: the compiler, 1 + I: engine
/// I), the load and compile with their passes (--time-passes), and per
/// engine its timed runs, its kernel calls ("X" events whose args hold the
/// origin, the operand types and the output bytes) and a counter of its
/// pool's bytes in use. Times are microseconds since the load began.
void writeTrace(const std::string &Path, const Program &Prog,
                const vm::CompileOptions &CO, const CompileSpans &Spans,
                const std::vector<ThreadResult> &Results, size_t Limit) {
  const vm::Executable &Exe = *Prog.exe;
  int64_t BaseNs = nanosOf(Spans.loadStart);
  auto UsOfNs = [&](int64_t Ns) { return (double)(Ns - BaseNs) / 1e3; };
  auto UsOf = [&](Clock::time_point T) { return UsOfNs(nanosOf(T)); };
  std::string J = "{\"traceEvents\": [\n";
  bool First = true;
  auto Emit = [&](const std::string &Event) {
    J += First ? "" : ",\n";
    J += Event;
    First = false;
  };
  auto Complete = [&](const std::string &Name, const char *Cat, size_t Tid,
                      double Ts, double Dur, const std::string &Args) {
    Emit(fmt::format("{{\"name\": {}, \"cat\": \"{}\", \"ph\": \"X\", "
                     "\"pid\": 1, \"tid\": {}, \"ts\": {:.3f}, \"dur\": "
                     "{:.3f}, \"args\": {{{}}}}}",
                     jsonString(Name), Cat, Tid, Ts, Dur, Args));
  };
  auto Metadata = [&](const char *What, size_t Tid, const std::string &Args) {
    Emit(fmt::format("{{\"name\": \"{}\", \"ph\": \"M\", \"pid\": 1, "
                     "\"tid\": {}, \"args\": {{{}}}}}",
                     What, Tid, Args));
  };
  Metadata("process_name", 0,
           "\"name\": " + jsonString("rivet bench " + Prog.path));
  Metadata("thread_name", 0, "\"name\": \"compiler\"");
  Metadata("thread_sort_index", 0, "\"sort_index\": 0");
  for (size_t I = 0; I < Results.size(); ++I) {
    Metadata("thread_name", 1 + I, fmt::format("\"name\": \"engine {}\"", I));
    Metadata("thread_sort_index", 1 + I,
             fmt::format("\"sort_index\": {}", 1 + I));
  }

  auto Micros = [](Clock::time_point A, Clock::time_point B) {
    return std::chrono::duration<double, std::micro>(B - A).count();
  };
  Complete("load", "compile", 0, 0.0, Micros(Spans.loadStart, Spans.loadEnd),
           "\"path\": " + jsonString(Prog.path));
  if (Spans.compiled)
    Complete("compile", "compile", 0, UsOf(Spans.compileStart),
             Micros(Spans.compileStart, Spans.compileEnd),
             fmt::format("\"opt_level\": {}, \"codegen\": \"{}\"", CO.optLevel,
                         codegenName(CO.codegen.mode)));
  for (const ir::PassContext::Timing &T : CO.passes.timings)
    Complete(T.pass, "pass", 0,
             T.startMilliseconds * 1e3 - (double)BaseNs / 1e3,
             T.milliseconds * 1e3, "");

  uint64_t Recorded = 0, Dropped = 0;
  for (size_t I = 0; I < Results.size(); ++I) {
    const ThreadResult &R = Results[I];
    size_t Tid = 1 + I;
    for (size_t K = 0; K < R.runs.size(); ++K)
      Complete("run", "run", Tid, UsOf(R.runs[K].start), R.runs[K].millis * 1e3,
               fmt::format("\"run\": {}", K));
    // One counter track per engine: each has its own pool.
    std::string Counter = Results.size() == 1
                              ? std::string("pool bytes in use")
                              : fmt::format("pool bytes in use (engine {})", I);
    size_t LastBytes = SIZE_MAX;
    int64_t EndNs = 0;
    for (const vm::VirtualMachine::TracedCall &C : R.calls) {
      const vm::VMFunction &F = Exe.functions[C.function];
      const vm::KernelEntry &Entry = Exe.kernels[F.code[C.pc].c];
      bool ShapeFn = Entry.kind == vm::KernelEntry::Kind::ShapeFunction ||
                     Entry.kind == vm::KernelEntry::Kind::NativeShapeFunction;
      std::string Origin;
      std::vector<std::string> Covers;
      if (C.pc < F.origins.size() && F.origins[C.pc]) {
        Covers = F.origins[C.pc]->covers;
        Origin = F.origins[C.pc]->output;
        if (Origin.empty() && !Covers.empty())
          Origin = Covers.front();
      }
      const vm::VirtualMachine::CallSignature &Sig = R.signatures[C.signature];
      const std::string &Kernel = R.kernelNames[F.code[C.pc].c];
      Complete(ShapeFn ? "shape of " + Kernel : Kernel,
               ShapeFn ? "shape" : "kernel", Tid, UsOfNs(C.startNs),
               (double)C.durationNs / 1e3,
               fmt::format("\"function\": {}, \"pc\": {}, \"origin\": {}, "
                           "\"covers\": {}, \"inputs\": {}, \"outputs\": {}, "
                           "\"bytes\": {}",
                           jsonString(F.name), C.pc, jsonString(Origin),
                           jsonStrings(Covers), jsonStrings(Sig.inputs),
                           jsonStrings(Sig.outputs), Sig.outputBytes));
      EndNs = C.startNs + C.durationNs;
      if (C.bytesInUse != LastBytes) // a step only where it changes
        Emit(fmt::format("{{\"name\": {}, \"ph\": \"C\", \"pid\": 1, "
                         "\"tid\": {}, \"ts\": {:.3f}, \"args\": "
                         "{{\"bytes\": {}}}}}",
                         jsonString(Counter), Tid, UsOfNs(EndNs),
                         C.bytesInUse));
      LastBytes = C.bytesInUse;
    }
    if (R.droppedCalls)
      Emit(fmt::format("{{\"name\": \"trace limit reached\", \"ph\": "
                       "\"i\", \"s\": \"t\", \"pid\": 1, \"tid\": {}, "
                       "\"ts\": {:.3f}, \"args\": {{\"dropped_calls\": {}}}}}",
                       Tid, UsOfNs(EndNs), R.droppedCalls));
    Recorded += R.calls.size();
    Dropped += R.droppedCalls;
  }
  J += fmt::format("\n], \"displayTimeUnit\": \"ms\", \"otherData\": "
                   "{{\"model\": {}, \"kernel_calls\": {}, "
                   "\"kernel_calls_dropped\": {}, \"trace_limit\": {}, "
                   "\"note\": {}}}}}\n",
                   jsonString(Prog.path), Recorded, Dropped, Limit,
                   jsonString(Dropped ? "the trace holds the first kernel "
                                        "calls of the timed runs only "
                                        "(--trace-limit)"
                                      : "every kernel call of the timed "
                                        "runs"));
  std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
  if (!Out || !Out.write(J.data(), (std::streamsize)J.size()) || !Out.flush())
    fail("cannot write the trace to '{}'", Path);
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
  Flags.push_back({"trace", true, false});
  Flags.push_back({"trace-limit", true, false});
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

  bool Trace = P.has("trace");
  if (Trace && Kind != ExecutorKind::VM)
    throw UsageError("option '--trace' records the VM's kernel calls "
                     "(--executor vm)");
  if (P.has("trace-limit") && !Trace)
    throw UsageError("option '--trace-limit' goes with --trace");
  uint64_t TraceLimit =
      parseUnsigned(P.get("trace-limit", "100000"), "trace-limit");
  if (TraceLimit < 1 || TraceLimit > 100000000)
    throw UsageError("option '--trace-limit' expects 1 to 100000000");
  // Each engine keeps its share of the calls.
  size_t EngineTraceLimit =
      std::max<size_t>(1, TraceLimit / std::max<uint64_t>(Concurrency, 1));

  bool Serve = P.has("serve");
  if (Serve && (Profile || Trace || Concurrency != 1))
    throw UsageError("option '--serve' times one engine: it takes neither "
                     "--profile, --trace nor --concurrency");

  CompileSpans Spans;
  Spans.loadStart = Clock::now();
  Program Prog = loadProgram(P.positional[0]);
  Spans.loadEnd = Clock::now();
  if (Kind == ExecutorKind::Interp && Prog.isExecutable())
    fail("{}: a .rvx file runs on the VM only (--executor vm)", Prog.path);
  std::vector<Tensor> Inputs = prepareProgramInputs(Prog, Opts);
  if (Kind == ExecutorKind::VM) {
    Spans.compiled = !Prog.isExecutable();
    Spans.compileStart = Clock::now();
    compileProgram(Prog, CO);
    Spans.compileEnd = Clock::now();
  }
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
        vm::TensorArena::resetPeakPlacedBytes();
        E.machine()->setProfiling(Profile);
        E.machine()->setTracing(Trace ? EngineTraceLimit : 0);
      }
      timeRuns(E, Inputs, Repeat, MinTime, R.millis, Trace ? &R.runs : nullptr,
               EngineTraceLimit);
      if (vm::VirtualMachine *VM = E.machine()) {
        R.instructions = VM->instructionCount() - Before;
        R.peakBytes = VM->peakBytesInUse();
        R.pooledBytes = VM->pooledBytes();
        R.kernelTimes = VM->kernelTimes();
        VM->setProfiling(false);
        if (Trace) {
          R.calls = VM->tracedCalls();
          R.signatures = VM->traceSignatures();
          R.droppedCalls = VM->droppedTracedCalls();
          for (size_t K = 0; K < VM->executable().kernels.size(); ++K)
            R.kernelNames.push_back(VM->kernelName((uint32_t)K));
          VM->setTracing(0);
        }
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
                     "\"peak_bytes_in_use\": {}, \"pooled_bytes\": {}, "
                     "\"peak_list_arena_bytes\": {}",
                     (double)Instructions / (double)N, Peak, Pooled,
                     vm::TensorArena::peakPlacedBytes());
  if (Profile)
    J += ", \"profile\": " + profileJson(Results, *Prog.exe, N);
  J += "}\n";
  if (Trace)
    writeTrace(P.get("trace", ""), Prog, CO, Spans, Results, TraceLimit);
  std::fputs(J.c_str(), stdout);
  return 0;
}

} // namespace rivet::cli
