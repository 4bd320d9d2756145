//===- Strings.cc - Operators on string tensors ---------------------------===//
//
// Type relations of string_normalizer (ONNX StringNormalizer),
// regex_full_match, string_concat and string_split (ONNX 20). Strings are
// elements of dtype string (kernels/StringTable.h); the operators that only
// move elements take them as they take numbers.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

void requireString(std::string_view Op, const TensorTypeNode &T, size_t Arg) {
  if (T.dtype != DType::String)
    failArg(Arg, "{}: expected a string tensor, got {}", Op, typeStr(T));
}

/// [C] or [1, C] strings; the stop words removed make the extent unknown.
Type stringNormalizerRel(const std::vector<Type> &Args, const Attrs &A) {
  constexpr std::string_view Op = "string_normalizer";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  std::string Action = *optString(A, "case_change_action");
  if (Action != "NONE" && Action != "LOWER" && Action != "UPPER")
    fail("{}: case_change_action must be NONE, LOWER or UPPER, got '{}'", Op,
         Action);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireString(Op, X, 0);
  if (!X.shape)
    return tensorTypeUnknownRank(DType::String);
  const std::vector<Dim> &S = *X.shape;
  bool Row = S.size() == 2 && (!S[0].isConst() || S[0].value == 1);
  if (S.size() != 1 && !Row)
    failArg(0, "{}: the input must be [C] or [1, C], got {}", Op, typeStr(X));
  if (S.size() == 1)
    return tensorType({Dim::any()}, DType::String);
  return tensorType({Dim::constant(1), Dim::any()}, DType::String);
}

Type regexFullMatchRel(const std::vector<Type> &Args, const Attrs &A) {
  constexpr std::string_view Op = "regex_full_match";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireString(Op, X, 0);
  return std::make_shared<TensorTypeNode>(X.shape, DType::Bool);
}

Type stringConcatRel(const std::vector<Type> &Args, const Attrs &A) {
  constexpr std::string_view Op = "string_concat";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 2);
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  const TensorTypeNode &Y = tensorArg(Op, Args, 1);
  requireString(Op, X, 0);
  requireString(Op, Y, 1);
  return std::make_shared<TensorTypeNode>(broadcastArgs(Op, {&X, &Y}),
                                          DType::String);
}

/// (substrings: x's shape + [longest split], counts: int64 of x's shape).
Type stringSplitRel(const std::vector<Type> &Args, const Attrs &A) {
  constexpr std::string_view Op = "string_split";
  validateOpAttrs(Op, A);
  checkArity(Op, Args, 1);
  if (optInt(A, "maxsplit") && *optInt(A, "maxsplit") < 0)
    fail("{}: maxsplit must be >= 0, got {}", Op, *optInt(A, "maxsplit"));
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(Op, Args, 0);
  requireString(Op, X, 0);
  if (!X.shape)
    return tupleType({tensorTypeUnknownRank(DType::String),
                      tensorTypeUnknownRank(DType::Int64)});
  std::vector<Dim> Parts = *X.shape;
  Parts.push_back(Dim::any());
  return tupleType(
      {tensorType(Parts, DType::String), tensorType(*X.shape, DType::Int64)});
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "string_normalizer",
    "Removes stop words from strings [C] or [1, C] and changes their case "
    "(ONNX StringNormalizer); all removed gives one empty string.",
    1, stringNormalizerRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "regex_full_match",
    "True where a string matches the pattern as a whole (ECMAScript "
    "syntax, which agrees with RE2 on the common constructs).",
    1, regexFullMatchRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{"string_concat",
                         "Elementwise concatenation of two string tensors, "
                         "with broadcasting.",
                         2, stringConcatRel, FusionPattern::Opaque});
RIVET_REGISTER_OP(OpInfo{
    "string_split",
    "Splits each string at a delimiter (or at runs of whitespace), at most "
    "maxsplit times; returns (parts padded with empty strings, counts).",
    1, stringSplitRel, FusionPattern::Opaque});

} // namespace rivet::ir
