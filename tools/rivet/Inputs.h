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

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace rivet::cli {

/// Reads and parses a .rvir file (with the prelude) and runs type inference.
/// Throws rivet::Error naming the file on any problem.
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
/// are generated when Opts.random, else an error names them.
std::vector<Tensor> prepareInputs(const ir::FunctionNode &Main,
                                  const InputOptions &Opts);

/// One tensor of a result, with its file stem ("output_0", "output_2_1").
struct NamedOutput {
  std::string name;
  Tensor tensor;
};

/// Flattens a result: tuples depth-first into output_0..n-1, a List of
/// tensors into output_<i>_<j>. Throws for values that are not tensors,
/// tuples or Lists of tensors.
std::vector<NamedOutput> flattenOutputs(const ir::Value &Result);

/// Runs Fn on a thread with a native stack of StackBytes, rethrowing its
/// exception: deep non-tail recursion gets room without touching ulimit.
void runWithStack(size_t StackBytes, const std::function<void()> &Fn);

} // namespace rivet::cli
