//===- TestCase.h - One ONNX backend test -----------------------*- C++ -*-===//
#pragma once

#include <filesystem>
#include <string>

namespace rivet::conformance {

/// Imports Dir/model.onnx, runs every Dir/test_data_set_* with Executor and
/// compares with the expected outputs. Returns true when all agree; Msg says
/// what went wrong (or a short summary on success). OptLevel: the passes the
/// VM compiles with; for the interpreter, -1 runs the module as imported and
/// 0..3 runs it after that level's passes. Codegen: where the VM runs fused
/// groups ("off", "jit" or "so"; empty: the compiler's default). Target
/// "cuda": the VM's fused groups go to the GPU; without a GPU the test
/// passes once the model compiles (every GPU kernel through NVRTC).
bool runTestCase(const std::filesystem::path &Dir, const std::string &Executor,
                 int OptLevel, std::string &Msg,
                 const std::string &Codegen = "",
                 const std::string &Target = "cpu");

} // namespace rivet::conformance
