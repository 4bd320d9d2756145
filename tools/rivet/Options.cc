//===- Options.cc - Command-line argument parsing for rivet ---------------===//
#include "Options.h"

#include <fmt/format.h>

namespace rivet::cli {

std::string ParsedArgs::get(const std::string &Name,
                            const std::string &Default) const {
  auto It = values.find(Name);
  if (It == values.end() || It->second.empty())
    return Default;
  return It->second.back();
}

std::vector<std::string> ParsedArgs::all(const std::string &Name) const {
  auto It = values.find(Name);
  return It == values.end() ? std::vector<std::string>{} : It->second;
}

ParsedArgs parseArgs(const std::vector<std::string> &Args,
                     const std::vector<FlagSpec> &Specs) {
  ParsedArgs R;
  bool OnlyPositional = false;
  for (size_t I = 0; I < Args.size(); ++I) {
    const std::string &A = Args[I];
    if (OnlyPositional || A.size() < 2 || A[0] != '-') {
      R.positional.push_back(A);
      continue;
    }
    if (A == "--") {
      OnlyPositional = true;
      continue;
    }
    if (A.rfind("--", 0) != 0)
      throw UsageError(fmt::format("unknown option '{}'", A));
    std::string Name = A.substr(2), Value;
    bool HasInlineValue = false;
    if (size_t Eq = Name.find('='); Eq != std::string::npos) {
      Value = Name.substr(Eq + 1);
      Name = Name.substr(0, Eq);
      HasInlineValue = true;
    }
    const FlagSpec *Spec = nullptr;
    for (const FlagSpec &S : Specs)
      if (S.name == Name)
        Spec = &S;
    if (!Spec)
      throw UsageError(fmt::format("unknown option '--{}'", Name));
    if (Spec->takesValue) {
      if (!HasInlineValue) {
        if (I + 1 >= Args.size())
          throw UsageError(fmt::format("option '--{}' needs a value", Name));
        Value = Args[++I];
      }
    } else if (HasInlineValue) {
      throw UsageError(fmt::format("option '--{}' takes no value", Name));
    }
    auto &Slot = R.values[Name];
    if (!Slot.empty() && !Spec->repeatable)
      throw UsageError(fmt::format("option '--{}' given more than once", Name));
    Slot.push_back(Value);
  }
  return R;
}

std::pair<std::string, std::string> splitAssignment(const std::string &Arg,
                                                    const std::string &Flag) {
  size_t Eq = Arg.find('=');
  if (Eq == std::string::npos || Eq == 0)
    throw UsageError(
        fmt::format("option '--{}' expects NAME=VALUE, got '{}'", Flag, Arg));
  std::string Name = Arg.substr(0, Eq);
  if (Name[0] == '%')
    Name = Name.substr(1);
  return {Name, Arg.substr(Eq + 1)};
}

uint64_t parseUnsigned(const std::string &Text, const std::string &Flag) {
  if (Text.empty() || Text.size() > 19 ||
      Text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(fmt::format(
        "option '--{}' expects a non-negative integer, got '{}'", Flag, Text));
  return std::stoull(Text);
}

std::string jsonString(const std::string &S) {
  std::string R = "\"";
  for (char C : S) {
    if (C == '"' || C == '\\')
      R += {'\\', C};
    else if ((unsigned char)C < 0x20)
      R += fmt::format("\\u{:04x}", (unsigned)(unsigned char)C);
    else
      R += C;
  }
  return R + "\"";
}

} // namespace rivet::cli
