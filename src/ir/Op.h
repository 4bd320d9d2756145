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

#include <optional>
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

/// Where a call of a weighted anchor keeps its channels (OpInfo::channelAxes).
struct ChannelAxes {
  /// The result's channel axis: 1 (NCHW) or, counted from the end, -1 (the
  /// last axis). The data's (argument 0) too, where weightInput is set.
  int channel = 1;
  /// The weights' (argument 1) axis of the output channels.
  size_t weightOutput = 0;
  /// The weights' axis of the data's channels; -1 when a data channel is not
  /// one slice of the weights (a grouped conv) or the data may be transposed
  /// (gemm's trans_a).
  int weightInput = -1;
  /// Argument 2 is an optional bias b[M] added to each output channel (conv),
  /// not a term with a scale of its own (gemm's c).
  bool channelBias = false;

  /// The channel axis of a tensor of rank Rank; nullopt when it has none.
  std::optional<size_t> channelOf(size_t Rank) const {
    int64_t A = channel < 0 ? (int64_t)Rank + channel : channel;
    if (A < 0 || A >= (int64_t)Rank)
      return std::nullopt;
    return (size_t)A;
  }
};

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
  /// Whether f(0, ..., 0) == 0 for a call with these attributes (add, relu;
  /// clip when min <= 0 <= max); null: not known to. AlterOpLayout carries a
  /// tensor whose padding channels are zero only through such operators.
  bool (*keepsZero)(const Attrs &A) = nullptr;
  /// The result is zero wherever any operand is (multiply): AlterOpLayout
  /// also carries a zero-padded tensor through a product with a scalar.
  bool zeroAbsorbing = false;
  /// A pooling window over the spatial axes of x[N, C, D...] that pools each
  /// channel on its own (max_pool, global_avg_pool): AlterOpLayout pools a
  /// tensor blocked along the channels without converting it back.
  bool channelwisePool = false;
  /// A call whose result has argument 0's type returns argument 0 (expand,
  /// tile): SimplifyExpr drops such calls.
  bool identityWhenTypeKept = false;
  /// The call's outcome depends on more than its arguments and attributes
  /// (require_memory: on this machine's memory), so passes never evaluate it
  /// at compile time (FoldConstant) nor merge two calls of it
  /// (EliminateCommonSubexpr).
  bool runTimeOnly = false;
  /// For a weighted anchor (conv, dense, matmul, gemm: a product of the data,
  /// argument 0, and the weights, argument 1, plus an optional argument 2
  /// added to it), the channel axes of a call with these
  /// attributes and weights of rank WeightRank, or nullopt where they have
  /// none (matmul's batched weights); null for other operators. A function,
  /// not a value: gemm's trans_b and conv's group decide the axes.
  /// FoldScaleAxis scales weights along them, CombineParallelConv2D and
  /// CombineParallelDense concatenate weights along them.
  std::optional<ChannelAxes> (*channelAxes)(const Attrs &A,
                                            size_t WeightRank) = nullptr;
  /// An operation on a List value itself (list_at, list_insert, ...; see
  /// ir/ops/List.cc): no kernel, each executor runs it on its own
  /// representation of Lists (ir/ListPrimitives.h, vm/ListPrimitives.h).
  bool listPrimitive = false;

  /// The attribute schema, registered under the same name in src/kernels.
  const AttrSchema &attrs() const { return attrSchema(name); }
};

/// Info with viewOfFirstArg set (for RIVET_REGISTER_OP).
inline OpInfo viewOp(OpInfo Info) {
  Info.viewOfFirstArg = true;
  return Info;
}

/// Info with listPrimitive set (for RIVET_REGISTER_OP).
inline OpInfo listPrimitiveOp(OpInfo Info) {
  Info.listPrimitive = true;
  return Info;
}

/// Info with channelAxes set (for RIVET_REGISTER_OP).
inline OpInfo weightedAnchorOp(
    OpInfo Info,
    std::optional<ChannelAxes> (*Axes)(const Attrs &, size_t WeightRank)) {
  Info.channelAxes = Axes;
  return Info;
}

/// For keepsZero: an operator that maps zeros to zero under any attributes.
inline bool alwaysKeepsZero(const Attrs &) { return true; }

/// Info with keepsZero set (for RIVET_REGISTER_OP).
inline OpInfo keepsZeroOp(OpInfo Info,
                          bool (*When)(const Attrs &) = alwaysKeepsZero) {
  Info.keepsZero = When;
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
