//===- Engine.cc - Running @main on either executor -----------------------===//
#include "Engine.h"

#include "kernels/Error.h"

#include <fmt/format.h>

namespace rivet::cli {

ExecutorKind parseExecutor(const std::string &Text, const std::string &Cmd) {
  if (Text == "interp")
    return ExecutorKind::Interp;
  if (Text == "vm")
    return ExecutorKind::VM;
  throw UsageError(fmt::format(
      "{}: unknown executor '{}' (available: interp, vm)", Cmd, Text));
}

const char *executorName(ExecutorKind K) {
  return K == ExecutorKind::Interp ? "interp" : "vm";
}

Engine::Engine(const Program &Prog, ExecutorKind K,
               const ExecutionLimits &Limits)
    : P(Prog), Kind(K) {
  if (K == ExecutorKind::Interp) {
    if (!P.model)
      fail("{}: the reference interpreter needs the model (.onnx or .rvir); "
           "a .rvx file runs only on the VM",
           P.path);
    Interp = std::make_unique<ir::Interpreter>(P.model->module);
    Interp->setLimits(Limits);
    return;
  }
  if (!P.exe)
    fail("{}: the program is not compiled", P.path);
  VM = std::make_unique<vm::VirtualMachine>(P.exe);
  VM->setLimits(Limits);
}

Engine::~Engine() = default;

static std::vector<vm::ObjectRef> toObjects(const std::vector<Tensor> &In) {
  std::vector<vm::ObjectRef> Args;
  Args.reserve(In.size());
  for (const Tensor &T : In)
    Args.push_back(vm::makeTensor(T));
  return Args;
}

std::vector<NamedOutput> Engine::run(const std::vector<Tensor> &Inputs) {
  if (Interp) {
    ir::Value R = Interp->call(
        "main", std::vector<ir::Value>(Inputs.begin(), Inputs.end()));
    return flattenOutputs(R, P.numResults());
  }
  vm::ObjectRef R = VM->invoke("main", toObjects(Inputs));
  return flattenObjectOutputs(R, *P.exe, P.numResults());
}

void Engine::runDiscard(const std::vector<Tensor> &Inputs) {
  if (Interp) {
    Interp->call("main", std::vector<ir::Value>(Inputs.begin(), Inputs.end()));
    return;
  }
  VM->invoke("main", toObjects(Inputs));
}

} // namespace rivet::cli
