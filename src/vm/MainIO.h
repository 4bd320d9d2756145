//===- MainIO.h - Inputs and outputs of an executable's @main ---*- C++ -*-===//
//
// What every program that runs a .rvx needs around VirtualMachine::invoke,
// without the compiler: input tensors read from .npy files and checked
// against Executable::mainParams (each error names the input and its
// expected type), @main's result flattened into named output tensors, and
// those written as output_<i>.npy files, all or none. Shared by `rivet run`
// and the deployment runner `rivet-run`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kernels/Tensor.h"
#include "vm/Executable.h"
#include "vm/Object.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rivet::vm {

/// Parameter I's type for messages: the declared IR type when the
/// executable has its text, else "float32[3x?x4]" ("float32[?]": any rank).
std::string paramTypeText(const ParamInfo &I);

/// Checks a tensor of shape Sh and dtype Dt against parameter I (dtype, rank
/// and known extents); throws rivet::Error naming the input, what was
/// expected and what was given.
void checkMainInput(const ParamInfo &I, const Shape &Sh, DType Dt);

/// The arguments of Exe's @main from Files (input name -> .npy path), in
/// parameter order: each file is read and checked (checkMainInput). An
/// unknown name, a parameter that is not a tensor, or an input without a
/// file is a rivet::Error naming the input (and its type).
std::vector<Tensor>
readMainInputs(const Executable &Exe,
               const std::map<std::string, std::string> &Files);

/// One tensor of a result: the index-th output, or element `element` of the
/// index-th output when that is a List.
struct OutputTensor {
  size_t index = 0;
  std::optional<size_t> element;
  Tensor tensor; // undefined for an Option that is None: nothing to write
  /// Which of NumResults top-level results it belongs to (the ONNX output).
  size_t result = 0;

  /// Its file stem: "output_0", "output_2_1" (made on demand: a Python
  /// session's run never needs it).
  std::string name() const;
};

/// Flattens @main's result like the reference interpreter's: tuples depth
/// first into output_0..n-1, Some(t) as t, None as an undefined tensor (its
/// index kept), a List of tensors as output_<i>_<j>. ADT values are known
/// by Exe's constructor table. When NumResults > 1 the result is a tuple of
/// that many results (an ONNX graph's outputs), each output recording which
/// one it came from. Throws rivet::Error for a value that is none of these.
std::vector<OutputTensor> flattenMainResult(const ObjectRef &Result,
                                            const Executable &Exe,
                                            size_t NumResults = 1);

/// Writes every defined output as Dir/<name>.npy, all or none (OutputFiles),
/// creating Dir. Returns a line per output for the user, e.g.
/// "output_1 (ONNX output 'y'): <its type> -> out/output_1.npy"
/// or "output_0: none (empty optional, not written)"; OutputNames are the
/// ONNX output names by result index (may be empty).
std::vector<std::string>
writeMainOutputs(const std::vector<OutputTensor> &Outputs,
                 const std::vector<std::string> &OutputNames,
                 const std::string &Dir);

} // namespace rivet::vm
