//===- attention_test.cc - The attention kernel and its type relation -----===//
//
// The fused kernel against the definition computed naively in double (the
// steps of ONNX's reference: scores, bias, softcap, softmax, weighted sum),
// over grouped kv heads, causal masks with a KV cache, short masks, padding
// lengths, several key blocks and tasks; and the relation's errors.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "kernels/Threading.h"
#include "support/RelationTest.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace rivet;
using rivet::test::expectError;
using rivet::test::i64;
using rivet::test::randomF32;
using rivet::test::runAll;
using rivet::test::SettingScope;
using rivet::test::shapeOf;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// One call: inputs and the attributes that matter to the naive version.
struct Call {
  Tensor q, k, v;
  std::optional<Tensor> mask, pastKey, pastValue, nonpad;
  bool threeD = false;
  int64_t qHeads = 0, kvHeads = 0; // for 3-D
  std::optional<double> scale;
  bool causal = false, withPresent = false, withQk = false;
  double softcap = 0;
  int64_t mode = 0;

  std::vector<Tensor> inputs() const {
    std::vector<Tensor> In = {q, k, v};
    for (const std::optional<Tensor> *T :
         {&mask, &pastKey, &pastValue, &nonpad})
      if (*T)
        In.push_back(**T);
    return In;
  }
  Attrs attrs() const {
    Attrs A;
    if (threeD) {
      A.set("q_num_heads", qHeads);
      A.set("kv_num_heads", kvHeads);
    }
    if (scale)
      A.set("scale", *scale);
    A.set("is_causal", int64_t(causal));
    A.set("softcap", softcap);
    A.set("qk_matmul_output_mode", mode);
    A.set("has_attn_mask", int64_t(mask.has_value()));
    A.set("has_past", int64_t(pastKey.has_value()));
    A.set("has_nonpad_kv_seqlen", int64_t(nonpad.has_value()));
    A.set("with_present", int64_t(withPresent));
    A.set("with_qk", int64_t(withQk));
    return A;
  }
};

/// Y (and present_key, present_value, qk) by the definition, in double.
std::vector<std::vector<double>> naive(const Call &C) {
  std::vector<double> Q = C.q.toDoubleVector(), K = C.k.toDoubleVector(),
                      V = C.v.toDoubleVector();
  int64_t B = C.q.shape()[0], Hq, Hkv, Sq, Skv, D, Dv;
  if (C.threeD) {
    Hq = C.qHeads;
    Hkv = C.kvHeads;
    Sq = C.q.shape()[1];
    Skv = C.k.shape()[1];
    D = C.q.shape()[2] / Hq;
    Dv = C.v.shape()[2] / Hkv;
  } else {
    Hq = C.q.shape()[1];
    Hkv = C.k.shape()[1];
    Sq = C.q.shape()[2];
    Skv = C.k.shape()[2];
    D = C.q.shape()[3];
    Dv = C.v.shape()[3];
  }
  int64_t P = C.pastKey ? C.pastKey->shape()[2] : 0, T = P + Skv;
  // Element (b, h, s, d) of a [B, H, S, X] or [B, S, H * X] tensor.
  auto at = [&](const std::vector<double> &X, int64_t H, int64_t S, int64_t W,
                int64_t b, int64_t h, int64_t s, int64_t d) {
    return C.threeD ? X[(size_t)(((b * S + s) * H + h) * W + d)]
                    : X[(size_t)(((b * H + h) * S + s) * W + d)];
  };
  std::vector<double> PK, PV;
  if (C.pastKey) {
    PK = C.pastKey->toDoubleVector();
    PV = C.pastValue->toDoubleVector();
  }
  auto key = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    return j < P ? PK[(size_t)(((b * Hkv + h) * P + j) * D + d)]
                 : at(K, Hkv, Skv, D, b, h, j - P, d);
  };
  auto value = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    return j < P ? PV[(size_t)(((b * Hkv + h) * P + j) * Dv + d)]
                 : at(V, Hkv, Skv, Dv, b, h, j - P, d);
  };
  double Scale = C.scale ? *C.scale : 1 / std::sqrt((double)D);
  std::vector<double> Mask;
  Shape MS;
  if (C.mask) {
    Mask = C.mask->toDoubleVector();
    MS = C.mask->shape();
  }
  auto bias = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    double R = 0;
    if (C.mask) {
      if (j >= MS.back())
        return kNegInf;
      int64_t Coords[4] = {b, h, i, j}, Off = 0, Stride = 1;
      for (size_t A = MS.size(); A-- > 0;) {
        int64_t E = MS[A], X = Coords[4 - MS.size() + A];
        Off += (E == 1 ? 0 : X) * Stride;
        Stride *= E;
      }
      double M = Mask[(size_t)Off];
      R = C.mask->dtype() == DType::Bool ? (M != 0 ? 0 : kNegInf) : M;
    }
    if (C.causal && j > i + P)
      R = kNegInf;
    if (C.nonpad && j >= C.nonpad->elementAsInt(b))
      R = kNegInf;
    return R;
  };

  std::vector<double> Y((size_t)(B * Hq * Sq * Dv)),
      Qk((size_t)(B * Hq * Sq * T));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        int64_t hk = h / (Hq / Hkv);
        std::vector<double> S((size_t)T), Rec((size_t)T);
        for (int64_t j = 0; j < T; ++j) {
          double Dot = 0;
          for (int64_t d = 0; d < D; ++d)
            Dot += at(Q, Hq, Sq, D, b, h, i, d) * key(b, hk, j, d);
          S[(size_t)j] = Dot * Scale;
          if (C.mode == 0)
            Rec[(size_t)j] = S[(size_t)j];
          S[(size_t)j] += bias(b, h, i, j);
          if (C.mode == 1)
            Rec[(size_t)j] = S[(size_t)j];
          if (C.softcap > 0)
            S[(size_t)j] = C.softcap * std::tanh(S[(size_t)j] / C.softcap);
          if (C.mode == 2)
            Rec[(size_t)j] = S[(size_t)j];
        }
        double M = kNegInf, Sum = 0;
        for (double X : S)
          M = std::max(M, X);
        for (double &X : S) {
          X = std::exp(X - M); // NaN for a row of -inf, as numpy gives
          Sum += X;
        }
        for (int64_t j = 0; j < T; ++j) {
          S[(size_t)j] /= Sum;
          if (C.mode == 3)
            Rec[(size_t)j] = S[(size_t)j];
        }
        for (int64_t d = 0; d < Dv; ++d) {
          double Acc = 0;
          for (int64_t j = 0; j < T; ++j)
            Acc += S[(size_t)j] * value(b, hk, j, d);
          size_t O = C.threeD ? (size_t)(((b * Sq + i) * Hq + h) * Dv + d)
                              : (size_t)(((b * Hq + h) * Sq + i) * Dv + d);
          Y[O] = Acc;
        }
        std::copy(Rec.begin(), Rec.end(),
                  Qk.begin() + ((b * Hq + h) * Sq + i) * T);
      }
  std::vector<std::vector<double>> Out = {Y};
  if (C.withPresent) {
    std::vector<double> PresentK, PresentV;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < Hkv; ++h)
        for (int64_t j = 0; j < T; ++j) {
          for (int64_t d = 0; d < D; ++d)
            PresentK.push_back(key(b, h, j, d));
          for (int64_t d = 0; d < Dv; ++d)
            PresentV.push_back(value(b, h, j, d));
        }
    Out.push_back(PresentK);
    Out.push_back(PresentV);
  }
  if (C.withQk)
    Out.push_back(Qk);
  return Out;
}

/// Runs the kernel and compares every output with the naive version.
void expectMatchesNaive(const Call &C, double Tol = 1e-5) {
  std::vector<Tensor> Got = runAll("attention", C.inputs(), C.attrs());
  std::vector<std::vector<double>> Want = naive(C);
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t O = 0; O < Got.size(); ++O) {
    ASSERT_EQ((size_t)Got[O].numel(), Want[O].size()) << "output " << O;
    std::vector<double> G = Got[O].toDoubleVector();
    for (size_t I = 0; I < G.size(); ++I) {
      double W = Want[O][I];
      if (std::isnan(W) || std::isinf(W)) {
        EXPECT_TRUE(std::isnan(W) ? std::isnan(G[I]) : G[I] == W)
            << "output " << O << " element " << I << ": " << G[I] << " vs "
            << W;
        continue;
      }
      ASSERT_NEAR(G[I], W, Tol * (1 + std::fabs(W)))
          << "output " << O << " element " << I;
    }
  }
}

Tensor randomOf(std::mt19937 &G, const Shape &S, DType T = DType::Float32) {
  Tensor F = randomF32(G, S);
  return T == DType::Float32 ? F : F.cast(T);
}

} // namespace

TEST(Attention, GqaCausalMaskAndKvCacheMatchNaive) {
  std::mt19937 G(7);
  Call C;
  // 6 q heads over 2 kv heads; 70 cached keys + 3 new: two key blocks.
  C.q = randomOf(G, {2, 6, 5, 8});
  C.k = randomOf(G, {2, 2, 3, 8});
  C.v = randomOf(G, {2, 2, 3, 12});
  C.pastKey = randomOf(G, {2, 2, 70, 8});
  C.pastValue = randomOf(G, {2, 2, 70, 12});
  // Broadcast over heads; 4 columns short of the 73 keys (those masked).
  C.mask = randomOf(G, {2, 1, 5, 69});
  C.causal = true;
  C.withPresent = true;
  C.withQk = true;
  C.mode = 1;
  expectMatchesNaive(C);
  for (int64_t Mode : {0, 2, 3}) {
    C.mode = Mode;
    C.softcap = Mode == 2 ? 1.5 : 0; // softcap also turns -inf into -1.5
    expectMatchesNaive(C);
  }
}

TEST(Attention, ThreeDBoolMaskPaddingAndManyTasks) {
  std::mt19937 G(11);
  Call C;
  // 3-D [B, S, heads * head size], MQA (one kv head), 40 queries: several
  // tasks per kv head; 150 keys: three blocks, the last partial.
  C.threeD = true;
  C.qHeads = 4;
  C.kvHeads = 1;
  C.q = randomOf(G, {2, 40, 4 * 16});
  C.k = randomOf(G, {2, 150, 16});
  C.v = randomOf(G, {2, 150, 20});
  Tensor Mask = Tensor::empty({40, 150}, DType::Bool);
  for (int64_t I = 0; I < Mask.numel(); ++I)
    Mask.data<bool>()[I] = (I * 7919) % 5 != 0;
  C.mask = Mask;
  C.nonpad = i64({150, 97}, {2});
  C.scale = 0.3;
  C.withQk = true;
  C.mode = 3;
  expectMatchesNaive(C);
  C.withQk = false;
  C.causal = true;
  C.withPresent = true; // present without a past: k and v as [B, H, S, D]
  for (int Threads : {1, 3}) {
    SettingScope<int> T(numThreads, setNumThreads, Threads);
    expectMatchesNaive(C);
  }
}

/// [s, b, hidden] (seq_first, torch's MultiheadAttention layout) gives the
/// [b, s, hidden] call's result with the first two axes swapped: grouped
/// heads, a mask over (batch, heads, queries, keys), causal rows, key
/// blocks partly filled, at 1 and 3 threads.
TEST(Attention, SequenceFirstIsTheTransposedCall) {
  std::mt19937 G(23);
  const int64_t S = 37, T = 70, B = 3;
  Tensor Q = randomOf(G, {S, B, 4 * 8}), K = randomOf(G, {T, B, 2 * 8}),
         V = randomOf(G, {T, B, 2 * 12});
  Tensor Mask = randomOf(G, {B, 1, S, T});
  auto Swap = [](const Tensor &X) {
    return test::run("transpose", {X},
                     Attrs{{"axes", std::vector<int64_t>{1, 0, 2}}});
  };
  for (bool Causal : {false, true})
    for (int Threads : {1, 3}) {
      SettingScope<int> Th(numThreads, setNumThreads, Threads);
      Attrs A = {{"q_num_heads", int64_t(4)},
                 {"kv_num_heads", int64_t(2)},
                 {"is_causal", int64_t(Causal)},
                 {"has_attn_mask", int64_t(1)}};
      Tensor Want =
          Swap(test::run("attention", {Swap(Q), Swap(K), Swap(V), Mask}, A));
      A.set("seq_first", int64_t(1));
      Tensor Got = test::run("attention", {Q, K, V, Mask}, A);
      ASSERT_EQ(Got.shape(), (Shape{S, B, 4 * 12}));
      EXPECT_TRUE(allClose(Got, Want, 1e-6, 1e-6))
          << (Causal ? "causal, " : "") << Threads << " threads";
    }
  // Without a KV cache or scores only.
  Attrs A = {{"q_num_heads", int64_t(4)},
             {"kv_num_heads", int64_t(2)},
             {"seq_first", int64_t(1)},
             {"with_qk", int64_t(1)}};
  EXPECT_THROW(test::runAll("attention", {Q, K, V}, A), Error);
}

TEST(Attention, DecodingStepsMatchNaive) {
  std::mt19937 G(13);
  // One query per head and two q heads per kv head: keys read in place by
  // dot products; 100 cached keys, so value blocks are read in place
  // (keys 0-63) or packed (64-127 mix cached and new keys).
  for (bool ThreeD : {false, true}) {
    Call C;
    C.threeD = ThreeD;
    C.qHeads = 4;
    C.kvHeads = 2;
    C.q = ThreeD ? randomOf(G, {3, 1, 4 * 16}) : randomOf(G, {3, 4, 1, 16});
    C.k = ThreeD ? randomOf(G, {3, 2, 2 * 16}) : randomOf(G, {3, 2, 2, 16});
    C.v = ThreeD ? randomOf(G, {3, 2, 2 * 16}) : randomOf(G, {3, 2, 2, 16});
    C.pastKey = randomOf(G, {3, 2, 100, 16});
    C.pastValue = randomOf(G, {3, 2, 100, 16});
    C.mask = randomOf(G, {3, 1, 1, 102});
    C.causal = true;
    C.withPresent = true;
    for (int Threads : {1, 4}) {
      SettingScope<int> T(numThreads, setNumThreads, Threads);
      expectMatchesNaive(C);
    }
    // Padding: keys no query sees are not read, but still in present.
    C.nonpad = i64({40, 102, 7}, {3});
    expectMatchesNaive(C);
  }
}

TEST(Attention, EveryRowTileMatchesNaive) {
  std::mt19937 G(29);
  // A task's rows run in tiles of 12 (AVX-512) or 6 rows, then 6, then
  // one at a time: these query counts leave every kind of remainder, with
  // head sizes of one and two 64-byte column pairs and a partial one, over
  // one key block and two, key counts off the 8-key tiles the keys are
  // transposed in (a last partial tile repeats its last key). (ctest runs
  // this again as an AVX2 and a
  // baseline CPU: RIVET_MAX_CPU_ISA.)
  for (int64_t Sq : {1, 6, 7, 13, 18, 31, 40})
    for (int64_t Head : {16, 32, 20})
      for (int64_t Keys : {Sq, int64_t(150)})
        for (bool Causal : {false, true}) {
          Call C;
          C.q = randomOf(G, {2, 1, Sq, Head});
          C.k = randomOf(G, {2, 1, Keys, Head});
          C.v = randomOf(G, {2, 1, Keys, Head});
          C.causal = Causal;
          SCOPED_TRACE(fmt::format("Sq {}, head {}, keys {}, causal {}", Sq,
                                   Head, Keys, Causal));
          expectMatchesNaive(C);
        }
}

TEST(Attention, RowsInLanesMatchNaive) {
  // Heads of 8 and 16 without a mask, softcap, scores or present outputs
  // take the rows-in-lanes path on AVX-512 (16 query rows a vector): rows
  // off multiples of 16, grouped kv heads, one key block and three, causal
  // rows (each row its own key count), a KV cache without present outputs,
  // padding lengths with a batch of no keys (NaN), and large scores (the
  // online rescale across blocks). Elsewhere the same calls check the
  // other path.
  std::mt19937 G(41);
  for (int64_t Head : {8, 16})
    for (int64_t Sq : {1, 7, 16, 33})
      for (int64_t Keys : {Sq, int64_t(300)})
        for (bool Causal : {false, true}) {
          Call C;
          C.q = randomOf(G, {2, 4, Sq, Head});
          C.k = randomOf(G, {2, 2, Keys, Head});
          C.v = randomOf(G, {2, 2, Keys, Head});
          C.causal = Causal;
          C.scale = 3.0; // scores of several units: the rescale matters
          SCOPED_TRACE(fmt::format("head {}, Sq {}, keys {}, causal {}", Head,
                                   Sq, Keys, Causal));
          expectMatchesNaive(C);
        }
  Call C;
  C.q = randomOf(G, {2, 2, 5, 16});
  C.k = randomOf(G, {2, 2, 4, 16});
  C.v = randomOf(G, {2, 2, 4, 16});
  C.pastKey = randomOf(G, {2, 2, 140, 16});
  C.pastValue = randomOf(G, {2, 2, 140, 16});
  C.causal = true;
  expectMatchesNaive(C);
  Call P;
  P.q = randomOf(G, {3, 2, 20, 8});
  P.k = randomOf(G, {3, 2, 20, 8});
  P.v = randomOf(G, {3, 2, 20, 8});
  P.nonpad = i64({0, 13, 20}, {3});
  expectMatchesNaive(P);
}

TEST(Attention, FullyMaskedRowIsNaN) {
  std::mt19937 G(3);
  Call C;
  C.q = randomOf(G, {2, 1, 2, 4});
  C.k = randomOf(G, {2, 1, 3, 4});
  C.v = randomOf(G, {2, 1, 3, 4});
  C.nonpad = i64({0, 2}, {2}); // batch 0 has no keys
  expectMatchesNaive(C);
  Tensor Y = runAll("attention", C.inputs(), C.attrs())[0];
  EXPECT_TRUE(std::isnan(Y.elementAsDouble(0)));
  EXPECT_FALSE(std::isnan(Y.elementAsDouble(Y.numel() - 1)));
}

TEST(Attention, HalfBFloatAndDoubleInputs) {
  std::mt19937 G(5);
  for (DType T : {DType::Float16, DType::BFloat16, DType::Float64}) {
    Call C;
    C.q = randomOf(G, {1, 4, 7, 8}, T);
    C.k = randomOf(G, {1, 2, 9, 8}, T);
    C.v = randomOf(G, {1, 2, 9, 8}, T);
    C.mask = randomOf(G, {7, 9}, T);
    C.causal = true;
    std::vector<Tensor> Out = runAll("attention", C.inputs(), C.attrs());
    EXPECT_EQ(Out[0].dtype(), T);
    // The naive version reads the rounded inputs; the kernel rounds Y once.
    expectMatchesNaive(C, T == DType::Float64   ? 1e-12
                          : T == DType::Float16 ? 2e-3
                                                : 1e-2);
  }
}

TEST(Attention, ShapeFunctionAndKernelErrors) {
  std::mt19937 G(1);
  Call C;
  C.q = randomOf(G, {1, 3, 2, 4});
  C.k = randomOf(G, {1, 2, 2, 4});
  C.v = randomOf(G, {1, 2, 2, 4});
  expectError([&] { shapeOf("attention", C.inputs(), C.attrs()); },
              "attention: the 3 q heads are not a multiple of the 2 kv heads");
  C.q = randomOf(G, {1, 2, 2, 5});
  expectError([&] { shapeOf("attention", C.inputs(), C.attrs()); },
              "differ in head size");
  C.q = randomOf(G, {1, 2, 2, 4});
  C.mask = randomOf(G, {2, 3});
  expectError([&] { shapeOf("attention", C.inputs(), C.attrs()); },
              "attn_mask (2, 3) does not broadcast");
  Attrs A = C.attrs();
  A.set("has_past", int64_t(1));
  expectError([&] { shapeOf("attention", C.inputs(), A); },
              "expected 6 inputs");
  std::vector<TensorMeta> M =
      shapeOf("attention",
              {Tensor::meta({1, 4, 16}, DType::Float32),
               Tensor::meta({1, 6, 8}, DType::Float32),
               Tensor::meta({1, 6, 12}, DType::Float32)},
              [] {
                Attrs A;
                A.set("q_num_heads", int64_t(4));
                A.set("kv_num_heads", int64_t(2));
                A.set("with_present", int64_t(1));
                return A;
              }());
  ASSERT_EQ(M.size(), 3u);
  EXPECT_EQ(M[0].shape, (Shape{1, 4, 24}));
  EXPECT_EQ(M[1].shape, (Shape{1, 2, 6, 4}));
  EXPECT_EQ(M[2].shape, (Shape{1, 2, 6, 6}));
}

namespace {
using namespace rivet::reltest;

Attrs heads(int64_t Q, int64_t Kv) {
  Attrs A;
  A.set("q_num_heads", Q);
  A.set("kv_num_heads", Kv);
  return A;
}
} // namespace

TEST(AttentionRelation, Shapes) {
  EXPECT_EQ(rel("attention", {f32({c(2), c(8), s("n"), c(64)}),
                              f32({c(2), c(2), s("m"), c(64)}),
                              f32({c(2), c(2), q(), c(32)})}),
            "Tensor[(2, 8, n, 32), float32]");
  Attrs A = heads(8, 2);
  A.set("has_past", int64_t(1));
  A.set("has_attn_mask", int64_t(1));
  A.set("with_present", int64_t(1));
  A.set("with_qk", int64_t(1));
  EXPECT_EQ(
      rel("attention",
          {f16({c(1), c(3), c(512)}), f16({c(1), c(3), c(128)}),
           f16({c(1), c(3), c(128)}), b8({c(3), c(10)}),
           f16({c(1), c(2), c(7), c(64)}), f16({c(1), c(2), c(7), c(64)})},
          A),
      "(Tensor[(1, 3, 512), float16], Tensor[(1, 2, 10, 64), float16], "
      "Tensor[(1, 2, 10, 64), float16], Tensor[(1, 8, 3, 10), "
      "float16])");
  EXPECT_EQ(rel("attention", {ir::incompleteType(), f32({c(1)}), f32({c(1)})}),
            "null");
}

TEST(AttentionRelation, SequenceFirst) {
  Attrs A = heads(4, 2);
  A.set("seq_first", int64_t(1));
  EXPECT_EQ(rel("attention",
                {f32({s("s"), c(3), c(32)}), f32({s("t"), c(3), c(16)}),
                 f32({s("t"), c(3), c(24)})},
                A),
            "Tensor[(s, 3, 48), float32]");
  EXPECT_REL_ERROR(
      relError("attention",
               {f32({c(2), c(3), c(4), c(8)}), f32({c(2), c(3), c(4), c(8)}),
                f32({c(2), c(3), c(4), c(8)})},
               A),
      "seq_first takes 3-D");
  EXPECT_REL_ERROR(relError("attention",
                            {f32({c(5), c(3), c(32)}), f32({c(6), c(2), c(16)}),
                             f32({c(6), c(3), c(24)})},
                            A),
                   "batch size");
  A.set("with_present", int64_t(1));
  EXPECT_REL_ERROR(relError("attention",
                            {f32({c(5), c(3), c(32)}), f32({c(6), c(3), c(16)}),
                             f32({c(6), c(3), c(24)})},
                            A),
                   "without a KV cache");
}

TEST(AttentionRelation, Errors) {
  Type Q4 = f32({c(1), c(6), c(4), c(8)});
  Type K4 = f32({c(1), c(4), c(5), c(8)});
  EXPECT_REL_ERROR(relError("attention", {Q4, K4, K4}),
                   "attention: the 6 q heads are not a multiple of the 4 kv "
                   "heads");
  EXPECT_REL_ERROR(
      relError("attention", {Q4, f32({c(1), c(2), c(5), c(4)}),
                             f32({c(1), c(2), c(5), c(8)})}),
      "attention: k Tensor[(1, 2, 5, 4), float32] has head size 4, "
      "expected 8");
  EXPECT_REL_ERROR(
      relError("attention", {f32({c(1), c(4), c(24)}), f32({c(1), c(5), c(24)}),
                             f32({c(1), c(5), c(24)})}),
      "3-D q, k and v need attributes q_num_heads and "
      "kv_num_heads");
  EXPECT_REL_ERROR(relError("attention",
                            {f32({c(1), c(4), c(24)}), f32({c(1), c(5), c(24)}),
                             f32({c(1), c(5), c(24)})},
                            heads(5, 1)),
                   "q Tensor[(1, 4, 24), float32] has hidden size 24, not a "
                   "multiple of the 5 heads");
  EXPECT_REL_ERROR(
      relError("attention", {f32({c(1), c(4), c(24)}), K4, K4}, heads(3, 3)),
      "q, k and v must have the same rank");
  EXPECT_REL_ERROR(relError("attention", {Q4, f32({c(2), c(2), c(5), c(8)}),
                                          f32({c(2), c(2), c(5), c(8)})}),
                   "has batch size 2, expected 1");
  Attrs Mask;
  Mask.set("has_attn_mask", int64_t(1));
  Type K2 = f32({c(1), c(2), c(5), c(8)});
  EXPECT_REL_ERROR(
      relError("attention", {Q4, K2, K2, f32({c(3), c(5)})}, Mask),
      "attn_mask Tensor[(3, 5), float32] does not broadcast to (batch, q "
      "heads, q seq, keys) = (1, 6, 4, 5)");
  EXPECT_REL_ERROR(relError("attention", {Q4, K2, K2, f32({c(4), c(6)})}, Mask),
                   "has 6 columns, more than the 5 keys");
  EXPECT_REL_ERROR(relError("attention", {Q4, K2, K2}, Mask),
                   "expects 4 arguments (q, k, v, attn_mask)");
  EXPECT_REL_ERROR(
      relError("attention", {Q4, K2, i32({c(1), c(2), c(5), c(8)})}),
      "attention: v must be bfloat16, float16, float32 or float64");
  Attrs BadMode;
  BadMode.set("qk_matmul_output_mode", int64_t(4));
  EXPECT_REL_ERROR(relError("attention", {Q4, K2, K2}, BadMode),
                   "'qk_matmul_output_mode' must be 0, 1, 2 or 3");
}
