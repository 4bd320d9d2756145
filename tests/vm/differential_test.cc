//===- differential_test.cc - randomized differential testing -------------===//
//
// Generates small random programs (DAGs of elementwise, comparison, where,
// reduction, cast, slicing, indexing and layout operators, with edge-case
// attributes) and feeds them edge values (NaN, +-Inf, -0, huge and tiny
// floats, INT_MIN/MAX, empty extents). Every executor must agree with the
// reference interpreter: the same error-or-not, integer and bool outputs bit
// for bit, float outputs NaN for NaN and within a small tolerance (math
// functions may differ in the last bits between libm and generated code).
//
// RIVET_DIFF_SEED picks the sequence (default fixed, so CI is
// reproducible); RIVET_DIFF_ITERATIONS is the number of programs (default
// 1,500, the same on every machine) and RIVET_DIFF_SECONDS a bound on the
// time (default 120 s). A failure prints the program text and the case's
// seed.
//
//===----------------------------------------------------------------------===//
#include "ir/Expr.h"
#include "ir/Interpreter.h"
#include "ir/Parser.h"
#include "ir/Type.h"
#include "ir/TypeInference.h"
#include "kernels/Error.h"
#include "support/Executors.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <sstream>

using namespace rivet;
using namespace rivet::ir;

namespace {

using Rng = std::mt19937_64;

uint64_t envOr(const char *Name, uint64_t Default) {
  const char *V = std::getenv(Name);
  return V && *V ? std::strtoull(V, nullptr, 10) : Default;
}

int64_t pick(Rng &R, int64_t Lo, int64_t Hi) {
  return std::uniform_int_distribution<int64_t>(Lo, Hi)(R);
}
bool chance(Rng &R, double P) {
  return std::uniform_real_distribution<double>(0, 1)(R) < P;
}

/// A value of the program under construction, with its inferred type.
struct Val {
  std::string Name;
  DType Dt;
  std::vector<int64_t> Shape;
};

std::string listOf(const std::vector<int64_t> &V) {
  std::string S = "[";
  for (size_t I = 0; I < V.size(); ++I)
    S += (I ? ", " : "") + std::to_string(V[I]);
  return S + "]";
}

std::string typeOf(const Val &V) {
  std::string S = "Tensor[(";
  for (size_t I = 0; I < V.Shape.size(); ++I)
    S += (I ? ", " : "") + std::to_string(V.Shape[I]);
  if (V.Shape.size() == 1)
    S += ",";
  return S + "), " + std::string(dtypeName(V.Dt)) + "]";
}

bool isF32(DType T) { return T == DType::Float32; }

/// A scalar literal of dtype T that is sometimes an edge value.
std::string literal(Rng &R, DType T) {
  if (T == DType::Float32) {
    static const char *const F[] = {"0.5f32", "-2.0f32", "0.0f32",  "-0.0f32",
                                    "nanf32", "inff32",  "-inff32", "1e30f32"};
    return F[pick(R, 0, 7)];
  }
  if (T == DType::Int32) {
    static const char *const I[] = {"1i32", "-1i32", "0i32", "7i32",
                                    "2147483647i32"};
    return I[pick(R, 0, 4)];
  }
  if (T == DType::Int64) {
    static const char *const I[] = {"1i64", "-1i64", "0i64", "3i64",
                                    "9223372036854775807i64"};
    return I[pick(R, 0, 4)];
  }
  return chance(R, 0.5) ? "true" : "false";
}

struct Program {
  std::vector<Val> Params;
  std::vector<std::string> Lets; // "let %vN = ...;"
  std::vector<Val> Vals;         // params, then the lets' values
  std::string Result;

  std::string text(const std::string &Body) const {
    std::string S = "def @main(";
    for (size_t I = 0; I < Params.size(); ++I)
      S += (I ? ", " : "") + Params[I].Name + ": " + typeOf(Params[I]);
    S += ") {\n";
    for (const std::string &L : Lets)
      S += "  " + L + "\n";
    return S + "  " + Body + "\n}\n";
  }
};

/// The type of Expr appended to P, or nothing when type inference rejects
/// it (the generator then tries another operator).
std::optional<Val> typeCheck(const Program &P, const std::string &Expr) {
  try {
    Module M = parseModule(P.text(Expr));
    inferTypes(M);
    const auto *F = M.function("main")->as<FunctionNode>();
    const auto *T = F->body->checkedType->as<TensorTypeNode>();
    if (!T || !T->isStatic())
      return std::nullopt;
    Val V{"", T->dtype, {}};
    for (const Dim &D : *T->shape)
      V.Shape.push_back(D.value);
    if (V.Dt != DType::Float32 && V.Dt != DType::Int32 &&
        V.Dt != DType::Int64 && V.Dt != DType::Bool)
      return std::nullopt;
    return V;
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

int64_t numel(const std::vector<int64_t> &S) {
  int64_t N = 1;
  for (int64_t D : S)
    N *= D;
  return N;
}

/// One random operator application on existing values, as text.
std::string randomOp(Rng &R, const Program &P) {
  const Val &A = P.Vals[pick(R, 0, (int64_t)P.Vals.size() - 1)];
  // Prefer recent values so chains get deep.
  const Val &X = chance(R, 0.6) ? P.Vals.back() : A;
  const Val &Y = P.Vals[pick(R, 0, (int64_t)P.Vals.size() - 1)];
  const std::string &x = X.Name;
  int64_t Rank = (int64_t)X.Shape.size();
  auto randAxis = [&] { return Rank ? pick(R, -Rank, Rank - 1) : 0; };
  switch (pick(R, 0, 11)) {
  case 0: { // unary float
    static const char *const U[] = {"relu",  "sigmoid", "exp",      "log",
                                    "sqrt",  "abs",     "negative", "tanh",
                                    "floor", "ceil",    "round",    "sign"};
    if (!isF32(X.Dt))
      return "";
    return std::string(U[pick(R, 0, 11)]) + "(" + x + ")";
  }
  case 1: { // unary integer
    static const char *const U[] = {"abs", "negative"};
    if (X.Dt != DType::Int32 && X.Dt != DType::Int64)
      return "";
    return std::string(U[pick(R, 0, 1)]) + "(" + x + ")";
  }
  case 2:
  case 3: { // binary, broadcasting with another value or a literal
    static const char *const B[] = {"add",     "subtract", "multiply",
                                    "maximum", "minimum",  "divide"};
    if (X.Dt == DType::Bool)
      return "";
    int64_t K = pick(R, 0, isF32(X.Dt) ? 5 : 4); // no integer division
    std::string Other =
        Y.Dt == X.Dt && chance(R, 0.7) ? Y.Name : literal(R, X.Dt);
    return chance(R, 0.5) ? std::string(B[K]) + "(" + x + ", " + Other + ")"
                          : std::string(B[K]) + "(" + Other + ", " + x + ")";
  }
  case 4: { // comparison, maybe under a where
    static const char *const C[] = {"greater", "less", "equal", "not_equal",
                                    "greater_equal"};
    if (X.Dt == DType::Bool)
      return "";
    std::string Other = Y.Dt == X.Dt ? Y.Name : literal(R, X.Dt);
    std::string Cmp =
        std::string(C[pick(R, 0, 4)]) + "(" + x + ", " + Other + ")";
    if (chance(R, 0.5))
      return Cmp;
    return "where(" + Cmp + ", " + x + ", " + Other + ")";
  }
  case 5: { // reduction
    static const char *const Red[] = {"sum", "max", "min", "mean"};
    int64_t K = pick(R, 0, 3);
    if (X.Dt == DType::Bool || (K == 3 && !isF32(X.Dt)))
      return "";
    std::vector<int64_t> Axes;
    bool AllAxes = Rank == 0 || chance(R, 0.3);
    if (!AllAxes)
      Axes.push_back(randAxis());
    // Known open disagreement: max/min over an empty axis is an error on
    // the interpreter but +-inf in generated code; not generated here.
    if (K == 1 || K == 2) {
      if (AllAxes ? numel(X.Shape) == 0 : X.Shape[(Axes[0] + Rank) % Rank] == 0)
        return "";
    }
    std::string S = std::string(Red[K]) + "(" + x;
    if (!AllAxes)
      S += ", axis=" + listOf(Axes);
    if (chance(R, 0.5))
      S += ", keepdims=1";
    return S + ")";
  }
  case 6: { // cast; float->int is undefined for NaN/Inf, so not generated
    static const DType To[] = {DType::Float32, DType::Int32, DType::Int64,
                               DType::Bool};
    DType T = To[pick(R, 0, 3)];
    if (isF32(X.Dt) && (T == DType::Int32 || T == DType::Int64))
      return "";
    // Int->float32 turns INT_MIN/MAX into +-2^31 whose float sums cancel
    // differently in each accumulation order (sum/mean differ by far more
    // than the tolerance): a property of float, not a disagreement.
    if ((X.Dt == DType::Int32 || X.Dt == DType::Int64) && isF32(T))
      return "";
    return "cast(" + x + ", dtype=\"" + std::string(dtypeName(T)) + "\")";
  }
  case 7: { // strided_slice with out-of-range and negative bounds
    if (Rank == 0)
      return "";
    int64_t Ax = randAxis();
    int64_t E = X.Shape[(Ax + Rank) % Rank];
    int64_t Stride = chance(R, 0.3) ? -pick(R, 1, 2) : pick(R, 1, 3);
    int64_t B = pick(R, -E - 2, E + 2), End = pick(R, -E - 2, E + 2);
    if (chance(R, 0.15))
      End = Stride > 0 ? std::numeric_limits<int64_t>::max()
                       : std::numeric_limits<int64_t>::min();
    return "strided_slice(" + x + ", begin=" + listOf({B}) +
           ", end=" + listOf({End}) + ", strides=" + listOf({Stride}) +
           ", axes=" + listOf({Ax}) + ")";
  }
  case 8: { // take with constant indices, some out of range
    if (Rank == 0)
      return "";
    int64_t Ax = randAxis();
    int64_t E = X.Shape[(Ax + Rank) % Rank];
    int64_t N = pick(R, 0, 3);
    std::vector<int64_t> Idx;
    for (int64_t I = 0; I < N; ++I)
      Idx.push_back(chance(R, 0.1) ? pick(R, E, E + 2) : pick(R, -E, E - 1));
    std::string Vs = listOf(Idx);
    return "take(" + x + ", const[(" + std::to_string(N) +
           (N == 1 ? ",), int64](" : "), int64](") + Vs +
           "), axis=" + std::to_string(Ax) + ")";
  }
  case 9: { // concatenate with a value of the same dtype and rank
    if (Rank == 0 || Y.Dt != X.Dt || Y.Shape.size() != X.Shape.size())
      return "";
    return "concatenate(" + x + ", " + Y.Name +
           ", axis=" + std::to_string(randAxis()) + ")";
  }
  case 10: { // transpose (reversed axes or a random permutation)
    if (Rank < 2)
      return "";
    std::vector<int64_t> Perm(Rank);
    for (int64_t I = 0; I < Rank; ++I)
      Perm[I] = I;
    std::shuffle(Perm.begin(), Perm.end(), R);
    return chance(R, 0.3) ? "transpose(" + x + ")"
                          : "transpose(" + x + ", axes=" + listOf(Perm) + ")";
  }
  default: { // reshape to flat or to (-1, last)
    if (Rank == 0)
      return "";
    if (chance(R, 0.5) || numel(X.Shape) == 0)
      return "reshape(" + x + ", newshape=" + listOf({numel(X.Shape)}) + ")";
    return "reshape(" + x + ", newshape=" + listOf({-1, X.Shape.back()}) + ")";
  }
  }
}

Program randomProgram(Rng &R) {
  Program P;
  int64_t NParams = pick(R, 1, 3);
  std::vector<int64_t> Base;
  for (int64_t I = 0, Rk = pick(R, 0, 3); I < Rk; ++I)
    Base.push_back(chance(R, 0.08) ? 0 : pick(R, 1, 4));
  static const DType Dts[] = {DType::Float32, DType::Float32, DType::Int32,
                              DType::Int64, DType::Bool};
  for (int64_t I = 0; I < NParams; ++I) {
    Val V{"%p" + std::to_string(I), Dts[pick(R, 0, 4)], Base};
    // Sometimes a broadcastable suffix of the shared shape.
    if (!Base.empty() && chance(R, 0.3))
      V.Shape.erase(V.Shape.begin(),
                    V.Shape.begin() + pick(R, 1, (int64_t)Base.size()));
    P.Params.push_back(V);
    P.Vals.push_back(V);
  }
  int64_t NOps = pick(R, 1, 8);
  for (int64_t Tries = 0; (int64_t)P.Lets.size() < NOps && Tries < 200;
       ++Tries) {
    std::string E = randomOp(R, P);
    if (E.empty())
      continue;
    std::optional<Val> V = typeCheck(P, E);
    if (!V)
      continue;
    V->Name = "%v" + std::to_string(P.Lets.size());
    P.Lets.push_back("let " + V->Name + " = " + E + ";");
    P.Vals.push_back(*V);
  }
  // Every value that no later let uses: dead code could be removed at -O1+
  // and with it an error (an out-of-range take) that the interpreter
  // reports, which is not a disagreement.
  auto UsedLater = [&](const std::string &Name, size_t From) {
    for (size_t L = From; L < P.Lets.size(); ++L)
      for (size_t At = P.Lets[L].find(Name); At != std::string::npos;
           At = P.Lets[L].find(Name, At + 1))
        if (!std::isdigit((unsigned char)P.Lets[L][At + Name.size()]))
          return true;
    return false;
  };
  std::vector<std::string> Sinks;
  for (size_t L = 0; L < P.Lets.size(); ++L)
    if (!UsedLater("%v" + std::to_string(L), L + 1))
      Sinks.push_back("%v" + std::to_string(L));
  if (Sinks.empty())
    Sinks.push_back(P.Vals.back().Name);
  P.Result = Sinks.size() == 1 ? Sinks[0] : "(";
  for (size_t I = 0; Sinks.size() > 1 && I < Sinks.size(); ++I)
    P.Result += (I ? ", " : "") + Sinks[I] + (I + 1 == Sinks.size() ? ")" : "");
  return P;
}

Tensor randomInput(Rng &R, const Val &V) {
  Tensor T = Tensor::empty(V.Shape, V.Dt);
  int64_t N = T.numel();
  for (int64_t I = 0; I < N; ++I) {
    bool Edge = chance(R, 0.2);
    switch (V.Dt) {
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
      T.data<float>()[I] =
          Edge ? E[pick(R, 0, 8)]
               : std::uniform_real_distribution<float>(-4, 4)(R);
      break;
    }
    case DType::Int32: {
      static const int32_t E[] = {0, -1, std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max()};
      T.data<int32_t>()[I] = Edge ? E[pick(R, 0, 3)] : (int32_t)pick(R, -9, 9);
      break;
    }
    case DType::Int64: {
      static const int64_t E[] = {0, -1, std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max()};
      T.data<int64_t>()[I] = Edge ? E[pick(R, 0, 3)] : pick(R, -9, 9);
      break;
    }
    default: T.data<bool>()[I] = chance(R, 0.5);
    }
  }
  return T;
}

/// Outputs, or the error message (prefixed "error: ").
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

Outcome onInterpreter(const Module &M, const std::vector<Tensor> &In) {
  return outcomeOf([&] { return rivet::testing::runOnInterpreter(M, In); });
}

Outcome onVM(const Module &M, int Level, vm::NativeCode Mode,
             const std::vector<Tensor> &In) {
  return outcomeOf([&] { return rivet::testing::runOnVM(M, Level, Mode, In); });
}

/// Why Got differs from Want, or "" when they agree.
std::string difference(const Outcome &Got, const Outcome &Want) {
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
      if (isF32(W.dtype())) {
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

TEST(Differential, ExecutorsAgreeOnRandomPrograms) {
  const uint64_t Seed = envOr("RIVET_DIFF_SEED", 20240623);
  // By default a fixed number of programs (the same ones on every machine,
  // so CI's verdict does not depend on its speed); the time is a safety
  // bound. Longer searches set both.
  const uint64_t Seconds = envOr("RIVET_DIFF_SECONDS", 120);
  const uint64_t MaxIters = envOr("RIVET_DIFF_ITERATIONS", 1500);
  const auto Deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(Seconds);
  struct Executor {
    const char *Name;
    int Level;
    vm::NativeCode Mode;
  };
  const Executor Executors[] = {{"vm -O0 jit", 0, vm::NativeCode::Jit},
                                {"vm -O3 jit", 3, vm::NativeCode::Jit},
                                {"vm -O3 codegen off", 3, vm::NativeCode::Off}};
  uint64_t Ran = 0, Failures = 0;
  for (uint64_t Iter = 0;
       Iter < MaxIters && std::chrono::steady_clock::now() < Deadline &&
       Failures < 5;
       ++Iter) {
    // Each case has its own seed, printed on failure, so one case can be
    // rerun alone (RIVET_DIFF_SEED=<case seed> RIVET_DIFF_ITERATIONS=1).
    const uint64_t CaseSeed = Seed + Iter;
    Rng R(CaseSeed);
    Program P = randomProgram(R);
    std::string Text = P.text(P.Result);
    Module M = parseModule(Text);
    inferTypes(M);
    std::vector<Tensor> In;
    for (const Val &V : P.Params)
      In.push_back(randomInput(R, V));
    Outcome Want = onInterpreter(M, In);
    ++Ran;
    for (const Executor &E : Executors) {
      std::string D = difference(onVM(M, E.Level, E.Mode, In), Want);
      if (D.empty())
        continue;
      ++Failures;
      ADD_FAILURE() << E.Name << " disagrees with the interpreter: " << D
                    << "\ncase seed " << CaseSeed
                    << " (RIVET_DIFF_SEED=" << CaseSeed
                    << " RIVET_DIFF_ITERATIONS=1)\n"
                    << Text;
      break;
    }
  }
  std::printf("differential: %llu programs, seed %llu\n",
              (unsigned long long)Ran, (unsigned long long)Seed);
  EXPECT_GT(Ran, 0u);
}

} // namespace
