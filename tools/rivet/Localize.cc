//===- Localize.cc - Where a compiled program first diverges --------------===//
#include "Localize.h"

#include "Engine.h"
#include "Inputs.h"
#include "Options.h"
#include "TensorComparison.h"

#include "ir/Op.h"
#include "ir/Origin.h"
#include "ir/Visitor.h"
#include "kernels/Error.h"
#include "kernels/StringTable.h"
#include "vm/Object.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace rivet::cli {

namespace {

/// The tensors of a value: itself, or a tuple's fields (others: none).
void tensorsOf(const ir::Value &V, std::vector<Tensor> &Out) {
  if (V.isTensor())
    Out.push_back(V.tensor());
  else if (V.isTuple())
    for (const ir::Value &F : V.fields())
      tensorsOf(F, Out);
}
void tensorsOf(const vm::ObjectRef &O, std::vector<Tensor> &Out) {
  if (!O)
    return;
  if (const auto *T = O->as<vm::TensorObj>())
    Out.push_back(T->value);
  else if (const auto *A = O->as<vm::ADTObj>();
           A && A->tag == vm::ADTObj::kTupleTag)
    for (const vm::ObjectRef &F : A->fields)
      tensorsOf(F, Out);
}

/// What the reference computed for one origin, run by run.
struct Reference {
  std::string op;
  std::vector<ir::Value> runs;
};

/// The reference: every value-producing call's result, by origin.
std::unordered_map<std::string, Reference>
recordReference(const Program &P, const std::vector<Tensor> &Inputs,
                const ExecutionLimits &Limits) {
  const ir::Module &M = P.model->module;
  std::unordered_set<const ir::CallNode *> ValueCalls;
  for (const std::string &Name : M.functionNames()) {
    std::unordered_set<const ir::CallNode *> S =
        ir::originValueCalls(M.function(Name));
    ValueCalls.insert(S.begin(), S.end());
  }
  std::unordered_map<std::string, Reference> Ref;
  runWithStack(BigStackBytes, [&] {
    Engine R(P, ExecutorKind::Interp, Limits);
    R.interpreter()->setCallObserver(
        [&](const ir::CallNode &C, const ir::Value &V) {
          if (!ValueCalls.count(&C))
            return;
          Reference &E = Ref[C.origin];
          if (E.op.empty())
            E.op = C.callee->as<ir::OpNode>()->name();
          E.runs.push_back(V);
        });
    R.run(Inputs);
  });
  return Ref;
}

/// Which run of an origin computed in function Fn.
std::string instanceOf(const std::string &Fn, uint64_t Run) {
  // ONNX Loop and Scan bodies are functions named <parent>$loop: one call
  // per iteration (counted over every run of the enclosing loops).
  if (Fn.size() >= 5 && Fn.compare(Fn.size() - 5, 5, "$loop") == 0)
    return fmt::format("iteration {} of @{}", Run, Fn);
  if (Fn == "main")
    return fmt::format("run {}", Run);
  return fmt::format("run {} (in @{})", Run, Fn);
}

/// Adds Scale times T's largest magnitude (Scale when all 0) to the
/// element of that magnitude, away from 0 (a relu after it keeps the
/// change). False when T has no number to change (bool, string, empty).
bool perturb(Tensor &T, double Scale) {
  if (T.numel() == 0 || !T.hasData() || isString(T.dtype()) ||
      T.dtype() == DType::Bool)
    return false;
  double Max = 0;
  int64_t At = 0;
  for (int64_t I = 0; I < T.numel(); ++I) {
    double X = std::fabs(T.elementAsDouble(I));
    if (std::isfinite(X) && X > Max)
      Max = X, At = I;
  }
  double Old = T.elementAsDouble(At);
  double V = Old + std::copysign(Scale * (Max > 0 ? Max : 1.0), Old);
  if (!isFloat(T.dtype()))
    V = Old + std::copysign(std::max(1.0, std::fabs(V - Old)), V - Old);
  Tensor One = Tensor::fromVector<double>({V}, {}).cast(T.dtype());
  size_t E = dtypeSize(T.dtype());
  std::memcpy(static_cast<char *>(T.rawData()) + (size_t)At * E, One.rawData(),
              E);
  return true;
}

/// T, a blocked-channel tensor (NCHW8c: [N, C/b, ..., b], channels padded
/// to whole blocks), in the reference's plain layout Want ([N, C, ...]);
/// undefined when T is not that.
Tensor unblockChannels(const Tensor &T, const Shape &Want) {
  const Shape &S = T.shape();
  size_t R = Want.size();
  if (R < 2 || S.size() != R + 1 || S[0] != Want[0] || !T.hasData())
    return {};
  for (size_t I = 2; I < R; ++I)
    if (S[I] != Want[I])
      return {};
  int64_t Block = S[R], C = Want[1];
  if (Block <= 0 || S[1] * Block < C || (S[1] - 1) * Block >= C)
    return {};
  int64_t Inner = 1; // elements of one channel of one image
  for (size_t I = 2; I < R; ++I)
    Inner *= Want[I];
  size_t E = dtypeSize(T.dtype());
  Tensor Out = Tensor::empty(Want, T.dtype());
  const char *Src = static_cast<const char *>(T.rawData());
  char *Dst = static_cast<char *>(Out.rawData());
  for (int64_t N = 0; N < Want[0]; ++N)
    for (int64_t Ch = 0; Ch < C; ++Ch)
      for (int64_t X = 0; X < Inner; ++X) {
        int64_t From =
            ((N * S[1] + Ch / Block) * Inner + X) * Block + Ch % Block;
        int64_t To = (N * C + Ch) * Inner + X;
        std::memcpy(Dst + (size_t)To * E, Src + (size_t)From * E, E);
      }
  return Out;
}

bool contains(const std::vector<std::string> &V, const std::string &X) {
  return std::find(V.begin(), V.end(), X) != V.end();
}

} // namespace

std::vector<std::string> programOrigins(const Program &P) {
  std::set<std::string> Seen;
  if (P.model)
    for (const std::string &Name : P.model->module.functionNames())
      ir::postOrderVisit(
          P.model->module.function(Name), [&](const ir::Expr &E) {
            if (const auto *C = E->as<ir::CallNode>(); C && !C->origin.empty())
              Seen.insert(C->origin);
          });
  return {Seen.begin(), Seen.end()};
}

void parseFaultSpec(const std::string &Spec, const Program &P,
                    LocalizeOptions &Opts) {
  std::vector<std::string> Known = programOrigins(P);
  auto IsKnown = [&](const std::string &O) {
    return std::binary_search(Known.begin(), Known.end(), O);
  };
  if (IsKnown(Spec)) {
    Opts.faultOrigin = Spec;
    return;
  }
  size_t Colon = Spec.rfind(':');
  if (Colon != std::string::npos && IsKnown(Spec.substr(0, Colon))) {
    std::string ScaleText = Spec.substr(Colon + 1);
    try {
      size_t Used = 0;
      double Scale = std::stod(ScaleText, &Used);
      if (Used == ScaleText.size() && std::isfinite(Scale)) {
        Opts.faultOrigin = Spec.substr(0, Colon);
        Opts.faultScale = Scale;
        return;
      }
    } catch (const std::exception &) {
    }
    throw UsageError(fmt::format(
        "--inject-fault {}: expected ORIGIN[:SCALE], SCALE a number", Spec));
  }
  throw UsageError(
      fmt::format("--inject-fault {}: no call of {} comes from '{}' (rivet "
                  "dump --fused lists the origins)",
                  Spec, P.path, Spec));
}

LocalizeReport localizeDivergence(const Program &P,
                                  const std::vector<Tensor> &Inputs,
                                  const ExecutionLimits &Limits,
                                  const LocalizeOptions &Opts) {
  if (!P.model || !P.exe)
    fail("{}: --localize needs the model, compiled in this process", P.path);
  std::unordered_map<std::string, Reference> Ref =
      recordReference(P, Inputs, Limits);

  LocalizeReport R;
  std::vector<Divergence> All;
  std::unordered_map<std::string, uint64_t> Runs;
  // Buffers whose current value came from a divergence (directly, or
  // through kernels whose values are not compared).
  std::unordered_map<const void *, bool> Diverged;
  const vm::Executable &Exe = *P.exe;
  Engine V(P, ExecutorKind::VM, Limits);
  V.machine()->setKernelObserver([&](const vm::VirtualMachine::KernelEvent &E) {
    const vm::VMFunction &F = Exe.functions[E.function];
    const vm::KernelOrigins *O =
        E.pc < F.origins.size() ? F.origins[E.pc].get() : nullptr;
    std::vector<Tensor> Outs, Ins;
    for (size_t I = 0; I < E.numOutputs; ++I)
      tensorsOf(*E.outputs[I], Outs);
    for (size_t I = 0; I < E.numInputs; ++I)
      tensorsOf(*E.inputs[I], Ins);
    bool InputsAgree = true;
    for (const Tensor &T : Ins)
      if (T.hasData() && Diverged.count(T.rawData()) && Diverged[T.rawData()])
        InputsAgree = false;
    // Values are read on the host, wherever the kernel ran (a GPU
    // kernel's outputs are copied; the copy waits for it).
    vm::VirtualMachine &M = *V.machine();
    if (O && !Opts.faultOrigin.empty() && !R.faultInjected &&
        contains(O->covers, Opts.faultOrigin) && !Outs.empty() &&
        Outs[0].hasData()) {
      Tensor Host = M.hostValues(Outs[0]);
      if (Host.rawData() == Outs[0].rawData())
        Host = Host.clone();
      if (perturb(Host, Opts.faultScale)) {
        M.writeValues(Host, Outs[0]);
        R.faultInjected = true;
        R.faultKernel = O->covers;
        R.faultKernelOutput = O->output;
      }
    }
    auto Mark = [&](bool Bad) {
      for (const Tensor &T : Outs)
        if (T.hasData())
          Diverged[T.rawData()] = Bad;
    };
    if (!O || O->output.empty()) {
      Mark(!InputsAgree); // not compared: as good as its inputs
      return;
    }
    uint64_t Run = ++Runs[O->output];
    auto It = Ref.find(O->output);
    std::vector<Tensor> Want;
    if (It != Ref.end() && Run <= It->second.runs.size())
      tensorsOf(It->second.runs[Run - 1], Want);
    bool Comparable = !Want.empty() && Want.size() == Outs.size();
    std::vector<Tensor> Got;
    for (const Tensor &T : Outs)
      Got.push_back(T.hasData() ? M.hostValues(T) : T);
    for (size_t I = 0; Comparable && I < Got.size(); ++I) {
      if (Got[I].dtype() != Want[I].dtype()) {
        Comparable = false;
      } else if (Got[I].shape() != Want[I].shape()) {
        // A value the layout pass keeps in blocked channels.
        Got[I] = unblockChannels(Got[I], Want[I].shape());
        Comparable = Got[I].defined();
      }
    }
    if (!Comparable) {
      // (Lists, on both sides, are not compared; they are not "another
      // layout".)
      R.notComparable += !(Outs.empty() && Want.empty());
      Mark(!InputsAgree);
      return;
    }
    Divergence D;
    D.origin = O->output;
    D.op = It->second.op;
    D.run = Run;
    D.instance = instanceOf(F.name, Run);
    D.inputsAgree = InputsAgree;
    bool Pass = true;
    for (size_t I = 0; I < Outs.size(); ++I) {
      Comparison C = compareTensors(Got[I], Want[I], Opts.rtol, Opts.atol);
      Pass &= C.pass;
      D.maxAbsErr = std::max(D.maxAbsErr, C.maxAbs);
      D.maxRelErr = std::max(D.maxRelErr, C.maxRel);
      if (D.note.empty())
        D.note = C.note;
    }
    ++R.compared;
    Mark(!Pass);
    if (Pass)
      return;
    R.ok = false;
    if (!R.first)
      R.first = D;
    All.push_back(std::move(D));
  });
  V.run(Inputs);
  // By absolute error: a relative one is infinite wherever the reference
  // is 0 (a relu's), and would rank those first.
  std::stable_sort(All.begin(), All.end(),
                   [](const Divergence &A, const Divergence &B) {
                     return A.maxAbsErr > B.maxAbsErr;
                   });
  if (All.size() > Opts.worst)
    All.resize(Opts.worst);
  R.worst = std::move(All);
  return R;
}

std::string localizeText(const LocalizeReport &R) {
  std::string Out = fmt::format(
      "localize: {} values compared with the reference ({} not comparable: "
      "another layout, or a run the reference did not make)\n",
      R.compared, R.notComparable);
  if (R.faultInjected) {
    std::string Ks;
    for (const std::string &O : R.faultKernel)
      Ks += (Ks.empty() ? "" : ", ") + O;
    Out += fmt::format("fault injected into the kernel computing {}\n", Ks);
  }
  if (!R.first) {
    Out += "no divergence\n";
    return Out;
  }
  const Divergence &D = *R.first;
  Out += fmt::format("first divergence: '{}' ({}), {}: max abs error {:.4g}, "
                     "max rel error {:.4g}{}\n",
                     D.origin, D.op, D.instance, D.maxAbsErr, D.maxRelErr,
                     D.note.empty() ? "" : " (" + D.note + ")");
  Out += D.inputsAgree ? "  its inputs agree with the reference: this is "
                         "where the compiled program goes wrong\n"
                       : "  its inputs already differ: an earlier value that "
                         "is not compared went wrong\n";
  Out +=
      fmt::format("largest divergences:\n  {:<32} {:<16} {:<28} {:>11} "
                  "{:>11}  {}\n",
                  "origin", "op", "instance", "max abs", "max rel", "inputs");
  for (const Divergence &W : R.worst)
    Out += fmt::format("  {:<32} {:<16} {:<28} {:>11.4g} {:>11.4g}  {}\n",
                       W.origin, W.op, W.instance, W.maxAbsErr, W.maxRelErr,
                       W.inputsAgree ? "agree" : "differ");
  return Out;
}

static std::string jsonNumber(double X) {
  // JSON has no infinity: the largest double stands for it.
  if (std::isnan(X))
    return "null";
  if (std::isinf(X))
    return X > 0 ? "1.7976931348623157e308" : "-1.7976931348623157e308";
  return fmt::format("{:.6g}", X);
}

static std::string divergenceJson(const Divergence &D) {
  return fmt::format(
      "{{\"origin\": {}, \"op\": {}, \"instance\": {}, \"run\": {}, "
      "\"max_abs_err\": {}, \"max_rel_err\": {}, \"inputs_agree\": {}}}",
      jsonString(D.origin), jsonString(D.op), jsonString(D.instance), D.run,
      jsonNumber(D.maxAbsErr), jsonNumber(D.maxRelErr),
      D.inputsAgree ? "true" : "false");
}

std::string localizeJson(const LocalizeReport &R) {
  std::string Worst;
  for (const Divergence &D : R.worst)
    Worst += (Worst.empty() ? "" : ", ") + divergenceJson(D);
  std::string Fault;
  for (const std::string &O : R.faultKernel)
    Fault += (Fault.empty() ? "" : ", ") + jsonString(O);
  return fmt::format(
      "{{\"ok\": {}, \"first_divergence\": {}, \"compared\": {}, "
      "\"not_comparable\": {}, \"fault_injected\": {}, \"fault_kernel\": "
      "[{}], \"fault_kernel_output\": {}, \"worst\": [{}]}}\n",
      R.ok ? "true" : "false", R.first ? divergenceJson(*R.first) : "null",
      R.compared, R.notComparable, R.faultInjected ? "true" : "false", Fault,
      jsonString(R.faultKernelOutput), Worst);
}

} // namespace rivet::cli
