//===- OpsCommand.cc - rivet ops ------------------------------------------===//
//
// Lists what Rivet can run, straight from the registries: every IR operator
// (OpRegistry: description, inputs, attributes, fusion pattern; whether
// src/kernels has a kernel for it) and every ONNX operator the frontend
// translates (ConverterRegistry) with the opsets it covers. `--markdown`
// prints docs/operators.md, which tests/tools/operators_doc_test.cc keeps in
// sync with the registries.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Options.h"

#include "frontend/onnx/Importer.h"
#include "ir/Op.h"
#include "kernels/Error.h"
#include "kernels/Kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace rivet::cli {

const char *const OpsUsage =
    "usage: rivet ops [--markdown]\n"
    "  lists every IR operator and every ONNX operator the frontend "
    "translates\n"
    "  --markdown              print docs/operators.md instead of plain text\n";

namespace {

const char *patternName(ir::FusionPattern P) {
  switch (P) {
  case ir::FusionPattern::Elementwise: return "elementwise";
  case ir::FusionPattern::Broadcast: return "broadcast";
  case ir::FusionPattern::Injective: return "injective";
  case ir::FusionPattern::CommReduce: return "comm-reduce";
  case ir::FusionPattern::OutElementwiseFusable:
    return "out-elementwise-fusable";
  case ir::FusionPattern::Tuple: return "tuple";
  case ir::FusionPattern::Opaque: return "opaque";
  }
  return "unknown";
}

const char *attrKindName(ir::AttrSpec::Kind K) {
  switch (K) {
  case ir::AttrSpec::Kind::Int: return "int";
  case ir::AttrSpec::Kind::Float: return "float";
  case ir::AttrSpec::Kind::String: return "string";
  case ir::AttrSpec::Kind::Ints: return "ints";
  case ir::AttrSpec::Kind::Floats: return "floats";
  case ir::AttrSpec::Kind::Strings: return "strings";
  case ir::AttrSpec::Kind::Tensor: return "tensor";
  }
  return "unknown";
}

/// Collapses runs of whitespace (descriptions may span lines) to one space.
std::string oneLine(const std::string &S) {
  std::string R;
  bool Space = false;
  for (char C : S) {
    if (C == ' ' || C == '\n' || C == '\t' || C == '\r') {
      Space = !R.empty();
      continue;
    }
    if (Space)
      R += ' ';
    Space = false;
    R += C;
  }
  return R;
}

/// Text safe inside a Markdown table cell.
std::string cell(const std::string &S) {
  std::string R;
  for (char C : oneLine(S)) {
    if (C == '|')
      R += "\\|";
    else
      R += C;
  }
  return R.empty() ? "—" : R;
}

std::string inputsText(const ir::OpInfo &Op) {
  if (Op.listArgument)
    return "1 (a List of tensors)";
  if (Op.numInputs < 0)
    return "variadic";
  return std::to_string(Op.numInputs);
}

std::string resultText(const ir::OpInfo &Op) {
  return Op.listResult ? "a List of tensors" : "";
}

/// A default value as the text format writes it.
std::string defaultText(const AttrValue &V) {
  if (auto *I = std::get_if<int64_t>(&V))
    return std::to_string(*I);
  if (auto *D = std::get_if<double>(&V))
    return fmt::format("{}", *D);
  if (auto *Str = std::get_if<std::string>(&V))
    return "\"" + *Str + "\"";
  if (auto *L = std::get_if<std::vector<int64_t>>(&V))
    return fmt::format("[{}]", fmt::join(*L, ", "));
  return "?";
}

std::string attrText(const ir::AttrSpec &A) {
  std::string S = fmt::format("{}: {}", A.name, attrKindName(A.kind));
  if (A.required)
    S += " (required)";
  if (A.defaultValue)
    S += " = " + defaultText(*A.defaultValue);
  if (!A.doc.empty())
    S += " — " + oneLine(A.doc);
  return S;
}

/// "static shape", "data-dependent shape" or "none" for the kernel registry;
/// "List primitive" for an operator the executors run themselves.
std::string kernelText(const ir::OpInfo &Op) {
  if (Op.listPrimitive)
    return "List primitive";
  const KernelInfo *K = KernelRegistry::global().find(Op.name);
  if (!K)
    return "none";
  return K->dataDependentShape ? "data-dependent shape" : "static shape";
}

struct OnnxOp {
  frontend::OnnxDomainVersions domain;
  std::string name;
  std::vector<int64_t> versions; // sorted opsets the translations start at
};

/// "Relu" for ai.onnx, the default domain; "ai.onnx.ml.TreeEnsemble" (as
/// ONNX's own operator lists write it) for the others.
std::string qualifiedName(const OnnxOp &Op) {
  const std::string Default = frontend::onnxDomains().front().name;
  return Op.domain.name == Default ? Op.name : Op.domain.name + "." + Op.name;
}

/// The ONNX operators, those of ai.onnx first, then the other domains' in
/// the frontend's order, each by name.
std::vector<OnnxOp> onnxOps() {
  std::vector<frontend::OnnxDomainVersions> Domains = frontend::onnxDomains();
  auto DomainIndex = [&](const std::string &Name) {
    for (size_t I = 0; I < Domains.size(); ++I)
      if (Domains[I].name == Name)
        return I;
    fail("ops: a translation of domain '{}', which the frontend does not "
         "list",
         Name);
  };
  std::map<std::pair<size_t, std::string>, std::vector<int64_t>> ByName;
  for (const frontend::OnnxOpVersion &C : frontend::onnxOperatorVersions())
    ByName[{DomainIndex(C.domain), C.opType}].push_back(C.sinceVersion);
  std::vector<OnnxOp> R;
  for (auto &[Key, Versions] : ByName) {
    std::sort(Versions.begin(), Versions.end());
    Versions.erase(std::unique(Versions.begin(), Versions.end()),
                   Versions.end());
    R.push_back({Domains[Key.first], Key.second, Versions});
  }
  return R;
}

/// "1+" when the oldest translation starts at the domain's oldest opset,
/// else "13+".
std::string supportedText(const OnnxOp &Op) {
  return fmt::format("{}+",
                     std::max(Op.versions.front(), Op.domain.minVersion));
}

std::string versionsText(const OnnxOp &Op) {
  std::string S;
  for (int64_t V : Op.versions)
    S += (S.empty() ? "" : ", ") + std::to_string(V);
  return S;
}

/// "ai.onnx opsets 1 to 25, ai.onnx.ml opsets 1 to 5, ...".
std::string domainsText() {
  std::string S;
  for (const frontend::OnnxDomainVersions &D : frontend::onnxDomains()) {
    S += S.empty() ? "" : ", ";
    S += D.minVersion == D.maxVersion
             ? fmt::format("{} opset {}", D.name, D.minVersion)
             : fmt::format("{} opsets {} to {}", D.name, D.minVersion,
                           D.maxVersion);
  }
  return S;
}

std::vector<const ir::OpInfo *> irOps() {
  std::vector<std::string> Names = ir::OpRegistry::global().names();
  std::sort(Names.begin(), Names.end());
  std::vector<const ir::OpInfo *> R;
  for (const std::string &N : Names)
    R.push_back(&ir::OpRegistry::global().get(N));
  return R;
}

std::string markdown() {
  std::vector<const ir::OpInfo *> Ir = irOps();
  std::vector<OnnxOp> Onnx = onnxOps();
  std::string S;
  S += "# Operators\n\n";
  S += "<!-- Generated by `build/tools/rivet ops --markdown > "
       "docs/operators.md`; do not edit by hand.\n"
       "     tests/tools/operators_doc_test.cc fails when this file and the "
       "registries differ. -->\n\n";
  S += "Each IR operator is registered once per layer under the same name: "
       "type relation, attribute schema\n"
       "and fusion pattern in `src/ir/ops/<family>.cc`; reference kernel and "
       "shape function in\n"
       "`src/kernels/ops/<family>.cc`. ONNX operators are translated to IR "
       "operators by converters in\n"
       "`src/frontend/onnx/ops/<family>.cc`, one per opset in which the "
       "operator's signature changed;\n"
       "versions that only added element types reuse the translation before "
       "them (`src/frontend/onnx/Converter.cc`).\n\n";
  S += fmt::format("- [IR operators](#ir-operators): {}\n", Ir.size());
  S += fmt::format("- [ONNX operators](#onnx-operators): {} ({})\n\n",
                   Onnx.size(), domainsText());

  S += "## IR operators\n\n";
  S += "Broadcasting is NumPy's everywhere; axes may be negative (counted "
       "from the end). Attribute kinds:\n"
       "`int`, `float`, `string`, `ints`, `floats`, `strings`, `tensor`. The "
       "kernel column says whether\n"
       "`src/kernels` has a reference kernel and whether its shape function "
       "needs input values\n"
       "(data-dependent: the output dims are `?` until run time); a List "
       "primitive has none: each\n"
       "executor runs it on its own Lists.\n\n";
  S += "| op | description | inputs | attributes | pattern | kernel |\n";
  S += "| --- | --- | --- | --- | --- | --- |\n";
  for (const ir::OpInfo *Op : Ir) {
    std::string Attrs;
    for (const ir::AttrSpec &A : Op->attrs())
      Attrs += (Attrs.empty() ? "" : "<br>") + cell(attrText(A));
    std::string Desc = Op->description;
    if (!resultText(*Op).empty())
      Desc += " Returns " + resultText(*Op) + ".";
    S +=
        fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", Op->name, cell(Desc),
                    cell(inputsText(*Op)), Attrs.empty() ? "—" : Attrs,
                    patternName(Op->pattern), kernelText(*Op));
  }

  S += "\n## ONNX operators\n\n";
  S += fmt::format(
      "The frontend reads models of {}.\n"
      "For a model importing an operator's domain at opset N it uses the "
      "translation with the highest\n"
      "starting opset ≤ N: \"supported\" is the oldest opset any translation "
      "covers; a model of an older\n"
      "opset fails with an error naming the node. Operators of domains other "
      "than ai.onnx are named\n"
      "with their domain (`ai.onnx.ml.Binarizer`).\n\n",
      domainsText());
  S += "| ONNX op | supported | translations from opsets |\n";
  S += "| --- | --- | --- |\n";
  for (const OnnxOp &Op : Onnx)
    S += fmt::format("| `{}` | {} | {} |\n", qualifiedName(Op),
                     supportedText(Op), versionsText(Op));
  return S;
}

std::string plainText() {
  std::vector<const ir::OpInfo *> Ir = irOps();
  std::vector<OnnxOp> Onnx = onnxOps();
  std::string S = fmt::format("IR operators ({}):\n", Ir.size());
  for (const ir::OpInfo *Op : Ir) {
    S +=
        fmt::format("  {}  [inputs: {}; {}; kernel: {}]\n", Op->name,
                    inputsText(*Op), patternName(Op->pattern), kernelText(*Op));
    S += fmt::format("      {}\n", oneLine(Op->description));
    if (!resultText(*Op).empty())
      S += fmt::format("      returns {}\n", resultText(*Op));
    for (const ir::AttrSpec &A : Op->attrs())
      S += fmt::format("      attr {}\n", attrText(A));
  }
  S += fmt::format("\nONNX operators ({}; {}):\n", Onnx.size(), domainsText());
  for (const OnnxOp &Op : Onnx)
    S += fmt::format("  {}  opsets {} (translations from {})\n",
                     qualifiedName(Op), supportedText(Op), versionsText(Op));
  return S;
}

} // namespace

int opsCommand(const std::vector<std::string> &Args) {
  ParsedArgs P =
      parseArgs(Args, {{"markdown", false, false}, {"help", false, false}});
  if (P.has("help")) {
    std::fputs(OpsUsage, stdout);
    return 0;
  }
  if (!P.positional.empty())
    throw UsageError("ops: unexpected argument '" + P.positional[0] + "'");
  std::string Out = P.has("markdown") ? markdown() : plainText();
  std::fputs(Out.c_str(), stdout);
  return 0;
}

} // namespace rivet::cli
