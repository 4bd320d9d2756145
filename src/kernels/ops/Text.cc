//===- Text.cc - tfidf_vectorizer -----------------------------------------===//
//
// Reference kernel of ONNX TfIdfVectorizer over integer tokens. The pool of
// n-grams (pool_int64s split by ngram_counts into 1-grams, 2-grams, ...) is
// loaded into a trie; each row is scanned once per skip distance, walking the
// trie from every start position, exactly as the ONNX reference does
// (unigrams are counted in the first pass only, since skips do not change
// them). Counts land in column ngram_indexes[id] of a float32 output.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <unordered_map>

namespace rivet::kernels {
namespace {

constexpr const char *kTfidfOp = "tfidf_vectorizer";

enum class TfIdfMode { TF, IDF, TFIDF };

/// One trie node: the n-gram ending here has pool index Id (-1: none).
struct NgramNode {
  int64_t Id = -1;
  std::unordered_map<int64_t, size_t> Next;
};

struct TfIdfPlan {
  TfIdfMode Mode;
  int64_t MinGram, MaxGram, MaxSkip;
  std::vector<int64_t> Indexes; // pool n-gram index -> output column
  std::vector<double> Weights;  // per output column (the ONNX reference)
  int64_t Columns;              // max(ngram_indexes) + 1
  std::vector<NgramNode> Trie;  // node 0 is the root
};

TfIdfMode parseMode(const std::string &M) {
  if (M == "TF")
    return TfIdfMode::TF;
  if (M == "IDF")
    return TfIdfMode::IDF;
  if (M == "TFIDF")
    return TfIdfMode::TFIDF;
  fail("{}: mode must be 'TF', 'IDF' or 'TFIDF', got '{}'", kTfidfOp, M);
}

/// Validates the attributes and loads the n-grams of the requested lengths.
TfIdfPlan planTfIdf(const Attrs &A) {
  TfIdfPlan P;
  P.Mode = parseMode(withOp(kTfidfOp, [&] { return A.getString("mode"); }));
  P.MinGram = attrInt(kTfidfOp, A, "min_gram_length");
  P.MaxGram = attrInt(kTfidfOp, A, "max_gram_length");
  P.MaxSkip = attrInt(kTfidfOp, A, "max_skip_count");
  if (P.MinGram < 1 || P.MaxGram < P.MinGram)
    fail("{}: expected 1 <= min_gram_length <= max_gram_length, got {} and {}",
         kTfidfOp, P.MinGram, P.MaxGram);
  if (P.MaxSkip < 0)
    fail("{}: max_skip_count must be non-negative, got {}", kTfidfOp,
         P.MaxSkip);
  std::vector<int64_t> Counts = attrInts(kTfidfOp, A, "ngram_counts");
  std::vector<int64_t> Pool = attrInts(kTfidfOp, A, "pool_int64s");
  P.Indexes = attrInts(kTfidfOp, A, "ngram_indexes");
  if (P.Indexes.empty())
    fail("{}: ngram_indexes must not be empty", kTfidfOp);
  for (int64_t I : P.Indexes)
    if (I < 0)
      fail("{}: ngram_indexes must be non-negative, got {}", kTfidfOp, I);
  P.Columns = *std::max_element(P.Indexes.begin(), P.Indexes.end()) + 1;
  if (A.has("weights")) {
    P.Weights = withOp(kTfidfOp, [&] { return A.getFloats("weights"); });
    if (!P.Weights.empty() && P.Weights.size() != P.Indexes.size())
      fail("{}: weights has {} values but ngram_indexes has {}", kTfidfOp,
           P.Weights.size(), P.Indexes.size());
    // The reference weights output column c by weights[c].
    if (!P.Weights.empty() && (int64_t)P.Weights.size() < P.Columns)
      fail("{}: weights has {} values but the output has {} columns", kTfidfOp,
           P.Weights.size(), P.Columns);
  }

  int64_t PoolSize = (int64_t)Pool.size();
  int64_t NextId = 0;
  P.Trie.emplace_back();
  for (size_t L = 0; L < Counts.size(); ++L) {
    int64_t N = (int64_t)L + 1; // the n-gram length of this level
    int64_t Begin = Counts[L];
    int64_t End = L + 1 < Counts.size() ? Counts[L + 1] : PoolSize;
    if (Begin < 0 || End < Begin || End > PoolSize)
      fail("{}: ngram_counts must be non-decreasing offsets into the {} pool "
           "values, got {} at position {}",
           kTfidfOp, PoolSize, Begin, L);
    if ((End - Begin) % N != 0)
      fail("{}: the {} pool values of {}-grams are not a whole number of "
           "{}-grams",
           kTfidfOp, End - Begin, N, N);
    int64_t Grams = (End - Begin) / N;
    if (N < P.MinGram || N > P.MaxGram) {
      NextId += Grams; // not counted, but they keep their pool indexes
      continue;
    }
    for (int64_t G = 0; G < Grams; ++G, ++NextId) {
      size_t Node = 0;
      for (int64_t K = 0; K < N; ++K) {
        int64_t Tok = Pool[(size_t)(Begin + G * N + K)];
        auto It = P.Trie[Node].Next.find(Tok);
        if (It == P.Trie[Node].Next.end()) {
          P.Trie.emplace_back();
          It = P.Trie[Node].Next.emplace(Tok, P.Trie.size() - 1).first;
        }
        Node = It->second;
      }
      if (P.Trie[Node].Id >= 0)
        fail("{}: duplicate {}-gram in the pool (n-grams {} and {})", kTfidfOp,
             N, P.Trie[Node].Id, NextId);
      P.Trie[Node].Id = NextId;
    }
  }
  if (NextId != (int64_t)P.Indexes.size())
    fail("{}: the pool holds {} n-grams but ngram_indexes has {} values",
         kTfidfOp, NextId, P.Indexes.size());
  return P;
}

/// Rows and row length of the input: [C] (and a scalar) is one row whose
/// output has no batch dimension; [N, C] is N rows.
Shape outputShape(const TfIdfPlan &P, const Tensor &X) {
  checkDType(kTfidfOp, "x", X.dtype(), DTypeClass::Index);
  if (X.rank() > 2)
    fail("{}: the input must be [C] or [N, C], got {}", kTfidfOp,
         shapeToString(X.shape()));
  if (X.rank() == 2)
    return {X.shape()[0], P.Columns};
  return {P.Columns};
}

/// Adds the n-gram counts of one row (Len tokens) to Freq (one row of the
/// output).
template <typename E>
void countRow(const TfIdfPlan &P, const E *Row, int64_t Len,
              std::vector<int64_t> &Freq) {
  int64_t StartSize = P.MinGram;
  for (int64_t Skip = 1; Skip <= P.MaxSkip + 1; ++Skip) {
    for (int64_t Start = 0; Start < Len; ++Start) {
      // The shortest counted n-gram does not fit any more.
      if (Start + Skip * (StartSize - 1) >= Len)
        break;
      size_t Node = 0;
      int64_t Item = Start;
      for (int64_t Size = 1; Size <= P.MaxGram && Item < Len;
           ++Size, Item += Skip) {
        auto It = P.Trie[Node].Next.find((int64_t)Row[Item]);
        if (It == P.Trie[Node].Next.end())
          break;
        Node = It->second;
        if (Size >= StartSize && P.Trie[Node].Id >= 0)
          ++Freq[(size_t)P.Indexes[(size_t)P.Trie[Node].Id]];
      }
    }
    // Unigrams do not depend on the skip: count them once.
    if (StartSize == 1 && ++StartSize > P.MaxGram)
      break;
  }
}

std::vector<TensorMeta> tfidfShape(const std::vector<Tensor> &In,
                                   const Attrs &A) {
  checkArity(kTfidfOp, In, 1);
  return {{outputShape(planTfIdf(A), In[0]), DType::Float32}};
}

void tfidfKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                 const Attrs &A) {
  checkArity(kTfidfOp, In, 1);
  TfIdfPlan P = planTfIdf(A);
  const Tensor &X = In[0];
  outputShape(P, X); // validates dtype and rank
  int64_t Rows = X.rank() == 2 ? X.shape()[0] : 1;
  int64_t Len = X.rank() == 0 ? 1 : X.shape().back();
  float *Y = Out[0].data<float>();
  std::vector<int64_t> Freq((size_t)P.Columns);
  for (int64_t R = 0; R < Rows; ++R) {
    std::fill(Freq.begin(), Freq.end(), 0);
    if (X.dtype() == DType::Int32)
      countRow(P, X.data<int32_t>() + R * Len, Len, Freq);
    else
      countRow(P, X.data<int64_t>() + R * Len, Len, Freq);
    float *Dst = Y + R * P.Columns;
    bool Weighted = !P.Weights.empty();
    for (int64_t C = 0; C < P.Columns; ++C) {
      int64_t F = Freq[(size_t)C];
      double W = Weighted ? P.Weights[(size_t)C] : 1.0;
      switch (P.Mode) {
      case TfIdfMode::TF: Dst[C] = (float)F; break;
      case TfIdfMode::IDF: Dst[C] = F > 0 ? (float)W : 0.0f; break;
      case TfIdfMode::TFIDF: Dst[C] = (float)((double)F * W); break;
      }
    }
  }
}

} // namespace

RIVET_REGISTER_KERNEL("tfidf_vectorizer", tfidfKernel, tfidfShape, false);

//===----------------------------------------------------------------------===//
// Attribute schemas
//===----------------------------------------------------------------------===//

RIVET_REGISTER_ATTRS(
    "tfidf_vectorizer",
    {{"mode", AttrKind::String, true, "'TF', 'IDF' or 'TFIDF'"},
     {"min_gram_length", AttrKind::Int, true, "shortest counted n-gram"},
     {"max_gram_length", AttrKind::Int, true, "longest counted n-gram"},
     {"max_skip_count", AttrKind::Int, true,
      "most tokens skipped between n-gram items"},
     {"ngram_counts", AttrKind::Ints, true,
      "start of the (i+1)-grams in pool_int64s"},
     {"ngram_indexes", AttrKind::Ints, true,
      "output column of each pool n-gram"},
     {"pool_int64s", AttrKind::Ints, true, "the n-grams, shortest first"},
     {"weights", AttrKind::Floats, false,
      "IDF weight per output column (default 1)"}});

} // namespace rivet::kernels
