//===- ValueConversion.h - Interpreter values <-> VM objects ----*- C++ -*-===//
//
// For differential testing and the CLI: the same data as an ir::Value (the
// reference interpreter's) and as a vm::ObjectRef (the VM's).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"
#include "ir/Value.h"
#include "vm/Executable.h"
#include "vm/Object.h"

namespace rivet::vm {

/// Tensors, tuples and ADT values (constructors matched by name in Exe's
/// constructor table); closures cannot cross.
ObjectRef toObject(const ir::Value &V, const Executable &Exe);
/// The inverse; constructors are looked up by name in M.
ir::Value toValue(const ObjectRef &O, const Executable &Exe,
                  const ir::Module &M);

} // namespace rivet::vm
