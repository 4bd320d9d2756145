//===- Converter.cc - NodeContext and the converter registry --------------===//
#include "frontend/onnx/Converter.h"

#include "frontend/onnx/GraphImporter.h"
#include "frontend/onnx/OnnxTensor.h"

#include <algorithm>
#include <map>

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
  const OnnxConverter *Best = nullptr;
  auto [B, E] = table().equal_range(OpKey{Domain, OpType});
  for (auto It = B; It != E; ++It)
    if (It->second.sinceVersion <= Opset &&
        (!Best || It->second.sinceVersion > Best->sinceVersion))
      Best = &It->second;
  return Best;
}

std::vector<OnnxConverter> ConverterRegistry::all() const {
  std::vector<OnnxConverter> R;
  for (auto &[_, C] : table())
    R.push_back(C);
  return R;
}

} // namespace rivet::frontend
