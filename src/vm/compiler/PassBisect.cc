//===- PassBisect.cc - The first compilation step that breaks a program ---===//
#include "vm/compiler/PassBisect.h"

#include "ir/Printer.h"
#include "kernels/Error.h"

#include <fmt/format.h>

#include <cstdint>
#include <unordered_map>

namespace rivet::vm {

namespace {

/// Opts with only the first Limit steps (-1: all) and without the user's
/// instrumentation: a probe prints and times nothing.
CompileOptions probeOptions(const CompileOptions &Opts, int Limit) {
  CompileOptions O = Opts;
  O.passes.bisectLimit = Limit;
  O.passes.printAfter.clear();
  O.passes.timePasses = false;
  O.passes.timings.clear();
  O.passes.stepObserver = nullptr;
  return O;
}

/// Compiles with O and checks; any error is a divergence.
StepVerdict compileAndCheck(const ir::Module &M, const CompileOptions &O,
                            const StepCheck &Check) {
  StepVerdict V;
  std::shared_ptr<Executable> Exe;
  try {
    Exe = compile(M, O);
  } catch (const std::exception &E) {
    V.ok = false;
    V.note = std::string("compile error: ") + E.what();
    return V;
  }
  try {
    return Check(Exe);
  } catch (const std::exception &E) {
    V.ok = false;
    V.note = std::string("error: ") + E.what();
    return V;
  }
}

} // namespace

BisectReport bisectPasses(const ir::Module &M, const CompileOptions &Opts,
                          const StepCheck &Check, const BisectOptions &BO) {
  BisectReport R;
  auto Probe = [&](int Limit) {
    CompileOptions O = probeOptions(Opts, Limit);
    StepVerdict V = compileAndCheck(M, O, Check);
    // Every step is recorded whether it runs or not, so any compilation
    // that got through lists them all (the same list at every limit).
    if (R.steps.empty())
      R.steps = O.passes.steps;
    R.probes.push_back({Limit, V});
    if (BO.progress)
      BO.progress(Limit, V);
    return V;
  };

  StepVerdict Full = Probe(-1);
  R.ok = Full.ok;
  if (R.ok)
    return R;
  StepVerdict Good = Probe(0);
  if (!Good.ok) {
    R.baselineDiverges = true;
    R.firstBadVerdict = Good;
    return R;
  }
  size_t N = R.steps.size();
  StepVerdict Bad = Full;
  size_t Lo = 0, Hi = N; // Lo agrees, Hi diverges (Hi = N: the full one)
  if (BO.linear) {
    Hi = 0;
    for (size_t K = 1; K <= N && !Hi; ++K) {
      StepVerdict V = Probe((int)K);
      if (V.ok)
        Good = V, Lo = K;
      else
        Bad = V, Hi = K;
    }
  } else {
    while (Hi - Lo > 1) {
      size_t Mid = Lo + (Hi - Lo) / 2;
      StepVerdict V = Probe((int)Mid);
      if (V.ok)
        Good = V, Lo = Mid;
      else
        Bad = V, Hi = Mid;
    }
  }
  // Hi = 0: every prefix agrees although the full compilation did not (the
  // same steps): the results are not deterministic; no step is to blame.
  if (Hi == 0 || Hi > N)
    return R;
  R.firstBad = Hi;
  R.lastGood = Good;
  R.firstBadVerdict = Bad;
  if (BO.diff) {
    try {
      if (auto Printed = printStep(M, Opts, Hi)) {
        std::string Name = R.steps[Hi - 1];
        R.diff = unifiedDiff(Printed->first, Printed->second,
                             fmt::format("before step {} ({})", Hi, Name),
                             fmt::format("after step {} ({})", Hi, Name));
      }
    } catch (const std::exception &E) {
      R.diffError = E.what();
    }
  }
  return R;
}

std::optional<std::pair<std::string, std::string>>
printStep(const ir::Module &M, const CompileOptions &Opts, size_t K) {
  CompileOptions O = probeOptions(Opts, (int)K);
  std::optional<std::pair<std::string, std::string>> Printed;
  O.passes.stepObserver = [&](size_t Step, const std::string &,
                              const ir::Module &Before,
                              const ir::Module &After) {
    if (Step == K)
      Printed.emplace(ir::printModule(Before), ir::printModule(After));
  };
  try {
    compile(M, O);
  } catch (const std::exception &) {
    if (!Printed) // the step failed before it made a module
      throw;
    // The step's own failure (ill-typed IR) or a later one (lowering what
    // it made) leaves its IR to show.
  }
  return Printed;
}

//===----------------------------------------------------------------------===//
// Line diff
//===----------------------------------------------------------------------===//

namespace {

enum class EditOp : uint8_t { Equal, Delete, Insert };
struct Edit {
  EditOp op;
  size_t line; // in the old text (Equal, Delete) or the new one (Insert)
};

/// Myers' O((N+M)D) diff in linear space: the middle snake splits the
/// problem in two (the bisection of Neil Fraser's diff-match-patch).
class LineDiffer {
public:
  LineDiffer(const std::vector<int> &A, const std::vector<int> &B)
      : A(A), B(B) {}

  std::vector<Edit> run() {
    diff(0, (int64_t)A.size(), 0, (int64_t)B.size());
    return std::move(Out);
  }

private:
  void equal(int64_t I) { Out.push_back({EditOp::Equal, (size_t)I}); }
  void deleteRange(int64_t A0, int64_t A1) {
    for (int64_t I = A0; I < A1; ++I)
      Out.push_back({EditOp::Delete, (size_t)I});
  }
  void insertRange(int64_t B0, int64_t B1) {
    for (int64_t J = B0; J < B1; ++J)
      Out.push_back({EditOp::Insert, (size_t)J});
  }

  void diff(int64_t A0, int64_t A1, int64_t B0, int64_t B1) {
    while (A0 < A1 && B0 < B1 && A[A0] == B[B0])
      equal(A0++), ++B0;
    int64_t Suffix = 0;
    while (A1 - A0 > Suffix && B1 - B0 > Suffix &&
           A[A1 - 1 - Suffix] == B[B1 - 1 - Suffix])
      ++Suffix;
    middle(A0, A1 - Suffix, B0, B1 - Suffix);
    for (int64_t I = A1 - Suffix; I < A1; ++I)
      equal(I);
  }

  /// Neither range starts or ends with a common line.
  void middle(int64_t A0, int64_t A1, int64_t B0, int64_t B1) {
    int64_t N = A1 - A0, M = B1 - B0;
    if (N == 0 || M == 0) {
      deleteRange(A0, A1);
      insertRange(B0, B1);
      return;
    }
    if (N == 1 || M == 1) { // one line: found in the other range or not
      bool InB = N == 1;
      int64_t Line = InB ? A[A0] : B[B0];
      int64_t Lo = InB ? B0 : A0, Hi = InB ? B1 : A1;
      int64_t At = -1;
      for (int64_t I = Lo; I < Hi && At < 0; ++I)
        if ((InB ? B[I] : A[I]) == Line)
          At = I;
      if (At < 0) {
        deleteRange(A0, A1);
        insertRange(B0, B1);
      } else if (InB) {
        insertRange(B0, At);
        equal(A0);
        insertRange(At + 1, B1);
      } else {
        deleteRange(A0, At);
        equal(At);
        deleteRange(At + 1, A1);
      }
      return;
    }
    int64_t X, Y;
    if (!middleSnake(A0, N, B0, M, X, Y) || (X == 0 && Y == 0) ||
        (X == N && Y == M)) {
      deleteRange(A0, A1);
      insertRange(B0, B1);
      return;
    }
    diff(A0, A0 + X, B0, B0 + Y);
    diff(A0 + X, A1, B0 + Y, B1);
  }

  /// Where a forward and a backward D-path meet: the split point (X, Y)
  /// relative to (A0, B0). False when the ranges share no line.
  bool middleSnake(int64_t A0, int64_t N, int64_t B0, int64_t M, int64_t &X,
                   int64_t &Y) const {
    const int *T1 = A.data() + A0, *T2 = B.data() + B0;
    int64_t MaxD = (N + M + 1) / 2, Off = MaxD, Len = 2 * MaxD + 2;
    std::vector<int64_t> V1(Len, -1), V2(Len, -1);
    V1[Off + 1] = 0;
    V2[Off + 1] = 0;
    int64_t Delta = N - M;
    bool Front = Delta % 2 != 0; // which direction detects the overlap
    int64_t K1Start = 0, K1End = 0, K2Start = 0, K2End = 0;
    for (int64_t D = 0; D < MaxD; ++D) {
      for (int64_t K1 = -D + K1Start; K1 <= D - K1End; K1 += 2) {
        int64_t K1Off = Off + K1;
        int64_t X1 = K1 == -D || (K1 != D && V1[K1Off - 1] < V1[K1Off + 1])
                         ? V1[K1Off + 1]
                         : V1[K1Off - 1] + 1;
        int64_t Y1 = X1 - K1;
        while (X1 < N && Y1 < M && T1[X1] == T2[Y1])
          ++X1, ++Y1;
        V1[K1Off] = X1;
        if (X1 > N) {
          K1End += 2;
        } else if (Y1 > M) {
          K1Start += 2;
        } else if (Front) {
          int64_t K2Off = Off + Delta - K1;
          if (K2Off >= 0 && K2Off < Len && V2[K2Off] != -1 &&
              X1 >= N - V2[K2Off]) {
            X = X1, Y = Y1;
            return true;
          }
        }
      }
      for (int64_t K2 = -D + K2Start; K2 <= D - K2End; K2 += 2) {
        int64_t K2Off = Off + K2;
        int64_t X2 = K2 == -D || (K2 != D && V2[K2Off - 1] < V2[K2Off + 1])
                         ? V2[K2Off + 1]
                         : V2[K2Off - 1] + 1;
        int64_t Y2 = X2 - K2;
        while (X2 < N && Y2 < M && T1[N - X2 - 1] == T2[M - Y2 - 1])
          ++X2, ++Y2;
        V2[K2Off] = X2;
        if (X2 > N) {
          K2End += 2;
        } else if (Y2 > M) {
          K2Start += 2;
        } else if (!Front) {
          int64_t K1Off = Off + Delta - K2;
          if (K1Off >= 0 && K1Off < Len && V1[K1Off] != -1) {
            int64_t X1 = V1[K1Off], Y1 = Off + X1 - K1Off;
            if (X1 >= N - X2) {
              X = X1, Y = Y1;
              return true;
            }
          }
        }
      }
    }
    return false;
  }

  const std::vector<int> &A, &B;
  std::vector<Edit> Out;
};

std::vector<std::string> splitLines(const std::string &Text) {
  std::vector<std::string> Lines;
  size_t Start = 0;
  while (Start < Text.size()) {
    size_t End = Text.find('\n', Start);
    if (End == std::string::npos)
      End = Text.size();
    Lines.push_back(Text.substr(Start, End - Start));
    Start = End + 1;
  }
  return Lines;
}

} // namespace

std::string unifiedDiff(const std::string &Old, const std::string &New,
                        const std::string &OldName, const std::string &NewName,
                        size_t Context) {
  std::vector<std::string> L1 = splitLines(Old), L2 = splitLines(New);
  // Lines as numbers: the differ compares ints.
  std::unordered_map<std::string, int> Ids;
  auto Encode = [&](const std::vector<std::string> &L) {
    std::vector<int> Out;
    for (const std::string &S : L)
      Out.push_back(Ids.emplace(S, (int)Ids.size()).first->second);
    return Out;
  };
  std::vector<int> A = Encode(L1), B = Encode(L2);
  std::vector<Edit> E = LineDiffer(A, B).run();

  // Line positions before each edit, in either text.
  std::vector<size_t> OldPos(E.size() + 1, 0), NewPos(E.size() + 1, 0);
  for (size_t I = 0; I < E.size(); ++I) {
    OldPos[I + 1] = OldPos[I] + (E[I].op != EditOp::Insert);
    NewPos[I + 1] = NewPos[I] + (E[I].op != EditOp::Delete);
  }
  std::string Out;
  size_t I = 0;
  while (I < E.size()) {
    while (I < E.size() && E[I].op == EditOp::Equal)
      ++I;
    if (I == E.size())
      break;
    // A hunk: changes closer than 2 * Context equal lines share one.
    size_t First = I, Last = I;
    for (size_t J = I + 1; J < E.size(); ++J) {
      if (E[J].op == EditOp::Equal)
        continue;
      if (J - Last - 1 > 2 * Context)
        break;
      Last = J;
    }
    size_t Begin = First > Context ? First - Context : 0;
    size_t End = std::min(E.size(), Last + 1 + Context);
    size_t OldCount = OldPos[End] - OldPos[Begin];
    size_t NewCount = NewPos[End] - NewPos[Begin];
    auto Range = [](size_t Start, size_t Count) {
      // GNU diff: an empty range names the line before it.
      if (Count == 1)
        return fmt::format("{}", Start + 1);
      return fmt::format("{},{}", Count ? Start + 1 : Start, Count);
    };
    if (Out.empty())
      Out = "--- " + OldName + "\n+++ " + NewName + "\n";
    Out += fmt::format("@@ -{} +{} @@\n", Range(OldPos[Begin], OldCount),
                       Range(NewPos[Begin], NewCount));
    for (size_t J = Begin; J < End; ++J) {
      const Edit &D = E[J];
      char Mark = D.op == EditOp::Equal    ? ' '
                  : D.op == EditOp::Delete ? '-'
                                           : '+';
      Out += Mark;
      Out += D.op == EditOp::Insert ? L2[D.line] : L1[D.line];
      Out += '\n';
    }
    I = End;
  }
  return Out;
}

} // namespace rivet::vm
