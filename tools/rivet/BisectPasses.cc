//===- BisectPasses.cc - rivet check --bisect-passes ----------------------===//
#include "BisectPasses.h"

#include "Engine.h"
#include "Inputs.h"
#include "Options.h"
#include "TensorComparison.h"

#include "vm/Object.h"
#include "vm/VirtualMachine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace rivet::cli {

namespace {

/// The largest finite double stands for infinity (JSON has none).
std::string jsonNumber(double X) {
  if (std::isnan(X))
    return "null";
  if (std::isinf(X))
    return X > 0 ? "1.7976931348623157e308" : "-1.7976931348623157e308";
  return fmt::format("{:.6g}", X);
}

std::string verdictText(const vm::StepVerdict &V) {
  std::string S =
      fmt::format("{:<8} max abs {:<11.4g} max rel {:.4g}",
                  V.ok ? "agree" : "DIVERGE", V.maxAbsErr, V.maxRelErr);
  if (!V.note.empty())
    S += " (" + V.note + ")";
  return S;
}

/// Diff lines cut at Width characters: a weight tensor prints as one line
/// of its every element, too long to read and (where a pass changed it)
/// told apart by the +/- marks anyway.
std::string shortenLines(const std::string &Text, size_t Width = 240) {
  std::string Out;
  size_t Start = 0;
  while (Start < Text.size()) {
    size_t End = Text.find('\n', Start);
    if (End == std::string::npos)
      End = Text.size();
    size_t Len = End - Start;
    Out.append(Text, Start, std::min(Len, Width));
    if (Len > Width)
      Out += fmt::format(" ... ({} more characters)", Len - Width);
    Out += '\n';
    Start = End + 1;
  }
  return Out;
}

/// "step 5 (FoldConstant)", or "no step" for 0.
std::string stepName(const vm::BisectReport &R, size_t K) {
  if (K == 0)
    return "no step";
  return fmt::format("step {} ({})", K,
                     K <= R.steps.size() ? R.steps[K - 1] : "?");
}

} // namespace

std::string bisectText(const vm::BisectReport &R) {
  std::string Out = fmt::format("steps ({}):\n", R.steps.size());
  for (size_t K = 1; K <= R.steps.size(); ++K)
    Out += fmt::format("  {:>3}  {}{}\n", K, R.steps[K - 1],
                       K == R.firstBad ? "   <- results diverge after it" : "");
  if (R.ok)
    return Out + "no step diverges: the fully compiled program agrees with "
                 "the reference\n";
  if (R.baselineDiverges)
    return Out + fmt::format("results diverge even with no step run ({}): "
                             "the cause is lowering, the VM or a kernel, "
                             "not a step\n",
                             verdictText(R.firstBadVerdict));
  if (!R.firstBad)
    return Out + "the full compilation diverges but no prefix of its steps "
                 "does: the results are not deterministic\n";
  Out += fmt::format("results agree {}, diverge after {}: max abs "
                     "{:.4g}, max rel {:.4g}{}\n",
                     R.firstBad == 1 ? std::string("with no step run")
                                     : "through " + stepName(R, R.firstBad - 1),
                     stepName(R, R.firstBad), R.firstBadVerdict.maxAbsErr,
                     R.firstBadVerdict.maxRelErr,
                     R.firstBadVerdict.note.empty()
                         ? ""
                         : " (" + R.firstBadVerdict.note + ")");
  return Out;
}

std::string bisectJson(const vm::BisectReport &R) {
  std::string Names;
  for (const std::string &S : R.steps)
    Names += (Names.empty() ? "" : ", ") + jsonString(S);
  std::string First = "null";
  if (R.firstBad)
    First = fmt::format("{{\"index\": {}, \"name\": {}, \"max_abs_err\": {}, "
                        "\"max_rel_err\": {}, \"note\": {}}}",
                        R.firstBad, jsonString(R.steps[R.firstBad - 1]),
                        jsonNumber(R.firstBadVerdict.maxAbsErr),
                        jsonNumber(R.firstBadVerdict.maxRelErr),
                        jsonString(R.firstBadVerdict.note));
  return fmt::format("{{\"ok\": {}, \"first_bad_step\": {}, \"steps\": {}, "
                     "\"step_names\": [{}], \"baseline_diverges\": {}, "
                     "\"compilations\": {}}}\n",
                     R.ok ? "true" : "false", First, R.steps.size(), Names,
                     R.baselineDiverges ? "true" : "false", R.probes.size());
}

int bisectPassesCheck(const Program &P, const std::vector<Tensor> &Inputs,
                      const vm::CompileOptions &CO,
                      const ExecutionLimits &Limits,
                      const BisectCheckOptions &Opts) {
  // With --json, stdout holds the JSON object alone.
  FILE *Text = Opts.json ? stderr : stdout;
  std::fprintf(Text,
               "%s: pass bisection, reference interpreter vs VM (-O%d), "
               "rtol %g, atol %g\n",
               P.path.c_str(), CO.optLevel, Opts.rtol, Opts.atol);
  std::fflush(Text);
  vm::BisectReport R;
  runWithStack(BigStackBytes, [&] {
    Engine Ref(P, ExecutorKind::Interp, Limits);
    std::vector<NamedOutput> Want = Ref.run(Inputs);
    // Each program is judged as rivet check judges the full one.
    vm::StepCheck Check = [&](const std::shared_ptr<vm::Executable> &Exe) {
      vm::VirtualMachine VM(Exe);
      VM.setLimits(Limits);
      std::vector<vm::ObjectRef> Args;
      for (const Tensor &T : Inputs)
        Args.push_back(vm::makeTensor(T));
      std::vector<NamedOutput> Got = flattenObjectOutputs(
          VM.invoke("main", std::move(Args)), *Exe, P.numResults());
      vm::StepVerdict V;
      if (Got.size() != Want.size()) {
        V.ok = false;
        V.note = fmt::format("the VM gives {} outputs, the reference {}",
                             Got.size(), Want.size());
        return V;
      }
      for (size_t I = 0; I < Want.size(); ++I) {
        Comparison C;
        if (Got[I].name() != Want[I].name()) {
          C.pass = false;
          C.note = fmt::format("the VM's output is {}", Got[I].name());
        } else {
          C = compareTensors(Got[I].tensor, Want[I].tensor, Opts.rtol,
                             Opts.atol);
        }
        V.maxAbsErr = std::max(V.maxAbsErr, C.maxAbs);
        V.maxRelErr = std::max(V.maxRelErr, C.maxRel);
        if (!C.pass && V.ok) {
          V.ok = false;
          if (!C.note.empty())
            V.note = Want[I].name() + ": " + C.note;
        }
      }
      return V;
    };
    vm::BisectOptions BO;
    BO.linear = Opts.linear;
    BO.diff = Opts.printDiff;
    BO.progress = [&](int Steps, const vm::StepVerdict &V) {
      std::string What = Steps < 0   ? std::string("every step")
                         : Steps > 0 ? fmt::format("first {} steps", Steps)
                                     : std::string("no step");
      std::fprintf(Text, "  %-18s %s\n", What.c_str(), verdictText(V).c_str());
      std::fflush(Text);
    };
    R = vm::bisectPasses(P.model->module, CO, Check, BO);
  });
  std::fputs(bisectText(R).c_str(), Text);
  if (Opts.printDiff && R.firstBad) {
    if (!R.diffError.empty())
      std::fprintf(Text, "no diff: %s fails: %s\n",
                   stepName(R, R.firstBad).c_str(), R.diffError.c_str());
    else if (R.diff.empty())
      std::fprintf(Text, "%s leaves the printed IR unchanged%s\n",
                   stepName(R, R.firstBad).c_str(),
                   R.steps[R.firstBad - 1] == vm::AnchorSelectionStep
                       ? " (library kernels are chosen when lowering)"
                       : "");
    else
      std::fputs(shortenLines(R.diff).c_str(), Text);
  }
  if (Opts.json)
    std::fputs(bisectJson(R).c_str(), stdout);
  return R.ok ? 0 : 1;
}

} // namespace rivet::cli
