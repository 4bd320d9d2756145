//===- Importer.cc - ONNX models to IR modules ----------------------------===//
#include "frontend/onnx/Importer.h"

#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxTensor.h"
#include "kernels/RegularFile.h"

#include <google/protobuf/io/coded_stream.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

namespace rivet::frontend {

namespace {

/// The version of each domain the model imports. Whether Rivet reads a
/// domain and that version of it is checked at the nodes that use it (a
/// model may import a domain it has no node of).
std::map<std::string, int64_t, std::less<>>
modelOpsets(const onnx::ModelProto &M, const std::string &What) {
  if (M.opset_import().empty())
    fail("{}: the model imports no operator set (opset_import is empty)", What);
  std::map<std::string, int64_t, std::less<>> Opsets;
  for (const auto &O : M.opset_import()) {
    std::string Domain(canonicalOnnxDomain(O.domain()));
    if (O.version() < 1)
      fail("{}: operator set '{}' is imported at version {}", What, Domain,
           O.version());
    auto [It, New] = Opsets.emplace(Domain, O.version());
    if (!New && It->second != O.version())
      fail("{}: operator set '{}' is imported at versions {} and {}", What,
           Domain, It->second, O.version());
  }
  // A model importing only other domains: its ai.onnx nodes, if any, are
  // read at the newest opset.
  Opsets.emplace(kDefaultOnnxDomain, kMaxOnnxOpset);
  return Opsets;
}

/// Protobuf's default limit of nested messages is 100: about 33 nested
/// If/Loop bodies (node, attribute, graph: three messages a level), which
/// generated models exceed. Each level costs the parser a few hundred bytes
/// of stack.
constexpr int kMaxMessageDepth = 1500;

bool parseModel(onnx::ModelProto &M, const void *Data, int Size, int Depth) {
  google::protobuf::io::CodedInputStream In(static_cast<const uint8_t *>(Data),
                                            Size);
  In.SetRecursionLimit(Depth);
  return M.ParseFromCodedStream(&In) && In.ConsumedEntireMessage();
}

} // namespace

ir::Module importOnnxBytes(const void *Data, size_t Size,
                           const std::string &ModelDir,
                           const std::string &What) {
  onnx::ModelProto Model;
  if (Size > (size_t)INT32_MAX)
    fail("{}: model larger than 2 GiB; store weights as external data", What);
  if (!parseModel(Model, Data, (int)Size, kMaxMessageDepth)) {
    // Too deeply nested, or malformed? A second parse with a deeper limit
    // (still bounded: protobuf recurses on the native stack) tells.
    onnx::ModelProto Deeper;
    if (parseModel(Deeper, Data, (int)Size, 4 * kMaxMessageDepth))
      fail("{}: the model nests subgraphs (If, Loop, Scan bodies) more than "
           "{} protobuf messages deep, about {} levels of subgraphs; Rivet "
           "refuses deeper models",
           What, kMaxMessageDepth, kMaxMessageDepth / 3);
    fail("{}: not a valid ONNX model (protobuf parse failed: malformed, or "
         "nested more than {} messages deep)",
         What, 4 * kMaxMessageDepth);
  }
  if (!Model.has_graph())
    fail("{}: the model has no graph", What);

  ir::Module M = ir::Module::withPrelude();
  ImportState State;
  State.opsets = modelOpsets(Model, What);
  State.modelDir = ModelDir;
  State.what = What;
  State.module = &M;

  const onnx::GraphProto &G = Model.graph();
  std::set<std::string> Initialized;
  for (const auto &I : G.initializer())
    Initialized.insert(I.name());

  std::vector<ir::Var> Params;
  std::vector<ir::Expr> Args;
  std::vector<std::string> InputNames, OutputNames;
  for (const auto &In : G.input()) {
    if (Initialized.count(In.name()))
      continue;
    ir::Type T =
        In.has_type()
            ? typeFromProto(In.type(), What + ": input '" + In.name() + "'")
            : nullptr;
    if (!T)
      fail("{}: graph input '{}' has no type", What, In.name());
    ir::Var V = GraphImporter::makeVar(In.name(), T);
    Params.push_back(V);
    Args.push_back(V);
    InputNames.push_back(In.name());
  }
  for (const auto &Out : G.output())
    OutputNames.push_back(Out.name());

  GraphImporter Importer(State, nullptr);
  ir::Expr Body = Importer.importGraph(G, Args, [](std::vector<ir::Expr> Outs) {
    return Outs.size() == 1 ? Outs[0] : ir::tuple(std::move(Outs));
  });
  Attrs FnAttrs;
  FnAttrs.set("input_names", InputNames);
  FnAttrs.set("output_names", OutputNames);
  M.addFunction("main", ir::function(Params, Body, nullptr, {}, FnAttrs));
  return M;
}

ir::Module importOnnxFile(const std::string &Path) {
  std::vector<uint8_t> Bytes = readRegularFile(Path);
  std::string Dir = std::filesystem::path(Path).parent_path().string();
  return importOnnxBytes(Bytes.data(), Bytes.size(), Dir, Path);
}

std::vector<OnnxOpVersion> onnxOperatorVersions() {
  std::vector<OnnxOpVersion> R;
  for (const OnnxConverter &C : ConverterRegistry::global().all())
    R.push_back({C.domain, C.opType, C.sinceVersion});
  return R;
}

std::vector<OnnxDomainVersions> onnxDomains() {
  std::vector<OnnxDomainVersions> R;
  for (const OnnxDomainRange &D : kOnnxDomains)
    R.push_back({std::string(D.name), D.minVersion, D.maxVersion});
  return R;
}

OnnxSignature onnxSignature(const ir::Module &M) {
  OnnxSignature S;
  const auto *F = M.function("main")->as<ir::FunctionNode>();
  if (F->attrs.has("input_names"))
    S.inputs = F->attrs.getStrings("input_names");
  if (F->attrs.has("output_names"))
    S.outputs = F->attrs.getStrings("output_names");
  return S;
}

} // namespace rivet::frontend
