//===- bench_anchors.cc - oneDNN anchors: GFLOP/s and call overhead -------===//
//
// Times the registered matmul and conv kernels (which run on oneDNN) against
// the reference path (RIVET_DISABLE_DNNL), at 1 and 2 threads, and reports
// a 1024^3 float32 matmul as a fraction of the machine's peak:
// cores x clock x flops per cycle, both measured (CpuPeak.h);
// then resnet18's 3x3 convs (direct and Winograd) and mobilenet_v2's convs
// (one thread; several as the runtime picks, with oneDNN's parts only, and
// without parts), and mobilenet_v2's 1x1 + depthwise pairs in one pass
// against two calls.
// Usage: bench_anchors [--quick]
//
//===----------------------------------------------------------------------===//
#include "BenchTiming.h"
#include "CpuPeak.h"
#include "kernels/DnnlConfig.h"
#include "kernels/Kernel.h"
#include "kernels/Random.h"
#include "kernels/Threading.h"
#include "kernels/cpu/BlockedDirectConv.h"
#include "kernels/cpu/ConvChain.h"
#include "kernels/cpu/PointwiseDepthwiseConv.h"
#include "kernels/dnnl/DnnlAnchors.h"
#include "kernels/dnnl/WinogradConv.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace rivet;
using bench::nowSeconds;

namespace {

/// CPU seconds of the last medianSeconds call's runs, per run: on a shared
/// machine wall time includes waiting for a core, CPU time does not.
double LastCpuSeconds = 0;

/// Median seconds of Reps runs of Fn (after one warm-up run).
template <typename F> double medianSeconds(int Reps, F &&Fn) {
  return bench::medianSeconds(Reps, Fn, &LastCpuSeconds);
}

Tensor runKernel(const char *Op, const std::vector<Tensor> &In,
                 const Attrs &A = {}) {
  return invokeKernel(KernelRegistry::global().get(Op), In, A).at(0);
}

/// resnet18's 3x3 stride-1 convs as the optimized model runs them
/// (conv2d_nchwc on NCHW{Bk}c tensors, constant weights, bias and relu
/// fused), by oneDNN's direct kernel, our row kernel (BlockedDirectConv.h;
/// oneDNN's where it does not take the conv), and Winograd F(2x2) and
/// F(4x4), at 1 and Cores threads; "auto" is what the runtime picks.
void benchWinograd(bool Quick, int Cores, int64_t Bk) {
  std::string Data = fmt::format("NCHW{}c", Bk);
  struct Case {
    int64_t C, HW;
  };
  fmt::print("\nresnet18 3x3 stride-1 convs, {}, bias (+ residual) + "
             "relu: ms (GFLOP/s of the direct conv's count)\n",
             Data);
  fmt::print("{:>16} {:>3} {:>16} {:>16} {:>16} {:>16} {:>16}\n", "C x H x W",
             "T", "oneDNN direct", "rows (ours)", "winograd m=2",
             "winograd m=4", "auto");
  // resnet18's four stages, and fewer channels (where Auto keeps the direct
  // kernel).
  for (Case K : {Case{64, 56}, Case{128, 28}, Case{256, 14}, Case{512, 7},
                 Case{16, 56}, Case{32, 56}}) {
    if (K.C % Bk != 0)
      continue;
    Tensor X = randomTensor({1, K.C / Bk, K.HW, K.HW, Bk}, DType::Float32, 7);
    Tensor W =
        randomTensor({K.C / Bk, K.C / Bk, 3, 3, Bk, Bk}, DType::Float32, 8);
    Tensor B = randomTensor({K.C}, DType::Float32, 9);
    Attrs A{{"pads", std::vector<int64_t>{1, 1, 1, 1}},
            {"data_layout", Data},
            {"kernel_layout", fmt::format("OIHW{}i{}o", Bk, Bk)},
            {"out_layout", Data},
            {"weights_constant", int64_t(1)}};
    double Flop = 2.0 * K.C * K.C * 9 * K.HW * K.HW;
    for (int T : {1, Cores})
      for (bool Residual : {false, true}) {
        std::vector<Tensor> In{X, W, B};
        PostOps P;
        if (Residual) {
          In.push_back(randomTensor(X.shape(), DType::Float32, 10));
          P.push_back(makePostOp(PostOp::Kind::Add, {}, In.back()));
        }
        P.push_back(makePostOp(PostOp::Kind::Relu, {}));
        encodePostOps(P, A);
        setNumThreads(T);
        std::string Row = fmt::format(
            "{:>16} {:>3}",
            fmt::format("{}x{}x{}{}", K.C, K.HW, K.HW, Residual ? "+res" : ""),
            T);
        // oneDNN's direct kernel, our row kernel (where it takes the
        // conv), Winograd's two tile sizes, the runtime's choice.
        struct Choice {
          WinogradChoice winograd;
          DirectConvChoice direct;
        };
        for (Choice C :
             {Choice{WinogradChoice::Off, DirectConvChoice::Off},
              Choice{WinogradChoice::Off, DirectConvChoice::Always},
              Choice{WinogradChoice::Tile2, DirectConvChoice::Off},
              Choice{WinogradChoice::Tile4, DirectConvChoice::Off},
              Choice{WinogradChoice::Auto, DirectConvChoice::Auto}}) {
          setWinogradChoice(C.winograd);
          setDirectConvChoice(C.direct);
          double S = medianSeconds(Quick ? 5 : 30, [&] {
            runKernel("dnnl.conv2d_nchwc_fused", In, A);
          });
          Row += fmt::format(" {:>8.3f} ({:>5.1f})", S * 1e3, Flop / S / 1e9);
        }
        fmt::print("{}\n", Row);
      }
  }
  setWinogradChoice(WinogradChoice::Auto);
  setDirectConvChoice(DirectConvChoice::Auto);
  setNumThreads(Cores);
}

/// mobilenet_v2's pointwise and depthwise convs as the optimized model runs
/// them (conv2d_nchwc on NCHW{Bk}c tensors, channels padded to a whole
/// block, constant weights, bias and relu6 fused): one thread, then Cores
/// threads as the runtime picks (parts on its pool, our direct kernel
/// for 1x1 convs with few output blocks), with oneDNN's parts only (the
/// direct kernel off), and without parts (one thread below 2^26
/// multiply-adds, oneDNN's OpenMP region above).
void benchMobileNetConvs(bool Quick, int Cores, int64_t Bk) {
  std::string Data = fmt::format("NCHW{}c", Bk);
  struct Case {
    int64_t C, M, HW, Stride; // M == 0: depthwise 3x3
  };
  fmt::print("\nmobilenet_v2 convs, {}, bias + relu6: ms\n{:>20} {:>8} "
             "{:>8} {:>8} {:>8}\n",
             Data, "conv", "T=1", "auto", "oneDNN", "no parts");
  auto Padded = [&](int64_t Channels) { return (Channels + Bk - 1) / Bk * Bk; };
  for (Case K :
       {Case{16, 96, 112, 1}, Case{32, 16, 112, 1}, Case{144, 24, 56, 1},
        Case{24, 144, 56, 1}, Case{144, 0, 56, 1}, Case{144, 0, 56, 2},
        Case{144, 32, 28, 1}, Case{576, 96, 14, 1}, Case{96, 576, 14, 1},
        Case{960, 320, 7, 1}, Case{320, 1280, 7, 1}, Case{960, 0, 7, 1}}) {
    bool Depthwise = K.M == 0;
    int64_t C = Padded(K.C), M = Depthwise ? C : Padded(K.M);
    int64_t Pad = Depthwise ? 1 : 0;
    Tensor X = randomTensor({1, C / Bk, K.HW, K.HW, Bk}, DType::Float32, 7);
    Tensor W =
        Depthwise
            ? randomTensor({C / Bk, 1, 3, 3, 1, Bk}, DType::Float32, 8)
            : randomTensor({M / Bk, C / Bk, 1, 1, Bk, Bk}, DType::Float32, 8);
    Tensor B = randomTensor({M}, DType::Float32, 9);
    Attrs A{{"pads", std::vector<int64_t>{Pad, Pad, Pad, Pad}},
            {"strides", std::vector<int64_t>{K.Stride, K.Stride}},
            {"group", Depthwise ? C : int64_t(1)},
            {"data_layout", Data},
            {"kernel_layout", Depthwise ? fmt::format("OIHW1i{}o", Bk)
                                        : fmt::format("OIHW{}i{}o", Bk, Bk)},
            {"out_layout", Data},
            {"weights_constant", int64_t(1)}};
    encodePostOps(
        {makePostOp(PostOp::Kind::Clip, {{"min", 0.0}, {"max", 6.0}})}, A);
    std::string Row = fmt::format(
        "{:>20}", fmt::format("{}{}x{}x{}{}", K.C,
                              Depthwise ? "dw" : "->" + std::to_string(K.M),
                              K.HW, K.HW, K.Stride == 2 ? " s2" : ""));
    int64_t PartsMinWork = convPartsMinWork();
    for (int Run = 0; Run < 4; ++Run) {
      setNumThreads(Run == 0 ? 1 : Cores);
      setConvPartsMinWork(Run == 3 ? INT64_MAX : PartsMinWork);
      setDirectConvChoice(Run == 2 ? DirectConvChoice::Off
                                   : DirectConvChoice::Auto);
      double S = medianSeconds(Quick ? 20 : 200, [&] {
        runKernel("dnnl.conv2d_nchwc_fused", {X, W, B}, A);
      });
      Row += fmt::format(" {:>8.3f}", S * 1e3);
    }
    setConvPartsMinWork(PartsMinWork);
    setDirectConvChoice(DirectConvChoice::Auto);
    fmt::print("{}\n", Row);
  }
  setNumThreads(Cores);
}

/// Op on In into the preallocated Out (no allocation per call, as the VM
/// runs it).
void runInto(const char *Op, const std::vector<Tensor> &In, Tensor &Out,
             const Attrs &A) {
  std::vector<Tensor> Outs{Out};
  KernelRegistry::global().get(Op).kernel(In, Outs, A);
}

/// mobilenet_v2's inverted residual blocks' first halves (1x1 conv + bias +
/// relu6, then 3x3 depthwise + bias + relu6, on NCHW16c as the optimized
/// model has them): dnnl.conv2d_nchwc_pw_dw in one pass against the two
/// dnnl.conv2d_nchwc_fused calls (the 1x1 result in a buffer allocated
/// once), alternating call by call; the ratio is the median of the pairs'.
void benchPointwiseDepthwise(bool Quick, int Cores) {
  constexpr int64_t Bk = 16;
  struct Case {
    int64_t C, E, HW, Stride;
  };
  fmt::print("\nmobilenet_v2 1x1 + depthwise pairs, NCHW16c, bias + relu6: "
             "ms, two calls against one pass (auto: whether the runtime "
             "takes the pair)\n{:>22} {:>3} {:>9} {:>9} {:>7} {:>5}\n",
             "pair", "T", "two", "one", "ratio", "auto");
  PointwiseDepthwiseChoice Saved = pointwiseDepthwiseChoice();
  setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice::Always);
  auto Clip6 = [](Attrs &A, PostOps &P, const Tensor &Bias) {
    P = {makePostOp(PostOp::Kind::Add, {}, Bias),
         makePostOp(PostOp::Kind::Clip, {{"min", 0.0}, {"max", 6.0}})};
    A.set("weights_constant", int64_t(1));
    encodePostOps(P, A);
  };
  for (Case K :
       {Case{16, 96, 112, 2}, Case{32, 144, 56, 1}, Case{32, 144, 56, 2},
        Case{32, 192, 28, 1}, Case{64, 384, 14, 1}, Case{96, 576, 14, 1},
        Case{160, 960, 7, 1}}) {
    int64_t Ib = K.C / Bk, Eb = K.E / Bk;
    Tensor X = randomTensor({1, Ib, K.HW, K.HW, Bk}, DType::Float32, 11);
    Tensor W1 = randomTensor({Eb, Ib, 1, 1, Bk, Bk}, DType::Float32, 12);
    Tensor W2 = randomTensor({Eb, 1, 3, 3, 1, Bk}, DType::Float32, 13);
    Tensor B1 = randomTensor({Eb, 1, 1, Bk}, DType::Float32, 14);
    Tensor B2 = randomTensor({Eb, 1, 1, Bk}, DType::Float32, 15);
    Attrs A1{{"data_layout", std::string("NCHW16c")},
             {"kernel_layout", std::string("OIHW16i16o")},
             {"out_layout", std::string("NCHW16c")}};
    Attrs A2{{"data_layout", std::string("NCHW16c")},
             {"kernel_layout", std::string("OIHW1i16o")},
             {"out_layout", std::string("NCHW16c")},
             {"group", K.E},
             {"pads", std::vector<int64_t>{1, 1, 1, 1}},
             {"strides", std::vector<int64_t>{K.Stride, K.Stride}}};
    PostOps P1, P2;
    Clip6(A1, P1, B1);
    Clip6(A2, P2, B2);
    int64_t Ho = (K.HW - 1) / K.Stride + 1;
    Tensor Mid = Tensor::empty({1, Eb, K.HW, K.HW, Bk}, DType::Float32);
    Tensor Out = Tensor::empty({1, Eb, Ho, Ho, Bk}, DType::Float32);
    Attrs Chain = pointwiseDepthwiseAttrs(A1, 3, A2);
    std::vector<Tensor> In1{X, W1, B1}, In2{Mid, W2, B2},
        InChain{X, W1, B1, W2, B2};
    std::string Name = fmt::format("{}->{}x{}x{}{}", K.C, K.E, K.HW, K.HW,
                                   K.Stride == 2 ? " s2" : "");
    for (int T : {1, Cores}) {
      setNumThreads(T);
      auto Two = [&] {
        runInto("dnnl.conv2d_nchwc_fused", In1, Mid, A1);
        runInto("dnnl.conv2d_nchwc_fused", In2, Out, A2);
      };
      auto One = [&] { runInto(kPointwiseDepthwiseOp, InChain, Out, Chain); };
      Two();
      One();
      std::vector<double> TwoS, OneS, Ratio;
      for (int R = 0; R < (Quick ? 30 : 300); ++R) {
        double T0 = nowSeconds();
        Two();
        double T1 = nowSeconds();
        One();
        double T2 = nowSeconds();
        TwoS.push_back(T1 - T0);
        OneS.push_back(T2 - T1);
        Ratio.push_back((T2 - T1) / (T1 - T0));
      }
      auto Median = [](std::vector<double> V) {
        std::sort(V.begin(), V.end());
        return V[V.size() / 2];
      };
      setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice::Auto);
      bool Auto = pointwiseDepthwiseTakes(Mid.nbytes());
      setPointwiseDepthwiseChoice(PointwiseDepthwiseChoice::Always);
      fmt::print("{:>22} {:>3} {:>9.3f} {:>9.3f} {:>7.2f} {:>5}\n", Name, T,
                 Median(TwoS) * 1e3, Median(OneS) * 1e3, Median(Ratio),
                 Auto ? "yes" : "no");
    }
  }
  setPointwiseDepthwiseChoice(Saved);
  setNumThreads(Cores);
}

} // namespace

int main(int Argc, char **Argv) {
  bool Quick = Argc > 1 && std::strcmp(Argv[1], "--quick") == 0;
  bench::CpuPeak Cpu = bench::measureCpuPeak();
  int Cores = (int)std::thread::hardware_concurrency();
  double Peak = Cores * Cpu.coreGFlops();
  double Load = 0;
  std::ifstream("/proc/loadavg") >> Load;
  fmt::print("load average (1 min) at start: {:.1f}\n", Load);
  fmt::print("machine: {}, {} cores x {:.2f} GHz (listed {:.2f}, busy "
             "{:.2f}) x {} flop/cycle = {:.1f} GFLOP/s fp32 peak\n",
             Cpu.model, Cores, Cpu.ghz(), Cpu.listedGHz, Cpu.busyGHz,
             Cpu.flopsPerCycle, Peak);

  // 1024^3 matmul.
  int64_t N = 1024;
  Tensor A = randomTensor({N, N}, DType::Float32, 1);
  Tensor B = randomTensor({N, N}, DType::Float32, 2);
  double Flop = 2.0 * N * N * N;
  for (int T : {1, Cores}) {
    setNumThreads(T);
    double S = medianSeconds(Quick ? 3 : 10, [&] {
      runKernel("dnnl.matmul", {A, B});
    });
    double G = Flop / S / 1e9, TPeak = Peak * T / Cores;
    // Flops per CPU-second of all threads: the rate while on a core.
    double GCpu = Flop / LastCpuSeconds / 1e9 * T;
    fmt::print("matmul 1024^3, {} thread(s), oneDNN: {:.2f} ms wall, {:.1f} "
               "GFLOP/s = {:.0f}% of {}-core peak ({:.1f}); by CPU time "
               "{:.1f} GFLOP/s = {:.0f}%\n",
               T, S * 1e3, G, 100 * G / TPeak, T, TPeak, GCpu,
               100 * GCpu / TPeak);
  }
  setNumThreads(Cores);
  {
    DnnlDisabledScope Off;
    double S = medianSeconds(1, [&] { runKernel("matmul", {A, B}); });
    fmt::print("matmul 1024^3, {} threads, reference: {:.1f} ms, {:.2f} "
               "GFLOP/s\n",
               Cores, S * 1e3, Flop / S / 1e9);
  }

  // A ResNet-18 stage-2 conv (3x3, 128 channels, 28x28), with and without
  // oneDNN, and its per-call overhead once the primitive is cached.
  Tensor X = randomTensor({1, 128, 28, 28}, DType::Float32, 3);
  Tensor W = randomTensor({128, 128, 3, 3}, DType::Float32, 4);
  Attrs CA{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  double ConvFlop = 2.0 * 128 * 128 * 9 * 28 * 28;
  dnnlClearCaches();
  double First = nowSeconds();
  runKernel("dnnl.conv", {X, W}, CA);
  First = nowSeconds() - First;
  double S = medianSeconds(Quick ? 5 : 20, [&] {
    runKernel("dnnl.conv", {X, W}, CA);
  });
  DnnlCacheStats St = dnnlCacheStats();
  fmt::print("conv 128x28x28 3x3, oneDNN: first call {:.2f} ms (creates the "
             "primitive), then {:.3f} ms = {:.1f} GFLOP/s ({:.1f} by CPU "
             "time); primitives created {}, cache hits {}\n",
             First * 1e3, S * 1e3, ConvFlop / S / 1e9,
             ConvFlop / LastCpuSeconds / 1e9 * numThreads(),
             St.primitivesCreated, St.primitiveHits);
  Attrs CF = CA;
  CF.set("weights_constant", int64_t(1));
  encodePostOps({}, CF);
  S = medianSeconds(Quick ? 5 : 20, [&] {
    runKernel("dnnl.conv_fused", {X, W}, CF);
  });
  fmt::print("conv 128x28x28 3x3, oneDNN, cached constant weights: {:.3f} ms "
             "= {:.1f} GFLOP/s ({:.1f} by CPU time)\n",
             S * 1e3, ConvFlop / S / 1e9,
             ConvFlop / LastCpuSeconds / 1e9 * numThreads());
  {
    DnnlDisabledScope Off;
    S = medianSeconds(Quick ? 1 : 3, [&] { runKernel("conv", {X, W}, CA); });
    fmt::print("conv 128x28x28 3x3, reference: {:.3f} ms = {:.1f} GFLOP/s\n",
               S * 1e3, ConvFlop / S / 1e9);
  }
  // The block the compiler picks on this host (LayoutPreference.cc), and 8.
  std::vector<int64_t> Blocks = {8};
  if (__builtin_cpu_supports("avx512f"))
    Blocks.insert(Blocks.begin(), 16);
  for (int64_t Bk : Blocks)
    benchWinograd(Quick, Cores, Bk);
  for (int64_t Bk : Blocks)
    benchMobileNetConvs(Quick, Cores, Bk);
  if (__builtin_cpu_supports("avx512f"))
    benchPointwiseDepthwise(Quick, Cores);
  // Small-shape call overhead: a 16x16x16 matmul is nearly all dispatch.
  Tensor SA = randomTensor({16, 16}, DType::Float32, 5);
  S = medianSeconds(1000, [&] { runKernel("dnnl.matmul", {SA, SA}); });
  fmt::print("matmul 16^3 per call (dnnl.matmul, on smallGemm): {:.2f} us\n",
             S * 1e6);
  return 0;
}
