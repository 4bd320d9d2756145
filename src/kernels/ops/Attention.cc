//===- Attention.cc - Scaled dot-product attention kernel -----------------===//
//
// attention (src/ir/ops/Attention.cc) as one fused pass over the keys, as
// flash attention does it: a task takes a block of query rows of one kv
// head (the rows of every q head that shares it) and walks the keys in
// blocks: scores of the block, mask, softcap, then an online softmax (a
// running max and sum per row; what was summed before a new max is
// rescaled) and the weighted sum of the block's values. The [B, H, Sq, T]
// scores exist only when the call asks for them (with_qk).
//
// A block of keys is packed transposed (8 x 8 tiles transposed in
// registers), so that the score loop runs along contiguous keys; a task of
// a few rows (a decoding step) takes dot products with the keys in place
// instead. Values of the compute type are read in place. Other float dtypes
// are converted while packed; sums are in float (double for float64, or
// softmax_dtype float64). With present_key/present_value requested, the
// keys and values are read back from them, just written (still in cache):
// by each task as it goes where one task takes all rows of a kv head (a
// decoding step), else all before the tasks start.
// The tasks run on the runtime's thread pool. Agrees with ONNX's reference
// (onnx/reference/ops/op_attention.py), including its corner cases: a row
// whose keys are all masked is NaN, and softcap applies to masked scores too
// (they become -softcap, not -inf).
//
//===----------------------------------------------------------------------===//
#include "kernels/NativeKernelAbi.h"
#include "kernels/Threading.h"
#include "kernels/ops/KernelUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>

#define RIVET_ATTN_INLINE inline __attribute__((always_inline))

namespace rivet::kernels {
namespace {

constexpr const char *AttentionOp = "attention";

/// Keys per block: a multiple of every vector width below.
constexpr int64_t kKeyBlock = 128;
/// Query rows a task aims at (over the q heads of its kv head): each block
/// of keys and values is packed once per task and read by all its rows from
/// L1; the rows' scores, sums and queries stay in L2.
constexpr int64_t kTaskRows = 128;
/// Rows of the register-blocked products: 2 x 6 accumulators of 8 floats
/// keep both FMA units of an AVX2 core busy through their latency.
constexpr int kRowBlock = 6;

bool attentionDType(DType T) {
  return T == DType::Float16 || T == DType::BFloat16 || T == DType::Float32 ||
         T == DType::Float64;
}

//===----------------------------------------------------------------------===//
// Geometry and validation (the shape function and the kernel)
//===----------------------------------------------------------------------===//

/// Element offset of row (b, h, s) (head_size contiguous elements) of a
/// [B, H, S, D] tensor, or of head h of position s of a [B, S, H * D] one.
struct RowLayout {
  int64_t batch = 0, head = 0, seq = 0;
  static RowLayout of4d(int64_t H, int64_t S, int64_t D) {
    return {H * S * D, S * D, D};
  }
  static RowLayout of3d(int64_t H, int64_t S, int64_t D) {
    return {S * H * D, D, H * D};
  }
  int64_t at(int64_t B, int64_t H, int64_t S) const {
    return B * batch + H * head + S * seq;
  }
};

/// A call's extents and where its optional inputs are, validated.
struct Geometry {
  bool threeD = false;
  int64_t batch = 0, qHeads = 0, kvHeads = 0, seqQ = 0, seqKv = 0, past = 0,
          total = 0, headK = 0, headV = 0;
  int64_t mask = -1, pastKey = -1, pastValue = -1, nonpad = -1; // inputs
  bool withPresent = false, withQk = false;
};

bool flag(const Attrs &A, const char *Name) {
  return attrFlag(AttentionOp, A, Name);
}

/// Checks the inputs as the type relation does (src/ir/ops/Attention.cc),
/// on known extents.
Geometry geometry(const std::vector<Tensor> &In, const Attrs &A) {
  Geometry G;
  size_t Count = 3;
  std::vector<const char *> Names = {"q", "k", "v"};
  auto Add = [&](int64_t &Index, const char *Name) {
    Index = (int64_t)Count++;
    Names.push_back(Name);
  };
  if (flag(A, "has_attn_mask"))
    Add(G.mask, "attn_mask");
  if (flag(A, "has_past")) {
    Add(G.pastKey, "past_key");
    Add(G.pastValue, "past_value");
  }
  if (flag(A, "has_nonpad_kv_seqlen"))
    Add(G.nonpad, "nonpad_kv_seqlen");
  if (In.size() != Count)
    fail("{}: expected {} inputs as the has_* attributes say, got {}",
         AttentionOp, Count, In.size());
  G.withPresent = flag(A, "with_present");
  G.withQk = flag(A, "with_qk");
  flag(A, "is_causal");
  int64_t Mode = attrInt(AttentionOp, A, "qk_matmul_output_mode");
  if (Mode < 0 || Mode > 3)
    fail("{}: attribute 'qk_matmul_output_mode' must be 0, 1, 2 or 3, got {}",
         AttentionOp, Mode);
  if (std::optional<DType> SD = attrDType(AttentionOp, A, "softmax_dtype");
      SD && !attentionDType(*SD))
    fail("{}: attribute 'softmax_dtype' must be bfloat16, float16, float32 or "
         "float64, got {}",
         AttentionOp, dtypeName(*SD));

  for (size_t I = 0; I < Count; ++I)
    if ((int64_t)I != G.mask && (int64_t)I != G.nonpad &&
        !attentionDType(In[I].dtype()))
      fail("{}: input '{}' must be bfloat16, float16, float32 or float64, "
           "got {}",
           AttentionOp, Names[I], dtypeName(In[I].dtype()));
  checkSameDType(AttentionOp, "q", In[0], "k", In[1]);
  const Tensor &Q = In[0], &K = In[1], &V = In[2];
  auto Dims = [&](size_t I) { return shapeToString(In[I].shape()); };
  int64_t Rank = Q.rank();
  if ((Rank != 3 && Rank != 4) || K.rank() != Rank || V.rank() != Rank)
    fail("{}: q, k and v must all have rank 3 or all rank 4, got {}, {} and {}",
         AttentionOp, Dims(0), Dims(1), Dims(2));
  auto Heads = [&](const char *Name) -> std::optional<int64_t> {
    OpAttrs OA(AttentionOp, A);
    if (!OA.has(Name))
      return std::nullopt;
    int64_t H = OA.getInt(Name);
    if (H < 1)
      fail("{}: attribute '{}' must be >= 1, got {}", AttentionOp, Name, H);
    return H;
  };
  std::optional<int64_t> QHeads = Heads("q_num_heads"),
                         KvHeads = Heads("kv_num_heads");
  G.batch = Q.shape()[0];
  if (K.shape()[0] != G.batch || V.shape()[0] != G.batch)
    fail("{}: q {}, k {} and v {} differ in batch size", AttentionOp, Dims(0),
         Dims(1), Dims(2));
  if (Rank == 4) {
    G.qHeads = Q.shape()[1];
    G.kvHeads = K.shape()[1];
    G.seqQ = Q.shape()[2];
    G.seqKv = K.shape()[2];
    G.headK = Q.shape()[3];
    G.headV = V.shape()[3];
    if (V.shape()[1] != G.kvHeads || V.shape()[2] != G.seqKv)
      fail("{}: k {} and v {} differ in heads or sequence length", AttentionOp,
           Dims(1), Dims(2));
    if (K.shape()[3] != G.headK)
      fail("{}: q {} and k {} differ in head size", AttentionOp, Dims(0),
           Dims(1));
    if ((QHeads && *QHeads != G.qHeads) || (KvHeads && *KvHeads != G.kvHeads))
      fail("{}: q_num_heads/kv_num_heads disagree with q {} and k {}",
           AttentionOp, Dims(0), Dims(1));
  } else {
    if (!QHeads || !KvHeads)
      fail("{}: 3-D q, k and v need attributes q_num_heads and kv_num_heads",
           AttentionOp);
    G.threeD = true;
    G.qHeads = *QHeads;
    G.kvHeads = *KvHeads;
    G.seqQ = Q.shape()[1];
    G.seqKv = K.shape()[1];
    if (V.shape()[1] != G.seqKv)
      fail("{}: k {} and v {} differ in sequence length", AttentionOp, Dims(1),
           Dims(2));
    if (Q.shape()[2] % G.qHeads != 0 || V.shape()[2] % G.kvHeads != 0)
      fail("{}: the hidden sizes of q {} and v {} are not multiples of "
           "q_num_heads {} and kv_num_heads {}",
           AttentionOp, Dims(0), Dims(2), G.qHeads, G.kvHeads);
    G.headK = Q.shape()[2] / G.qHeads;
    G.headV = V.shape()[2] / G.kvHeads;
    if (K.shape()[2] != G.kvHeads * G.headK)
      fail("{}: k {} must have hidden size kv_num_heads * head size = {}",
           AttentionOp, Dims(1), G.kvHeads * G.headK);
  }
  if (G.qHeads % G.kvHeads != 0)
    fail("{}: the {} q heads are not a multiple of the {} kv heads",
         AttentionOp, G.qHeads, G.kvHeads);

  G.total = G.seqKv;
  if (G.pastKey >= 0) {
    const Tensor &PK = In[(size_t)G.pastKey], &PV = In[(size_t)G.pastValue];
    checkSameDType(AttentionOp, "q", Q, "past_key", PK);
    checkSameDType(AttentionOp, "v", V, "past_value", PV);
    G.past = PK.rank() == 4 ? PK.shape()[2] : -1;
    if (PK.shape() != Shape{G.batch, G.kvHeads, G.past, G.headK} ||
        PV.shape() != Shape{G.batch, G.kvHeads, G.past, G.headV})
      fail("{}: past_key {} and past_value {} must be (batch {}, kv heads {}, "
           "past length, head size {} / {})",
           AttentionOp, Dims((size_t)G.pastKey), Dims((size_t)G.pastValue),
           G.batch, G.kvHeads, G.headK, G.headV);
    G.total += G.past;
  }
  if (G.mask >= 0) {
    const Tensor &M = In[(size_t)G.mask];
    DType MT = M.dtype();
    if (MT != DType::Bool && !attentionDType(MT) && !isInteger(MT))
      fail("{}: input 'attn_mask' must be bool, an integer or a float dtype, "
           "got {}",
           AttentionOp, dtypeName(MT));
    int64_t MR = M.rank();
    Shape Lead = {G.batch, G.qHeads, G.seqQ};
    bool Ok = MR >= 1 && MR <= 4 && M.shape().back() <= G.total;
    for (int64_t D = 0; Ok && D + 1 < MR; ++D) {
      int64_t E = M.shape()[(size_t)(MR - 2 - D)];
      Ok = E == 1 || E == Lead[(size_t)(2 - D)];
    }
    if (!Ok)
      fail("{}: attn_mask {} does not broadcast to (batch, q heads, q seq, "
           "keys) = {} (the last axis may be shorter)",
           AttentionOp, Dims((size_t)G.mask),
           shapeToString({G.batch, G.qHeads, G.seqQ, G.total}));
  }
  if (G.nonpad >= 0) {
    const Tensor &N = In[(size_t)G.nonpad];
    if (N.dtype() != DType::Int64 || N.shape() != Shape{G.batch})
      fail("{}: nonpad_kv_seqlen must be int64 of shape ({},), got {} {}",
           AttentionOp, G.batch, dtypeName(N.dtype()), Dims((size_t)G.nonpad));
  }
  return G;
}

std::vector<TensorMeta> attentionShape(const std::vector<Tensor> &In,
                                       const Attrs &A) {
  Geometry G = geometry(In, A);
  DType QT = In[0].dtype();
  std::vector<TensorMeta> Out;
  if (G.threeD)
    Out.push_back({{G.batch, G.seqQ, G.qHeads * G.headV}, QT});
  else
    Out.push_back({{G.batch, G.qHeads, G.seqQ, G.headV}, QT});
  if (G.withPresent) {
    Out.push_back({{G.batch, G.kvHeads, G.total, G.headK}, QT});
    Out.push_back({{G.batch, G.kvHeads, G.total, G.headV}, In[2].dtype()});
  }
  if (G.withQk)
    Out.push_back({{G.batch, G.qHeads, G.seqQ, G.total}, QT});
  return Out;
}

//===----------------------------------------------------------------------===//
// Rows in and out
//===----------------------------------------------------------------------===//

/// Reads N elements of a float dtype as C.
template <typename C>
void loadRow(const void *Src, DType T, C *Dst, int64_t N) {
  switch (T) {
  case DType::Float32:
  case DType::Float64:
    if (T == dtypeOf<C>()) {
      std::memcpy(Dst, Src, (size_t)N * sizeof(C));
    } else if (T == DType::Float32) {
      const float *S = static_cast<const float *>(Src);
      for (int64_t I = 0; I < N; ++I)
        Dst[I] = (C)S[I];
    } else {
      const double *S = static_cast<const double *>(Src);
      for (int64_t I = 0; I < N; ++I)
        Dst[I] = (C)S[I];
    }
    break;
  case DType::Float16: {
    const Half *S = static_cast<const Half *>(Src);
    for (int64_t I = 0; I < N; ++I)
      Dst[I] = (C)(float)S[I];
    break;
  }
  default: { // BFloat16 (validated)
    const BFloat16 *S = static_cast<const BFloat16 *>(Src);
    for (int64_t I = 0; I < N; ++I)
      Dst[I] = (C)(float)S[I];
    break;
  }
  }
}

/// Writes N values of C as a float dtype.
template <typename C>
void storeRow(const C *Src, void *Dst, DType T, int64_t N) {
  if (T == dtypeOf<C>()) {
    std::memcpy(Dst, Src, (size_t)N * sizeof(C));
    return;
  }
  switch (T) {
  case DType::Float32: {
    float *D = static_cast<float *>(Dst);
    for (int64_t I = 0; I < N; ++I)
      D[I] = (float)Src[I];
    break;
  }
  case DType::Float64: {
    double *D = static_cast<double *>(Dst);
    for (int64_t I = 0; I < N; ++I)
      D[I] = (double)Src[I];
    break;
  }
  case DType::Float16: {
    Half *D = static_cast<Half *>(Dst);
    for (int64_t I = 0; I < N; ++I)
      D[I] = Half((float)Src[I]);
    break;
  }
  default: {
    BFloat16 *D = static_cast<BFloat16 *>(Dst);
    for (int64_t I = 0; I < N; ++I)
      D[I] = BFloat16((float)Src[I]);
    break;
  }
  }
}

/// A tensor read or written row by row.
struct Rows {
  char *data = nullptr;
  DType dtype = DType::Float32;
  RowLayout layout;
  size_t elementSize = 4;
  void *at(int64_t B, int64_t H, int64_t S) const {
    return data + (size_t)layout.at(B, H, S) * elementSize;
  }
};

Rows rowsOf(const Tensor &T, RowLayout L) {
  return {static_cast<char *>(T.rawData()), T.dtype(), L, dtypeSize(T.dtype())};
}

//===----------------------------------------------------------------------===//
// The fused loop
//===----------------------------------------------------------------------===//

/// present_key or present_value: concat(past, new) along the sequence.
struct CacheCopy {
  Rows past, fresh, present; // present: [B, H, T, D]
  int64_t pastLen = 0, headSize = 0;

  /// Copies keys [K0, K1) of (b, h) into present: contiguous runs at once.
  void copy(int64_t B, int64_t H, int64_t K0, int64_t K1) const {
    size_t RowBytes = (size_t)headSize * present.elementSize;
    if (K0 < pastLen) {
      int64_t End = std::min(K1, pastLen);
      std::memcpy(present.at(B, H, K0), past.at(B, H, K0),
                  (size_t)(End - K0) * RowBytes);
      K0 = End;
    }
    if (K0 >= K1)
      return;
    if (fresh.layout.seq == headSize) {
      std::memcpy(present.at(B, H, K0), fresh.at(B, H, K0 - pastLen),
                  (size_t)(K1 - K0) * RowBytes);
      return;
    }
    for (int64_t K = K0; K < K1; ++K)
      std::memcpy(present.at(B, H, K), fresh.at(B, H, K - pastLen), RowBytes);
  }
};

/// Vectors of 32 bytes: one AVX2 register (the AVX-512 clone uses them too;
/// wider generic vectors were kept in memory, not registers, on AVX2). Only
/// ever locals of always-inline code, so no function passes one by value
/// across targets.
template <typename C> struct Lanes;
template <> struct Lanes<float> {
  typedef float V __attribute__((vector_size(32), aligned(4), may_alias));
  typedef int32_t I __attribute__((vector_size(32), aligned(4), may_alias));
  static constexpr int64_t N = 8;
};
template <> struct Lanes<double> {
  typedef double V __attribute__((vector_size(32), aligned(8), may_alias));
  static constexpr int64_t N = 4;
};

template <typename C> RIVET_ATTN_INLINE typename Lanes<C>::V &lanes(C *P) {
  return *reinterpret_cast<typename Lanes<C>::V *>(P);
}
template <typename C>
RIVET_ATTN_INLINE const typename Lanes<C>::V &lanes(const C *P) {
  return *reinterpret_cast<const typename Lanes<C>::V *>(P);
}

/// The products below take two vectors of columns at a time.
template <typename C> constexpr int64_t kPair = 2 * Lanes<C>::N;

/// Everything a task reads; shared by all tasks of a call.
template <typename C> struct Job {
  Geometry g;
  Rows q, k, v, pastKey, pastValue, y, qk;
  /// Keys [0, cached) are read from pastKey/pastValue, the others from k/v
  /// (the present outputs, when written, hold them all).
  int64_t cached = 0;
  /// Where present_key/present_value come from (with_present).
  CacheCopy keyCopy, valueCopy;
  /// Each task writes the present rows of its kv head as it reads them:
  /// one task per kv head (a decoding step), so the cache is read once.
  bool copiesPresent = false;
  const C *bias = nullptr; // the mask as additive values, or null
  int64_t maskCols = 0;    // its last extent
  RowLayout biasLayout;    // (batch, q head, q row) strides, 0: broadcast
  const int64_t *nonpad = nullptr;
  C scale = 1, softcap = 0;
  bool causal = false;
  /// Keys past a row's end (causal, padding, a short mask) may be skipped:
  /// not when softcap turns their -inf into -softcap, nor when the scores
  /// are returned.
  bool skipsMasked = true;
  /// Values of the compute type whose head size is a multiple of kPair are
  /// read where they are, not packed.
  bool valuesInPlace = false;
  int64_t mode = 0;
  int64_t group = 1;       // q heads per kv head
  int64_t rowsPerTask = 1; // query rows of one q head in a task
  int64_t queryBlocks = 1; // tasks per (batch, kv head)
  int64_t headVPad = 0;    // headV rounded up to kPair
};

/// Scores of NR rows against the first Width (a multiple of kPair) of a
/// block of transposed keys Kt[d][kKeyBlock]: S[r][j] = sum_d Qs[r][d] *
/// Kt[d][j]. The 2 x NR accumulators stay in registers over d; each step is
/// two vectors of keys times one q element.
template <typename C, int NR>
RIVET_ATTN_INLINE void scoreRows(const C *Qs, int64_t HeadK, const C *Kt,
                                 int64_t Width, C *S) {
  using V = typename Lanes<C>::V;
  constexpr int64_t N = Lanes<C>::N;
  for (int64_t J = 0; J < Width; J += 2 * N) {
    V A0[NR], A1[NR];
#pragma GCC unroll 8
    for (int R = 0; R < NR; ++R)
      A0[R] = A1[R] = V{};
    for (int64_t D = 0; D < HeadK; ++D) {
      V K0 = lanes(Kt + D * kKeyBlock + J),
        K1 = lanes(Kt + D * kKeyBlock + J + N);
#pragma GCC unroll 8
      for (int R = 0; R < NR; ++R) {
        C Q = Qs[R * HeadK + D];
        A0[R] += K0 * Q;
        A1[R] += K1 * Q;
      }
    }
#pragma GCC unroll 8
    for (int R = 0; R < NR; ++R) {
      lanes(S + R * kKeyBlock + J) = A0[R];
      lanes(S + R * kKeyBlock + J + N) = A1[R];
    }
  }
}

/// O[r][:] += sum_j P[r][j] * Vp[j][:] for NR rows, over Jn keys; value
/// rows are VStride apart.
template <typename C, int NR>
RIVET_ATTN_INLINE void accumulateRows(const C *P, int64_t Jn, const C *Vp,
                                      int64_t VStride, int64_t HeadVPad, C *O) {
  using V = typename Lanes<C>::V;
  constexpr int64_t N = Lanes<C>::N;
  for (int64_t D = 0; D < HeadVPad; D += 2 * N) {
    V A0[NR], A1[NR];
#pragma GCC unroll 8
    for (int R = 0; R < NR; ++R) {
      A0[R] = lanes(O + R * HeadVPad + D);
      A1[R] = lanes(O + R * HeadVPad + D + N);
    }
    for (int64_t J = 0; J < Jn; ++J) {
      V V0 = lanes(Vp + J * VStride + D), V1 = lanes(Vp + J * VStride + D + N);
#pragma GCC unroll 8
      for (int R = 0; R < NR; ++R) {
        C Pr = P[R * kKeyBlock + J];
        A0[R] += V0 * Pr;
        A1[R] += V1 * Pr;
      }
    }
#pragma GCC unroll 8
    for (int R = 0; R < NR; ++R) {
      lanes(O + R * HeadVPad + D) = A0[R];
      lanes(O + R * HeadVPad + D + N) = A1[R];
    }
  }
}

/// X[j] = e^(X[j] - Max) over Width values (a multiple of the vector width);
/// -inf (and anything below -87, whose exponential is below float's normal
/// range) gives 0. Cephes' expf: x = n ln2 + r with |r| <= ln2 / 2, a degree-6
/// polynomial for e^r, 2^n from the exponent bits; within 2 ulp, and a loop the
/// compiler vectorizes where std::exp would be a call per element.
RIVET_ATTN_INLINE void expBlock(float *X, float Max, int64_t Width) {
  using V = Lanes<float>::V;
  using I = Lanes<float>::I;
  for (int64_t J = 0; J < Width; J += Lanes<float>::N) {
    V X0 = lanes(X + J) - Max;
    I Dead = X0 < -87.0f;
    // Max is the largest value: X0 <= 0 (or NaN), no overflow.
    V Xc = X0 < -87.0f ? V{} - 87.0f : X0;
    // Round to nearest by adding and subtracting 1.5 * 2^23.
    V N = (Xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    V R = Xc - N * 0.693359375f;
    R = R - N * -2.12194440e-4f;
    V P = R * 1.9875691500e-4f + 1.3981999507e-3f;
    P = P * R + 8.3334519073e-3f;
    P = P * R + 4.1665795894e-2f;
    P = P * R + 1.6666665459e-1f;
    P = P * R + 5.0000001201e-1f;
    P = P * (R * R) + R + 1.0f;
    I E = (__builtin_convertvector(N, I) + 127) << 23;
    V Y = P * (V)E;
    lanes(X + J) = (V)((I)Y & ~Dead);
  }
}
RIVET_ATTN_INLINE void expBlock(double *X, double Max, int64_t Width) {
  for (int64_t J = 0; J < Width; ++J)
    X[J] = std::exp(X[J] - Max);
}

/// X[i] *= F for N values, N a multiple of the vector width.
template <typename C> RIVET_ATTN_INLINE void scaleLanes(C *X, int64_t N, C F) {
  for (int64_t I = 0; I < N; I += Lanes<C>::N)
    lanes(X + I) *= F;
}

/// The largest of X[0, Width), Width a positive multiple of the vector width.
template <typename C>
RIVET_ATTN_INLINE C maxOfBlock(const C *X, int64_t Width) {
  using V = typename Lanes<C>::V;
  V M = lanes(X);
  for (int64_t J = Lanes<C>::N; J < Width; J += Lanes<C>::N) {
    V Xj = lanes(X + J);
    M = Xj > M ? Xj : M;
  }
  C R = M[0];
  for (int64_t L = 1; L < Lanes<C>::N; ++L)
    R = M[L] > R ? M[L] : R;
  return R;
}

template <typename C>
RIVET_ATTN_INLINE C sumOfBlock(const C *X, int64_t Width) {
  using V = typename Lanes<C>::V;
  V S = lanes(X);
  for (int64_t J = Lanes<C>::N; J < Width; J += Lanes<C>::N)
    S += lanes(X + J);
  C R = 0;
  for (int64_t L = 0; L < Lanes<C>::N; ++L)
    R += S[L];
  return R;
}

/// Transposes the 8 x 8 floats at column D of rows Rows[0..8) into 8 rows
/// of Dst, kKeyBlock apart (unpack, shuffle, then swap 128-bit halves).
RIVET_ATTN_INLINE void transpose8x8(const float *const *Rows, int64_t D,
                                    float *Dst) {
  using V = Lanes<float>::V;
  V R[8], T[8], U[8];
#pragma GCC unroll 8
  for (int K = 0; K < 8; ++K)
    R[K] = lanes(Rows[K] + D);
#pragma GCC unroll 4
  for (int K = 0; K < 8; K += 2) {
    T[K] = __builtin_shufflevector(R[K], R[K + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    T[K + 1] =
        __builtin_shufflevector(R[K], R[K + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
#pragma GCC unroll 2
  for (int K = 0; K < 8; K += 4)
#pragma GCC unroll 2
    for (int L = 0; L < 2; ++L) {
      U[K + L] = __builtin_shufflevector(T[K + L], T[K + L + 2], 0, 1, 8, 9, 4,
                                         5, 12, 13);
      U[K + L + 2] = __builtin_shufflevector(T[K + L], T[K + L + 2], 2, 3, 10,
                                             11, 6, 7, 14, 15);
    }
  // U[k] (k < 4) holds column c = 2 (k % 2) + k / 2 of rows 0-3 in its low
  // half, column c + 4 in its high half; U[k + 4] the same of rows 4-7.
  const int Col[4] = {0, 2, 1, 3};
#pragma GCC unroll 4
  for (int K = 0; K < 4; ++K) {
    lanes(Dst + Col[K] * kKeyBlock) =
        __builtin_shufflevector(U[K], U[K + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    lanes(Dst + (Col[K] + 4) * kKeyBlock) =
        __builtin_shufflevector(U[K], U[K + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

/// Per-thread buffers, reused by the tasks of one chunk.
template <typename C> struct Scratch {
  std::vector<C> qs, scores, out, keysT, values, row, qkRows, rowMax, rowSum;
  std::vector<int64_t> rowEnd;
  std::vector<const C *> keyRows;
  Scratch(const Job<C> &J) : keyRows((size_t)kKeyBlock) {
    int64_t R = J.group * J.rowsPerTask;
    const Geometry &G = J.g;
    qs.resize((size_t)(R * G.headK));
    scores.resize((size_t)(R * kKeyBlock));
    out.resize((size_t)(R * J.headVPad));
    keysT.resize((size_t)(G.headK * kKeyBlock));
    values.assign((size_t)(kKeyBlock * J.headVPad), C(0));
    row.resize((size_t)std::max<int64_t>({G.headK, G.headV, 1}));
    if (G.withQk)
      qkRows.resize((size_t)(R * G.total));
    rowMax.resize((size_t)R);
    rowSum.resize((size_t)R);
    rowEnd.resize((size_t)R);
  }
};

/// Row of key Key of (b, kv head h): from the past (Past) or the new rows
/// (New), of the keys or of the values.
RIVET_ATTN_INLINE const void *cacheRow(const Rows &Past, const Rows &New,
                                       int64_t PastLen, int64_t B, int64_t H,
                                       int64_t Key) {
  return Key < PastLen ? Past.at(B, H, Key) : New.at(B, H, Key - PastLen);
}

/// Packs the values of keys [J0, J0 + Jn) into rows of headVPad (their
/// padding stays 0).
template <typename C>
RIVET_ATTN_INLINE void packValues(const Job<C> &J, Scratch<C> &W, int64_t B,
                                  int64_t H, int64_t J0, int64_t Jn) {
  const Geometry &G = J.g;
  for (int64_t I = 0; I < Jn; ++I)
    loadRow(cacheRow(J.pastValue, J.v, J.cached, B, H, J0 + I), J.v.dtype,
            W.values.data() + I * J.headVPad, G.headV);
  // A value row past the last key is multiplied by 0, but must not be inf
  // or NaN left over from an earlier block.
  std::fill(W.values.begin() + Jn * J.headVPad, W.values.end(), C(0));
}

/// Packs keys [J0, J0 + Jn) transposed: keysT[d][i].
template <typename C>
RIVET_ATTN_INLINE void packKeys(const Job<C> &J, Scratch<C> &W, int64_t B,
                                int64_t H, int64_t J0, int64_t Jn) {
  const Geometry &G = J.g;
  int64_t I = 0;
  if constexpr (std::is_same_v<C, float>) {
    // float keys: 8 x 8 tiles, transposed in registers.
    if (J.k.dtype == DType::Float32)
      for (; I + 8 <= Jn; I += 8) {
        const float *Rows[8];
        for (int R = 0; R < 8; ++R)
          Rows[R] = static_cast<const float *>(
              cacheRow(J.pastKey, J.k, J.cached, B, H, J0 + I + R));
        int64_t D = 0;
        for (; D + 8 <= G.headK; D += 8)
          transpose8x8(Rows, D, W.keysT.data() + D * kKeyBlock + I);
        for (; D < G.headK; ++D)
          for (int R = 0; R < 8; ++R)
            W.keysT[(size_t)(D * kKeyBlock + I + R)] = Rows[R][D];
      }
  }
  for (; I < Jn; ++I) {
    const void *KRow = cacheRow(J.pastKey, J.k, J.cached, B, H, J0 + I);
    // Keys of the compute type are read in place, others converted first.
    const C *KR = static_cast<const C *>(KRow);
    if (J.k.dtype != dtypeOf<C>()) {
      loadRow(KRow, J.k.dtype, W.row.data(), G.headK);
      KR = W.row.data();
    }
    for (int64_t D = 0; D < G.headK; ++D)
      W.keysT[(size_t)(D * kKeyBlock + I)] = KR[D];
  }
}

/// Scores of one row against Jn keys read in place (Keys[i]: key i's row),
/// as dot products: for a few rows (decoding), cheaper than transposing
/// the keys. HeadK is a multiple of the vector width.
template <typename C>
RIVET_ATTN_INLINE void scoreRowDirect(const C *Qs, int64_t HeadK,
                                      const C *const *Keys, int64_t Jn, C *S) {
  using V = typename Lanes<C>::V;
  constexpr int64_t N = Lanes<C>::N;
  for (int64_t I = 0; I < Jn; ++I) {
    const C *K = Keys[I];
    V A0 = V{}, A1 = V{};
    int64_t D = 0;
    for (; D + 2 * N <= HeadK; D += 2 * N) {
      A0 += lanes(K + D) * lanes(Qs + D);
      A1 += lanes(K + D + N) * lanes(Qs + D + N);
    }
    if (D < HeadK)
      A0 += lanes(K + D) * lanes(Qs + D);
    A0 += A1;
    C Sum = 0;
    for (int64_t L = 0; L < N; ++L)
      Sum += A0[L];
    S[I] = Sum;
  }
}

/// Scores -> softmax numerators for row Row of a task (see attendTask).
template <typename C>
RIVET_ATTN_INLINE void softmaxStep(const Job<C> &J, Scratch<C> &W, int64_t Row,
                                   const C *Bias, int64_t J0, int64_t Jn) {
  constexpr C NegInf = -std::numeric_limits<C>::infinity();
  const Geometry &G = J.g;
  C *S = W.scores.data() + Row * kKeyBlock;
  // The vector loops' extent: the block's keys, whole pairs of vectors (a
  // short sequence's block is mostly past its end).
  const int64_t Width = (Jn + kPair<C> - 1) / kPair<C> * kPair<C>;
  if (W.rowEnd[(size_t)Row] <= J0 && J.skipsMasked) {
    std::fill(S, S + Width, C(0)); // the row sees no key of the block
    return;
  }
  C *Qk = G.withQk ? W.qkRows.data() + Row * G.total + J0 : nullptr;
  if (Qk && J.mode == 0)
    std::copy(S, S + Jn, Qk);
  // Masked keys: past the row's end (causal, padding, a short mask).
  int64_t Live = std::clamp<int64_t>(W.rowEnd[(size_t)Row] - J0, 0, Jn);
  if (Bias) {
    int64_t I = 0;
    for (; I + Lanes<C>::N <= Live; I += Lanes<C>::N)
      lanes(S + I) += lanes(Bias + J0 + I);
    for (; I < Live; ++I)
      S[I] += Bias[J0 + I];
  }
  std::fill(S + Live, S + Width, NegInf);
  if (Qk && J.mode == 1)
    std::copy(S, S + Jn, Qk);
  if (J.softcap > 0) {
    C Inv = C(1) / J.softcap;
    for (int64_t I = 0; I < Jn; ++I)
      S[I] = J.softcap * std::tanh(S[I] * Inv);
  }
  if (Qk && J.mode >= 2)
    std::copy(S, S + Jn, Qk);

  C &M = W.rowMax[(size_t)Row], &L = W.rowSum[(size_t)Row];
  C NewMax = std::max(M, maxOfBlock(S, Width));
  if (NewMax == NegInf) { // every key so far masked: nothing to add
    std::fill(S, S + Width, C(0));
    return;
  }
  expBlock(S, NewMax, Width);
  C Sum = sumOfBlock(S, Width);
  if (M != NewMax) {
    C Correction = std::exp(M - NewMax); // 0 when M is -inf
    C *O = W.out.data() + Row * J.headVPad;
    scaleLanes(O, J.headVPad, Correction);
    L *= Correction;
    M = NewMax;
  }
  L += Sum;
}

/// One task: query rows [I0, I0 + rowsPerTask) of every q head of kv head
/// H in batch B. Row r of the task is q head H * group + r / Nq, query
/// I0 + r % Nq.
template <typename C>
RIVET_ATTN_INLINE void attendTask(const Job<C> &J, Scratch<C> &W,
                                  int64_t Task) {
  constexpr C NegInf = -std::numeric_limits<C>::infinity();
  const Geometry &G = J.g;
  int64_t B = Task / (G.kvHeads * J.queryBlocks);
  int64_t H = Task / J.queryBlocks % G.kvHeads;
  int64_t I0 = Task % J.queryBlocks * J.rowsPerTask;
  int64_t Nq = std::min(J.rowsPerTask, G.seqQ - I0);
  int64_t R = J.group * Nq;
  int64_t Limit = G.total; // keys any row may see
  if (J.nonpad)
    Limit = std::clamp<int64_t>(J.nonpad[B], 0, Limit);
  if (J.bias)
    Limit = std::min(Limit, J.maskCols);

  std::vector<const C *> BiasRows((size_t)R, nullptr);
  int64_t LastEnd = 0;
  for (int64_t Row = 0; Row < R; ++Row) {
    int64_t Hq = H * J.group + Row / Nq, I = I0 + Row % Nq;
    C *Qs = W.qs.data() + Row * G.headK;
    loadRow(J.q.at(B, Hq, I), J.q.dtype, Qs, G.headK);
    int64_t Whole = G.headK - G.headK % Lanes<C>::N;
    scaleLanes(Qs, Whole, J.scale);
    for (int64_t D = Whole; D < G.headK; ++D)
      Qs[D] *= J.scale;
    int64_t End = J.causal ? std::min(Limit, I + G.past + 1) : Limit;
    W.rowEnd[(size_t)Row] = End;
    LastEnd = std::max(LastEnd, End);
    if (J.bias)
      BiasRows[(size_t)Row] = J.bias + J.biasLayout.at(B, Hq, I);
    W.rowMax[(size_t)Row] = NegInf;
    W.rowSum[(size_t)Row] = 0;
  }
  std::fill(W.out.begin(), W.out.begin() + R * J.headVPad, C(0));
  int64_t KeyEnd = J.skipsMasked ? LastEnd : G.total;
  // A few rows (decoding) read the keys in place, by dot products.
  bool KeysInPlace =
      R < kRowBlock && J.k.dtype == dtypeOf<C>() && G.headK % Lanes<C>::N == 0;
  // Whether rows [Row, Row + N) see no key from J0 on (their scores are
  // then not needed, their weights are 0).
  auto Dead = [&](int64_t Row, int64_t N, int64_t J0) {
    if (!J.skipsMasked)
      return false;
    for (int64_t X = Row; X < Row + N; ++X)
      if (W.rowEnd[(size_t)X] > J0)
        return false;
    return true;
  };

  int64_t J0 = 0;
  for (; J0 < KeyEnd; J0 += kKeyBlock) {
    int64_t Jn = std::min(kKeyBlock, G.total - J0);
    int64_t Width = (Jn + kPair<C> - 1) / kPair<C> * kPair<C>;
    if (J.copiesPresent) {
      J.keyCopy.copy(B, H, J0, J0 + Jn);
      J.valueCopy.copy(B, H, J0, J0 + Jn);
    }
    int64_t Row = 0;
    if (KeysInPlace) {
      for (int64_t I = 0; I < Jn; ++I)
        W.keyRows[(size_t)I] = static_cast<const C *>(
            cacheRow(J.pastKey, J.k, J.cached, B, H, J0 + I));
      for (; Row < R; ++Row)
        if (!Dead(Row, 1, J0))
          scoreRowDirect(W.qs.data() + Row * G.headK, G.headK, W.keyRows.data(),
                         Jn, W.scores.data() + Row * kKeyBlock);
    } else {
      packKeys(J, W, B, H, J0, Jn);
      for (; Row + kRowBlock <= R; Row += kRowBlock)
        if (!Dead(Row, kRowBlock, J0))
          scoreRows<C, kRowBlock>(W.qs.data() + Row * G.headK, G.headK,
                                  W.keysT.data(), Width,
                                  W.scores.data() + Row * kKeyBlock);
      for (; Row < R; ++Row)
        if (!Dead(Row, 1, J0))
          scoreRows<C, 1>(W.qs.data() + Row * G.headK, G.headK, W.keysT.data(),
                          Width, W.scores.data() + Row * kKeyBlock);
    }
    for (Row = 0; Row < R; ++Row)
      softmaxStep(J, W, Row, BiasRows[(size_t)Row], J0, Jn);
    // Values are read in place where the block's rows are all past or all
    // new ones (valuesInPlace), else packed.
    const C *Values = W.values.data();
    int64_t ValueStride = J.headVPad;
    if (J.valuesInPlace && (J0 + Jn <= J.cached || J0 >= J.cached)) {
      Values = static_cast<const C *>(
          cacheRow(J.pastValue, J.v, J.cached, B, H, J0));
      ValueStride = (J0 < J.cached ? J.pastValue : J.v).layout.seq;
    } else {
      packValues(J, W, B, H, J0, Jn);
    }
    for (Row = 0; Row + kRowBlock <= R; Row += kRowBlock)
      if (!Dead(Row, kRowBlock, J0))
        accumulateRows<C, kRowBlock>(W.scores.data() + Row * kKeyBlock, Jn,
                                     Values, ValueStride, J.headVPad,
                                     W.out.data() + Row * J.headVPad);
    for (; Row < R; ++Row)
      if (!Dead(Row, 1, J0))
        accumulateRows<C, 1>(W.scores.data() + Row * kKeyBlock, Jn, Values,
                             ValueStride, J.headVPad,
                             W.out.data() + Row * J.headVPad);
  }
  if (J.copiesPresent && J0 < G.total) { // keys no row sees
    J.keyCopy.copy(B, H, J0, G.total);
    J.valueCopy.copy(B, H, J0, G.total);
  }

  for (int64_t Row = 0; Row < R; ++Row) {
    int64_t Hq = H * J.group + Row / Nq, I = I0 + Row % Nq;
    C *O = W.out.data() + Row * J.headVPad;
    C Sum = W.rowSum[(size_t)Row], Max = W.rowMax[(size_t)Row];
    // No key left (all masked): NaN, as softmax over -inf gives.
    C Inv = Sum > 0 ? C(1) / Sum : std::numeric_limits<C>::quiet_NaN();
    scaleLanes(O, J.headVPad, Inv);
    storeRow(O, J.y.at(B, Hq, I), J.y.dtype, G.headV);
    if (G.withQk) {
      C *Qk = W.qkRows.data() + Row * G.total;
      if (J.mode == 3)
        for (int64_t K = 0; K < G.total; ++K)
          Qk[K] = std::exp(Qk[K] - Max) * Inv;
      storeRow(Qk, J.qk.at(B, Hq, I), J.qk.dtype, G.total);
    }
  }
}

template <typename C>
RIVET_ATTN_INLINE void attendTasks(void *Closure, int64_t Begin, int64_t End) {
  const Job<C> &J = *static_cast<const Job<C> *>(Closure);
  Scratch<C> W(J);
  for (int64_t T = Begin; T < End; ++T)
    attendTask(J, W, T);
}

// The parallel loop's bodies, compiled for AVX-512, AVX2 + FMA and the
// baseline. (Separate "avx2" and "fma" clones would give AVX2 without FMA.)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3",
                             "default"))) void
attendTasksFloat(void *Closure, int64_t Begin, int64_t End) {
  attendTasks<float>(Closure, Begin, End);
}
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3",
                             "default"))) void
attendTasksDouble(void *Closure, int64_t Begin, int64_t End) {
  attendTasks<double>(Closure, Begin, End);
}

/// Writes present_key and present_value whole, the (batch, kv head) pairs
/// in parallel (a KV cache is the bulk of a decoding step's memory traffic).
template <typename C> void writePresent(Job<C> &J) {
  RivetParallelBody Body = [](void *Closure, int64_t Begin, int64_t End) {
    const Job<C> &J = *static_cast<const Job<C> *>(Closure);
    for (int64_t BH = Begin; BH < End; ++BH) {
      int64_t B = BH / J.g.kvHeads, H = BH % J.g.kvHeads;
      J.keyCopy.copy(B, H, 0, J.g.total);
      J.valueCopy.copy(B, H, 0, J.g.total);
    }
  };
  kernelRuntime().parallelFor(J.g.batch * J.g.kvHeads, 1, &J, Body);
}

template <typename C>
void attendAll(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
               const Attrs &A, const Geometry &G) {
  Job<C> J;
  J.g = G;
  const Tensor &Q = In[0], &K = In[1], &V = In[2];
  auto Layout = [&](int64_t Heads, int64_t Seq, int64_t Head) {
    return G.threeD ? RowLayout::of3d(Heads, Seq, Head)
                    : RowLayout::of4d(Heads, Seq, Head);
  };
  J.q = rowsOf(Q, Layout(G.qHeads, G.seqQ, G.headK));
  J.k = rowsOf(K, Layout(G.kvHeads, G.seqKv, G.headK));
  J.v = rowsOf(V, Layout(G.kvHeads, G.seqKv, G.headV));
  J.y = rowsOf(Out[0], Layout(G.qHeads, G.seqQ, G.headV));
  if (G.pastKey >= 0) {
    J.cached = G.past;
    J.pastKey = rowsOf(In[(size_t)G.pastKey],
                       RowLayout::of4d(G.kvHeads, G.past, G.headK));
    J.pastValue = rowsOf(In[(size_t)G.pastValue],
                         RowLayout::of4d(G.kvHeads, G.past, G.headV));
  }
  if (G.withPresent) {
    Rows PresentK =
        rowsOf(Out[1], RowLayout::of4d(G.kvHeads, G.total, G.headK));
    Rows PresentV =
        rowsOf(Out[2], RowLayout::of4d(G.kvHeads, G.total, G.headV));
    J.keyCopy = {J.pastKey, J.k, PresentK, G.past, G.headK};
    J.valueCopy = {J.pastValue, J.v, PresentV, G.past, G.headV};
    // The keys and values are read from the present outputs: just written
    // (by the task itself, or all at once before the tasks start), likely
    // still in cache.
    J.k = PresentK;
    J.v = PresentV;
    J.cached = 0;
  }
  if (G.withQk)
    J.qk = rowsOf(Out.back(), RowLayout::of4d(G.qHeads, G.seqQ, G.total));

  // The mask as additive values of C: bool true is 0, false -inf.
  std::vector<C> Bias;
  if (G.mask >= 0) {
    const Tensor &M = In[(size_t)G.mask];
    if (M.dtype() == dtypeOf<C>()) {
      J.bias = M.data<C>();
    } else if (M.dtype() == DType::Bool) {
      const bool *P = M.data<bool>();
      Bias.resize((size_t)M.numel());
      for (size_t I = 0; I < Bias.size(); ++I)
        Bias[I] = P[I] ? C(0) : -std::numeric_limits<C>::infinity();
      J.bias = Bias.data();
    } else {
      Bias.resize((size_t)M.numel());
      convertBuffer(M.rawData(), M.dtype(), Bias.data(), dtypeOf<C>(),
                    M.numel());
      J.bias = Bias.data();
    }
    J.maskCols = M.shape().back();
    // Strides of the mask's axes aligned to (batch, q head, q row); 0 where
    // it broadcasts.
    std::vector<int64_t> St = contiguousStrides(M.shape());
    int64_t Lead[3] = {0, 0, 0};
    int64_t MR = M.rank();
    for (int64_t D = 0; D + 1 < MR; ++D) {
      size_t Axis = (size_t)(MR - 2 - D);
      if (M.shape()[Axis] != 1)
        Lead[2 - D] = St[Axis];
    }
    J.biasLayout = {Lead[0], Lead[1], Lead[2]};
  }
  if (G.nonpad >= 0)
    J.nonpad = In[(size_t)G.nonpad].data<int64_t>();

  OpAttrs OA(AttentionOp, A);
  double Scale =
      OA.has("scale") ? OA.getFloat("scale") : 1.0 / std::sqrt((double)G.headK);
  J.scale = (C)Scale;
  J.softcap = (C)attrFloat(AttentionOp, A, "softcap");
  J.causal = flag(A, "is_causal");
  J.skipsMasked = !(J.softcap > 0) && !G.withQk;
  J.mode = attrInt(AttentionOp, A, "qk_matmul_output_mode");
  J.group = G.qHeads / G.kvHeads;
  // Fewer rows per task where there would be too few tasks for the threads
  // (some in reserve for the uneven work of causal rows).
  J.rowsPerTask = std::min(std::max<int64_t>(1, kTaskRows / J.group), G.seqQ);
  auto TasksOf = [&](int64_t Rows) {
    return G.batch * G.kvHeads * ((G.seqQ + Rows - 1) / Rows);
  };
  while (J.rowsPerTask > 1 && TasksOf(J.rowsPerTask) < 4 * numThreads())
    J.rowsPerTask = (J.rowsPerTask + 1) / 2;
  J.queryBlocks =
      J.rowsPerTask ? (G.seqQ + J.rowsPerTask - 1) / J.rowsPerTask : 0;
  J.headVPad = (G.headV + kPair<C> - 1) / kPair<C> * kPair<C>;
  J.valuesInPlace = V.dtype() == dtypeOf<C>() && G.headV == J.headVPad;

  J.copiesPresent = G.withPresent && J.queryBlocks == 1;
  if (G.withPresent && !J.copiesPresent)
    writePresent(J);

  int64_t Tasks = G.batch * G.kvHeads * J.queryBlocks;
  RivetParallelBody Body;
  if constexpr (std::is_same_v<C, float>)
    Body = attendTasksFloat;
  else
    Body = attendTasksDouble;
  kernelRuntime().parallelFor(Tasks, 1, &J, Body);
}

void attentionKernel(const std::vector<Tensor> &In, std::vector<Tensor> &Out,
                     const Attrs &A) {
  Geometry G = geometry(In, A);
  std::optional<DType> SD = attrDType(AttentionOp, A, "softmax_dtype");
  bool Wide = In[0].dtype() == DType::Float64 ||
              In[2].dtype() == DType::Float64 || SD == DType::Float64;
  if (Wide)
    attendAll<double>(In, Out, A, G);
  else
    attendAll<float>(In, Out, A, G);
}

} // namespace

RIVET_REGISTER_KERNEL("attention", attentionKernel, attentionShape, false);

RIVET_REGISTER_ATTRS(
    "attention",
    {{"scale", AttrKind::Float, false,
      "multiplies q k^T (default 1/sqrt(head size))"},
     {"is_causal", AttrKind::Int, false,
      "1: query i sees keys up to past length + i", 0},
     {"q_num_heads", AttrKind::Int, false, "q heads of 3-D inputs"},
     {"kv_num_heads", AttrKind::Int, false, "k and v heads of 3-D inputs"},
     {"softcap", AttrKind::Float, false,
      "> 0: scores become softcap * tanh(scores / softcap)", 0.0},
     {"softmax_dtype", AttrKind::String, false,
      "dtype of the softmax (float64 sums in double; default the inputs')"},
     {"qk_matmul_output_mode", AttrKind::Int, false,
      "the scores returned: 0 q k^T, 1 plus mask, 2 after softcap, 3 after "
      "softmax",
      0},
     {"has_attn_mask", AttrKind::Int, false, "1: an attn_mask argument", 0},
     {"has_past", AttrKind::Int, false, "1: past_key and past_value arguments",
      0},
     {"has_nonpad_kv_seqlen", AttrKind::Int, false,
      "1: a nonpad_kv_seqlen argument", 0},
     {"with_present", AttrKind::Int, false,
      "1: also return present_key, present_value", 0},
     {"with_qk", AttrKind::Int, false, "1: also return the scores", 0}});

} // namespace rivet::kernels
