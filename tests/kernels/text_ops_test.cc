//===- text_ops_test.cc - tfidf_vectorizer --------------------------------===//
#include "KernelTestUtil.h"

using namespace rivet;
using namespace rivet::test;

namespace {

using Ints = std::vector<int64_t>;

/// Attributes of a tfidf_vectorizer; weights only when non-empty.
Attrs tfidf(std::string Mode, int64_t Min, int64_t Max, int64_t Skip,
            Ints Counts, Ints Indexes, Ints Pool,
            std::vector<double> Weights = {}) {
  Attrs A{{"mode", Mode},           {"min_gram_length", Min},
          {"max_gram_length", Max}, {"max_skip_count", Skip},
          {"ngram_counts", Counts}, {"ngram_indexes", Indexes},
          {"pool_int64s", Pool}};
  if (!Weights.empty())
    A.set("weights", Weights);
  return A;
}

// The pool of the ONNX backend tests: unigrams 2, 3, 5, 4 and bigrams
// (5, 6), (7, 8), (6, 7).
const Ints kPool = {2, 3, 5, 4, 5, 6, 7, 8, 6, 7};
const Ints kIdx = {0, 1, 2, 3, 4, 5, 6};

TEST(TfIdfKernel, BackendTestCases) {
  Tensor X = tensor<int32_t>({1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}, {12});
  // Bigrams without skips: (7,8), (6,7), (5,6) once each.
  expectTensor(
      run("tfidf_vectorizer", {X}, tfidf("TF", 2, 2, 0, {0, 4}, kIdx, kPool)),
      f32({0, 0, 0, 0, 1, 1, 1}, {7}));
  // With up to 5 skips (7, 8) is found at token distances 1, 3 and 6.
  expectTensor(
      run("tfidf_vectorizer", {X}, tfidf("TF", 2, 2, 5, {0, 4}, kIdx, kPool)),
      f32({0, 0, 0, 0, 1, 3, 1}, {7}));
  // Unigrams are counted once, not once per skip distance.
  expectTensor(
      run("tfidf_vectorizer", {X}, tfidf("TF", 1, 2, 5, {0, 4}, kIdx, kPool)),
      f32({0, 3, 1, 0, 1, 3, 1}, {7}));
  // Batched int64 rows.
  Tensor B = i64({1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}, {2, 6});
  expectTensor(
      run("tfidf_vectorizer", {B}, tfidf("TF", 1, 2, 5, {0, 4}, kIdx, kPool)),
      f32({0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1}, {2, 7}));
  // An empty unigram level.
  expectTensor(run("tfidf_vectorizer", {X},
                   tfidf("TF", 2, 2, 0, {0, 0}, {0, 1, 2}, {5, 6, 7, 8, 6, 7})),
               f32({1, 1, 1}, {3}));
}

TEST(TfIdfKernel, SkipDistances) {
  // The ONNX spec's example: with 2 skips, (94, 12) and (17, 28) are bigrams.
  Tensor X = i64({94, 17, 36, 12, 28}, {5});
  Ints Pool = {94, 12, 17, 36, 94, 36, 17, 28};
  Attrs A0 = tfidf("TF", 2, 2, 0, {0, 0}, {0, 1, 2, 3}, Pool);
  expectTensor(run("tfidf_vectorizer", {X}, A0), f32({0, 1, 0, 0}, {4}));
  Attrs A2 = tfidf("TF", 2, 2, 2, {0, 0}, {0, 1, 2, 3}, Pool);
  expectTensor(run("tfidf_vectorizer", {X}, A2), f32({1, 1, 1, 1}, {4}));
  // Trigram (1, 2, 3): contiguous at 5..7 and with one skip at 0, 2, 4.
  Tensor Y = i64({1, 9, 2, 9, 3, 1, 2, 3}, {8});
  expectTensor(run("tfidf_vectorizer", {Y},
                   tfidf("TF", 3, 3, 1, {0, 0, 0}, {0}, {1, 2, 3})),
               f32({2}, {1}));
  expectTensor(run("tfidf_vectorizer", {Y},
                   tfidf("TF", 3, 3, 0, {0, 0, 0}, {0}, {1, 2, 3})),
               f32({1}, {1}));
}

TEST(TfIdfKernel, LevelsOutsideTheRangeKeepTheirIndexes) {
  // Unigram 7 is pool n-gram 0 (column 1) and is not counted; bigram (7, 8)
  // is n-gram 1 (column 0).
  Tensor X = i64({7, 8, 7}, {3});
  expectTensor(run("tfidf_vectorizer", {X},
                   tfidf("TF", 2, 2, 0, {0, 1}, {1, 0}, {7, 7, 8})),
               f32({1, 0}, {2}));
  expectTensor(run("tfidf_vectorizer", {X},
                   tfidf("TF", 1, 1, 0, {0, 1}, {1, 0}, {7, 7, 8})),
               f32({0, 2}, {2}));
}

TEST(TfIdfKernel, IdfAndTfIdfWeights) {
  // Unigrams 1, 2, 3 go to columns 2, 0, 1. Counts per column: [0, 1, 2].
  Tensor X = tensor<int32_t>({1, 1, 3, 4}, {4});
  Ints Pool = {1, 2, 3}, Idx = {2, 0, 1};
  expectTensor(
      run("tfidf_vectorizer", {X}, tfidf("TF", 1, 1, 0, {0}, Idx, Pool)),
      f32({0, 1, 2}, {3}));
  expectTensor(
      run("tfidf_vectorizer", {X}, tfidf("IDF", 1, 1, 0, {0}, Idx, Pool)),
      f32({0, 1, 1}, {3}));
  expectTensor(
      run("tfidf_vectorizer", {X}, tfidf("TFIDF", 1, 1, 0, {0}, Idx, Pool)),
      f32({0, 1, 2}, {3}));
  // Weights apply per output column, as in the ONNX reference.
  std::vector<double> W = {0.5, 2, 4};
  expectTensor(
      run("tfidf_vectorizer", {X}, tfidf("IDF", 1, 1, 0, {0}, Idx, Pool, W)),
      f32({0, 2, 4}, {3}));
  expectTensor(
      run("tfidf_vectorizer", {X}, tfidf("TFIDF", 1, 1, 0, {0}, Idx, Pool, W)),
      f32({0, 2, 8}, {3}));
}

TEST(TfIdfKernel, ShapesAndEmptyInputs) {
  Attrs A = tfidf("TF", 1, 2, 1, {0, 4}, kIdx, kPool);
  std::vector<TensorMeta> M =
      shapeOf("tfidf_vectorizer", {Tensor::zeros({3, 5}, DType::Int64)}, A);
  ASSERT_EQ(M.size(), 1u);
  EXPECT_EQ(M[0].shape, (Shape{3, 7}));
  EXPECT_EQ(M[0].dtype, DType::Float32);
  // No tokens: all zeros.
  expectTensor(run("tfidf_vectorizer", {Tensor::zeros({0}, DType::Int64)}, A),
               f32({0, 0, 0, 0, 0, 0, 0}, {7}));
  expectTensor(
      run("tfidf_vectorizer", {Tensor::zeros({2, 0}, DType::Int32)}, A),
      f32(std::vector<float>(14, 0.0f), {2, 7}));
  // Output columns beyond the pool's indexes stay zero.
  expectTensor(run("tfidf_vectorizer", {i64({5, 5}, {2})},
                   tfidf("TF", 1, 1, 0, {0}, {3}, {5})),
               f32({0, 0, 0, 2}, {4}));
}

TEST(TfIdfKernel, Errors) {
  Tensor X = i64({1, 2}, {2});
  auto Run = [&](const Tensor &In, const Attrs &A) {
    run("tfidf_vectorizer", {In}, A);
  };
  Attrs Good = tfidf("TF", 1, 2, 0, {0, 4}, kIdx, kPool);
  expectError([&] { Run(f32({1, 2}, {2}), Good); }, "int32 or int64");
  expectError(
      [&] {
        Run(Tensor::zeros({1, 2, 2}, DType::Int64), Good);
      },
      "[C] or [N, C]");
  expectError(
      [&] {
        Run(X, tfidf("BM25", 1, 2, 0, {0, 4}, kIdx, kPool));
      },
      "mode must be");
  expectError(
      [&] {
        Run(X, tfidf("TF", 0, 2, 0, {0, 4}, kIdx, kPool));
      },
      "min_gram_length");
  expectError(
      [&] {
        Run(X, tfidf("TF", 2, 1, 0, {0, 4}, kIdx, kPool));
      },
      "min_gram_length");
  expectError(
      [&] {
        Run(X, tfidf("TF", 1, 2, -1, {0, 4}, kIdx, kPool));
      },
      "max_skip_count");
  expectError(
      [&] {
        Run(X, tfidf("TF", 1, 2, 0, {0, 3}, kIdx, kPool));
      },
      "not a whole number of 2-grams");
  expectError(
      [&] {
        Run(X, tfidf("TF", 1, 2, 0, {0, 11}, kIdx, kPool));
      },
      "ngram_counts");
  expectError(
      [&] {
        Run(X, tfidf("TF", 1, 2, 0, {0, 4}, {0, 1}, kPool));
      },
      "holds 7 n-grams but ngram_indexes has 2");
  expectError(
      [&] {
        Run(X, tfidf("TF", 1, 2, 0, {0, 4}, {0, 1, 2, 3, 4, 5, -1}, kPool));
      },
      "non-negative");
  expectError(
      [&] {
        Run(X, tfidf("TF", 1, 1, 0, {0}, {0, 1}, {3, 3}));
      },
      "duplicate 1-gram");
  expectError(
      [&] {
        Run(X, tfidf("IDF", 1, 2, 0, {0, 4}, kIdx, kPool, {1, 2}));
      },
      "weights has 2 values");
  expectError(
      [&] {
        Run(X, Attrs{{"mode", std::string("TF")}});
      },
      "tfidf_vectorizer");
}

} // namespace
