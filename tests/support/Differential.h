//===- Differential.h - Randomized differential testing ---------*- C++ -*-===//
//
// The shared half of the randomized differential testers (vm/differential,
// frontend/onnx_differential): random edge-value inputs, the executors, what
// counts as a disagreement, the seed/iterations/seconds settings and the
// failure report, and a runner that checks generated programs in batches.
//
// A tester generates programs, each from its own case seed (the run's seed
// plus its index), as a module whose @main is the program. The runner
// gathers a batch of them into one module, each program a global function
// of its own, so that one compile per executor serves the batch (most of a
// program's time is compiling it). A batch that fails to compile is
// compiled again one program per module, so that the failure belongs to
// the program that causes it. Each program runs on the reference
// interpreter and on every executor, which must agree with it: the same
// error-or-not, integer and bool outputs bit for bit, float outputs NaN for
// NaN and within a small tolerance (math functions may differ in the last
// bits between libm and generated code).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Interpreter.h"
#include "ir/Module.h"
#include "ir/Parser.h"
#include "ir/TypeInference.h"
#include "kernels/Tensor.h"
#include "support/Executors.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace rivet::testing::diff {

using Rng = std::mt19937_64;

inline uint64_t envOr(const char *Name, uint64_t Default) {
  const char *V = std::getenv(Name);
  return V && *V ? std::strtoull(V, nullptr, 10) : Default;
}

inline int64_t pick(Rng &R, int64_t Lo, int64_t Hi) {
  return std::uniform_int_distribution<int64_t>(Lo, Hi)(R);
}
inline bool chance(Rng &R, double P) {
  return std::uniform_real_distribution<double>(0, 1)(R) < P;
}

inline int64_t numel(const std::vector<int64_t> &S) {
  int64_t N = 1;
  for (int64_t D : S)
    N *= D;
  return N;
}

/// A tensor of Shape and dtype T (float32, int32, int64 or bool), a fifth of
/// its elements edge values: NaN, +-Inf, +-0, +-3e38, denormal and smallest
/// normal floats; 0, -1, INT_MIN and INT_MAX integers.
inline Tensor randomInput(Rng &R, DType T, const std::vector<int64_t> &Shape) {
  Tensor X = Tensor::empty(Shape, T);
  int64_t N = X.numel();
  for (int64_t I = 0; I < N; ++I) {
    bool Edge = chance(R, 0.2);
    switch (T) {
    case DType::Float32: {
      static const float E[] = {std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                -0.0f,
                                0.0f,
                                3e38f,
                                -3e38f,
                                1e-40f,
                                std::numeric_limits<float>::min()};
      X.data<float>()[I] =
          Edge ? E[pick(R, 0, 8)]
               : std::uniform_real_distribution<float>(-4, 4)(R);
      break;
    }
    case DType::Int32: {
      static const int32_t E[] = {0, -1, std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max()};
      X.data<int32_t>()[I] = Edge ? E[pick(R, 0, 3)] : (int32_t)pick(R, -9, 9);
      break;
    }
    case DType::Int64: {
      static const int64_t E[] = {0, -1, std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max()};
      X.data<int64_t>()[I] = Edge ? E[pick(R, 0, 3)] : pick(R, -9, 9);
      break;
    }
    default: X.data<bool>()[I] = chance(R, 0.5);
    }
  }
  return X;
}

/// Outputs, or the error message.
struct Outcome {
  std::vector<Tensor> Out;
  std::optional<std::string> Error;
};

template <typename Fn> Outcome outcomeOf(Fn F) {
  Outcome O;
  try {
    O.Out = F();
  } catch (const std::exception &E) {
    O.Error = E.what();
  }
  return O;
}

/// Why Got differs from Want, or "" when they agree.
inline std::string difference(const Outcome &Got, const Outcome &Want) {
  if (Got.Error || Want.Error) {
    if (Got.Error.has_value() != Want.Error.has_value())
      return "error on one side only: got " + Got.Error.value_or("success") +
             ", want " + Want.Error.value_or("success");
    return "";
  }
  if (Got.Out.size() != Want.Out.size())
    return "different number of outputs";
  for (size_t K = 0; K < Want.Out.size(); ++K) {
    const Tensor &G = Got.Out[K], &W = Want.Out[K];
    std::ostringstream S;
    S << "output " << K << ": ";
    if (G.dtype() != W.dtype() || G.shape() != W.shape())
      return S.str() + G.typeString() + " vs " + W.typeString();
    for (int64_t I = 0; I < W.numel(); ++I) {
      bool Same;
      if (W.dtype() == DType::Float32) {
        double A = G.elementAsDouble(I), B = W.elementAsDouble(I);
        Same = (std::isnan(A) && std::isnan(B)) || A == B ||
               (std::isfinite(A) && std::isfinite(B) &&
                std::abs(A - B) <= 1e-5 + 1e-4 * std::abs(B));
        if (!Same)
          S << "element " << I << ": " << A << " vs " << B;
      } else {
        Same = G.elementAsInt(I) == W.elementAsInt(I);
        if (!Same)
          S << "element " << I << ": " << G.elementAsInt(I) << " vs "
            << W.elementAsInt(I);
      }
      if (!Same)
        return S.str();
    }
  }
  return "";
}

/// An executor checked against the reference interpreter.
struct Executor {
  const char *Name;
  int Level;
  vm::NativeCode Mode;
};
inline const std::vector<Executor> &executors() {
  static const std::vector<Executor> E = {
      {"vm -O0 jit", 0, vm::NativeCode::Jit},
      {"vm -O3 jit", 3, vm::NativeCode::Jit},
      {"vm -O3 codegen off", 3, vm::NativeCode::Off}};
  return E;
}

/// The outcome of @main of M on In on the reference interpreter, expected
/// of every executor too (What names the case in a failure).
inline Outcome expectAgreement(const ir::Module &M,
                               const std::vector<Tensor> &In,
                               const std::string &What) {
  Outcome Want = outcomeOf([&] { return runOnInterpreter(M, In); });
  for (const Executor &E : executors()) {
    Outcome Got = outcomeOf([&] { return runOnVM(M, E.Level, E.Mode, In); });
    EXPECT_EQ(difference(Got, Want), "")
        << What << " on " << E.Name
        << "\nVM error: " << Got.Error.value_or("none")
        << "\ninterpreter error: " << Want.Error.value_or("none");
  }
  return Want;
}

/// RIVET_DIFF_SEED picks the sequence; RIVET_DIFF_ITERATIONS is the number
/// of programs and RIVET_DIFF_SECONDS a bound on the time. By default a
/// fixed number of programs (the same ones on every machine, so CI's
/// verdict does not depend on its speed), the time only a safety bound;
/// longer searches set both.
struct Settings {
  uint64_t Seed, Iterations, Seconds;
  static Settings fromEnv(uint64_t Seed, uint64_t Iterations,
                          uint64_t Seconds) {
    return {envOr("RIVET_DIFF_SEED", Seed),
            envOr("RIVET_DIFF_ITERATIONS", Iterations),
            envOr("RIVET_DIFF_SECONDS", Seconds)};
  }
};

/// One generated program: a type-checked module whose @main is the program,
/// its inputs, and its text for a failure report.
struct Case {
  uint64_t Seed = 0;
  ir::Module M;
  std::vector<Tensor> Inputs;
  /// The program as a reader sees it (computed on failure only).
  std::function<std::string()> Text;
};

/// The outputs of V flattened (support/Executors.h).
inline std::vector<Tensor> flatten(const ir::Value &V) {
  std::vector<Tensor> Out;
  flattenValue(V, Out);
  return Out;
}

/// Checks cases in batches; counts the programs run and the failures.
class Runner {
public:
  explicit Runner(const char *What, size_t BatchSize = 32)
      : What(What), BatchSize(BatchSize) {}

  /// Generates (Gen(case seed), nullopt for none) and checks programs for
  /// S's seed, iterations and seconds; stops after 5 failures.
  void run(const Settings &S,
           const std::function<std::optional<Case>(uint64_t)> &Gen) {
    const auto Start = std::chrono::steady_clock::now();
    const auto Deadline = Start + std::chrono::seconds(S.Seconds);
    std::vector<Case> Batch;
    for (uint64_t Iter = 0; Iter < S.Iterations && Failures < 5; ++Iter) {
      if (std::optional<Case> C = Gen(S.Seed + Iter))
        Batch.push_back(std::move(*C));
      bool Late = std::chrono::steady_clock::now() >= Deadline;
      if (Batch.size() >= BatchSize || Iter + 1 == S.Iterations || Late) {
        check(Batch);
        Batch.clear();
      }
      if (Late)
        break;
    }
    double Secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count();
    std::printf("%s: %llu programs in %.1f s (%.0f/s), seed %llu\n", What,
                (unsigned long long)Ran, Secs, Secs > 0 ? Ran / Secs : 0.0,
                (unsigned long long)S.Seed);
    EXPECT_GT(Ran, 0u);
  }

  uint64_t ran() const { return Ran; }

private:
  const char *What;
  size_t BatchSize;
  uint64_t Ran = 0, Failures = 0;

  static std::string nameOf(const Case &C) {
    return "case" + std::to_string(C.Seed);
  }

  /// The cases' programs as the functions of one module, with an @main
  /// that the VM compiler requires (it keeps every global function).
  /// The functions are type-checked already: no inference runs again.
  static ir::Module moduleOf(const std::vector<const Case *> &Cs) {
    static const ir::Module Main = [] {
      ir::Module M = ir::parseModule("def @main() { 0.0f32 }");
      ir::inferTypes(M);
      return M;
    }();
    ir::Module M = Main;
    for (const Case *C : Cs)
      M.addFunction(nameOf(*C), C->M.function("main"));
    return M;
  }

  static std::vector<vm::ObjectRef> args(const Case &C) {
    std::vector<vm::ObjectRef> A;
    for (const Tensor &T : C.Inputs)
      A.push_back(vm::makeTensor(T));
    return A;
  }

  /// Each case on the executable of M, or M's compile error for each (and
  /// then CompileFailed set).
  static std::vector<Outcome> onVM(const ir::Module &M,
                                   const std::vector<const Case *> &Cs,
                                   const Executor &E,
                                   bool *CompileFailed = nullptr) {
    std::vector<Outcome> R(Cs.size());
    std::shared_ptr<vm::Executable> Exe;
    try {
      vm::CompileOptions O;
      O.optLevel = E.Level;
      O.codegen.mode = E.Mode;
      Exe = vm::compile(M, O);
    } catch (const std::exception &X) {
      for (Outcome &O : R)
        O.Error = X.what();
      if (CompileFailed)
        *CompileFailed = true;
      return R;
    }
    std::optional<vm::VirtualMachine> VM;
    for (size_t I = 0; I < Cs.size(); ++I) {
      if (!VM)
        VM.emplace(Exe);
      R[I] = outcomeOf([&] {
        return flatten(
            vm::toValue(VM->invoke(nameOf(*Cs[I]), args(*Cs[I])), *Exe, M));
      });
      if (R[I].Error) // a fresh VM after an error
        VM.reset();
    }
    return R;
  }

  void check(const std::vector<Case> &Batch) {
    if (Batch.empty())
      return;
    std::vector<const Case *> All;
    for (const Case &C : Batch)
      All.push_back(&C);
    ir::Module M = moduleOf(All);
    std::vector<Outcome> Want(Batch.size());
    {
      std::optional<ir::Interpreter> I;
      for (size_t K = 0; K < Batch.size(); ++K) {
        if (!I)
          I.emplace(M);
        Want[K] = outcomeOf([&] {
          const std::vector<Tensor> &In = Batch[K].Inputs;
          return flatten(I->call(nameOf(Batch[K]),
                                 std::vector<ir::Value>(In.begin(), In.end())));
        });
        if (Want[K].Error)
          I.reset();
      }
    }
    Ran += Batch.size();
    std::vector<bool> Failed(Batch.size());
    for (const Executor &E : executors()) {
      bool CompileFailed = false;
      std::vector<Outcome> Got = onVM(M, All, E, &CompileFailed);
      // A batch that does not compile: each program alone.
      if (CompileFailed && Batch.size() > 1)
        for (size_t K = 0; K < Batch.size(); ++K)
          Got[K] = onVM(moduleOf({All[K]}), {All[K]}, E)[0];
      for (size_t K = 0; K < Batch.size(); ++K) {
        if (Failed[K])
          continue;
        std::string D = difference(Got[K], Want[K]);
        if (D.empty())
          continue;
        Failed[K] = true;
        report(Batch[K], E, D);
      }
    }
  }

  void report(const Case &C, const Executor &E, const std::string &D) {
    ++Failures;
    // Whether the program disagrees compiled alone, as a rerun of its
    // case seed compiles it.
    std::string Alone;
    {
      ir::Module M1 = moduleOf({&C});
      std::vector<Outcome> Got = onVM(M1, {&C}, E);
      Outcome Want = outcomeOf([&] {
        ir::Interpreter I(M1);
        return flatten(
            I.call(nameOf(C),
                   std::vector<ir::Value>(C.Inputs.begin(), C.Inputs.end())));
      });
      std::string D1 = difference(Got[0], Want);
      Alone = D1.empty() ? "\n(it agrees when compiled alone)"
                         : "\n(alone too: " + D1 + ")";
    }
    ADD_FAILURE() << E.Name << " disagrees with the interpreter: " << D << Alone
                  << "\ncase seed " << C.Seed << " (RIVET_DIFF_SEED=" << C.Seed
                  << " RIVET_DIFF_ITERATIONS=1)\n"
                  << C.Text();
  }
};

} // namespace rivet::testing::diff
