//===- ConformanceRunner.cc - The ONNX backend test suite -----------------===//
//
// Runs every model of an ONNX backend test suite:
// import, type inference, execution by the chosen executor (the reference
// interpreter, or the VM after compiling at -O3 or --opt-level, or the VM on
// the compiled executable after a round trip through its .rvx bytes; with
// --opt-level the interpreter runs the module after that level's passes too),
// comparison of
// every test_data_set_* with the expected outputs (ONNX's tolerances). Each
// test runs in a child process, so a crash or a hang fails only that test.
//
//   rivet_conformance [--data DIR] [--executor interp|vm|rvx]
//                     [--opt-level 0..3]
//                     [--codegen off|jit|so] [--filter SUBSTR]
//                     [--jobs N] [--timeout SEC] [--pass-list FILE]
//                     [--write-pass-list FILE] [--verbose] [--skip-if-missing]
//
// DIR holds the suites' folders (node/, pytorch-converted/, ...): Debian's
// libonnx-testdata by default, or ONNX 1.20.1's node tests as
// tools/scripts/fetch-onnx-testdata.sh caches them.
//
// With --pass-list the exit status is 1 when a listed test does not pass.
//
//===----------------------------------------------------------------------===//
#include "TestCase.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <poll.h>
#include <set>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace rivet::conformance;

namespace {

struct Options {
  std::string dataDir = "/usr/share/libonnx-testdata/data";
  std::string executor = "interp";
  /// -1: the interpreter runs the imported module, the VM compiles at -O3.
  int optLevel = -1;
  /// The VM's native code for fused groups; empty: the compiler's default.
  std::string codegen;
  /// Where the VM's fused groups run: "cpu" or "cuda".
  std::string target = "cpu";
  std::vector<std::string> filters;
  int jobs = 2;
  int timeoutSec = 120;
  std::string passList, writePassList;
  bool verbose = false;
  /// Exit with kSkipped (ctest's SKIP_RETURN_CODE) when --data is absent.
  bool skipIfMissing = false;
};

constexpr int kSkipped = 77;

struct Running {
  std::string name;
  pid_t pid;
  int fd;
  std::string output;
  std::chrono::steady_clock::time_point start;
};

/// Lists test directories (those with a model.onnx) under the four suites.
std::vector<std::string> listTests(const Options &O) {
  std::vector<std::string> R;
  for (const char *Suite :
       {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    fs::path Dir = fs::path(O.dataDir) / Suite;
    if (!fs::is_directory(Dir))
      continue;
    for (const auto &E : fs::directory_iterator(Dir))
      if (fs::exists(E.path() / "model.onnx"))
        R.push_back(std::string(Suite) + "/" + E.path().filename().string());
  }
  std::sort(R.begin(), R.end());
  if (!O.filters.empty())
    std::erase_if(R, [&](const std::string &T) {
      return std::none_of(O.filters.begin(), O.filters.end(), [&](auto &F) {
        return T.find(F) != std::string::npos;
      });
    });
  return R;
}

std::set<std::string> readList(const std::string &Path) {
  std::set<std::string> R;
  std::ifstream In(Path);
  if (!In) {
    std::cerr << "error: cannot read pass list '" << Path << "'\n";
    std::exit(2);
  }
  std::string Line;
  while (std::getline(In, Line)) {
    if (Line.empty() || Line[0] == '#')
      continue;
    R.insert(Line);
  }
  return R;
}

/// Starts one test in a child; its stdout/stderr go to a pipe.
Running start(const Options &O, const std::string &Name) {
  int Fds[2];
  if (pipe(Fds) != 0) {
    perror("pipe");
    std::exit(2);
  }
  std::fflush(nullptr);
  pid_t Pid = fork();
  if (Pid == 0) {
    close(Fds[0]);
    dup2(Fds[1], 1);
    dup2(Fds[1], 2);
    alarm((unsigned)O.timeoutSec);
    std::string Msg;
    bool Ok = runTestCase(fs::path(O.dataDir) / Name, O.executor, O.optLevel,
                          Msg, O.codegen, O.target);
    std::cout << Msg << std::flush;
    _exit(Ok ? 0 : 1);
  }
  close(Fds[1]);
  return {Name, Pid, Fds[0], {}, std::chrono::steady_clock::now()};
}

} // namespace

int main(int Argc, char **Argv) {
  Options O;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    auto next = [&]() -> std::string {
      if (I + 1 >= Argc) {
        std::cerr << "error: " << A << " needs a value\n";
        std::exit(2);
      }
      return Argv[++I];
    };
    if (A == "--data")
      O.dataDir = next();
    else if (A == "--executor")
      O.executor = next();
    else if (A == "--opt-level")
      O.optLevel = std::clamp(std::stoi(next()), 0, 3);
    else if (A == "--codegen")
      O.codegen = next();
    else if (A == "--target")
      O.target = next();
    else if (A == "--filter")
      O.filters.push_back(next());
    else if (A == "--jobs")
      O.jobs = std::max(1, std::stoi(next()));
    else if (A == "--timeout")
      O.timeoutSec = std::stoi(next());
    else if (A == "--pass-list")
      O.passList = next();
    else if (A == "--write-pass-list")
      O.writePassList = next();
    else if (A == "--verbose")
      O.verbose = true;
    else if (A == "--skip-if-missing")
      O.skipIfMissing = true;
    else {
      std::cerr
          << "usage: rivet_conformance [--data DIR] [--executor interp|vm|rvx] "
             "[--opt-level 0..3] [--codegen off|jit|so] [--target cpu|cuda] "
             "[--filter S]... [--jobs N] [--timeout SEC] [--pass-list F] "
             "[--write-pass-list F] [--verbose] [--skip-if-missing]\n";
      return 2;
    }
  }
  if (O.executor != "interp" && O.executor != "vm" && O.executor != "rvx") {
    std::cerr << "error: unknown executor '" << O.executor
              << "' (available: interp, vm, rvx)\n";
    return 2;
  }
  if (O.target != "cpu" && O.target != "cuda") {
    std::cerr << "error: unknown target '" << O.target
              << "' (available: cpu, cuda)\n";
    return 2;
  }
  if (!O.codegen.empty() && O.codegen != "off" && O.codegen != "jit" &&
      O.codegen != "so") {
    std::cerr << "error: unknown codegen mode '" << O.codegen
              << "' (available: off, jit, so)\n";
    return 2;
  }
  if (O.skipIfMissing && !fs::is_directory(O.dataDir)) {
    std::cout << "skipped: no test data at '" << O.dataDir
              << "' (tools/scripts/fetch-onnx-testdata.sh fetches it)\n";
    return kSkipped;
  }
  std::vector<std::string> Tests = listTests(O);
  std::set<std::string> Expected;
  if (!O.passList.empty())
    Expected = readList(O.passList);

  std::map<std::string, std::pair<bool, std::string>> Results;
  std::vector<Running> Active;
  size_t Next = 0;
  while (Next < Tests.size() || !Active.empty()) {
    while (Next < Tests.size() && (int)Active.size() < O.jobs)
      Active.push_back(start(O, Tests[Next++]));
    std::vector<pollfd> P;
    for (auto &R : Active)
      P.push_back({R.fd, POLLIN, 0});
    poll(P.data(), P.size(), 1000);
    // Collect output; a closed pipe means the child is done.
    std::vector<size_t> Done;
    for (size_t I = 0; I < Active.size(); ++I) {
      if (!(P[I].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      char Buf[4096];
      ssize_t N = read(Active[I].fd, Buf, sizeof Buf);
      if (N > 0)
        Active[I].output.append(Buf, (size_t)N);
      else
        Done.push_back(I);
    }
    for (auto It = Done.rbegin(); It != Done.rend(); ++It) {
      Running &R = Active[*It];
      int Status = 0;
      waitpid(R.pid, &Status, 0);
      close(R.fd);
      bool Ok = WIFEXITED(Status) && WEXITSTATUS(Status) == 0;
      std::string Msg = R.output;
      if (WIFSIGNALED(Status))
        Msg += WTERMSIG(Status) == SIGALRM
                   ? fmt::format("timed out after {} s", O.timeoutSec)
                   : fmt::format("crashed with signal {} ({})",
                                 WTERMSIG(Status), strsignal(WTERMSIG(Status)));
      while (!Msg.empty() && (Msg.back() == '\n' || Msg.back() == ' '))
        Msg.pop_back();
      double Secs = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - R.start)
                        .count();
      if (Ok) {
        std::cout << fmt::format("PASS {} ({:.2f} s)\n", R.name, Secs);
      } else {
        std::string First = Msg.substr(0, Msg.find('\n'));
        std::cout << fmt::format("FAIL {}: {}\n", R.name,
                                 O.verbose ? Msg : First.substr(0, 400));
      }
      std::cout.flush();
      Results[R.name] = {Ok, Msg};
      Active.erase(Active.begin() + (long)*It);
    }
  }

  int Passed = 0, Failed = 0;
  std::vector<std::string> Regressions;
  for (auto &[Name, R] : Results) {
    (R.first ? Passed : Failed)++;
    if (!R.first && Expected.count(Name))
      Regressions.push_back(Name);
  }
  for (const std::string &E : Expected)
    if (!Results.count(E) && O.filters.empty())
      Regressions.push_back(E + " (missing from the test data)");
  if (!O.writePassList.empty()) {
    std::ofstream Out(O.writePassList);
    Out << "# ONNX backend tests that pass on the "
        << (O.executor == "vm" ? "VM" : "reference interpreter")
        << ".\n# Checked by ctest; this list may only grow.\n";
    for (auto &[Name, R] : Results)
      if (R.first)
        Out << Name << "\n";
  }
  int Skipped = 0;
  std::cout << fmt::format(
      "\n{} of {} ONNX backend tests pass ({:.1f}%)\n", Passed, Results.size(),
      Results.empty() ? 0.0 : 100.0 * Passed / Results.size());
  if (!Regressions.empty()) {
    std::cout << Regressions.size() << " tests of the pass list fail:\n";
    for (auto &R : Regressions)
      std::cout << "  " << R << "\n";
  }
  std::cout << fmt::format("{} passed, {} failed, {} skipped\n", Passed, Failed,
                           Skipped);
  return Regressions.empty() ? 0 : 1;
}
