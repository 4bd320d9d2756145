//===- interpreter_deps_test.cc - The interpreter without oneDNN ----------===//
//
// The reference interpreter is the oracle every compiled result is checked
// against, so it must not share the VM's conv/matmul library: librivet_ir
// (the IR, its passes and the interpreter) and librivet_kernels (tensors and
// the reference kernels) need no oneDNN, LLVM, ONNX or protobuf, neither
// directly (readelf's NEEDED entries) nor through another library (ldd).
//
// This executable links librivet_ir alone (tests/CMakeLists.txt): it
// interprets a conv and a dense, before and after the passes, and checks
// that neither oneDNN nor the runtime library is mapped into the process.
//
//===----------------------------------------------------------------------===//
#include "ir/Interpreter.h"
#include "ir/Module.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/transforms/LayoutPreference.h"
#include "ir/transforms/Pass.h"

#include "support/LibraryDeps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace rivet;
using namespace rivet::ir;

namespace {

using rivet::test::capture;

const char *kLibraries[] = {RIVET_BINARY_DIR "/src/librivet_kernels.so",
                            RIVET_BINARY_DIR "/src/librivet_ir.so"};

/// The forbidden library named in a listing, or "". The runtime and the
/// compiler libraries are above the interpreter's: it may not load them.
std::string forbidden(const std::string &Listing) {
  return rivet::test::firstNamed(
      Listing, {"libdnnl", "libllvm", "libonnx", "libprotobuf", "libboost",
                "librivet_runtime", "librivet_compiler"});
}

/// A small conv + relu and a dense; the weights are arguments, so that the
/// reference result below can compute from the same values.
const char *kProgram = R"(
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 3, 3), float32],
          %b: Tensor[(2,), float32], %v: Tensor[(3, 4), float32],
          %u: Tensor[(5, 4), float32])
    -> (Tensor[(1, 2, 4, 4), float32], Tensor[(3, 5), float32]) {
  let %c = relu(conv(%x, %w, %b, pads=[1, 1, 1, 1]));
  let %d = dense(%v, %u);
  (%c, %d)
}
)";

std::vector<float> values(size_t N, int Seed) {
  std::vector<float> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = (float)((int)((I * 7 + Seed * 13) % 11) - 5) / 4.0f;
  return V;
}

struct Inputs {
  std::vector<float> x = values(1 * 2 * 4 * 4, 1), w = values(2 * 2 * 3 * 3, 2),
                     b = values(2, 3), v = values(3 * 4, 4),
                     u = values(5 * 4, 5);

  std::vector<Value> args() const {
    return {Value(Tensor::fromVector<float>(x, {1, 2, 4, 4})),
            Value(Tensor::fromVector<float>(w, {2, 2, 3, 3})),
            Value(Tensor::fromVector<float>(b, {2})),
            Value(Tensor::fromVector<float>(v, {3, 4})),
            Value(Tensor::fromVector<float>(u, {5, 4}))};
  }

  /// relu(conv(x, w, b)) with one pixel of zero padding, by the definition.
  std::vector<double> conv() const {
    std::vector<double> R;
    for (int M = 0; M < 2; ++M)
      for (int H = 0; H < 4; ++H)
        for (int W = 0; W < 4; ++W) {
          double S = b[M];
          for (int C = 0; C < 2; ++C)
            for (int KH = 0; KH < 3; ++KH)
              for (int KW = 0; KW < 3; ++KW) {
                int IH = H + KH - 1, IW = W + KW - 1;
                if (IH < 0 || IH >= 4 || IW < 0 || IW >= 4)
                  continue;
                S += (double)x[(C * 4 + IH) * 4 + IW] *
                     w[((M * 2 + C) * 3 + KH) * 3 + KW];
              }
          R.push_back(std::max(S, 0.0));
        }
    return R;
  }

  /// v u^T.
  std::vector<double> dense() const {
    std::vector<double> R;
    for (int I = 0; I < 3; ++I)
      for (int J = 0; J < 5; ++J) {
        double S = 0;
        for (int K = 0; K < 4; ++K)
          S += (double)v[I * 4 + K] * u[J * 4 + K];
        R.push_back(S);
      }
    return R;
  }
};

void expectNear(const std::vector<double> &Got, const std::vector<double> &Want,
                const char *What) {
  ASSERT_EQ(Got.size(), Want.size()) << What;
  for (size_t I = 0; I < Got.size(); ++I)
    EXPECT_NEAR(Got[I], Want[I], 1e-5 * (1 + std::abs(Want[I])))
        << What << " element " << I;
}

void checkResult(const Value &R, const Inputs &In) {
  ASSERT_TRUE(R.isTuple());
  ASSERT_EQ(R.fields().size(), 2u);
  expectNear(R.fields()[0].tensor().toDoubleVector(), In.conv(), "conv");
  expectNear(R.fields()[1].tensor().toDoubleVector(), In.dense(), "dense");
}

/// The shared objects mapped into this process.
std::string mappedLibraries() {
  std::ifstream F("/proc/self/maps");
  std::stringstream S;
  S << F.rdbuf();
  return S.str();
}

} // namespace

TEST(InterpreterDeps, TheCheckRecognizesForbiddenLibraries) {
  EXPECT_EQ(forbidden(" 0x1 (NEEDED) Shared library: [libdnnl.so.3]"),
            "libdnnl");
  EXPECT_EQ(forbidden("libLLVM-16.so.1 => /usr/lib/libLLVM-16.so.1"),
            "libllvm");
  EXPECT_EQ(forbidden("librivet_runtime.so => /b/src/librivet_runtime.so"),
            "librivet_runtime");
  EXPECT_EQ(forbidden("7f00-7f01 r-xp 0 08:01 1 /usr/lib/libdnnl.so.3.0"),
            "libdnnl");
  EXPECT_EQ(forbidden("librivet_kernels.so => a\nlibfmt.so.9 => z\n"
                      "libc.so.6 => w"),
            "");
}

TEST(InterpreterDeps, LibrariesNeedNoOneDnnLLVMOnnxOrProtobuf) {
  for (const char *Lib : kLibraries) {
    struct stat St;
    ASSERT_EQ(stat(Lib, &St), 0) << Lib << " is missing";
    std::string Needed = capture(std::string("readelf -d ") + Lib);
    ASSERT_NE(Needed.find("(NEEDED)"), std::string::npos) << Needed;
    ASSERT_NE(Needed.find("libc.so"), std::string::npos) << Needed;
    EXPECT_EQ(forbidden(Needed), "") << Lib << " needs:\n" << Needed;

    std::string All = capture(std::string("ldd ") + Lib);
    ASSERT_NE(All.find("libc.so"), std::string::npos) << All;
    EXPECT_EQ(All.find("not found"), std::string::npos) << All;
    EXPECT_EQ(forbidden(All), "") << Lib << " loads:\n" << All;
  }
  // The interpreter's library is above the kernels'.
  std::string IrNeeds = capture(std::string("readelf -d ") + kLibraries[1]);
  EXPECT_NE(IrNeeds.find("librivet_kernels.so"), std::string::npos) << IrNeeds;
}

TEST(InterpreterDeps, InterpretsConvAndDenseWithoutOneDnn) {
  Module M = parseModule(kProgram);
  Inputs In;
  {
    Interpreter I(M);
    checkResult(I.call("main", In.args()), In);
  }

  // The passes live with the interpreter too: blocked convs (AlterOpLayout)
  // and fused groups, still on the reference kernels.
  PassContext Ctx;
  Ctx.verifyEach = true;
  Ctx.layoutPreferences = std::make_shared<UniformBlockPreferences>(2);
  optimize(M, Ctx);
  EXPECT_NE(printModule(M).find("conv2d_nchwc"), std::string::npos)
      << printModule(M);
  Interpreter I(M);
  checkResult(I.call("main", In.args()), In);

  std::string Maps = mappedLibraries();
  ASSERT_NE(Maps.find("librivet_ir.so"), std::string::npos) << Maps;
  ASSERT_NE(Maps.find("librivet_kernels.so"), std::string::npos) << Maps;
  EXPECT_EQ(forbidden(Maps), "") << "mapped:\n" << Maps;
}
