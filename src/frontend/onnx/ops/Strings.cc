//===- Strings.cc - ONNX StringNormalizer and the opset 20 string ops -----===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

std::vector<Expr> convertStringNormalizer(NodeContext &C) {
  Attrs A;
  A.set("case_change_action", C.attrString("case_change_action", "NONE"));
  A.set("is_case_sensitive", C.attrInt("is_case_sensitive", 0));
  if (C.hasAttr("stopwords"))
    A.set("stopwords", C.attrStrings("stopwords"));
  if (C.hasAttr("locale"))
    A.set("locale", C.attrString("locale"));
  return {ir::callOp("string_normalizer", {C.input(0)}, A)};
}
RIVET_REGISTER_ONNX_OP("StringNormalizer", 10, convertStringNormalizer);

std::vector<Expr> convertRegexFullMatch(NodeContext &C) {
  return {ir::callOp("regex_full_match", {C.input(0)},
                     Attrs{{"pattern", C.attrString("pattern")}})};
}
RIVET_REGISTER_ONNX_OP("RegexFullMatch", 20, convertRegexFullMatch);

std::vector<Expr> convertStringConcat(NodeContext &C) {
  return {ir::callOp("string_concat", {C.input(0), C.input(1)})};
}
RIVET_REGISTER_ONNX_OP("StringConcat", 20, convertStringConcat);

std::vector<Expr> convertStringSplit(NodeContext &C) {
  Attrs A;
  if (C.hasAttr("delimiter"))
    A.set("delimiter", C.attrString("delimiter"));
  if (C.hasAttr("maxsplit"))
    A.set("maxsplit", C.attrInt("maxsplit"));
  return C.bindTuple(ir::callOp("string_split", {C.input(0)}, A), 2);
}
RIVET_REGISTER_ONNX_OP("StringSplit", 20, convertStringSplit);

} // namespace
} // namespace rivet::frontend
