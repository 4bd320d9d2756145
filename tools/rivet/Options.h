//===- Options.h - Command-line argument parsing for rivet ------*- C++ -*-===//
//
// A small, strict parser: each subcommand declares its flags; anything else
// is a UsageError (exit code 2), never a silent default.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace rivet::cli {

/// A command-line mistake: the CLI prints it with the usage and exits 2.
class UsageError : public std::runtime_error {
public:
  explicit UsageError(const std::string &Msg) : std::runtime_error(Msg) {}
};

/// One flag a subcommand accepts: "--name VALUE", "--name=VALUE" or "--name".
struct FlagSpec {
  std::string name; // without the leading "--"
  bool takesValue = false;
  bool repeatable = false;
};

/// The result of parsing: positional arguments and flag values by name.
class ParsedArgs {
public:
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> values;

  /// True when the flag was given (with or without a value).
  bool has(const std::string &Name) const { return values.count(Name) != 0; }
  /// The flag's value, or Default when absent.
  std::string get(const std::string &Name, const std::string &Default) const;
  /// Every value of a repeatable flag, in order (empty when absent).
  std::vector<std::string> all(const std::string &Name) const;
};

/// Parses Args (after the subcommand) against Specs; throws UsageError on an
/// unknown flag, a missing value or a repeated non-repeatable flag.
ParsedArgs parseArgs(const std::vector<std::string> &Args,
                     const std::vector<FlagSpec> &Specs);

/// Splits "NAME=VALUE" given to Flag; throws UsageError when malformed.
std::pair<std::string, std::string> splitAssignment(const std::string &Arg,
                                                    const std::string &Flag);

/// Parses an unsigned integer given to Flag; throws UsageError when malformed.
uint64_t parseUnsigned(const std::string &Text, const std::string &Flag);

/// S as a JSON string literal (quotes and control characters escaped), for
/// the commands' JSON reports.
std::string jsonString(const std::string &S);

} // namespace rivet::cli
