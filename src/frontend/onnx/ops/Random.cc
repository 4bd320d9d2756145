//===- Random.cc - ONNX random generators ---------------------------------===//
//
// RandomUniform, RandomNormal and their Like forms map 1:1 to the IR's random
// operators; the ONNX dtype code becomes a dtype name. Bernoulli is its
// definition, 1 where a uniform draw in [0, 1) is below the probability:
//   cast(less(random_uniform_like(x), x), dtype)
// (ONNX's function body compares the draw the other way round, which gives
// 1 with probability 1 - p; the operator's text and ONNX Runtime give p). The
// values cannot match another implementation's, seeded or not.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Converter.h"
#include "frontend/onnx/OnnxTensor.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

/// The float attributes Names and seed when present, and dtype (an ONNX
/// code) as a dtype name.
Attrs randomAttrs(NodeContext &C, std::initializer_list<const char *> Names) {
  Attrs A;
  for (const char *N : Names)
    if (C.hasAttr(N))
      A.set(N, C.attrFloat(N));
  if (C.hasAttr("seed"))
    A.set("seed", C.attrFloat("seed"));
  if (C.hasAttr("dtype"))
    A.set("dtype", std::string(dtypeName(
                       dtypeFromOnnx((int32_t)C.attrInt("dtype"),
                                     C.where() + ": attribute 'dtype'"))));
  return A;
}

template <bool Normal> std::vector<Expr> convertRandom(NodeContext &C) {
  Attrs A = Normal ? randomAttrs(C, {"mean", "scale"})
                   : randomAttrs(C, {"low", "high"});
  A.set("shape", C.attrInts("shape"));
  return {ir::callOp(Normal ? "random_normal" : "random_uniform", {}, A)};
}

template <bool Normal> std::vector<Expr> convertRandomLike(NodeContext &C) {
  Attrs A = Normal ? randomAttrs(C, {"mean", "scale"})
                   : randomAttrs(C, {"low", "high"});
  return {ir::callOp(Normal ? "random_normal_like" : "random_uniform_like",
                     {C.input(0)}, A)};
}

std::vector<Expr> convertBernoulli(NodeContext &C) {
  Expr P = C.bind(C.input(0), "p");
  Attrs A;
  if (C.hasAttr("seed"))
    A.set("seed", C.attrFloat("seed"));
  Expr Draw = ir::callOp("random_uniform_like", {P}, std::move(A));
  Expr One = ir::callOp("less", {Draw, P});
  if (!C.hasAttr("dtype"))
    return {ir::callOp("cast_like", {One, P})};
  DType To = dtypeFromOnnx((int32_t)C.attrInt("dtype"),
                           C.where() + ": attribute 'dtype'");
  return {
      ir::callOp("cast", {One}, Attrs{{"dtype", std::string(dtypeName(To))}})};
}

} // namespace

RIVET_REGISTER_ONNX_OP("RandomUniform", 1, convertRandom<false>);
RIVET_REGISTER_ONNX_OP("RandomNormal", 1, convertRandom<true>);
RIVET_REGISTER_ONNX_OP("RandomUniformLike", 1, convertRandomLike<false>);
RIVET_REGISTER_ONNX_OP("RandomNormalLike", 1, convertRandomLike<true>);
RIVET_REGISTER_ONNX_OP("Bernoulli", 15, convertBernoulli);

} // namespace rivet::frontend
