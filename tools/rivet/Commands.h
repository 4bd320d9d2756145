//===- Commands.h - Subcommands of the rivet CLI ----------------*- C++ -*-===//
#pragma once

#include <string>
#include <vector>

namespace rivet::cli {

/// `rivet run`: runs @main of a program or executable; returns the exit code.
int runCommand(const std::vector<std::string> &Args);
/// `rivet dump`: prints a program's IR or bytecode; returns the exit code.
int dumpCommand(const std::vector<std::string> &Args);
/// `rivet ops`: lists IR and ONNX operators; returns the exit code.
int opsCommand(const std::vector<std::string> &Args);
/// `rivet compile`: writes a .rvx executable; returns the exit code.
int compileCommand(const std::vector<std::string> &Args);
/// `rivet check`: reference interpreter vs VM; 0 within tolerance, else 1.
int checkCommand(const std::vector<std::string> &Args);
/// `rivet bench`: times @main and prints one JSON object.
int benchCommand(const std::vector<std::string> &Args);

/// Usage texts, printed by help and on usage errors.
extern const char *const RunUsage;
extern const char *const DumpUsage;
extern const char *const OpsUsage;
extern const char *const CompileUsage;
extern const char *const CheckUsage;
extern const char *const BenchUsage;

} // namespace rivet::cli
