//===- FusedAnchors.cc - One-call anchor + elementwise tail operators -----===//
//
// The operators the VM compiler puts in place of a fused group that oneDNN
// runs in one call (vm/compiler/AnchorSelection.h): the anchor's inputs,
// then one operand per binary post-op. Their type is the anchor's: post-ops
// are elementwise and never grow the output (the kernels' shape functions
// check the operands). They are not produced by the frontend or by passes.
//
//===----------------------------------------------------------------------===//
#include "ir/Op.h"
#include "kernels/Error.h"
#include "kernels/PostOpAttrs.h"

namespace rivet::ir {

namespace {

/// The anchor operator's relation on the leading arguments, with the
/// post-op and weight-caching attributes stripped.
Type fusedAnchorType(const char *Fused, const char *Anchor,
                     const std::vector<Type> &Args, const Attrs &A) {
  int64_t NumOperands = countPostOpOperands(A);
  if (NumOperands < 0 || (size_t)NumOperands > Args.size())
    fail("{}: {} post-op operands named, {} arguments given", Fused,
         NumOperands, Args.size());
  std::vector<Type> AnchorArgs(Args.begin(), Args.end() - NumOperands);
  Attrs AnchorAttrs, Stripped = withoutPostOpAttrs(A);
  for (const auto &[Name, V] : Stripped.items())
    if (Name != "weights_constant")
      AnchorAttrs.set(Name, V);
  return OpRegistry::global().get(Anchor).relation(AnchorArgs, AnchorAttrs);
}

Type convFusedRel(const std::vector<Type> &Args, const Attrs &A) {
  return fusedAnchorType("dnnl.conv_fused", "conv", Args, A);
}
Type matmulFusedRel(const std::vector<Type> &Args, const Attrs &A) {
  return fusedAnchorType("dnnl.matmul_fused", "matmul", Args, A);
}
Type denseFusedRel(const std::vector<Type> &Args, const Attrs &A) {
  return fusedAnchorType("dnnl.dense_fused", "dense", Args, A);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "dnnl.conv_fused",
    "conv followed by its elementwise tail as oneDNN post-ops (VM compiler "
    "only): x, w[, b], then the binary post-ops' operands.",
    -1, convFusedRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "dnnl.matmul_fused",
    "matmul followed by its elementwise tail as oneDNN post-ops (VM compiler "
    "only).",
    -1, matmulFusedRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "dnnl.dense_fused",
    "dense followed by its elementwise tail as oneDNN post-ops (VM compiler "
    "only).",
    -1, denseFusedRel, FusionPattern::Opaque});

} // namespace rivet::ir
