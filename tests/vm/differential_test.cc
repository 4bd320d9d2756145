//===- differential_test.cc - randomized differential testing -------------===//
//
// Generates small random programs (DAGs of elementwise, comparison, where,
// reduction, cast, slicing, indexing and layout operators, with edge-case
// attributes) and feeds them edge values (NaN, +-Inf, -0, huge and tiny
// floats, INT_MIN/MAX, empty extents). Every executor must agree with the
// reference interpreter (support/Differential.h says how).
//
// RIVET_DIFF_SEED picks the sequence (default fixed, so CI is
// reproducible); RIVET_DIFF_ITERATIONS is the number of programs (default
// 1,500, the same on every machine) and RIVET_DIFF_SECONDS a bound on the
// time (default 120 s). A failure prints the program text and the case's
// seed.
//
//===----------------------------------------------------------------------===//
#include "ir/Expr.h"
#include "ir/Parser.h"
#include "ir/Type.h"
#include "ir/TypeInference.h"
#include "support/Differential.h"

#include <gtest/gtest.h>

#include <cctype>
#include <limits>
#include <optional>

using namespace rivet;
using namespace rivet::ir;

namespace {

using namespace rivet::testing::diff;

/// A value of the program under construction, with its inferred type.
struct Val {
  std::string Name;
  DType Dt;
  std::vector<int64_t> Shape;
  /// Computed by a math function (or a float sum) that implementations may
  /// round differently in the last bit: a step function (floor, a cast to
  /// an integer, a comparison) of it is not a defined result, so the
  /// generator applies none.
  bool Inexact = false;
};

/// Whether let-expression Text, of result dtype Dt, rounds differently
/// from one correct implementation to another.
bool roundsFreely(const std::string &Text, DType Dt) {
  for (const char *F : {"exp(", "log(", "tanh(", "sigmoid("})
    if (Text.rfind(F, 0) == 0)
      return true;
  return Dt == DType::Float32 &&
         (Text.rfind("sum(", 0) == 0 || Text.rfind("mean(", 0) == 0);
}

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
/// it (the generator then tries another operator). Expr alone is checked,
/// P's values its parameters (their types are known): a check costs one
/// operator's inference, not the program's.
std::optional<Val> typeCheck(const Program &P, const std::string &Expr) {
  try {
    std::string S = "def @main(";
    for (size_t I = 0; I < P.Vals.size(); ++I)
      S += (I ? ", " : "") + P.Vals[I].Name + ": " + typeOf(P.Vals[I]);
    Module M = parseModule(S + ") {\n  " + Expr + "\n}\n");
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
    int64_t K = pick(R, 0, 11);
    if (X.Inexact && K >= 8) // floor, ceil, round, sign: steps
      return "";
    return std::string(U[K]) + "(" + x + ")";
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
    int64_t K = pick(R, 0, 5);
    std::string Other =
        Y.Dt == X.Dt && chance(R, 0.7) ? Y.Name : literal(R, X.Dt);
    return chance(R, 0.5) ? std::string(B[K]) + "(" + x + ", " + Other + ")"
                          : std::string(B[K]) + "(" + Other + ", " + x + ")";
  }
  case 4: { // comparison, maybe under a where
    static const char *const C[] = {"greater", "less", "equal", "not_equal",
                                    "greater_equal"};
    if (X.Dt == DType::Bool || X.Inexact || (Y.Dt == X.Dt && Y.Inexact))
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
    if (X.Dt == DType::Bool)
      return "";
    std::vector<int64_t> Axes;
    bool AllAxes = Rank == 0 || chance(R, 0.3);
    if (!AllAxes)
      Axes.push_back(randAxis());
    std::string S = std::string(Red[K]) + "(" + x;
    if (!AllAxes)
      S += ", axis=" + listOf(Axes);
    if (chance(R, 0.5))
      S += ", keepdims=1";
    return S + ")";
  }
  case 6: { // cast (NaN and out-of-range floats saturate to integers)
    static const DType To[] = {DType::Float32, DType::Int32, DType::Int64,
                               DType::Bool};
    DType T = To[pick(R, 0, 3)];
    if (X.Inexact && T != DType::Float32)
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

/// Whether Text mentions the value Name (%v1 is not %v10).
bool mentions(const std::string &Text, const std::string &Name) {
  for (size_t At = Text.find(Name); At != std::string::npos;
       At = Text.find(Name, At + 1))
    if (!std::isdigit((unsigned char)Text[At + Name.size()]))
      return true;
  return false;
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
    V->Inexact = roundsFreely(E, V->Dt);
    for (const Val &U : P.Vals)
      V->Inexact |= U.Inexact && mentions(E, U.Name);
    P.Lets.push_back("let " + V->Name + " = " + E + ";");
    P.Vals.push_back(*V);
  }
  // Every value that no later let uses: dead code could be removed at -O1+
  // and with it an error (an out-of-range take) that the interpreter
  // reports, which is not a disagreement.
  auto UsedLater = [&](const std::string &Name, size_t From) {
    for (size_t L = From; L < P.Lets.size(); ++L)
      if (mentions(P.Lets[L], Name))
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

TEST(Differential, ExecutorsAgreeOnRandomPrograms) {
  Runner Run("differential");
  Run.run(Settings::fromEnv(20240623, 1500, 120),
          [](uint64_t CaseSeed) -> std::optional<Case> {
            Rng R(CaseSeed);
            Program P = randomProgram(R);
            auto Text = std::make_shared<std::string>(P.text(P.Result));
            Case C;
            C.Seed = CaseSeed;
            C.M = parseModule(*Text);
            inferTypes(C.M);
            for (const Val &V : P.Params)
              C.Inputs.push_back(randomInput(R, V.Dt, V.Shape));
            C.Text = [Text] { return *Text; };
            return C;
          });
}

} // namespace
