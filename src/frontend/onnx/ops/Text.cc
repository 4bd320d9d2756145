//===- Text.cc - ONNX TfIdfVectorizer -------------------------------------===//
//
// TfIdfVectorizer (opset 9, unchanged since) maps 1:1 onto tfidf_vectorizer.
// Rivet has no string dtype, so a pool of strings is refused here.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Converter.h"

namespace rivet::frontend {
namespace {

using ir::Expr;

std::vector<Expr> convertTfIdfVectorizer(NodeContext &C) {
  if (C.hasAttr("pool_strings"))
    C.error("string n-gram pools (pool_strings) are not supported: Rivet has "
            "no string dtype");
  if (!C.hasAttr("pool_int64s"))
    C.error("attribute 'pool_int64s' is required");
  Attrs A;
  A.set("mode", C.attrString("mode"));
  A.set("min_gram_length", C.attrInt("min_gram_length"));
  A.set("max_gram_length", C.attrInt("max_gram_length"));
  A.set("max_skip_count", C.attrInt("max_skip_count"));
  A.set("ngram_counts", C.attrInts("ngram_counts"));
  A.set("ngram_indexes", C.attrInts("ngram_indexes"));
  A.set("pool_int64s", C.attrInts("pool_int64s"));
  std::vector<double> Weights = C.attrFloats("weights", {});
  if (!Weights.empty())
    A.set("weights", Weights);
  return {ir::callOp("tfidf_vectorizer", {C.input(0)}, A)};
}
RIVET_REGISTER_ONNX_OP("TfIdfVectorizer", 9, convertTfIdfVectorizer);

} // namespace
} // namespace rivet::frontend
