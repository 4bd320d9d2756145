//===- trace_cli_test.cc - rivet bench --trace and compile progress -------===//
//
// The Chrome trace of rivet bench --trace is checked against a JSON schema
// (tests/tools/chrome_trace.schema.json) by python3-jsonschema, then for
// its content: a complete event per kernel call with origin and shapes,
// the runs around them, the passes inside the compile, thread names, the
// pool counter, and the call limit. Skipped where /usr/bin/python3 has no
// jsonschema (CI installs it: tools/scripts/install-deps.sh). Also: a
// compile's progress shows on a terminal only.
//
//===----------------------------------------------------------------------===//
#include "support/RunRivet.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace rivet::testing;
namespace fs = std::filesystem;

namespace {

const fs::path Source = RIVET_SOURCE_DIR;
const fs::path Schema = Source / "tests/tools/chrome_trace.schema.json";
const std::string Python = "/usr/bin/python3";

/// Validates the trace (argv[1]) against the schema (argv[2]), then prints
/// what the tests look at as KEY=VALUE lines (lists joined by '|').
const char *const Checker = R"PY(
import json, sys
import jsonschema
schema = json.load(open(sys.argv[2]))
jsonschema.Draft7Validator.check_schema(schema)
trace = json.load(open(sys.argv[1]))
errors = list(jsonschema.Draft7Validator(schema).iter_errors(trace))
for e in errors[:5]:
    print("schema error at %s: %s" % (list(e.absolute_path), e.message))
if errors:
    sys.exit(3)
ev = trace["traceEvents"]
def count(f): return sum(1 for e in ev if f(e))
def complete(cat): return [e for e in ev if e["ph"] == "X" and e["cat"] == cat]
calls = complete("kernel") + complete("shape")
runs = complete("run")
for k in ("kernel", "shape", "pass", "run", "compile"):
    print("%s=%d" % (k, len(complete(k))))
print("counter=%d" % count(lambda e: e["ph"] == "C"))
print("instant=%d" % count(lambda e: e["ph"] == "i"))
print("threads=" + "|".join(sorted(e["args"]["name"] for e in ev
      if e["ph"] == "M" and e["name"] == "thread_name")))
print("counters=" + "|".join(sorted(set(e["name"] for e in ev if e["ph"] == "C"))))
print("origins=" + "|".join(sorted(set(o for e in complete("kernel")
      for o in [e["args"]["origin"]] + e["args"]["covers"]))))
print("inputs=" + "|".join(sorted(set(i for e in calls for i in e["args"]["inputs"]))))
print("bytes=%d" % sum(e["args"]["bytes"] for e in complete("kernel")))
# Every call lies inside a run of its thread; every pass inside the compile.
def inside(e, spans):
    return any(s["tid"] == e["tid"] and s["ts"] - 1 <= e["ts"] and
               e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 1 for s in spans)
print("outside_runs=%d" % sum(1 for e in calls if not inside(e, runs)))
compile = [e for e in complete("compile") if e["name"] == "compile"]
print("outside_compile=%d" % sum(1 for e in complete("pass")
      if not inside(e, compile)))
print("calls=%d" % trace["otherData"]["kernel_calls"])
print("dropped=%d" % trace["otherData"]["kernel_calls_dropped"])
)PY";

bool haveJsonSchema() {
  return fs::exists(Python) &&
         runBinary(Python, {"-c", "import jsonschema"}).exitCode == 0;
}

/// The checker's KEY=VALUE lines for Trace; fails the test (and returns
/// nothing) when the trace does not match the schema.
std::map<std::string, std::string> checkTrace(const fs::path &Trace) {
  RunResult R =
      runBinary(Python, {"-c", Checker, Trace.string(), Schema.string()});
  std::map<std::string, std::string> Out;
  EXPECT_EQ(R.exitCode, 0) << R.output;
  if (R.exitCode != 0)
    return Out;
  std::istringstream In(R.output);
  std::string Line;
  while (std::getline(In, Line))
    if (size_t Eq = Line.find('='); Eq != std::string::npos)
      Out[Line.substr(0, Eq)] = Line.substr(Eq + 1);
  return Out;
}

long num(const std::map<std::string, std::string> &S, const std::string &K) {
  auto It = S.find(K);
  return It == S.end() ? -1 : std::stol(It->second);
}

std::string get(const std::map<std::string, std::string> &S,
                const std::string &K) {
  auto It = S.find(K);
  return It == S.end() ? "" : It->second;
}

class TraceTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!haveJsonSchema())
      GTEST_SKIP() << "/usr/bin/python3 has no jsonschema module (Debian: "
                      "python3-jsonschema)";
    Dir = freshTempDir("trace", currentTestName());
  }
  fs::path Dir;
};

const std::string RnnLoop = (Source / "tests/models/rnn_loop/model.onnx");
/// rnn_loop's inputs: 5 steps of a batch of 2.
const std::vector<std::string> RnnShapes = {"--shape", "xs=5x2x4", "--shape",
                                            "h0=2x8"};

std::vector<std::string> benchArgs(const std::string &Model,
                                   const fs::path &Trace,
                                   std::vector<std::string> Extra) {
  std::vector<std::string> A = {
      "bench",      Model, "--warmup",  "1", "--repeat", "3",
      "--min-time", "0",   "--threads", "1", "--trace",  Trace.string()};
  A.insert(A.end(), Extra.begin(), Extra.end());
  return A;
}

TEST_F(TraceTest, LoopModelTraceHasEveryCallWithOriginsShapesAndPasses) {
  fs::path Trace = Dir / "trace.json";
  std::vector<std::string> Extra = RnnShapes;
  Extra.insert(Extra.end(), {"--profile", "--time-passes"});
  RunResult R = runRivet(benchArgs(RnnLoop, Trace, Extra));
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "\"profile\": [")) << R.output;
  auto S = checkTrace(Trace);
  ASSERT_FALSE(S.empty());
  EXPECT_EQ(num(S, "run"), 3);
  EXPECT_GT(num(S, "kernel"), 3 * 5); // the loop body runs 5 times a run
  EXPECT_EQ(num(S, "kernel") + num(S, "shape"), num(S, "calls"));
  EXPECT_EQ(num(S, "dropped"), 0);
  EXPECT_EQ(num(S, "instant"), 0);
  EXPECT_EQ(num(S, "outside_runs"), 0);
  // --time-passes: every pass of the pipeline, inside the compile.
  EXPECT_GE(num(S, "pass"), 16);
  EXPECT_EQ(num(S, "outside_compile"), 0);
  EXPECT_EQ(num(S, "compile"), 2); // load and compile
  EXPECT_EQ(get(S, "threads"), "compiler|engine 0");
  EXPECT_EQ(get(S, "counters"), "pool bytes in use");
  EXPECT_GT(num(S, "counter"), 0);
  EXPECT_GT(num(S, "bytes"), 0);
  // The ONNX nodes, inside the Loop body too, and the operands' shapes.
  for (const char *Origin : {"/ih/Gemm", "/hh/MatMul", "/Tanh"})
    EXPECT_TRUE(contains(get(S, "origins"), Origin)) << get(S, "origins");
  EXPECT_TRUE(contains(get(S, "inputs"), "Tensor[(5, 2, 4), float32]"))
      << get(S, "inputs");
}

TEST_F(TraceTest, WithoutTimePassesNoPassEvents) {
  fs::path Trace = Dir / "trace.json";
  RunResult R = runRivet(benchArgs(RnnLoop, Trace, RnnShapes));
  ASSERT_EQ(R.exitCode, 0) << R.output;
  auto S = checkTrace(Trace);
  EXPECT_EQ(num(S, "pass"), 0);
  EXPECT_EQ(num(S, "run"), 3);
  EXPECT_GT(num(S, "kernel"), 0);
}

TEST_F(TraceTest, TraceLimitKeepsTheFirstCallsAndSaysSo) {
  fs::path Trace = Dir / "trace.json";
  std::vector<std::string> Extra = RnnShapes;
  Extra.insert(Extra.end(), {"--trace-limit", "7"});
  RunResult R = runRivet(benchArgs(RnnLoop, Trace, Extra));
  ASSERT_EQ(R.exitCode, 0) << R.output;
  auto S = checkTrace(Trace);
  EXPECT_EQ(num(S, "calls"), 7);
  EXPECT_EQ(num(S, "kernel") + num(S, "shape"), 7);
  EXPECT_GT(num(S, "dropped"), 0);
  EXPECT_EQ(num(S, "instant"), 1); // "trace limit reached"
  EXPECT_EQ(num(S, "outside_runs"), 0);
}

TEST_F(TraceTest, ConcurrentEnginesEachHaveAThreadAndACounter) {
  fs::path Trace = Dir / "trace.json";
  std::vector<std::string> Extra = RnnShapes;
  Extra.insert(Extra.end(), {"--concurrency", "2"});
  RunResult R = runRivet(benchArgs(RnnLoop, Trace, Extra));
  ASSERT_EQ(R.exitCode, 0) << R.output;
  auto S = checkTrace(Trace);
  EXPECT_EQ(get(S, "threads"), "compiler|engine 0|engine 1");
  EXPECT_EQ(get(S, "counters"),
            "pool bytes in use (engine 0)|pool bytes in use (engine 1)");
  EXPECT_EQ(num(S, "run"), 6);
  EXPECT_EQ(num(S, "outside_runs"), 0);
}

TEST_F(TraceTest, ExecutableTraceHasNoCompileButEveryCall) {
  // A .rvx file keeps no origins: the calls are there with empty ones.
  fs::path Exe = Dir / "branch.rvx";
  std::string Branch = (Source / "tests/models/branch/model.onnx").string();
  RunResult C = runRivet({"compile", Branch, "-o", Exe.string()});
  ASSERT_EQ(C.exitCode, 0) << C.output;
  fs::path Trace = Dir / "trace.json";
  RunResult R = runRivet(benchArgs(Exe.string(), Trace, {"--shape", "x=3x4"}));
  ASSERT_EQ(R.exitCode, 0) << R.output;
  auto S = checkTrace(Trace);
  EXPECT_EQ(num(S, "compile"), 1); // the load only
  EXPECT_GT(num(S, "kernel"), 0);
  EXPECT_EQ(num(S, "outside_runs"), 0);
}

TEST_F(TraceTest, SchemaRejectsBrokenTraces) {
  // The schema is not vacuous: a trace that Perfetto would misread fails.
  fs::path Trace = Dir / "trace.json";
  RunResult R = runRivet(benchArgs(RnnLoop, Trace, RnnShapes));
  ASSERT_EQ(R.exitCode, 0) << R.output;
  std::stringstream Buf;
  Buf << std::ifstream(Trace).rdbuf();
  const std::string Good = Buf.str();
  auto Broken = [&](const std::string &From, const std::string &To) {
    size_t At = Good.find(From);
    EXPECT_NE(At, std::string::npos) << From;
    std::string Bad = Good;
    Bad.replace(At, From.size(), To);
    fs::path P = Dir / "broken.json";
    std::ofstream(P) << Bad;
    return runBinary(Python, {"-c", Checker, P.string(), Schema.string()});
  };
  for (const auto &[From, To] :
       std::vector<std::pair<std::string, std::string>>{
           {"\"ph\": \"X\"", "\"ph\": \"Q\""},         // unknown phase
           {"\"bytes\": ", "\"bytes\": -"},            // negative bytes
           {"\"origin\": ", "\"origin\": 1, \"x\": "}, // origin not text
           {"\"thread_name\", \"ph\": \"M\"",
            "\"thread_name\", \"ph\": \"M\", \"ts\": 0"},
           {"\"traceEvents\"", "\"events\""}}) {
    RunResult V = Broken(From, To);
    EXPECT_EQ(V.exitCode, 3) << From << " -> " << To << ": " << V.output;
    EXPECT_TRUE(contains(V.output, "schema error")) << V.output;
  }
}

TEST(TraceFlags, MisusesAreUsageErrors) {
  fs::path Dir = freshTempDir("trace", currentTestName());
  std::string T = (Dir / "t.json").string();
  std::vector<std::pair<std::vector<std::string>, std::string>> Cases = {
      {{"--executor", "interp", "--trace", T}, "--trace"},
      {{"--trace-limit", "5"}, "--trace-limit"},
      {{"--trace", T, "--trace-limit", "0"}, "--trace-limit"},
      {{"--trace", T, "--serve"}, "--serve"},
  };
  for (const auto &[Extra, Flag] : Cases) {
    std::vector<std::string> A = {"bench", RnnLoop};
    A.insert(A.end(), RnnShapes.begin(), RnnShapes.end());
    A.insert(A.end(), Extra.begin(), Extra.end());
    RunResult R = runRivet(A);
    EXPECT_EQ(R.exitCode, 2) << Flag << ": " << R.output;
    EXPECT_TRUE(contains(R.output, Flag)) << R.output;
  }
  RunResult R =
      runRivet(benchArgs(RnnLoop, Dir / "missing" / "t.json", RnnShapes));
  EXPECT_EQ(R.exitCode, 1) << R.output;
  EXPECT_TRUE(contains(R.output, "error: cannot write the trace")) << R.output;
}

// Progress: only when stderr is a terminal, so scripts see none.
TEST(CompileProgress, NothingWhenStderrIsNotATerminal) {
  fs::path Dir = freshTempDir("progress", currentTestName());
  setenv("RIVET_PROGRESS_DELAY", "0", 1);
  RunResult R = runRivet({"compile", RnnLoop, "-o", (Dir / "m.rvx").string()});
  unsetenv("RIVET_PROGRESS_DELAY");
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_FALSE(contains(R.output, "\033[K")) << R.output;
  EXPECT_FALSE(contains(R.output, "compiled in")) << R.output;
}

TEST(CompileProgress, ShownOnATerminal) {
  // script(1) (util-linux) runs the command on a pseudo-terminal.
  if (!fs::exists("/usr/bin/script"))
    GTEST_SKIP() << "no /usr/bin/script to make a terminal";
  fs::path Dir = freshTempDir("progress", currentTestName());
  std::string Cmd = "RIVET_PROGRESS_DELAY=0 " + shellQuote(RivetBin) +
                    " compile " + shellQuote(RnnLoop) + " -o " +
                    shellQuote((Dir / "m.rvx").string());
  RunResult R = runBinary("/usr/bin/script", {"-qec", Cmd, "/dev/null"});
  ASSERT_EQ(R.exitCode, 0) << R.output;
  EXPECT_TRUE(contains(R.output, "\r\033[K")) << R.output;
  EXPECT_TRUE(contains(R.output, "compiled in")) << R.output;
  EXPECT_TRUE(contains(R.output, "-> ")) << R.output; // and the summary
}

} // namespace
