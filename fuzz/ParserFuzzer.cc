//===- ParserFuzzer.cc - libFuzzer target for the .rvir parser ------------===//
//
// Parses arbitrary bytes. Malformed input must fail with rivet::Error and
// nothing else; input that parses must print, parse back and compare
// structurally equal to the first parse. Anything else is a bug and aborts
// (which is how libFuzzer reports it).
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/StructuralEqual.h"
#include "kernels/Error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace rivet;
using namespace rivet::ir;

namespace {

[[noreturn]] void bug(const char *What, const std::string &Detail,
                      const std::string &Text) {
  std::fprintf(stderr, "ParserFuzzer: %s: %s\n--- text ---\n%s\n", What,
               Detail.c_str(), Text.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Input(reinterpret_cast<const char *>(Data), Size);
  const ParseOptions Opts{/*importPrelude=*/false};
  Module M;
  try {
    M = parseModule(Input, "fuzz.rvir", Opts);
  } catch (const Error &) {
    return 0; // malformed input, reported properly
  }
  // Anything other than rivet::Error escapes and is reported by libFuzzer.
  std::string Printed;
  try {
    Printed = printModule(M, PrintOptions{/*includePrelude=*/true});
  } catch (const Error &E) {
    bug("printing a parsed module failed", E.what(), std::string(Input));
  }
  Module Again;
  try {
    Again = parseModule(Printed, "printed.rvir", Opts);
  } catch (const Error &E) {
    bug("the printed module does not parse", E.what(), Printed);
  }
  std::string Diff = structuralDiff(M, Again);
  if (!Diff.empty())
    bug("the printed module parses to a different module", Diff, Printed);
  if (printModule(Again, PrintOptions{true}) != Printed)
    bug("printing is not stable", "print(parse(print(m))) != print(m)",
        Printed);
  return 0;
}
