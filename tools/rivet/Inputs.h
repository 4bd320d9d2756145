//===- Inputs.h - Program inputs and outputs for the rivet CLI --*- C++ -*-===//
//
// Loading the module, matching --input files (or seeded random data) to the
// parameters of @main and validating them against the declared types, and
// writing the result as output_<i>.npy files. Shared by run and, later,
// compile/check/bench.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"
#include "ir/Value.h"
#include "kernels/Tensor.h"
#include "vm/MainIO.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace rivet::cli {

/// A loaded, type-checked program and the names its inputs and outputs go
/// by on the command line.
struct LoadedModel {
  ir::Module module;
  /// One per parameter of @main: the ONNX graph input names for a model,
  /// the parameter names for a .rvir program.
  std::vector<std::string> inputNames;
  /// The ONNX graph output names (empty for a .rvir program).
  std::vector<std::string> outputNames;
  bool isOnnx = false;
};

/// True when Path names an ONNX model (by its ".onnx" extension).
bool isOnnxPath(const std::string &Path);

/// Loads an ONNX model (imported by the frontend) or a .rvir file (parsed
/// with the prelude), checks it has @main and runs type inference. Throws
/// rivet::Error naming the file on any problem.
LoadedModel loadModel(const std::string &Path);

/// loadModel(Path).module.
ir::Module loadModule(const std::string &Path);

/// What the user said about the inputs of @main.
struct InputOptions {
  std::map<std::string, std::string> files; // parameter name -> .npy path
  std::map<std::string, Shape> shapes;      // --shape NAME=AxB
  bool random = false;                      // --random-inputs
  uint64_t seed = 0;                        // --seed
};

/// Parses "2x3x4" (or "" / "()" for a scalar) into a shape; throws
/// rivet::Error naming Name when malformed.
Shape parseShapeSpec(const std::string &Text, const std::string &Name);

/// The declared type of a parameter (checked type, else its annotation).
ir::Type paramType(const ir::VarNode &Param);

/// Builds the arguments of Main (a FunctionNode) from Opts: files are read
/// and checked against the declared types (dtype, rank, constant dims, and
/// consistent extents for symbolic dims shared between inputs); missing ones
/// are generated when Opts.random, else an error names them. Names holds the
/// name of each parameter as the user gives it (LoadedModel::inputNames);
/// empty means the parameters' own names.
std::vector<Tensor> prepareInputs(const ir::FunctionNode &Main,
                                  const InputOptions &Opts,
                                  const std::vector<std::string> &Names = {});

/// One tensor of a result, with its file stem: the VM's (vm/MainIO.h), so
/// that the reference and the compiled path name outputs alike.
using NamedOutput = vm::OutputTensor;

/// Flattens a result: tuples depth-first into output_0..n-1, a List of
/// tensors into output_<i>_<j>, Some(t) like t and None into an output
/// with an undefined tensor. Throws
/// for values that are none of these. When NumResults > 1 the result is a
/// tuple of that many results (an ONNX graph's outputs) and each output
/// records which one it came from; otherwise all come from result 0.
std::vector<NamedOutput> flattenOutputs(const ir::Value &Result,
                                        size_t NumResults = 1);

/// Runs Fn on a thread with a native stack of StackBytes, rethrowing its
/// exception: deep non-tail recursion gets room without touching ulimit.
void runWithStack(size_t StackBytes, const std::function<void()> &Fn);

} // namespace rivet::cli
