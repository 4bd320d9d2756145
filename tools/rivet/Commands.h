//===- Commands.h - Subcommands of the rivet CLI ----------------*- C++ -*-===//
#pragma once

#include <string>
#include <vector>

namespace rivet::cli {

/// `rivet run`: runs @main of a program; returns the exit code.
int runCommand(const std::vector<std::string> &Args);
/// `rivet dump`: prints a program's IR; returns the exit code.
int dumpCommand(const std::vector<std::string> &Args);
/// `rivet ops`: lists IR and ONNX operators; returns the exit code.
int opsCommand(const std::vector<std::string> &Args);

/// Usage texts, printed by help and on usage errors.
extern const char *const RunUsage;
extern const char *const DumpUsage;
extern const char *const OpsUsage;

} // namespace rivet::cli
