//===- Text.cc - tfidf_vectorizer -----------------------------------------===//
//
// Type relation of ONNX TfIdfVectorizer: integer tokens [C] or [N, C] become
// float32 n-gram counts [K] or [N, K] with K = max(ngram_indexes) + 1. The
// attribute checks mirror the kernel's, so a bad pool is reported at type
// inference already.
//
//===----------------------------------------------------------------------===//
#include "ir/ops/RelationUtil.h"

namespace rivet::ir {
namespace {

constexpr std::string_view kOp = "tfidf_vectorizer";

/// Checks the attributes; returns the number of output columns.
int64_t checkTfIdfAttrs(const Attrs &A) {
  std::string Mode = *optString(A, "mode");
  if (Mode != "TF" && Mode != "IDF" && Mode != "TFIDF")
    fail("{}: mode must be 'TF', 'IDF' or 'TFIDF', got '{}'", kOp, Mode);
  int64_t MinGram = *optInt(A, "min_gram_length");
  int64_t MaxGram = *optInt(A, "max_gram_length");
  if (MinGram < 1 || MaxGram < MinGram)
    fail("{}: expected 1 <= min_gram_length <= max_gram_length, got {} and {}",
         kOp, MinGram, MaxGram);
  if (*optInt(A, "max_skip_count") < 0)
    fail("{}: max_skip_count must be non-negative, got {}", kOp,
         *optInt(A, "max_skip_count"));
  std::vector<int64_t> Indexes = *optInts(A, "ngram_indexes");
  if (Indexes.empty())
    fail("{}: ngram_indexes must not be empty", kOp);
  int64_t Columns = 0;
  for (int64_t I : Indexes) {
    if (I < 0)
      fail("{}: ngram_indexes must be non-negative, got {}", kOp, I);
    Columns = std::max(Columns, I + 1);
  }
  // The pool: level L holds (L+1)-grams from ngram_counts[L] on.
  std::vector<int64_t> Counts = *optInts(A, "ngram_counts");
  int64_t PoolSize = (int64_t)optInts(A, "pool_int64s")->size();
  int64_t Grams = 0;
  for (size_t L = 0; L < Counts.size(); ++L) {
    int64_t N = (int64_t)L + 1;
    int64_t Begin = Counts[L];
    int64_t End = L + 1 < Counts.size() ? Counts[L + 1] : PoolSize;
    if (Begin < 0 || End < Begin || End > PoolSize)
      fail("{}: ngram_counts must be non-decreasing offsets into the {} pool "
           "values, got {} at position {}",
           kOp, PoolSize, Begin, L);
    if ((End - Begin) % N != 0)
      fail("{}: the {} pool values of {}-grams are not a whole number of "
           "{}-grams",
           kOp, End - Begin, N, N);
    Grams += (End - Begin) / N;
  }
  if (Grams != (int64_t)Indexes.size())
    fail("{}: the pool holds {} n-grams but ngram_indexes has {} values", kOp,
         Grams, Indexes.size());
  if (A.has("weights")) {
    size_t W = A.getFloats("weights").size();
    if (W != 0 && W != Indexes.size())
      fail("{}: weights has {} values but ngram_indexes has {}", kOp, W,
           Indexes.size());
    if (W != 0 && (int64_t)W < Columns)
      fail("{}: weights has {} values but the output has {} columns", kOp, W,
           Columns);
  }
  return Columns;
}

Type tfidfRel(const std::vector<Type> &Args, const Attrs &A) {
  validateOpAttrs(kOp, A);
  checkArity(kOp, Args, 1);
  Dim Columns = Dim::constant(checkTfIdfAttrs(A));
  if (anyUndecided(Args))
    return nullptr;
  const TensorTypeNode &X = tensorArg(kOp, Args, 0);
  if (X.dtype != DType::Int32 && X.dtype != DType::Int64)
    failArg(0,
            "{}: the tokens must be int32 or int64 (string tokens are not "
            "supported by Rivet), got {}",
            kOp, typeStr(X));
  if (!X.shape)
    return tensorTypeUnknownRank(DType::Float32);
  if (X.shape->size() > 2)
    failArg(0, "{}: the input must be [C] or [N, C], got {}", kOp, typeStr(X));
  if (X.shape->size() == 2)
    return tensorType({(*X.shape)[0], Columns}, DType::Float32);
  return tensorType({Columns}, DType::Float32);
}

} // namespace

RIVET_REGISTER_OP(OpInfo{
    "tfidf_vectorizer",
    "Counts pool n-grams (with skips) in int token rows [C] or [N, C] into\n"
    "float32 [K] / [N, K]; mode TF, IDF or TFIDF as in ONNX TfIdfVectorizer.",
    1, tfidfRel, FusionPattern::Opaque});

} // namespace rivet::ir
