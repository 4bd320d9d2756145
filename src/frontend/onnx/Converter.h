//===- Converter.h - Translating one ONNX node ------------------*- C++ -*-===//
//
// Each ONNX operator is translated in exactly one place: a ConvertFn in the
// file of its family, registered with RIVET_REGISTER_ONNX_OP (domain ai.onnx)
// or RIVET_REGISTER_ONNX_DOMAIN_OP (another domain: ai.onnx.ml, ...) for the
// version of its domain's opset it was introduced or changed in. The importer
// picks, for the version the model imports of the node's domain, the
// registration with the highest version not above it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Module.h"
#include "kernels/Error.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rivet::frontend {

class GraphImporter;

/// What a converter sees of the node it translates.
class NodeContext {
public:
  /// Domain is the node's domain by its canonical name (ai.onnx for "");
  /// Opset the version the model imports of it (0: not imported).
  NodeContext(GraphImporter &G, const onnx::NodeProto &N,
              std::string_view Domain, int64_t Opset)
      : Graph(G), Node(N), Domain(Domain), OpsetVersion(Opset) {}

  const onnx::NodeProto &node() const { return Node; }
  /// The node's domain (canonical: "ai.onnx", "ai.onnx.ml", ...).
  std::string_view domain() const { return Domain; }
  /// The version the model imports of the node's domain.
  int64_t opset() const { return OpsetVersion; }

  /// Number of inputs as written, including empty optional ones.
  size_t numInputs() const { return (size_t)Node.input_size(); }
  /// True when input I is present (within range and named). This and the
  /// accessors below mark input I as considered by the converter: after
  /// it, an input no accessor considered is an error (an input this
  /// version of the operator does not have would be silently ignored).
  bool hasInput(size_t I) const;
  /// Input I; an error naming the node when it is missing.
  ir::Expr input(size_t I) const;
  /// Input I, or null when it is absent.
  ir::Expr optionalInput(size_t I) const;
  /// The value of input I when it is a constant (initializer or Constant).
  std::optional<Tensor> constantInput(size_t I) const;
  /// The declared type of input I (graph input, value_info), or null.
  ir::Type declaredInputType(size_t I) const;
  size_t numOutputs() const { return (size_t)Node.output_size(); }
  bool hasOutput(size_t I) const;

  // Attributes, with defaults for the optional ones; a missing required one
  // or one of another kind is an error naming node and attribute.
  bool hasAttr(std::string_view Name) const;
  int64_t attrInt(std::string_view Name) const;
  int64_t attrInt(std::string_view Name, int64_t Default) const;
  double attrFloat(std::string_view Name) const;
  double attrFloat(std::string_view Name, double Default) const;
  std::string attrString(std::string_view Name) const;
  std::string attrString(std::string_view Name, std::string Default) const;
  std::vector<int64_t> attrInts(std::string_view Name) const;
  std::vector<int64_t> attrInts(std::string_view Name,
                                std::vector<int64_t> Default) const;
  std::vector<double> attrFloats(std::string_view Name) const;
  std::vector<double> attrFloats(std::string_view Name,
                                 std::vector<double> Default) const;
  std::vector<std::string> attrStrings(std::string_view Name) const;
  Tensor attrTensor(std::string_view Name) const;
  const onnx::GraphProto &attrGraph(std::string_view Name) const;

  /// Binds E to a fresh let variable and returns it (use it when a value is
  /// needed more than once).
  ir::Expr bind(ir::Expr E, std::string_view NameHint = "t",
                ir::Type T = nullptr);
  /// The module being built (prelude functions and constructors).
  ir::Module &module() const;
  /// A call of the prelude's constructor Name (Cons, Nil, Some, None).
  ir::Expr construct(const std::string &Name, std::vector<ir::Expr> Args) const;
  /// A call of the prelude's global function Name (nth, length, ...).
  ir::Expr callGlobal(const std::string &Name,
                      std::vector<ir::Expr> Args) const;
  /// Binds a tuple-valued E and returns its N fields.
  std::vector<ir::Expr> bindTuple(ir::Expr E, size_t N);
  /// The importer of the graph this node is in (for subgraphs).
  GraphImporter &graph() const { return Graph; }

  /// Marks input I as considered: the operator has it, but it does not
  /// change this translation (Dropout's ratio in inference mode).
  void ignoreInput(size_t I) const { hasInput(I); }
  /// Index of the first present input that no accessor considered, or
  /// numInputs() when there is none.
  size_t firstUnconsideredInput() const;

  /// "node 'conv1' (Conv, opset 13)", "node 't' (TreeEnsemble, ai.onnx.ml
  /// opset 5)": the prefix of every error.
  std::string where() const;
  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> Fmt, Args &&...A) const {
    fail("{}: {}", where(), fmt::format(Fmt, std::forward<Args>(A)...));
  }

private:
  const onnx::AttributeProto *findAttr(std::string_view Name) const;
  const onnx::AttributeProto &attr(std::string_view Name,
                                   onnx::AttributeProto::AttributeType T) const;
  GraphImporter &Graph;
  const onnx::NodeProto &Node;
  std::string_view Domain;
  int64_t OpsetVersion;
  mutable std::vector<bool> Considered;
};

/// Translates a node to one expression per ONNX output (null for an output
/// the operator does not produce).
using ConvertFn = std::vector<ir::Expr> (*)(NodeContext &C);

/// The name ai.onnx goes by; the empty domain of nodes and opset_import
/// entries means it too.
inline constexpr std::string_view kDefaultOnnxDomain = "ai.onnx";

/// Domain as registrations and errors name it ("" is ai.onnx).
inline std::string_view canonicalOnnxDomain(std::string_view Domain) {
  return Domain.empty() ? kDefaultOnnxDomain : Domain;
}

/// An operator set the frontend reads and the versions of it it reads.
struct OnnxDomainRange {
  std::string_view name;
  int64_t minVersion;
  int64_t maxVersion;
};

/// The oldest and newest ai.onnx opsets the frontend accepts.
inline constexpr int64_t kMinOnnxOpset = 1;
inline constexpr int64_t kMaxOnnxOpset = 25;

/// Every domain the frontend reads, ai.onnx first. A node of any other
/// domain, or of a version outside its range, is an error naming it.
inline constexpr OnnxDomainRange kOnnxDomains[] = {
    {kDefaultOnnxDomain, kMinOnnxOpset, kMaxOnnxOpset},
    {"ai.onnx.ml", 1, 5},
    {"ai.onnx.preview.training", 1, 1},
};

/// The range of the canonical domain Domain; null when Rivet does not read
/// it.
const OnnxDomainRange *findOnnxDomain(std::string_view Domain);

struct OnnxConverter {
  std::string domain; // canonical: "ai.onnx", "ai.onnx.ml", ...
  std::string opType;
  int64_t sinceVersion; // the version of the domain's opset it applies from
  ConvertFn convert;
};

class ConverterRegistry {
public:
  static ConverterRegistry &global();
  /// Throws when C's domain is not one of kOnnxDomains or (domain, op,
  /// version) is registered already.
  void add(OnnxConverter C);
  /// The translation of Domain's (canonical) OpType for the domain's opset
  /// Opset, or null when there is none.
  const OnnxConverter *find(std::string_view Domain, std::string_view OpType,
                            int64_t Opset) const;
  /// Every registration, for the operator coverage table.
  std::vector<OnnxConverter> all() const;
};

namespace detail {
struct ConverterRegistrar {
  ConverterRegistrar(std::string Domain, std::string Op, int64_t Since,
                     ConvertFn F) {
    ConverterRegistry::global().add(
        {std::move(Domain), std::move(Op), Since, F});
  }
};
} // namespace detail

} // namespace rivet::frontend

#define RIVET_ONNX_CONCAT2(A, B) A##B
#define RIVET_ONNX_CONCAT(A, B) RIVET_ONNX_CONCAT2(A, B)
/// RIVET_REGISTER_ONNX_DOMAIN_OP("ai.onnx.ml", "Binarizer", 1,
///                               convertBinarizer);
#define RIVET_REGISTER_ONNX_DOMAIN_OP(Domain, OpType, Since, Fn)               \
  static ::rivet::frontend::detail::ConverterRegistrar RIVET_ONNX_CONCAT(      \
      RivetOnnxReg_, __COUNTER__)(Domain, OpType, Since, Fn)
/// RIVET_REGISTER_ONNX_OP("Relu", 6, convertRelu): an ai.onnx operator.
#define RIVET_REGISTER_ONNX_OP(OpType, Since, Fn)                              \
  RIVET_REGISTER_ONNX_DOMAIN_OP(                                               \
      std::string(::rivet::frontend::kDefaultOnnxDomain), OpType, Since, Fn)
