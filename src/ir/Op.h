//===- Op.h - The operator registry of the IR -------------------*- C++ -*-===//
//
// Each operator is registered once in this layer with its attribute schema,
// type relation and fusion pattern (RIVET_REGISTER_OP in the file of its
// family). Kernels and shape functions are registered under the same name in
// src/kernels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Type.h"
#include "kernels/AttrSchema.h"
#include "kernels/Attrs.h"

#include <string>
#include <string_view>
#include <vector>

namespace rivet::ir {

/// How FuseOps may group an operator (TVM's OpPatternKind, in order).
enum class FusionPattern : uint8_t {
  Elementwise = 0,
  Broadcast = 1,
  Injective = 2,
  CommReduce = 3,
  OutElementwiseFusable = 4,
  Tuple = 7,
  Opaque = 8,
};

/// The attribute schema is the runtime's (src/kernels/AttrSchema.h): it is
/// registered with the kernel, and the kernels read defaults from it too.
using rivet::AttrSpec;

/// Infers the output type from the argument types. Argument types may be
/// partially known (Dim::Any, unknown rank); the relation must propagate
/// what it can. Returns null when an argument is still IncompleteType and the
/// result cannot be determined yet. Throws rivet::Error describing a mismatch
/// (type inference adds the operator, the argument and the location).
using TypeRelation = Type (*)(const std::vector<Type> &Args, const Attrs &A);

struct OpInfo {
  std::string name;
  std::string description;
  int numInputs = -1; // -1: variadic
  TypeRelation relation = nullptr;
  FusionPattern pattern = FusionPattern::Opaque;
  /// The single argument is a List of tensors; the kernel receives its
  /// elements as inputs (concat_list). Executors unpack the list.
  bool listArgument = false;
  /// The kernel's outputs, however many, form a List (split_to_list).
  bool listResult = false;
  /// The result holds argument 0's elements in the same row-major order
  /// under another shape (reshape, squeeze, flatten): executors may return
  /// a view of the argument's storage instead of copying it.
  bool viewOfFirstArg = false;

  /// The attribute schema, registered under the same name in src/kernels.
  const AttrSchema &attrs() const { return attrSchema(name); }
};

/// Info with viewOfFirstArg set (for RIVET_REGISTER_OP).
inline OpInfo viewOp(OpInfo Info) {
  Info.viewOfFirstArg = true;
  return Info;
}

class OpRegistry {
public:
  static OpRegistry &global();
  void add(OpInfo Info);
  const OpInfo *find(std::string_view Name) const;
  /// Throws rivet::Error("unknown operator 'Name'").
  const OpInfo &get(std::string_view Name) const;
  std::vector<std::string> names() const;
};

namespace detail {
struct OpRegistrar {
  explicit OpRegistrar(OpInfo Info) {
    OpRegistry::global().add(std::move(Info));
  }
};
} // namespace detail

} // namespace rivet::ir

#define RIVET_OP_CONCAT2(A, B) A##B
#define RIVET_OP_CONCAT(A, B) RIVET_OP_CONCAT2(A, B)
/// RIVET_REGISTER_OP(OpInfo{"add", "Elementwise sum", 2, binaryBroadcastRel,
///                          FusionPattern::Broadcast});
#define RIVET_REGISTER_OP(...)                                                 \
  static ::rivet::ir::detail::OpRegistrar RIVET_OP_CONCAT(                     \
      RivetOpReg_, __COUNTER__)(__VA_ARGS__)
