//===- SpecializeInputs.h - @main for inputs of known shapes ----*- C++ -*-===//
//
// A model exported with a symbolic batch (or sequence) dimension runs, in
// the VM, with a shape function before each kernel and its tensors from the
// pool. Deployed for one shape it can be compiled for that shape instead:
// the inputs' symbolic and unknown extents become constants, type inference
// carries them through, and the memory planner puts every tensor in one
// arena (smaller and faster than pooled blocks: docs/benchmarks.md).
// The executable then takes only that shape; any other is rejected, with
// the expected type, when it is called.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rivet::vm::compiler {

/// M with @main's tensor inputs of the given names (ONNX input names, else
/// the parameters' names) typed with the given extents. Throws rivet::Error
/// for an unknown name, a rank that differs from the declared one, or an
/// extent that contradicts a declared constant.
ir::Module specializeInputShapes(
    const ir::Module &M,
    const std::map<std::string, std::vector<int64_t>> &Shapes);

} // namespace rivet::vm::compiler
