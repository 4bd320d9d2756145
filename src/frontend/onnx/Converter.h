//===- Converter.h - Translating one ONNX node ------------------*- C++ -*-===//
//
// Each ONNX operator is translated in exactly one place: a ConvertFn in the
// file of its family, registered with RIVET_REGISTER_ONNX_OP for the opset
// version it was introduced or changed in. The importer picks, for a model's
// opset, the registration with the highest version not above it.
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
  NodeContext(GraphImporter &G, const onnx::NodeProto &N, int64_t Opset)
      : Graph(G), Node(N), OpsetVersion(Opset) {}

  const onnx::NodeProto &node() const { return Node; }
  /// The model's ai.onnx opset version.
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

  /// "node 'conv1' (Conv, opset 13)": the prefix of every error.
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
  int64_t OpsetVersion;
  mutable std::vector<bool> Considered;
};

/// Translates a node to one expression per ONNX output (null for an output
/// the operator does not produce).
using ConvertFn = std::vector<ir::Expr> (*)(NodeContext &C);

struct OnnxConverter {
  std::string opType;
  int64_t sinceVersion; // the ai.onnx opset this translation applies from
  ConvertFn convert;
};

class ConverterRegistry {
public:
  static ConverterRegistry &global();
  void add(OnnxConverter C);
  /// The translation of OpType for Opset, or null when there is none.
  const OnnxConverter *find(std::string_view OpType, int64_t Opset) const;
  /// Every registration, for the operator coverage table.
  std::vector<OnnxConverter> all() const;
};

namespace detail {
struct ConverterRegistrar {
  ConverterRegistrar(std::string Op, int64_t Since, ConvertFn F) {
    ConverterRegistry::global().add({std::move(Op), Since, F});
  }
};
} // namespace detail

/// The oldest and newest ai.onnx opsets the frontend accepts.
inline constexpr int64_t kMinOnnxOpset = 1;
inline constexpr int64_t kMaxOnnxOpset = 18;

} // namespace rivet::frontend

#define RIVET_ONNX_CONCAT2(A, B) A##B
#define RIVET_ONNX_CONCAT(A, B) RIVET_ONNX_CONCAT2(A, B)
/// RIVET_REGISTER_ONNX_OP("Relu", 6, convertRelu);
#define RIVET_REGISTER_ONNX_OP(OpType, Since, Fn)                              \
  static ::rivet::frontend::detail::ConverterRegistrar RIVET_ONNX_CONCAT(      \
      RivetOnnxReg_, __COUNTER__)(OpType, Since, Fn)
