//===- Guard.cc - Operators that check what a program is about to need ---===//
//
// require_memory lets a loop that will stack n results fail before it runs
// (the ONNX Loop import), instead of after filling the machine's memory.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

// require_memory(n; bytes_each, what): n (an int64 scalar), once n *
// bytes_each bytes are known to fit in this machine's memory.
Type requireMemoryRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs("require_memory", A);
  checkArity("require_memory", Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &N = tensorArg("require_memory", Args, 0);
  if (N.dtype != DType::Int64 || (N.shape && !N.shape->empty()))
    failArg(0, "require_memory: expected an int64 scalar, got {}", typeStr(N));
  return tensorType({}, DType::Int64);
}

OpInfo requireMemoryInfo() {
  OpInfo Info{"require_memory",
              "Returns n after checking that n * bytes_each bytes fit in "
              "this machine's memory (an out-of-memory error naming `what` "
              "otherwise).",
              1, requireMemoryRel, FusionPattern::Opaque};
  Info.runTimeOnly = true;
  return Info;
}

} // namespace

RIVET_REGISTER_OP(requireMemoryInfo());

} // namespace rivet::ir
