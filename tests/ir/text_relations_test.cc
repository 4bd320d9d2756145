//===- text_relations_test.cc - Relation of tfidf_vectorizer --------------===//

#include "support/RelationTest.h"

using namespace rivet;
using namespace rivet::ir;
using namespace rivet::reltest;

namespace {

using Ints = std::vector<int64_t>;

Attrs tfidf(std::string Mode = "TF", int64_t Min = 1, int64_t Max = 2,
            Ints Counts = {0, 4}, Ints Indexes = {0, 1, 2, 3, 4, 5, 6}) {
  return Attrs{{"mode", Mode},
               {"min_gram_length", Min},
               {"max_gram_length", Max},
               {"max_skip_count", int64_t(2)},
               {"ngram_counts", Counts},
               {"ngram_indexes", Indexes},
               {"pool_int64s", Ints{2, 3, 5, 4, 5, 6, 7, 8, 6, 7}}};
}

std::string rel(std::vector<Type> Args, const Attrs &A) {
  Type T = OpRegistry::global().get("tfidf_vectorizer").relation(Args, A);
  return T ? typeToString(T) : "null";
}

std::string relError(std::vector<Type> Args, const Attrs &A) {
  try {
    rel(std::move(Args), A);
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

TEST(TextRelations, TfIdfShapes) {
  EXPECT_EQ(rel({i64({c(12)})}, tfidf()), "Tensor[(7,), float32]");
  EXPECT_EQ(rel({i32({q()})}, tfidf()), "Tensor[(7,), float32]");
  EXPECT_EQ(rel({i64({s("n"), q()})}, tfidf()), "Tensor[(n, 7), float32]");
  EXPECT_EQ(rel({i32({c(2), c(6)})}, tfidf()), "Tensor[(2, 7), float32]");
  // The width is max(ngram_indexes) + 1, not the number of n-grams.
  Ints Gap = {0, 1, 2, 3, 4, 5, 9};
  EXPECT_EQ(rel({i64({c(3)})}, tfidf("TF", 1, 2, {0, 4}, Gap)),
            "Tensor[(10,), float32]");
  Attrs W = tfidf("TFIDF");
  W.set("weights", std::vector<double>{1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(rel({i64({c(4)})}, W), "Tensor[(7,), float32]");
  EXPECT_EQ(rel({tensorTypeUnknownRank(DType::Int64)}, tfidf()),
            typeToString(tensorTypeUnknownRank(DType::Float32)));
  EXPECT_EQ(rel({nullptr}, tfidf()), "null");
}

TEST(TextRelations, TfIdfErrors) {
  EXPECT_REL_ERROR(relError({f32({c(3)})}, tfidf()), "int32 or int64");
  EXPECT_REL_ERROR(relError({i64({c(1), c(2), c(3)})}, tfidf()),
                   "[C] or [N, C]");
  EXPECT_REL_ERROR(relError({i64({c(3)})}, tfidf("IDFX")), "mode must be");
  EXPECT_REL_ERROR(relError({i64({c(3)})}, tfidf("TF", 3, 2)),
                   "min_gram_length <= max_gram_length");
  EXPECT_REL_ERROR(relError({i64({c(3)})}, tfidf("TF", 1, 2, {0, 5})),
                   "not a whole number of 2-grams");
  EXPECT_REL_ERROR(relError({i64({c(3)})}, tfidf("TF", 1, 2, {0, 4}, {0, 1})),
                   "holds 7 n-grams");
  Attrs W = tfidf();
  W.set("weights", std::vector<double>{1, 2});
  EXPECT_REL_ERROR(relError({i64({c(3)})}, W), "weights has 2 values");
  Attrs NoPool{{"mode", std::string("TF")}};
  EXPECT_REL_ERROR(relError({i64({c(3)})}, NoPool), "is required");
}

} // namespace
