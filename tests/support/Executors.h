//===- Executors.h - A program's outputs on each executor -------*- C++ -*-===//
//
// Test support for differential tests run in process: @main of a module on
// the reference interpreter, or compiled and run on the VM, its result
// flattened to tensors (tuples and ADTs field by field).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Interpreter.h"
#include "ir/Module.h"
#include "vm/VirtualMachine.h"
#include "vm/compiler/Compiler.h"
#include "vm/compiler/ValueConversion.h"

#include <vector>

namespace rivet::testing {

/// The tensors of V in order (V itself, or its fields recursively).
inline void flattenValue(const ir::Value &V, std::vector<Tensor> &Out) {
  if (V.isTensor())
    Out.push_back(V.tensor());
  else
    for (const ir::Value &F : V.fields())
      flattenValue(F, Out);
}

/// @main of M on the reference interpreter.
inline std::vector<Tensor> runOnInterpreter(const ir::Module &M,
                                            const std::vector<Tensor> &In) {
  ir::Interpreter I(M);
  std::vector<Tensor> Out;
  flattenValue(I.call("main", std::vector<ir::Value>(In.begin(), In.end())),
               Out);
  return Out;
}

/// @main of M compiled at Level with native code Mode, run on the VM.
inline std::vector<Tensor> runOnVM(const ir::Module &M, int Level,
                                   vm::NativeCode Mode,
                                   const std::vector<Tensor> &In) {
  vm::CompileOptions O;
  O.optLevel = Level;
  O.codegen.mode = Mode;
  std::shared_ptr<vm::Executable> Exe = vm::compile(M, O);
  vm::VirtualMachine VM(Exe);
  std::vector<vm::ObjectRef> Args;
  for (const Tensor &T : In)
    Args.push_back(vm::makeTensor(T));
  std::vector<Tensor> Out;
  flattenValue(vm::toValue(VM.invoke("main", std::move(Args)), *Exe, M), Out);
  return Out;
}

} // namespace rivet::testing
