//===- Program.cc - A model, program or executable for the CLI ------------===//
#include "Program.h"

#include "kernels/Error.h"
#include "kernels/Npy.h"
#include "kernels/Random.h"
#include "kernels/Threading.h"
#include "vm/MainIO.h"
#include "vm/RvxFormat.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

namespace rivet::cli {

bool isRvxPath(const std::string &Path) {
  std::string Ext = std::filesystem::path(Path).extension().string();
  std::transform(Ext.begin(), Ext.end(), Ext.begin(),
                 [](unsigned char C) { return std::tolower(C); });
  if (Ext == ".rvx")
    return true;
  // A .rvx under another name is known by its magic, not parsed as text
  // (only a regular file is opened: a FIFO would block).
  std::error_code EC;
  if (!std::filesystem::is_regular_file(Path, EC))
    return false;
  std::ifstream In(Path, std::ios::binary);
  char Head[sizeof(vm::rvx::kMagic)] = {};
  return In.read(Head, sizeof(Head)) &&
         std::memcmp(Head, vm::rvx::kMagic, sizeof(Head)) == 0;
}

size_t Program::numResults() const {
  return std::max<size_t>(outputNames.size(), 1);
}

Program loadProgram(const std::string &Path) {
  Program P;
  P.path = Path;
  if (isRvxPath(Path)) {
    P.exe = vm::Executable::load(Path);
    for (const vm::ParamInfo &I : P.exe->mainParams)
      P.inputNames.push_back(I.name);
    P.outputNames = P.exe->outputNames;
    return P;
  }
  P.model = loadModel(Path);
  P.inputNames = P.model->inputNames;
  P.outputNames = P.model->outputNames;
  return P;
}

std::shared_ptr<vm::Executable> compileProgram(Program &P,
                                               vm::CompileOptions &Opts) {
  if (P.exe)
    return P.exe;
  std::shared_ptr<vm::Executable> Exe;
  {
    CompileProgress Progress(Opts.passes);
    Exe = vm::compile(P.model->module, Opts);
  }
  // The executable speaks the user's names: ONNX input and output names
  // rather than the sanitized IR parameter names.
  if (Exe->mainParams.size() == P.inputNames.size())
    for (size_t I = 0; I < P.inputNames.size(); ++I)
      Exe->mainParams[I].name = P.inputNames[I];
  if (!P.outputNames.empty())
    Exe->outputNames = P.outputNames;
  P.exe = Exe;
  return Exe;
}

CompileProgress::CompileProgress(ir::PassContext &Ctx, const char *Then)
    : Ctx(Ctx), Then(Then), Start(Clock::now()), Since(Start) {
  // --print-after and bisection's diffs write to stderr as passes run:
  // a progress line would cut into them.
  if (!isatty(STDERR_FILENO) || !Ctx.printAfter.empty() || Ctx.stepObserver)
    return;
  if (const char *D = std::getenv("RIVET_PROGRESS_DELAY"))
    Delay = std::atof(D);
  Ctx.progress = [this](size_t Step, size_t Steps, const std::string &Pass,
                        double Seconds) { report(Step, Steps, Pass, Seconds); };
  Ticker = std::thread([this] { tick(); });
}

void CompileProgress::report(size_t StepIndex, size_t Steps,
                             const std::string &Pass, double Seconds) {
  std::lock_guard<std::mutex> G(Lock);
  if (Seconds < 0) {
    Step = fmt::format("[{}/{}] {}", StepIndex, Steps, Pass);
    Since = Clock::now();
  } else if (StepIndex == Steps && Then) {
    Step = Then; // the pipeline is done
    Since = Clock::now();
  }
}

void CompileProgress::tick() {
  std::unique_lock<std::mutex> G(Lock);
  do {
    Clock::time_point Now = Clock::now();
    if (std::chrono::duration<double>(Now - Start).count() < Delay)
      continue;
    // "\r\033[K": back to the line's start and clear it, so that each
    // report replaces the last.
    fmt::print(stderr, "\r\033[K{} {:.1f} s", Step,
               std::chrono::duration<double>(Now - Since).count());
    std::fflush(stderr);
    Shown = true;
  } while (!Wake.wait_for(G, std::chrono::milliseconds(250),
                          [this] { return Done; }));
}

CompileProgress::~CompileProgress() {
  if (!Ticker.joinable())
    return;
  {
    std::lock_guard<std::mutex> G(Lock);
    Done = true;
  }
  Wake.notify_all();
  Ticker.join();
  Ctx.progress = nullptr; // it refers to this object
  if (!Shown)
    return;
  // On an error the line is cleared for the message.
  if (std::uncaught_exceptions())
    fmt::print(stderr, "\r\033[K");
  else
    fmt::print(stderr, "\r\033[Kcompiled in {:.1f} s\n",
               std::chrono::duration<double>(Clock::now() - Start).count());
  std::fflush(stderr);
}

std::optional<int> takeOptLevel(std::vector<std::string> &Args) {
  std::optional<int> Level;
  std::vector<std::string> Rest;
  bool OnlyPositional = false;
  for (const std::string &A : Args) {
    if (A == "--")
      OnlyPositional = true;
    if (!OnlyPositional && A.rfind("-O", 0) == 0) {
      if (A.size() != 3 || A[2] < '0' || A[2] > '3')
        throw UsageError(fmt::format(
            "unknown optimization level '{}' (use -O0, -O1, -O2 or -O3)", A));
      Level = A[2] - '0';
      continue;
    }
    Rest.push_back(A);
  }
  Args = std::move(Rest);
  return Level;
}

std::vector<FlagSpec> compileFlags() {
  return {{"no-memory-plan", false, false}, {"library-kernels", true, false},
          {"print-after", true, true},      {"disable-pass", true, true},
          {"enable-pass", true, true},      {"time-passes", false, false},
          {"codegen", true, false},         {"cpu", true, false},
          {"mattr", true, false},           {"target", true, false},
          {"gpu-placement", true, false},   {"input-shape", true, true},
          {"allow-tf32", false, false}};
}

const char *const CompileFlagsUsage =
    "  -O0 .. -O3              optimization level (default -O3)\n"
    "  --no-memory-plan        one storage per tensor (no memory planner)\n"
    "  --library-kernels on|off  library kernels (e.g. float32 RNN layers)\n"
    "                          in place of reference kernels (default on)\n"
    "  --print-after PASS      print the module after PASS (or 'all'); "
    "repeatable\n"
    "  --disable-pass PASS     never run PASS; repeatable\n"
    "  --enable-pass PASS      run PASS whatever the level; repeatable\n"
    "  --time-passes           print each pass's time to stderr\n"
    "  --codegen off|jit|so    native kernels for fused groups: none, JIT\n"
    "                          compiled in process, or a shared object\n"
    "  --cpu NAME              target CPU of native code (default: the host)\n"
    "  --mattr +F,-G           target features added/removed (LLVM names)\n"
    "  --target cpu|cuda       where fused kernels run (default cpu; cuda\n"
    "                          needs a GPU to run the result)\n"
    "  --gpu-placement auto|all  with --target cuda: small static kernels\n"
    "                          on the host (auto, default) or every kernel\n"
    "                          the GPU can run on it (all, for testing)\n"
    "  --allow-tf32            with --target cuda: cuBLAS and cuDNN may use\n"
    "                          TF32 tensor cores for float32 (default off)\n"
    "  --input-shape NAME=AxB  compile for input NAME of this shape only\n"
    "                          (its symbolic extents become constants: no\n"
    "                          shape functions, one memory arena); "
    "repeatable\n";

namespace {

vm::NativeCode parseCodegen(const std::string &Text) {
  if (Text == "off")
    return vm::NativeCode::Off;
  if (Text == "jit")
    return vm::NativeCode::Jit;
  if (Text == "so")
    return vm::NativeCode::SharedObject;
  throw UsageError(
      fmt::format("option '--codegen' expects off, jit or so, got '{}'", Text));
}

bool isTargetNameChar(char C) {
  return std::isalnum((unsigned char)C) || C == '-' || C == '_' || C == '.';
}

/// An LLVM CPU name: "skylake-avx512", "x86-64-v3", "native" is not one
/// (the default already is the host).
std::string parseCpu(const std::string &Text) {
  if (Text.empty() || !std::all_of(Text.begin(), Text.end(), isTargetNameChar))
    throw UsageError(
        fmt::format("option '--cpu' expects a CPU name (e.g. skylake-avx512 "
                    "or x86-64-v3), got '{}'",
                    Text));
  return Text;
}

/// A comma-separated list of "+feature" and "-feature".
std::string parseFeatures(const std::string &Text) {
  size_t Begin = 0;
  do {
    size_t End = Text.find(',', Begin);
    std::string Item = Text.substr(
        Begin, End == std::string::npos ? std::string::npos : End - Begin);
    if (Item.size() < 2 || (Item[0] != '+' && Item[0] != '-') ||
        !std::all_of(Item.begin() + 1, Item.end(), isTargetNameChar))
      throw UsageError(fmt::format(
          "option '--mattr' expects +feature/-feature items separated by "
          "commas (e.g. +avx2,-avx512f), got '{}'",
          Text));
    Begin = End == std::string::npos ? Text.size() + 1 : End + 1;
  } while (Begin <= Text.size());
  return Text;
}

} // namespace

const char *codegenName(vm::NativeCode Mode) {
  switch (Mode) {
  case vm::NativeCode::Off: return "off";
  case vm::NativeCode::Jit: return "jit";
  case vm::NativeCode::SharedObject: return "so";
  }
  return "?";
}

vm::CompileOptions compileOptionsFrom(std::optional<int> Level,
                                      const ParsedArgs &P,
                                      vm::NativeCode DefaultCodegen) {
  vm::CompileOptions O;
  O.optLevel = Level.value_or(3);
  O.planMemory = !P.has("no-memory-plan");
  if (P.has("library-kernels")) {
    std::string L = P.get("library-kernels", "");
    if (L != "on" && L != "off")
      throw UsageError(fmt::format(
          "option '--library-kernels' expects on or off, got '{}'", L));
    O.libraryKernels = L == "on";
  }
  auto Known = [](const std::string &Name, const char *Flag) {
    if (!ir::PassRegistry::global().find(Name) && Name != "all")
      throw UsageError(fmt::format("--{}: unknown pass '{}'", Flag, Name));
    return Name;
  };
  for (const std::string &N : P.all("print-after"))
    O.passes.printAfter.insert(Known(N, "print-after"));
  for (const std::string &N : P.all("disable-pass"))
    O.passes.disabled.insert(Known(N, "disable-pass"));
  for (const std::string &N : P.all("enable-pass"))
    O.passes.enabled.insert(Known(N, "enable-pass"));
  O.passes.timePasses = P.has("time-passes");
  O.codegen.mode =
      P.has("codegen") ? parseCodegen(P.get("codegen", "")) : DefaultCodegen;
  if (P.has("cpu"))
    O.codegen.cpu = parseCpu(P.get("cpu", ""));
  if (P.has("mattr"))
    O.codegen.features = parseFeatures(P.get("mattr", ""));
  if (P.has("target")) {
    std::string T = P.get("target", "");
    if (T != "cpu" && T != "cuda")
      throw UsageError(
          fmt::format("option '--target' expects cpu or cuda, got '{}'", T));
    O.codegen.target = T == "cuda" ? Device::CUDA : Device::CPU;
    if (O.codegen.target != Device::CPU &&
        O.codegen.mode == vm::NativeCode::Off)
      throw UsageError("--target cuda runs native kernels on the GPU, so it "
                       "cannot go with --codegen off");
  }
  if (P.has("gpu-placement")) {
    std::string G = P.get("gpu-placement", "");
    if (G != "auto" && G != "all")
      throw UsageError(fmt::format(
          "option '--gpu-placement' expects auto or all, got '{}'", G));
    if (O.codegen.target == Device::CPU)
      throw UsageError("--gpu-placement needs --target cuda");
    O.codegen.smallKernelsOnGpu = G == "all";
  }
  if (P.has("allow-tf32")) {
    if (O.codegen.target == Device::CPU)
      throw UsageError("--allow-tf32 needs --target cuda");
    O.allowTf32 = true;
  }
  for (const std::string &A : P.all("input-shape")) {
    auto [Name, Spec] = splitAssignment(A, "input-shape");
    if (!O.inputShapes.emplace(Name, parseShapeSpec(Spec, Name)).second)
      throw UsageError(
          fmt::format("input '{}' given more than one shape", Name));
  }
  return O;
}

FlagSpec threadsFlag() { return {"threads", true, false}; }

int applyThreadsFlag(const ParsedArgs &P) {
  if (P.has("threads")) {
    uint64_t N = parseUnsigned(P.get("threads", ""), "threads");
    if (N > 1024)
      throw UsageError(fmt::format(
          "option '--threads' expects 0 (every core) to 1024, got {}", N));
    setNumThreads((int)N);
  }
  return numThreads();
}

FlagSpec maxCallDepthFlag() { return {"max-call-depth", true, false}; }

// The usages of run, check and bench state the default.
static_assert(ExecutionLimits::kDefaultMaxCallDepth == 100000);

ExecutionLimits executionLimitsFrom(const ParsedArgs &P) {
  ExecutionLimits L;
  if (P.has("max-call-depth")) {
    L.maxCallDepth =
        parseUnsigned(P.get("max-call-depth", ""), "max-call-depth");
    if (L.maxCallDepth == 0)
      throw UsageError("option '--max-call-depth' expects a positive count");
  }
  return L;
}

void reportPassTimes(const vm::CompileOptions &Opts) {
  if (!Opts.passes.timePasses)
    return;
  double Total = 0;
  for (const auto &T : Opts.passes.timings) {
    std::fprintf(stderr, "// pass %-24s %10.3f ms\n", T.pass.c_str(),
                 T.milliseconds);
    Total += T.milliseconds;
  }
  std::fprintf(stderr, "// passes total %21.3f ms\n", Total);
}

std::vector<FlagSpec> inputFlags() {
  return {{"input", true, true},
          {"random-inputs", false, false},
          {"seed", true, false},
          {"shape", true, true}};
}

InputOptions inputOptionsFrom(const ParsedArgs &P) {
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
  return Opts;
}

std::vector<Tensor> prepareProgramInputs(const Program &P,
                                         const InputOptions &Opts) {
  if (P.model) {
    const auto *Main = P.model->module.function("main")->as<ir::FunctionNode>();
    return prepareInputs(*Main, Opts, P.inputNames);
  }
  return prepareExecutableInputs(*P.exe, Opts);
}

namespace {

std::string joinNames(const std::vector<vm::ParamInfo> &Params) {
  std::string S;
  for (const vm::ParamInfo &I : Params)
    S += (S.empty() ? "" : ", ") + I.name;
  return S.empty() ? "none" : S;
}

} // namespace

std::vector<Tensor> prepareExecutableInputs(const vm::Executable &Exe,
                                            const InputOptions &Opts) {
  const std::vector<vm::ParamInfo> &Params = Exe.mainParams;
  auto IsInput = [&](const std::string &Name) {
    return std::any_of(Params.begin(), Params.end(),
                       [&](const vm::ParamInfo &I) { return I.name == Name; });
  };
  for (const auto &[Name, _] : Opts.files)
    if (!IsInput(Name))
      fail("unknown input '{}': @main has inputs: {}", Name, joinNames(Params));
  for (const auto &[Name, _] : Opts.shapes)
    if (!IsInput(Name))
      fail("--shape for unknown input '{}': @main has inputs: {}", Name,
           joinNames(Params));
  std::vector<Tensor> Args;
  for (size_t K = 0; K < Params.size(); ++K) {
    const vm::ParamInfo &I = Params[K];
    if (!I.isTensor)
      fail("input '{}' has type {}: only tensor inputs can be given on the "
           "command line",
           I.name, vm::paramTypeText(I));
    if (auto It = Opts.files.find(I.name); It != Opts.files.end()) {
      Tensor V = readNpy(It->second);
      vm::checkMainInput(I, V.shape(), V.dtype());
      Args.push_back(std::move(V));
      continue;
    }
    if (!Opts.random)
      fail("missing input '{}' of type {} (give --input {}=FILE.npy or "
           "--random-inputs)",
           I.name, vm::paramTypeText(I), I.name);
    Shape S;
    if (auto It = Opts.shapes.find(I.name); It != Opts.shapes.end()) {
      S = It->second;
    } else {
      if (!I.dims)
        fail("input '{}' has type {} of unknown rank: give its shape with "
             "--shape {}=AxB",
             I.name, vm::paramTypeText(I), I.name);
      for (int64_t D : *I.dims) {
        if (D < 0)
          fail("input '{}' has type {} with a dynamic dimension: give its "
               "shape with --shape {}=AxB",
               I.name, vm::paramTypeText(I), I.name);
        S.push_back(D);
      }
    }
    vm::checkMainInput(I, S, I.dtype);
    // The same seed stream as prepareInputs, so that a .rvx file and its
    // model get the same random inputs.
    Args.push_back(randomTensor(S, I.dtype, Opts.seed * 1000003 + K));
  }
  return Args;
}

std::vector<NamedOutput> flattenObjectOutputs(const vm::ObjectRef &Result,
                                              const vm::Executable &Exe,
                                              size_t NumResults) {
  return vm::flattenMainResult(Result, Exe, NumResults);
}

} // namespace rivet::cli
