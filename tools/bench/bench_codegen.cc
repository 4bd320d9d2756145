//===- bench_codegen.cc - Generated kernels vs memcpy, matmul vs peak -----===//
//
// (a) A fused elementwise chain y = sigmoid(x * 2 + 1) * x over 64 MB of
// float32, lowered from its primitive function and JIT-compiled, in GB/s
// (bytes read + written per second) next to memcpy of the same bytes, at 1
// and 2 threads (memcpy split on the same thread pool at 2); its output is
// large enough for the generated code's streaming (non-temporal) stores.
// (b) A 1024x1024x1024 float32 matmul through the runtime's matmul kernel
// (the oneDNN anchor) in GFLOP/s and as a fraction of peak = cores x clock
// x flops per cycle, both measured (CpuPeak.h), of the rate the FMA test
// itself ran at (lower where wide vectors lower the clock), and of the rate
// FMA bursts reach right after the matmul, round by round (paired: the
// machine's speed drifts between the start of the run and the matmul).
// Medians of >= 10 runs after a warm-up; prints one JSON object.
// Usage: OMP_WAIT_POLICY=passive bench_codegen [--quick]
//
//===----------------------------------------------------------------------===//
#include "BenchTiming.h"
#include "CpuPeak.h"
#include "codegen/CodegenBackend.h"
#include "codegen/LowerPrimitive.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Kernel.h"
#include "kernels/NativeKernelAbi.h"
#include "kernels/Random.h"
#include "kernels/Threading.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace rivet;
using bench::medianSeconds;
using bench::nowSeconds;

namespace {

/// A JSON string literal of S (model names have no control characters).
std::string quoted(const std::string &S) {
  std::string Out = "\"";
  for (char C : S)
    Out += C == '"' || C == '\\' ? std::string("\\") + C : std::string(1, C);
  return Out + "\"";
}

/// memcpy of Bytes split into contiguous chunks on the kernels' pool.
struct CopyJob {
  char *dst;
  const char *src;
};

void copyChunk(void *Closure, int64_t Begin, int64_t End) {
  auto *J = static_cast<CopyJob *>(Closure);
  std::memcpy(J->dst + Begin, J->src + Begin, (size_t)(End - Begin));
}

} // namespace

int main(int Argc, char **Argv) {
  bool Quick = Argc > 1 && std::strcmp(Argv[1], "--quick") == 0;
  int Reps = Quick ? 3 : 11;
  int Cores = (int)std::thread::hardware_concurrency();
  std::string Out = "{";

  // (a) The fused chain, from its primitive function's text.
  int64_t N = 16 << 20; // 64 MB of float32
  std::string Text =
      fmt::format("def @main(%x: Tensor[({}), float32]) {{\n"
                  "  fn (%p: Tensor[({}), float32], Primitive=1) {{\n"
                  "    let %a = multiply(%p, 2.0);\n"
                  "    let %b = add(%a, 1.0);\n"
                  "    let %s = sigmoid(%b);\n"
                  "    multiply(%s, %p)\n"
                  "  }}(%x)\n"
                  "}}\n",
                  N, N);
  ir::Module M = ir::parseModule(Text, "<bench_codegen>");
  ir::inferTypes(M);
  const auto *Main = M.function("main")->as<ir::FunctionNode>();
  codegen::LoweringResult R = codegen::lowerPrimitive(
      Main->body->as<ir::CallNode>()->callee, "bench_chain");
  if (!R.ok()) {
    fmt::print(stderr, "lowering refused: {}\n", R.unsupported);
    return 1;
  }
  codegen::JitCompiler Jit;
  RivetKernelFn Chain = Jit.compile(R.lowered->kernel);
  Tensor X = randomTensor({N}, DType::Float32, 1);
  Tensor Y = Tensor::empty({N}, DType::Float32);
  void *Buffers[] = {X.rawData(), Y.rawData()};
  double Bytes = 2.0 * (double)X.nbytes();
  std::string Printed = codegen::printLoopKernel(R.lowered->kernel);
  auto Has = [&](const char *What) {
    return Printed.find(What) != std::string::npos ? "true" : "false";
  };
  Out += fmt::format("\"chain\": {{\"expr\": \"sigmoid(x * 2 + 1) * x\", "
                     "\"bytes\": {:.0f}, \"parallel\": {}, \"streaming\": {}",
                     Bytes, Has(" parallel {"), Has("// streaming"));
  for (int T : {1, 2}) {
    setNumThreads(T);
    double S =
        medianSeconds(Reps, [&] { Chain(Buffers, nullptr, &kernelRuntime()); });
    CopyJob Job{static_cast<char *>(Y.rawData()),
                static_cast<const char *>(X.rawData())};
    double C = medianSeconds(Reps, [&] {
      kernelRuntime().parallelFor((int64_t)X.nbytes(), 1 << 20, &Job,
                                  copyChunk);
    });
    double G = Bytes / S / 1e9, GC = Bytes / C / 1e9;
    Out += fmt::format(", \"threads{}\": {{\"ms\": {:.2f}, \"GBps\": {:.2f}, "
                       "\"memcpy_ms\": {:.2f}, \"memcpy_GBps\": {:.2f}, "
                       "\"ratio\": {:.3f}}}",
                       T, S * 1e3, G, C * 1e3, GC, G / GC);
  }
  Out += "}";

  // (b) 1024^3 matmul through the runtime's kernel.
  bench::CpuPeak Cpu = bench::measureCpuPeak();
  double Peak = Cores * Cpu.coreGFlops();
  int64_t D = 1024;
  Tensor A = randomTensor({D, D}, DType::Float32, 2);
  Tensor B = randomTensor({D, D}, DType::Float32, 3);
  double Flop = 2.0 * (double)(D * D * D);
  const KernelInfo &MatMul = KernelRegistry::global().get("dnnl.matmul");
  Out += fmt::format(", \"matmul\": {{\"m_n_k\": 1024, \"cpu\": {}, "
                     "\"listed_GHz\": {:.2f}, \"busy_GHz\": {:.2f}, "
                     "\"fma_flops_per_cycle_measured\": {:.1f}, "
                     "\"peak_formula\": \"{} cores x {:.2f} GHz x {} "
                     "flop/cycle = {:.1f} GFLOP/s\"",
                     quoted(Cpu.model), Cpu.listedGHz, Cpu.busyGHz,
                     Cpu.measuredFlopsPerCycle, Cores, Cpu.ghz(),
                     Cpu.flopsPerCycle, Peak);
  for (int T : {1, 2}) {
    setNumThreads(T);
    double S = medianSeconds(Reps, [&] { invokeKernel(MatMul, {A, B}, {}); });
    double G = Flop / S / 1e9, TPeak = Peak * T / Cores;
    double FmaPeak = Cpu.measuredCoreGFlops() * T;
    // Paired: rounds of the matmul (median of three) each followed by FMA
    // bursts on as many threads, the fraction the median of the rounds'.
    std::vector<double> Paired;
    for (int Round = 0; Round < (Quick ? 3 : 9); ++Round) {
      double RS = medianSeconds(3, [&] { invokeKernel(MatMul, {A, B}, {}); });
      double Fma = bench::fmaGFlopsNow(T);
      if (Fma > 0)
        Paired.push_back(Flop / RS / 1e9 / Fma);
    }
    std::sort(Paired.begin(), Paired.end());
    Out += fmt::format(", \"threads{}\": {{\"ms\": {:.2f}, \"GFLOPs\": {:.1f}, "
                       "\"peak_GFLOPs\": {:.1f}, \"fraction_of_peak\": {:.3f}, "
                       "\"fraction_of_measured_fma_rate\": {:.3f}",
                       T, S * 1e3, G, TPeak, G / TPeak,
                       FmaPeak > 0 ? G / FmaPeak : 0.0);
    if (!Paired.empty())
      Out +=
          fmt::format(", \"paired_fraction_of_fma_rate\": {{\"median\": "
                      "{:.3f}, \"min\": {:.3f}, \"max\": {:.3f}}}",
                      Paired[Paired.size() / 2], Paired.front(), Paired.back());
    Out += "}";
  }
  Out += "}}";
  setNumThreads(0);
  fmt::print("{}\n", Out);
  return 0;
}
