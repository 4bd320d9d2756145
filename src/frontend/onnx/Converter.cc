//===- Converter.cc - NodeContext and the converter registry --------------===//
#include "frontend/onnx/Converter.h"

#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxTensor.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace rivet::frontend {

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

std::string NodeContext::where() const {
  std::string Name =
      Node.name().empty()
          ? (Node.output_size() ? "with output '" + Node.output(0) + "'"
                                : "<unnamed>")
          : "'" + Node.name() + "'";
  // ai.onnx, the domain of most nodes, goes unnamed.
  std::string Set =
      Domain == kDefaultOnnxDomain ? std::string() : std::string(Domain) + " ";
  std::string Version = OpsetVersion > 0
                            ? fmt::format("{}opset {}", Set, OpsetVersion)
                            : fmt::format("{}not imported", Set);
  return fmt::format("{}: node {} ({}, {})", Graph.state().what, Name,
                     Node.op_type(), Version);
}

bool NodeContext::hasInput(size_t I) const {
  if (I >= numInputs())
    return false;
  Considered.resize(numInputs());
  Considered[I] = true;
  return !Node.input((int)I).empty();
}

size_t NodeContext::firstUnconsideredInput() const {
  Considered.resize(numInputs());
  for (size_t I = 0; I < numInputs(); ++I)
    if (!Considered[I] && !Node.input((int)I).empty())
      return I;
  return numInputs();
}

ir::Expr NodeContext::optionalInput(size_t I) const {
  if (!hasInput(I))
    return nullptr;
  const std::string &Name = Node.input((int)I);
  ir::Expr E = Graph.lookup(Name);
  if (!E)
    error("input {} ('{}') is not defined before its use", I, Name);
  return E;
}

ir::Expr NodeContext::input(size_t I) const {
  if (!hasInput(I))
    error("input {} is required", I);
  return optionalInput(I);
}

std::optional<Tensor> NodeContext::constantInput(size_t I) const {
  ir::Expr E = optionalInput(I);
  if (E)
    if (auto *C = E->as<ir::ConstantNode>())
      return C->value;
  return std::nullopt;
}

ir::Type NodeContext::declaredInputType(size_t I) const {
  if (!hasInput(I))
    return nullptr;
  return Graph.declaredType(Node.input((int)I));
}

bool NodeContext::hasOutput(size_t I) const {
  return I < numOutputs() && !Node.output((int)I).empty();
}

const onnx::AttributeProto *NodeContext::findAttr(std::string_view Name) const {
  for (const auto &A : Node.attribute())
    if (A.name() == Name)
      return &A;
  return nullptr;
}

bool NodeContext::hasAttr(std::string_view Name) const {
  return findAttr(Name) != nullptr;
}

static const char *attrTypeName(int T) {
  switch (T) {
  case onnx::AttributeProto::FLOAT: return "float";
  case onnx::AttributeProto::INT: return "int";
  case onnx::AttributeProto::STRING: return "string";
  case onnx::AttributeProto::TENSOR: return "tensor";
  case onnx::AttributeProto::GRAPH: return "graph";
  case onnx::AttributeProto::FLOATS: return "floats";
  case onnx::AttributeProto::INTS: return "ints";
  case onnx::AttributeProto::STRINGS: return "strings";
  default: return "unsupported";
  }
}

const onnx::AttributeProto &
NodeContext::attr(std::string_view Name,
                  onnx::AttributeProto::AttributeType T) const {
  const onnx::AttributeProto *A = findAttr(Name);
  if (!A)
    error("attribute '{}' is required", Name);
  // Old exporters leave `type` unset; accept when the payload fits.
  if (A->type() != T && A->type() != onnx::AttributeProto::UNDEFINED)
    error("attribute '{}' must be of kind {}, got {}", Name, attrTypeName(T),
          attrTypeName(A->type()));
  return *A;
}

int64_t NodeContext::attrInt(std::string_view Name) const {
  return attr(Name, onnx::AttributeProto::INT).i();
}
int64_t NodeContext::attrInt(std::string_view Name, int64_t Default) const {
  return hasAttr(Name) ? attrInt(Name) : Default;
}
double NodeContext::attrFloat(std::string_view Name) const {
  return attr(Name, onnx::AttributeProto::FLOAT).f();
}
double NodeContext::attrFloat(std::string_view Name, double Default) const {
  return hasAttr(Name) ? attrFloat(Name) : Default;
}
std::string NodeContext::attrString(std::string_view Name) const {
  return attr(Name, onnx::AttributeProto::STRING).s();
}
std::string NodeContext::attrString(std::string_view Name,
                                    std::string Default) const {
  return hasAttr(Name) ? attrString(Name) : Default;
}
std::vector<int64_t> NodeContext::attrInts(std::string_view Name) const {
  const auto &A = attr(Name, onnx::AttributeProto::INTS);
  return {A.ints().begin(), A.ints().end()};
}
std::vector<int64_t> NodeContext::attrInts(std::string_view Name,
                                           std::vector<int64_t> Default) const {
  return hasAttr(Name) ? attrInts(Name) : Default;
}
std::vector<double> NodeContext::attrFloats(std::string_view Name) const {
  const auto &A = attr(Name, onnx::AttributeProto::FLOATS);
  return {A.floats().begin(), A.floats().end()};
}
std::vector<double> NodeContext::attrFloats(std::string_view Name,
                                            std::vector<double> Default) const {
  return hasAttr(Name) ? attrFloats(Name) : Default;
}
std::vector<std::string> NodeContext::attrStrings(std::string_view Name) const {
  const auto &A = attr(Name, onnx::AttributeProto::STRINGS);
  return {A.strings().begin(), A.strings().end()};
}
Tensor NodeContext::attrTensor(std::string_view Name) const {
  const auto &A = attr(Name, onnx::AttributeProto::TENSOR);
  return tensorFromProto(A.t(), Graph.state().modelDir,
                         where() + ": attribute '" + std::string(Name) + "'");
}
const onnx::GraphProto &NodeContext::attrGraph(std::string_view Name) const {
  return attr(Name, onnx::AttributeProto::GRAPH).g();
}

ir::Expr NodeContext::bind(ir::Expr E, std::string_view NameHint, ir::Type T) {
  return Graph.bind(std::move(E), NameHint, std::move(T));
}

ir::Module &NodeContext::module() const { return *Graph.state().module; }

ir::Expr NodeContext::construct(const std::string &Name,
                                std::vector<ir::Expr> Args) const {
  ir::Constructor Ctor = module().findConstructor(Name);
  RIVET_CHECK(Ctor, "the prelude has no constructor {}", Name);
  return ir::call(Ctor, std::move(Args));
}

ir::Expr NodeContext::callGlobal(const std::string &Name,
                                 std::vector<ir::Expr> Args) const {
  RIVET_CHECK(module().hasFunction(Name), "the prelude has no function @{}",
              Name);
  return ir::call(ir::globalVar(Name), std::move(Args));
}

std::vector<ir::Expr> NodeContext::bindTuple(ir::Expr E, size_t N) {
  ir::Expr T = bind(std::move(E), "tup");
  std::vector<ir::Expr> R;
  for (size_t I = 0; I < N; ++I)
    R.push_back(ir::tupleGetItem(T, (int64_t)I));
  return R;
}

//===----------------------------------------------------------------------===//
// ConverterRegistry
//===----------------------------------------------------------------------===//

const OnnxDomainRange *findOnnxDomain(std::string_view Domain) {
  for (const OnnxDomainRange &D : kOnnxDomains)
    if (D.name == Domain)
      return &D;
  return nullptr;
}

namespace {
using OpKey = std::pair<std::string_view, std::string_view>;
/// Orders (domain, op type) keys, owned or viewed (for find's lookups).
struct OpKeyLess {
  using is_transparent = void;
  bool operator()(OpKey A, OpKey B) const { return A < B; }
};
/// Registrations by (domain, op type); one entry per version.
using ConverterTable = std::multimap<std::pair<std::string, std::string>,
                                     OnnxConverter, OpKeyLess>;
ConverterTable &table() {
  static ConverterTable T;
  return T;
}

/// The ai.onnx operator versions of opsets 19 to 25 that changed only their
/// type constraints (new element types): each is read by the translation of
/// the version before it, registered again under the new version so that
/// the registry (and `rivet ops`) lists every version read. Versions that
/// changed meaning have their own registrations in the operators' files.
struct TypeOnlyVersions {
  const char *opType;
  std::initializer_list<int64_t> versions;
};
const TypeOnlyVersions kTypeOnlyVersions[] = {
    {"Acos", {22}},
    {"Acosh", {22}},
    {"Asin", {22}},
    {"Asinh", {22}},
    {"Atan", {22}},
    {"Atanh", {22}},
    {"AveragePool", {22}},
    {"Bernoulli", {22}},
    {"Cast", {21, 23, 25}},
    {"CastLike", {21, 23, 25}},
    {"Constant", {19, 21, 23, 24, 25}},
    {"ConstantOfShape", {20, 21, 23, 24, 25}},
    {"Conv", {22}},
    {"ConvTranspose", {22}},
    {"Cos", {22}},
    {"Cosh", {22}},
    {"DeformConv", {22}},
    {"DequantizeLinear", {19, 24, 25}},
    {"Det", {22}},
    {"Dropout", {22}},
    {"Elu", {22}},
    {"Equal", {19}},
    {"EyeLike", {22}},
    {"Flatten", {21, 23, 24, 25}},
    {"GRU", {22}},
    {"GlobalAveragePool", {22}},
    {"GlobalLpPool", {22}},
    {"GlobalMaxPool", {22}},
    {"GridSample", {22}},
    {"HardSigmoid", {22}},
    {"HardSwish", {22}},
    {"Identity", {19, 21, 23, 24, 25}},
    {"If", {19, 21, 23, 24, 25}},
    {"InstanceNormalization", {22}},
    {"IsInf", {20}},
    {"IsNaN", {20}},
    {"LSTM", {22}},
    {"Loop", {19, 21, 23, 24, 25}},
    {"LpNormalization", {22}},
    {"LpPool", {22}},
    {"MaxPool", {22}},
    {"MaxRoiPool", {22}},
    {"MaxUnpool", {22}},
    {"Mish", {22}},
    {"Multinomial", {22}},
    {"NegativeLogLikelihoodLoss", {22}},
    {"Pad", {21, 23, 24, 25}},
    {"QLinearMatMul", {21}},
    {"QuantizeLinear", {24, 25}},
    {"RNN", {22}},
    {"RandomNormal", {22}},
    {"RandomNormalLike", {22}},
    {"RandomUniform", {22}},
    {"RandomUniformLike", {22}},
    {"Reshape", {19, 21, 23, 24, 25}},
    {"RoiAlign", {22}},
    {"Round", {22}},
    {"Scan", {19, 21, 23, 24, 25}},
    {"Selu", {22}},
    {"Shape", {19, 21, 23, 24, 25}},
    {"Sin", {22}},
    {"Sinh", {22}},
    {"Size", {19, 21, 23, 24, 25}},
    {"Softplus", {22}},
    {"Softsign", {22}},
    {"SplitToSequence", {24}},
    {"Squeeze", {21, 23, 24, 25}},
    {"Tan", {22}},
    {"ThresholdedRelu", {22}},
    {"TopK", {24}},
    {"Transpose", {21, 23, 24, 25}},
    {"Unsqueeze", {21, 23, 24, 25}},
};

/// Adds kTypeOnlyVersions' registrations once every operator's own are in
/// (static registrars run in no fixed order, so not at registration).
void addTypeOnlyVersions() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    for (const TypeOnlyVersions &T : kTypeOnlyVersions)
      for (int64_t V : T.versions) {
        const OnnxConverter *Before = nullptr;
        bool Registered = false;
        auto [B, E] = table().equal_range(OpKey{"ai.onnx", T.opType});
        for (auto It = B; It != E; ++It) {
          Registered |= It->second.sinceVersion == V;
          if (It->second.sinceVersion < V &&
              (!Before || It->second.sinceVersion > Before->sinceVersion))
            Before = &It->second;
        }
        if (!Registered && Before) {
          OnnxConverter C = *Before;
          C.sinceVersion = V;
          table().emplace(std::make_pair(C.domain, C.opType), std::move(C));
        }
      }
  });
}
} // namespace

ConverterRegistry &ConverterRegistry::global() {
  static ConverterRegistry R;
  return R;
}

void ConverterRegistry::add(OnnxConverter C) {
  const OnnxDomainRange *D = findOnnxDomain(C.domain);
  RIVET_CHECK(D,
              "ONNX operator {} registered for domain '{}', which is not "
              "in kOnnxDomains",
              C.opType, C.domain);
  RIVET_CHECK(C.sinceVersion <= D->maxVersion,
              "ONNX operator {} registered for {} opset {}, above the newest "
              "one read ({})",
              C.opType, C.domain, C.sinceVersion, D->maxVersion);
  std::pair<std::string, std::string> Key{C.domain, C.opType};
  auto [B, E] = table().equal_range(Key);
  for (auto It = B; It != E; ++It)
    RIVET_CHECK(It->second.sinceVersion != C.sinceVersion,
                "ONNX operator {} ({} opset {}) registered twice", C.opType,
                C.domain, C.sinceVersion);
  table().emplace(std::move(Key), std::move(C));
}

const OnnxConverter *ConverterRegistry::find(std::string_view Domain,
                                             std::string_view OpType,
                                             int64_t Opset) const {
  addTypeOnlyVersions();
  const OnnxConverter *Best = nullptr;
  auto [B, E] = table().equal_range(OpKey{Domain, OpType});
  for (auto It = B; It != E; ++It)
    if (It->second.sinceVersion <= Opset &&
        (!Best || It->second.sinceVersion > Best->sinceVersion))
      Best = &It->second;
  return Best;
}

std::vector<OnnxConverter> ConverterRegistry::all() const {
  addTypeOnlyVersions();
  std::vector<OnnxConverter> R;
  for (auto &[_, C] : table())
    R.push_back(C);
  return R;
}

} // namespace rivet::frontend
